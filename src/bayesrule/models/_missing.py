"""Splitting a data matrix into its observed values and a missing-entry indicator."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["as_2d_params", "split_missing"]


def split_missing(X: Any) -> tuple[Any, Any]:
    """``(X0, missing)``: ``X`` with NaN replaced by 0, and a 0/1 indicator of the NaNs.

    ``missing`` is None when nothing is missing, a dense float array for dense
    ``X`` and a CSR matrix for sparse ``X`` (which is never densified). Class
    models marginalise a missing feature by dropping its term, which is exact
    because the features are independent given the class.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        nan = np.isnan(X.data)
        if not nan.any():
            return X, None
        missing = sp.csr_matrix((nan.astype(float), X.indices, X.indptr), shape=X.shape)
        X0 = sp.csr_matrix((np.where(nan, 0.0, X.data), X.indices, X.indptr), shape=X.shape)
        return X0, missing
    X = np.asarray(X, dtype=np.float64)
    # NaN propagates through min: one fast reduction settles the common case
    if X.size == 0 or not np.isnan(np.min(X)):
        return X, None
    nan = np.isnan(X)
    return np.where(nan, 0.0, X), nan.astype(np.float64)


def as_2d_params(*arrays: Any) -> tuple[bool, list[NDArray[np.float64]]]:
    """Parameters as (n_classes, n_features) arrays, and whether a single class was given."""
    out = [np.asarray(a, dtype=np.float64) for a in arrays]
    single = out[0].ndim == 1
    return single, [np.atleast_2d(a) for a in out]


def finish(out: NDArray[np.float64], single: bool) -> NDArray[np.float64]:
    """(n, K) log densities, or (n,) for a model of one class."""
    return out[:, 0] if single else out
