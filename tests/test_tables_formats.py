"""Tables as they come, read and written from Python: the one suffix table of bayesrule.io.formats.

Generated tables stand for the classes of input: every kind of column
(floats, integers, text, booleans written as text) carrying each marker of a
missing value, every output suffix written and read back, separators and
decimal commas, header names with spaces, repeated names, pandas' index
columns in Parquet and CSV files, and Excel workbooks. The readers are
``bayesrule.cli._data.read_frame`` (the command line, pandas) and
``bayesrule.read_blocks`` / ``fit_stream`` (pyarrow, block by block); they
must agree.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from bayesrule import GaussianNB, LinearDiscriminantAnalysis, MixedNB  # noqa: E402
from bayesrule.backends.stream import fit_stream, predict_stream, read_blocks  # noqa: E402
from bayesrule.cli._data import UsageError, read_frame  # noqa: E402
from bayesrule.io.formats import (  # noqa: E402
    COMPRESSIONS,
    FORMATS,
    NA_VALUES,
    clean_names,
    compression_of,
    index_columns,
    lone_token,
    near_name,
    output_format,
    replacing,
    sniff_compression,
    sniff_separator,
    strip_compression,
    table_path,
    write_frames,
)

#: output suffixes: every format, and every compression of the text formats
TEXT_SUFFIXES = [".csv", ".tsv", ".txt", ".tab", ".jsonl", ".ndjson"]
COMPRESSION_SUFFIXES = ["", ".gz", ".bz2", ".xz", ".zst", ".zip"]
ALL_SUFFIXES = [t + c for t in TEXT_SUFFIXES for c in COMPRESSION_SUFFIXES] + [
    ".parquet",
    ".pq",
    ".xlsx",
]


def _table(n: int = 60, seed: int = 0) -> pd.DataFrame:
    """Every kind of column: floats, integers, text, booleans as text, and a label."""
    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b", "c"], n // 3)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n) + (y == "b") * 3.0,
            "k": rng.integers(0, 50, size=n),
            "colour": rng.choice(["red", "green", "None"], size=n),
            "flag": rng.choice(["true", "false"], size=n),
            "label": y,
        }
    )


def _csv_text(df: pd.DataFrame, sep: str = ",", decimal: str = ".") -> str:
    return df.to_csv(index=False, sep=sep, decimal=decimal)


# ------------------------------------------------------------------ the suffix table
def test_every_reader_and_writer_uses_one_suffix_table():
    for suffix, fmt in FORMATS.items():
        assert table_path(f"t{suffix}").format is fmt
        assert output_format(Path(f"t{suffix}")).format is fmt
        if fmt.compressible:
            for c in COMPRESSION_SUFFIXES[1:]:
                assert table_path(f"t{suffix}{c.upper()}").format is fmt
        else:
            assert table_path(f"t{suffix}.gz") is None
    assert table_path("t.zip") is None and table_path("notes") is None
    with pytest.raises(ValueError, match=r"cannot write a table as '\.parquet\.gz'.*compresses"):
        output_format(Path("t.parquet.gz"))
    with pytest.raises(ValueError, match=r"cannot write a table as '\.json'; use \.csv"):
        output_format(Path("t.json"))


@pytest.mark.parametrize("suffix", [*FORMATS, ".npy", ".bayesrule", ""])
def test_compression_suffixes_come_from_the_one_table(suffix):
    name = f"data.v2{suffix}"
    assert strip_compression(name) == name and compression_of(name) is None
    for c, compression in COMPRESSIONS.items():
        for spelt in (c, c.upper()):
            assert strip_compression(name + spelt) == name
            assert compression_of(Path(name + spelt)) == compression
            found = table_path(name + spelt)
            if found is not None:  # a compressible table: the same compression
                assert found.compression == compression
    assert COMPRESSION_SUFFIXES[1:] == [c for c in COMPRESSION_SUFFIXES[1:] if c in COMPRESSIONS]
    assert strip_compression(name + ".gz.gz") == name + ".gz"  # one compression suffix


@pytest.mark.parametrize("compression", sorted(set(COMPRESSIONS.values())))
def test_a_compressed_stream_is_told_by_its_first_bytes(tmp_path, compression):
    path = tmp_path / f"t.csv{next(s for s, c in COMPRESSIONS.items() if c == compression)}"
    write_frames([_table(6)], path, output_format(path))
    assert sniff_compression(path.read_bytes()[:16]) == compression
    text = _csv_text(_table(6)).encode()
    assert sniff_compression(text) is None and sniff_compression(b"") is None


def test_a_zip_table_holds_one_file_named_after_the_archive(tmp_path):
    import zipfile

    for archive in ("t.csv.zip", "t.jsonl.ZIP"):
        path = tmp_path / archive
        write_frames([_table(9)], path, output_format(path))  # name= left to the default
        with zipfile.ZipFile(path) as zf:
            assert zf.namelist() == [strip_compression(archive)]
        assert len(read_frame(path)) == 9
    assert output_format(Path("-")).name == "CSV"
    assert output_format(Path("/dev/null")).name == "CSV"


@pytest.mark.parametrize("suffix", ALL_SUFFIXES)
def test_every_output_suffix_is_read_back_equal(tmp_path, suffix):
    if suffix == ".xlsx":
        pytest.importorskip("openpyxl")
    df = _table()
    df.loc[3, "x"] = np.nan  # a missing value survives the round trip
    path = tmp_path / f"t{suffix}"
    kind = output_format(path)
    halves = [df.iloc[:25], df.iloc[25:]]  # written block by block
    with replacing(path) as tmp:
        assert write_frames(halves, tmp, kind, name=path.name.removesuffix(".zip")) == len(df)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left
    back = read_frame(path)
    assert list(back.columns) == list(df.columns)
    if suffix == ".xlsx":  # openpyxl writes 16 significant digits (Excel keeps 15)
        np.testing.assert_allclose(back["x"].to_numpy(), df["x"].to_numpy(), rtol=1e-15)
    else:
        np.testing.assert_array_equal(back["x"].to_numpy(), df["x"].to_numpy())  # every digit
    np.testing.assert_array_equal(back["k"].to_numpy(), df["k"].to_numpy())
    for c in ("colour", "flag", "label"):  # "None" is a value, not a missing one
        # (true/false may come back as booleans)
        assert back[c].astype(str).str.lower().tolist() == df[c].str.lower().tolist(), c


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "p.csv.gz"
    path.write_text("old")

    def blocks():
        yield _table().iloc[:10]
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"), replacing(path) as tmp:
        write_frames(blocks(), tmp, output_format(path))
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["p.csv.gz"]


def test_predict_stream_writes_every_format_and_nothing_on_error(tmp_path):
    df = _table(90)
    src = tmp_path / "d.csv"
    src.write_text(_csv_text(df))
    est = fit_stream(GaussianNB(), src, target="label", features=["x", "k"])
    expected = est.predict(df[["x", "k"]])
    for suffix in [".csv", ".tsv.gz", ".csv.xz", ".jsonl.bz2", ".parquet", ".csv.zst", ".csv.zip"]:
        out = predict_stream(est, src, tmp_path / f"p{suffix}", block_rows=40, keep="label")
        back = read_frame(out)
        assert list(back.columns) == ["label", "prediction"], suffix
        assert back["prediction"].astype(str).tolist() == expected.tolist(), suffix
    # a cell that is not a number in a later block: no output file, no temporary file
    bad = df.copy().astype({"x": object})
    bad.loc[70, "x"] = "oops"
    (tmp_path / "bad.csv").write_text(_csv_text(bad))
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ValueError, match=r"column 'x' at data row 71 .* holds 'oops'"):
        predict_stream(est, tmp_path / "bad.csv", tmp_path / "q.csv", block_rows=20)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    with pytest.raises(ValueError, match=r"cannot write a table as '\.json'"):
        predict_stream(est, src, tmp_path / "p.json")
    predict_stream(est, src, "/dev/null")  # a device is written, never replaced


# ------------------------------------------------------------------ missing-value markers
KINDS = {
    "x": lambda rng, n: rng.normal(size=n).round(3),
    "k": lambda rng, n: rng.integers(0, 9, size=n),
    "colour": lambda rng, n: rng.choice(["red", "green"], size=n),
    "flag": lambda rng, n: rng.choice(["true", "false"], size=n),
}


def _with_marker(marker: str, seed: int = 0, n: int = 40) -> tuple[pd.DataFrame, np.ndarray]:
    """Every kind of column, with ``marker`` written in a few random cells of each."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({c: make(rng, n) for c, make in KINDS.items()}).astype(object)
    holes = rng.random((n, len(KINDS))) < 0.15
    holes[0] = False  # the first row is complete
    for j, c in enumerate(KINDS):
        df.loc[holes[:, j], c] = marker
    df["label"] = np.repeat(["a", "b"], n // 2)
    return df, holes


@pytest.mark.parametrize("marker", NA_VALUES)
def test_each_default_marker_is_missing_in_every_kind_of_column(tmp_path, marker):
    df, holes = _with_marker(marker)
    path = tmp_path / "t.csv"
    path.write_text(_csv_text(df))
    back = read_frame(path)
    np.testing.assert_array_equal(back[list(KINDS)].isna().to_numpy(), holes)
    assert back["x"].dtype.kind == "f" and back["k"].dtype.kind in "fi"
    # the block reader agrees, cell for cell
    (X, _), *rest = read_blocks(path, target="label", frame=True)
    assert not rest
    np.testing.assert_array_equal(X[list(KINDS)].isna().to_numpy(), holes)


@pytest.mark.parametrize("marker", ["None", "?", "-", "missing", "NONE", "na"])
def test_other_texts_are_values_unless_asked_for(tmp_path, marker):
    df, holes = _with_marker(marker, seed=1)
    path = tmp_path / "t.csv"
    path.write_text(_csv_text(df))
    back = read_frame(path)
    assert not back[list(KINDS)].isna().to_numpy().any()
    assert (back["colour"] == marker).sum() == holes[:, 2].sum()
    # a numeric column holding one repeated text: the reader says so (the CLI path warns)
    assert lone_token(back["x"]) == (marker, int(holes[:, 0].sum()))
    asked = read_frame(path, na_values=[marker])
    np.testing.assert_array_equal(asked[list(KINDS)].isna().to_numpy(), holes)
    assert asked["x"].dtype.kind == "f"
    (X, _), *_ = read_blocks(path, target="label", frame=True, na_values=marker)
    np.testing.assert_array_equal(X[list(KINDS)].isna().to_numpy(), holes)


def test_a_token_among_numbers_is_warned_about_or_refused_with_na_values(tmp_path):
    df, holes = _with_marker("?", seed=2, n=60)
    path = tmp_path / "t.csv"
    path.write_text(_csv_text(df))
    count = int(holes[:, 0].sum())
    with pytest.warns(UserWarning, match=rf"column 'x' holds numbers and {count} cells '\?'.*"
                      r"na_values=\['\?'\]"):  # fmt: skip
        MixedNB_fit = fit_stream(MixedNB(), path, target="label", max_values=None)
    assert MixedNB_fit.kinds_[0] == "categorical"  # what the warning is about
    with pytest.raises(ValueError, match=r"column 'x' at data row \d+ .*holds '\?'.*"
                       r"na_values=\['\?'\]"):  # fmt: skip
        fit_stream(GaussianNB(), path, target="label", features=["x", "k"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed = fit_stream(MixedNB(), path, target="label", max_values=None, na_values=["?"])
    assert fixed.kinds_[0] == "gaussian"


def test_na_values_must_be_text():
    with pytest.raises(TypeError, match=r"na_values must hold strings.*got 3"):
        list(read_blocks([], na_values=[3]))  # checked before any file is read


def test_lone_token_needs_numbers_and_one_token():
    s = pd.Series
    assert lone_token(s(["1", "2", "?", "?"])) == ("?", 2)
    assert lone_token(s(["1", "2", "?", "-"])) is None  # two tokens: text
    assert lone_token(s(["a", "b"])) is None  # no numbers
    assert lone_token(s([1.0, np.nan])) is None  # numbers already
    assert lone_token(s(["1", None, " ? "])) == ("?", 1)


# ------------------------------------------------------------------ separators and decimals
@pytest.mark.parametrize(
    ("sep", "decimal"), [(",", "."), (";", ","), (";", "."), ("\t", "."), ("|", ".")]
)
def test_fit_stream_sniffs_the_separator_and_decimal_mark(tmp_path, sep, decimal):
    df = _table(90)[["x", "k", "label"]]
    path = tmp_path / "t.csv"
    path.write_text(_csv_text(df, sep, decimal))
    reference = GaussianNB().fit(df[["x", "k"]], df["label"])
    for kwargs in ({}, {"sep": sep, "decimal": decimal}):
        est = fit_stream(GaussianNB(), path, target="label", block_rows=40, **kwargs)
        assert list(est.feature_names_in_) == ["x", "k"]
        np.testing.assert_allclose(est.theta_, reference.theta_, rtol=1e-12)
    np.testing.assert_allclose(read_frame(path)["x"], df["x"])  # the CLI reads it alike


def test_sep_and_decimal_are_checked(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(_csv_text(_table()))
    with pytest.raises(ValueError, match="sep must be one character; got ';;'"):
        fit_stream(GaussianNB(), path, target="label", sep=";;")
    with pytest.raises(ValueError, match=r"decimal ',' is also the separator"):
        fit_stream(GaussianNB(), path, target="label", sep=",", decimal=",")
    with pytest.raises(ValueError, match="sep and decimal apply to CSV files"):
        fit_stream(GaussianNB(), _parquet(tmp_path, _table()), target="label", sep=";")


def test_sniffing_prefers_the_separator_that_splits_every_line_alike():
    assert sniff_separator("a;b;c\n1,5;2;x\n", ",") == ";"
    assert sniff_separator("a,b\n1,2\n", "\t") == ","
    assert sniff_separator("a\tb\n1\t2\n", ",") == "\t"
    assert sniff_separator("", ",") == ","


# ------------------------------------------------------------------ header names
def test_spaces_after_the_separators_are_not_part_of_names_or_values(tmp_path):
    df = _table(60)[["x", "k", "colour", "label"]]
    text = _csv_text(df).replace(",", ", ")
    path = tmp_path / "t.csv"
    path.write_text(text.replace("x, k", " x , k", 1))
    back = read_frame(path)
    assert list(back.columns) == ["x", "k", "colour", "label"]
    assert back["label"].tolist() == df["label"].tolist()  # not " a"
    np.testing.assert_allclose(back["x"], df["x"])
    est = fit_stream(MixedNB(), path, target="label", max_values=None)
    assert list(est.feature_names_in_) == ["x", "k", "colour"]
    assert est.classes_.tolist() == ["a", "b", "c"]
    assert est.categories_["colour"].tolist() == sorted(set(df["colour"]))


def test_clean_names_and_near_names():
    assert clean_names([" a", "b ", ""], "t") == ["a", "b", "Unnamed: 2"]
    with pytest.raises(
        ValueError, match=r"t: the column name 'a' is used twice \(columns 1 and 3\)"
    ):
        clean_names(["a", "b", " a"], "t")
    assert near_name("Species", ["species", "island"]) == "species"
    assert near_name("bill_lenght_mm", ["bill_length_mm", "island"]) == "bill_length_mm"
    assert near_name("zzz", ["species", "island"]) is None


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".csv.gz", ".xlsx", ".parquet"])
def test_a_repeated_column_name_is_refused_by_every_reader(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    rows = [["island", "x", "island", "label"], ["Dream", 1.0, "Biscoe", "a"],
            ["Dream", 2.0, "Dream", "b"]]  # fmt: skip
    if suffix == ".xlsx":
        openpyxl = pytest.importorskip("openpyxl")
        book = openpyxl.Workbook()
        for row in rows:
            book.active.append(row)
        book.save(path)
    elif suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = list(zip(*rows[1:], strict=True))
        pq.write_table(pa.table([pa.array(c) for c in cols], names=rows[0]), path)
    else:
        sep = "\t" if ".tsv" in suffix else ","
        text = "\n".join(sep.join(map(str, r)) for r in rows) + "\n"
        opener = __import__("gzip").open if suffix.endswith(".gz") else open
        with opener(path, "wt") as fh:
            fh.write(text)
    with pytest.raises(UsageError, match=r"the column name 'island' is used twice"):
        read_frame(path)
    if suffix != ".xlsx":
        with pytest.raises(ValueError, match=r"the column name 'island' is used twice"):
            fit_stream(GaussianNB(), path, target="label", features=["x"])


# ------------------------------------------------------------------ pandas' index columns
def _parquet(tmp_path: Path, df: pd.DataFrame, name: str = "t.parquet") -> Path:
    path = tmp_path / name
    df.to_parquet(path)
    return path


@pytest.mark.parametrize("index", ["filtered", "named", "multi"])
def test_fit_stream_leaves_out_the_index_pandas_wrote_to_parquet(tmp_path, index):
    df = _table(90)[["x", "k", "label"]]
    if index == "filtered":
        written = df[df["k"] >= 0].iloc[::-1]  # not a RangeIndex: stored as __index_level_0__
    elif index == "named":
        written = df.set_index(pd.Index(np.arange(90) * 7, name="row_id"))
    else:
        written = df.set_index([pd.Index(np.arange(90) % 3), pd.Index(np.arange(90))])
    path = _parquet(tmp_path, written)
    est = fit_stream(LinearDiscriminantAnalysis(), path, target="label")
    assert list(est.feature_names_in_) == ["x", "k"]
    plain = written.reset_index(drop=True)
    expected = LinearDiscriminantAnalysis().fit(plain[["x", "k"]], plain["label"])
    np.testing.assert_allclose(est.means_, expected.means_, rtol=1e-12)
    assert est.predict(plain[["x", "k"]]).tolist() == expected.predict(plain[["x", "k"]]).tolist()
    assert list(read_frame(path).columns) == ["x", "k", "label"]  # the command line agrees
    (X, _), *_ = read_blocks(path, target="label")
    assert X.shape == (90, 2)


def test_fit_stream_leaves_out_a_csv_index_column(tmp_path):
    df = _table(60)[["x", "k", "label"]]
    path = tmp_path / "t.csv"
    df.to_csv(path)  # pandas writes its index as an unnamed first column
    est = fit_stream(GaussianNB(), path, target="label")
    assert list(est.feature_names_in_) == ["x", "k"]
    est.predict(df[["x", "k"]])


# ------------------------------------------------------------------ Excel
def test_excel_first_sheet_named_sheet_and_missing_sheet(tmp_path):
    pytest.importorskip("openpyxl")
    df = _table(30)
    path = tmp_path / "t.xlsx"
    with pd.ExcelWriter(path, engine="openpyxl") as xw:
        df.to_excel(xw, sheet_name="train", index=False)
        df.iloc[:5].assign(x=1.0).to_excel(xw, sheet_name="other", index=False)
    first = read_frame(path)
    np.testing.assert_allclose(first["x"], df["x"], rtol=1e-15)
    assert first["colour"].tolist() == df["colour"].tolist()  # "None" stays a value
    assert len(read_frame(path, sheet="other")) == 5
    with pytest.raises(UsageError, match=r"no sheet 'test'; its sheets are 'train', 'other'"):
        read_frame(path, sheet="test")
    with pytest.raises(UsageError, match=r"--sheet x: .*t.csv is a CSV file"):
        (tmp_path / "t.csv").write_text(_csv_text(df))
        read_frame(tmp_path / "t.csv", sheet="x")
    with pytest.raises(ValueError, match="Excel files are not read block by block"):
        fit_stream(GaussianNB(), path, target="label")


def test_excel_without_openpyxl_gives_the_install_hint(tmp_path, monkeypatch):
    import sys

    path = tmp_path / "t.xlsx"
    path.write_bytes(b"PK\x03\x04")
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    with pytest.raises(
        UsageError, match=r"reading Excel needs openpyxl: pip install 'bayesrule\[excel\]'"
    ):
        read_frame(path)


def test_index_columns_by_name():
    assert index_columns(["__index_level_0__", "a"]) == ["__index_level_0__"]
    assert index_columns(["Unnamed: 0", "a"]) == ["Unnamed: 0"]
    assert index_columns(["a", "Unnamed: 0"]) == []  # only a first column
    meta = {"index_columns": ["id", {"kind": "range"}]}
    assert index_columns(["a", "id"], meta) == ["id"]


def test_fit_stream_names_a_near_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(_csv_text(_table()))
    with pytest.raises(
        ValueError, match=r"target column 'Label' is not in the file \(did you mean 'label'\?\)"
    ):
        fit_stream(GaussianNB(), path, target="Label")
    with pytest.raises(ValueError, match=r"feature 'kk' \(did you mean 'k'\?\)|feature 'kk';"):
        fit_stream(GaussianNB(), path, target="label", features=["x", "kk"])


# ------------------------------------------------------------------ generated tables
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


def _texts(values: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in values]


_words = st.text(alphabet="abcdefghij XY", min_size=1, max_size=6).map(lambda t: "v" + t.strip())


@hypothesis.settings(max_examples=25, deadline=None)
@hypothesis.given(
    n=st.integers(1, 30),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    spaced=st.booleans(),
    marker=st.sampled_from([m for m in NA_VALUES if m]),
    data=st.data(),
)
def test_generated_tables_read_alike_by_both_readers(
    tmp_path_factory, n, sep, spaced, marker, data
):
    """Floats, integers and words, with holes, any separator: both readers give the table back."""
    floats = data.draw(
        st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=64), min_size=n, max_size=n)
    )
    ints = data.draw(st.lists(st.integers(-1000, 1000), min_size=n, max_size=n))
    words = data.draw(st.lists(_words, min_size=n, max_size=n))
    holes = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    holes[0] = False
    df = pd.DataFrame({"f": floats, "i": ints, "w": words, "label": ["a"] * n})
    text = df.astype(object).where(~np.array(holes)[:, None] | (df.columns == "label"), marker)
    body = text.to_csv(index=False, sep=sep)
    if spaced:
        body = body.replace(sep, sep + " ")
    path = tmp_path_factory.mktemp("gen") / "t.csv"
    path.write_text(body)
    back = read_frame(path)
    assert list(back.columns) == ["f", "i", "w", "label"]
    expected = df.astype(object).where(~np.array(holes)[:, None] | (df.columns == "label"))
    for c in ("f", "i"):
        np.testing.assert_array_equal(
            back[c].to_numpy(dtype=float), expected[c].to_numpy(dtype=float)
        )
    assert _texts(back["w"]) == _texts(expected["w"])
    (X, y), *_ = read_blocks(path, target="label", frame=True)
    np.testing.assert_array_equal(X["f"].to_numpy(dtype=float), expected["f"].to_numpy(dtype=float))
    assert _texts(X["w"]) == _texts(expected["w"])
    assert y.tolist() == ["a"] * n
