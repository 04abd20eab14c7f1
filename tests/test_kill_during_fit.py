"""Killing ``bayesrule fit`` at any moment leaves an existing model file intact.

The command writes its model to a temporary file beside the target and
renames it over the target only once it is complete, so a process killed
(SIGKILL: no handler, no cleanup) while reading, fitting or writing leaves
the old file byte for byte, loadable, and no stray file that a later
``load`` could mistake for the model.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import bayesrule

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")


def _command(data, out):
    return [
        sys.executable,
        "-m",
        "bayesrule.cli",
        "-q",
        "fit",
        str(data),
        "--target",
        "-1",
        "--model",
        "qda",
        "--set",
        "reg_param=0.1",
        "-o",
        str(out),
    ]


def _env():
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_a_killed_fit_leaves_the_existing_model_file_intact(tmp_path):
    rng = np.random.default_rng(0)
    n, p = 60_000, 60
    y = rng.integers(0, 5, n)
    X = rng.normal(size=(n, p)) + y[:, None] * 0.1
    data = tmp_path / "big.npy"
    np.save(data, np.column_stack([X, y]))
    out = tmp_path / "model.brm"
    # the existing model: fitted on other data, so a new one would differ
    small = tmp_path / "small.npy"
    np.save(small, np.column_stack([X[:500] * 2.0, y[:500]]))
    done = subprocess.run(_command(small, out), env=_env(), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    before = out.read_bytes()

    # one complete run tells how long a fit takes here; kills are spread over it
    t0 = time.perf_counter()
    full = tmp_path / "full.brm"
    done = subprocess.run(_command(data, full), env=_env(), timeout=300)
    assert done.returncode == 0
    duration = time.perf_counter() - t0
    killed = 0
    for fraction in (0.4, 0.8, 0.95):
        proc = subprocess.Popen(_command(data, out), env=_env(), stderr=subprocess.DEVNULL)
        time.sleep(duration * fraction)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        now = out.read_bytes()
        if proc.returncode == 0:  # finished before the kill: the new model, complete
            assert bayesrule.load(out).n_features_in_ == p
            out.write_bytes(before)
            continue
        assert proc.returncode == -signal.SIGKILL
        killed += 1
        if now != before:
            # killed after the rename (while exiting): then the file is the new model,
            # whole; never anything in between
            assert bayesrule.load(out).stats_.allclose(bayesrule.load(full).stats_)
            out.write_bytes(before)
        else:
            assert bayesrule.load(out).n_features_in_ == p
        # whatever temporary the killed process left is not the model
        assert sorted(f.name for f in tmp_path.iterdir() if not f.name.startswith(".")) == [
            "big.npy",
            "full.brm",
            "model.brm",
            "small.npy",
        ]
    assert killed >= 2  # the kills did land while the command ran
