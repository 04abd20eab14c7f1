"""Matrix products on the prediction path, in the shapes the BLAS runs fastest."""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .config import get_config
from .parallel import (
    PARALLEL_MIN_WORK,
    blas_cap,
    blas_threads,
    free_cores,
    idle_cores,
    in_parallel,
    last_level_cache,
    prediction_threads,
)
from .row_sample import Runs, fold_runs_max

#: Up to this many rows of ``A``, :func:`rows_dot` multiplies in the transposed shape.
FEW_ROWS = 64

#: Up to this many features, :func:`rows_dot` multiplies in the plain shape where the
#: BLAS has the cores, with its result made column-major (:func:`_narrow_dot`).
NARROW = 64

#: A block converted to float64 by :func:`rows_dot`: at least ``CONVERT_ROWS`` rows, else
#: ``CONVERT_BYTES`` (in cache; 512 narrow rows cost more in calls than in converting)
CONVERT_ROWS, CONVERT_BYTES = 512, 3 << 20


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
    fewer idle cores than BLAS threads (:func:`~bayesrule._util.parallel.idle_cores`),
    and narrow rows (at most :data:`NARROW` features) take :func:`_narrow_dot`
    (the plain shape where the BLAS has the cores, the transposed one where not).

    A dense ``X`` of another dtype (BernoulliNB's binarized float32, float32
    data) is converted a block of rows at a time (:data:`CONVERT_BYTES`), each
    block multiplied while it is in cache, the blocks shared among threads
    (:func:`~bayesrule._util.parallel.in_parallel`): no float64 copy of ``X``
    is made. Sparse ``X`` keeps the plain product.

    Dense wide float64 rows whose minimum the calling thread tracks
    (:func:`track_low`, for the count models' sign check) are multiplied in
    blocks, each block's minimum taken with its product (:func:`fusable`),
    on a busy machine; with a core for each thread of a multi-threaded BLAS
    (:func:`~bayesrule._util.parallel.free_cores`) their minimum is taken in
    one pass and the product is one multi-threaded call in the transposed
    shape (:func:`_checked_rows_dot`). Narrow tracked rows whose blocks
    OpenBLAS multiplies on one thread (:func:`narrow_block_rows`) take
    :func:`_narrow_blocks_dot` on a busy machine, and idle where they are
    larger than the last-level cache (:func:`~.parallel.last_level_cache`;
    smaller, the one product reads them again from the cache after the
    minimum's pass: 200,000 x 20 rows, 32 MB, 3.2 ms against 3.5 in blocks):
    one read of the rows, each block's minimum and product while it is in
    cache. Measured for
    ComplementNB's product with the minimum and the sample (2-core machine,
    medians of 41; blocks of 6,144 rows): idle, 200,000 x 20 rows 4.4 ms and
    1,000,000 rows 16.2 ms against 5.2 and 20.0 for the minimum's pass then one
    multi-threaded product (scikit-learn's check and product: 5.0 and 19.3);
    busy, 7.9 and 26 ms against 13.6 and 140.
    Elsewhere, on a busy machine, narrow rows keep one product with the
    minimum in a pass of its own (:func:`_narrow_dot`).
    """
    A = np.asarray(A, dtype=np.float64)
    if sp.issparse(X) or A.shape[0] > FEW_ROWS:
        return np.asarray(X @ A.T, dtype=np.float64)
    X = np.asarray(X)
    if X.dtype != np.float64 and X.ndim == 2 and X.shape[0] > CONVERT_ROWS:
        return _converted_blocks(X, A)
    X = np.asarray(X, dtype=np.float64)
    if tracking(X) and fusable(X, A.shape[0]):
        if X.shape[1] <= NARROW and narrow_block_rows(X.shape[1], A.shape[0]):
            # blocks multiplied on one thread each while in cache, no barrier to wait at;
            # idle, rows that fit in the cache are read again from it by the one product
            if X.nbytes > last_level_cache() or not blas_has_the_cores():
                return _narrow_blocks_dot(X, A)
        if blas_has_the_cores():
            return _checked_rows_dot(X, A)
        if X.shape[1] <= NARROW:
            # narrow rows in blocks would be many small products, each slower per row
            # than one: there, one product, and the minimum in a pass of its own
            return _narrow_dot(X, A)
        return _fused_rows_dot(X, A)
    if X.ndim == 2 and X.shape[1] <= NARROW:
        return _narrow_dot(X, A)
    threads = blas_threads()
    if threads > 1 and (X.size * A.shape[0] < PARALLEL_MIN_WORK or idle_cores() >= threads):
        return (A @ X.T).T
    return X @ A.T


def _narrow_dot(X: NDArray[np.float64], A: NDArray[np.float64]) -> NDArray[np.float64]:
    """``X @ A.T`` of narrow rows (at most :data:`NARROW` features), column-major.

    Where a multi-threaded BLAS has a core for each of its threads
    (:func:`blas_has_the_cores`, an idle machine) or runs on one thread, OpenBLAS
    multiplies narrow rows faster in the plain shape ``(n, p) x (p, K)`` than in the
    transposed ``(K, p) x (p, n)`` (measured on a 2-core AMD EPYC, 200,000 x 20 rows
    by five classes: 1.5 ms against 2.9 ms on two idle threads, 2.7 against 5.0 ms
    on one); the result is then made column-major (one copy, 0.8 ms there), as the
    transposed shape's is, for the reductions over the classes that follow (a row's
    maximum, its log-sum-exp: about ten times faster down whole columns), unless
    the caller returns the product itself (:func:`rows_wanted`). On a busy machine
    the multi-threaded plain shape can wait at its barrier for threads that wait
    for a core (GaussianNB's log posterior on those rows with two processes
    spinning beside it: 0.54 of scikit-learn's speed, against 1.0 or more in the
    transposed shape), so there the transposed shape is kept.
    """
    # a product OpenBLAS keeps on one thread (OPENBLAS_ONE_THREAD) has no barrier: the
    # machine's load (a read of /proc, tens of microseconds) is looked at only above it
    if (
        float(X.size) * A.shape[0] > OPENBLAS_ONE_THREAD
        and blas_threads() > 1
        and not blas_has_the_cores()
    ):
        return (A @ X.T).T
    return _as_wanted(X @ A.T)


def _as_wanted(out: NDArray[np.float64]) -> NDArray[np.float64]:
    """A row-major narrow product as the caller wants it: column-major, or as it is within
    :func:`rows_wanted`."""
    return out if getattr(_fused, "rows", False) else np.asfortranarray(out)


@contextlib.contextmanager
def rows_wanted() -> Iterator[None]:
    """Within it, the calling thread's narrow products (:func:`rows_dot`) stay row-major:
    for a method that returns the product (the joint log likelihood, the decision
    function), whose result no reduction over the classes reads."""
    before = getattr(_fused, "rows", False)
    _fused.rows = True
    try:
        yield
    finally:
        _fused.rows = before


def _converted_blocks(X: NDArray[Any], A: NDArray[np.float64]) -> NDArray[np.float64]:
    """``X @ A.T`` with ``X`` converted to float64 one block of rows at a time.

    Each block is multiplied as ``A @ block.T`` into the columns of a (K, n)
    array, so the result is column-major, as the transposed shape's: the
    reductions over the classes that follow (each row's maximum, its
    log-sum-exp) then run over whole columns, not K values at a time (for
    200,000 x 5 results about ten times faster), and the single-threaded
    products run alike or faster in that shape.
    """
    n = X.shape[0]
    out = np.empty((A.shape[0], n))
    rows = max(CONVERT_ROWS, CONVERT_BYTES // (8 * max(X.shape[1], 1)))

    def block(s: int) -> None:
        part = X[s : s + rows].astype(np.float64)
        np.matmul(A, part.T, out=out[:, s : s + rows])

    in_parallel(block, list(range(0, n, rows)), float(n) * X.shape[1] * A.shape[0])
    return out.T


# ------------------------------------------------------------------------------
# the product of a prediction fused with its input's sign check
# ------------------------------------------------------------------------------
#: Narrow tracked rows (at most :data:`NARROW` features) take :func:`_checked_rows_dot`
#: from this many rows (fewer: the helper thread's hand-off is not worth it).
NARROW_MIN_ROWS = 32768

#: Rows of one block of :func:`rows_dot`'s fused path (about 2 MiB of float64
#: MNIST rows: a block stays in cache between its minimum and its product).
FUSED_ROWS = 334

_fused = threading.local()
_helper: Any = None
_helper_lock = threading.Lock()


def _helper_pool() -> Any:
    """The one long-lived helper thread of the fused path (made once, on first use)."""
    global _helper
    if _helper is None:
        with _helper_lock:
            if _helper is None:
                from concurrent.futures import ThreadPoolExecutor

                _helper = ThreadPoolExecutor(1, thread_name_prefix="bayesrule-rows")
    return _helper


def share_parts(count: int, part: Callable[[int], None], threads: int = 2) -> None:
    """``part(i)`` for ``i`` in ``range(count)``, the parts dealt one at a time to the calling
    thread and, where ``threads > 1`` and there are two parts or more, the long-lived helper
    thread (:func:`_helper_pool`): a thread that waits for a core leaves its parts to the
    other. Returns when every part is done; an error of either thread is raised."""
    taken = itertools.count()

    def work() -> None:
        # next() on a count is atomic under the GIL: each part is taken once
        while (i := next(taken)) < count:
            part(i)

    helper = _helper_pool().submit(work) if threads > 1 and count > 1 else None
    try:
        work()
    finally:
        if helper is not None and not helper.cancel():
            helper.result()


def _forget_helper() -> None:  # a forked child has none of the parent's threads
    global _helper, _helper_lock
    _helper = None
    _helper_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helper)


def fusable(X: Any, n_classes: int) -> bool:
    """Whether :func:`rows_dot` takes the fused, blocked path for ``X`` (see :func:`track_low`).

    Dense C-ordered float64 rows with at most :data:`FEW_ROWS` classes: wider
    than :data:`NARROW` features, in a product of at least ``PARALLEL_MIN_WORK``
    multiply-adds (MNIST's test set and ten classes qualify), unless
    ``limit_blas`` is off and the BLAS multi-threaded (its count is then never
    lowered for the blocks); or narrow, in at least :data:`NARROW_MIN_ROWS`
    rows (:func:`_narrow_blocks_dot` under OpenBLAS, which lowers the BLAS's
    count for its blocks only where ``limit_blas`` is on; otherwise
    :func:`_checked_rows_dot` where the BLAS has the cores, else one product
    and the minimum's own pass).
    """
    if not (
        isinstance(X, np.ndarray)
        and X.ndim == 2
        and X.dtype == np.float64
        and X.flags.c_contiguous
        and 0 < n_classes <= FEW_ROWS
    ):
        return False
    if X.shape[1] <= NARROW:
        return X.shape[0] >= NARROW_MIN_ROWS
    return (
        float(X.size) * n_classes >= PARALLEL_MIN_WORK
        # with limit_blas off, a multi-threaded BLAS is left to the single product
        and (bool(get_config()["limit_blas"]) or blas_threads() == 1)
    )


def track_low(X: Any, sample: Runs | None = None) -> None:
    """Have the calling thread's next products of ``X`` by :func:`rows_dot` record its minimum.

    A prediction's input check (the least value, for the sign of counts;
    NaN if any value is NaN) is then made block by block with the product,
    while each block is in cache, instead of in a pass of its own. With
    ``sample`` (runs of rows, :mod:`~bayesrule._util.row_sample`), also the
    per-column largest values of those rows (the out-of-range check's; with
    the least value of ``X``, a bound on each column's least value in the
    sample, which is all the check needs for the columns it cannot flag:
    :func:`~bayesrule.estimators._ranges.warn_out_of_range`).
    Read them with :func:`tracked_low`; ``None`` stops the tracking.
    """
    _fused.X, _fused.sample, _fused.low, _fused.bounds = X, sample, None, None


def tracking(X: Any) -> bool:
    """Whether the calling thread tracks the minimum of ``X`` (see :func:`track_low`)."""
    return getattr(_fused, "X", None) is X


def tracked_low() -> tuple[float | None, tuple[float, NDArray[np.float64]] | None]:
    """The least value recorded for the tracked ``X``, and its sample's bounds: ``(low, hi)``,
    ``low`` no larger than any value of ``X``, exactly ``X``'s minimum where that is NaN or
    negative (the sign check's error), else possibly 0 (:func:`_low_top`), and the sample's
    per-column maxima (NaN where the sample has a NaN); each None if no product of it
    recorded them. Ends the tracking."""
    low, bounds = getattr(_fused, "low", None), getattr(_fused, "bounds", None)
    track_low(None)
    return low, bounds


def blas_has_the_cores() -> bool:
    """Whether a multi-threaded BLAS finds a free core for each of its threads.

    Then a tracked product (:func:`track_low`) is one call of the BLAS's own
    threads after one pass for the minimum (:func:`_checked_rows_dot`), as
    scikit-learn's check and product; otherwise (a single-threaded BLAS, or
    a busy machine, where a multi-threaded product waits at its barrier for
    threads that wait for a core) it is the fused, blocked product of
    :func:`_fused_rows_dot` for wide rows, and for narrow rows one product
    with the minimum in a pass of its own (narrow blocks make small products,
    slower per row than one: measured on 200,000 and 1,000,000 rows of 20
    features). The spinning worker threads a multi-threaded
    BLAS leaves after each product are not load (:func:`~.parallel.free_cores`):
    the single product is what they wait for, while threads of ours would
    share the cores with them.
    """
    threads = blas_threads()
    return threads > 1 and free_cores() >= threads


#: Parts of the rows whose minimum :func:`_checked_rows_dot` takes, dealt one at a time
#: to the calling thread and the helper thread (MNIST's test set: 1,250 rows, 7.8 MB each).
CHECK_PARTS = 8


def _checked_rows_dot(X: NDArray[np.float64], A: NDArray[np.float64]) -> NDArray[np.float64]:
    """``X @ A.T`` of tracked rows on an idle machine: ``X``'s minimum (NaN if it holds one)
    and the range sample's bounds in one pass, then one product in the transposed shape on
    the BLAS's threads (a Fortran-ordered result). The pass is cut in :data:`CHECK_PARTS`
    parts of rows, dealt one at a time to the calling thread and the helper thread (a
    NumPy reduction runs on one core): a helper that waits for a core leaves its parts to
    the calling thread, which then waits for one part at most, not for half the rows.
    Narrow rows are one part (no hand-off) and one product in the plain shape. Where the
    rows are finite and not negative the product is noted finite (:func:`_note_bounded`)."""
    n, p = X.shape
    sample = getattr(_fused, "sample", None)
    if n == 0:
        _fused.low = 0.0
        return (A @ X.T).T
    # narrow rows: one part on the calling thread (200,000 x 20: 2.30 ms for the pass and
    # the product, against 2.56 with the hand-off; the pass is bound by the memory's speed)
    rows = n if p <= NARROW else -(-n // CHECK_PARTS)
    starts = range(0, n, rows)
    lows = np.empty(len(starts))
    tops = np.empty(len(starts))
    seen_hi = np.full((len(starts), p), -np.inf)

    def part(i: int) -> None:
        s = starts[i]
        lows[i], tops[i] = _low_top(X[s : s + rows])
        if sample is not None:
            fold_runs_max(X, s, s + rows, sample, seen_hi[i])

    share_parts(len(starts), part)
    _fused.low = float(lows.min())
    if sample is not None:
        _fused.bounds = (_fused.low, seen_hi.max(axis=0))
    # the BLAS has the cores here (the caller's test): narrow rows in the plain shape
    out = _as_wanted(X @ A.T) if p <= NARROW else (A @ X.T).T
    _note_bounded(out, X, A, float(tops.max()))
    return out


#: The bits of float64 ``+inf`` read as an unsigned integer: the values whose bits are below
#: them are the finite values that are not negative (a negative value, ``-0.0`` included,
#: has the sign bit, the highest; NaN has the exponent of ``inf`` and a mantissa).
_INF_BITS = 0x7FF0000000000000


def _low_top(block: NDArray[np.float64]) -> tuple[float, float]:
    """A lower bound on the C-contiguous ``block``'s values and its largest value, from one
    reduction where every value is finite and not negative: ``(0.0, largest)``. For such
    values the order of their bits, read as unsigned integers, is their order, so the
    largest of the bits is the largest value (as fast as a float minimum: 1,000,000 x 20,
    5.4 ms against 5.5). Otherwise ``(least value, inf)`` from a second reduction: NaN if
    the block holds one, below 0 if a value is negative (the caller's error)."""
    if block.size == 0:
        return 0.0, 0.0
    bits = block.view(np.uint64).max()
    if int(bits) < _INF_BITS:
        return 0.0, float(np.asarray(bits, dtype=np.uint64).view(np.float64))
    return float(block.min()), np.inf


def _note_bounded(
    out: NDArray[np.float64], X: NDArray[Any], A: NDArray[np.float64], top: float
) -> None:
    """Note the product ``out = X @ A.T`` finite (:func:`note_finite`) where the values of
    ``X`` are known finite, not negative and at most ``top`` (:func:`_low_top`), and
    ``A`` finite: then ``|out| <= p * top * max|A|``, and below ``2**1000`` no entry can
    overflow. The class model then need not reduce the results to find them finite
    (1,000,000 x 5: about 1.5 ms, a tenth of ComplementNB's joint log likelihood). The
    bound is Python's float arithmetic: an infinite or NaN ``top`` or ``A`` makes it inf
    or NaN, which never compares below."""
    if A.size and X.shape[1] * top * float(np.abs(A).max()) < 2.0**1000:
        note_finite(out)


def _fused_rows_dot(X: NDArray[np.float64], A: NDArray[np.float64]) -> NDArray[np.float64]:
    """``X @ A.T`` in blocks of :data:`FUSED_ROWS` rows with single-threaded products, each
    block's minimum taken while it is in cache; the blocks are shared by the calling thread
    and one long-lived helper thread (within :func:`~.parallel.prediction_threads`)."""
    out = np.empty((X.shape[0], A.shape[0]))
    At = np.ascontiguousarray(A.T)

    def product(s: int, block: NDArray[np.float64]) -> None:
        np.matmul(block, At, out=out[s : s + FUSED_ROWS])

    threads = prediction_threads(float(X.size) * A.shape[0])
    with blas_cap(1):
        top = _tracked_blocks(X, FUSED_ROWS, product, threads)
    _note_bounded(out, X, A, top)
    return out


def _tracked_blocks(
    X: NDArray[np.float64],
    rows: int,
    product: Callable[[int, NDArray[np.float64]], None],
    threads: int,
) -> float:
    """``product(start, block)`` of each block of ``rows`` rows of ``X``, with the block's
    minimum taken just before, while it is in cache; the blocks are shared by the calling
    thread and, where ``threads > 1``, the one long-lived helper thread. The range check's
    sample (:func:`track_low`): for wide rows, each block's rows of it are reduced with the
    block; for narrow rows (at most :data:`NARROW` features, a sample of a few dozen KB)
    it is reduced once after the blocks, one call instead of one or two a block. The
    minimum and the bounds go where :func:`track_low` reads them; returns ``X``'s largest
    value where its values are finite and not negative, else ``inf`` (:func:`_low_top`)."""
    n = X.shape[0]
    starts = range(0, n, rows)
    lows = np.empty(len(starts))
    tops = np.empty(len(starts))
    sample: Runs | None = getattr(_fused, "sample", None)
    by_block = sample is not None and X.shape[1] > NARROW
    if by_block:
        # each block's rows of the sample, reduced while the block is in cache
        seen_hi = np.full((len(starts), X.shape[1]), -np.inf)

    def part(i: int) -> None:
        s = starts[i]
        block = X[s : s + rows]
        lows[i], tops[i] = _low_top(block)
        if by_block and sample is not None:
            fold_runs_max(X, s, s + rows, sample, seen_hi[i])
        product(s, block)

    share_parts(len(starts), part, threads)
    _fused.low = float(lows.min()) if lows.size else 0.0
    if sample is not None and lows.size:
        if by_block:
            hi = seen_hi.max(axis=0)
        else:
            hi = np.full(X.shape[1], -np.inf)
            fold_runs_max(X, 0, n, sample, hi)
        _fused.bounds = (_fused.low, hi)
    return float(tops.max()) if tops.size else 0.0


#: Multiply-adds up to which OpenBLAS runs a product on the calling thread alone, whatever
#: its thread count: ``65536 * GEMM_MULTITHREAD_THRESHOLD`` with the build's default
#: threshold of 4 (``interface/gemm.c``; NumPy's and SciPy's wheels keep the default).
OPENBLAS_ONE_THREAD = 262144

#: Fewest rows of a block of :func:`_narrow_blocks_dot` (fewer: the calls cost more than
#: the pass they save).
NARROW_BLOCK_MIN = 1024


#: Bytes of rows in a block of :func:`_narrow_blocks_dot` while the BLAS is held to one
#: thread (:func:`~bayesrule._util.parallel.blas_cap`): OpenBLAS's single-threaded product
#: of narrow rows runs at a steady speed up to blocks of about 1.5 MB and at half of it
#: beyond (measured, 8 to 64 features, AMD EPYC); at most :data:`NARROW_CAPPED_ROWS` rows.
NARROW_BLOCK_BYTES = 1 << 20
NARROW_CAPPED_ROWS = 8192


def capped_block_rows(p: int) -> int:
    """Rows of a block of :func:`_narrow_blocks_dot` of rows of ``p`` features when the BLAS
    is held to one thread: :data:`NARROW_BLOCK_BYTES` of float64 rows, from
    :data:`NARROW_BLOCK_MIN` to :data:`NARROW_CAPPED_ROWS` rows."""
    return int(
        min(NARROW_CAPPED_ROWS, max(NARROW_BLOCK_MIN, NARROW_BLOCK_BYTES // (8 * max(p, 1))))
    )


def narrow_block_rows(p: int, n_classes: int) -> int:
    """Rows of one block of :func:`_narrow_blocks_dot` for rows of ``p`` features and
    ``n_classes`` classes, or 0 where that path does not apply.

    The most rows whose product (``n_classes * p * rows`` multiply-adds) OpenBLAS
    keeps on the calling thread (:data:`OPENBLAS_ONE_THREAD`), so that two threads of
    ours multiply blocks side by side without changing the BLAS's thread count; 0
    below :data:`NARROW_BLOCK_MIN` rows, and for another BLAS (whose rule is not
    known: an MKL or BLIS product of a block might start threads of its own).
    """
    if p * n_classes <= 0:
        return 0
    rows = OPENBLAS_ONE_THREAD // (p * n_classes)
    if rows < NARROW_BLOCK_MIN or not _openblas_only():
        return 0
    return int(rows)


_openblas: tuple[int, bool] | None = None


def _openblas_only() -> bool:
    """Whether every BLAS NumPy may call is OpenBLAS (read again after new imports)."""
    global _openblas
    import sys

    loaded = len(sys.modules)
    if _openblas is None or _openblas[0] != loaded:
        from .parallel import _blas_controllers

        libs = _blas_controllers()
        _openblas = (loaded, bool(libs) and all(c.internal_api == "openblas" for c in libs))
    return _openblas[1]


def _narrow_blocks_dot(X: NDArray[np.float64], A: NDArray[np.float64]) -> NDArray[np.float64]:
    """``X @ A.T`` of tracked narrow rows, block by block, each block's minimum (and its
    rows of the range check's sample) taken while it is in cache: one read of ``X``
    instead of two (the minimum's pass, then the product's).

    Each block of :func:`narrow_block_rows` rows is multiplied in the plain shape
    (``block @ A.T``, the faster for narrow rows: :func:`_narrow_dot`) into the rows
    of an (n, K) array, made column-major at the end as :func:`_narrow_dot` makes it
    (busy, 200,000 x 20 rows: ComplementNB's joint 1.7x scikit-learn's speed against
    1.0 with each block multiplied as ``A @ block.T``). Each block is multiplied on one
    thread: the BLAS is held to one thread while the blocks run
    (:func:`~bayesrule._util.parallel.blas_cap`, blocks of :func:`capped_block_rows`),
    or, where it cannot be held (``limit_blas=False``, inside our worker threads), the
    blocks are small enough for OpenBLAS to keep on the calling thread
    (:func:`narrow_block_rows`). The blocks are shared by the calling thread and the
    helper thread (with ``n_threads='auto'`` while the BLAS's thread count and the
    available cores allow two, else within ``n_threads``; one thread inside our worker
    threads), and neither waits for the other between blocks (a busy core delays only
    its own blocks).
    """
    from .parallel import _in_worker, available_cores

    n, p = X.shape
    K = A.shape[0]
    budget = get_config()["n_threads"]
    if _in_worker():
        threads = 1
    elif budget == "auto":
        threads = min(blas_threads(), available_cores())
    else:
        threads = int(budget)
    # with the BLAS held to one thread, blocks of about 1 MB (fewer calls); without
    # (limit_blas off, or inside our worker threads), the most rows it keeps on one anyway
    capped = bool(get_config()["limit_blas"]) and not _in_worker()
    rows = capped_block_rows(p) if capped else narrow_block_rows(p, K)
    out = np.empty((n, K))
    At = np.ascontiguousarray(A.T)

    def product(s: int, block: NDArray[np.float64]) -> None:
        np.matmul(block, At, out=out[s : s + rows])

    with blas_cap(1) if capped else contextlib.nullcontext():
        top = _tracked_blocks(X, rows, product, threads)
    out = _as_wanted(out)
    _note_bounded(out, X, A, top)
    return out


# ------------------------------------------------------------------------------
# a product found finite, so that the layer above need not look again
# ------------------------------------------------------------------------------
_finite = threading.local()


def note_finite(values: Any) -> None:
    """Record that the calling thread has just found every entry of ``values`` finite.

    A class model that checks its own product (to choose its path for NaN)
    notes the array it returns; the estimator that receives it then asks
    :func:`noted_finite` instead of reducing it a second time (1,000,000 x 5
    results: about 2 ms). Only a weak reference to that one object is kept,
    one per thread: a new note replaces it.
    """
    _finite.ref = weakref.ref(values)


def noted_finite(values: Any) -> bool:
    """Whether ``values`` is the object last noted finite by the calling thread
    (:func:`note_finite`); the note is used up, so that a later change to the array
    is never covered by it. False for any other object: the caller then looks."""
    ref = getattr(_finite, "ref", None)
    _finite.ref = None
    return ref is not None and ref() is values


def forget_finite() -> None:
    """Drop the calling thread's note (:func:`note_finite`), if any."""
    _finite.ref = None
