"""A model fitted on a device other than the CPU: every method NumPy can't reach works.

array-api-strict's ``device1`` stands in for a GPU: ``np.asarray`` of its
arrays raises, as it does for CUDA tensors. ``score_samples`` once read the
priors with ``np.asarray`` (for the prior mass of classes without data) and
raised there, although ``predict_proba`` worked. Runs in a fresh process
with ``SCIPY_ARRAY_API=1`` (see ``_array_api_rerun.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

import bayesrule
from _array_api_rerun import needs_dispatch, rerun_with_scipy_array_api
from test_array_api import dispatch, gaussian_data, host, strict

xps = pytest.importorskip("array_api_strict")

test_in_a_process_with_scipy_array_api = rerun_with_scipy_array_api(__file__)

MODELS = [
    bayesrule.GaussianNB(),
    bayesrule.LinearDiscriminantAnalysis(),
    bayesrule.QuadraticDiscriminantAnalysis(),
    bayesrule.RegularizedDiscriminantAnalysis(),
]


@needs_dispatch
@pytest.mark.parametrize("est", MODELS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("absent", [False, True], ids=["all-classes", "a-class-without-data"])
def test_score_samples_of_a_model_on_another_device(est, absent):
    X, y = gaussian_data()
    dev = xps.Device("device1")
    seen = y < 2 if absent else np.ones(y.size, dtype=bool)
    ref = clone(est)
    ref.partial_fit(X[seen], y[seen], classes=[0, 1, 2])
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(est)
        model.partial_fit(strict(X[seen], device=dev), y[seen], classes=[0, 1, 2])
        got = model.score_samples(strict(X, device=dev))
        proba = model.predict_proba(strict(X, device=dev))
    assert got.device == dev
    np.testing.assert_allclose(host(got), ref.score_samples(X), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(host(proba), ref.predict_proba(X), atol=1e-8)
