"""The output side of the command: what a write does when the data, the target or the process fail.

Audit 2, sections A2 (a streamed Parquet output whose first block holds no
prediction), A3 (a kept column int in one part and float in the next), A4
(an output that is the input), B1 (SIGTERM/SIGHUP and abandoned
temporaries), B8 (a failing write names its file; an Excel sheet's row
limit) and C5 (a parent that is a file).
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


from _cli_runner import error_line, ok, run  # noqa: E402
from bayesrule.io import table_files  # noqa: E402
from bayesrule.io.formats import output_format  # noqa: E402

SCRIPT = Path(sys.executable).with_name("bayesrule")


def temporaries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".tmp" in p.name)


@pytest.fixture
def base(tmp_path, monkeypatch):
    """200 labelled rows as Parquet and CSV, and an LDA model fitted on them."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    df = pd.DataFrame(rng.normal(size=(200, 3)) + y[:, None], columns=list("abc"))
    df["label"] = np.array(list("xyz"))[y]
    df.to_parquet("base.parquet", index=False)
    df.to_csv("base.csv", index=False)
    ok(run("fit", "base.parquet", "-t", "label", "-o", "base.bayesrule"))
    return df


# ------------------------------------------------------------------ A2
@pytest.mark.parametrize("proba", [False, True])
def test_streamed_parquet_whose_first_block_has_no_prediction(base, proba):
    d = base.copy()
    d.loc[:49, "a"] = np.nan  # the first block of 50 rows: every row incomplete
    d.to_parquet("firstnan.parquet", index=False)
    extra = ["--proba"] if proba else []
    ok(run("predict", "base.bayesrule", "firstnan.parquet", "--block-rows", 50, *extra,
           "-o", "fn.parquet"))  # fmt: skip
    out = pd.read_parquet("fn.parquet")
    assert len(out) == 200
    assert out["prediction"].iloc[:50].isna().all()
    assert out["prediction"].iloc[50:].isin(list("xyz")).all()
    assert pa.types.is_string(pq.read_schema("fn.parquet").field("prediction").type) or (
        pa.types.is_large_string(pq.read_schema("fn.parquet").field("prediction").type)
    )
    if proba:
        assert out["proba_x"].iloc[:50].isna().all() and out["proba_x"].iloc[50:].notna().all()
    assert temporaries(Path()) == []


def test_declared_types_fix_the_schema_whatever_the_first_block_holds(tmp_path):
    blocks = [
        pa.table({"prediction": pa.nulls(2), "p": pa.nulls(2)}),
        pa.table({"prediction": ["x", "y"], "p": [0.5, 0.25]}),
    ]
    path = tmp_path / "t.parquet"
    types = {"prediction": pa.string(), "p": pa.float64()}
    table_files.write_frames(blocks, path, output_format(path), types=types)
    schema = pq.read_schema(path)
    assert schema.field("prediction").type == pa.string()
    assert schema.field("p").type == pa.float64()
    # the file was written once, with the declared schema (no rewrite needed)
    assert pq.read_table(path).column("prediction").to_pylist() == [None, None, "x", "y"]


# ------------------------------------------------------------------ A3
def test_streamed_keep_column_int_then_float_is_widened(base):
    os.mkdir("dir_int")
    head = base.iloc[:100].copy()
    head["b"] = head["b"].round().astype("int64")
    head.to_parquet("dir_int/part-0.parquet", index=False)
    base.iloc[100:].to_parquet("dir_int/part-1.parquet", index=False)
    ok(run("predict", "base.bayesrule", "dir_int", "--stream", "--keep", "b", "-o", "k.parquet"))
    ok(run("predict", "base.bayesrule", "dir_int", "--keep", "b", "-o", "m.parquet"))
    streamed, in_memory = pd.read_parquet("k.parquet"), pd.read_parquet("m.parquet")
    assert streamed["b"].dtype == np.float64
    np.testing.assert_array_equal(streamed["b"].to_numpy(), in_memory["b"].to_numpy())
    assert (streamed["prediction"] == in_memory["prediction"]).all()
    assert temporaries(Path()) == []


def test_a_column_numbers_then_text_is_refused_naming_column_types_and_row(tmp_path):
    # a Parquet folder is refused by the reader, naming the file; the writer's own check
    # covers every other source of blocks (CSV parts, Python iterables)
    blocks = [pa.table({"id": [1, 2]}), pa.table({"id": ["r3", "r4"]})]
    path = tmp_path / "t.parquet"
    with pytest.raises(table_files.ColumnTypeConflict) as info:
        table_files.write_frames(blocks, path, output_format(path))
    message = str(info.value)
    assert "'id'" in message and "text" in message and "int64" in message, message
    assert "row 3" in message, message


def test_widening_rewrites_the_rows_already_written(tmp_path):
    blocks = [pa.table({"b": [1, 2]}), pa.table({"b": [None, None]}), pa.table({"b": [0.5]})]
    path = tmp_path / "t.parquet"
    assert table_files.write_frames(blocks, path, output_format(path)) == 5
    table = pq.read_table(path)
    assert table.schema.field("b").type == pa.float64()
    assert table.column("b").to_pylist() == [1.0, 2.0, None, None, 0.5]


# ------------------------------------------------------------------ A4
def test_fit_refuses_to_write_the_model_over_its_training_data(base):
    before = Path("base.parquet").read_bytes()
    line = error_line(run("fit", "base.parquet", "-t", "label", "-o", "base.parquet"))
    assert "-o base.parquet" in line and "training data" in line, line
    line = error_line(run("fit", "base.parquet", "-t", "label", "-o", "./sub/../base.parquet"))
    assert "training data (base.parquet)" in line, line
    assert Path("base.parquet").read_bytes() == before


@pytest.mark.parametrize("given", ["base.csv", "./base.csv", "link.csv", "hard.csv"])
def test_predict_refuses_an_output_that_is_the_input(base, given):
    os.symlink("base.csv", "link.csv")
    os.link("base.csv", "hard.csv")
    os.mkdir("sub")
    before = Path("base.csv").read_bytes()
    line = error_line(run("predict", "base.bayesrule", given, "-o", "sub/../base.csv"))
    assert "-o sub/../base.csv" in line and "input data" in line, line
    line = error_line(run("predict", "base.bayesrule", "base.csv", "-o", given))
    assert "input data" in line and "another output name" in line, line
    assert Path("base.csv").read_bytes() == before
    assert Path("link.csv").is_symlink()


def test_predict_refuses_the_model_file_and_a_file_of_a_folder(base):
    os.mkdir("parts")
    base.iloc[:100].to_parquet("parts/part-0.parquet", index=False)
    base.iloc[100:].to_parquet("parts/part-1.parquet", index=False)
    before = Path("parts/part-1.parquet").read_bytes()
    line = error_line(run("predict", "base.bayesrule", "parts", "-o", "parts/part-1.parquet"))
    assert "a file of parts" in line, line
    assert Path("parts/part-1.parquet").read_bytes() == before
    line = error_line(run("predict", "base.bayesrule", "base.csv", "-o", "base.bayesrule"))
    assert "model file" in line, line
    ok(run("predict", "base.bayesrule", "base.csv", "-o", "/dev/null"))  # a device is no input


# ------------------------------------------------------------------ B1
def test_a_table_write_removes_abandoned_temporaries_but_not_a_live_one(base):
    abandoned = Path(".p.csv.tmp-abandoned1")
    abandoned.write_text("left by a killed write")
    live = Path(".p.csv.tmp-livewrite1")
    live.write_text("another process is writing this")
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as staged() holds a temporary it writes
        ok(run("predict", "base.bayesrule", "base.csv", "-o", "p.csv"))
        assert not abandoned.exists()
        assert live.exists()
    finally:
        os.close(fd)
    assert len(pd.read_csv("p.csv")) == 200


@pytest.mark.skipif(not SCRIPT.exists(), reason="the bayesrule script is not installed")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_during_a_write_removes_the_temporary(base, tmp_path, sig):
    rng = np.random.default_rng(1)
    n = 2_000_000
    big = pd.DataFrame(rng.normal(size=(n, 3)), columns=list("abc"))
    big.to_parquet("big.parquet", index=False, row_group_size=100_000)
    Path("out.csv").write_text("old content\n")
    proc = subprocess.Popen(
        [
            str(SCRIPT),
            "predict",
            "base.bayesrule",
            "big.parquet",
            "--stream",
            "--proba",
            "-o",
            "out.csv",
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # the signal's default action in the command, whatever this process inherited: under
        # `nohup` SIGHUP is ignored, the command (rightly) leaves it so and finishes with 0
        preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            tmp = [p for p in tmp_path.iterdir() if p.name.startswith(".out.csv.tmp-")]
            if tmp and tmp[0].stat().st_size > 0:  # blocks are being written
                break
            time.sleep(0.01)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (128 + sig, -sig), (proc.returncode, err)
    if proc.returncode == 128 + sig:
        assert err.strip().splitlines()[-1] == f"bayesrule: error: stopped by {sig.name}.", err
    assert temporaries(tmp_path) == []
    assert Path("out.csv").read_text() == "old content\n"


# ------------------------------------------------------------------ B8
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("extra", [[], ["--stream"]])
def test_a_full_device_is_named(base, extra):
    line = error_line(run("predict", "base.bayesrule", "base.parquet", *extra, "-o", "/dev/full"))
    assert line.startswith("bayesrule: error: /dev/full: writing the output failed"), line
    assert "No space left on device" in line, line


def test_too_many_rows_for_excel_refused_before_predicting(base, monkeypatch):
    pytest.importorskip("openpyxl")
    monkeypatch.setattr(table_files, "EXCEL_MAX_ROWS", 150)
    import bayesrule.cli._predict as predict_command

    def never(*args, **kwargs):
        raise AssertionError("predicted although the output cannot take the rows")

    monkeypatch.setattr(predict_command, "gapped", never)
    line = error_line(run("predict", "base.bayesrule", "base.parquet", "-o", "big.xlsx"))
    assert "big.xlsx: 200 rows do not fit in an Excel sheet (at most 149 below" in line, line
    assert ".csv or .parquet" in line, line
    assert not Path("big.xlsx").exists() and temporaries(Path()) == []


def test_too_many_rows_for_excel_streamed_refused_at_the_block(base, monkeypatch):
    pytest.importorskip("openpyxl")
    monkeypatch.setattr(table_files, "EXCEL_MAX_ROWS", 121)
    Path("big.xlsx").write_bytes(b"old")
    line = error_line(
        run("predict", "base.bayesrule", "base.parquet", "--block-rows", 50, "-o", "big.xlsx")
    )
    assert "big.xlsx: block 3 (rows 101 to 150) would pass the 120 rows" in line, line
    assert Path("big.xlsx").read_bytes() == b"old" and temporaries(Path()) == []


# ------------------------------------------------------------------ C5
def test_a_parent_that_is_a_file_is_called_a_file(base):
    line = error_line(run("predict", "base.bayesrule", "base.parquet", "-o", "base.csv/x.csv"))
    assert "base.csv is a file, not a directory" in line, line
    line = error_line(run("predict", "base.bayesrule", "base.parquet", "-o", "nodir/x.csv"))
    assert "the directory nodir does not exist" in line, line
