"""The thread settings (config_context) and what a threaded pass does to the BLAS."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from bayesrule._util import parallel as _parallel
from bayesrule._util.config import config_context, get_config, set_config
from bayesrule.stats import PooledScatterStats


def blas_counts() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 40)) + rng.uniform(-3, 3, size=40)
    y = rng.integers(0, 4, 4000)
    return X, y


def test_config_context_nests_and_restores():
    assert get_config()["n_threads"] == "auto"
    with config_context(n_threads=3):
        with config_context(n_threads=1):
            assert get_config()["n_threads"] == 1
        assert get_config()["n_threads"] == 3
    assert get_config() == {"n_threads": "auto", "limit_blas": True}


def test_config_context_restores_after_an_exception():
    with pytest.raises(RuntimeError), config_context(n_threads=2):
        raise RuntimeError
    assert get_config()["n_threads"] == "auto"


def test_none_means_auto_and_omitted_settings_are_kept():
    with config_context(n_threads=2, limit_blas=False), config_context(n_threads=None):
        assert get_config() == {"n_threads": "auto", "limit_blas": False}


def test_a_thread_setting_does_not_reach_other_threads():
    seen: dict[str, object] = {}
    ready, done = threading.Event(), threading.Event()

    def other():
        set_config(n_threads=5)
        ready.set()
        done.wait(5)
        seen["other"] = get_config()["n_threads"]

    t = threading.Thread(target=other)
    with config_context(n_threads=2):
        t.start()
        ready.wait(5)
        seen["main"] = get_config()["n_threads"]
        done.set()
        t.join()
    assert seen == {"main": 2, "other": 5}


@pytest.mark.parametrize("bad", [0, -1, 1.5, "4", True, "many"])
def test_n_threads_is_validated(bad):
    with pytest.raises(ValueError, match="n_threads must be an int >= 1, 'auto' or None; got"):
        set_config(n_threads=bad)


def test_limit_blas_is_validated():
    with pytest.raises(ValueError, match="limit_blas must be True or False; got 1"):
        with config_context(limit_blas=1):
            pass


def test_explicit_n_threads_sets_the_parts():
    from bayesrule.stats import _common

    with config_context(n_threads=4):
        assert _common.row_ranges(1000, np.inf) == [(0, 250), (250, 500), (500, 750), (750, 1000)]
        assert _common.row_ranges(1000, 0.0) == [(0, 1000)]
        assert _parallel.in_parallel(lambda i: i * i, list(range(10)), np.inf) == [
            i * i for i in range(10)
        ]


def test_auto_takes_the_idle_cores_at_most_the_blas_threads(monkeypatch):
    monkeypatch.setattr(_parallel, "available_cores", lambda: 8)
    monkeypatch.setattr(_parallel, "blas_threads", lambda: 4)
    monkeypatch.setattr(_parallel, "LOAD_PAUSE", 0.0)
    monkeypatch.setattr(_parallel, "IDLE_CACHE_SECONDS", 0.0)  # every call reads the load
    monkeypatch.setattr(_parallel, "_own_running", lambda native_only=False: 0)
    monkeypatch.setattr(_parallel, "_running_tasks", lambda: 1)  # only the caller runs
    assert _parallel.thread_count(np.inf) == 4
    monkeypatch.setattr(_parallel, "_running_tasks", lambda: 8)  # seven busy tasks
    assert _parallel.thread_count(np.inf) == 1
    readings = iter([3, 9, 3, 3, 2])  # a short wake-up is not load: the median reading counts
    monkeypatch.setattr(_parallel, "_running_tasks", lambda: next(readings))
    assert _parallel.idle_cores() == 6


def test_the_idle_cores_are_read_again_after_a_moment(monkeypatch):
    monkeypatch.setattr(_parallel, "available_cores", lambda: 8)
    monkeypatch.setattr(_parallel, "LOAD_PAUSE", 0.0)
    monkeypatch.setattr(_parallel, "_idle_cache", None)
    monkeypatch.setattr(_parallel, "_own_running", lambda native_only=False: 0)
    monkeypatch.setattr(_parallel, "_running_tasks", lambda: 1)
    assert _parallel.idle_cores() == 8
    monkeypatch.setattr(_parallel, "_running_tasks", lambda: 8)
    assert _parallel.idle_cores() == 8  # within IDLE_CACHE_SECONDS: the reading is reused
    monkeypatch.setattr(_parallel, "IDLE_CACHE_SECONDS", 0.0)
    assert _parallel.idle_cores() == 1


def test_a_multithreaded_blas_is_left_alone_without_limit_blas(monkeypatch):
    monkeypatch.setattr(_parallel, "blas_threads", lambda: 2)
    with config_context(n_threads=4, limit_blas=False):
        assert _parallel.thread_count(np.inf) == 1


def test_fit_with_one_thread_equals_the_default_fit(data):
    X, y = data
    with config_context(n_threads=2):
        threaded = PooledScatterStats.from_data(X, y)
    with config_context(n_threads=1):
        single = PooledScatterStats.from_data(X, y)
    default = PooledScatterStats.from_data(X, y)
    assert single.allclose(threaded, rtol=1e-12) and single.allclose(default, rtol=1e-12)


def run_while_watching(fit) -> list[list[int]]:
    """BLAS counts seen from another thread while ``fit`` runs in this one."""
    seen: list[list[int]] = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            seen.append(blas_counts())

    t = threading.Thread(target=watch)
    t.start()
    try:
        fit()
    finally:
        stop.set()
        t.join()
    return seen


def test_without_limit_blas_other_threads_keep_their_blas_threads(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_WORK", 0.0)
    before = blas_counts()
    with config_context(n_threads=2, limit_blas=False):
        seen = run_while_watching(lambda: [PooledScatterStats.from_data(X, y) for _ in range(5)])
    assert seen and all(s == before for s in seen)


def test_with_limit_blas_the_blas_is_lowered_only_while_the_pass_runs(data, monkeypatch):
    """Seen from inside the pass's workers: the BLAS at one thread, restored after."""
    X, y = data
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_WORK", 0.0)
    inside: list[list[int]] = []
    as_worker = _parallel._as_worker

    def watched(fn):
        run = as_worker(fn)

        def part(item):
            inside.append(blas_counts())
            return run(item)

        return part

    monkeypatch.setattr(_parallel, "_as_worker", watched)
    # a BLAS with threads to lower, whatever this machine's default (a one-thread
    # BLAS would make "never above the original" true of a pass that does nothing)
    with threadpool_limits(4, user_api="blas"):
        before = blas_counts()
        assert before and min(before) >= 2, before
        with config_context(n_threads=2):
            got = PooledScatterStats.from_data(X, y)
        after = blas_counts()
    assert inside, "the pass never ran on worker threads"
    assert all(c == [1] * len(before) for c in inside), inside
    assert after == before
    with config_context(n_threads=1):
        assert got.allclose(PooledScatterStats.from_data(X, y), rtol=1e-12)


def test_blas_threads_are_restored_after_a_pass_that_raises(monkeypatch):
    before = blas_counts()

    def boom(i):
        raise ZeroDivisionError

    for n in (1, 2):
        with config_context(n_threads=n), pytest.raises(ZeroDivisionError):
            _parallel.in_parallel(boom, [0, 1, 2], np.inf)
        assert blas_counts() == before
    with pytest.raises(ZeroDivisionError), config_context(n_threads=1):
        with _parallel.blas_budget(np.inf):
            boom(0)
    assert blas_counts() == before


def test_overlapping_caps_combine_and_never_raise_the_blas(monkeypatch):
    before = blas_counts()
    if max(before) < 2:
        pytest.skip("needs a multi-threaded BLAS")
    with _parallel._blas_cap(1):
        with _parallel._blas_cap(before[0] + 5):
            assert blas_counts() == [1] * len(before)
        assert blas_counts() == [1] * len(before)
    assert blas_counts() == before


def test_inside_a_worker_nested_passes_run_serially():
    inner: list[int] = []

    def part(i):
        inner.append(_parallel.thread_count(np.inf))
        return i

    with config_context(n_threads=2):
        _parallel.in_parallel(part, [0, 1], np.inf)
    assert inner == [1, 1]


@pytest.fixture
def two_blas_threads():
    """The BLAS's thread counts, when it has two threads at least."""
    before = blas_counts()
    if not before or max(before) < 2:
        pytest.skip("needs a multi-threaded BLAS")
    return before


_SEVERAL_THREADS = """
import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from bayesrule._util import parallel as _parallel
from bayesrule._util.config import config_context

def counts():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

A = np.random.default_rng(0).normal(size=(600, 60))

def job(_):
    with config_context(n_threads=1), _parallel.blas_budget(float("inf")):
        return A.T @ A

before = counts()
after = []
for workers in (2, 4, 3, 2, 4):
    for _ in range(6):
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(job, range(2 * workers)))
        after.append(counts())
print(json.dumps({"before": before, "after": after}))
"""


def test_caps_from_several_threads_leave_the_blas_as_it_was(two_blas_threads):
    # OpenBLAS ignored a restore made from another short-lived thread than the
    # one that lowered the count, which then stayed at 1 for good; a fresh
    # process, as a count once set from the main thread hid it
    import json
    import os
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _SEVERAL_THREADS],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ),
        timeout=120,
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["after"] == [seen["before"]] * len(seen["after"])


def test_a_restore_from_a_fresh_thread_takes_effect(two_blas_threads):
    before = two_blas_threads
    barrier = threading.Barrier(2)
    holders = []

    def hold():
        cap = _parallel._blas_cap(1)
        cap.__enter__()
        holders.append(cap)
        barrier.wait()

    def release():
        barrier.wait()
        holders[0].__exit__(None, None, None)

    with config_context(n_threads=1):
        a = threading.Thread(target=hold)
        b = threading.Thread(target=release)
        a.start()
        b.start()
        a.join()
        b.join()
    assert blas_counts() == before


def _cap_in_child(queue) -> None:  # pragma: no cover - runs in a forked child
    from bayesrule._util import parallel

    with parallel.blas_cap(1):
        a = np.ones((64, 64)) @ np.ones((64, 64))
    queue.put(float(a[0, 0]))


def _run_forked_child() -> None:
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_cap_in_child, args=(queue,))
    child.start()
    child.join(30)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the forked child hung on its BLAS cap"
    assert child.exitcode == 0
    assert queue.get(timeout=5) == 64.0


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_can_cap_the_blas_after_the_parent_did():
    """The change of thread counts runs on a thread of ours, which a forked child lacks:
    the child gets a setter and a lock of its own, instead of waiting for ever."""
    from bayesrule._util import parallel

    counts = [int(lib.get_num_threads() or 1) for lib in parallel._blas_controllers()]
    with parallel.blas_cap(1):  # the parent starts its setter thread
        np.ones((64, 64)) @ np.ones((64, 64))
    _run_forked_child()  # no cap held at the fork
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:  # a cap held by a thread of the parent while it forks
        with parallel.blas_cap(1):
            held.set()
            release.wait(30)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(10)
    try:
        _run_forked_child()
    finally:
        release.set()
        t.join()
    assert [int(lib.get_num_threads() or 1) for lib in parallel._blas_controllers()] == counts


@pytest.mark.parametrize("threads", [2, 3])
def test_in_parallel_deals_many_items_to_a_few_threads_in_order(threads):
    """Many items: every one run once, on at most ``threads`` threads, results in order."""
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def item(i):
        with lock:
            seen.append((i, threading.get_ident()))
        return i * 3

    with config_context(n_threads=threads):
        got = _parallel.in_parallel(item, list(range(2000)), np.inf)
    assert got == [3 * i for i in range(2000)]
    assert sorted(i for i, _ in seen) == list(range(2000))
    assert 1 <= len({t for _, t in seen}) <= threads
    assert threading.get_ident() not in {t for _, t in seen}  # workers, as before


def test_in_parallel_raises_the_first_failing_item_in_order():
    """Items 37 and 1500 fail: the error is item 37's, whichever thread met which first;
    no item after a failure already known is started."""
    started: list[int] = []

    def item(i):
        started.append(i)
        if i in (37, 1500):
            raise ValueError(f"item {i}")
        return i

    for _ in range(5):
        started.clear()
        with config_context(n_threads=2), pytest.raises(ValueError, match="^item 37$"):
            _parallel.in_parallel(item, list(range(2000)), np.inf)
        assert set(range(38)) <= set(started)  # every item before the failure ran
        assert len(started) < 2000  # the rest were not started once it was known


def test_in_parallel_interrupted_starts_no_further_item():
    """A KeyboardInterrupt while the caller waits: the threads finish the items they hold
    and take no other (not the whole list, as futures submitted up front would)."""
    import os
    import signal
    import time

    started: list[int] = []
    sent = threading.Event()

    def item(i):
        started.append(i)
        sent.wait(30)  # the items held until the Ctrl-C is sent: it comes while they run
        time.sleep(0.001)
        return i

    def ctrl_c():
        os.kill(os.getpid(), signal.SIGINT)
        sent.set()

    # Python's own SIGINT handler, whatever the test runner's worker set
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.05, ctrl_c)
    timer.start()
    try:
        with config_context(n_threads=2), pytest.raises(KeyboardInterrupt):
            _parallel.in_parallel(item, list(range(1000)), np.inf)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
    assert 0 < len(started) < 100
