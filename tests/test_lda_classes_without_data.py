"""LDA's Fisher directions when some declared class has no data (declared, or forgotten).

``explained_variance_ratio_`` once kept a direction for the class without
data (``[1.0, 7.5e-32]``) while ``scalings_`` and ``transform`` had one
column: it must describe the directions the classes with data span, as the
fit of those classes alone does.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayesrule


def _data(k=4, n=400, p=5, seed=10):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, p)) + y[:, None] * np.linspace(0.5, 1.5, p)
    return X, y


@pytest.mark.parametrize("how", ["forgotten", "declared"])
@pytest.mark.parametrize("kept", [2, 3])
def test_explained_variance_ratio_of_the_classes_with_data(how, kept):
    X, y = _data()
    seen = y < kept
    if how == "forgotten":
        model = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
        model.forget(X[~seen], y[~seen])
    else:
        model = bayesrule.LinearDiscriminantAnalysis()
        model.partial_fit(X[seen], y[seen], classes=[0, 1, 2, 3])
    alone = bayesrule.LinearDiscriminantAnalysis().fit(X[seen], y[seen])
    assert model.explained_variance_ratio_.shape == (kept - 1,)
    np.testing.assert_allclose(
        model.explained_variance_ratio_, alone.explained_variance_ratio_, rtol=1e-10
    )
    assert model.transform(X).shape[1] == model.explained_variance_ratio_.size
    np.testing.assert_allclose(
        np.abs(model.transform(X)), np.abs(alone.transform(X)), rtol=1e-8, atol=1e-10
    )
