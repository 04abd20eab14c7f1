"""Matrix products on the prediction path, in the shapes the BLAS runs fastest."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from . import _parallel

#: Up to this many rows of ``A``, :func:`rows_dot` multiplies in the transposed shape.
FEW_ROWS = 64
#: Values of ``X`` per product of :func:`rows_dot`'s large path (about 2 MB of float64).
CHUNK_VALUES = 1 << 18


def rows_dot(X: Any, A: NDArray[Any]) -> NDArray[np.float64]:
    """``X @ A.T``, shape ``(n, K)``, for many rows ``X`` and few rows ``A``.

    A large ``X`` (:data:`~bayesrule._parallel.PARALLEL_MIN_WORK` multiply-adds
    or more) is multiplied a chunk of rows at a time, each chunk's product
    on one BLAS thread, the chunks split over the threads
    :func:`~bayesrule._parallel.in_parallel` grants. A multi-threaded BLAS
    runs such a skinny product poorly: its threads wait for one another, and
    on a busy machine they wait for the busy cores (three to four times
    slower than one thread on MNIST's test set); single-threaded chunks that
    stay in cache run at the speed of reading ``X``, and a busy core slows
    only its own chunks. A small ``X`` is one product, in the transposed
    shape ``(A @ X.T).T``, which OpenBLAS runs faster when ``K`` is small.
    Sparse ``X`` keeps the plain product.
    """
    if sp.issparse(X) or A.shape[0] > FEW_ROWS:
        return np.asarray(X @ A.T)
    X = np.asarray(X)
    n, p = X.shape
    work = float(n) * p * A.shape[0]
    if work < _parallel.PARALLEL_MIN_WORK or n * p <= 2 * CHUNK_VALUES:
        return (A @ X.T).T
    At = np.ascontiguousarray(A.T, dtype=np.result_type(X.dtype, A.dtype, np.float32))
    out = np.empty((n, A.shape[0]), dtype=np.result_type(X.dtype, At.dtype))
    step = max(16, CHUNK_VALUES // max(p, 1))

    def part(rows: tuple[int, int]) -> None:
        for s in range(rows[0], rows[1], step):
            e = min(s + step, rows[1])
            np.matmul(X[s:e], At, out=out[s:e])

    threads = _parallel.thread_count(work)
    edges = np.linspace(0, n, max(1, min(threads, n // step)) + 1).astype(int).tolist()
    # one range runs under a BLAS capped to one thread, several on threads of their own
    _parallel.in_parallel(part, list(zip(edges[:-1], edges[1:], strict=True)), work)
    return out
