"""Matrix products on the prediction path, in the shapes the BLAS runs fastest."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .parallel import (
    PARALLEL_MIN_WORK,
    blas_cap,
    blas_threads,
    idle_cores,
    in_parallel,
    prediction_threads,
)

#: Up to this many rows of ``A``, :func:`rows_dot` multiplies in the transposed shape.
FEW_ROWS = 64

#: Rows of a block converted to float64 at once by :func:`rows_dot` (a few MiB:
#: the converted copy stays in cache and is reused).
CONVERT_ROWS = 512

#: Values of ``X`` in one block of :func:`rows_dot_lowest` (2 MiB of float64):
#: the block that its minimum has just read is still in cache for the product.
FUSED_VALUES = 1 << 18


def rows_dot(X: Any, A: NDArray[Any]) -> NDArray[np.float64]:
    """``X @ A.T`` in float64, shape ``(n, K)``, for many rows ``X`` and few rows ``A``.

    With a multi-threaded BLAS, OpenBLAS runs ``(K, p) x (p, n)`` markedly
    faster than ``(n, p) x (p, K)`` when ``K`` is small (about 1.7x for
    MNIST's 10000 x 784 test set and ten classes), so it is computed as
    ``(A @ X.T).T`` (a Fortran-ordered view). That shape runs badly when its
    threads wait for cores that other work holds (measured: half the speed
    of the plain shape), and with one thread the two shapes run alike, so
    the plain ``X @ A.T`` is taken with a single-threaded BLAS, or when a
    large product (``PARALLEL_MIN_WORK`` multiply-adds or more) would find
    fewer idle cores than BLAS threads (:func:`~bayesrule._util.parallel.idle_cores`).

    A dense ``X`` of another dtype (BernoulliNB's binarized float32, float32
    data) is converted a block of :data:`CONVERT_ROWS` rows at a time, each
    block multiplied while it is in cache, the blocks shared among threads
    (:func:`~bayesrule._util.parallel.in_parallel`): no float64 copy of ``X``
    is made. Sparse ``X`` keeps the plain product.
    """
    A = np.asarray(A, dtype=np.float64)
    if sp.issparse(X) or A.shape[0] > FEW_ROWS:
        return np.asarray(X @ A.T, dtype=np.float64)
    X = np.asarray(X)
    if X.dtype != np.float64 and X.ndim == 2 and X.shape[0] > CONVERT_ROWS:
        return _converted_blocks(X, A)
    X = np.asarray(X, dtype=np.float64)
    threads = blas_threads()
    if threads > 1 and (X.size * A.shape[0] < PARALLEL_MIN_WORK or idle_cores() >= threads):
        return (A @ X.T).T
    return X @ A.T


def _converted_blocks(X: NDArray[Any], A: NDArray[np.float64]) -> NDArray[np.float64]:
    """``X @ A.T`` with ``X`` converted to float64 one block of rows at a time."""
    n = X.shape[0]
    out = np.empty((n, A.shape[0]))
    At = np.ascontiguousarray(A.T)

    def block(s: int) -> None:
        np.matmul(X[s : s + CONVERT_ROWS].astype(np.float64), At, out=out[s : s + CONVERT_ROWS])

    in_parallel(block, list(range(0, n, CONVERT_ROWS)), float(n) * X.shape[1] * A.shape[0])
    return out


def rows_dot_lowest(X: Any, A: NDArray[Any]) -> tuple[NDArray[np.float64], float]:
    """``X @ A.T`` in float64 and the least entry of ``X``, from one read of a dense ``X``.

    The least entry is NaN when ``X`` holds a NaN (NaN propagates through
    the minimum) and ``+inf`` when ``X`` has no entry. It is what a check of
    count data needs (no entry below 0, no NaN), found while ``X`` is read
    for the product rather than in a pass of its own.

    ``X`` is taken in blocks of about :data:`FUSED_VALUES` values: each
    block's minimum is taken, then the block (still in cache; converted to
    float64 when it is float32) is multiplied. The blocks are shared among
    threads of ours (:func:`~bayesrule._util.parallel.prediction_threads`),
    each product single-threaded (:func:`~bayesrule._util.parallel.blas_cap`):
    unlike the threads of one multi-threaded product, ours never wait for
    one another, so a core taken by other work slows only the blocks it
    runs (a block's product on two BLAS threads ran up to 20x slower on a
    loaded 2-core machine). See ``benchmarks/bench_predict.py``.
    """
    A = np.asarray(A, dtype=np.float64)
    X = np.asarray(X)
    if X.dtype not in (np.float64, np.float32):
        X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    out = np.empty((n, A.shape[0]))
    rows = max(64, FUSED_VALUES // max(p, 1))
    starts = list(range(0, n, rows))
    lows = np.full(len(starts), np.inf)
    At = np.ascontiguousarray(A.T)

    def block(i: int) -> None:
        s = starts[i]
        part = X[s : s + rows]
        lows[i] = np.min(part, initial=np.inf)
        if part.dtype != np.float64:
            part = part.astype(np.float64)
        np.matmul(part, At, out=out[s : s + rows])

    work = float(n) * p * A.shape[0]
    # single-threaded products also in the calling thread: a block is too
    # small for a BLAS's threads, which wait for one another on a busy machine
    with blas_cap(1):
        in_parallel(block, range(len(starts)), work, threads=prediction_threads(work))
    return out, float(np.min(lows, initial=np.inf))
