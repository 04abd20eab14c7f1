"""Matrix products on the prediction path, in the shapes the BLAS runs fastest."""

from __future__ import annotations

import itertools
import os
import threading
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .parallel import (
    PARALLEL_MIN_WORK,
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

#: Values of ``X`` in one block of :func:`rows_dot_lowest` at most (2 MiB of
#: float64): the block that its minimum has just read is still in cache for
#: the product.
FUSED_VALUES = 1 << 18

#: Multiply-adds (``m n k``) up to which OpenBLAS runs a product on one thread
#: (its ``SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD``): the blocks of
#: :func:`rows_dot_lowest` stay within it, so that their products are
#: single-threaded without changing the process-wide thread count.
SINGLE_THREAD_MADDS = 1 << 18

#: Fewer rows per block than this and :func:`rows_dot_lowest` takes the minimum
#: and the product apart: per block, the calls cost more than the pass saved
#: (measured on MNIST's 784 features and ten classes: 33-row blocks took as
#: much CPU time as a minimum and one product).
FUSED_MIN_ROWS = 64


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


#: Threads that help the calling thread through the blocks of :func:`rows_dot_lowest`:
#: kept from one call to the next (a thread started per call waits for a core
#: on a busy machine before it can help).
_helpers: tuple[int, int, Any] | None = None  # (process id, threads, pool)
_helpers_lock = threading.Lock()


def _helper_pool(n: int) -> Any:
    """A pool of at least ``n`` long-lived helper threads (made on first use).

    A new one in a forked child: the parent's threads do not exist there.
    """
    global _helpers
    with _helpers_lock:
        if _helpers is None or _helpers[0] != os.getpid() or _helpers[1] < n:
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(n, thread_name_prefix="bayesrule-rows")
            _helpers = (os.getpid(), n, pool)
        return _helpers[2]


def rows_dot_lowest(X: Any, A: NDArray[Any]) -> tuple[NDArray[np.float64], float]:
    """``X @ A.T`` in float64 and the least entry of ``X``, from one read of a dense ``X``.

    The least entry is NaN when ``X`` holds a NaN (NaN propagates through
    the minimum) and ``+inf`` when ``X`` has no entry. It is what a check of
    count data needs (no entry below 0, no NaN), found while ``X`` is read
    for the product rather than in a pass of its own.

    ``X`` is taken in blocks of at most :data:`FUSED_VALUES` values and
    :data:`SINGLE_THREAD_MADDS` multiply-adds (for wide rows, that allow
    fewer than :data:`FUSED_MIN_ROWS` rows, the minimum is a pass of its
    own before :func:`rows_dot`): each
    block's minimum is taken, then the block (still in cache; converted to
    float64 when it is float32) is multiplied, a product small enough that
    the BLAS runs it on one thread. The calling thread and long-lived helper
    threads (as many more as
    :func:`~bayesrule._util.parallel.prediction_threads` grants) take the
    next block from a shared counter: unlike the threads of one
    multi-threaded product, they never wait for one another, so a core
    taken by other work slows only the blocks it runs, and a helper that
    gets no core leaves its blocks to the caller. On a loaded 2-core
    machine (1,000,000 x 20 counts, five classes) this took about 0.4x the
    CPU time of a minimum and a two-threaded product; larger blocks on two
    BLAS threads ran up to 20x slower there.
    """
    A = np.asarray(A, dtype=np.float64)
    X = np.asarray(X)
    if X.dtype not in (np.float64, np.float32):
        X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    out = np.empty((n, A.shape[0]))
    K = max(A.shape[0], 1)
    rows = min(FUSED_VALUES // max(p, 1), SINGLE_THREAD_MADDS // max(p * K, 1))
    if rows < FUSED_MIN_ROWS:
        # wide rows: blocks this small cost more than the pass they save
        return rows_dot(X, A), float(np.min(X, initial=np.inf))
    starts = range(0, n, rows)
    lows = np.full(len(starts), np.inf)
    At = np.ascontiguousarray(A.T)
    taken = itertools.count()  # next() on it is atomic under the GIL

    def work() -> None:
        for i in iter(taken.__next__, None):
            if i >= len(starts):
                return
            s = starts[i]
            part = X[s : s + rows]
            lows[i] = np.min(part, initial=np.inf)
            if part.dtype != np.float64:
                part = part.astype(np.float64)
            np.matmul(part, At, out=out[s : s + rows])

    threads = min(prediction_threads(float(n) * p * A.shape[0]), len(starts))
    pool = _helper_pool(threads - 1) if threads > 1 else None
    helping = [pool.submit(work) for _ in range(threads - 1)] if pool is not None else []
    try:
        work()
    finally:
        for h in helping:
            h.result()
    return out, float(np.min(lows, initial=np.inf))
