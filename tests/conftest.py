"""Shared fixtures: MNIST is loaded once per session from ../shared/datasets/mnist."""

from __future__ import annotations

import numpy as np
import pytest

from bayesrule.datasets import find_mnist, load_mnist


@pytest.fixture(scope="session")
def mnist():
    """(X_train, y_train, X_test, y_test), pixels scaled to [0, 1]; skipped if absent."""
    if find_mnist() is None:
        pytest.skip("MNIST not found (../shared/datasets/mnist or BAYESRULE_DATA)")
    return load_mnist()


@pytest.fixture
def rng():
    return np.random.default_rng(0)
