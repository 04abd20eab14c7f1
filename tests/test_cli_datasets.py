"""``bayesrule fit/predict/evaluate`` on a table in several files.

A directory of Parquet files (flat or hive-style), a quoted glob of Parquet
or CSV files, and several paths are one table: its rows in the order of the
sorted files. Each test compares with the command on one file holding the
same rows in that order: in memory, streamed and with Dask, the model must be
that of the one file (to 1e-10) and the predictions the same, row for row.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pytest.importorskip("pyarrow")

from typer.testing import CliRunner  # noqa: E402

from bayesrule.cli import _app, _cluster, _scale  # noqa: E402
from bayesrule.io import load, read_metadata  # noqa: E402


def run(*args: object) -> object:
    return CliRunner().invoke(_app.app, [str(a) for a in args])


def ok(result: object) -> object:
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def error_line(result: object) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bayesrule: error: "), lines
    return lines[0]


def same_model(a: Path, b: Path) -> None:
    """Every fitted attribute of two model files agrees to 1e-10 (statistics included)."""
    A, B = load(a), load(b)
    assert type(A) is type(B)
    keys = sorted(k for k in vars(A) if k.endswith("_") and not k.startswith("_"))
    assert keys == sorted(k for k in vars(B) if k.endswith("_") and not k.startswith("_"))
    for k in keys:
        x, y = getattr(A, k), getattr(B, k)
        if k == "stats_":
            assert x.allclose(y, rtol=1e-10), k
        elif isinstance(x, np.ndarray) and x.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12, err_msg=k)
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=k)
        elif isinstance(x, float):
            assert x == pytest.approx(y, rel=1e-10), k
        else:
            assert repr(x) == repr(y), k


def _frame(n: int, seed: int) -> object:
    rng = np.random.default_rng(seed)
    y = rng.choice(["Adelie", "Chinstrap", "Gentoo"], n)
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "bill_length_mm": rng.normal(40, 5, n) + (y == "Gentoo") * 6,
            "bill_depth_mm": rng.normal(17, 2, n) - (y == "Gentoo") * 2,
            "body_mass_g": rng.normal(4000, 400, n) + (y == "Chinstrap") * 300,
            "island": np.where(y == "Gentoo", "Biscoe", rng.choice(["Dream", "Torgersen"], n)),
            "species": y,
        }
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    """The same 400 rows as one file and as several, in the order of the sorted file names."""
    d = tmp_path_factory.mktemp("datasets")
    df = _frame(400, 5)
    cuts = [0, 90, 180, 300, 400]
    parts = [df.iloc[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]

    # flat, as Dask names its parts: sorted by name, part.10 comes before part.2
    flat = d / "flat"
    flat.mkdir()
    for name, part in zip(["part.0", "part.1", "part.10", "part.2"], parts, strict=True):
        part.to_parquet(flat / f"{name}.parquet", index=False, row_group_size=50)
    (flat / "_SUCCESS").write_bytes(b"")
    (flat / "_metadata").write_bytes(b"not read")
    (flat / ".part.0.parquet.crc").write_bytes(b"not read")

    # hive-style, with a writer's scratch folder that must be skipped
    hive = d / "hive"
    for i, part in enumerate(parts):
        sub = hive / f"year={2021 + i // 2}"
        sub.mkdir(parents=True, exist_ok=True)
        part.to_parquet(sub / f"part-{i % 2}.parquet", index=False)
    (hive / "_temporary" / "0").mkdir(parents=True)
    df.iloc[:5].to_parquet(hive / "_temporary" / "0" / "part-9.parquet", index=False)

    csv = d / "csv"
    csv.mkdir()
    for i, part in enumerate(parts):
        part.to_csv(csv / f"part-{i}.csv", index=False)

    df.to_parquet(d / "whole.parquet", index=False)
    return {
        "dir": d,
        "flat": flat,
        "hive": hive,
        "csv": csv,
        "whole": d / "whole.parquet",
    }


def _sources(data: dict[str, Path]) -> dict[str, list[object]]:
    csv = sorted(data["csv"].glob("*.csv"))
    return {
        "directory": [data["flat"]],
        "hive directory": [data["hive"]],
        "parquet glob": [data["flat"] / "part.*.parquet"],
        "hive glob": [data["hive"] / "year=*" / "*.parquet"],
        "glob of folders": [data["hive"] / "year=*"],
        "csv glob": [data["csv"] / "part-*.csv"],
        "several paths": csv,  # a glob the shell expanded
    }


SOURCES = [
    "directory",
    "hive directory",
    "parquet glob",
    "hive glob",
    "glob of folders",
    "csv glob",
]


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory) -> dict[str, Path]:
    """Models fitted on the one file, in memory."""
    d = tmp_path_factory.mktemp("reference")
    models = {}
    for model, options in MODELS:
        models[model] = d / f"{model}.brm"
        ok(run("fit", data["whole"], "-t", "species", "-m", model, *options, "-o", models[model]))
    return models


MODELS = [("lda", ["--drop", "island,id"]), ("mixed", ["--drop", "id"])]


@pytest.mark.parametrize("mode", [[], ["--stream"], ["--block-rows", "64"]])
@pytest.mark.parametrize("source", [*SOURCES, "several paths"])
@pytest.mark.parametrize(("model", "options"), MODELS)
def test_a_table_in_several_files_fits_the_model_of_one_file(
    data, reference, tmp_path, source, mode, model, options
):
    out = tmp_path / "m.brm"
    paths = _sources(data)[source]
    ok(run("fit", *paths, "-t", "species", "-m", model, *options, *mode, "-o", out))
    same_model(reference[model], out)
    meta = read_metadata(out)["extra"]
    assert meta["n_rows"] == 400 and meta["target"] == "species"


def _no_cluster(monkeypatch) -> None:
    """--scheduler without starting one: the Dask graph runs on Dask's local scheduler."""
    monkeypatch.setattr(_cluster, "connect", lambda address: contextlib.ExitStack())


@pytest.mark.parametrize("source", SOURCES)
def test_dask_reads_the_files_as_in_memory(data, reference, tmp_path, monkeypatch, source):
    pytest.importorskip("dask.dataframe")
    _no_cluster(monkeypatch)
    paths = _sources(data)[source]
    out = tmp_path / "m.brm"
    ok(run("fit", *paths, "-t", "species", "-m", "lda", "--drop", "island,id",
           "--scheduler", "local", "-o", out))  # fmt: skip
    same_model(reference["lda"], out)
    args = ["predict", reference["mixed"], *paths, "--proba", "-k", "id,species"]
    ok(run(*args, "--scheduler", "local", "-o", tmp_path / "dask.csv"))
    ok(run("predict", reference["mixed"], data["whole"], "--proba", "-k", "id,species",
           "-o", tmp_path / "one.csv"))  # fmt: skip
    assert (tmp_path / "dask.csv").read_text() == (tmp_path / "one.csv").read_text()


@pytest.mark.parametrize("source", [*SOURCES, "several paths"])
def test_predictions_come_in_the_order_of_the_files(data, reference, tmp_path, source):
    paths = _sources(data)[source]
    model = reference["mixed"]
    one = tmp_path / "one.parquet"
    ok(run("predict", model, data["whole"], "--proba", "-k", "id,species", "-o", one))
    expected = pd.read_parquet(one)
    assert expected["id"].tolist() == list(range(400))
    for i, mode in enumerate([["--no-stream"], ["--stream"], ["--block-rows", "50"]]):
        out = tmp_path / f"{i}.parquet"
        done = ok(run("predict", model, *paths, "--proba", "-k", "id,species", *mode, "-o", out))
        assert "400 predictions" in done.stderr
        pd.testing.assert_frame_equal(pd.read_parquet(out), expected, rtol=1e-12)


def test_several_paths_are_read_in_the_order_given(data, reference, tmp_path):
    """A glob the shell expanded, here in reverse, and with the writer's _SUCCESS among them."""
    (tmp_path / "_SUCCESS").write_bytes(b"")
    paths = [*sorted(data["csv"].glob("*.csv"), reverse=True), tmp_path / "_SUCCESS"]
    expected = [i for part in reversed([(0, 90), (90, 180), (180, 300), (300, 400)])
                for i in range(*part)]  # fmt: skip
    for i, mode in enumerate([["--no-stream"], ["--block-rows", "40"]]):
        out = tmp_path / f"{i}.csv"
        ok(run("predict", reference["lda"], *paths, "-k", "id", *mode, "-o", out))
        assert pd.read_csv(out)["id"].tolist() == expected


def test_evaluate_reports_the_same_figures(data, reference, tmp_path):
    for name, args in {
        "one": [data["whole"]],
        "memory": [data["flat"], "--no-stream"],
        "streamed": [data["flat"] / "*.parquet", "--block-rows", "70"],
    }.items():
        ok(run("evaluate", reference["mixed"], *args, "-o", tmp_path / name))
    one, memory, streamed = (
        json.loads((tmp_path / name / "metrics.json").read_text())
        for name in ("one", "memory", "streamed")
    )
    for other in (memory, streamed):
        assert other["confusion_matrix"] == one["confusion_matrix"]
        assert other["n_samples"] == 400
        assert other["log_loss"] == pytest.approx(one["log_loss"], rel=1e-12)


def test_plot_takes_a_directory(data, reference, tmp_path):
    pytest.importorskip("matplotlib")
    ok(run("plot", reference["lda"], data["flat"], "-o", tmp_path / "p.png"))
    assert (tmp_path / "p.png").stat().st_size > 0


def test_the_total_size_decides_whether_to_stream(data, tmp_path, monkeypatch):
    import bayesrule.backends.stream as streaming

    calls = []
    real = streaming.fit_stream
    monkeypatch.setattr(
        streaming, "fit_stream", lambda *a, **k: calls.append(a[1]) or real(*a, **k)
    )
    sizes = [p.stat().st_size for p in data["flat"].glob("*.parquet")]
    args = ["fit", data["flat"], "-t", "species", "--drop", "island,id"]
    monkeypatch.setattr(_scale, "STREAM_BYTES", sum(sizes) + 1)
    ok(run(*args, "-o", tmp_path / "a.brm"))
    assert calls == []
    monkeypatch.setattr(_scale, "STREAM_BYTES", max(sizes) + 1)  # each file under, all over
    ok(run(*args, "-o", tmp_path / "b.brm"))
    assert len(calls) == 1 and [Path(p).name for p in calls[0]] == [
        "part.0.parquet",
        "part.1.parquet",
        "part.10.parquet",
        "part.2.parquet",
    ]


# ------------------------------------------------------------------ refusals
def _refusal_files(d: Path) -> dict[str, Path]:
    df = _frame(30, 1)
    (d / "empty").mkdir()
    (d / "csv_only").mkdir()
    df.to_csv(d / "csv_only" / "a.csv", index=False)
    (d / "other").mkdir()
    (d / "other" / "notes.txt.json").write_text("{}")
    (d / "mixed").mkdir()
    df.to_csv(d / "mixed" / "a.csv", index=False)
    df.to_parquet(d / "mixed" / "b.parquet", index=False)
    (d / "lacking").mkdir()
    df.to_parquet(d / "lacking" / "a.parquet", index=False)
    df.drop(columns="body_mass_g").to_parquet(d / "lacking" / "b.parquet", index=False)
    (d / "zipped").mkdir()
    for name in ("a", "b"):
        df.to_csv(d / "zipped" / f"{name}.csv.zip", index=False)
    (d / "retyped").mkdir()
    df.to_parquet(d / "retyped" / "a.parquet", index=False)
    df.astype({"bill_depth_mm": str}).to_parquet(d / "retyped" / "b.parquet", index=False)
    return {p.name: p for p in d.iterdir()}


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["{empty}"], r"empty: the directory is empty; expected Parquet files"),
        (["{csv_only}"], r"csv_only: the directory holds CSV files .* quoted glob"),
        (["{other}"], r"other: the directory holds no Parquet files \(found notes"),
        (["{empty}/*.parquet"], r"empty/\*\.parquet: no file matches this pattern; expected"),
        (["{mixed}/*"], r"mixed/\*: mixes CSV files \(.*a\.csv\) and Parquet files"),
        (["{mixed}/a.csv", "{mixed}/b.parquet"], r"mixes CSV files .* give files of one format"),
        (["{csv_only}/a.csv", "-"], r"standard input cannot be one of several inputs"),
        (["{csv_only}/a.csv", "{empty}/nope.csv"], r"nope\.csv: no such file or directory"),
        (["{lacking}"], r"b\.parquet: has no column 'body_mass_g', which the first file"),
        (["{lacking}", "--stream"], r"b\.parquet: has no column 'body_mass_g'"),
        (["{retyped}"], r"b\.parquet: column 'bill_depth_mm' holds text, but the first"),
        (["{retyped}", "--stream"], r"b\.parquet: column 'bill_depth_mm' holds string values"),
        (["{zipped}/*.zip", "--stream"], r"a\.csv\.zip: a \.zip archive cannot be streamed"),
    ],
)
def test_refusals_name_the_path_and_what_was_expected(tmp_path, args, match):
    files = _refusal_files(tmp_path)
    args = [a.format(**files) for a in args]
    line = error_line(run("fit", *args, "-t", "species", "--drop", "island,id", "-o",
                          tmp_path / "m.brm"))  # fmt: skip
    assert re.search(match, line), line
    assert not (tmp_path / "m.brm").exists()


def test_predict_refuses_a_glob_matching_nothing(data, reference, tmp_path):
    line = error_line(
        run("predict", reference["lda"], data["dir"] / "*.pq", "-o", tmp_path / "p.csv")
    )
    assert "*.pq: no file matches this pattern" in line and "quote the pattern" in line
    assert not (tmp_path / "p.csv").exists()
