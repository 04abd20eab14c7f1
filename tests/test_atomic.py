"""The one atomic writer (bayesrule._util.atomic): all or nothing, permissions, locks."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bayesrule._util import atomic
from bayesrule._util.atomic import remove_abandoned, staged, temporary_pattern, umask

posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes, FIFOs and locks")


class Boom(Exception):
    pass


def _listing(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


# ----------------------------------------------------------------- all or nothing
@given(
    st.lists(st.booleans(), min_size=1, max_size=4),  # which destinations exist already
    st.integers(min_value=0, max_value=4),  # how many are written before the failure
)
def test_an_error_leaves_every_destination_as_it_was_and_no_temporary(exists, written):
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        paths = [folder / f"out{i}.csv" for i in range(len(exists))]
        for i, (path, there) in enumerate(zip(paths, exists, strict=True)):
            if there:
                path.write_bytes(f"old {i}".encode())
        before = _listing(folder)
        with pytest.raises(Boom), staged(paths) as files:
            assert set(files) == set(paths)
            for path in paths[:written]:
                files[path].write_bytes(b"new, half written")
            raise Boom
        assert _listing(folder) == before


@given(st.lists(st.booleans(), min_size=1, max_size=4))
def test_a_success_replaces_every_destination_and_leaves_no_temporary(exists):
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        paths = [folder / f"out{i}.csv" for i in range(len(exists))]
        for path, there in zip(paths, exists, strict=True):
            if there:
                path.write_bytes(b"old")
        with staged(paths) as files:
            for path in paths:
                assert files[path] != path and files[path].parent == folder
                assert not path.exists() or path.read_bytes() == b"old"  # not yet replaced
                files[path].write_bytes(f"new {path.name}".encode())
        assert _listing(folder) == {p.name: f"new {p.name}".encode() for p in paths}


def test_a_single_path_may_be_given_as_a_string(tmp_path):
    target = tmp_path / "t.txt"
    with staged(str(target)) as files:  # type: ignore[arg-type]
        (path,) = files
        files[path].write_text("x")
    assert target.read_text() == "x"


def test_an_interrupt_is_an_error_like_any_other(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), staged(target, lock=True, durable=True) as files:
        files[target].write_text("new")
        raise KeyboardInterrupt
    assert _listing(tmp_path) == {"t.txt": b"old"}


def test_the_temporary_is_named_after_its_destination(tmp_path):
    target = tmp_path / "model.bayesrule"
    with staged(target) as files:
        name = files[target].name
        files[target].write_bytes(b"x")
    assert name.startswith(".model.bayesrule.tmp-")
    assert temporary_pattern(target).fullmatch(name)


# ----------------------------------------------------------------- permissions
@posix_only
def test_a_new_file_gets_the_permissions_of_an_ordinary_new_file(tmp_path):
    target = tmp_path / "new.csv"
    with staged(target) as files:
        files[target].write_text("x")
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask()


@posix_only
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o604, 0o755], ids=oct)
def test_a_replaced_file_keeps_its_permissions(tmp_path, mode):
    target = tmp_path / "old.csv"
    target.write_text("old")
    os.chmod(target, mode)
    with staged(target, durable=True) as files:
        files[target].write_text("new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == mode


@posix_only
def test_umask_reads_the_mask_without_changing_it():
    before = os.umask(0o027)
    try:
        assert umask() == 0o027
        assert umask() == 0o027
    finally:
        os.umask(before)


# ----------------------------------------------------------------- what is not a regular file
@posix_only
def test_dev_null_is_written_directly(tmp_path):
    null = Path(os.devnull)
    other = tmp_path / "t.txt"
    with staged([null, other]) as files:
        assert files[null] == null
        with open(files[null], "w") as fh:
            fh.write("gone")
        files[other].write_text("kept")
    assert null.is_char_device()
    assert _listing(tmp_path) == {"t.txt": b"kept"}


@posix_only
def test_a_named_pipe_is_written_directly(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    with staged(fifo) as files:
        assert files[fifo] == fifo
        files[fifo].write_bytes(b"through the pipe")
    reader.join(timeout=30)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_directory_is_refused_before_anything_is_written(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    other = tmp_path / "t.txt"
    entered = False
    with pytest.raises(IsADirectoryError, match=r"results: is a directory"):
        with staged([other, folder]):
            entered = True
    assert not entered
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]  # no temporary left


def test_a_missing_directory_is_an_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError), staged(tmp_path / "nowhere" / "t.txt"):
        pass
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------- abandoned temporaries
def test_temporary_pattern_matches_this_and_earlier_versions_names_only(tmp_path):
    pattern = temporary_pattern(tmp_path / "m.bayesrule")
    for name in (".m.bayesrule.tmp-ab12cd_9", ".m.bayesrule.tmp-XyZ", ".m.bayesrule.x1y2z3w4.tmp"):
        assert pattern.fullmatch(name), name
    for name in (
        "m.bayesrule",
        ".m.bayesrule.backup",
        ".other.bayesrule.tmp-ab12cd_9",
        "m.bayesrule.tmp-ab12cd_9",
        ".m.bayesrule.tmp-",
        ".m.bayesrule.x1y2z3.tmp",
        ".mXbayesrule.tmp-ab12cd_9",  # the dot is literal
    ):
        assert not pattern.fullmatch(name), name


def test_remove_abandoned_removes_only_matching_regular_files(tmp_path):
    target = tmp_path / "m.bayesrule"
    stale = [".m.bayesrule.tmp-ab12cd_9", ".m.bayesrule.x1y2z3w4.tmp"]
    kept = [".m.bayesrule.backup", ".other.bayesrule.tmp-ab12cd_9", "m.bayesrule"]
    for name in stale + kept:
        (tmp_path / name).write_bytes(b"half")
    (tmp_path / ".m.bayesrule.tmp-adir").mkdir()  # not a regular file: left alone
    remove_abandoned(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, ".m.bayesrule.tmp-adir"])


@posix_only
def test_remove_abandoned_leaves_a_symlink_and_its_target(tmp_path):
    victim = tmp_path / "precious"
    victim.write_text("keep")
    link = tmp_path / ".m.bayesrule.tmp-link1234"
    link.symlink_to(victim)
    remove_abandoned(tmp_path / "m.bayesrule")
    assert link.is_symlink() and victim.read_text() == "keep"


def test_remove_abandoned_of_a_missing_directory_does_nothing(tmp_path):
    remove_abandoned(tmp_path / "nowhere" / "m.bayesrule")


@posix_only
def test_a_temporary_locked_by_another_thread_survives(tmp_path):
    import fcntl

    target = tmp_path / "m.bayesrule"
    live = tmp_path / ".m.bayesrule.tmp-inflight"
    dead = tmp_path / ".m.bayesrule.tmp-abandoned"
    dead.write_bytes(b"half")
    locked, release = threading.Event(), threading.Event()

    def writer() -> None:
        with open(live, "wb") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            locked.set()
            release.wait(30)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert locked.wait(30)
        remove_abandoned(target)
        assert live.exists() and not dead.exists()
    finally:
        release.set()
        thread.join(30)
    remove_abandoned(target)  # its lock is gone: now it is abandoned
    assert not live.exists()


@posix_only
def test_a_temporary_locked_by_another_process_survives_until_it_dies(tmp_path):
    target = tmp_path / "m.bayesrule"
    live = tmp_path / ".m.bayesrule.tmp-otherproc"
    code = (
        "import fcntl, sys, time\n"
        "fh = open(sys.argv[1], 'wb')\n"
        "fcntl.flock(fh.fileno(), fcntl.LOCK_EX)\n"
        "print('locked', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(live)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        remove_abandoned(target)
        assert live.exists()
    finally:
        proc.kill()
        proc.wait(30)
    remove_abandoned(target)  # a killed process's lock is gone with it
    assert not live.exists()


@posix_only
def test_a_locked_write_in_progress_is_not_taken_for_abandoned(tmp_path):
    target = tmp_path / "m.bayesrule"
    with staged(target, lock=True) as files:
        files[target].write_bytes(b"in progress")
        remove_abandoned(target)  # as another save to the same path would
        assert files[target].exists()
    assert target.read_bytes() == b"in progress"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.bayesrule"]


@posix_only
def test_an_unlocked_write_in_progress_can_be_removed(tmp_path):
    # the contrast that shows what lock=True (the default) is for
    target = tmp_path / "m.bayesrule"
    with pytest.raises(FileNotFoundError), staged(target, lock=False) as files:
        files[target].write_bytes(b"in progress")
        remove_abandoned(target)
        assert not files[target].exists()
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------- durable
def test_durable_syncs_each_file_and_the_directory(tmp_path, monkeypatch):
    synced: list[str] = []
    real = os.fsync

    def spy(fd: int) -> None:
        st_ = os.fstat(fd)
        synced.append("dir" if stat.S_ISDIR(st_.st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    b.write_text("old")
    with staged([a, b], durable=True, lock=True) as files:
        files[a].write_text("A")
        files[b].write_text("B")
        assert synced == []  # nothing is synced before the block ends
    assert a.read_text() == "A" and b.read_text() == "B"
    assert synced.count("file") == 2
    if os.name != "nt":
        assert synced.count("dir") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]


def test_without_durable_nothing_is_synced(tmp_path, monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(fd))
    with staged(tmp_path / "a.csv") as files:
        files[tmp_path / "a.csv"].write_text("A")
    assert calls == []


def test_a_rename_that_fails_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "t.txt"
    target.write_text("old")

    def refuse(src, dst):
        raise PermissionError(f"cannot rename onto {dst}")

    monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(PermissionError, match="cannot rename"), staged(target) as files:
        files[target].write_text("new")
    assert _listing(tmp_path) == {"t.txt": b"old"}


def test_writes_in_parallel_threads_each_land_whole(tmp_path):
    target = tmp_path / "t.txt"
    contents = [bytes([65 + i]) * 200_000 for i in range(6)]

    def write(data: bytes) -> None:
        with staged(target, lock=True) as files:
            files[target].write_bytes(data)
            time.sleep(0.01)
            remove_abandoned(target)  # never takes another thread's write for abandoned

    threads = [threading.Thread(target=write, args=(c,)) for c in contents]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert target.read_bytes() in contents
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]
