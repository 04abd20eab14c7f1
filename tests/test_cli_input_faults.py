"""Input faults of the command line and the streamed reader (audit 2: A1, B3-B7, C1, C3)."""

from __future__ import annotations

import decimal

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
from typer.testing import CliRunner  # noqa: E402

import bayesrule  # noqa: E402
from bayesrule.cli._app import app  # noqa: E402


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def error(result) -> str:
    return " ".join(result.output.split())


@pytest.fixture
def base(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    df = pd.DataFrame(rng.normal(size=(200, 3)) + y[:, None], columns=list("abc"))
    df["label"] = np.array(list("xyz"))[y]
    df.to_parquet(tmp_path / "base.parquet", index=False)
    assert (
        run(
            "fit", tmp_path / "base.parquet", "-t", "label", "-o", tmp_path / "m.bayesrule"
        ).exit_code
        == 0
    )
    return df


# ------------------------------------------------------------------ A1: duplicate names, streamed
@pytest.mark.parametrize("command", ["fit", "predict", "evaluate"])
def test_duplicate_column_name_streamed(tmp_path, base, command):
    d = base
    table = pa.Table.from_arrays(
        [pa.array(d.a), pa.array(d.b), pa.array(d.c), pa.array(d.label), pa.array(d.a)],
        names=["a", "b", "c", "label", "a"],
    )
    path = tmp_path / "dup2.parquet"
    pq.write_table(table, path)
    if command == "fit":
        args = ["fit", path, "-t", "label", "-o", tmp_path / "o.bayesrule"]
    elif command == "predict":
        args = ["predict", tmp_path / "m.bayesrule", path, "-o", tmp_path / "p.csv"]
    else:
        args = ["evaluate", tmp_path / "m.bayesrule", path]
    for stream in ("--stream", "--no-stream"):
        r = run(*args, stream)
        assert r.exit_code != 0
        text = error(r)
        assert "AttributeError" not in text
        assert "dup2.parquet: the column name 'a' is used twice (columns 1 and 5)" in text


# ------------------------------------------------------------------ B3: int / float parts
def test_mixed_int_and_float_parts_streamed_equals_in_memory(tmp_path, base):
    folder = tmp_path / "dir_int"
    folder.mkdir()
    head = base.iloc[:100].copy()
    head["b"] = head["b"].round().astype("int64")
    head.to_parquet(folder / "part-0.parquet", index=False)
    base.iloc[100:].to_parquet(folder / "part-1.parquet", index=False)
    out_s, out_m = tmp_path / "s.bayesrule", tmp_path / "m2.bayesrule"
    r = run("fit", folder, "-t", "label", "-m", "mixed", "--stream", "-o", out_s)
    assert r.exit_code == 0, r.output
    r = run("fit", folder, "-t", "label", "-m", "mixed", "--no-stream", "-o", out_m)
    assert r.exit_code == 0, r.output
    from bayesrule.io import load

    a, b = load(out_s), load(out_m)
    assert a.describe() == b.describe()
    X = base[list("abc")]
    np.testing.assert_allclose(a.predict_log_proba(X), b.predict_log_proba(X), rtol=1e-10)
    est = bayesrule.fit_stream(bayesrule.MixedNB(), str(folder), target="label")
    np.testing.assert_allclose(est.predict_log_proba(X), b.predict_log_proba(X), rtol=1e-10)


# ------------------------------------------------------------------ B4: decimals, dates, lists
@pytest.fixture
def decimal_file(tmp_path, base):
    values = [decimal.Decimal(f"{v:.17f}") for v in base.a]
    table = pa.table(
        {
            "a": pa.array(values, pa.decimal128(38, 17)),
            "b": base.b.values,
            "label": base.label.values,
        }
    )
    path = tmp_path / "decimal.parquet"
    pq.write_table(table, path)
    return path, np.array([float(v) for v in values])


@pytest.mark.parametrize("model", ["lda", "gnb", "mixed"])
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_decimal_columns_are_numbers(tmp_path, decimal_file, base, model, stream):
    path, exact = decimal_file
    out = tmp_path / "d.bayesrule"
    r = run("fit", path, "-t", "label", "-m", model, stream, "-o", out)
    assert r.exit_code == 0, r.output
    # the same model as on the floats each decimal is nearest to
    floats = tmp_path / "floats.parquet"
    pd.DataFrame({"a": exact, "b": base.b, "label": base.label}).to_parquet(floats, index=False)
    ref = tmp_path / "f.bayesrule"
    assert run("fit", floats, "-t", "label", "-m", model, "--no-stream", "-o", ref).exit_code == 0
    from bayesrule.io import load

    X = pd.DataFrame({"a": exact, "b": base.b})
    np.testing.assert_allclose(
        load(out).predict_log_proba(X), load(ref).predict_log_proba(X), rtol=1e-9, atol=1e-12
    )


def test_decimals_read_exactly(decimal_file):
    from bayesrule.cli._read_table import read_frame

    path, exact = decimal_file
    df = read_frame(path)
    assert df["a"].dtype == np.float64
    assert np.array_equal(df["a"].to_numpy(), exact)
    blocks = list(bayesrule.read_blocks(str(path), target="label", features=["a"]))
    assert np.array_equal(np.concatenate([b[0][:, 0] for b in blocks]), exact)


def _other_types(base):
    import datetime

    n = len(base)
    return {
        "dt": (pa.array([datetime.date(2024, 1, 1)] * n), "dates (date32[day])"),
        "ts": (pa.array(pd.date_range("2024-01-01", periods=n).to_numpy()), "timestamps"),
        "lst": (pa.array([[1.0, 2.0]] * n), "lists"),
        "st": (pa.array([{"u": 1.0}] * n), "structs"),
    }


@pytest.mark.parametrize("column", ["dt", "ts", "lst", "st"])
@pytest.mark.parametrize("model", ["lda", "mixed"])
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_unsupported_types_refused_clearly(tmp_path, base, column, model, stream):
    values, words = _other_types(base)[column]
    table = pa.table({"a": base.a.values, column: values, "label": base.label.values})
    path = tmp_path / "other.parquet"
    pq.write_table(table, path)
    r = run("fit", path, "-t", "label", "-m", model, stream, "-o", tmp_path / "o.bayesrule")
    assert r.exit_code != 0
    text = error(r)
    assert f"other.parquet: the column {column!r} holds {words}" in text
    assert "--drop" in text
    assert "--model mixed" not in text and " X" not in text and "argument" not in text
    # leaving it out works
    r = run(
        "fit",
        path,
        "-t",
        "label",
        "-m",
        model,
        stream,
        "--drop",
        column,
        "-o",
        tmp_path / "o.bayesrule",
    )
    assert r.exit_code == 0, r.output


def test_unsupported_type_fit_stream_names_file(tmp_path, base):
    values, _ = _other_types(base)["dt"]
    path = tmp_path / "dates.parquet"
    pq.write_table(pa.table({"a": base.a.values, "dt": values, "label": base.label.values}), path)
    with pytest.raises(ValueError, match=r"dates.parquet: the column 'dt' holds dates"):
        bayesrule.fit_stream(bayesrule.MixedNB(), str(path), target="label")


def test_mixed_refusal_of_objects_names_the_value():
    import datetime

    X = pd.DataFrame({"a": [datetime.date(2020, 1, 1)] * 4})
    with pytest.raises(TypeError) as info:
        bayesrule.MixedNB().fit(X, [0, 1, 0, 1])
    text = str(info.value)
    assert "holds a date at row 0" in text and "of X" not in text and "leave it out" in text


# ------------------------------------------------------------------ Excel: B5, B6, B7
openpyxl = pytest.importorskip("openpyxl")


def _workbook(base):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(list(base.columns))
    for row in base.itertuples(index=False):
        ws.append(list(row))
    return wb, ws


def test_excel_huge_whole_number_is_a_float(tmp_path, base):
    from bayesrule.cli._read_table import read_frame

    wb, ws = _workbook(base)
    ws.cell(5, 2).value = 1e308
    path = tmp_path / "hugex.xlsx"
    wb.save(path)
    df = read_frame(path)
    assert df["b"].dtype == np.float64 and df["b"][3] == 1e308
    r = run("fit", path, "-t", "label", "-o", tmp_path / "o.bayesrule")
    assert "not numeric" not in error(r)


def test_excel_formulas_without_values_refused(tmp_path, base):
    wb, ws = _workbook(base)
    for r in range(2, 12):
        ws.cell(r, 1).value = f"=B{r}*2"
    path = tmp_path / "formula.xlsx"
    wb.save(path)
    r = run("fit", path, "-t", "label", "-m", "gnb", "-o", tmp_path / "o.bayesrule")
    assert r.exit_code != 0
    text = error(r)
    assert "formula.xlsx, sheet 'Sheet': 10 formula cells" in text
    assert "'a'" in text and "A2 '=B2*2'" in text and "save it" in text


def test_excel_empty_first_sheet_names_the_others(tmp_path):
    wb = openpyxl.Workbook()
    wb.active.title = "data"
    wb.active.append(["a", "label"])
    for i in range(6):
        wb.active.append([i, "xy"[i % 2]])
    wb.create_sheet("empty", 0)
    path = tmp_path / "sheets.xlsx"
    wb.save(path)
    r = run("fit", path, "-t", "label", "-m", "gnb", "-o", tmp_path / "o.bayesrule")
    assert r.exit_code != 0
    text = error(r)
    assert "the first sheet 'empty' has no rows" in text
    assert "'data' holds rows" in text and "--sheet data" in text
    r = run(
        "fit", path, "-t", "label", "-m", "gnb", "--sheet", "data", "-o", tmp_path / "o.bayesrule"
    )
    assert r.exit_code == 0, r.output


# ------------------------------------------------------------------ C1: booleans with nulls
def _nullbool(tmp_path, base):
    d = base.copy()
    flag = pd.array(np.arange(len(d)) % 3 == 0, dtype="boolean")
    flag[::5] = pd.NA
    d["flag"] = flag
    path = tmp_path / "nullbool.parquet"
    d.to_parquet(path, index=False)
    return path


def test_nullable_booleans_same_in_memory_and_streamed(tmp_path, base):
    path = _nullbool(tmp_path, base)
    texts = []
    for stream in ("--stream", "--no-stream"):
        r = run("fit", path, "-t", "label", "-m", "lda", stream, "-o", tmp_path / "o.bayesrule")
        assert r.exit_code != 0
        text = error(r)
        assert "not numeric" not in text and "Input X" not in text
        assert "nullbool.parquet: missing" in text and "cells in 'flag'" in text
        assert "(first in data row 1)" in text
        texts.append(text)
        r = run("fit", path, "-t", "label", "-m", "gnb", stream, "-o", tmp_path / "o.bayesrule")
        assert r.exit_code == 0, r.output


# ------------------------------------------------------------------ C3: inferred, not declared
@pytest.mark.parametrize("kind", ["dict", "bool"])
def test_streamed_mixed_counts_inferred_kinds(tmp_path, base, kind):
    d = base.copy()
    rng = np.random.default_rng(1)
    if kind == "dict":
        d["extra"] = pd.Categorical(np.array(["p", "q"])[rng.integers(0, 2, len(d))])
    else:
        d["extra"] = rng.integers(0, 2, len(d)).astype(bool)
    path = tmp_path / "k.parquet"
    d.to_parquet(path, index=False)
    lines = []
    for stream in ("--stream", "--no-stream"):
        r = run("fit", path, "-t", "label", "-m", "mixed", stream, "-o", tmp_path / "o.bayesrule")
        assert r.exit_code == 0, r.output
        assert "(inferred: 4, declared: 0;" in r.output
        lines.append(r.output)
    r = run(
        "fit",
        path,
        "-t",
        "label",
        "-m",
        "mixed",
        "--stream",
        "--kind",
        "a=gaussian",
        "-o",
        tmp_path / "o.bayesrule",
    )
    assert "(inferred: 3, declared: 1;" in r.output
