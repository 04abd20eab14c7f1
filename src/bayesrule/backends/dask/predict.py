"""Predicting on Dask collections: one lazy output block per row block of the input."""

from __future__ import annotations

import copy
import functools
import warnings
from typing import Any

import numpy as np

from ..._util.config import get_config
from .blocks import is_array, is_frame, n_rows, what
from .cluster import task_settings

__all__ = ["lazy_method"]


def _apply_block(
    X: Any,
    est: Any,
    *,
    method: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    settings: dict[str, Any],
    empty: np.ndarray[Any, Any],
) -> Any:
    """``est.<method>(X)`` on one block, in the task's thread share; ``empty`` for no rows."""
    if n_rows(X) == 0:
        return empty.copy()
    with task_settings(settings):
        return getattr(est, method)(X, *args, **kwargs)


def lazy_method(est: Any, method: str, X: Any, *args: Any, **kwargs: Any) -> Any:
    """``est.<method>(X)`` for a Dask collection ``X``: a lazy Dask array.

    One output block per row block of ``X`` (rows of unknown length for a
    DataFrame). The method runs first on one made-up row on the client, which
    checks the features at once and gives the output's dtype and columns.
    The estimator is copied into the graph as it is now: a later
    ``partial_fit`` does not change the result.
    """
    import dask
    import dask.array as da
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    if is_array(X):
        if X.ndim != 2:
            raise ValueError(
                f"X must be 2-dimensional (n_samples, n_features); got a Dask array of shape "
                f"{X.shape}."
            )
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        dummy: Any = np.zeros((1, X.shape[1]), dtype=X.dtype)
    elif is_frame(X) and X.ndim == 2:
        dummy = X._meta_nonempty.iloc[:1]
    else:
        raise TypeError(
            f"{type(est).__name__}.{method} takes a Dask array or DataFrame X; got {what(X)}."
        )
    with warnings.catch_warnings():
        # the made-up row is no data: warnings about it (out of the training range) are noise
        warnings.simplefilter("ignore")
        probe = np.asarray(getattr(est, method)(dummy, *args, **kwargs))
    tail, dtype = tuple(probe.shape[1:]), probe.dtype
    empty = np.empty((0, *tail), dtype=dtype)  # the result of a block without rows
    fn = functools.partial(
        _apply_block, method=method, args=args, kwargs=kwargs, settings=get_config(), empty=empty
    )
    frozen = dask.delayed(copy.deepcopy(est), pure=True)
    meta = np.empty((0,) * (1 + len(tail)), dtype=dtype)
    if is_array(X):
        return X.map_blocks(
            fn,
            frozen,
            dtype=dtype,
            chunks=(X.chunks[0], *((t,) for t in tail)),
            drop_axis=None if tail else 1,
            meta=meta,
            token=f"bayesrule-{method}",
        )
    task = dask.delayed(fn, pure=True)
    blocks = [
        da.from_delayed(task(part, frozen), shape=(np.nan, *tail), dtype=dtype, meta=meta)
        for part in X.to_delayed()
    ]
    return da.concatenate(blocks, axis=0)
