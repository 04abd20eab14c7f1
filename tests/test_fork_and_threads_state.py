"""Process-wide state of the threads' helpers: made once under races, reset in a forked child."""

from __future__ import annotations

import os
import threading

import pytest

from bayesrule._util import products
from bayesrule.backends.stream import passes


def test_the_fused_path_helper_pool_is_made_once_by_threads_racing(monkeypatch):
    monkeypatch.setattr(products, "_helper", None)
    barrier = threading.Barrier(8)
    got = []

    def first_use():
        barrier.wait()
        got.append(products._helper_pool())

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(pool is got[0] for pool in got)
    got[0].shutdown()


def test_a_child_forked_during_a_pass_gets_a_free_lock_and_the_huge_page_setting_back(
    monkeypatch,
):
    calls = []
    monkeypatch.setattr(passes, "_madvise_toggle", lambda: calls.append)
    monkeypatch.setattr(passes, "_huge_lock", threading.Lock())
    monkeypatch.setattr(passes, "_huge_state", {"depth": 2, "before": True})
    passes._huge_lock.acquire()  # held by a thread the child does not have
    held = passes._huge_lock
    passes._huge_after_fork()
    assert passes._huge_lock is not held and passes._huge_lock.acquire(timeout=1)
    passes._huge_lock.release()
    assert passes._huge_state == {"depth": 0, "before": None}
    assert calls == [True]  # the setting found before the pass, put back
    held.release()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_real_fork_while_another_thread_holds_the_pass_lock_does_not_deadlock_the_child():
    held = threading.Event()
    done = threading.Event()

    def hold():
        with passes._huge_lock:
            held.set()
            done.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    try:
        pid = os.fork()
        if pid == 0:  # the child: the lock the parent's thread holds must not be held here
            ok = passes._huge_lock.acquire(timeout=2)
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    finally:
        done.set()
        t.join()
