"""Device arrays: a prior given to a class without data is left out of ``score_samples`` too.

The device path computes the log density itself (``backends/array_api``); it
must subtract the same prior mass as the NumPy model. Runs in a fresh process
with ``SCIPY_ARRAY_API=1`` (see ``_array_api_rerun.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris

import bayesrule
from _array_api_rerun import needs_dispatch, rerun_with_scipy_array_api
from test_array_api import dispatch, host, library

torch = pytest.importorskip("torch")

test_in_a_process_with_scipy_array_api = rerun_with_scipy_array_api(__file__)


@needs_dispatch
@pytest.mark.parametrize(
    "est",
    [
        bayesrule.GaussianNB(priors=[0.2, 0.4, 0.4]),
        bayesrule.LinearDiscriminantAnalysis(priors=[0.2, 0.4, 0.4]),
        bayesrule.QuadraticDiscriminantAnalysis(priors=[0.2, 0.4, 0.4]),
    ],
    ids=lambda e: type(e).__name__,
)
def test_device_score_samples_leave_out_a_class_without_data(est):
    X, y = load_iris(return_X_y=True)
    seen = y < 2
    ref = clone(est)
    ref.partial_fit(X[seen], y[seen], classes=[0, 1, 2])
    alone = clone(est).set_params(priors=[1 / 3, 2 / 3]).fit(X[seen], y[seen])
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(est)
        model.partial_fit(torch.asarray(X[seen]), torch.asarray(y[seen]), classes=[0, 1, 2])
        got = model.score_samples(torch.asarray(X))
    assert library(got).endswith("torch")
    np.testing.assert_allclose(host(got), ref.score_samples(X), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(host(got), alone.score_samples(X), rtol=1e-10, atol=1e-10)
