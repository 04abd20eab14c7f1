"""``bayesrule fit/predict/evaluate`` on data read block by block, or on a Dask cluster.

Each test compares with the in-memory command on the same file: the streamed
or distributed model must be the same model (to 1e-10), the predictions and
the report the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pytest.importorskip("pyarrow")

from _cli_runner import error_line, ok, run  # noqa: E402
from bayesrule.cli import _scale  # noqa: E402
from bayesrule.io import load  # noqa: E402


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


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    """Penguin-like rows (strings, a year, a written-out index) as CSV and Parquet."""
    rng = np.random.default_rng(3)
    n = 1500
    y = rng.choice(["Adelie", "Chinstrap", "Gentoo"], n)
    df = pd.DataFrame(
        {
            "bill_length_mm": rng.normal(40, 5, n) + (y == "Gentoo") * 6,
            "bill_depth_mm": rng.normal(17, 2, n) - (y == "Gentoo") * 2,
            "body_mass_g": rng.normal(4000, 400, n) + (y == "Chinstrap") * 300,
            "island": np.where(y == "Gentoo", "Biscoe", rng.choice(["Dream", "Torgersen"], n)),
            "year": rng.choice([2007, 2008, 2009], n),
            "species": y,
        }
    )
    d = tmp_path_factory.mktemp("scale")
    paths = {"csv": d / "penguins.csv", "parquet": d / "penguins.parquet"}
    df.to_csv(paths["csv"])  # with its index: an unnamed first column
    df.to_parquet(paths["parquet"], row_group_size=400)
    paths["gz"] = d / "penguins.csv.gz"
    df.to_csv(paths["gz"], index=False)
    return paths


CASES = [
    ("lda", ["--drop", "island,year"]),
    ("gnb", ["--features", "bill_*,body_mass_g"]),
    ("mixed", []),
    ("mixed", ["--kind", "year=gaussian", "--drop", "bill_depth_mm"]),
]


@pytest.mark.parametrize("fmt", ["csv", "parquet", "gz"])
@pytest.mark.parametrize(("model", "options"), CASES)
def test_streamed_fit_is_the_in_memory_model(tables, tmp_path, fmt, model, options):
    data = tables[fmt]
    base = ["fit", data, "-t", "species", "-m", model, *options]
    ok(run(*base, "-o", tmp_path / "memory.brm"))
    ok(run(*base, "--block-rows", 256, "-o", tmp_path / "streamed.brm"))
    same_model(tmp_path / "memory.brm", tmp_path / "streamed.brm")
    memory = load(tmp_path / "memory.brm")
    assert "Unnamed: 0" not in list(memory.feature_names_in_)  # the index, left out in both
    from bayesrule.io import read_metadata

    meta = read_metadata(tmp_path / "streamed.brm")["extra"]
    assert meta["n_rows"] == 1500 and meta["target"] == "species"


def _memory_and_streamed(tables, tmp_path, fmt: str, suffix: str) -> tuple[object, object]:
    model = tmp_path / "m.brm"
    ok(run("fit", tables["csv"], "-t", "species", "-m", "mixed", "-o", model))
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    args = ["predict", model, tables[fmt], "--proba", "-k", "species"]
    ok(run(*args, "--no-stream", "-o", a))
    ok(run(*args, "--block-rows", 300, "-o", b))
    if suffix == ".parquet":
        return pd.read_parquet(a), pd.read_parquet(b)
    return a.read_text(), b.read_text()


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_streamed_predictions_equal_the_in_memory_ones(tables, tmp_path, fmt, suffix):
    a, b = _memory_and_streamed(tables, tmp_path, fmt, suffix)
    if suffix == ".parquet":
        names = [
            "species",
            "prediction",
            *(f"proba_{c}" for c in ("Adelie", "Chinstrap", "Gentoo")),
        ]
        assert list(b.columns) == names
        pd.testing.assert_frame_equal(a, b, rtol=1e-12)
        assert len(b) == 1500
    else:
        assert a == b


def test_streamed_predictions_to_standard_output(tables, tmp_path):
    model = tmp_path / "m.brm"
    ok(
        run(
            "fit", tables["csv"], "-t", "species", "-m", "gnb", "--drop", "island,year", "-o", model
        )
    )
    args = ["predict", model, tables["gz"], "--proba", "-k", "species,year", "-o", "-"]
    memory = ok(run(*args, "--no-stream")).stdout
    streamed = ok(run(*args, "--block-rows", 128)).stdout
    assert streamed == memory and len(streamed.splitlines()) == 1501


def test_streamed_evaluate_reports_the_same_figures(tables, tmp_path):
    model = tmp_path / "m.brm"
    ok(run("fit", tables["parquet"], "-t", "species", "-m", "gnb", "--drop", "island,year",
           "-o", model))  # fmt: skip
    ok(run("evaluate", model, tables["csv"], "--no-stream", "-o", tmp_path / "a"))
    ok(run("evaluate", model, tables["csv"], "--block-rows", 200, "-o", tmp_path / "b"))
    a = json.loads((tmp_path / "a" / "metrics.json").read_text())
    b = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert a["confusion_matrix"] == b["confusion_matrix"]
    assert a["per_class"] == b["per_class"] and a["n_samples"] == b["n_samples"] == 1500
    assert b["log_loss"] == pytest.approx(a["log_loss"], rel=1e-12)
    assert b["accuracy"] == a["accuracy"]


def test_streamed_evaluate_counts_labels_the_model_never_saw(tables, tmp_path):
    df = pd.read_parquet(tables["parquet"])
    df.loc[df.index[-5:], "species"] = "Emperor"  # only in the last block
    df.loc[df.index[:3], "species"] = None  # missing labels, left out
    data = tmp_path / "new.parquet"
    df.to_parquet(data, row_group_size=200)
    model = tmp_path / "m.brm"
    ok(run("fit", tables["parquet"], "-t", "species", "-m", "mixed", "-o", model))
    ok(run("evaluate", model, data, "--no-stream", "-o", tmp_path / "a"))
    streamed = ok(run("evaluate", model, data, "--block-rows", 100, "-o", tmp_path / "b"))
    assert "Emperor" in streamed.stderr and "left out 3 rows" in streamed.stderr
    a = json.loads((tmp_path / "a" / "metrics.json").read_text())
    b = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert b["labels_not_in_model"] == ["Emperor"] and b["n_samples"] == 1497
    assert a["confusion_matrix"] == b["confusion_matrix"]
    assert b["log_loss"] == pytest.approx(a["log_loss"], rel=1e-12)


def test_files_over_the_threshold_stream_by_default(tables, tmp_path, monkeypatch):
    import bayesrule.backends.stream as streaming

    calls = []
    real = streaming.fit_stream
    monkeypatch.setattr(streaming, "fit_stream", lambda *a, **k: calls.append(k) or real(*a, **k))
    args = ["fit", tables["parquet"], "-t", "species", "-m", "mixed"]
    ok(run(*args, "-o", tmp_path / "a.brm"))
    assert calls == []  # a small file is read at once
    monkeypatch.setattr(_scale, "STREAM_BYTES", 1000)
    ok(run(*args, "-o", tmp_path / "b.brm"))
    assert len(calls) == 1 and calls[0]["progress"] is False  # not a terminal
    ok(run(*args, "--no-stream", "-o", tmp_path / "c.brm"))
    assert len(calls) == 1
    same_model(tmp_path / "a.brm", tmp_path / "b.brm")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--stream", "-"], "standard input cannot be streamed"),
        (["--no-stream", "--block-rows", "10", "{csv}"], "drop --no-stream"),
        (["--stream", "{semi}"], "separated by commas, this one by ';'"),
        (["--stream", "-m", "rdacv", "{csv}"], "rdacv cannot be fitted block by block"),
        (["--stream", "--features", "nope*", "{csv}"], "--features nope"),
        (["--stream", "-m", "lda", "{csv}"], "'island'.*not numeric"),
        (["--scheduler", "local", "--stream", "{csv}"], "give one or the other"),
    ],
)
def test_stream_refusals_are_one_line(tables, tmp_path, args, match):
    semi = tmp_path / "semi.csv"
    pd.read_parquet(tables["parquet"]).to_csv(semi, sep=";", index=False)
    args = [a.format(csv=tables["csv"], semi=semi) for a in args]
    line = error_line(run("fit", "-t", "species", "-o", tmp_path / "m.brm", *args))
    assert pytest.importorskip("re").search(match, line), line
    assert not (tmp_path / "m.brm").exists()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize(("model", "options"), [CASES[0], CASES[2]])
def test_streamed_fit_leaves_out_rows_without_label(tables, tmp_path, fmt, model, options):
    df = pd.read_parquet(tables["parquet"])
    df.loc[[0, 700, 1499], "species"] = None
    data = tmp_path / f"gap.{fmt}"
    df.to_csv(data, index=False) if fmt == "csv" else df.to_parquet(data, row_group_size=300)
    base = ["fit", data, "-t", "species", "-m", model, *options]
    memory = ok(run(*base, "--no-stream", "-o", tmp_path / "a.brm"))
    streamed = ok(run(*base, "--block-rows", 256, "-o", tmp_path / "b.brm"))
    assert "left out 3 rows" in memory.stderr and "left out 3 rows" in streamed.stderr
    same_model(tmp_path / "a.brm", tmp_path / "b.brm")
    line = error_line(run(*base, "--stream", "--missing-target", "error", "-o", tmp_path / "c.brm"))
    assert "species" in line and "row 1" in line
    assert not (tmp_path / "c.brm").exists()


def test_unreachable_scheduler_is_a_one_line_error(tables, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(_scale, "CONNECT_TIMEOUT", 0.5)
    line = error_line(
        run(
            "fit",
            tables["csv"],
            "-t",
            "species",
            "--scheduler",
            "tcp://127.0.0.1:9",
            "-o",
            tmp_path / "m.brm",
        )  # fmt: skip
    )
    assert "tcp://127.0.0.1:9" in line
    assert not (tmp_path / "m.brm").exists()


@pytest.mark.parametrize("missing", ["dask.dataframe", "distributed"])
def test_scheduler_without_dask_says_what_to_install(tables, tmp_path, monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)  # import raises ImportError
    line = error_line(
        run(
            "fit", tables["csv"], "-t", "species", "--scheduler", "local", "-o", tmp_path / "m.brm"
        )  # fmt: skip
    )
    assert "pip install 'bayesrule[dask]'" in line


def test_scheduler_local_end_to_end(tables, tmp_path):
    """A LocalCluster in a real process: the model and the predictions as in memory."""
    pytest.importorskip("distributed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    memory, cluster = tmp_path / "memory.brm", tmp_path / "cluster.brm"
    df = pd.read_csv(tables["csv"])
    df.loc[[5, 900], "species"] = None  # left out on the cluster as in memory
    data = tmp_path / "gap.csv"
    df.to_csv(data, index=False)
    args = ["fit", str(data), "-t", "species", "-m", "mixed", "--drop", "Unnamed: 0"]
    ok(run(*args, "-o", memory))
    ok(run("predict", memory, tables["parquet"], "--proba", "-o", tmp_path / "a.csv"))
    script = (
        "import json, sys\n"
        "from bayesrule.cli._app import app\n"
        "from typer.testing import CliRunner\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    r = CliRunner().invoke(app, args)\n"
        "    assert r.exit_code == 0, (r.output, r.exception)\n"
    )
    fit_args = [*args, "--scheduler", "local", "-o", str(cluster)]
    predict_args = ["predict", str(memory), str(tables["parquet"]), "--proba", "--scheduler",
                    "local", "-o", str(tmp_path / "b.csv")]  # fmt: skip
    # one process, one cluster start per command, as a user's shell would run them
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps([fit_args, predict_args])],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    same_model(memory, cluster)
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


def test_info_shows_mixed_columns(tables, tmp_path):
    model = tmp_path / "m.brm"
    ok(run("fit", tables["csv"], "-t", "species", "-m", "mixed", "-o", model))
    text = ok(run("info", model)).stdout
    est = load(model)
    for line in est.describe().splitlines():
        assert line.strip() in text
    assert "year" in text and "3 distinct integers" in text
    summary = json.loads(ok(run("info", model, "--json")).stdout)
    assert summary["columns"] == json.loads(json.dumps(est.column_summary()))
    assert [c["kind"] for c in summary["columns"]] == list(est.kinds_)
    lda = tmp_path / "lda.brm"
    ok(run("fit", tables["csv"], "-t", "species", "--drop", "island,year", "-o", lda))
    assert json.loads(ok(run("info", lda, "--json")).stdout)["columns"] is None


def test_readme_scale_out_section_runs(tmp_path, monkeypatch):
    """The README's "Scale out" snippets, with a cluster in this process for the scheduler."""
    import re

    distributed = pytest.importorskip("distributed")
    import bayesrule

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Scale out", 1)[1].split("\n## ", 1)[0]
    python = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    shell = re.findall(r"```\n(bayesrule .*?)```", section, flags=re.S)[0].strip().splitlines()
    assert len(python) == 2 and len(shell) == 3
    monkeypatch.chdir(tmp_path)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address
        ns: dict = {}
        for code in python:
            exec(compile(code.replace("tcp://scheduler:8786", address), "README.md", "exec"), ns)
        df = ns["df"]
        X, y = df[["a", "b", "c", "d"]], df["label"].to_numpy()
        memory = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
        assert ns["lda"].stats_.allclose(memory.stats_, rtol=1e-10)
        gnb = bayesrule.GaussianNB().fit(X, y)
        assert ns["gnb"].stats_.allclose(gnb.stats_, rtol=1e-10)
        np.testing.assert_array_equal(ns["labels"], gnb.predict(X))
        written = pd.read_parquet("predictions.parquet")
        np.testing.assert_array_equal(written["prediction"], memory.predict(X))
        for line in shell:
            args = line.replace("tcp://scheduler:8786", address).split()[1:]
            ok(run(*args))
    same_model_args = (tmp_path / "lda.bayesrule", tmp_path / "gnb.bayesrule")
    assert load(same_model_args[0]).stats_.allclose(memory.stats_, rtol=1e-10)
    assert load(same_model_args[1]).stats_.allclose(gnb.stats_, rtol=1e-10)
    np.testing.assert_allclose(
        pd.read_parquet("predictions.parquet")[[f"proba_{c}" for c in range(3)]],
        memory.predict_proba(X),
        rtol=1e-10,
    )


def test_progress_bar_on_a_terminal_only_without_quiet(tables, tmp_path, monkeypatch):
    import bayesrule.backends.stream as streaming
    import bayesrule.cli._feedback as feedback

    class Terminal:
        def isatty(self) -> bool:
            return True

    seen = []
    real = streaming.iter_predict
    monkeypatch.setattr(
        streaming, "iter_predict", lambda *a, **k: seen.append(k["progress"]) or real(*a, **k)
    )
    import bayesrule.cli._streamed as cli_streamed

    # CliRunner swaps sys.stderr for its own buffer: ask the real test with a terminal stream
    monkeypatch.setattr(cli_streamed, "interactive", lambda: feedback.interactive(Terminal()))
    model = tmp_path / "m.brm"
    ok(run("fit", tables["parquet"], "-t", "species", "-m", "mixed", "-o", model))
    ok(run("predict", model, tables["parquet"], "--stream", "-o", tmp_path / "a.csv"))
    ok(run("-q", "predict", model, tables["parquet"], "--stream", "-o", tmp_path / "b.csv"))
    assert seen == [True, False]
