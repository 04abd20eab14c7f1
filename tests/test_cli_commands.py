"""The commands on real files: closed pipes, flags, sample's counts, log-loss, incomplete rows.

Driven as a user drives them: real processes of the installed ``bayesrule``
script where only a process shows the behaviour (a pipe closed by ``head``,
the exit status, a traceback), typer's CliRunner for the many cases of a class.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pytest.importorskip("matplotlib")
pytest.importorskip("pyarrow")

from typer.testing import CliRunner  # noqa: E402

import bayesrule  # noqa: E402
from bayesrule.cli._app import app  # noqa: E402
from bayesrule.cli._errors import models_taking_nan  # noqa: E402
from bayesrule.estimators.registry import available, get_estimator  # noqa: E402

SCRIPT = Path(sys.executable).with_name("bayesrule")
SHORT = list(available())
TAKES_NAN = {short for short, cls in available().items() if getattr(cls, "_allow_nan", False)}


def run(*args: object) -> object:
    return CliRunner().invoke(app, [str(a) for a in args])


def ok(result: object) -> object:
    assert result.exit_code == 0, (result.output, result.exception)
    assert "Traceback" not in result.output
    return result


def one_error(result: object) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bayesrule: error: "), lines
    return lines[0]


def pipe_to_head(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """``bayesrule ARGS | head -1`` with real processes: (bayesrule's status, head's line, stderr)."""
    producer = subprocess.Popen(
        [str(SCRIPT), *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    head = subprocess.run(["head", "-1"], stdin=producer.stdout, capture_output=True, timeout=120)
    producer.stdout.close()  # head has exited: the pipe's only reader is gone
    err = producer.stderr.read().decode()
    producer.stderr.close()
    return producer.wait(timeout=120), head.stdout.decode(), err


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> dict[str, Path]:
    """Three classes of small counts (every model takes them), an id and a label column."""
    d = tmp_path_factory.mktemp("table")
    rng = np.random.default_rng(7)
    n = 6000
    y = rng.integers(0, 3, n)
    X = rng.poisson(lam=2.0 + 2.0 * np.eye(3)[y] @ np.eye(3, 4), size=(n, 4)).astype(float)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df.insert(0, "id", np.arange(n) + 1000)
    df["label"] = np.array(["ant", "bee", "cat"])[y]
    df.to_csv(d / "big.csv", index=False)
    df.iloc[:300].to_csv(d / "train.csv", index=False)
    test = df.iloc[300:330].reset_index(drop=True)
    test.loc[3, "b"] = np.nan  # a missing cell: naive Bayes marginalises it, the others cannot
    test.loc[7, "c"] = np.inf  # an infinite cell: no model takes it
    test.loc[11, ["a", "d"]] = np.nan
    test.to_csv(d / "test.csv", index=False)
    test.to_parquet(d / "test.parquet")
    return {"dir": d, "big": d / "big.csv", "train": d / "train.csv", "test": d / "test.csv"}


@pytest.fixture(scope="module")
def models(table, tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    out = {}
    for short in SHORT:
        path = d / f"{short}.bayesrule"
        ok(run("fit", table["train"], "-t", "label", "--drop", "id", "-m", short, "-o", path))
        out[short] = path
    return out


# ------------------------------------------------------------------ closed pipes (item 10)
@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "{lda}", "{big}"],
        ["predict", "{lda}", "{big}", "--proba"],
        ["predict", "{lda}", "{big}", "--block-rows", "500"],
        ["info", "{lda}"],
        ["predict", "--help"],
    ],
    ids=["evaluate", "predict", "predict streamed", "info", "help"],
)
def test_a_closed_pipe_ends_quietly_with_status_0(table, models, args):
    args = [a.format(lda=models["lda"], big=table["big"]) for a in args]
    status, line, err = pipe_to_head(args, table["dir"])
    assert status == 0, err
    assert line  # head got the first line
    assert "Traceback" not in err and "error" not in err.lower(), err


def test_a_closed_pipe_of_samples_ends_quietly(models, tmp_path):
    status, line, err = pipe_to_head(
        ["sample", str(models["gnb"]), "--per-class", "20000", "-o", "-"], tmp_path
    )
    if status == 2 and "cannot write" in err:
        pytest.skip("sample -o - (standard output) is not written by this version")
    assert status == 0 and line.startswith("a,b,c,d,class"), err
    assert "Traceback" not in err


# ------------------------------------------------------------------ flags (item 15)
@pytest.mark.parametrize("word", ["true", "false", "yes", "1"])
def test_a_value_after_a_flag_is_refused_naming_the_flag(table, models, word):
    result = run("predict", models["lda"], "--proba", word, table["test"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--proba is a flag and takes no value" in result.output


def test_arguments_after_double_dash_are_never_flags(table, models):
    result = ok(run("predict", models["lda"], "--proba", "--", table["train"]))
    assert result.stdout.startswith("prediction,proba_ant")


@pytest.mark.parametrize("command", ["fit", "predict", "evaluate", "info", "sample", "plot", ""])
def test_help_shows_flags_as_flags(command):
    result = ok(run(*([command] if command else []), "--help"))
    assert "<bool>" not in result.output
    assert "--help" in result.output


# ------------------------------------------------------------------ sample counts (item 15)
def test_sample_total_draws_n_rows_in_all_with_the_priors(models, tmp_path):
    out = tmp_path / "s.csv"
    ok(run("sample", models["qda"], "--total", 3000, "--seed", 1, "-o", out))
    s = pd.read_csv(out)
    assert len(s) == 3000
    model = bayesrule.io.load(models["qda"])
    shares = s["class"].value_counts(normalize=True).reindex(model.classes_).to_numpy()
    np.testing.assert_allclose(shares, model.priors_, atol=0.04)
    # the same draw as Python's sample(n), grouped by class
    X, y = model.sample(3000, random_state=1)
    assert sorted(y.tolist()) == s["class"].tolist()


@pytest.mark.parametrize("n", [1, 4])
def test_sample_per_class_and_its_old_spelling(models, tmp_path, n):
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    ok(run("sample", models["gnb"], "--per-class", n, "-o", new))
    result = ok(run("sample", models["gnb"], "-n", n, "-o", old))
    assert "spelled --per-class" in result.stderr
    a, b = pd.read_csv(new), pd.read_csv(old)
    assert a["class"].value_counts().to_dict() == dict.fromkeys(["ant", "bee", "cat"], n)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    "option", [("--total", 10**20), ("--per-class", 10**12), ("--total", 2**63)]
)
def test_sample_counts_beyond_memory_are_refused_naming_the_option(models, tmp_path, option):
    out = tmp_path / "s.csv"
    message = one_error(run("sample", models["gnb"], *option, "-o", out))
    assert f"{option[0]} {option[1]}" in message and "GB of memory" in message
    assert not out.exists()


def test_sample_total_of_one_class(models, tmp_path):
    out = tmp_path / "s.csv"
    ok(run("sample", models["gnb"], "--total", 7, "--class", "bee", "-o", out))
    assert pd.read_csv(out)["class"].tolist() == ["bee"] * 7


def test_sample_total_of_images_draws_a_grid_row_per_class(tmp_path):
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 50)
    X = rng.normal(size=(150, 64)) + 2.0 * y[:, None]
    df = pd.DataFrame(X, columns=[f"p{j}" for j in range(64)]).assign(digit=y)
    df.to_csv(tmp_path / "img.csv", index=False)
    model = tmp_path / "m.bayesrule"
    ok(run("fit", tmp_path / "img.csv", "-t", "digit", "-m", "gnb", "-o", model))
    out = tmp_path / "s.csv"
    ok(run("sample", model, "--total", 9, "--seed", 4, "-o", out))
    assert len(pd.read_csv(out)) == 9
    import matplotlib.image as mpimg

    img = mpimg.imread(out.with_suffix(".png"))
    assert min(img.shape[:2]) >= 150 and img[..., :3].std() > 0.05


def test_sample_refuses_two_counts(models, tmp_path):
    line = one_error(
        run("sample", models["gnb"], "--per-class", 2, "--total", 5, "-o", tmp_path / "s.csv")
    )
    assert "--per-class and --total" in line


# ------------------------------------------------------------------ log-loss (item 6)
@pytest.mark.parametrize("seed", range(4))
def test_evaluate_log_loss_is_scikit_learns(tmp_path, seed):
    """Generated cases where some true classes get probability 0 (or 1 - tiny)."""
    from sklearn.metrics import log_loss

    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    y = np.repeat(np.arange(k), 40)
    X = rng.normal(size=(y.size, 3)) * 0.3 + 6.0 * y[:, None]
    train = pd.DataFrame(X, columns=["u", "v", "w"]).assign(label=y)
    train.to_csv(tmp_path / "train.csv", index=False)
    # rows deep inside another class: their true class has probability 0 in float64
    test = train.sample(60, random_state=seed).reset_index(drop=True)
    test.loc[:9, "label"] = (test.loc[:9, "label"] + 1) % k
    test.to_csv(tmp_path / "test.csv", index=False)
    model = tmp_path / "m.bayesrule"
    ok(run("fit", tmp_path / "train.csv", "-t", "label", "-m", "qda", "-o", model))
    ok(run("evaluate", model, tmp_path / "test.csv", "-o", tmp_path / "report"))
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())
    est = bayesrule.io.load(model)
    Xt = test[["u", "v", "w"]]
    proba = est.predict_proba(Xt)
    assert (proba[np.arange(10), np.searchsorted(est.classes_, test["label"][:10])] == 0).any()
    expected = log_loss(test["label"], proba, labels=est.classes_)
    assert metrics["log_loss"] == pytest.approx(expected, rel=1e-9)
    assert metrics["log_loss"] < 36.05  # -log(eps) bounds every row
    unclipped = -np.mean(
        est.predict_log_proba(Xt)[np.arange(60), np.searchsorted(est.classes_, test["label"])]
    )
    assert metrics["log_loss_unclipped"] == pytest.approx(unclipped, rel=1e-9)
    assert metrics["log_loss_unclipped"] > metrics["log_loss"]


def test_streamed_log_loss_equals_the_in_memory_one(table, models, tmp_path):
    for flag, name in ((["--no-stream"], "mem"), (["--block-rows", "700"], "stream")):
        ok(run("evaluate", models["qda"], table["big"], *flag, "-o", tmp_path / name))
    a, b = (json.loads((tmp_path / n / "metrics.json").read_text()) for n in ("mem", "stream"))
    assert a["log_loss"] == pytest.approx(b["log_loss"], rel=1e-12)
    assert a["log_loss_unclipped"] == pytest.approx(b["log_loss_unclipped"], rel=1e-12)


# ------------------------------------------------------------------ incomplete rows (item 8)
def _expected_rows(short: str, test: pd.DataFrame) -> np.ndarray:
    """The rows a model scores: no infinite cell, and no NaN unless it marginalises NaN."""
    values = test[["a", "b", "c", "d"]].to_numpy()
    bad = np.isinf(values) if short in TAKES_NAN else ~np.isfinite(values)
    return ~bad.any(axis=1)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("short", SHORT)
def test_predict_writes_a_row_per_input_row_and_leaves_unscorable_ones_empty(
    table, models, tmp_path, short, suffix
):
    out = tmp_path / f"pred{suffix}"
    result = ok(run("predict", models[short], table["test"], "--proba", "-k", "id", "-o", out))
    pred = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    test = pd.read_csv(table["test"])
    rows = _expected_rows(short, test)
    assert len(pred) == len(test) and pred["id"].tolist() == test["id"].tolist()
    assert pred["prediction"].isna().to_numpy().tolist() == (~rows).tolist()
    probas = [c for c in pred.columns if c.startswith("proba_")]
    assert pred.loc[~rows, probas].isna().all().all()
    est = bayesrule.io.load(models[short])
    scored = test.loc[rows, ["a", "b", "c", "d"]]
    assert pred.loc[rows, "prediction"].tolist() == est.predict(scored).tolist()
    np.testing.assert_allclose(
        pred.loc[rows, probas].to_numpy(), est.predict_proba(scored), rtol=1e-12, atol=1e-300
    )
    np.testing.assert_allclose(pred.loc[rows, probas].sum(axis=1), 1.0, rtol=1e-12)
    k = int((~rows).sum())
    assert f"{k} of {len(test)} rows hold" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("short", ["lda", "qda", "gnb", "mixed"])
def test_predict_incomplete_error_keeps_the_refusal(table, models, short):
    line = one_error(run("predict", models[short], table["test"], "--incomplete", "error"))
    assert "cannot take them" in line and "'c' (1 infinite)" in line
    assert ("'b'" in line) == (short not in TAKES_NAN)


@pytest.mark.parametrize("short", ["lda", "gnb"])
def test_streamed_predict_leaves_the_same_rows_empty(table, models, tmp_path, short):
    mem, streamed = tmp_path / "mem.parquet", tmp_path / "streamed.parquet"
    ok(run("predict", models[short], table["test"], "--proba", "-k", "id", "-o", mem))
    result = ok(
        run(
            "predict",
            models[short],
            table["test"],
            "--proba",
            "-k",
            "id",
            "--block-rows",
            4,
            "-o",
            streamed,
        )
    )
    a, b = pd.read_parquet(mem), pd.read_parquet(streamed)
    assert a["prediction"].isna().tolist() == b["prediction"].isna().tolist()
    assert a["prediction"].dropna().tolist() == b["prediction"].dropna().tolist()
    np.testing.assert_allclose(
        a.filter(like="proba_").to_numpy(), b.filter(like="proba_").to_numpy(), rtol=1e-12
    )
    assert "rows hold missing or infinite cells" in result.stderr


@pytest.mark.parametrize("stream", [[], ["--block-rows", "5"]], ids=["memory", "streamed"])
@pytest.mark.parametrize("short", ["lda", "qda", "gnb", "knb", "mixed"])
def test_evaluate_leaves_unscorable_rows_out_and_says_so(table, models, tmp_path, short, stream):
    result = ok(run("evaluate", models[short], table["test"], *stream, "-o", tmp_path / "r"))
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    test = pd.read_csv(table["test"])
    rows = _expected_rows(short, test)
    est = bayesrule.io.load(models[short])
    scored = test.loc[rows]
    assert metrics["n_samples"] == len(test)
    assert metrics["n_samples_scored"] == rows.sum()
    assert metrics["n_samples_not_scored"] == (~rows).sum()
    accuracy = np.mean(est.predict(scored[["a", "b", "c", "d"]]) == scored["label"].to_numpy())
    assert metrics["accuracy"] == pytest.approx(accuracy)
    assert f"{(~rows).sum()} incomplete left out" in result.stdout
    assert "left out of every figure" in result.stderr
    one_error(run("evaluate", models[short], table["test"], *stream, "--incomplete", "error"))


def test_evaluate_with_no_scorable_row_is_an_error(models, tmp_path):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"a": [np.nan] * 3, "b": 1.0, "c": 1.0, "d": 1.0, "label": "ant"}).to_csv(
        bad, index=False
    )
    line = one_error(run("evaluate", models["lda"], bad))
    assert "none of the 3 rows can be scored" in line


# ------------------------------------------------------------------ hints (item 1)
@pytest.mark.parametrize("short", SHORT)
def test_a_hint_never_suggests_the_model_in_use(short):
    cls = get_estimator(short)
    assert short not in models_taking_nan(exclude=cls)


@pytest.mark.parametrize("short", [s for s in SHORT if s != "rdacv"])
@pytest.mark.parametrize("cell", [np.nan, np.inf], ids=["nan", "inf"])
def test_fit_refusals_of_cells_suggest_only_other_models(tmp_path, short, cell):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.poisson(3.0, size=(60, 3)).astype(float), columns=["a", "b", "c"])
    df["label"] = np.repeat(["x", "y", "z"], 20)
    df.loc[5, "b"] = cell
    df.to_csv(tmp_path / "t.csv", index=False)
    result = run("fit", tmp_path / "t.csv", "-t", "label", "-m", short, "-o", tmp_path / "m.br")
    if np.isnan(cell) and short in TAKES_NAN:
        ok(result)  # NaN is missing for the naive Bayes family
        return
    line = one_error(result)
    assert "'b' (1 " in line
    suggested = line.split("use a model that treats NaN as missing", 1)
    if len(suggested) == 2:
        names = suggested[1].split(")")[0].strip(" (").split(", ")
        assert short not in names and set(names) <= TAKES_NAN
    else:
        assert short in TAKES_NAN  # a model that takes NaN is told nothing about NaN models


def test_a_cluster_leaves_the_same_rows_empty_and_its_refusal_is_one_line(table, models, tmp_path):
    """``--scheduler local`` in real processes: the file of the in-memory predict, or one line."""
    pytest.importorskip("distributed")
    mem, cluster = tmp_path / "mem.csv", tmp_path / "cluster.csv"
    ok(run("predict", models["lda"], table["test"], "--proba", "-k", "id", "-o", mem))
    common = ["predict", str(models["lda"]), str(table["test"]), "--scheduler", "local"]
    proc = subprocess.run(
        [str(SCRIPT), *common, "--proba", "-k", "id", "-o", str(cluster)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert cluster.read_text() == mem.read_text()
    assert "3 of 30 rows hold missing or infinite cells" in proc.stderr
    proc = subprocess.run(
        [str(SCRIPT), *common, "--incomplete", "error", "-o", str(tmp_path / "x.csv")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bayesrule: error: "), proc.stderr[-2000:]
    assert "NaN" in lines[0]
