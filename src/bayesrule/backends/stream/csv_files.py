"""CSV files read block by block through pyarrow's streaming reader, compressed or not."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...io.formats import (
    clean_names,
    first_bad_utf8,
    header_names,
    index_columns,
    read_head,
    wrong_field_count,
)
from .blocks import _auto_rows, _Chunk, _rechunk, _Ring, _table_chunk, _warn_lone_tokens
from .sources import _File, _first_line, _listing, _make_plan, _need_pyarrow, _Plan, _Selection


class _Counting:
    """A binary file that counts the bytes read from it (progress of a CSV file)."""

    def __init__(self, f: Any, counter: list[int]) -> None:
        self._f = f
        self._counter = counter
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        self._counter[0] += len(data)
        return bytes(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
        self._f.close()


def _csv_stream(f: _File, counter: list[int] | None) -> Any:
    """The decompressed byte stream of a CSV file, its raw bytes counted into ``counter``."""
    pa = _need_pyarrow()
    raw: Any = open(f.path, "rb")  # noqa: SIM115 - closed by the caller through the stream
    if counter is not None:
        raw = _Counting(raw, counter)
    if f.compression == "xz":
        import lzma

        return pa.PythonFile(lzma.LZMAFile(raw), mode="r")
    stream = pa.PythonFile(raw, mode="r")
    if f.compression is not None:
        return pa.CompressedInputStream(stream, f.compression)
    return stream


def _csv_header(f: _File) -> list[str]:
    """The names of the file's columns: stripped of spaces, two equal names refused."""
    if f.names is None:
        try:
            head = read_head(f.path, f.compression)
        except (OSError, EOFError, ValueError) as exc:
            raise ValueError(f"{f.name}: cannot be read as CSV: {_first_line(exc)}") from None
        raw = header_names(head, f.sep)
        if raw is None:
            raise ValueError(f"{f.name}: the file is empty (no header line).")
        f.names = clean_names(raw, f.name)
    return f.names


def _parse_options(f: _File) -> Any:
    import pyarrow.csv as pcsv

    return pcsv.ParseOptions(delimiter=f.sep)


def _find_csv_row(f: _File, column: int, value: str, start: int) -> tuple[int, int] | None:
    """(data row from 1, line from 1) of the first row at or after ``start`` whose field is ``value``."""
    import csv
    import io

    stream = _csv_stream(f, None)
    try:
        text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
        reader = csv.reader(text, delimiter=_parse_options(f).delimiter)
        next(reader, None)
        for row_number, row in enumerate(reader, start=1):
            if row_number <= start or column >= len(row):
                continue
            if row[column].strip() == value.strip():
                return row_number, reader.line_num
    finally:
        stream.close()
    return None


_CSV_CONVERSION = re.compile(
    r"In CSV column #(\d+): .*conversion error to (\S+?): invalid value '(.*)'", re.S
)


def _csv_error(f: _File, exc: BaseException, names: list[str], rows_done: int) -> ValueError:
    """A ValueError naming the file, column and row of a CSV parse or conversion error."""
    msg = str(exc)
    m = _CSV_CONVERSION.search(msg)
    if m:
        j, to, value = int(m.group(1)), m.group(2), m.group(3)
        col = names[j] if j < len(names) else f"#{j}"
        found = _find_csv_row(f, j, value, rows_done)
        at = f" at data row {found[0]} (line {found[1]})" if found else ""
        kind = "a number" if to in ("double", "float", "int64") else to
        if "\ufffd" in value:  # bytes that are not UTF-8, shown replaced: no na_values matches
            return ValueError(
                f"{f.name}: not UTF-8 text: column {col!r}{at} holds {value!r}, bytes that are "
                "not UTF-8 (shown as U+FFFD; a file written as Latin-1 or Windows-1252?); the "
                f"files are read as UTF-8 only: convert the file, e.g. {_iconv(f)}"
            )
        return ValueError(
            f"{f.name}: column {col!r}{at} holds {value!r}, which is not {kind} as the column's "
            "other values are (fix the cell, declare the column's type with dtypes=, or, if "
            f"{value.strip()!r} marks a missing value, pass na_values=[{value.strip()!r}])."
        )
    if "invalid UTF8" in msg:
        return _not_utf8(f)
    m = _CSV_COLUMNS.search(msg)
    if m:
        return _wrong_fields(f, int(m.group(1)), int(m.group(2)))
    return ValueError(f"{f.name}: cannot be read as CSV after row {rows_done}: {_first_line(exc)}")


#: pyarrow's "CSV parse error: Expected 4 columns, got 2: 1,2"
_CSV_COLUMNS = re.compile(r"Expected (\d+) columns, got (\d+)")


def _wrong_fields(f: _File, expected: int, got: int) -> ValueError:
    """The refusal of a row with another number of fields than the header, naming its line.

    pyarrow's reader reads ahead, so the rows it had handed over do not say
    where the row is: the text is split again, as pandas splits it, to the
    first such row.
    """
    stream = _csv_stream(f, None)
    try:
        found = wrong_field_count(stream, f.sep, expected)
    finally:
        stream.close()
    line = f"line {found.line}" if found is not None else "a line"
    if found is not None:
        got = found.fields
    return ValueError(
        f"{f.name}: not a readable CSV file: {line} has {got} field{'s' if got != 1 else ''}, "
        f"but the header has {expected}; give every row one field per column (an empty field "
        "between two separators is a missing value), or remove the line."
    )


#: the command that writes a compressed file's text to its output
_DECOMPRESS = {"gzip": "gzip -dc", "bz2": "bzip2 -dc", "xz": "xz -dc", "zstd": "zstd -dc"}


def _iconv(f: _File) -> str:
    """A shell command converting ``f``'s Latin-1 text to UTF-8 (decompressed first)."""
    path = shlex.quote(str(f.path))
    if f.compression is None:
        return f"iconv -f latin1 -t UTF-8 {path} > converted.csv"
    tool = _DECOMPRESS.get(str(f.compression), f"{f.compression} -dc")
    return f"{tool} {path} | iconv -f latin1 -t UTF-8 > converted.csv"


def _not_utf8(f: _File) -> ValueError:
    """The refusal of a CSV file holding bytes that are not UTF-8, naming the first one's line."""
    stream = _csv_stream(f, None)
    try:
        bad = first_bad_utf8(stream)
    finally:
        stream.close()
    what = (
        f"the byte 0x{bad.value:02X} on line {bad.line} (byte {bad.offset:,} of the text) is not UTF-8"
        if bad
        else "it holds bytes that are not UTF-8"
    )
    return ValueError(
        f"{f.name}: not UTF-8 text: {what} (a file written as Latin-1 or Windows-1252?); the "
        f"files are read as UTF-8 only: convert the file, e.g. {_iconv(f)}"
    )


def _csv_batches(
    f: _File,
    plan: _Plan,
    types: dict[str, Any],
    block_bytes: int,
    counter: list[int] | None,
) -> Iterator[Any]:
    pa = _need_pyarrow()
    import pyarrow.csv as pcsv

    names = _csv_header(f)
    missing = [c for c in plan.columns if c not in names]
    if missing:
        raise ValueError(
            f"{f.name}: has no column {missing[0]!r} (the other files or the request name it); "
            f"its columns are {_listing(names)}."
        )
    stream = _csv_stream(f, counter)
    done = 0
    try:
        try:
            reader = pcsv.open_csv(
                stream,
                read_options=pcsv.ReadOptions(
                    block_size=block_bytes, use_threads=True, column_names=names, skip_rows=1
                ),
                parse_options=_parse_options(f),
                convert_options=pcsv.ConvertOptions(
                    include_columns=plan.columns,
                    column_types={k: v for k, v in types.items() if k in plan.columns},
                    # an empty cell of a text column is missing, as pandas reads it (not "")
                    strings_can_be_null=True,
                    null_values=f.null_values,
                    decimal_point=f.decimal,
                ),
            )
        except (pa.ArrowInvalid, OSError) as exc:
            raise _csv_error(f, exc, names, done) from None
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except (pa.ArrowInvalid, OSError) as exc:
                raise _csv_error(f, exc, names, done) from None
            batch = _utf8_columns(f, batch, done)
            done += batch.num_rows
            yield _left_trimmed(batch)
    finally:
        stream.close()


def _utf8_columns(f: _File, batch: Any, rows_done: int) -> Any:
    """The batch with its text columns as text; ValueError where a cell is not UTF-8.

    pyarrow reads a column holding bytes that are not UTF-8 (a file, or
    the end of one, written as Latin-1) as binary, not text: its values
    would become labels such as ``"b'\\xe9t\\xe9'"``, a class of their own
    beside ``'été'``. The file's first such cell is named instead.
    """
    import pyarrow.types as pt

    columns = list(batch.columns)
    changed = False
    for j, col in enumerate(columns):
        if not (pt.is_binary(col.type) or pt.is_large_binary(col.type)):
            continue
        for i, value in enumerate(col.to_pylist()):
            if value is None:
                continue
            try:
                value.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"{f.name}: not UTF-8 text: column {batch.schema.names[j]!r} at data row "
                    f"{rows_done + i + 1} holds the byte 0x{value[exc.start]:02X}, which is not "
                    "UTF-8 (a file written as Latin-1 or Windows-1252?); the files are read as "
                    f"UTF-8 only: convert the file, e.g. {_iconv(f)}"
                ) from None
        columns[j] = col.cast("large_string" if pt.is_large_binary(col.type) else "string")
        changed = True
    if not changed:
        return batch
    return type(batch).from_arrays(columns, names=batch.schema.names)


def _left_trimmed(batch: Any) -> Any:
    """The batch with the spaces after a separator taken off its text (``a, b``), as pandas does."""
    import pyarrow.compute as pc
    import pyarrow.types as pt

    columns = list(batch.columns)
    changed = False
    for j, col in enumerate(columns):
        if pt.is_string(col.type) or pt.is_large_string(col.type):
            columns[j] = pc.utf8_ltrim_whitespace(col)
            changed = True
    if not changed:
        return batch
    return type(batch).from_arrays(columns, names=batch.schema.names)


def _arrow_type(spec: Any) -> Any:
    pa = _need_pyarrow()
    if isinstance(spec, pa.DataType):
        return spec
    name = str(np.dtype(spec)) if not isinstance(spec, str) else spec
    aliases = {"str": "string", "object": "string", "category": "string", "bool": "bool_"}
    name = aliases.get(name, name)
    try:
        return pa.type_for_alias(name)
    except (ValueError, KeyError):
        fn = getattr(pa, name, None)
        if callable(fn):
            return fn()
        raise ValueError(f"dtypes: unknown column type {spec!r}.") from None


def _csv_chunks(
    files: list[_File],
    selection: _Selection,
    block_rows: int | None,
    dtypes: dict[str, Any] | None,
    dtype: Any,
    counter: list[int],
    buffer: _Ring | None = None,
) -> Iterator[_Chunk]:
    pa = _need_pyarrow()
    plan: _Plan | None = None
    types: dict[str, Any] = {k: _arrow_type(v) for k, v in (dtypes or {}).items()}
    fixed = False
    out_dtype = dtype or np.float64
    for f in files:
        if plan is None:
            names = _csv_header(f)
            plan = _make_plan(names, f.name, selection, hidden=index_columns(names))
            if not selection.frame:
                # numbers, whatever the first rows look like: a column inferred as
                # integers from the first block would refuse a later 2.5
                for c in plan.features:
                    types.setdefault(c, pa.float64())
            if plan.weight is not None:
                types.setdefault(plan.weight, pa.float64())
        rows = _auto_rows(block_rows, len(plan.features))
        block_bytes = int(min(max(rows * len(plan.columns) * 12, 1 << 20), 64 << 20))
        row0 = 0
        for table in _rechunk(_csv_batches(f, plan, types, block_bytes, counter), rows):
            if not fixed:
                # every later block and file is read with the types of the first block
                for c in plan.columns:
                    types.setdefault(c, table.schema.field(c).type)
                fixed = True
                _warn_lone_tokens(table, plan, f)
            yield _table_chunk(table, plan, f, row0, out_dtype, buffer)
            row0 += table.num_rows
