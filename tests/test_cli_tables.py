"""The ``bayesrule`` command on tables as a data scientist has them.

Small stand-ins for real files, built in a temporary folder: Palmer-penguins-like
(strings, missing values, a year column), MASS crabs as R writes it (row names
in an unnamed first column, and a real ``index`` column), a CSV written by
pandas with its index, semicolon- and tab-separated files, compressed CSV,
Parquet and standard input. Each test drives the command as a user would and
checks what it wrote.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
matplotlib = pytest.importorskip("matplotlib")
pytest.importorskip("pyarrow")

from typer.testing import CliRunner  # noqa: E402

import bayesrule  # noqa: E402
from bayesrule.cli._app import app  # noqa: E402

FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
NUMERIC = ["bill_depth_mm", "flipper_length_mm", "body_mass_g"]  # complete numeric columns


def run(*args: object, input: bytes | None = None) -> object:
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


def ok(result: object) -> object:
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def error_line(result: object) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bayesrule: error: "), lines
    return lines[0]


def png_ok(path: Path) -> None:
    import matplotlib.image as mpimg

    img = mpimg.imread(path)
    assert min(img.shape[:2]) >= 300
    assert img[..., :3].std() > 0.05  # not one flat colour


# ------------------------------------------------------------------ the files
def _penguins(n: int = 150, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    species = np.repeat(np.array(["Adelie", "Chinstrap", "Gentoo"]), n // 3)
    island = np.where(
        species == "Gentoo",
        "Biscoe",
        np.where(species == "Chinstrap", "Dream", rng.choice(["Torgersen", "Biscoe", "Dream"], n)),
    )
    centre = {
        "Adelie": (38.8, 18.3, 190, 3700),
        "Chinstrap": (48.8, 18.4, 196, 3730),
        "Gentoo": (47.5, 15.0, 217, 5076),
    }
    values = np.array([centre[s] for s in species]) + rng.normal(size=(n, 4)) * [2.5, 1.1, 6, 420]
    df = pd.DataFrame(
        {
            "species": species,
            "island": island,
            "bill_length_mm": values[:, 0].round(1),
            "bill_depth_mm": values[:, 1].round(1),
            "flipper_length_mm": values[:, 2].round().astype(int),
            "body_mass_g": values[:, 3].round().astype(int),
            "sex": rng.choice(["male", "female"], n),
            "year": rng.choice([2007, 2008, 2009], n),
        }
    )
    df.loc[[3, 60], "bill_length_mm"] = np.nan  # missing measurements, as in the real data
    df.loc[[3, 61, 100], "sex"] = np.nan
    df.loc[[7, 140], "species"] = np.nan  # two rows without a label
    return df


def _crabs(seed: int = 1) -> pd.DataFrame:
    """MASS::crabs: sp, sex, index (1..50 within each group) and five measurements."""
    rng = np.random.default_rng(seed)
    groups = [("B", "M"), ("B", "F"), ("O", "M"), ("O", "F")]
    rows = []
    for sp, sex in groups:
        base = 12 + 3 * (sp == "O") + rng.normal(0, 3, 50)
        for i in range(50):
            size = base[i]
            rows.append(
                {
                    "sp": sp,
                    "sex": sex,
                    "index": i + 1,
                    "FL": size + rng.normal(0, 0.3),
                    "RW": 0.8 * size + (1.5 if sex == "F" else 0) + rng.normal(0, 0.3),
                    "CL": 2.1 * size + (1.0 if sp == "O" else 0) + rng.normal(0, 0.5),
                    "CW": 2.4 * size + rng.normal(0, 0.5),
                    "BD": 0.9 * size + (0.8 if sp == "O" else 0) + rng.normal(0, 0.3),
                }
            )
    return pd.DataFrame(rows).round(1)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("tables")
    peng = _penguins()
    peng.to_csv(d / "penguins.csv", index=False)
    peng.to_csv(d / "penguins_indexed.csv")  # pandas' default: the index as a first column
    peng.reset_index().to_csv(d / "penguins_reset.csv", index=False)  # a column 'index'
    peng.to_parquet(d / "penguins.parquet", index=False)
    text = (d / "penguins.csv").read_bytes()
    (d / "penguins.csv.gz").write_bytes(gzip.compress(text))
    (d / "penguins.csv.bz2").write_bytes(bz2.compress(text))
    with zipfile.ZipFile(d / "penguins.csv.zip", "w") as zf:
        zf.writestr("penguins.csv", text)
    peng.to_csv(d / "penguins.tsv", sep="\t", index=False)
    peng.to_csv(d / "penguins.txt", sep="\t", index=False)
    # as a European spreadsheet writes it: semicolons and decimal commas
    peng.to_csv(d / "penguins_semicolon.csv", sep=";", decimal=",", index=False)
    crabs = _crabs()
    # as R's write.csv writes it: quoted names, row names 1..n in an unnamed first column
    crabs.index = np.arange(1, len(crabs) + 1)
    crabs.to_csv(d / "crabs.csv", quoting=1, index_label="")
    crabs.to_csv(d / "crabs_plain.csv", index=False)
    return {"dir": d, **{p.name: p for p in d.iterdir()}}


@pytest.fixture(scope="module")
def penguins(files) -> pd.DataFrame:
    return pd.read_csv(files["penguins.csv"])


@pytest.fixture(scope="module")
def models(files, tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    paths = {"lda": d / "lda.bayesrule", "mixed": d / "mixed.bayesrule", "qda": d / "qda.bayesrule"}
    csv = files["penguins.csv"]
    ok(run("fit", csv, "-t", "species", "-f", ",".join(NUMERIC), "-o", paths["lda"]))
    ok(run("fit", csv, "-t", "species", "-m", "qda", "-f", ",".join(NUMERIC), "-o", paths["qda"]))
    ok(run("fit", csv, "-t", "species", "-m", "mixed", "--kind", "year=categorical", "-o",
           paths["mixed"]))  # fmt: skip
    return paths


# ------------------------------------------------------------------ 1. choosing the features
def test_fit_lists_the_features_used_and_the_model_keeps_them(files, tmp_path):
    model = tmp_path / "m.bayesrule"
    result = ok(
        run(
            "fit",
            files["penguins.csv"],
            "-t",
            "species",
            "--drop",
            "island,sex",
            "--drop",
            "bill_length_mm",
            "-o",
            model,
        )  # fmt: skip
    )
    expected = ["bill_depth_mm", "flipper_length_mm", "body_mass_g", "year"]
    assert "features: " + ", ".join(expected) in result.stderr
    assert bayesrule.load(model).feature_names_in_.tolist() == expected


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--features", "bill_*"], ["bill_length_mm", "bill_depth_mm"]),
        (["-f", "bill_depth_mm", "-f", "body_*"], ["bill_depth_mm", "body_mass_g"]),
        (["-f", "*_mm", "--drop", "bill_length_mm"], ["bill_depth_mm", "flipper_length_mm"]),
        (["-f", "body_mass_g,bill_depth_mm"], ["body_mass_g", "bill_depth_mm"]),
    ],
)
def test_features_and_drop_take_names_and_globs(files, tmp_path, args, expected):
    model = tmp_path / "m.bayesrule"
    ok(run("fit", files["penguins.csv"], "-t", "species", "-m", "gnb", *args, "-o", model))
    assert bayesrule.load(model).feature_names_in_.tolist() == expected


@pytest.mark.parametrize("option", ["--features", "--drop"])
def test_an_unknown_column_is_named(files, tmp_path, option):
    line = error_line(
        run(
            "fit",
            files["penguins.csv"],
            "-t",
            "species",
            option,
            "bill_lenght_mm",
            "-o",
            tmp_path / "m.bayesrule",
        )  # fmt: skip
    )
    assert f"{option} bill_lenght_mm: no such column" in line and "bill_length_mm" in line
    assert not (tmp_path / "m.bayesrule").exists()


@pytest.mark.parametrize(
    "name,index_column",
    [("penguins_indexed.csv", "Unnamed: 0"), ("penguins_reset.csv", "index")],
)
def test_a_written_out_index_is_left_out_with_a_note(files, tmp_path, name, index_column):
    model = tmp_path / "m.bayesrule"
    result = ok(run("fit", files[name], "-t", "species", "-m", "mixed", "-o", model))
    assert f"note: left out the column {index_column!r}" in result.stderr
    names = bayesrule.load(model).feature_names_in_.tolist()
    assert index_column not in names and len(names) == 7


def test_crabs_from_r_row_names_out_index_column_in_unless_dropped(files, tmp_path):
    model = tmp_path / "m.bayesrule"
    result = ok(run("fit", files["crabs.csv"], "-t", "sp", "-m", "mixed", "-o", model))
    assert "note: left out the column 'Unnamed: 0'" in result.stderr
    # crabs' own 'index' (1..50 within each group) is data, not a row index: it is used, and said
    assert bayesrule.load(model).feature_names_in_.tolist() == [
        "sex", "index", "FL", "RW", "CL", "CW", "BD",
    ]  # fmt: skip
    assert "features: sex (" in result.stderr and "index (" in result.stderr
    ok(run("fit", files["crabs.csv"], "-t", "sp", "--drop", "sex,index", "-o", model))
    assert bayesrule.load(model).feature_names_in_.tolist() == ["FL", "RW", "CL", "CW", "BD"]


def test_no_index_note_for_a_plain_table(files, tmp_path):
    result = ok(
        run(
            "fit",
            files["crabs_plain.csv"],
            "-t",
            "sp",
            "--drop",
            "sex",
            "-o",
            tmp_path / "m.bayesrule",
        )  # fmt: skip
    )
    assert "note:" not in result.stderr


def test_predict_takes_the_models_columns_by_name_and_ignores_the_rest(files, models, tmp_path):
    shuffled = pd.read_csv(files["penguins.csv"])
    shuffled = shuffled[["year", "body_mass_g", "sex", "flipper_length_mm", "bill_depth_mm"]]
    shuffled["extra"] = "x"
    shuffled.to_csv(tmp_path / "other.csv", index=False)
    ok(run("predict", models["lda"], tmp_path / "other.csv", "-o", tmp_path / "a.csv"))
    ok(run("predict", models["lda"], files["penguins.csv"], "-o", tmp_path / "b.csv"))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv"))
    shuffled.drop(columns="body_mass_g").to_csv(tmp_path / "lacking.csv", index=False)
    line = error_line(
        run("predict", models["lda"], tmp_path / "lacking.csv", "-o", tmp_path / "c.csv")
    )
    assert "the model needs the column(s) body_mass_g" in line


# ------------------------------------------------------------------ 2. text columns
def test_a_numeric_model_names_the_text_columns_and_suggests_what_to_do(files, tmp_path):
    line = error_line(
        run("fit", files["penguins.csv"], "-t", "species", "-o", tmp_path / "m.bayesrule")
    )
    assert "'island', 'sex' are not numeric" in line
    assert "--drop island,sex" in line and "--model mixed" in line


def test_mixed_gets_the_table_as_it_is_and_equals_python(files, models, penguins, tmp_path):
    labelled = penguins[penguins["species"].notna()]
    X = labelled.drop(columns="species")
    expected = bayesrule.MixedNB(columns={"year": "categorical"}).fit(X, labelled["species"])
    model = bayesrule.load(models["mixed"])
    assert list(model.kinds_) == list(expected.kinds_)
    kinds = dict(zip(model.feature_names_in_, model.kinds_, strict=True))
    assert kinds["island"] == kinds["sex"] == kinds["year"] == "categorical"
    assert kinds["bill_length_mm"] == "gaussian"
    out = tmp_path / "p.csv"
    ok(run("predict", models["mixed"], files["penguins.csv"], "--proba", "-o", out))
    got = pd.read_csv(out)
    cols = [f"proba_{c}" for c in expected.classes_]
    np.testing.assert_allclose(
        got[cols].to_numpy(), expected.predict_proba(penguins.drop(columns="species")), rtol=1e-10
    )


def test_set_columns_json_is_the_same_as_kind(files, models, tmp_path):
    model = tmp_path / "m.bayesrule"
    ok(
        run(
            "fit",
            files["penguins.csv"],
            "-t",
            "species",
            "-m",
            "mixed",
            "--set",
            'columns={"year": "categorical"}',
            "-o",
            model,
        )  # fmt: skip
    )
    assert bayesrule.load(model).kinds_ == bayesrule.load(models["mixed"]).kinds_


@pytest.mark.parametrize(
    "args,match",
    [
        (["-m", "lda", "--kind", "year=categorical"], "--kind sets the model of a column"),
        (["-m", "mixed", "--kind", "yaer=categorical"], "--kind yaer: no such column"),
        (["-m", "mixed", "--kind", "year"], "expected column=kind"),
        (["-m", "mixed", "--kind", "year=nominal"], "'nominal'"),
    ],
)
def test_bad_kinds_are_one_line(files, tmp_path, args, match):
    line = error_line(
        run("fit", files["penguins.csv"], "-t", "species", *args, "-o", tmp_path / "m.bm")
    )
    assert match in line


# ------------------------------------------------------------------ 3. --version, -q
def test_version_in_a_real_process():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-m", "bayesrule.cli", "--version"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith(f"bayesrule {bayesrule.__version__}")


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_before_or_after_the_command(files, tmp_path, where):
    fit = ["fit", files["penguins.csv"], "-t", "species", "-m", "mixed", "-o",
           tmp_path / "m.bayesrule"]  # fmt: skip
    quiet = ok(run(*(["-q", *fit] if where == "before" else [*fit, "-q"])))
    assert quiet.stderr == ""
    loud = ok(run(*fit))
    assert "fitted on 148 rows" in loud.stderr and "note: left out 2 rows" in loud.stderr


# ------------------------------------------------------------------ 4. the stored target
def test_evaluate_and_plot_default_to_the_stored_target(files, models, tmp_path):
    result = ok(run("evaluate", models["lda"], files["penguins.csv"]))
    assert "accuracy" in result.stdout and "148 rows" in result.stdout
    ok(run("plot", models["lda"], files["penguins.csv"], "-o", tmp_path / "p.png"))
    png_ok(tmp_path / "p.png")
    assert bayesrule.io.read_metadata(models["lda"])["extra"]["target"] == "species"


def test_a_model_file_without_a_target_asks_for_one(files, penguins, tmp_path):
    labelled = penguins[penguins["species"].notna()]
    model = tmp_path / "old.bayesrule"
    lda = bayesrule.LinearDiscriminantAnalysis().fit(labelled[NUMERIC], labelled["species"])
    bayesrule.save(lda, model)  # as an older file, or one saved from Python: no target kept
    line = error_line(run("evaluate", model, files["penguins.csv"]))
    assert "does not name its label column; give it with --target" in line
    ok(run("evaluate", model, files["penguins.csv"], "-t", "species"))


# ------------------------------------------------------------------ 5. plot the saved model
def test_plot_never_refits(files, models, tmp_path, monkeypatch):
    def refuse(self, *args, **kwargs):
        raise AssertionError("plot refitted a model")

    for cls in (bayesrule.LinearDiscriminantAnalysis, bayesrule.QuadraticDiscriminantAnalysis,
                bayesrule.MixedNB):  # fmt: skip
        monkeypatch.setattr(cls, "fit", refuse)
    for name, extra in (("lda", []), ("qda", []), ("mixed", ["--x", "bill_depth_mm", "--y",
                                                              "body_mass_g"])):  # fmt: skip
        out = tmp_path / f"{name}.png"
        ok(run("plot", models[name], files["penguins.csv"], *extra, "-o", out))
        png_ok(out)


def test_lda_plane_is_its_own_fisher_plane_with_its_own_decisions(penguins):
    from matplotlib.figure import Figure

    from bayesrule.plotting import DecisionRegionsDisplay

    df = penguins[penguins["species"].notna()]
    X, y = df[NUMERIC + ["year"]], df["species"].to_numpy()
    lda = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(
        lda, X, y, grid_resolution=40, ax=Figure().subplots()
    )
    np.testing.assert_allclose(disp.X, lda.transform(X)[:, :2])
    assert "Fisher" in disp.note
    # the grid is a slice of the feature space that LDA maps back onto the grid
    x0, S, cov = lda.xbar_, lda.scalings_[:, :2], lda.covariance_
    A = cov @ S @ np.linalg.inv(S.T @ cov @ S)
    c = np.column_stack([disp.xx.ravel(), disp.yy.ravel()])
    points = pd.DataFrame(x0 + c @ A.T, columns=X.columns)
    np.testing.assert_allclose(lda.transform(points)[:, :2], c, atol=1e-8)
    assert np.array_equal(lda.classes_[disp.regions.ravel()], lda.predict(points))
    density = lda.class_log_density(points).T.reshape(disp.log_density.shape)
    np.testing.assert_allclose(disp.log_density, density)


def test_two_features_with_the_others_at_the_training_means(penguins):
    from matplotlib.figure import Figure

    from bayesrule.plotting import DecisionRegionsDisplay

    df = penguins[penguins["species"].notna()]
    X, y = df[NUMERIC], df["species"].to_numpy()
    qda = bayesrule.QuadraticDiscriminantAnalysis().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(
        qda, X, y, features=("body_mass_g", "bill_depth_mm"), grid_resolution=30,
        ax=Figure().subplots(),
    )  # fmt: skip
    assert "flipper_length_mm" not in disp.note and "training means" in disp.note
    w = qda.class_count_ / qda.class_count_.sum()
    points = pd.DataFrame(
        {
            "bill_depth_mm": disp.yy.ravel(),
            "flipper_length_mm": (w @ qda.means_)[1],
            "body_mass_g": disp.xx.ravel(),
        }
    )
    assert np.array_equal(qda.classes_[disp.regions.ravel()], qda.predict(points))
    np.testing.assert_allclose(
        disp.log_density, qda.class_log_density(points).T.reshape(disp.log_density.shape)
    )
    assert disp.ax_.get_xlabel() == "body_mass_g" and disp.ax_.get_ylabel() == "bill_depth_mm"


@pytest.mark.parametrize(
    "args,match",
    [
        (["--x", "bill_depth_mm"], "--x and --y go together"),
        (["--x", "bill_depth_mm", "--y", "wingspan"], "--y wingspan: not a feature"),
        (["--x", "bill_depth_mm", "--y", "island"], "'island' is not numeric"),
    ],
)
def test_plot_axes_errors(files, models, tmp_path, args, match):
    line = error_line(run("plot", models["mixed"], files["penguins.csv"], *args, "-o",
                          tmp_path / "p.png"))  # fmt: skip
    assert match in line


# ------------------------------------------------------------------ 6. RDA-CV
def test_rdacv_fits_saves_and_predicts(files, penguins, tmp_path):
    model = tmp_path / "rdacv.bayesrule"
    ok(run("fit", files["penguins.csv"], "-t", "species", "-m", "rdacv", "-f",
           ",".join(NUMERIC), "-o", model))  # fmt: skip
    loaded = bayesrule.load(model)
    assert type(loaded).__name__ == "RegularizedDiscriminantAnalysisCV"
    df = penguins[penguins["species"].notna()]
    direct = bayesrule.RegularizedDiscriminantAnalysisCV().fit(df[NUMERIC], df["species"])
    assert (loaded.alpha_, loaded.gamma_, loaded.ridge_) == (
        direct.alpha_,
        direct.gamma_,
        direct.ridge_,
    )
    np.testing.assert_allclose(loaded.predict_proba(df[NUMERIC]), direct.predict_proba(df[NUMERIC]))
    info = json.loads(ok(run("info", model, "--json")).stdout)
    assert info["chosen"] == {
        "alpha_": direct.alpha_,
        "gamma_": direct.gamma_,
        "ridge_": direct.ridge_,
    }


# ------------------------------------------------------------------ input formats
@pytest.mark.parametrize(
    "name",
    [
        "penguins.csv.gz",
        "penguins.csv.bz2",
        "penguins.csv.zip",
        "penguins.tsv",
        "penguins.txt",
        "penguins_semicolon.csv",
        "penguins.parquet",
    ],  # fmt: skip
)
def test_every_format_gives_the_same_model(files, models, tmp_path, name):
    model = tmp_path / "m.bayesrule"
    ok(run("fit", files[name], "-t", "species", "-m", "mixed", "--kind", "year=categorical",
           "-o", model))  # fmt: skip
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    ok(run("predict", model, files["penguins.csv"], "--proba", "-o", a))
    ok(run("predict", models["mixed"], files[name], "--proba", "-o", b))
    expected = pd.read_csv(b)
    pd.testing.assert_frame_equal(pd.read_csv(a), expected, rtol=1e-10)


@pytest.mark.parametrize("name", ["penguins.csv", "penguins.csv.gz", "penguins.parquet",
                                  "penguins_semicolon.csv"])  # fmt: skip
def test_standard_input(files, models, name):
    fitted = run(
        "fit",
        "-",
        "-t",
        "species",
        "-f",
        ",".join(NUMERIC),
        "-o",
        files["dir"] / f"stdin_{name}.bayesrule",
        input=files[name].read_bytes(),
    )
    ok(fitted)  # fmt: skip
    result = ok(run("predict", models["lda"], "-", input=files[name].read_bytes()))
    pred = pd.read_csv(io.StringIO(result.stdout))
    assert pred.shape == (150, 1) and set(pred["prediction"]) <= {"Adelie", "Chinstrap", "Gentoo"}


def test_sep_option_and_its_errors(files, tmp_path):
    model = tmp_path / "m.bayesrule"
    ok(run("fit", files["penguins.tsv"], "--sep", "tab", "-t", "species", "-m", "mixed", "-o",
           model))  # fmt: skip
    line = error_line(run("fit", files["penguins.tsv"], "--sep", ";;", "-t", "species", "-o",
                          model))  # fmt: skip
    assert "--sep" in line


def test_missing_targets_are_dropped_with_a_count_or_refused(files, tmp_path):
    model = tmp_path / "m.bayesrule"
    result = ok(run("fit", files["penguins.csv"], "-t", "species", "-m", "mixed", "-o", model))
    assert "left out 2 rows whose target 'species' is missing (148 remain)" in result.stderr
    assert bayesrule.load(model).class_count_.sum() == 148
    line = error_line(
        run(
            "fit",
            files["penguins.csv"],
            "-t",
            "species",
            "-m",
            "mixed",
            "--missing-target",
            "error",
            "-o",
            tmp_path / "n.bayesrule",
        )  # fmt: skip
    )
    assert "missing in 2 rows (first: row 8)" in line


def test_nan_features_are_named_by_column(files, tmp_path):
    line = error_line(
        run(
            "fit",
            files["penguins.csv"],
            "-t",
            "species",
            "--drop",
            "island,sex",
            "-o",
            tmp_path / "m.bayesrule",
        )  # fmt: skip
    )
    assert "'bill_length_mm' (2 missing)" in line and "data row 4" in line
    assert "np." not in line


# ------------------------------------------------------------------ predict outputs
def test_predict_keep_columns_and_every_output_format(files, models, penguins, tmp_path):
    args = ["predict", models["mixed"], files["penguins.csv"], "--keep", "species,island",
            "--proba"]  # fmt: skip
    ok(run(*args, "-o", tmp_path / "p.csv"))
    ok(run(*args, "-o", tmp_path / "p.parquet"))
    ok(run(*args, "-o", tmp_path / "p.jsonl"))
    stdout = ok(run(*args, "-o", "-")).stdout
    csv = pd.read_csv(tmp_path / "p.csv")
    expected_cols = ["species", "island", "prediction", "proba_Adelie", "proba_Chinstrap",
                     "proba_Gentoo"]  # fmt: skip
    assert list(csv.columns) == expected_cols and len(csv) == len(penguins)
    pd.testing.assert_series_equal(csv["island"], penguins["island"])
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "p.parquet"), csv)
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    assert len(lines) == len(penguins)
    assert list(json.loads(lines[0])) == expected_cols
    jl = pd.read_json(tmp_path / "p.jsonl", lines=True)
    np.testing.assert_allclose(jl["proba_Gentoo"], csv["proba_Gentoo"])
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(stdout)), csv)


def test_keep_errors(files, models, tmp_path):
    line = error_line(run("predict", models["lda"], files["penguins.csv"], "--keep", "id", "-o",
                          tmp_path / "p.csv"))  # fmt: skip
    assert "--keep id: no such column" in line


# ------------------------------------------------------------------ evaluate
def test_evaluate_report_matches_scikit_learn(files, models, penguins, tmp_path):
    from sklearn.metrics import (
        confusion_matrix,
        log_loss,
        precision_recall_fscore_support,
    )

    report = tmp_path / "report"
    result = ok(run("evaluate", models["mixed"], files["penguins.csv"], "-o", report))
    for word in ("precision", "recall", "F1", "macro avg", "weighted avg", "log-loss"):
        assert word in result.stdout
    df = penguins[penguins["species"].notna()]
    model = bayesrule.load(models["mixed"])
    X, y = df.drop(columns="species"), df["species"].to_numpy()
    pred, proba = model.predict(X), model.predict_proba(X)
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["n_samples"] == 148 and metrics["target"] == "species"
    # the exact mean of -log p(true class), from the log-probabilities: no clipping
    true = np.searchsorted(model.classes_, y)
    exact = -np.mean(model.predict_log_proba(X)[np.arange(y.size), true])
    assert metrics["log_loss"] == pytest.approx(exact, rel=1e-12)
    # scikit-learn clips probabilities at machine epsilon, so it can only say less
    assert metrics["log_loss"] >= log_loss(y, proba, labels=model.classes_) - 1e-12
    for avg in ("macro", "weighted"):
        p, r, f, _ = precision_recall_fscore_support(y, pred, average=avg, zero_division=0)
        assert metrics[f"{avg}_avg"] == pytest.approx({"precision": p, "recall": r, "f1": f})
    p, r, f, s = precision_recall_fscore_support(y, pred, zero_division=0)
    per_class = pd.read_csv(report / "per_class.csv")
    np.testing.assert_allclose(per_class[["precision", "recall", "f1"]], np.column_stack([p, r, f]))
    assert per_class["support"].tolist() == s.tolist()
    counts = pd.read_csv(report / "confusion_counts.csv", index_col=0).to_numpy()
    np.testing.assert_array_equal(counts, confusion_matrix(y, pred))
    assert metrics["confusion_matrix"]["counts"] == counts.tolist()
    share = pd.read_csv(report / "confusion_matrix.csv", index_col=0).to_numpy()
    np.testing.assert_allclose(share, counts / counts.sum(axis=1, keepdims=True))
    png_ok(report / "confusion_matrix.png")


def test_evaluate_log_loss_is_scikit_learns_without_tiny_probabilities(files, models, penguins):
    from sklearn.metrics import log_loss

    result = ok(run("evaluate", models["lda"], files["penguins.csv"]))
    df = penguins[penguins["species"].notna()]
    model = bayesrule.load(models["lda"])
    proba = model.predict_proba(df[NUMERIC])
    y = df["species"].to_numpy()
    assert proba[np.arange(y.size), np.searchsorted(model.classes_, y)].min() > 1e-12
    assert f"log-loss {log_loss(y, proba, labels=model.classes_):.4f}" in result.stdout


def test_evaluate_warns_about_labels_the_model_never_saw(files, models, penguins, tmp_path):
    df = penguins.copy()
    df.loc[df.index[:5], "species"] = "Emperor"
    df.to_csv(tmp_path / "emperors.csv", index=False)
    report = tmp_path / "r"
    result = ok(run("evaluate", models["mixed"], tmp_path / "emperors.csv", "-o", report))
    assert "warning: the data hold label(s) the model has never seen: Emperor (5 rows)" in (
        result.stderr
    )
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["labels_not_in_model"] == ["Emperor"] and metrics["log_loss_rows"] == 143
    assert np.isfinite(metrics["log_loss"])


def test_confusion_matrix_labels_stay_inside_a_constrained_figure():
    from matplotlib.figure import Figure

    from bayesrule.plotting import ConfusionMatrixDisplay

    for size in ((6.0, 5.2), (6.4, 5.6)):
        fig = Figure(figsize=size, layout="constrained")
        disp = ConfusionMatrixDisplay(
            counts=np.array([[27, 12, 0], [15, 25, 0], [0, 0, 40]]),
            labels=np.array(["Adelie", "Chinstrap", "Gentoo"]),
        ).plot(ax=fig.subplots())
        fig.savefig(io.BytesIO(), format="png")
        renderer = fig._get_renderer()
        box = disp.ax_.yaxis.label.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= fig.bbox.width


# ------------------------------------------------------------------ info
def test_info_readable_and_json(files, models):
    text = ok(run("info", models["mixed"])).stdout
    for piece in ("MixedNB (mixed)", "species", "Adelie", "148 rows", "island (categorical)",
                  "year (categorical)", "format version 1"):  # fmt: skip
        assert piece in text, piece
    info = json.loads(ok(run("info", models["mixed"], "--json")).stdout)
    model = bayesrule.load(models["mixed"])
    assert info["estimator"] == "MixedNB" and info["target"] == "species"
    assert info["features"] == model.feature_names_in_.tolist()
    assert info["kinds"] == list(model.kinds_)
    assert [c["class"] for c in info["classes"]] == model.classes_.tolist()
    assert info["training_rows"] == 148 and info["training_weight"] == 148.0
    assert info["params"]["columns"] == {"year": "categorical"}
    assert info["format_version"] == 1


# ------------------------------------------------------------------ feedback
def test_spinner_only_on_a_terminal_and_not_with_quiet(monkeypatch):
    from bayesrule.cli import _feedback
    from bayesrule.cli._errors import state

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, quiet, shown in ((Terminal(), False, True), (Terminal(), True, False),
                                 (io.StringIO(), False, False)):  # fmt: skip
        monkeypatch.setitem(state, "quiet", quiet)
        with _feedback.busy("reading big.csv", stream=stream):
            pass
        assert ("reading big.csv" in stream.getvalue()) is shown


def test_demo_help_is_about_the_command():
    text = ok(run("demo", "--help")).stdout
    assert "lecture" not in text and "MNIST" in text


def test_load_mnist_from_a_wrong_path_is_an_error(monkeypatch, tmp_path):
    from bayesrule.datasets import load_mnist

    with pytest.raises(FileNotFoundError, match="/nonexistent"):
        load_mnist("/nonexistent")
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        load_mnist(tmp_path)
