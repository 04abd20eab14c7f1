"""How many cores a bayesrule computation uses, and how it uses them.

The budget comes from the calling thread's ``n_threads`` setting
(:func:`bayesrule.config_context`); nothing else is read. A job under
``PARALLEL_MIN_WORK`` multiply-adds runs in the calling thread and leaves the
BLAS alone. A larger one runs either on several threads of ours, each making
single-threaded BLAS products on its own part (:func:`in_parallel`), or in the
calling thread with at most ``n_threads`` BLAS threads (:func:`blas_budget`).

What is process-wide, and bounded: OpenBLAS (like MKL's and BLIS's global
setting) keeps one thread count for the whole process; it has no per-thread
count (``openblas_set_num_threads_local`` sets the same global). When the BLAS
has more threads than a job's budget, and ``limit_blas`` is on (the default),
the count is lowered while the job's products run and restored when the last
bayesrule job that lowered it ends, also when one raises. Other threads' BLAS
calls made in that window run with the lower count. The count is always
changed from one long-lived thread of ours and read back (OpenBLAS may
ignore a change made from another short-lived thread than the previous one). With ``limit_blas=False``
bayesrule never changes it. See ``docs/parallelism.md``.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .config import get_config

#: Below this many multiply-adds a pass runs in the calling thread alone.
PARALLEL_MIN_WORK = 5e7

#: Reads of the run queue taken by :func:`idle_cores`, and the pause between them.
LOAD_SAMPLES, LOAD_PAUSE = 5, 5e-4

#: The pause between the readings of :func:`free_cores` (on a prediction's path):
#: none, the readings follow each other (about 0.1 ms apart: a read of /proc). A
#: sleep of 1e-4 s costs about 0.2 ms on a loaded machine, so that five readings
#: with pauses took 1.3 ms (median; 5 ms at the 90th percentile) of a 15 ms
#: MNIST prediction.
FREE_PAUSE = 0.0


_blas_libs: tuple[int, list[Any]] | None = None


def _blas_controllers() -> list[Any]:
    """threadpoolctl's controllers of the loaded BLAS libraries.

    Finding the libraries scans the process (about a millisecond), so they are
    found once and again only when modules have been imported since (a new
    import may load another BLAS); asking each for its thread count is cheap.
    """
    global _blas_libs
    loaded = len(sys.modules)
    if _blas_libs is None or _blas_libs[0] != loaded:
        from threadpoolctl import ThreadpoolController

        libs = [c for c in ThreadpoolController().lib_controllers if c.user_api == "blas"]
        _blas_libs = (loaded, libs)
    return _blas_libs[1]


def blas_threads() -> int:
    """How many threads NumPy's BLAS would use now (at least 1)."""
    counts = [int(c.get_num_threads() or 1) for c in _blas_controllers()]
    return max(1, max(counts, default=1))


def available_cores() -> int:
    """Cores this process may run on: its CPU affinity, within a cgroup CPU quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        n = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, n)


#: The last-level cache assumed where the system does not say (bytes).
DEFAULT_LAST_CACHE = 32 << 20

_last_cache: int | None = None


def last_level_cache() -> int:
    """Bytes of the CPU's largest cache (Linux's ``/sys/devices/system/cpu/cpu0/cache``;
    :data:`DEFAULT_LAST_CACHE` where it cannot be read). Read once."""
    global _last_cache
    if _last_cache is None:
        sizes = []
        root = "/sys/devices/system/cpu/cpu0/cache"
        try:
            entries = [e for e in os.listdir(root) if e.startswith("index")]
        except OSError:
            entries = []
        for entry in entries:
            try:
                with open(os.path.join(root, entry, "size")) as f:
                    text = f.read().strip().upper()
                scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
                sizes.append(int(text.rstrip("KMG")) * scale)
            except (OSError, ValueError):
                continue  # an entry without a readable size
        _last_cache = max(sizes) if sizes else DEFAULT_LAST_CACHE
    return _last_cache


def _running_tasks() -> int | None:
    """Tasks running or runnable on the machine now (Linux), or None when unknown."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _median_running(
    pause: float, own_threads: bool = False, native_only: bool = False
) -> tuple[int, int | None] | None:
    """The median of ``LOAD_SAMPLES`` readings of :func:`_running_tasks`, ``pause`` seconds
    apart, and (``own_threads``) this process's running threads read at the middle one
    (:func:`_own_running`, of ``native_only`` threads; else None); None when the
    machine's count cannot be read."""
    readings = []
    own: int | None = None
    for i in range(LOAD_SAMPLES):
        if i and pause > 0:
            time.sleep(pause)
        r = _running_tasks()
        if r is None:
            return None
        readings.append(r)
        if own_threads and i == LOAD_SAMPLES // 2:
            own = _own_running(native_only)
    return sorted(readings)[len(readings) // 2], own


def idle_cores() -> int:
    """Cores of :func:`available_cores` that no other task is using, at least 1.

    The kernel's count of runnable tasks (``/proc/loadavg``, an instantaneous
    value unlike the load averages) is read ``LOAD_SAMPLES`` times over about
    two milliseconds; the median reading, less the calling thread, is the
    load. A task that keeps a core busy is runnable in every reading, while
    short wake-ups are in few. Where the count cannot be read (not Linux), all
    available cores count as idle.

    This process's threads that are not Python threads (read once, in the
    middle of the samples) are not load either: they are the BLAS's workers,
    which after a multi-threaded product spin, runnable, for up to a tenth of
    a second (OpenBLAS) waiting for the next one. Counted, they made a fit
    that followed such a product run on one core: LDA's fit of MNIST after one
    syrk of the same rows took 0.83-0.95 s against 0.52-0.63 s. This
    process's other Python threads count, as any other task.
    """
    now = time.monotonic()
    cached = _idle_cache
    if cached is not None and now - cached[0] < IDLE_CACHE_SECONDS:
        return cached[1]
    cores = available_cores()
    sampled = _median_running(LOAD_PAUSE, own_threads=True, native_only=True)
    if sampled is None:
        return cores
    others = max(0, sampled[0] - 1 - (sampled[1] or 0))
    idle = max(1, cores - others)
    _cache_idle(now, idle)
    return idle


#: How long a reading of the idle cores is reused: the load changes slowly next
#: to one prediction or pass, and sampling it costs a few milliseconds.
IDLE_CACHE_SECONDS = 0.25
_idle_cache: tuple[float, int] | None = None
_free_cache: tuple[float, int] | None = None


def _cache_idle(when: float, idle: int) -> None:
    global _idle_cache
    _idle_cache = (when, idle)


def _own_running(native_only: bool = False) -> int | None:
    """Threads of this process running or runnable now (Linux), or None when unknown;
    with ``native_only``, those that are not Python threads (the BLAS's workers)."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    if native_only:
        python = {str(t.native_id) for t in threading.enumerate()}
        tasks = [t for t in tasks if t not in python]
    running = 0
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # a thread that has ended
            continue
        # the state follows the command name, which is in parentheses
        if stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"R":
            running += 1
    return running


def free_cores() -> int:
    """Cores of :func:`available_cores` that no task of another process is using, at least 1.

    As :func:`idle_cores`, but this process's own running threads do not
    count as load: after a multi-threaded product, OpenBLAS's worker threads
    spin, runnable, for up to a tenth of a second waiting for the next one
    (measured with the scipy-openblas wheels), and read as busy cores by
    :func:`idle_cores` although the next product of this process is what
    they wait for. For the choice between the BLAS's own threads and ours
    in a prediction (:func:`~bayesrule._util.products.rows_dot`). The
    process's threads are read once, in the middle of the samples; the
    reading is reused for ``IDLE_CACHE_SECONDS``.
    """
    global _free_cache
    now = time.monotonic()
    cached = _free_cache
    if cached is not None and now - cached[0] < IDLE_CACHE_SECONDS:
        return cached[1]
    cores = available_cores()
    sampled = _median_running(FREE_PAUSE, own_threads=True)
    if sampled is None:
        return cores
    others = max(0, sampled[0] - max(1, sampled[1] or 1))
    free = max(1, cores - others)
    _free_cache = (now, free)
    return free


_local = threading.local()


def _in_worker() -> bool:
    return bool(getattr(_local, "worker", False))


def thread_count(work: float) -> int:
    """Cores a job of ``work`` multiply-adds may use, under the calling thread's settings.

    1 below ``PARALLEL_MIN_WORK``, inside one of our worker threads, or when
    ``limit_blas`` is off and the BLAS is multi-threaded (our threads would
    need a single-threaded BLAS). Otherwise ``n_threads`` if it is an int,
    and for ``'auto'`` the idle cores, at most the BLAS's thread count.
    """
    if work < PARALLEL_MIN_WORK or _in_worker():
        return 1
    config = get_config()
    n = config["n_threads"]
    blas = blas_threads()
    if not config["limit_blas"] and blas > 1:
        return 1
    if n == "auto":
        return min(blas, idle_cores())
    return int(n)


def _as_worker(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` run as one of our worker threads (its BLAS calls never change the limit)."""

    def run(item: Any) -> Any:
        _local.worker = True
        try:
            return fn(item)
        finally:
            _local.worker = False

    return run


def prediction_threads(work: float) -> int:
    """Threads of ours for a prediction's independent blocks of rows (QDA's).

    Unlike :func:`thread_count` it does not drop to one thread when other
    work holds cores: each of our threads takes the next block from a queue
    and never waits for another (no barrier, unlike a BLAS's threads inside
    one product), so a thread that waits for a core delays only its own
    blocks while the others go on, and the job keeps its share of a busy
    machine. 1 below ``PARALLEL_MIN_WORK``, inside one of our worker threads,
    or when ``limit_blas`` is off and the BLAS is multi-threaded; ``n_threads``
    if it is an int; for ``'auto'`` the BLAS's thread count, at most the
    available cores.
    """
    if work < PARALLEL_MIN_WORK or _in_worker():
        return 1
    config = get_config()
    blas = blas_threads()
    if not config["limit_blas"] and blas > 1:
        return 1
    n = config["n_threads"]
    if n == "auto":
        return max(1, min(blas, available_cores()))
    return int(n)


def in_parallel(
    fn: Callable[[Any], Any], items: Sequence[Any], work: float, threads: int | None = None
) -> list[Any]:
    """``[fn(item) for item in items]``, run on up to :func:`thread_count` threads.

    The items are parts of one job: the rows of a statistic's pass (whose
    symmetric products, BLAS syrk, spread poorly over the BLAS's own
    threads), or the classes of a prediction. Several single-threaded
    products on separate parts use the cores fully; NumPy releases the GIL
    while they run, and the parts never wait for one another, so a busy
    core slows only its own part. With one thread the items run in the
    calling thread under :func:`blas_budget`. Results keep the items' order.
    ``threads`` (e.g. :func:`prediction_threads`) replaces the budget.

    Each thread takes the next item as it finishes one (one task a thread,
    not a future an item: 1,953 items of 512 rows, BernoulliNB's converted blocks
    of 1,000,000 rows, cost 30-40 µs each as futures, more than the items
    themselves). An error is that of the first item in order that raised;
    no item after it is started once it is known, nor any once the caller is
    interrupted (KeyboardInterrupt while it waits).
    """
    budget = thread_count(work) if threads is None else max(1, int(threads))
    workers = min(len(items), budget)
    if workers <= 1:
        with blas_cap(budget if work >= PARALLEL_MIN_WORK else None):
            return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    results: list[Any] = [None] * len(items)
    errors: dict[int, BaseException] = {}
    taken = itertools.count()
    end = [len(items)]  # lowered to the first failed item: none after it is started

    run = _as_worker(fn)

    def work_items() -> None:
        # next() on a count is atomic under the GIL: each item is taken once, in order
        while (i := next(taken)) < end[0]:
            try:
                results[i] = run(items[i])
            except BaseException as exc:  # the first in order is raised below
                errors[i] = exc
                end[0] = min(end[0], i)

    with blas_cap(1), ThreadPoolExecutor(workers, thread_name_prefix="bayesrule") as pool:
        futures = [pool.submit(work_items) for _ in range(workers)]
        try:
            for future in futures:
                future.result()
        finally:
            end[0] = -1  # an interrupted caller: the threads take no further item
    if errors:
        raise errors[min(errors)]
    return results


def ordered_map(
    fn: Callable[[Any], Any], items: Iterable[Any], threads: int
) -> Iterator[tuple[Any, Any]]:
    """``(item, fn(item))`` for a stream of items, in order, ``threads`` of them at a time.

    For the blocks of a pass read one after another (``fit_stream``): at most
    ``threads`` items are being worked on, each on a thread of ours whose
    BLAS products are single-threaded, so memory stays bounded by that many
    items; an error is raised in the items' order, once the items before it
    are yielded. With one thread the items run in the calling thread.
    """
    if threads <= 1:
        for item in items:
            yield item, fn(item)
        return
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    run = _as_worker(fn)

    pending: deque[tuple[Any, Future[Any]]] = deque()
    with blas_cap(1), ThreadPoolExecutor(threads, thread_name_prefix="bayesrule") as pool:
        try:
            for item in items:
                if len(pending) >= threads:
                    done, future = pending.popleft()
                    yield done, future.result()
                pending.append((item, pool.submit(run, item)))
            while pending:
                done, future = pending.popleft()
                yield done, future.result()
        finally:
            for _, future in pending:
                future.cancel()


@contextmanager
def blas_budget(work: float) -> Iterator[int]:
    """Run the block's BLAS products in the calling thread within the thread budget.

    For a job of ``work`` multiply-adds: when the BLAS has more threads than
    :func:`thread_count` allows (one on a busy machine, or under
    ``n_threads=1``), it is limited to that many for the block (see the
    module's note on what is process-wide). Yields the budget.
    """
    budget = thread_count(work)
    with blas_cap(budget if work >= PARALLEL_MIN_WORK else None):
        yield budget


_lock = threading.Lock()
_caps: Counter[int] = Counter()
_applied: int | None = None
#: the BLAS libraries changed by the first cap, with their counts before it
_saved: list[tuple[Any, int]] | None = None
_original_count = 1


#: the one thread that changes BLAS thread counts (see :func:`_set_counts`)
_setter: Any = None
#: tries at a change the library does not take at once
SET_TRIES = 5


def _set_counts(changes: list[tuple[Any, int]]) -> None:
    """Set each library's thread count, on one long-lived thread of ours; under _lock.

    OpenBLAS (the scipy-openblas wheels at least) sometimes ignores
    ``openblas_set_num_threads`` called from a short-lived thread other than
    the one that made the previous change, so that a count lowered in one
    worker thread and restored from another stayed lowered for good. Every
    change is therefore made from the same thread, and read back there:
    one the library did not take is made again (a few times).
    """
    global _setter
    if _setter is None:
        from concurrent.futures import ThreadPoolExecutor

        _setter = ThreadPoolExecutor(1, thread_name_prefix="bayesrule-blas")

    def run() -> None:
        for _ in range(SET_TRIES):
            for lib, count in changes:
                lib.set_num_threads(count)
            if all(int(lib.get_num_threads() or 1) == count for lib, count in changes):
                return

    try:
        _setter.submit(run).result()
    except RuntimeError:  # new work refused at interpreter shutdown: set them here
        run()


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's threads: no setter thread to run a change
    (a submitted change would wait for ever) and perhaps a lock held by a thread that is
    not there. It starts with its own, and no cap held (the threads that held the
    parent's caps are not in the child); the BLAS counts it inherited are still known
    (``_saved``, ``_applied``), so the child's next cap is applied and restored as usual."""
    global _setter, _lock, _caps
    _setter = None
    _lock = threading.Lock()
    _caps = Counter()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _apply(cap: int | None) -> None:
    """Set the BLAS to ``cap`` threads, or back to its original counts (``None``); under _lock.

    The libraries are threadpoolctl's cached controllers (:func:`_blas_controllers`),
    so a cap costs two library calls, not a scan of the process.
    """
    global _applied, _saved, _original_count
    if cap is None:
        if _saved is not None:
            _set_counts(_saved)
        _saved, _applied = None, None
        return
    if _saved is None:
        # the same libraries for every change until the restore, so that a
        # BLAS loaded in between is neither changed nor left changed
        _saved = [(lib, int(lib.get_num_threads() or 1)) for lib in _blas_controllers()]
        _original_count = max((count for _, count in _saved), default=1)
    # never above the count the BLAS had before the first cap
    cap = min(cap, _original_count)
    if cap != _applied:
        _set_counts([(lib, cap) for lib, _ in _saved])
    _applied = cap


@contextmanager
def blas_cap(cap: int | None) -> Iterator[None]:
    """Hold the BLAS at no more than ``cap`` threads (``None``: no cap) for the block.

    Caps held at once by several threads combine to the smallest; the BLAS's
    original counts come back when the last holder leaves, also on an
    exception. A cap at or above the BLAS's count changes nothing, and
    ``limit_blas=False`` or a call inside our worker threads never caps.
    """
    if cap is None or _in_worker() or not get_config()["limit_blas"]:
        yield
        return
    with _lock:
        # a cap that changes nothing is still recorded when others hold caps,
        # so that the count is not restored under them; alone it is skipped
        if not _caps and cap >= blas_threads():
            cap = None
        else:
            _caps[cap] += 1
            _apply(min(_caps))
    try:
        yield
    finally:
        if cap is not None:
            with _lock:
                _caps[cap] -= 1
                if not _caps[cap]:
                    del _caps[cap]
                _apply(min(_caps) if _caps else None)


#: the former private name, kept for code that still uses it
_blas_cap = blas_cap
