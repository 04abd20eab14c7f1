"""Reading a table at once: CSV (sniffed, compressed), Parquet, JSON lines, Excel, standard input."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..io.formats import (
    CSV,
    EXCEL,
    NA_VALUES,
    TablePath,
    clean_names,
    decimal_commas,
    decimal_for,
    first_bad_utf8,
    header_names,
    index_columns,
    last_cells_missing,
    open_input,
    read_head,
    read_head_bytes,
    sniff_compression,
    sniff_separator,
    table_path,
    wide_encoding,
    wrong_field_count,
)
from ..io.table_text import DuplicateColumnError, decimals_as_floats
from ._dataset import STDIN, UsageError, na_values_for, read_options


# ------------------------------------------------------------------ reading a table
def read_frame(
    path: Path,
    *,
    sep: str | None = None,
    na_values: list[str] | None = None,
    sheet: str | None = None,
    decimal: str | None = None,
    nrows: int | None = None,
) -> Any:
    """The whole table in ``path`` (or standard input for ``-``) as a DataFrame.

    The format follows the suffixes (:func:`bayesrule.io.formats.table_path`;
    on standard input, the content). CSV-like files may be compressed; their
    separator and decimal mark are sniffed from the first lines unless
    given. A cell is missing when its text is one of
    :data:`bayesrule.io.formats.NA_VALUES` or ``na_values`` (or the command's
    ``--na-values``). Header names are stripped of spaces; two equal names
    are an error; the columns pandas writes for an index in Parquet
    (``__index_level_0__``) are left out. This is the one place a table is
    read at once; ``nrows`` reads the first rows of a CSV file only.
    """

    sheet = sheet if sheet is not None else read_options.sheet
    na = na_values_for(na_values)
    kind: TablePath
    if path == STDIN:
        data = sys.stdin.buffer.read()
        if not data:
            raise UsageError("-: standard input is empty.")
        kind = _sniff_content(data)
        source: Any = io.BytesIO(data)
        name = "standard input"
    else:
        kind = table_path(path) or TablePath(CSV)
        source, name = path, str(path)
    if sheet is not None and kind.format is not EXCEL:
        raise UsageError(f"--sheet {sheet}: {name} is a {kind.name} file; sheets are Excel's.")
    try:
        if kind.name == "Parquet":
            df = _read_parquet(source)
        elif kind.name == "Excel":
            df = _read_excel(source, name, sheet, na)
        elif kind.name == "JSON lines":
            df = _read_json_lines(source, kind.compression, na, nrows)
        else:
            df = _read_csv(source, name, kind, sep, decimal, na, nrows)
    except ImportError as exc:
        extra = "excel" if kind.name == "Excel" else "cli"
        raise UsageError(
            f"reading {kind.name} needs {exc.name}: pip install 'bayesrule[{extra}]'"
        ) from None
    except UsageError:
        raise
    except UnicodeDecodeError:
        if kind.name not in ("CSV", "JSON lines"):
            raise
        raise UsageError(_not_utf8(source, name, kind.compression)) from None
    except ValueError as exc:
        if exc.__class__.__name__ == "DuplicateColumnError":
            raise UsageError(str(exc)) from None
        raise UsageError(f"{name}: not a readable {kind.name} file ({_first(exc)}).") from None
    except Exception as exc:  # pandas and pyarrow raise many types for a foreign file
        raise UsageError(f"{name}: not a readable {kind.name} file ({_first(exc)}).") from None
    if df.shape[0] == 0:
        raise UsageError(f"{name}: the file has no rows.")
    return df


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _sniff_content(data: bytes) -> TablePath:
    """The format of a table on standard input, from its first bytes."""
    from ..io.formats import EXCEL, JSON_LINES, PARQUET

    if data[:4] == b"PAR1":
        return TablePath(PARQUET)
    compression = sniff_compression(data)
    if compression == "zip":  # an Excel workbook is a zip archive too
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                if "xl/workbook.xml" in zf.namelist():
                    return TablePath(EXCEL)
        except zipfile.BadZipFile:
            pass
    if compression is not None:
        return TablePath(CSV, compression)
    if data.lstrip()[:1] == b"{":
        return TablePath(JSON_LINES)
    return TablePath(CSV)


def _read_csv(
    source: Any,
    name: str,
    kind: TablePath,
    sep: str | None,
    decimal: str | None,
    na: list[str],
    nrows: int | None,
) -> Any:
    import pandas as pd

    raw_head = read_head_bytes(source, kind.compression)
    wide = wide_encoding(raw_head)
    if wide is not None:  # valid UTF-8 when every character is ASCII: read, it would be garbage
        raise UsageError(_wide_message(name, kind.compression, *wide))
    head = raw_head.decode("utf-8", errors="replace")
    if sep is None:
        sep = sniff_separator(head, default=kind.format.sep or ",")
    if decimal is None:
        decimal = decimal_for(head, sep)
    raw = header_names(head, sep)
    names = clean_names(raw, name) if raw is not None else None
    fh = open_input(source, kind.compression)
    try:
        with warnings.catch_warnings():
            # pandas 3 deprecates float_precision, yet with na_values its default parser is
            # off in the last digit; round_trip reads every digit as written
            warnings.filterwarnings("ignore", message=".*float_precision")
            df = pd.read_csv(
                fh,
                sep=sep,
                decimal=decimal,
                na_values=na,
                keep_default_na=False,
                # "a, b, label": the space after a separator is not part of the value
                skipinitialspace=True,
                float_precision="round_trip",
                header=0,
                names=names,
                nrows=nrows,
            )
    except pd.errors.ParserError as exc:
        counts = _PANDAS_FIELDS.search(str(exc))
        if counts is None:
            raise
        expected = int(counts.group(1))
        with _reread(source, kind.compression) as stream:
            found = wrong_field_count(stream, sep, expected)
        line, got = (found.line, found.fields) if found else map(int, counts.group(2, 3))
        raise UsageError(_fields_message(name, line, got, expected, names)) from None
    finally:
        if fh is not source:
            fh.close()
    df.columns = clean_names(df.columns, name) if names is None else df.columns
    _refuse_short_rows(df, source, name, kind, sep, names, na)
    return df


# pandas' C parser: "Error tokenizing data. C error: Expected 5 fields in line 11, saw 6"
_PANDAS_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


#: rows the csv module looks through at once (a head read): pyarrow's reader reads megabytes ahead
_FEW_ROWS = 10_000


def _refuse_short_rows(
    df: Any,
    source: Any,
    name: str,
    kind: TablePath,
    sep: str,
    names: list[str] | None,
    na: list[str],
) -> None:
    """Refuse a row with fewer fields than the header, which pandas pads with missing values.

    pandas' reader refuses a row with too many fields but fills a short one
    with NaN, as if its last cells were empty. Such a row's last cell is
    missing, so a table whose last column has no missing value has none,
    and is not read again. Otherwise the text is split again by pyarrow
    (a fraction of pandas' time), up to the last row whose last cell is
    missing: when every row has its fields and the missing last cells are
    pandas', the rows are whole (``1,2,``: an empty field, a missing value).
    Only where the two disagree (a short row ``1,2``, or spaces that pandas
    skips), or for the first few thousand rows, does the ``csv`` module,
    pandas' rules and slower, look at the rows and find the line.
    """
    import numpy as np
    import pandas as pd

    if df.shape[1] < 2:
        return  # one column: a short row would be a blank line
    maybe = df.iloc[:, -1].isna().to_numpy()
    if not maybe.any():
        return
    # a first row with one field more than the header: pandas reads that field as the index
    # (R's row names "1", "2", ... become a RangeIndex starting at 1)
    default = df.index.equals(pd.RangeIndex(len(df))) and df.index.name is None
    expected = df.shape[1] + (0 if default else df.index.nlevels)
    last = int(np.flatnonzero(maybe)[-1])
    if last >= _FEW_ROWS:
        with _reread(source, kind.compression) as stream:
            split = last_cells_missing(stream, sep, expected, na, rows=last + 1)
        if split is not None and np.array_equal(split, maybe[: last + 1]):
            return
    with _reread(source, kind.compression) as stream:
        found = wrong_field_count(stream, sep, expected, fewer=True, rows=maybe, last=last)
    if found is not None:
        raise UsageError(_fields_message(name, found.line, found.fields, expected, names))


def _fields_message(name: str, line: int, got: int, expected: int, names: list[str] | None) -> str:
    header = names or []
    if expected == len(header) + 1:  # a row name before the header's columns
        want = f"the rows have {expected} (a row name and the header's {len(header)} columns)"
    else:
        want = f"the header has {expected}"
    return (
        f"{name}: not a readable CSV file: line {line} has {got} field{'s' if got != 1 else ''}, "
        f"but {want}; give every row one field per column (an empty field between two "
        "separators is a missing value), or remove the line."
    )


@contextlib.contextmanager
def _reread(source: Any, compression: str | None) -> Iterator[BinaryIO]:
    """The decompressed bytes of ``source`` (a path or a buffer) from the start, once more."""
    if hasattr(source, "seek"):
        source.seek(0)
    fh = open_input(source, compression)
    try:
        yield fh
    finally:
        if fh is not source:
            fh.close()


def _not_utf8(source: Any, name: str, compression: str | None) -> str:
    """The refusal of a text that is not UTF-8: where its first foreign byte is, and what to do."""
    head = read_head_bytes(source, compression)
    wide = wide_encoding(head)
    if wide is not None:
        return _wide_message(name, compression, *wide)
    binary = "Parquet" if head[:4] == b"PAR1" else sniff_compression(head)
    if binary is not None:  # a file named .csv (or .txt) that is not one
        return (
            f"{name}: not a text table: its first bytes are those of a {binary} file; name the "
            "file by its format (.parquet, .csv.gz, .zip, ...) or give the table it holds."
        )
    if len(head.translate(None, _TEXT_BYTES)) > len(head) // 100:  # control bytes: not text
        return f"{name}: not a text table: it holds binary data (control bytes), not CSV text."
    with _reread(source, compression) as stream:
        bad = first_bad_utf8(stream)
    text = "the decompressed text" if compression else "the file"
    if name == "standard input":
        text = "standard input"
    where = (
        f": the byte 0x{bad.value:02X} on line {bad.line} (byte {bad.offset:,} of {text}) "
        f"is not UTF-8 ({bad.reason})"
        if bad is not None
        else ""
    )
    # bytes 0x80-0x9F are controls in Latin-1 but letters, quotes and the euro sign in
    # Windows' code page 1252, which Excel and older Windows programs write
    legacy = "cp1252" if bad is not None and 0x80 <= bad.value <= 0x9F else "latin1"
    return (
        f"{name}: not UTF-8 text{where}; bayesrule reads UTF-8 only (it has no encoding "
        f"option): convert the text, e.g. {_convert(name, compression, legacy)} if it is "
        f"{'Windows-1252' if legacy == 'cp1252' else 'Latin-1'}."
    )


#: the bytes of text: all but the control bytes other than tab, line feed, form feed, return
_TEXT_BYTES = bytes(set(range(256)) - set(range(9)) - set(range(14, 32)) - {11})


def _wide_message(name: str, compression: str | None, encoding: str, why: str) -> str:
    return (
        f"{name}: the text is {encoding}, not UTF-8 ({why}); bayesrule reads UTF-8 only (it has "
        f"no encoding option): convert it, e.g. {_convert(name, compression, encoding)}."
    )


def _convert(name: str, compression: str | None, encoding: str) -> str:
    """An ``iconv`` command line converting ``name`` from ``encoding`` to UTF-8."""
    iconv = f"iconv -f {encoding} -t UTF-8"
    if name == "standard input":
        return f"pipe it through {iconv}"
    path = Path(name)
    if compression is not None:
        return f"{iconv} on the decompressed text"
    out = path.with_name(f"{path.stem}-utf8{path.suffix}")
    return f"{iconv} {shlex.quote(name)} > {shlex.quote(str(out))}"


def parquet_names(parquet: Any, where: str) -> list[str]:
    """The column names of a ``pq.ParquetFile``; two equal names are refused, naming them."""
    try:
        return clean_names(list(parquet.schema_arrow.names), where)
    except DuplicateColumnError as exc:
        raise UsageError(str(exc)) from None


def parquet_frame(table: Any, where: str) -> Any:
    """An Arrow table (or record batch) of a Parquet file as a DataFrame, decimals as floats."""
    try:
        table = decimals_as_floats(table, where)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    # the pandas metadata would make the index columns (if dropped) an index again
    df = table.to_pandas(ignore_metadata=True)
    df.columns = [str(c) for c in df.columns]
    return df


def _read_parquet(source: Any) -> Any:
    import pyarrow.parquet as pq

    where = "standard input" if hasattr(source, "read") else str(source)
    # pages written with checksums are checked (a damaged page is refused, not read)
    parquet = pq.ParquetFile(source, page_checksum_verification=True)
    names = parquet_names(parquet, where)  # two equal names: an error
    table = parquet.read()
    drop = [
        n for n in index_columns(names, table.schema.pandas_metadata) if n not in ("", "Unnamed: 0")
    ]  # select() says it leaves them out
    if drop:
        table = table.drop_columns(drop)
    return parquet_frame(table, where)


def _read_excel(source: Any, name: str, sheet: str | None, na: list[str]) -> Any:
    import pandas as pd

    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise ImportError("openpyxl", name="openpyxl") from None
    with pd.ExcelFile(source, engine="openpyxl") as book:
        sheets = list(book.sheet_names)
        if sheet is not None and sheet not in sheets:
            shown = ", ".join(repr(s) for s in sheets)
            raise UsageError(f"{name}: no sheet {sheet!r}; its sheets are {shown}.")
        chosen = sheet if sheet is not None else sheets[0]
        # the header is read as a row, so that pandas neither renames nor drops a repeated name
        raw = pd.read_excel(
            book, sheet_name=chosen, header=None, na_values=na, keep_default_na=False
        )
        if raw.shape[0] <= 1:  # no rows below a header: say which sheets have some
            raise UsageError(_empty_sheet(book, name, chosen, sheet is None, sheets))
        header = ["" if pd.isna(v) else v for v in raw.iloc[0].tolist()]
        _refuse_uncomputed(book, name, chosen, header)
    body = raw.iloc[1:].reset_index(drop=True)
    body.columns = clean_names(header, f"{name}, sheet {chosen!r}")
    body = body.infer_objects()
    for c in body.columns:
        if body[c].dtype == object and _all_numbers(body[c]):
            # a whole number of 2**64 or more (1e308 typed in a cell) comes as a Python int,
            # which leaves the column objects: the cells are floats in the file
            body[c] = body[c].astype(float)
    return body


def _all_numbers(values: Any) -> bool:
    present = values.dropna()
    return bool(len(present)) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in present
    )


def _empty_sheet(book: Any, name: str, chosen: str, first: bool, sheets: list[str]) -> str:
    """The refusal of a sheet without rows, naming the sheets that hold some."""
    import pandas as pd

    full = []
    for s in sheets:
        if s != chosen:
            head = pd.read_excel(book, sheet_name=s, header=None, nrows=2)
            if head.shape[0] > 1:
                full.append(s)
    which = f"the first sheet {chosen!r}" if first else f"the sheet {chosen!r}"
    text = f"{name}: {which} has no rows below a header"
    if full:
        shown = ", ".join(repr(s) for s in sheets)
        have = ", ".join(repr(s) for s in full)
        text += (
            f"; the file's sheets are {shown}, and {have} hold{'s' if len(full) == 1 else ''} "
            f"rows: choose one with --sheet (e.g. --sheet {_quoted(full[0])})"
        )
    elif len(sheets) > 1:
        text += f"; nor do its other sheets ({', '.join(repr(s) for s in sheets if s != chosen)})"
    return text + "."


def _quoted(text: str) -> str:
    return shlex.quote(text)


def _refuse_uncomputed(book: Any, name: str, sheet: str, header: list[Any]) -> None:
    """Refuse formula cells saved without their value (openpyxl, and programs that never
    compute formulas, write none): they would be read as missing cells.

    The sheet's XML is looked through only when it holds a formula at all.
    """
    import xml.etree.ElementTree as ET

    ws = book.book[sheet]
    path = getattr(ws, "_worksheet_path", None)
    archive = getattr(book.book, "_archive", None)
    if path is None or archive is None:
        return
    with archive.open(path) as fh:
        data = fh.read()
    if b"<f>" not in data and b"<f " not in data:
        return
    ns = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    found: list[tuple[str, str]] = []
    columns: dict[str, int] = {}
    for _, el in ET.iterparse(io.BytesIO(data)):
        if el.tag != f"{ns}c":
            continue
        f = el.find(f"{ns}f")
        if f is not None:
            v = el.find(f"{ns}v")
            if v is None or not (v.text or ""):
                ref = el.get("r", "")
                found.append((ref, f.text or ""))
                head = re.match(r"[A-Z]+", ref)
                if head:
                    columns[head.group(0)] = columns.get(head.group(0), 0) + 1
        el.clear()
    if not found:
        return
    named = []
    for letters, k in columns.items():
        j = 0
        for ch in letters:
            j = j * 26 + ord(ch) - 64
        title = header[j - 1] if 0 < j <= len(header) else None
        col = f"{title!r}" if title not in (None, "") else f"column {letters}"
        named.append(f"{k:,} in {col}")
    ref, formula = found[0]
    shown = f" '={formula}'" if formula else ""
    raise UsageError(
        f"{name}, sheet {sheet!r}: {len(found):,} formula cell{'s' if len(found) != 1 else ''} "
        f"saved without a computed value ({'; '.join(named[:10])}; first: {ref}{shown}), which "
        "would be read as missing: open the file in a spreadsheet program (Excel, LibreOffice) "
        "and save it, so that the values are stored, or export the sheet as CSV."
    )


def _read_json_lines(source: Any, compression: str | None, na: list[str], nrows: int | None) -> Any:
    import pandas as pd

    fh = open_input(source, compression)
    try:
        df = pd.read_json(fh, lines=True, nrows=nrows, dtype=False, precise_float=True)
    finally:
        if fh is not source:
            fh.close()
    df.columns = clean_names(df.columns, str(getattr(source, "name", source)))
    # a JSON string that is a missing-value marker asked for (--na-values) is missing too
    extra = [v for v in na if v not in NA_VALUES]
    for col in df.columns:
        if df[col].dtype.kind in "OU" or str(df[col].dtype) in ("str", "string"):
            df[col] = df[col].mask(df[col].isin(extra))
    return df.infer_objects()


def _table_sep(path: Path) -> str:
    """The separator ``path``'s suffixes name (a tab for ``.tsv`` and ``.tab``), else a comma."""
    found = table_path(path)
    return (found.format.sep if found is not None else None) or ","


# the names other modules of the command line use
_head_text = read_head
_sniff_separator = sniff_separator
_decimal_commas = decimal_commas
