"""Killing ``bayesrule fit`` at any moment leaves an existing model file intact.

The command writes its model to a temporary file beside the target and
renames it over the target only once it is complete, so a process killed
(SIGKILL: no handler, no cleanup) while reading, fitting or writing leaves
the old file byte for byte, loadable, and no stray file that a later
``load`` could mistake for the model.

Each kill lands at a named step, not after a guessed time: the command runs
in a child that stops at the step (after reading the data, before writing,
with half a file written, before and after the rename), says so on stdout,
and waits there to be killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import bayesrule

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

#: the child: ``python -c _STOP_AT STEP TARGET cli-args...``
_STOP_AT = r"""
import os, sys, time, zipfile
import numpy as np
import bayesrule.io.model_files as model_files

step, target = sys.argv[1], sys.argv[2]
del sys.argv[1:3]

def hold():
    print(f"at {step}", flush=True)
    while True:
        time.sleep(60)

real_load, real_write_zip = np.load, model_files._atomic_write_zip
real_writestr, real_replace = zipfile.ZipFile.writestr, os.replace

def load(*args, **kwargs):
    out = real_load(*args, **kwargs)
    if step == "read":
        hold()
    return out

def write_zip(*args, **kwargs):
    if step == "fitted":
        hold()
    return real_write_zip(*args, **kwargs)

def writestr(self, *args, **kwargs):
    out = real_writestr(self, *args, **kwargs)
    if step == "writing":
        self.fp.flush()
        hold()
    return out

def replace(src, dst, *args, **kwargs):
    ours = os.path.abspath(dst) == os.path.abspath(target)
    if ours and step == "renaming":
        hold()
    out = real_replace(src, dst, *args, **kwargs)
    if ours and step == "renamed":
        hold()
    return out

np.load, model_files._atomic_write_zip = load, write_zip
zipfile.ZipFile.writestr, os.replace = writestr, replace

from bayesrule.cli import main
sys.argv[0] = "bayesrule"
main()
"""

STEPS = ["read", "fitted", "writing", "renaming", "renamed"]


def _args(data, out):
    return ["-q", "fit", str(data), "--target", "-1", "--model", "qda"] + [
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


def _visible(folder):
    return sorted(f.name for f in folder.iterdir() if not f.name.startswith("."))


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """The data, an existing model fitted on other data, and the model a whole run writes."""
    tmp = tmp_path_factory.mktemp("kill")
    rng = np.random.default_rng(0)
    n, p = 3000, 12
    y = rng.integers(0, 5, n)
    X = rng.normal(size=(n, p)) + y[:, None] * 0.1
    np.save(tmp / "data.npy", np.column_stack([X, y]))
    np.save(tmp / "other.npy", np.column_stack([X[:500] * 2.0, y[:500]]))
    cli = [sys.executable, "-m", "bayesrule.cli"]
    for data, out in (("other.npy", "existing.brm"), ("data.npy", "full.brm")):
        done = subprocess.run(
            cli + _args(tmp / data, tmp / out), env=_env(), capture_output=True, timeout=120
        )
        assert done.returncode == 0, done.stderr.decode()
    return tmp


@pytest.mark.parametrize("step", STEPS)
def test_a_fit_killed_at_each_step_leaves_the_model_file_old_or_new_never_broken(
    setup, tmp_path, step
):
    before = (setup / "existing.brm").read_bytes()
    out = tmp_path / "model.brm"
    out.write_bytes(before)
    proc = subprocess.Popen(
        [sys.executable, "-c", _STOP_AT, step, str(out), *_args(setup / "data.npy", out)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # blocks until the child is at the step (or ends)
        if line.strip() != f"at {step}":
            proc.wait(timeout=60)
            pytest.fail(f"the command never reached {step!r}: {line!r} {proc.stderr.read()}")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    if step == "renamed":
        # killed after the rename, while exiting: the file is the new model, whole
        assert out.read_bytes() != before
        new = bayesrule.load(out)
        assert new.stats_.allclose(bayesrule.load(setup / "full.brm").stats_)
    else:
        assert out.read_bytes() == before
        assert bayesrule.load(out).n_features_in_ == 12
    if step in ("writing", "renaming"):
        # the temporary the killed process left is hidden beside the model
        assert any(f.name.startswith(f".{out.name}.") for f in tmp_path.iterdir())
    # nothing a later ``load`` of a visible name could mistake for the model
    assert _visible(tmp_path) == ["model.brm"]
