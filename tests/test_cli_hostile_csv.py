"""CSV files that are hostile by accident: not UTF-8, a control character in a cell, ragged rows.

Each refusal must name the file (or standard input), the line as a text
editor numbers it, what was expected and what came; a hint must never offer
an ``--na-values`` value that would not match the cell; and a row with too
few fields is refused as one with too many is, while an empty field stays a
missing value.
"""

from __future__ import annotations

import gzip
import io
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pytest.importorskip("pyarrow")

from typer.testing import CliRunner  # noqa: E402

import bayesrule  # noqa: E402
from bayesrule.cli import _read_table  # noqa: E402
from bayesrule.cli._app import app  # noqa: E402
from bayesrule.cli._data import UsageError  # noqa: E402
from bayesrule.cli._errors import describe  # noqa: E402
from bayesrule.io import formats  # noqa: E402

IRIS_LIKE = "sl,sw,pl,pw,species\n" + "".join(
    f"{5 + i % 7 / 10:.1f},{3 + i % 5 / 10:.1f},{1 + i % 3 / 10:.1f},{0.2 + i % 4 / 10:.1f},"
    f"{('setosa', 'versicolor')[i % 2]}\n"
    for i in range(40)
)


def run(*args: object, input: bytes | None = None) -> object:
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


def error_line(result: object) -> str:
    """The one ``bayesrule: error:`` line of a failed command (exit code 2)."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bayesrule: error: "), lines
    return lines[0]


def fitted_rows(result: object) -> int:
    assert result.exit_code == 0, (result.output, result.exception)
    return int(re.search(r"fitted on ([\d,]+) rows", result.stderr).group(1).replace(",", ""))


def fit(data: object, tmp_path: Path, *extra: str, target: str = "species", **kw: object):
    return run("fit", data, "-t", target, *extra, "-o", tmp_path / "m.bayesrule", **kw)


# ------------------------------------------------------------------ 1. not UTF-8
LATIN1 = b"a,b,species\n1,2,x\n3,4,y\n5,6,\xe9t\xe9\n7,8,y\n1,1,x\n"


def test_latin1_names_the_file_line_and_byte(tmp_path):
    path = tmp_path / "l.csv"
    path.write_bytes(LATIN1)
    line = error_line(fit(path, tmp_path))
    assert f"{path}: not UTF-8 text" in line
    assert "the byte 0xE9 on line 4 (byte 28 of the file)" in line
    assert "iconv -f latin1 -t UTF-8" in line


def test_latin1_deep_in_a_file_gets_its_offset_in_the_file(tmp_path):
    rows = ["sl,sw,species"] + [f"{i % 7},{i % 5},{'xy'[i % 2]}" for i in range(3000)]
    rows[2500] = "1,2,caf\xe9"
    data = ("\n".join(rows) + "\n").encode("latin-1")
    path = tmp_path / "deep.csv"
    path.write_bytes(data)
    offset = data.index(b"\xe9")
    line = error_line(fit(path, tmp_path, "-m", "gnb"))
    assert f"on line 2501 (byte {offset:,} of the file)" in line


def test_windows_1252_bytes_get_the_cp1252_hint(tmp_path):
    path = tmp_path / "quotes.csv"
    path.write_bytes(b"a,b,species\n1,2,\x93x\x94\n3,4,y\n")
    line = error_line(fit(path, tmp_path, "-m", "mixed"))
    assert "the byte 0x93 on line 2 (byte 16 of the file)" in line
    assert "iconv -f cp1252 -t UTF-8" in line


@pytest.mark.parametrize(
    "encoding,named,why",
    [
        ("utf-16", "UTF-16", "it starts with the UTF-16 byte-order mark"),
        ("utf-16-le", "UTF-16LE", "every other byte is a NUL byte"),
        ("utf-16-be", "UTF-16BE", "every other byte is a NUL byte"),
        ("utf-32", "UTF-32", "it starts with the UTF-32 byte-order mark"),
    ],
)
def test_utf16_is_named_with_its_conversion(tmp_path, encoding, named, why):
    path = tmp_path / "wide.csv"
    path.write_bytes(IRIS_LIKE.encode(encoding))
    line = error_line(fit(path, tmp_path))
    assert f"{path}: the text is {named}, not UTF-8 ({why})" in line
    converted = shlex.quote(str(tmp_path / "wide-utf8.csv"))
    assert f"iconv -f {named} -t UTF-8 {shlex.quote(str(path))} > {converted}" in line


def test_standard_input_is_called_so(tmp_path):
    line = error_line(fit("-", tmp_path, input=LATIN1))
    assert "standard input: not UTF-8 text" in line
    assert "on line 4 (byte 28 of standard input)" in line
    assert "pipe it through iconv -f latin1 -t UTF-8" in line


def test_a_compressed_file_counts_in_its_decompressed_text(tmp_path):
    path = tmp_path / "l.csv.gz"
    path.write_bytes(gzip.compress(LATIN1))
    line = error_line(fit(path, tmp_path))
    assert f"{path}: not UTF-8 text" in line
    assert "on line 4 (byte 28 of the decompressed text)" in line


def test_json_lines_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "l.jsonl"
    data = b'{"a": 1, "y": "x"}\n{"a": 2, "y": "\xe9"}\n{"a": 3, "y": "x"}\n'
    path.write_bytes(data)
    line = error_line(fit(path, tmp_path, target="y"))
    offset = data.index(b"\xe9")
    assert f"{path}: not UTF-8 text: the byte 0xE9 on line 2 (byte {offset} of the file)" in line


def test_binary_data_is_not_sent_to_iconv(tmp_path):
    path = tmp_path / "packed.csv"
    path.write_bytes(gzip.compress(IRIS_LIKE.encode()))
    line = error_line(fit(path, tmp_path))
    assert f"{path}: not a text table: its first bytes are those of a gzip file" in line
    path.write_bytes(np.random.default_rng(0).bytes(3000))
    line = error_line(fit(path, tmp_path))
    assert f"{path}: not a text table: it holds binary data" in line and "iconv" not in line


def test_a_decoding_error_elsewhere_gives_no_offset_of_a_cell():
    exc = UnicodeDecodeError("utf-8", b"\xe9t\xe9", 0, 1, "invalid continuation byte")
    assert "byte 0" not in describe(exc) and "not UTF-8" in describe(exc)


@pytest.mark.parametrize("block", [1, 2, 3, 5, 64, 1 << 20])
def test_first_bad_utf8_whatever_the_blocks(block):
    ok = "é,€,𝄞\n".encode() * 7  # characters of 2, 3 and 4 bytes, cut by every block size
    bad = formats.first_bad_utf8(io.BytesIO(ok + b"a,\xe9\n"), block)
    assert (bad.offset, bad.line, bad.value) == (len(ok) + 2, 8, 0xE9)
    assert formats.first_bad_utf8(io.BytesIO(ok), block) is None
    ends_cut = io.BytesIO(ok + "é".encode()[:1])  # the file ends in the middle of a character
    cut = formats.first_bad_utf8(ends_cut, block)
    assert (cut.offset, cut.reason) == (len(ok), "unexpected end of data")


def test_wide_encoding_leaves_utf8_alone():
    assert formats.wide_encoding(IRIS_LIKE.encode()) is None
    assert formats.wide_encoding(("\ufeff" + IRIS_LIKE).encode()) is None  # UTF-8's own BOM


# ------------------------------------------------------------------ 2. control characters
def test_nul_in_a_number_names_the_character_and_offers_no_na_values(tmp_path):
    path = tmp_path / "nul.csv"
    path.write_bytes(IRIS_LIKE.encode().replace(b"\n5.1,", b"\n5\x001,", 1))
    rows = IRIS_LIKE.splitlines()[1:]
    row = next(i for i, r in enumerate(rows, start=1) if r.startswith("5.1,"))
    line = error_line(fit(path, tmp_path))
    assert f"{path}: the column 'sl' holds numbers and 1 cell '5\\x001'" in line
    assert f"the cell in data row {row} holds the control character NUL (U+0000)" in line
    assert "--na-values cannot name" in line and "give --na-values" not in line


def test_nul_warning_of_a_table_model_offers_no_na_values(tmp_path):
    path = tmp_path / "nul.csv"
    path.write_bytes(IRIS_LIKE.encode().replace(b"\n5.1,", b"\n5\x001,", 1))
    result = fit(path, tmp_path, "-m", "mixed")
    assert result.exit_code == 0, result.output
    (warning,) = [w for w in result.stderr.splitlines() if "'sl'" in w]
    assert "NUL (U+0000)" in warning and "give --na-values" not in warning


def test_a_suggested_na_value_reads_the_file(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text(IRIS_LIKE.replace("\n5.1,", "\n?,", 2))
    line = error_line(fit(path, tmp_path, "-m", "gnb"))
    suggested = shlex.split(line.split("give --na-values ", 1)[1].rstrip("."))
    assert suggested == ["?"]
    assert fitted_rows(fit(path, tmp_path, "-m", "gnb", "--na-values", *suggested)) == 40


def test_a_token_with_spaces_after_it_is_not_offered_as_it_is_shown(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text(IRIS_LIKE.replace("\n5.1,", "\n? ,", 2))
    line = error_line(fit(path, tmp_path, "-m", "gnb"))
    assert "remove the spaces around it in the cells ('? ')" in line
    # the value as the message shows it does not read the file as it is
    assert "'? '" in error_line(fit(path, tmp_path, "-m", "gnb", "--na-values", "?"))


def test_a_token_with_a_comma_is_not_offered(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text(IRIS_LIKE.replace("\n5.1,", '\n"n,a",', 2))
    line = error_line(fit(path, tmp_path))
    assert "'n,a'" in line and "--na-values splits its value at commas" in line
    assert "give --na-values" not in line


@pytest.mark.parametrize(
    "text,named",
    [
        ("5\x001", "the control character NUL (U+0000)"),
        ("5\x1b1", "the control character ESC (U+001B)"),
        ("5\xa01", "the character NO-BREAK SPACE (U+00A0)"),
        ("5\u200b1", "the character ZERO WIDTH SPACE (U+200B)"),
        ("5\t1", "the control character TAB (U+0009)"),
        ("5 1", None),
        ("?", None),
    ],
)
def test_hidden_character(text, named):
    assert formats.hidden_character(text) == named


# ------------------------------------------------------------------ 3. ragged rows
SHORT_FIRST = (
    "species,sl,sw,pl,pw\n"
    + "".join(f"setosa,5.{i},3.{i},1.{i},0.{i}\n" for i in range(4))
    + "setosa,5.0\n"
    + "".join(f"versicolor,6.{i},2.{i},4.{i},1.{i}\n" for i in range(5))
)


@pytest.mark.parametrize("model", ["gnb", "lda", "mixed"])
def test_a_short_row_is_refused_naming_the_line(tmp_path, model):
    path = tmp_path / "short_first.csv"
    path.write_text(SHORT_FIRST)
    line = error_line(fit(path, tmp_path, "-m", model))
    assert f"{path}: not a readable CSV file: line 6 has 2 fields, but the header has 5" in line
    assert "an empty field between two separators is a missing value" in line


def test_a_long_row_is_refused_in_the_same_words(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text(SHORT_FIRST.replace("setosa,5.0\n", "setosa,5.0,3.0,1.0,0.1,9.9\n"))
    line = error_line(fit(path, tmp_path, "-m", "gnb"))
    assert f"{path}: not a readable CSV file: line 6 has 6 fields, but the header has 5" in line


def test_the_line_counts_blank_lines_and_quoted_line_breaks(tmp_path):
    # pandas says "line 5" of the long row: it counts records, not the lines an editor shows
    text = 'sl,sw,species\n1,2,"a\nb"\n\n3,4,x\n   \n5,6\n7,8,x\n'
    path = tmp_path / "lines.csv"
    path.write_text(text)
    line = error_line(fit(path, tmp_path, "-m", "mixed"))
    assert "line 7 has 2 fields, but the header has 3" in line
    path.write_text(text.replace("5,6\n", "5,6,x,9\n"))
    line = error_line(fit(path, tmp_path, "-m", "mixed"))
    assert "line 7 has 4 fields, but the header has 3" in line


def test_empty_fields_stay_missing_values(tmp_path):
    text = SHORT_FIRST.replace("setosa,5.0\n", "setosa,5.0,,,\n\n").replace(
        "versicolor,6.1,2.1,4.1,1.1", "versicolor,6.1,2.1,4.1,"
    )
    path = tmp_path / "gaps.csv"
    path.write_text(text)
    assert fitted_rows(fit(path, tmp_path, "-m", "gnb")) == 10


def test_a_short_row_on_standard_input(tmp_path):
    line = error_line(fit("-", tmp_path, "-m", "gnb", input=SHORT_FIRST.encode()))
    assert "standard input: not a readable CSV file: line 6 has 2 fields" in line


def test_a_short_row_in_a_compressed_file(tmp_path):
    path = tmp_path / "short.csv.gz"
    path.write_bytes(gzip.compress(SHORT_FIRST.encode()))
    line = error_line(fit(path, tmp_path, "-m", "gnb"))
    assert f"{path}: not a readable CSV file: line 6 has 2 fields" in line


def test_a_short_row_with_row_names(tmp_path):
    # R's write.table: no header cell above the row names, which pandas makes the index
    path = tmp_path / "rownames.csv"
    path.write_text('sl,species\n"1",5.1,x\n"2",4.9\n"3",4.7,y\n')
    line = error_line(fit(path, tmp_path, "-m", "gnb"))
    assert "line 3 has 2 fields, but the rows have 3 (a row name and the header's 2" in line


def test_a_short_row_is_refused_by_fit_stream(tmp_path):
    path = tmp_path / "short_first.csv"
    path.write_text(SHORT_FIRST)
    line = error_line(fit(path, tmp_path, "-m", "gnb", "--stream"))
    assert f"{path}: not a readable CSV file: line 6 has 2 fields" in line
    # beyond the rows the command looks at first, the block reader refuses it too, naming the line
    with pytest.raises(ValueError, match="line 6 has 2 fields, but the header has 5"):
        bayesrule.fit_stream(bayesrule.GaussianNB(), str(path), target="species")


def test_a_whole_last_column_reads_the_file_once(tmp_path, monkeypatch):
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("read again")

    monkeypatch.setattr(_read_table, "last_cells_missing", never)
    monkeypatch.setattr(_read_table, "wrong_field_count", never)
    path = tmp_path / "whole.csv"
    path.write_text(IRIS_LIKE)
    assert fitted_rows(fit(path, tmp_path, "-m", "gnb")) == 40


FILLER = "".join(f"{i},{i % 3}.5,{'' if i % 7 else 'x'}\n" for i in range(12_000))


def test_many_empty_last_cells_are_checked_by_pyarrow_alone(tmp_path, monkeypatch):
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the csv module was asked")

    monkeypatch.setattr(_read_table, "wrong_field_count", never)
    path = tmp_path / "gaps.csv"
    path.write_text("a,b,c\n" + FILLER + "1,2,\n")
    assert _read_table.read_frame(path).shape == (12_001, 3)


@pytest.mark.parametrize("filler", ["", FILLER], ids=["few rows", "many rows"])
def test_pyarrow_and_pandas_disagreeing_ask_the_csv_module(tmp_path, filler):
    # pyarrow reads `5, "6,6"` as three fields, pandas (spaces after a separator skipped) as two
    text = "a,b,c\n" + filler + '5, "6,6",y\n' + "7,8,\n"
    path = tmp_path / "spaced.csv"
    path.write_text(text)
    assert _read_table.read_frame(path).shape == (len(filler.splitlines()) + 2, 3)
    path.write_text(text.replace('5, "6,6",y\n', '5, "6,6"\n'))
    line = len(filler.splitlines()) + 2
    with pytest.raises(UsageError, match=f"line {line} has 2 fields, but"):
        _read_table.read_frame(path)


def test_last_cells_missing_reads_the_rows_asked_for():
    text = b"a,b\n" + b"1,x\n2,\n3,NA\n" * 10_000
    missing = formats.last_cells_missing(io.BytesIO(text), ",", 2, ["", "NA"], rows=10)
    assert missing.tolist() == [i % 3 != 0 for i in range(10)]
    short = io.BytesIO(text + b"4\n")  # a row of one field
    assert formats.last_cells_missing(short, ",", 2, [""]) is None


def test_the_head_of_a_file_is_looked_at_alone(tmp_path):
    rows = [f"{i},{i % 2},{'' if i % 5 else 'x'}" for i in range(5000)]
    path = tmp_path / "long.csv"
    path.write_text("a,b,c\n" + "\n".join(rows[:3000] + ["7,7"] + rows[3000:]) + "\n")
    assert _read_table.read_frame(path, nrows=1000).shape == (1000, 3)
    with pytest.raises(UsageError, match="line 3002 has 2 fields"):
        _read_table.read_frame(path)


def test_wrong_field_count_only_where_asked():
    def first(**kw: object) -> object:
        return formats.wrong_field_count(io.BytesIO(b"a,b,c\n1,2,3\n4,5\n6,7,8,9\n"), ",", 3, **kw)

    assert (first().line, first().row, first().fields) == (3, 1, 2)
    only = np.array([True, False, True])
    assert first(fewer=True, rows=only) is None
    assert first(rows=only).fields == 4
    assert first(fewer=True, rows=[False, True]).fields == 2
    assert first(last=0) is None


def test_a_short_row_is_refused_on_a_dask_scheduler(tmp_path):
    # Dask's partitions are read by pandas, which pads a short row; the missing last cells
    # are counted with the missing labels, and the files split again only then
    path = tmp_path / "short_first.csv"
    path.write_text(SHORT_FIRST)
    line = error_line(fit(path, tmp_path, "-m", "gnb", "--scheduler", "local"))
    assert f"{path}: not a readable CSV file: line 6 has 2 fields" in line


def test_empty_last_cells_are_missing_values_on_a_dask_scheduler(tmp_path):
    # ",," and a trailing empty field are missing values there too: not refused
    text = "species,sl,sw,pl,pw\n" + "".join(
        f"{'setosa' if i % 2 else 'versicolor'},5.{i},3.{i},1.{i},{'' if i % 3 == 0 else f'0.{i}'}\n"
        for i in range(12)
    )
    path = tmp_path / "gaps.csv"
    path.write_text(text)
    assert fitted_rows(fit(path, tmp_path, "-m", "gnb", "--scheduler", "local")) == 12
