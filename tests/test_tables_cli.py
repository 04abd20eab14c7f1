"""The ``bayesrule`` executable on tables as public data come: markers, outputs, names, Excel.

Each test runs the installed script in a real process (as a user would),
checks the exit status, that nothing prints a traceback, and what was
written. The tables are generated: a car table whose airbag column says
``None``, a penguin table with UCI-style ``?`` markers, a header written
``a, b, label``, a repeated column name, an Excel workbook.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pytest.importorskip("pyarrow")

import bayesrule  # noqa: E402
from bayesrule.cli._data import read_frame  # noqa: E402
from bayesrule.io import load  # noqa: E402

SCRIPT = Path(sys.executable).with_name("bayesrule")
FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


def cli(*args: object, code: int = 0, input: bytes | None = None) -> subprocess.CompletedProcess:
    """Run the command in a process; check its exit status and that no traceback shows."""
    cmd = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "bayesrule.cli"]
    src = str(Path(bayesrule.__file__).parents[1])  # the bayesrule under test
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        cmd + [str(a) for a in args], capture_output=True, timeout=300, env=env, input=input
    )
    proc.stdout = proc.stdout.decode("utf-8", errors="replace")
    proc.stderr = proc.stderr.decode("utf-8", errors="replace")
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    if code == 2:
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("bayesrule: error: "), lines
    return proc


def _penguins(n: int = 150, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    species = np.repeat(np.array(["Adelie", "Chinstrap", "Gentoo"]), n // 3)
    centre = {
        "Adelie": (38.8, 18.3, 190, 3700),
        "Chinstrap": (48.8, 18.4, 196, 3730),
        "Gentoo": (47.5, 15.0, 217, 5076),
    }
    values = np.array([centre[s] for s in species]) + rng.normal(size=(n, 4)) * [2.5, 1.1, 6, 420]
    df = pd.DataFrame(values.round(1), columns=FEATURES)
    df.insert(0, "island", np.where(species == "Gentoo", "Biscoe", "Dream"))
    df.insert(0, "species", species)
    return df


@pytest.fixture(scope="module")
def penguins() -> pd.DataFrame:
    return _penguins()


@pytest.fixture(scope="module")
def uci(tmp_path_factory, penguins) -> dict[str, object]:
    """The penguins with '?' for a missing number, as UCI tables write it."""
    folder = tmp_path_factory.mktemp("uci")
    df = penguins.astype({c: object for c in FEATURES})
    rng = np.random.default_rng(1)
    holes = {
        c: rng.choice(len(df), size=k, replace=False)
        for c, k in zip(FEATURES, (4, 3, 0, 2), strict=True)
    }
    for c, rows in holes.items():
        df.loc[rows, c] = "?"
    path = folder / "penguins.csv"
    df.to_csv(path, index=False)
    return {"path": path, "holes": holes, "folder": folder}


def test_none_is_a_category_not_a_missing_value(tmp_path):
    rng = np.random.default_rng(2)
    n = 120
    airbag = rng.choice(["None", "Driver only", "Driver & Passenger"], size=n, p=[0.5, 0.3, 0.2])
    price = rng.normal(20, 5, size=n) + (airbag == "None") * -6
    df = pd.DataFrame(
        {"airbag": airbag, "price": price.round(2), "type": rng.choice(["Small", "Large"], n)}
    )
    df.to_csv(tmp_path / "cars.csv", index=False)
    proc = cli("fit", tmp_path / "cars.csv", "-t", "type", "-m", "mixed", "-o", tmp_path / "m.br")
    assert "warning" not in proc.stderr
    model = load(tmp_path / "m.br")
    assert sorted(model.categories_["airbag"].tolist()) == sorted(set(airbag))
    assert model.class_count_.sum() == n  # no row lost


def test_a_question_mark_among_numbers_is_named_and_na_values_reads_it(uci, tmp_path):
    holes = uci["holes"]
    proc = cli("fit", uci["path"], "-t", "species", "-m", "mixed", "-o", tmp_path / "m.br")
    warned = [line for line in proc.stderr.splitlines() if "warning" in line]
    for c, rows in holes.items():  # every spoilt column, its token and count, and the remedy
        if len(rows):
            assert any(
                f"'{c}' holds numbers and {len(rows)} cells '?'" in w and "--na-values '?'" in w
                for w in warned
            ), (c, warned)
    cli("fit", uci["path"], "-t", "species", "-m", "mixed", "--na-values", "?", "-o",
        tmp_path / "m2.br")  # fmt: skip
    model = load(tmp_path / "m2.br")
    assert list(model.kinds_[1:]) == ["gaussian"] * 4  # island categorical, numbers Gaussian
    proc = cli("fit", uci["path"], "-t", "species", "--drop", "island", "-o", tmp_path / "l.br",
               code=2)  # fmt: skip
    assert "'bill_length_mm' holds numbers and 4 cells '?'" in proc.stderr
    assert "--na-values '?'" in proc.stderr
    # the streamed path reads the markers alike
    cli("fit", uci["path"], "-t", "species", "--drop", "island", "--na-values", "?", "--stream",
        "-m", "gnb", "-o", tmp_path / "s.br")  # fmt: skip
    streamed = load(tmp_path / "s.br")
    frame = pd.read_csv(uci["path"], na_values=["?"])
    ref = bayesrule.GaussianNB().fit(frame[FEATURES], frame["species"])
    np.testing.assert_allclose(streamed.theta_, ref.theta_, rtol=1e-10)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory, penguins) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("fitted")
    penguins.to_csv(folder / "p.csv", index=False)
    cli("fit", folder / "p.csv", "-t", "species", "--drop", "island", "-o", folder / "lda.br")
    return {"csv": folder / "p.csv", "model": folder / "lda.br", "folder": folder}


def test_every_command_writes_every_table_format_it_reads(fitted, penguins, tmp_path):
    suffixes = [".tsv", ".csv.gz", ".csv.bz2", ".tsv.xz", ".csv.zst", ".csv.zip", ".jsonl.gz",
                ".parquet", ".txt"]  # fmt: skip
    if _has("openpyxl"):
        suffixes.append(".xlsx")
    cli("predict", fitted["model"], fitted["csv"], "--proba", "-k", "species", "-o",
        tmp_path / "p.csv")  # fmt: skip
    reference = read_frame(tmp_path / "p.csv")
    assert len(reference) == len(penguins)
    for suffix in suffixes:
        out = tmp_path / f"p{suffix}"
        cli("predict", fitted["model"], fitted["csv"], "--proba", "-k", "species", "-o", out)
        back = read_frame(out)
        assert list(back.columns) == list(reference.columns), suffix
        rtol = 1e-15 if suffix == ".xlsx" else 0
        np.testing.assert_allclose(back["proba_Adelie"], reference["proba_Adelie"], rtol=rtol)
        assert back["prediction"].tolist() == reference["prediction"].tolist(), suffix
    # streamed, block by block, to a compressed TSV
    cli("predict", fitted["model"], fitted["csv"], "--proba", "-k", "species", "--block-rows",
        "40", "-o", tmp_path / "s.tsv.gz")  # fmt: skip
    pd.testing.assert_frame_equal(read_frame(tmp_path / "s.tsv.gz"), reference)
    cli("predict", fitted["model"], fitted["csv"], "-o", "/dev/null")
    proc = cli("predict", fitted["model"], fitted["csv"], "-o", tmp_path / "p.json", code=2)
    assert "cannot write a table as '.json'; use .csv" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_sample_writes_to_standard_output_and_compressed_files(fitted, tmp_path):
    proc = cli("sample", fitted["model"], "-n", "3", "-o", "-")
    import io

    table = pd.read_csv(io.StringIO(proc.stdout))
    assert list(table.columns) == [*FEATURES, "class"] and len(table) == 9
    cli("sample", fitted["model"], "-n", "3", "-o", tmp_path / "s.tsv.xz")
    back = read_frame(tmp_path / "s.tsv.xz")
    pd.testing.assert_frame_equal(back, table)  # the same seed: the same rows, every digit


def test_header_spaces_are_stripped_and_near_names_suggested(penguins, tmp_path):
    text = penguins.to_csv(index=False).replace(",", ", ")
    (tmp_path / "spaced.csv").write_text(text)
    cli("fit", tmp_path / "spaced.csv", "-t", "species", "--drop", "island", "-o",
        tmp_path / "m.br")  # fmt: skip
    model = load(tmp_path / "m.br")
    assert list(model.feature_names_in_) == FEATURES
    assert model.classes_.tolist() == ["Adelie", "Chinstrap", "Gentoo"]
    proc = cli("fit", tmp_path / "spaced.csv", "-t", "Species", "-o", tmp_path / "x.br", code=2)
    assert "no column 'Species' for --target (did you mean 'species'?)" in proc.stderr
    proc = cli("fit", tmp_path / "spaced.csv", "-t", "species", "-f", "bill_lenght_mm", "-o",
               tmp_path / "x.br", code=2)  # fmt: skip
    assert "--features bill_lenght_mm: no such column (did you mean 'bill_length_mm'?)" in (
        proc.stderr
    )


def test_a_repeated_column_name_is_refused_naming_it(penguins, tmp_path):
    df = penguins.iloc[:30]
    text = df.to_csv(index=False).replace("body_mass_g", "island", 1)
    (tmp_path / "dup.csv").write_text(text)
    proc = cli("fit", tmp_path / "dup.csv", "-t", "species", "-o", tmp_path / "m.br", code=2)
    assert "the column name 'island' is used twice (columns 2 and 6)" in proc.stderr
    assert not (tmp_path / "m.br").exists()


def _has(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def test_excel_is_read_like_the_csv_and_sheets_are_named(fitted, penguins, tmp_path):
    pytest.importorskip("openpyxl")
    book = tmp_path / "p.xlsx"
    with pd.ExcelWriter(book, engine="openpyxl") as xw:
        penguins.iloc[:10].to_excel(xw, sheet_name="notes", index=False)
        penguins.to_excel(xw, sheet_name="data", index=False)
    cli("fit", book, "--sheet", "data", "-t", "species", "--drop", "island", "-o",
        tmp_path / "x.br")  # fmt: skip
    from_excel, from_csv = load(tmp_path / "x.br"), load(fitted["model"])
    np.testing.assert_allclose(from_excel.means_, from_csv.means_, rtol=1e-13)
    proc = cli("predict", fitted["model"], book, "--sheet", "train", "-o", "-", code=2)
    assert "no sheet 'train'; its sheets are 'notes', 'data'" in proc.stderr
    proc = cli("predict", fitted["model"], fitted["csv"], "--sheet", "data", "-o", "-", code=2)
    assert "sheets are Excel's" in proc.stderr


def test_standard_input_is_read_in_every_format_by_its_content(fitted, penguins, tmp_path):
    import io

    expected = cli("predict", fitted["model"], fitted["csv"], "-o", "-").stdout
    sources = {"jsonl": penguins.to_json(orient="records", lines=True).encode()}
    if _has("openpyxl"):
        buffer = io.BytesIO()
        penguins.to_excel(buffer, index=False, engine="openpyxl")
        sources["xlsx"] = buffer.getvalue()
    for name, data in sources.items():
        proc = cli("predict", fitted["model"], "-", "-o", "-", input=data)
        assert proc.stdout == expected, name


def test_mixed_fit_says_which_kinds_it_inferred_and_where_the_reasons_are(tmp_path: Path) -> None:
    df = _penguins()
    df["chicks"] = np.random.default_rng(1).poisson(2.0, len(df))
    path = tmp_path / "p.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "m.bayesrule"
    proc = cli("fit", path, "-t", "species", "-m", "mixed", "-o", out)
    line = next(s for s in proc.stderr.splitlines() if s.startswith("kinds:"))
    kinds = dict(zip(load(out).feature_names_in_, load(out).kinds_, strict=True))
    for column, kind in kinds.items():
        assert f"{column} {kind}" in line
    assert f"bayesrule info {out} says why" in line
    info = cli("info", out)
    assert "inferred" in info.stdout


@pytest.mark.parametrize("labels", ["text", "integers"])
def test_priors_by_label_on_the_command_line(tmp_path: Path, labels: str) -> None:
    df = _penguins()
    names = {"Adelie": 0, "Chinstrap": 1, "Gentoo": 2}
    if labels == "integers":
        df["species"] = df["species"].map(names)
        keys = ["0", "1", "2"]
    else:
        keys = list(names)
    path = tmp_path / "p.csv"
    df.drop(columns=["island"]).to_csv(path, index=False)
    out = tmp_path / "m.bayesrule"
    given = dict(zip(keys, [0.2, 0.3, 0.5], strict=True))
    import json

    cli(
        "fit", path, "-t", "species", "-m", "gnb", "--set", f"priors={json.dumps(given)}", "-o", out
    )
    np.testing.assert_allclose(load(out).priors_, [0.2, 0.3, 0.5])
    wrong = json.dumps({**dict(list(given.items())[:2]), "Emperor": 0.5})
    proc = cli(
        "fit", path, "-t", "species", "-m", "gnb", "--set", f"priors={wrong}", "-o", out, code=2
    )
    assert "Emperor" in proc.stderr
