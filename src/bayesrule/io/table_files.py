"""Table files: compressed input opened as a stream, and tables written block by block."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import sys
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from .._util.atomic import staged
from .suffixes import TablePath, strip_compression


# ------------------------------------------------------------------ compressed files
class _Member(io.RawIOBase):
    """A member of a zip archive, closing the archive with it."""

    def __init__(self, archive: zipfile.ZipFile, member: Any) -> None:
        self._archive = archive
        self._member = member

    def readable(self) -> bool:
        return self._member.readable()

    def writable(self) -> bool:
        return self._member.writable()

    def readinto(self, b: Any) -> int:
        data = self._member.read(len(b))
        b[: len(data)] = data
        return len(data)

    def write(self, b: Any) -> int:
        return int(self._member.write(b))

    def close(self) -> None:
        if not self.closed:
            try:
                self._member.close()
            finally:
                self._archive.close()
        super().close()


def open_input(source: Any, compression: str | None) -> BinaryIO:
    """A binary file reading the decompressed bytes of ``source`` (a path or a binary buffer).

    A ``.zip`` archive gives its first file; ``zstd`` is read through pyarrow.
    """
    if compression is None:
        return source if hasattr(source, "read") else open(source, "rb")  # noqa: SIM115
    if compression == "gzip":
        return gzip.open(source, "rb")
    if compression == "bz2":
        return bz2.open(source, "rb")
    if compression == "xz":
        return lzma.open(source, "rb")  # type: ignore[return-value]
    if compression == "zip":
        archive = zipfile.ZipFile(source)
        names = [n for n in archive.namelist() if not n.endswith("/")]
        if not names:
            archive.close()
            raise ValueError("the .zip archive holds no file.")
        return io.BufferedReader(_Member(archive, archive.open(names[0])))
    if compression == "zstd":
        try:
            import pyarrow as pa
        except ImportError:
            raise ImportError(
                "reading .zst files needs pyarrow: pip install 'bayesrule[cli]'", name="pyarrow"
            ) from None
        raw = (
            pa.PythonFile(source, mode="r")
            if hasattr(source, "read")
            else pa.OSFile(os.fspath(source))
        )
        return pa.CompressedInputStream(raw, "zstd")
    raise ValueError(f"unknown compression {compression!r}.")


def _open_output(path: Path, compression: str | None, member: str) -> BinaryIO:
    if compression is None:
        return open(path, "wb")  # noqa: SIM115
    if compression == "gzip":
        return gzip.open(path, "wb")  # type: ignore[return-value]
    if compression == "bz2":
        return bz2.open(path, "wb")  # type: ignore[return-value]
    if compression == "xz":
        return lzma.open(path, "wb")  # type: ignore[return-value]
    if compression == "zip":
        archive = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        return io.BufferedWriter(_Member(archive, archive.open(member, "w")))
    if compression == "zstd":
        import pyarrow as pa

        return pa.output_stream(str(path), compression="zstd")
    raise ValueError(f"unknown compression {compression!r}.")


def read_head(source: Any, compression: str | None, size: int = 65536) -> str:
    """The first ``size`` decompressed bytes of a text table, decoded (a cut character replaced)."""
    return read_head_bytes(source, compression, size).decode("utf-8", errors="replace")


def read_head_bytes(source: Any, compression: str | None, size: int = 65536) -> bytes:
    """The first ``size`` decompressed bytes of ``source``; a buffer is left at its start."""
    if hasattr(source, "seek"):
        source.seek(0)
    fh = open_input(source, compression)
    try:
        raw = fh.read(size)
    finally:
        if fh is not source:
            fh.close()
    if hasattr(source, "seek"):
        source.seek(0)
    return bytes(raw)


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path next to ``path`` to write; renamed over ``path`` if the block succeeds.

    On an error the temporary file is removed and ``path`` is left as it
    was. A path that exists and is not a regular file (``/dev/null``, a
    named pipe) is written directly; a directory is refused
    (``IsADirectoryError``). See :func:`bayesrule._util.atomic.staged`.
    """
    with staged(path) as files:
        yield files[path]


#: The rows of an Excel sheet, the header row included
EXCEL_MAX_ROWS = 1_048_576


class TableTooLarge(ValueError):
    """The rows do not fit in the output format (an Excel sheet); nothing is written."""


class ColumnTypeConflict(ValueError):
    """A column holds values of a type the rows written before it cannot take."""


def excel_row_limit(n_rows: int) -> str | None:
    """Why ``n_rows`` rows do not fit in an Excel sheet, or None when they do."""
    if n_rows <= EXCEL_MAX_ROWS - 1:
        return None
    return (
        f"{n_rows:,} rows do not fit in an Excel sheet (at most {EXCEL_MAX_ROWS - 1:,} below "
        "the header); write .csv or .parquet instead."
    )


def write_frames(
    frames: Iterable[Any],
    path: Path,
    kind: TablePath,
    *,
    name: str = "",
    types: Mapping[str, Any] | None = None,
) -> int:
    """Write DataFrames (or pyarrow Tables), one after the other, as one table; the rows written.

    ``path`` is written as it is (see :func:`replacing` for an all-or-nothing
    write); ``-`` writes to standard output. Memory holds one block except
    for Excel, whose file is written whole. ``name`` is the file name kept
    inside a ``.zip`` archive (by default ``path``'s name without ``.zip``).

    A Parquet file has one type per column. ``types`` declares the pyarrow
    types of the columns it names (a prediction column, as the model's
    classes are; the probabilities, floats), whatever the first block holds.
    A column it does not name takes the first block's type, widened when a
    later block needs it (a column empty so far takes the later type;
    integers and floats make floats): the rows already written are then
    rewritten once with the wider type. Types no column can hold both (text
    and numbers) are a :class:`ColumnTypeConflict` naming the column, both
    types and the row.

    Raises
    ------
    ImportError
        The format needs a package that is not installed (``name`` set).
    TableTooLarge
        An Excel sheet would pass its 1,048,576 rows, raised at the first
        block that would pass them, before anything is written.
    ColumnTypeConflict
        As above (Parquet).
    """
    fmt = kind.format
    rows = 0
    if fmt.name == "Parquet":
        return _write_parquet(frames, path, types)
    if fmt.name == "Excel":
        import pandas as pd

        whole = []
        for i, frame in enumerate(frames):
            block = _pandas(frame)
            if excel_row_limit(rows + len(block)) is not None:
                raise TableTooLarge(
                    f"block {i + 1} (rows {rows + 1:,} to {rows + len(block):,}) would pass the "
                    f"{EXCEL_MAX_ROWS - 1:,} rows an Excel sheet holds below its header; "
                    "write .csv or .parquet instead."
                )
            rows += len(block)
            whole.append(block)
        table = pd.concat(whole, ignore_index=True) if whole else pd.DataFrame()
        try:
            table.to_excel(path, index=False, engine="openpyxl")
        except ModuleNotFoundError as exc:
            raise ImportError(
                f"writing Excel files needs {exc.name}: pip install 'bayesrule[excel]'",
                name=exc.name,
            ) from None
        return len(table)
    member = name or strip_compression(Path(path).name)
    if str(path) == "-":
        binary: Any = sys.stdout.buffer
        sys.stdout.flush()
    else:
        binary = _open_output(path, kind.compression, member)
    text = io.TextIOWrapper(binary, encoding="utf-8", newline="", write_through=False)
    try:
        for i, frame in enumerate(frames):
            df = _pandas(frame)
            if fmt.is_csv:
                df.to_csv(text, sep=fmt.sep or ",", index=False, header=i == 0)
            else:
                _json_lines(df, text)
            rows += len(df)
        text.flush()
    finally:
        if str(path) == "-":
            text.detach()
            sys.stdout.buffer.flush()
        else:
            text.close()
    return rows


def _write_parquet(frames: Iterable[Any], path: Path, types: Mapping[str, Any] | None) -> int:
    """:func:`write_frames` for Parquet: one schema for every block (see there)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    rows = 0
    try:
        for frame in frames:
            table = frame if isinstance(frame, pa.Table) else _arrow(frame)
            if writer is None:
                schema = _declared(table.schema, types or {})
                writer = pq.ParquetWriter(str(path), schema)
            if table.schema != writer.schema:
                try:
                    table = table.cast(writer.schema)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                    wider = _wider(writer.schema, table.schema, rows)
                    writer = _rewritten(writer, path, wider)
                    table = table.cast(wider)
            writer.write_table(table)
            rows += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    return rows


def _declared(schema: Any, types: Mapping[str, Any]) -> Any:
    """``schema`` with the declared types of the columns ``types`` names."""
    import pyarrow as pa

    fields = [
        pa.field(f.name, types[f.name], nullable=True) if f.name in types else f for f in schema
    ]
    return pa.schema(fields, metadata=schema.metadata)


def _wider(written: Any, block: Any, rows: int) -> Any:
    """A schema both the rows written and ``block`` fit (empty -> any type, int + float -> float)."""
    import pyarrow as pa

    if written.names != block.names:
        raise ColumnTypeConflict(
            f"the block from row {rows + 1:,} has the columns {block.names}, "
            f"the rows before it {written.names}."
        )
    fields = []
    for old, new in zip(written, block, strict=True):
        try:
            merged = pa.unify_schemas(
                [pa.schema([old]), pa.schema([new])], promote_options="permissive"
            )
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            raise ColumnTypeConflict(
                f"column {old.name!r} holds {_type_words(new.type)} from row {rows + 1:,}, but "
                f"{_type_words(old.type)} in the rows before; one Parquet column cannot hold both."
            ) from None
        fields.append(merged.field(0))
    return pa.schema(fields, metadata=written.metadata)


def _type_words(t: Any) -> str:
    import pyarrow as pa

    if pa.types.is_null(t):
        return "no values"
    if pa.types.is_integer(t):
        return f"integers ({t})"
    if pa.types.is_floating(t):
        return f"floats ({t})"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "text"
    if pa.types.is_boolean(t):
        return "booleans"
    return f"values of type {t}"


def _rewritten(writer: Any, path: Path, schema: Any) -> Any:
    """A writer of ``path`` with ``schema``, holding again the rows ``writer`` wrote.

    The rows are copied aside to an unnamed temporary file (no name to leave
    behind if the process is killed) and written back into the same file, so
    that a lock held on it stays (:func:`bayesrule._util.atomic.staged`).
    """
    import shutil
    import tempfile

    import pyarrow.parquet as pq

    writer.close()
    if not Path(path).is_file():  # a pipe or a device cannot be read back
        raise ColumnTypeConflict(
            f"the columns need the types {schema}, wider than those of the rows already "
            f"written to {path}, which is not a regular file and cannot be rewritten."
        )
    with tempfile.TemporaryFile(dir=Path(path).parent) as copy:
        with open(path, "rb") as fh:
            shutil.copyfileobj(fh, copy)
        copy.seek(0)
        written = pq.ParquetFile(copy)
        wider = pq.ParquetWriter(str(path), schema)
        try:
            for group in range(written.num_row_groups):
                wider.write_table(written.read_row_group(group).cast(schema))
        except BaseException:
            wider.close()
            raise
    return wider


def _arrow(df: Any) -> Any:
    import pyarrow as pa

    return pa.Table.from_pandas(df, preserve_index=False)


def _pandas(frame: Any) -> Any:
    return (
        frame.to_pandas() if hasattr(frame, "to_pandas") and not hasattr(frame, "iloc") else frame
    )


def _json_value(value: Any) -> Any:
    import numpy as np
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None  # JSON has no NaN: a missing value is null
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return None
    return value


def _json_lines(df: Any, fh: Any) -> None:
    """One JSON object per row, numbers written in full (round-trip exact)."""
    columns = [str(c) for c in df.columns]
    for row in df.itertuples(index=False, name=None):
        record = {c: _json_value(v) for c, v in zip(columns, row, strict=True)}
        fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
