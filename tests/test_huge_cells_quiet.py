"""A cell of +-1e308 in the rows to predict: finite answers and no NumPy warning.

Log likelihoods near -1e308 less a best class near +1e308 overflow to
``-inf`` in the softmax's shift, which is right (that class's probability is
0); NumPy's "overflow encountered in subtract" reached the user as a
bayesrule warning (the CLI prints every warning).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesrule

MODELS = [
    bayesrule.LinearDiscriminantAnalysis(),
    bayesrule.QuadraticDiscriminantAnalysis(),
    bayesrule.RegularizedDiscriminantAnalysis(),
    bayesrule.DiagonalLDA(),
    bayesrule.GaussianNB(),
    bayesrule.KernelNB(),
    bayesrule.MixedNB(),
    bayesrule.MixtureDiscriminantAnalysis(),
]


@pytest.mark.parametrize("est", MODELS, ids=lambda e: type(e).__name__)
def test_huge_cells_give_finite_answers_without_numpy_warnings(est):
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 200)
    X = rng.normal(size=(200, 3)) + y[:, None] * np.array([1.0, 0.8, 1.2])
    model = est.fit(X, y)
    Z = np.repeat(X[:2], 4, axis=0)
    Z[1, 0], Z[2, 1], Z[3, 2], Z[4, 0], Z[5, 1] = 1e308, -1e308, 1.7e308, -1.7e308, 1e200
    methods = ["predict", "predict_proba", "predict_log_proba", "score_samples"]
    methods += ["decision_function"] if hasattr(model, "decision_function") else []
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", bayesrule.OutOfRangeWarning)
        out = {m: getattr(model, m)(Z) for m in methods}
    proba = out["predict_proba"]
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert not np.any(np.isnan(out["predict_log_proba"]))
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], out["predict"])
