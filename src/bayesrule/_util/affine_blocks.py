"""``X @ A.T + b`` of narrow rows on a busy machine, a block at a time on one BLAS thread.

LDA's one-product decision (``x' coef_k + const_k``, scikit-learn's form) of
narrow rows is one product, then the constants added, then a check that
every value is finite: three passes over the (n, K) values. On a busy
machine the one product runs in the transposed shape (a multi-threaded plain
product waits at its barrier for threads that wait for a core: see
:func:`~bayesrule._util.products._narrow_dot`), whose column-major result
NumPy's add then walks slowly. Here each block of about 1 MB of rows is
multiplied on one BLAS thread, its constants added and its values checked
while it is in cache, the blocks shared by the calling thread and the helper
thread (200,000 x 20 rows, five classes, two processes spinning beside it,
in one process, medians of 41: 6.7-7.1 ms against 8.5 for the product then
the passes, and scikit-learn's 8.2-12.5). Idle, the one multi-threaded
product is faster (2.9 ms against 3.4), and it is kept there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .config import get_config
from .parallel import _in_worker, available_cores, blas_cap, blas_threads
from .products import (
    NARROW,
    NARROW_MIN_ROWS,
    _openblas_only,
    blas_has_the_cores,
    capped_block_rows,
    share_parts,
)

__all__ = ["affine_rows"]

#: At most this many classes (a row's K values, added in cache).
MAX_CLASSES = 16


def affine_rows(
    X: Any, A: NDArray[np.float64], b: NDArray[np.float64]
) -> NDArray[np.float64] | None:
    """``X @ A.T + b`` (row-major, float64) in blocks on a busy machine; None where this
    path does not apply (idle, wide or few rows, not a C-ordered float64 array, another
    BLAS, ``limit_blas`` off, inside our worker threads, one core) or where a value of the
    result is not finite (the caller's general path then handles the rows)."""
    if not (
        isinstance(X, np.ndarray)
        and X.ndim == 2
        and X.dtype == np.float64
        and X.flags.c_contiguous
        and X.shape[1] <= NARROW
        and X.shape[0] >= NARROW_MIN_ROWS
        and 0 < A.shape[0] <= MAX_CLASSES
    ):
        return None
    if not get_config()["limit_blas"] or _in_worker() or not _openblas_only():
        return None
    threads = min(blas_threads(), available_cores())
    if threads < 2 or blas_has_the_cores():
        return None
    n, p = X.shape
    rows = capped_block_rows(p)
    At = np.ascontiguousarray(np.asarray(A, dtype=np.float64).T)
    shift = np.asarray(b, dtype=np.float64)
    out = np.empty((n, A.shape[0]))
    starts = range(0, n, rows)
    finite = np.ones(len(starts), dtype=bool)

    def part(i: int) -> None:
        # an overflow or NaN is found by the check and left to the caller's general
        # path (errstate is per thread: set in the thread that multiplies)
        s = starts[i]
        block = out[s : s + rows]
        with np.errstate(all="ignore"):
            np.matmul(X[s : s + rows], At, out=block)
            block += shift
        finite[i] = np.isfinite(block).all()

    with blas_cap(1):
        share_parts(len(starts), part)
    return out if finite.all() else None
