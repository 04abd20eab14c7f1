"""scikit-learn's array-API check for the discriminant analysis estimators.

``check_array_api_input`` runs only when ``SCIPY_ARRAY_API=1`` is set before
SciPy is first imported, which a test process has long done by now; in the
estimator-check module it would skip on every run. It runs here in a fresh
process with the variable set, for every estimator of that module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from sklearn.utils.estimator_checks import check_array_api_input
from test_estimator_checks_da import ESTIMATORS

out = []
for est in ESTIMATORS:
    try:
        check_array_api_input(type(est).__name__, est, array_namespace="numpy")
        out.append({"estimator": repr(est), "error": None})
    except Exception as exc:
        out.append({"estimator": repr(est), "error": f"{type(exc).__name__}: {exc}"})
print(json.dumps(out))
"""

#: the estimator whose check data has a singular class covariance (as in the
#: other weighted checks of test_estimator_checks_da.py): a clear refusal
SINGULAR = "QuadraticDiscriminantAnalysis()"


@pytest.fixture(scope="module")
def results() -> dict[str, str | None]:
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    return {r["estimator"]: r["error"] for r in rows}


def _estimator_reprs() -> list[str]:
    from test_estimator_checks_da import ESTIMATORS

    return [repr(e) for e in ESTIMATORS]


@pytest.mark.parametrize("estimator", _estimator_reprs())
def test_array_api_input_with_numpy(results, estimator):
    assert estimator in results, sorted(results)
    error = results[estimator]
    if estimator == SINGULAR:
        assert error is not None and "SingularCovarianceError" in error, error
        assert "reg_param" in error  # the refusal names the remedy
    else:
        assert error is None, error
