"""Run an array API test module again in a process where SciPy's array API is on.

scikit-learn turns its array API dispatch on only when ``SCIPY_ARRAY_API=1``
was set before SciPy was first imported, which the suite's process did long
ago. Each array API test module therefore defines one test,
``test_in_a_process_with_scipy_array_api = rerun_with_scipy_array_api(__file__)``,
that runs the whole module in a fresh process with the variable set (where
that test is skipped and the others run), and marks its other tests
``needs_dispatch`` so that the suite's process skips them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def _scipy_array_api() -> bool:
    try:
        import sklearn

        with sklearn.config_context(array_api_dispatch=True):
            return True
    except (RuntimeError, ImportError):
        return False


#: whether this process can turn scikit-learn's array API dispatch on
ENABLED = _scipy_array_api()
needs_dispatch = pytest.mark.skipif(
    not ENABLED, reason="runs in the process of test_in_a_process_with_scipy_array_api"
)


def rerun_with_scipy_array_api(module_file: str, timeout: int = 900) -> Any:
    """A test that runs ``module_file``'s tests in a process with ``SCIPY_ARRAY_API=1``."""

    @pytest.mark.skipif(ENABLED, reason="this process already has SCIPY_ARRAY_API=1")
    def test_in_a_process_with_scipy_array_api() -> None:
        """Every test of this module, in a process where the dispatch can be turned on."""
        env = {**os.environ, "SCIPY_ARRAY_API": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", module_file],
            capture_output=True,
            text=True,
            env=env,
            cwd=Path(module_file).parent.parent,
            timeout=timeout,
        )
        assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
        assert " passed" in done.stdout, done.stdout[-2000:]

    return test_in_a_process_with_scipy_array_api
