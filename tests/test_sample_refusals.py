"""``sample`` with a bad row count: refused with a message naming ``n_samples``, whatever the model
and whether the labels are drawn or given as one label; a draw too large for the machine says
how large it is and what to do, in place of NumPy's allocation error."""

from __future__ import annotations

import numpy as np
import pytest

from bayesrule.estimators.registry import available

rng = np.random.default_rng(0)
y = np.repeat([0, 1, 2], 20)
X_CONT = rng.normal(size=(60, 4)) + y[:, None]
X_COUNTS = rng.poisson(3, size=(60, 4)).astype(float) + y[:, None]
COUNT_MODELS = ("mnb", "cnb", "pnb", "bnb", "catnb")


def _fitted(name: str):
    return available()[name]().fit(X_COUNTS if name in COUNT_MODELS else X_CONT, y)


@pytest.mark.parametrize("name", sorted(available()))
@pytest.mark.parametrize("bad", [True, False, np.True_, -1, 2.5, "3", None])
@pytest.mark.parametrize("label", [None, 1])
def test_a_bad_row_count_is_refused_by_name(name, bad, label):
    model = _fitted(name)
    with pytest.raises(ValueError, match=r"n_samples must be a non-negative int; got"):
        model.sample(bad, y=label)


@pytest.mark.parametrize("name", ("gnb", "lda", "mixed"))
def test_labels_given_as_an_array_ignore_n_samples(name):
    X, labels = _fitted(name).sample(None, y=[2, 0, 2], random_state=0)
    assert np.shape(X) == (3, 4)
    np.testing.assert_array_equal(labels, [2, 0, 2])


@pytest.mark.parametrize("name", ("gnb", "qda", "mixed", "mnb"))
def test_a_draw_too_large_says_so(name, monkeypatch):
    model = _fitted(name)

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 7.28 TiB for an array")

    monkeypatch.setattr(type(model), "_draw", no_memory)
    with pytest.raises(
        MemoryError, match=r"sample: 1000000000000 rows of 4 features need about"
    ) as info:
        model.sample(10**12)
    assert "Unable to allocate" not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
