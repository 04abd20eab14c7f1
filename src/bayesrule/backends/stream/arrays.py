"""Blocks of ``.npy`` arrays (memory-mapped) and of iterables of ``(X, y)`` blocks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .blocks import _Chunk, _default_rows
from .sources import _File, _first_line, _is_path


# ---------------------------------------------------------------------------------
# npy and iterables
# ---------------------------------------------------------------------------------
def _side_array(value: Any, what: str, n: int) -> Any:
    if value is None or isinstance(value, (int, np.integer)):
        return value
    arr = np.load(value, mmap_mode="r") if _is_path(value) else np.asarray(value)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(
            f"the {what} must be a 1-D array (or .npy file) of {n} entries, one per row; "
            f"got shape {arr.shape}."
        )
    return arr


def _npy_chunks(
    files: list[_File], *, features: Any, target: Any, weight: Any, block_rows: int | None
) -> Iterator[_Chunk]:
    for f in files:
        try:
            A = np.load(f.path, mmap_mode="r")
        except (ValueError, OSError, EOFError) as exc:
            raise ValueError(f"{f.name}: cannot be read as .npy: {_first_line(exc)}") from None
        if A.ndim != 2:
            raise ValueError(
                f"{f.name}: expected a 2-D array (rows, columns); got shape {A.shape}."
            )
        n, p = A.shape
        y_src = _side_array(target, "target", n)
        w_src = _side_array(weight, "weight", n)
        taken = {c for c in (target, weight) if isinstance(c, (int, np.integer))}
        if features is None:
            cols = [j for j in range(p) if j not in taken]
        else:
            cols = [int(j) for j in np.atleast_1d(features)]
            bad = [j for j in cols if not -p <= j < p]
            if bad:
                raise ValueError(
                    f"{f.name}: feature column {bad[0]} is out of range for {p} columns."
                )
        rows = block_rows or _default_rows(len(cols), 256)
        whole = cols == list(range(p))
        dtype = np.float32 if A.dtype == np.float32 else np.float64
        for s in range(0, n, rows):
            e = min(n, s + rows)
            X = np.array(A[s:e] if whole else A[s:e][:, cols], dtype=dtype)
            y = None
            if isinstance(y_src, (int, np.integer)):
                y = np.array(A[s:e, int(y_src)])
            elif y_src is not None:
                y = np.array(y_src[s:e])
            w = None
            if isinstance(w_src, (int, np.integer)):
                w = np.array(A[s:e, int(w_src)], dtype=np.float64)
            elif w_src is not None:
                w = np.array(w_src[s:e], dtype=np.float64)
            yield _Chunk(X, y, w, None, f"{f.name}, rows {s + 1}-{e}", s, int(X.nbytes))


def _iterable_chunks(blocks: Iterable[Any]) -> Iterator[_Chunk]:
    """The caller's blocks as chunks; an iterator of theirs is closed when the stream stops.

    A generator of blocks stopped early (an error, an interrupt, a reader
    closed before its end) is closed at once, so that its own clean-up
    (``finally``, ``with``) runs then rather than whenever it is collected
    (a traceback may keep it alive). A re-iterable (a list) is left alone.
    """
    items = iter(blocks)
    try:
        row0 = 0
        for i, block in enumerate(items):
            if hasattr(block, "shape") and len(block.shape) == 2:
                block = (block, None)  # features alone (prediction)
            if not isinstance(block, (tuple, list)) or len(block) not in (2, 3):
                raise ValueError(
                    f"block {i} of the source: expected a tuple (X, y) or (X, y, sample_weight); "
                    f"got {type(block).__name__}."
                )
            X, y = block[0], block[1]
            w = block[2] if len(block) == 3 else None
            n = int(X.shape[0]) if hasattr(X, "shape") else len(X)
            nbytes = int(getattr(X, "nbytes", 0) or 0)
            yield _Chunk(X, y, w, None, f"block {i} (rows {row0 + 1}-{row0 + n})", row0, nbytes)
            row0 += n
    finally:
        close = getattr(items, "close", None)
        if items is blocks and close is not None:
            close()
