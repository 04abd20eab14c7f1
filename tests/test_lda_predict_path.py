"""LDA's ``predict`` from its one-product decision against the general path.

``predict`` takes the argmax of scikit-learn's form ``X @ coef_.T +
intercept_`` (the log posterior shifted by a per-row term) where the model
offers it; the classes must be those of the log posterior's argmax (the
general path) and scikit-learn's, over generated shapes, dtypes and memory
orders; a non-finite value still raises the row-naming error.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import discriminant_analysis as skda

import bayesrule as br


def classes_data(seed: int, n: int, p: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.normal(0.0, 1.5, size=(k, p))[y] + rng.standard_normal((n, p))
    return X, y


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(30, 300),
    p=st.integers(1, 30),
    k=st.integers(2, 6),
    dtype=st.sampled_from([np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
)
def test_lda_predict_is_the_argmax_of_the_log_posterior(seed, n, p, k, dtype, order):
    X, y = classes_data(seed, n + 10 * p, p, k)  # full rank: scikit-learn's model is ours
    X = np.asarray(X, dtype=dtype, order=order)
    est = br.LinearDiscriminantAnalysis().fit(X, y)
    Xt = np.asarray(classes_data(seed + 1, n, p, k)[0], dtype=dtype, order=order)
    general = est.classes_[np.argmax(est._decision(Xt), axis=1)]
    np.testing.assert_array_equal(est.predict(Xt), general)
    theirs = skda.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y).predict(Xt)
    # (a row on the boundary between two classes may round either way)
    assert np.mean(est.predict(Xt) == theirs) >= 0.99


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_lda_predict_still_names_a_non_finite_value(value):
    X, y = classes_data(0, 90, 4, 3)
    est = br.LinearDiscriminantAnalysis().fit(X, y)
    bad = X.copy()
    bad[12, 2] = value
    with pytest.raises(ValueError, match="row 12, column 2"):
        est.predict(bad)


@pytest.mark.parametrize("solver", ["svd", "lsqr"])
def test_float32_decision_terms_are_made_once_a_model_and_follow_updates(solver, monkeypatch):
    """A float32 fit's ``decision_function`` takes float64 terms made once per fitted model:
    a second call reuses them (no new ``decision_form``), and they equal terms made afresh;
    ``partial_fit`` and a new ``fit`` make a new model, whose terms are made anew."""
    from bayesrule.estimators import _lda_terms

    X, y = classes_data(3, 600, 12, 5)
    X32 = X.astype(np.float32)
    est = br.LinearDiscriminantAnalysis(solver=solver).fit(X32[:400], y[:400])
    assert est.coef_.dtype == np.float32
    made: list[int] = []
    real = _lda_terms.decision_form
    monkeypatch.setattr(_lda_terms, "decision_form", lambda m, o: made.append(1) or real(m, o))

    def fresh(e):
        coef, const = real(e._model, e._decision_origin())
        return X32 @ coef.T + (const + e._log_priors())

    first = est.decision_function(X32)
    again = est.decision_function(X32)
    assert len(made) == 1  # the terms of this model, once
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(first, fresh(est), rtol=1e-6, atol=1e-5)
    for update in (
        lambda e: e.partial_fit(X32[400:], y[400:]),
        lambda e: e.fit(X32[200:], y[200:]),
    ):
        update(est)
        made.clear()
        got = est.decision_function(X32)
        assert len(made) == 1  # a new model: new terms, not the former ones
        np.testing.assert_allclose(got, fresh(est), rtol=1e-6, atol=1e-5)
        np.testing.assert_array_equal(est.predict(X32), np.argmax(fresh(est), axis=1))
