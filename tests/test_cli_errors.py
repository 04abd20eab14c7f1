"""Every failure of the ``bayesrule`` command is one line on stderr and exit code 2.

Driven as a user would drive it: typer's CliRunner for the many bad inputs,
and real processes of the installed console script for what only a process
shows (the exit status, a traceback printed by Python, a Ctrl-C).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pytest.importorskip("matplotlib")

from typer.testing import CliRunner  # noqa: E402

import bayesrule  # noqa: E402
from bayesrule.cli._app import app  # noqa: E402
from bayesrule.cli._errors import clean, describe  # noqa: E402

SCRIPT = Path(sys.executable).with_name("bayesrule")


def run(*args: object, env: dict[str, str] | None = None) -> object:
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def assert_one_error_line(result: object) -> str:
    """Exit code 2, exactly one stderr line ``bayesrule: error: ...``, no traceback anywhere."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("bayesrule: error: ")
    assert len(lines[0]) > len("bayesrule: error: ") + 3
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    return lines[0]


# ------------------------------------------------------------------ files
def _craft_metadata(src: Path, dst: Path, edit) -> None:
    """Copy a model file, edit its metadata and sign it again (as an attacker could)."""
    with zipfile.ZipFile(src) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    meta = json.loads(members["metadata.json"])
    edit(meta)
    body = {k: v for k, v in meta.items() if k != "checksum"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    meta["checksum"] = hashlib.sha256(canonical.encode()).hexdigest()
    members["metadata.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(dst, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    from sklearn.datasets import load_iris

    d = tmp_path_factory.mktemp("cli_errors")
    X, y = load_iris(return_X_y=True)
    iris = pd.DataFrame(X, columns=["sl", "sw", "pl", "pw"])
    iris["species"] = np.array(["setosa", "versicolor", "virginica"])[y]
    iris.to_csv(d / "iris.csv", index=False)

    rng = np.random.default_rng(0)
    cat = pd.DataFrame(
        {"a": rng.integers(0, 3, 60), "b": rng.integers(0, 4, 60), "y": np.repeat([0, 1, 2], 20)}
    )
    cat.to_csv(d / "cat.csv", index=False)
    for name, value in (("huge", 1e300), ("big", 1e9)):
        bad = cat.astype({"a": float})
        bad.loc[3, "a"] = value
        bad.to_csv(d / f"cat_{name}.csv", index=False)
    for name, value in (("nan", "nan"), ("inf", "inf"), ("neginf", "-inf")):
        text = (d / "iris.csv").read_text().splitlines()
        cells = text[5].split(",")
        cells[1] = value
        text[5] = ",".join(cells)
        (d / f"iris_{name}.csv").write_text("\n".join(text) + "\n")

    (d / "empty.csv").write_text("")
    (d / "header_only.csv").write_text("sl,sw,pl,pw,species\n")
    (d / "ragged.csv").write_text("sl,sw,species\n1,2,a\n1,2,3,4,b\n")
    (d / "text_cell.csv").write_text("sl,sw,species\n1,2,a\n1,oops,b\n3,4,a\n")
    (d / "latin1.csv").write_bytes("sl,sw,esp\xe8ce\n1,2,a\n3,4,b\n".encode("latin-1"))
    (d / "one_class.csv").write_text("sl,sw,species\n1,2,a\n3,4,a\n")
    (d / "a_directory").mkdir()
    (d / "folder.csv").mkdir()

    for model, data, target in (("lda", "iris", "species"), ("catnb", "cat", "y")):
        result = run(
            "fit", d / f"{data}.csv", "-t", target, "-m", model, "-o", d / f"{model}.bayesrule"
        )
        assert result.exit_code == 0, result.output

    model = (d / "lda.bayesrule").read_bytes()
    (d / "random.bayesrule").write_bytes(np.random.default_rng(1).bytes(2000))
    (d / "truncated.bayesrule").write_bytes(model[: len(model) // 2])
    (d / "empty_model.bayesrule").write_bytes(b"")
    with zipfile.ZipFile(d / "no_metadata.bayesrule", "w") as zf:
        zf.writestr("arrays/x.npy", b"\x93NUMPY")
    # a valid catnb model under the name of an LDA model
    shutil.copy(d / "catnb.bayesrule", d / "renamed_lda.bayesrule")

    def relabel(meta: dict) -> None:  # the LDA's statistics, labelled as CategoricalNB
        meta["estimator"] = "CategoricalNB"

    _craft_metadata(d / "lda.bayesrule", d / "relabelled.bayesrule", relabel)

    def lie_about_features(meta: dict) -> None:
        meta["n_features_in"] = 10**12

    _craft_metadata(d / "lda.bayesrule", d / "lying.bayesrule", lie_about_features)
    return {p.stem: p for p in d.iterdir()} | {"dir": d}


def _unwritable_dir(tmp_path: Path) -> Path:
    """A directory in which no file can be created (root ignores permissions: try /sys)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    for candidate in (locked, Path("/sys")):
        try:
            (candidate / ".probe").touch()
        except OSError:
            return candidate
        (candidate / ".probe").unlink()
    pytest.skip("no directory here refuses to be written")


# ------------------------------------------------------------------ many bad inputs
BAD_INPUTS = {
    # reading data
    "fit: missing file": ["fit", "{dir}/missing.csv", "-t", "species", "-o", "{out}.bayesrule"],
    "fit: a directory": ["fit", "{a_directory}", "-t", "species", "-o", "{out}.bayesrule"],
    "fit: a directory named .csv": ["fit", "{folder}", "-t", "y", "-o", "{out}.bayesrule"],
    "fit: empty CSV": ["fit", "{empty}", "-t", "species", "-o", "{out}.bayesrule"],
    "fit: header-only CSV": ["fit", "{header_only}", "-t", "species", "-o", "{out}.bayesrule"],
    "fit: non-numeric cell": ["fit", "{text_cell}", "-t", "species", "-o", "{out}.bayesrule"],
    "fit: ragged CSV": ["fit", "{ragged}", "-t", "species", "-o", "{out}.bayesrule"],
    "fit: not UTF-8": ["fit", "{latin1}", "-t", "sl", "-o", "{out}.bayesrule"],
    "fit: no such target": ["fit", "{iris}", "-t", "specie", "-o", "{out}.bayesrule"],
    "fit: one class": ["fit", "{one_class}", "-t", "species", "-o", "{out}.bayesrule"],
    "fit: NaN cell, qda": ["fit", "{iris_nan}", "-t", "species", "-m", "qda", "-o", "{out}.bm"],
    "fit: inf cell": ["fit", "{iris_inf}", "-t", "species", "-o", "{out}.bayesrule"],
    "fit: -inf cell, gnb": ["fit", "{iris_neginf}", "-t", "species", "-m", "gnb", "-o", "{out}.bm"],
    "fit: category 1e300": ["fit", "{cat_huge}", "-t", "y", "-m", "catnb", "-o", "{out}.bm"],
    "fit: bad --set": ["fit", "{iris}", "-t", "species", "--set", "solver=magic", "-o", "{out}.bm"],
    "fit: output is a directory": ["fit", "{iris}", "-t", "species", "-o", "{a_directory}"],
    "fit: output dir missing": ["fit", "{iris}", "-t", "species", "-o", "{dir}/no/m.bayesrule"],
    # crafted or damaged model files
    "predict: missing model": ["predict", "{dir}/nope.bayesrule", "{iris}", "-o", "{out}.csv"],
    "predict: model is a directory": ["predict", "{a_directory}", "{iris}", "-o", "{out}.csv"],
    "predict: random bytes": ["predict", "{random}", "{iris}", "-o", "{out}.csv"],
    "predict: empty model": ["predict", "{empty_model}", "{iris}", "-o", "{out}.csv"],
    "predict: zip without metadata": ["predict", "{no_metadata}", "{iris}", "-o", "{out}.csv"],
    "predict: truncated model": ["predict", "{truncated}", "{iris}", "-o", "{out}.csv"],
    "predict: CSV as model": ["predict", "{iris}", "{iris}", "-o", "{out}.csv"],
    "predict: renamed model": ["predict", "{renamed_lda}", "{iris}", "-o", "{out}.csv"],
    "predict: relabelled model": ["predict", "{relabelled}", "{iris}", "-o", "{out}.csv"],
    "predict: lying model": ["predict", "{lying}", "{iris}", "-o", "{out}.csv"],
    "predict: inf cell, --incomplete error": [
        "predict",
        "{lda}",
        "{iris_inf}",
        "--incomplete",
        "error",
        "-o",
        "{out}.csv",
    ],
    "predict: other columns": ["predict", "{catnb}", "{iris}", "-o", "{out}.csv"],
    "predict: output a directory": ["predict", "{lda}", "{iris}", "-o", "{folder}"],
    "predict: output suffix": ["predict", "{lda}", "{iris}", "-o", "{out}.json"],
    "evaluate: truncated model": ["evaluate", "{truncated}", "{iris}", "-t", "species"],
    "evaluate: relabelled model": ["evaluate", "{relabelled}", "{iris}", "-t", "species"],
    "evaluate: no such target": ["evaluate", "{lda}", "{iris}", "-t", "nope"],
    "evaluate: empty CSV": ["evaluate", "{lda}", "{empty}", "-t", "species"],
    "evaluate: other columns": ["evaluate", "{catnb}", "{iris}", "-t", "species", "-o", "{out}"],
    "evaluate: report is a file": ["evaluate", "{lda}", "{iris}", "-t", "species", "-o", "{iris}"],
    "sample: random bytes": ["sample", "{random}", "-o", "{out}.csv"],
    "sample: renamed model": [
        "sample",
        "{renamed_lda}",
        "-n",
        "3",
        "--png",
        "{out}.png",
        "-o",
        "{out}.csv",
    ],
    "sample: relabelled model": ["sample", "{relabelled}", "-o", "{out}.csv"],
    "sample: lying model": ["sample", "{lying}", "-o", "{out}.csv"],
    "sample: no such class": ["sample", "{lda}", "--class", "rose", "-o", "{out}.csv"],
    "sample: too many rows": ["sample", "{lda}", "-n", "100000000000000", "-o", "{out}.csv"],
    "sample: not an image": ["sample", "{lda}", "--png", "{out}.png", "-o", "{out}.csv"],
    "plot: no such model": [
        "plot",
        "{dir}/nope.bayesrule",
        "{iris}",
        "-t",
        "species",
        "-o",
        "{out}.png",
    ],
    "plot: truncated model": ["plot", "{truncated}", "{iris}", "-t", "species", "-o", "{out}.png"],
    "plot: ragged CSV": ["plot", "{lda}", "{ragged}", "-t", "species", "-o", "{out}.png"],
    "plot: unknown format": ["plot", "{lda}", "{iris}", "-t", "species", "-o", "{out}.xyz"],
    "plot: projection": [
        "plot",
        "{lda}",
        "{iris}",
        "-t",
        "species",
        "--projection",
        "x",
        "-o",
        "{out}.png",
    ],
    "demo: report is a file": ["demo", "-o", "{iris}"],
}


def _args(template: list[str], files: dict[str, Path], out: Path) -> list[str]:
    return [a.format(out=out, **files) for a in template]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_one_line_and_exit_code_2(files, tmp_path, case):
    out = tmp_path / "out"
    before = _snapshot(files["dir"])
    result = run(*_args(BAD_INPUTS[case], files, out))
    assert_one_error_line(result)
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file
    assert _snapshot(files["dir"]) == before  # no input touched either


@pytest.mark.parametrize(
    "case",
    [
        "fit: ragged CSV",
        "predict: relabelled model",
        "sample: random bytes",
        "plot: truncated model",
    ],
)
@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_lets_the_exception_through(files, tmp_path, case, where):
    args = _args(BAD_INPUTS[case], files, tmp_path / "out")
    args = ["--debug", *args] if where == "before" else [*args, "--debug"]
    result = run(*args)
    assert result.exit_code == 1 and not isinstance(result.exception, SystemExit)
    assert result.exc_info is not None and result.exc_info[2] is not None  # a traceback


def test_debug_from_the_environment(files, tmp_path):
    result = run(
        *_args(BAD_INPUTS["predict: random bytes"], files, tmp_path / "o"),
        env={"BAYESRULE_DEBUG": "1"},
    )
    assert result.exit_code == 1 and "not a bayesrule model file" in str(result.exception)


def test_unexpected_library_errors_are_one_line(files, tmp_path, monkeypatch):
    """A LinAlgError, a TypeError, a MemoryError from deep inside: still one line."""
    from numpy.linalg import LinAlgError

    for exc in (LinAlgError("Singular matrix"), TypeError("bad value\nsecond line"), MemoryError()):

        def boom(*args, _exc=exc, **kwargs):
            raise _exc

        monkeypatch.setattr(bayesrule.LinearDiscriminantAnalysis, "fit", boom)
        line = assert_one_error_line(
            run("fit", files["iris"], "-t", "species", "-o", tmp_path / "m.bm")
        )
        assert "second line" not in line
        assert not (tmp_path / "m.bm").exists()


def test_keyboard_interrupt_is_one_line_and_exit_code_130(files, tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bayesrule.LinearDiscriminantAnalysis, "predict", interrupted)
    result = run("predict", files["lda"], files["iris"], "-o", tmp_path / "p.csv")
    assert result.exit_code == 130
    assert result.stderr.splitlines() == ["bayesrule: error: interrupted."]
    assert list(tmp_path.iterdir()) == []


def test_a_swallowed_stop_signal_still_stops_with_its_status(files, tmp_path, monkeypatch):
    """A stop signal whose KeyboardInterrupt a library swallowed (the handler noted it and the
    command went on to the end) still ends the command with the signal's status, not 0."""
    from bayesrule.cli import _errors

    real = bayesrule.LinearDiscriminantAnalysis.predict

    def swallowed(self, *args, **kwargs):
        try:
            _errors._on_signal(15, None)  # SIGTERM's handler, as the process would run it
        except KeyboardInterrupt:
            pass  # what a library that catches it does
        return real(self, *args, **kwargs)

    monkeypatch.setattr(bayesrule.LinearDiscriminantAnalysis, "predict", swallowed)
    result = run("predict", files["lda"], files["iris"], "-o", tmp_path / "p.csv")
    assert result.exit_code == 128 + 15
    assert result.stderr.splitlines()[-1] == "bayesrule: error: stopped by SIGTERM."
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".p.csv.tmp-")] == []


def test_version_and_help_exit_0():
    assert run("--version").exit_code == 0 and run("--version").stdout.startswith("bayesrule ")
    assert run("fit", "--help").exit_code == 0


def test_usage_errors_keep_the_usage_and_exit_2(files):
    result = run("fit", files["iris"], "-t", "species", "--no-such-option")
    assert result.exit_code == 2 and "Usage:" in result.stderr and "Traceback" not in result.output
    for bad in (["-n", "0"], ["--seed", "-1"]):
        result = run("sample", files["lda"], "-o", "s.csv", *bad)
        assert result.exit_code == 2 and "Usage:" in result.stderr


# ------------------------------------------------------------------ unwritable output
@pytest.mark.parametrize(
    "command",
    [
        ["fit", "{iris}", "-t", "species", "-o", "{out}/m.bayesrule"],
        ["predict", "{lda}", "{iris}", "-o", "{out}/p.csv"],
        ["evaluate", "{lda}", "{iris}", "-t", "species", "-o", "{out}/report"],
        ["sample", "{lda}", "-o", "{out}/s.csv"],
        ["plot", "{lda}", "{iris}", "-t", "species", "-o", "{out}/p.png"],
    ],
    ids=lambda c: c[0],
)
def test_unwritable_output_is_one_line(files, tmp_path, command):
    locked = _unwritable_dir(tmp_path)
    before = sorted(p.name for p in locked.iterdir()) if locked != Path("/sys") else None
    line = assert_one_error_line(run(*_args(command, files, locked)))
    assert str(locked) in line
    if before is not None:
        assert sorted(p.name for p in locked.iterdir()) == before


def test_a_failure_after_rendering_writes_nothing(files, tmp_path, monkeypatch):
    """evaluate -o: the three report files are written together or not at all."""
    calls = []
    real_replace = os.replace

    def failing_replace(src, dst):
        calls.append(dst)
        raise OSError(28, "No space left on device", str(dst))

    monkeypatch.setattr(os, "replace", failing_replace)
    report = tmp_path / "new" / "report"
    line = assert_one_error_line(
        run("evaluate", files["lda"], files["iris"], "-t", "species", "-o", report)
    )
    monkeypatch.setattr(os, "replace", real_replace)
    assert "No space left on device" in line and calls
    assert list(tmp_path.iterdir()) == []  # not even the folders it made


def test_existing_output_survives_a_failed_run(files, tmp_path):
    out = tmp_path / "p.csv"
    out.write_text("precious\n")
    assert_one_error_line(run("predict", files["truncated"], files["iris"], "-o", out))
    assert out.read_text() == "precious\n"


# ------------------------------------------------------------------ messages
@pytest.mark.parametrize(
    "exc,expected",
    [
        (ValueError("got np.float64(1.5) and np.int64(3), np.True_"), "got 1.5 and 3, True"),
        (
            ValueError("expected <class 'numpy.ndarray'>, got <class 'str'>"),
            "expected ndarray, got str",
        ),
        (ValueError("first line\n  second line"), "first line"),
        (
            MemoryError("numpy._core._exceptions._ArrayMemoryError: Unable to allocate 44.7 GiB"),
            "out of memory (_ArrayMemoryError: Unable to allocate 44.7 GiB).",
        ),
        (
            MemoryError("sample: 10 rows need about 3 GiB; draw fewer rows at a time."),
            "out of memory (sample: 10 rows need about 3 GiB; draw fewer rows at a time).",
        ),
        (PermissionError(13, "Permission denied", "/x/out.csv"), "/x/out.csv: Permission denied."),
        (KeyError("species"), "missing key 'species'."),
        (RuntimeError(""), "RuntimeError raised without a message."),
        (ValueError("iris.csv: no column 'x'"), "iris.csv: no column 'x'"),
    ],
)
def test_messages_are_cleaned(exc, expected):
    assert describe(exc) == expected


def test_clean_keeps_one_bounded_line():
    line = clean("x" * 5000 + "\nmore")
    assert "\n" not in line and len(line) <= 500


# ------------------------------------------------------------------ real processes
needs_script = pytest.mark.skipif(
    not SCRIPT.exists(), reason="the bayesrule script is not installed"
)


def _process(
    *args: object, env: dict[str, str] | None = None, **kwargs
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
        **kwargs,
    )


def _assert_process_error(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bayesrule: error: "), lines
    assert "Traceback" not in proc.stdout + proc.stderr


@needs_script
@pytest.mark.parametrize(
    "case", ["predict: relabelled model", "fit: category 1e300", "sample: random bytes"]
)
def test_real_process_one_line(files, tmp_path, case):
    _assert_process_error(_process(*_args(BAD_INPUTS[case], files, tmp_path / "out")))
    assert list(tmp_path.iterdir()) == []


@needs_script
@pytest.mark.parametrize("how", ["--debug after the command", "BAYESRULE_DEBUG=1"])
def test_real_process_debug_shows_the_traceback(files, tmp_path, how):
    args = _args(BAD_INPUTS["fit: ragged CSV"], files, tmp_path / "out")
    if how.startswith("--debug"):
        proc = _process(*args, "--debug")
    else:
        proc = _process(*args, env={"BAYESRULE_DEBUG": "1"})
    assert proc.returncode == 1 and "Traceback (most recent call last)" in proc.stderr
    assert "ragged.csv: not a readable CSV file" in proc.stderr.splitlines()[-1]


@needs_script
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS caps memory on Linux")
def test_real_process_category_code_1e9(files, tmp_path):
    """A code of 1e9 asks for a table of 1e9 categories: refused, or out of memory — one line."""
    import resource

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    out = tmp_path / "m.bayesrule"
    proc = _process(
        "fit", files["cat_big"], "-t", "y", "-m", "catnb", "-o", out, preexec_fn=cap_memory
    )
    _assert_process_error(proc)
    assert not out.exists()


@needs_script
def test_real_process_usage_error_exits_2(files):
    proc = _process("predict", files["lda"])
    assert proc.returncode == 2 and "Usage:" in proc.stderr and "Traceback" not in proc.stderr
