"""Reading a table at once: CSV (sniffed, compressed), Parquet, JSON lines, Excel, standard input."""

from __future__ import annotations

import io
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

from ..io.formats import (
    CSV,
    EXCEL,
    NA_VALUES,
    TablePath,
    clean_names,
    decimal_commas,
    decimal_for,
    header_names,
    index_columns,
    open_input,
    read_head,
    sniff_compression,
    sniff_separator,
    table_path,
)
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
    except (UsageError, UnicodeDecodeError):
        raise
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

    head = read_head(source, kind.compression)
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
    finally:
        if fh is not source:
            fh.close()
    df.columns = clean_names(df.columns, name) if names is None else df.columns
    return df


def _read_parquet(source: Any) -> Any:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(source)
    names = list(parquet.schema_arrow.names)
    clean_names(names, str(getattr(source, "name", source)))  # two equal names: an error
    table = parquet.read()
    drop = [
        n for n in index_columns(names, table.schema.pandas_metadata) if n not in ("", "Unnamed: 0")
    ]  # select() says it leaves them out
    if drop:
        table = table.drop_columns(drop)
    # the pandas metadata would make the index columns (now gone) an index again
    df = table.to_pandas(ignore_metadata=True)
    df.columns = [str(c) for c in df.columns]
    return df


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
    if raw.shape[0] == 0:
        return raw
    header = ["" if pd.isna(v) else v for v in raw.iloc[0].tolist()]
    body = raw.iloc[1:].reset_index(drop=True)
    body.columns = clean_names(header, f"{name}, sheet {chosen!r}")
    return body.infer_objects()


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
