"""The ``bayesrule`` command, driven as a user would, on real files."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pytest.importorskip("matplotlib")

from typer.testing import CliRunner  # noqa: E402

import bayesrule  # noqa: E402
from bayesrule.cli._app import app  # noqa: E402

SPECIES = np.array(["setosa", "versicolor", "virginica"])


def run(*args: object) -> object:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result


def png_ok(path: Path, min_side: int = 300) -> None:
    """The picture exists, is big enough, and is not one flat colour."""
    import matplotlib.image as mpimg

    img = mpimg.imread(path)
    assert min(img.shape[:2]) >= min_side
    assert img[..., :3].std() > 0.05


@pytest.fixture(scope="module")
def iris(tmp_path_factory) -> dict[str, Path]:
    from sklearn.datasets import load_iris

    d = tmp_path_factory.mktemp("iris")
    X, y = load_iris(return_X_y=True)
    df = pd.DataFrame(X, columns=["sepal_length", "sepal_width", "petal_length", "petal_width"])
    df["species"] = SPECIES[y]
    df.to_csv(d / "iris.csv", index=False)
    df[["petal_length", "petal_width", "species"]].to_parquet(d / "petals.parquet")
    np.save(d / "iris.npy", np.column_stack([X, y]))
    np.savez(d / "iris.npz", X=X, y=y)
    return {
        "dir": d,
        "csv": d / "iris.csv",
        "parquet": d / "petals.parquet",
        "npy": d / "iris.npy",
        "npz": d / "iris.npz",
    }


def _write_idx(path: Path, array: np.ndarray) -> None:
    magic = 2051 if array.ndim == 3 else 2049
    header = magic.to_bytes(4, "big") + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture(scope="module")
def idx_dir(tmp_path_factory) -> Path:
    """A tiny MNIST-style folder: 8x8 images of three bars (rows, columns, diagonal)."""
    d = tmp_path_factory.mktemp("idx")
    rng = np.random.default_rng(0)
    for prefix, n in (("train", 300), ("t10k", 90)):
        y = np.repeat(np.arange(3), n // 3)
        base = np.zeros((3, 8, 8))
        base[0, 3:5, :] = 1
        base[1, :, 3:5] = 1
        base[2] = np.eye(8) + np.eye(8, k=1)
        imgs = np.clip(base[y] * 200 + rng.normal(30, 25, size=(n, 8, 8)), 0, 255)
        _write_idx(d / f"{prefix}-images-idx3-ubyte.gz", imgs)
        _write_idx(d / f"{prefix}-labels-idx1-ubyte.gz", y)
    return d


@pytest.fixture(scope="module")
def iris_model(iris, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("models") / "qda.bayesrule"
    result = run("fit", iris["csv"], "--target", "species", "--model", "qda", "-o", path)
    assert result.exit_code == 0, result.output
    return path


# ------------------------------------------------------------------ fit / predict
def test_cli_fit_equals_python_fit(iris, iris_model, tmp_path):
    df = pd.read_csv(iris["csv"])
    X = df.drop(columns="species")
    expected = bayesrule.QuadraticDiscriminantAnalysis().fit(X, df["species"]).predict_proba(X)
    out = tmp_path / "pred.csv"
    assert run("predict", iris_model, iris["csv"], "-o", out, "--proba").exit_code == 0
    pred = pd.read_csv(out)
    assert pred.shape == (150, 4)
    assert list(pred.columns) == ["prediction"] + [f"proba_{s}" for s in SPECIES]
    np.testing.assert_allclose(
        pred[[f"proba_{s}" for s in SPECIES]].to_numpy(), expected, rtol=1e-12
    )


def test_predict_writes_parquet_by_suffix(iris, iris_model, tmp_path):
    out = tmp_path / "pred.parquet"
    assert run("predict", iris_model, iris["csv"], "-o", out).exit_code == 0
    pred = pd.read_parquet(out)
    assert pred.shape == (150, 1) and set(pred["prediction"]) <= set(SPECIES)


def test_set_parameters_reach_the_model(iris, tmp_path):
    path = tmp_path / "rda.bayesrule"
    result = run(
        "fit",
        iris["parquet"],
        "-t",
        "species",
        "-m",
        "rda",
        "--set",
        "alpha=0.3",
        "--set",
        "gamma=0.1",
        "-o",
        path,
    )
    assert result.exit_code == 0, result.output
    model = bayesrule.load(path)
    assert (model.alpha, model.gamma, model.feature_names_in_.tolist()) == (
        0.3,
        0.1,
        ["petal_length", "petal_width"],
    )


@pytest.mark.parametrize("fmt,target", [("npy", "-1"), ("npz", "y")])
def test_numpy_inputs(iris, tmp_path, fmt, target):
    path = tmp_path / "m.bayesrule"
    assert run("fit", iris[fmt], "-t", target, "-o", path).exit_code == 0
    out = tmp_path / "pred.csv"
    assert run("predict", path, iris["npz"], "-o", out).exit_code == 0
    pred = pd.read_csv(out)["prediction"].to_numpy()
    assert pred.shape == (150,) and np.mean(pred == np.load(iris["npz"])["y"]) > 0.95


# ------------------------------------------------------------------ evaluate / plot
def test_evaluate_prints_and_writes_a_report(iris, iris_model, tmp_path):
    report = tmp_path / "report"
    result = run("evaluate", iris_model, iris["csv"], "-t", "species", "-o", report)
    assert result.exit_code == 0
    assert "accuracy 98.00%" in result.stdout and "versicolor" in result.stdout
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["accuracy"] == pytest.approx(0.98)
    assert [row["class"] for row in metrics["per_class"]] == SPECIES.tolist()
    cm = pd.read_csv(report / "confusion_matrix.csv", index_col=0)
    assert cm.shape == (3, 3)
    np.testing.assert_allclose(cm.sum(axis=1), 1.0)
    png_ok(report / "confusion_matrix.png")


@pytest.mark.parametrize("data", ["csv", "parquet"])
def test_plot_writes_a_picture(iris, tmp_path, data):
    model = tmp_path / "lda.bayesrule"
    assert run("fit", iris[data], "-t", "species", "-o", model).exit_code == 0
    out = tmp_path / "regions.png"
    result = run("plot", model, iris[data], "-t", "species", "-o", out)
    assert result.exit_code == 0, result.output
    png_ok(out)


@pytest.mark.parametrize("data", ["csv", "parquet"])
def test_plot_of_a_kernel_model_draws_its_density(iris, tmp_path, data):
    model = tmp_path / "knb.bayesrule"
    assert run("fit", iris[data], "-t", "species", "-m", "knb", "-o", model).exit_code == 0
    out = tmp_path / "regions.png"
    result = run("plot", model, iris[data], "-t", "species", "-o", out)
    assert result.exit_code == 0, result.output
    png_ok(out)


# ------------------------------------------------------------------ sample / IDX
def test_sample_rows_per_class(iris_model, tmp_path):
    out = tmp_path / "s.csv"
    assert run("sample", iris_model, "-n", 7, "-o", out, "--seed", 3).exit_code == 0
    s = pd.read_csv(out)
    assert s.shape == (21, 5) and s["class"].value_counts().to_dict() == dict.fromkeys(SPECIES, 7)
    assert not out.with_suffix(".png").exists()  # four features are not an image


def test_sample_one_class(iris_model, tmp_path):
    out = tmp_path / "s.csv"
    assert run("sample", iris_model, "-n", 4, "--class", "virginica", "-o", out).exit_code == 0
    assert pd.read_csv(out)["class"].tolist() == ["virginica"] * 4


def test_idx_folder_fit_evaluate_and_sample_grid(idx_dir, tmp_path):
    model = tmp_path / "lda.bayesrule"
    assert run("fit", idx_dir, "-m", "lda", "-o", model).exit_code == 0
    assert bayesrule.io.read_metadata(model)["extra"]["image_shape"] == [8, 8]
    result = run("evaluate", model, idx_dir)  # the t10k files by default
    assert result.exit_code == 0 and "90 rows" in result.stdout
    out = tmp_path / "samples.csv"
    assert run("sample", model, "-n", 10, "-o", out).exit_code == 0
    assert pd.read_csv(out).shape == (30, 65)
    png_ok(out.with_suffix(".png"), min_side=200)


def test_sample_grid_of_a_model_without_means(idx_dir, tmp_path):
    model = tmp_path / "bnb.bayesrule"
    assert run("fit", idx_dir, "-m", "bnb", "--set", "binarize=100", "-o", model).exit_code == 0
    out = tmp_path / "samples.csv"
    result = run("sample", model, "-n", 6, "-o", out)
    assert result.exit_code == 0, result.output
    png_ok(out.with_suffix(".png"), min_side=150)


# ------------------------------------------------------------------ errors
@pytest.fixture
def bad_files(iris, tmp_path):
    fake_parquet = tmp_path / "fake.parquet"
    fake_parquet.write_bytes(iris["csv"].read_bytes())
    notes = tmp_path / "notes.docx"
    notes.write_text("hello\n")
    return {"fake_parquet": fake_parquet, "notes": notes}


@pytest.mark.parametrize(
    "args,match",
    [
        (
            ["fit", "{dir}/missing.csv", "-t", "species", "-o", "{tmp}/m.bayesrule"],
            "missing.csv: no such file",
        ),
        (["fit", "{csv}", "-t", "specie", "-o", "{tmp}/m.bayesrule"], "no column 'specie'"),
        (
            ["fit", "{fake_parquet}", "-t", "species", "-o", "{tmp}/m.bayesrule"],
            "fake.parquet: not a readable Parquet file",
        ),
        (
            ["fit", "{notes}", "-t", "species", "-o", "{tmp}/m.bayesrule"],
            "unsupported data format '.docx'",
        ),
        (
            [
                "fit",
                "{csv}",
                "-t",
                "species",
                "-m",
                "rda",
                "--set",
                "alpha=2",
                "-o",
                "{tmp}/m.bayesrule",
            ],
            "--set: The 'alpha' parameter",
        ),
        (
            ["fit", "{csv}", "-t", "species", "--set", "shrinkage=lots", "-o", "{tmp}/m.bayesrule"],
            "--set: The 'shrinkage' parameter",
        ),
        (
            ["fit", "{csv}", "-t", "species", "--set", "nope=1", "-o", "{tmp}/m.bayesrule"],
            "has no parameter 'nope'",
        ),
        (
            ["fit", "{csv}", "-t", "species", "--set", "alpha", "-o", "{tmp}/m.bayesrule"],
            "expected name=value",
        ),
        (
            ["fit", "{csv}", "-t", "species", "-m", "xyz", "-o", "{tmp}/m.bayesrule"],
            "unknown model 'xyz'",
        ),
        (["fit", "{csv}", "-t", "species", "-o", "{tmp}/no/dir/m.bayesrule"], "does not exist"),
        (
            ["predict", "{csv}", "{csv}", "-o", "{tmp}/p.csv"],
            "iris.csv: not a bayesrule model file",
        ),
        (
            ["predict", "{model}", "{parquet}", "-o", "{tmp}/p.csv"],
            "the model needs the column(s) sepal_length, sepal_width",
        ),
        (["predict", "{model}", "{csv}", "-o", "{tmp}/p.json"], "cannot write a table as '.json'"),
        (["evaluate", "{model}", "{csv}", "-t", "nope"], "no column 'nope'"),
        (
            ["sample", "{model}", "--class", "rose", "-o", "{tmp}/s.csv"],
            "--class rose: not a class",
        ),
        (["plot", "{model}", "{csv}", "-t", "species", "-o", "{tmp}/p.xyz"], "p.xyz"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(iris, iris_model, bad_files, tmp_path, args, match):
    names = {
        "dir": iris["dir"],
        "csv": iris["csv"],
        "parquet": iris["parquet"],
        "npz": iris["npz"],
        "model": iris_model,
        "tmp": tmp_path,
        **bad_files,
    }
    result = run(*(a.format(**names) for a in args))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bayesrule: error:")
    assert match in lines[0]
    assert "Traceback" not in result.output


def test_debug_shows_the_exception(iris, tmp_path):
    result = run("--debug", "fit", iris["csv"], "-t", "specie", "-o", tmp_path / "m.bayesrule")
    assert result.exit_code != 0 and "no column 'specie'" in str(result.exception)


def test_console_script_in_a_real_process(iris, tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "bayesrule.cli",
        "fit",
        str(iris["csv"]),
        "-t",
        "nope",
        "-o",
        str(tmp_path / "m.bayesrule"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("bayesrule: error:") and "Traceback" not in proc.stderr


def test_missing_cli_extra_gives_install_hint(monkeypatch, capsys):
    from bayesrule import cli

    monkeypatch.setitem(sys.modules, "typer", None)
    monkeypatch.delitem(sys.modules, "bayesrule.cli._app")
    with pytest.raises(SystemExit) as info:
        cli.main(["--help"])
    assert info.value.code == 2
    assert "pip install 'bayesrule[cli]'" in capsys.readouterr().err


# ------------------------------------------------------------------ demo
def _fake_demo(monkeypatch, run_fn) -> None:
    module = types.ModuleType("bayesrule.demo")
    if run_fn is not None:
        module.run = run_fn  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bayesrule.demo", module)
    monkeypatch.setattr(bayesrule, "demo", module, raising=False)


def test_demo_falls_back_to_wine_and_says_so(monkeypatch, tmp_path):
    calls = []

    def fake_run(data_dir=None, report_dir=None):
        calls.append((data_dir, report_dir))
        return {"rows": [{"model": "lda", "wine errors (of 60)": 1}], "mnist_dir": None}

    _fake_demo(monkeypatch, fake_run)
    monkeypatch.setattr("bayesrule.datasets.find_mnist", lambda path=None: None)
    report = tmp_path / "report"
    result = run("demo", "-o", report)
    assert result.exit_code == 0, result.output
    # the demo writes into a temporary folder next to the report, moved into place at the end
    [(data_dir, report_dir)] = calls
    assert data_dir is None and Path(report_dir).parent == report.parent
    assert not Path(report_dir).exists()
    assert "MNIST not found" in result.stderr and "wine errors" in result.stdout
    png_ok(report / "lda_confusion_matrix.png")
    png_ok(report / "lda_wine_regions.png")


@pytest.mark.mnist
def test_demo_on_mnist_adds_confusion_matrix_and_digit_samples(monkeypatch, tmp_path, mnist):
    X_train, y_train, _, _ = mnist
    lda = bayesrule.LinearDiscriminantAnalysis().fit(X_train[:6000], y_train[:6000])
    _fake_demo(
        monkeypatch, lambda data_dir=None, report_dir=None: {"models": {("mnist", "LDA"): lda}}
    )
    report = tmp_path / "report"
    result = run("demo", "-o", report)
    assert result.exit_code == 0, result.output
    png_ok(report / "lda_confusion_matrix.png")
    png_ok(report / "lda_samples.png")


def test_demo_without_run_is_a_clear_error(monkeypatch, tmp_path):
    _fake_demo(monkeypatch, None)
    result = run("demo", "-o", tmp_path / "r")
    assert result.exit_code == 2 and "has no run(" in result.stderr
