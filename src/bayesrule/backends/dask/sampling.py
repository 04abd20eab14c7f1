"""Sampling from a fitted estimator as Dask arrays, block by block."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..._util.config import get_config
from .blocks import is_array, split_in_memory
from .cluster import require, task_settings

__all__ = ["sample"]


def _sample_block(
    est: Any, size: int, y: Any, seed: Any, settings: dict[str, Any]
) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    with task_settings(settings):
        if y is None:
            return est.sample(size, random_state=rng)
        y_arr = np.asarray(y)
        if y_arr.ndim == 0:
            return est.sample(size, y=y, random_state=rng)
        return est.sample(y=y_arr, random_state=rng)


def _row_chunks(chunks: Any, n: int) -> tuple[int, ...]:
    from dask.array.core import normalize_chunks

    if isinstance(chunks, (list, tuple)) and all(isinstance(c, (int, np.integer)) for c in chunks):
        sizes = tuple(int(c) for c in chunks)
        if sum(sizes) != n or any(c < 0 for c in sizes):
            raise ValueError(
                f"chunks must be block lengths that add up to the {n} rows; got {list(sizes)}."
            )
        return sizes
    try:
        return tuple(int(c) for c in normalize_chunks(chunks, shape=(n,), dtype=np.float64)[0])
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"chunks must be an int (rows per block), 'auto' or a tuple of block lengths; got "
            f"{chunks!r} ({exc})."
        ) from None


def sample(est: Any, n_samples: Any, *, y: Any, random_state: Any, chunks: Any) -> tuple[Any, Any]:
    """``est.sample`` as Dask arrays drawn block by block (see ``GenerativeClassifier.sample``).

    Each block is drawn where it is computed, from its own random stream
    spawned from ``random_state``: reproducible for a ``random_state`` and
    ``chunks``.
    """
    require("sample(chunks=...)")
    import dask
    import dask.array as da

    from ...estimators import as_generator

    if y is not None and is_array(y):
        if y.ndim != 1:
            raise ValueError(f"y must be 1-dimensional; got a Dask array of shape {y.shape}.")
        if chunks is not None and all(not np.isnan(c) for c in y.chunks[0]):
            y = y.rechunk((_row_chunks(chunks, int(y.shape[0])),))
        pieces: list[Any] = list(y.to_delayed().ravel())
        sizes: list[float] = list(y.chunks[0])
    elif y is None or np.ndim(y) == 0:
        if (
            not isinstance(n_samples, (int, np.integer))
            or isinstance(n_samples, bool)
            or n_samples < 0
        ):
            raise ValueError(f"n_samples must be a non-negative int; got {n_samples!r}.")
        est.sample(1, y=y, random_state=0)  # the label, and that its class has data
        sizes = list(_row_chunks("auto" if chunks is None else chunks, int(n_samples)))
        pieces = [y] * len(sizes)
    else:
        y_arr = np.asarray(y)
        if y_arr.ndim != 1:
            raise ValueError(f"y must be a label or 1-dimensional; got shape {y_arr.shape}.")
        est.sample(y=np.unique(y_arr), random_state=0)  # every label known and with data
        sizes = list(_row_chunks("auto" if chunks is None else chunks, y_arr.shape[0]))
        pieces = split_in_memory(y_arr, sizes, "y")
    seeds = np.random.SeedSequence(int(as_generator(random_state).integers(2**63))).spawn(
        len(sizes)
    )
    frozen = dask.delayed(copy.deepcopy(est), pure=True)
    task = dask.delayed(_sample_block, pure=True, nout=2)
    settings = get_config()
    p, labels = int(est.n_features_in_), est.classes_.dtype
    xs, ys = [], []
    for size, piece, seed in zip(sizes, pieces, seeds, strict=True):
        xb, yb = task(frozen, size if not np.isnan(size) else 0, piece, seed, settings)
        xs.append(da.from_delayed(xb, shape=(size, p), dtype=np.float64))
        ys.append(da.from_delayed(yb, shape=(size,), dtype=labels))
    if not xs:
        return da.empty((0, p), dtype=np.float64), da.empty((0,), dtype=labels)
    return da.concatenate(xs, axis=0), da.concatenate(ys, axis=0)
