"""Threads for the products: several single-threaded BLAS calls side by side."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

#: Below this many multiply-adds a pass runs in the calling thread alone.
PARALLEL_MIN_WORK = 5e7


def blas_threads() -> int:
    """How many threads NumPy's BLAS would use (at least 1)."""
    from threadpoolctl import threadpool_info

    counts = [int(i.get("num_threads") or 1) for i in threadpool_info() if i["user_api"] == "blas"]
    return max(1, max(counts, default=1))


def thread_count(work: float) -> int:
    """Threads for a job of ``work`` multiply-adds: the BLAS's, or 1 below ``PARALLEL_MIN_WORK``."""
    return blas_threads() if work >= PARALLEL_MIN_WORK else 1


def in_parallel(fn: Callable[[Any], Any], items: Sequence[Any], work: float) -> list[Any]:
    """``[fn(item) for item in items]``, run by as many threads as the BLAS has.

    The items are parts of one job: the rows of a statistic's pass (whose
    symmetric products, BLAS syrk, spread poorly over the BLAS's own
    threads), or the classes of a prediction. Several single-threaded
    products on separate parts use the cores fully; NumPy releases the GIL
    while they run. Meanwhile the BLAS is limited to one thread per call
    (process-wide, restored afterwards). Jobs under ``PARALLEL_MIN_WORK``
    multiply-adds stay in the calling thread. Results keep the items' order.
    """
    workers = min(len(items), thread_count(work))
    if workers <= 1:
        return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with single_threaded_blas(), ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, items))


_lock = threading.Lock()
_holders = 0
_limiter: Any = None


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Limit the BLAS to one thread until the last concurrent user leaves.

    The limit is process-wide, so fits running at once in several threads
    share one: the first to enter sets it and the last to leave restores the
    original thread counts (nested or overlapping uses cannot leave the BLAS
    stuck at one thread).
    """
    global _holders, _limiter
    from threadpoolctl import threadpool_limits

    with _lock:
        if _holders == 0:
            _limiter = threadpool_limits(1, user_api="blas")
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                _limiter.restore_original_limits()
                _limiter = None
