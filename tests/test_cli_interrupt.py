"""Ctrl-C in a real ``bayesrule`` process: exit 130 and one line, sent at a known moment.

Replaces ``test_real_process_ctrl_c_is_one_line_and_exit_130`` of
``test_cli_errors.py``, which sent SIGINT 0.3 s after the command opened its
input. Here the signal goes once the command has read what was written to
its input pipe (the pipe is drained): it is then reading, waiting for more.
"""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("bayesrule")

pytestmark = [
    pytest.mark.skipif(not SCRIPT.exists(), reason="the bayesrule script is not installed"),
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a named pipe"),
]


def _unread(fd: int) -> int:
    """Bytes written to the pipe that its reader has not taken yet (FIONREAD)."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def _wait_for(condition, what: str, seconds: float = 120.0):
    """Poll ``condition`` until it gives a true value; fail naming ``what`` if it never does."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail(f"{what} within {seconds} s")


def test_ctrl_c_while_reading_is_one_line_and_exit_130(tmp_path):
    fifo = tmp_path / "data.csv"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [str(SCRIPT), "fit", str(fifo), "-t", "y", "-o", str(tmp_path / "m.bayesrule")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell's background job starts with SIGINT ignored; give the command Python's handler
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    fd = None
    try:

        def opened():  # succeeds once the command has the pipe open for reading
            assert proc.poll() is None, proc.communicate()
            try:
                return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                return None

        fd = _wait_for(opened, "the command did not open its input")
        os.write(fd, b"a,b,y\n1.0,2.0,0\n")
        # the event: the command has taken the lines, so it is in its read loop
        _wait_for(lambda: _unread(fd) == 0 or proc.poll() is not None, "nothing was read")
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if fd is not None:
            os.close(fd)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.splitlines() == ["bayesrule: error: interrupted."]
    assert not (tmp_path / "m.bayesrule").exists()
