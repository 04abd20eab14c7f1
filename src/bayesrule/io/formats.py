"""File formats of tables: the one suffix table every reader and writer uses.

A table's format is told by its last suffix, looked through one compression
suffix (``penguins.csv.gz``): CSV (``.csv``, ``.txt``; ``.tsv`` and
``.tab`` separated by tabs), Parquet (``.parquet``, ``.pq``), JSON lines
(``.jsonl``, ``.ndjson``) and Excel (``.xlsx``, ``.xlsm``). Text formats may
be compressed (``.gz``, ``.bz2``, ``.xz``, ``.zst``/``.zstd``, ``.zip``);
Parquet and Excel compress their own contents and may not. Whatever can be
read can be written, by the same table (:func:`write_frames`).

The rest are the rules a table's text is read by, shared by the command line
(pandas) and the streaming readers (pyarrow): the separator sniffed from the
first lines, decimal commas, the markers of a missing value
(:data:`NA_VALUES`, deliberately narrow: ``None``, ``?`` and ``-`` are values
unless asked for), header names stripped of spaces and refused when two are
equal, the columns pandas writes for a DataFrame's index, and a numeric column
spoilt by one repeated token (``?``), which is worth a warning.

This module imports nothing else of bayesrule; pandas and pyarrow are
imported where they are needed.
"""

from __future__ import annotations

import bz2
import contextlib
import csv
import difflib
import gzip
import io
import json
import lzma
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "COMPRESSIONS",
    "FORMATS",
    "NA_VALUES",
    "Format",
    "TablePath",
    "clean_names",
    "decimal_commas",
    "header_names",
    "index_columns",
    "lone_token",
    "na_markers",
    "near_name",
    "open_input",
    "replacing",
    "sniff_separator",
    "suffix_help",
    "table_path",
    "write_frames",
]

#: compression by suffix (the last suffix of a file name)
COMPRESSIONS: dict[str, str] = {
    ".gz": "gzip",
    ".bz2": "bz2",
    ".xz": "xz",
    ".zst": "zstd",
    ".zstd": "zstd",
    ".zip": "zip",
}
#: compressions read as a stream (a .zip archive is opened whole)
STREAMED_COMPRESSIONS = ("gzip", "bz2", "xz", "zstd")


@dataclass(frozen=True)
class Format:
    """A table format: its name, the separator of a CSV kind, whether it may be compressed."""

    name: str  # "CSV", "Parquet", "JSON lines", "Excel"
    sep: str | None = None
    compressible: bool = False
    package: str | None = None  # what reading and writing it needs beyond pandas

    @property
    def is_csv(self) -> bool:
        return self.name == "CSV"


CSV = Format("CSV", ",", True)
TSV = Format("CSV", "\t", True)
PARQUET = Format("Parquet", package="pyarrow")
JSON_LINES = Format("JSON lines", compressible=True)
EXCEL = Format("Excel", package="openpyxl")

#: formats by suffix, for reading and for writing
FORMATS: dict[str, Format] = {
    ".csv": CSV,
    ".txt": CSV,
    ".tsv": TSV,
    ".tab": TSV,
    ".parquet": PARQUET,
    ".pq": PARQUET,
    ".jsonl": JSON_LINES,
    ".ndjson": JSON_LINES,
    ".xlsx": EXCEL,
    ".xlsm": EXCEL,
}

#: cell texts read as a missing value unless others are asked for: an empty cell and the
#: spellings R, pandas, SQL and JSON write; never ``None``, ``?``, ``-`` or ``0``, which
#: are values in some tables (an airbag column's ``None``) and markers in others
NA_VALUES: tuple[str, ...] = ("", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL")

#: the name pyarrow gives a column holding a DataFrame's unnamed index level
_INDEX_LEVEL = re.compile(r"__index_level_\d+__")


@dataclass(frozen=True)
class TablePath:
    """What a path's suffixes say: its format and compression."""

    format: Format
    compression: str | None = None

    @property
    def name(self) -> str:
        return self.format.name


def table_path(path: str | os.PathLike[str]) -> TablePath | None:
    """The format and compression of ``path`` by its suffixes; None if they name no table.

    A compressed Parquet or Excel file (``x.parquet.gz``) is None: its
    format compresses its own contents (see :func:`suffix_help`).
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    compression = None
    if suffixes and suffixes[-1] in COMPRESSIONS:
        compression = COMPRESSIONS[suffixes.pop()]
    fmt = FORMATS.get(suffixes[-1]) if suffixes else None
    if fmt is None or (compression is not None and not fmt.compressible):
        return None
    return TablePath(fmt, compression)


def suffix_help(path: str | os.PathLike[str] | None = None) -> str:
    """The suffixes a table may have, as a phrase for messages (and why ``path`` has none)."""
    text = (
        ".csv, .tsv or .txt (also compressed: .gz, .bz2, .xz, .zst, .zip), .parquet or .pq, "
        ".jsonl (also compressed) or .xlsx"
    )
    if path is not None:
        suffixes = [s.lower() for s in Path(path).suffixes]
        if len(suffixes) >= 2 and suffixes[-1] in COMPRESSIONS:
            inner = FORMATS.get(suffixes[-2])
            if inner is not None and not inner.compressible:
                return f"{text}; a {inner.name} file compresses its own contents, not as a whole"
    return text


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
    return bytes(raw).decode("utf-8", errors="replace")


# ------------------------------------------------------------------ the text of a CSV file
def sniff_separator(text: str, default: str) -> str:
    """The separator among , ; tab | that splits the first lines into equally many fields."""
    lines = [line for line in text.splitlines()[:30] if line.strip()]
    if len(lines) > 1 and len(text) >= 65536:
        lines = lines[:-1]  # the last line may be cut
    if not lines:
        return default
    best, best_fields = default, 1
    for candidate in (default, ",", ";", "\t", "|"):
        counts = {_count_outside_quotes(line, candidate) for line in lines}
        if len(counts) == 1:
            n = counts.pop()
            if n + 1 > best_fields:
                best, best_fields = candidate, n + 1
    return best


def _count_outside_quotes(line: str, sep: str) -> int:
    n, quoted = 0, False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == sep and not quoted:
            n += 1
    return n


_DECIMAL_COMMA = re.compile(r"(?:^|;)\s*-?\d+,\d+\s*(?=;|$)", re.M)
_DECIMAL_POINT = re.compile(r"(?:^|;)\s*-?\d+\.\d+\s*(?=;|$)", re.M)


def decimal_commas(text: str) -> bool:
    """Whether a semicolon-separated text writes numbers with decimal commas (``1,5``)."""
    return bool(_DECIMAL_COMMA.search(text)) and not _DECIMAL_POINT.search(text)


def decimal_for(text: str, sep: str) -> str:
    """The decimal mark of a CSV text: a comma for ``;``-separated decimal commas, else a point."""
    return "," if sep == ";" and decimal_commas(text) else "."


def header_names(text: str, sep: str) -> list[str] | None:
    """The fields of the first line of a CSV text as written (None for an empty text)."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        return None
    row = next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), None)
    return None if row is None else list(row)


class DuplicateColumnError(ValueError):
    """Two columns of a table have the same name."""


def clean_names(raw: Sequence[Any], where: str) -> list[str]:
    """Header names as text, stripped of spaces; an empty one named ``Unnamed: i`` as pandas does.

    Raises
    ------
    DuplicateColumnError
        Two names are equal (after stripping), naming the name and both columns.
    """
    names: list[str] = []
    seen: dict[str, int] = {}
    for i, value in enumerate(raw):
        name = str(value).strip()
        if not name:
            name = f"Unnamed: {i}"
        if name in seen:
            raise DuplicateColumnError(
                f"{where}: the column name {name!r} is used twice (columns {seen[name] + 1} and "
                f"{i + 1}); rename one of them."
            )
        seen[name] = i
        names.append(name)
    return names


def index_columns(names: Sequence[str], pandas_metadata: dict[str, Any] | None = None) -> list[str]:
    """The columns of a table that hold a written-out DataFrame index, by their names.

    pyarrow names an unnamed index level ``__index_level_N__``; a Parquet
    file's pandas metadata lists its index columns; pandas writes an unnamed
    index to CSV as a first column with an empty name (``Unnamed: 0`` when
    read), as R writes its row names.
    """
    found = [n for n in names if _INDEX_LEVEL.fullmatch(n)]
    if pandas_metadata:
        for entry in pandas_metadata.get("index_columns", []):
            if isinstance(entry, str) and entry in names and entry not in found:
                found.append(entry)
    if names and names[0] in ("", "Unnamed: 0") and names[0] not in found:
        found.insert(0, names[0])
    return found


def na_markers(na_values: str | Iterable[str] | None, parameter: str = "na_values") -> list[str]:
    """:data:`NA_VALUES` and the markers asked for (a string or strings), in that order."""
    if na_values is None:
        extra: list[str] = []
    elif isinstance(na_values, str):
        extra = [na_values]
    else:
        try:
            extra = list(na_values)
        except TypeError:
            raise TypeError(
                f"{parameter} must be a string or a list of strings; got "
                f"{type(na_values).__name__}."
            ) from None
        bad = [v for v in extra if not isinstance(v, str)]
        if bad:
            raise TypeError(f"{parameter} must hold strings (the text of a cell); got {bad[0]!r}.")
    return list(dict.fromkeys([*NA_VALUES, *extra]))


def lone_token(values: Any) -> tuple[str, int] | None:
    """``(token, count)`` when a text column holds numbers and one repeated other text.

    Such a column (``?`` among numbers, as UCI tables mark a missing value)
    is read as text, which a table model then treats as a category; the
    caller says so. ``values`` is a pandas Series; missing values are ignored.
    """
    import pandas as pd

    if values.dtype.kind in "biufcmM":
        return None
    present = values.dropna()
    if present.empty:
        return None
    text = present.astype(str).str.strip()
    numbers = pd.to_numeric(text, errors="coerce")
    others = text[numbers.isna()]
    if others.empty or len(others) == len(text):
        return None
    tokens = others.unique()
    if len(tokens) != 1:
        return None
    return str(tokens[0]), int(len(others))


def near_name(name: str, names: Sequence[str]) -> str | None:
    """The column name ``name`` was probably meant to be (case, spaces, a typo), or None."""
    folded = {n.strip().casefold(): n for n in names}
    exact = folded.get(name.strip().casefold())
    if exact is not None and exact != name:
        return exact
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.75)
    return close[0] if close else None


# ------------------------------------------------------------------ writing
@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path next to ``path`` to write; renamed over ``path`` if the block succeeds.

    On an error the temporary file is removed and ``path`` is left as it
    was. A path that exists and is not a regular file (``/dev/null``, a
    named pipe) is written directly.
    """
    if path.exists() and not path.is_file():
        if path.is_dir():
            raise IsADirectoryError(f"{path}: is a directory.")
        yield path
        return
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        mode = path.stat().st_mode & 0o7777 if path.is_file() else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def output_format(path: Path) -> TablePath:
    """The format a table written to ``path`` takes; CSV for ``-`` and for a device or pipe.

    Raises
    ------
    ValueError
        The suffixes name no table format.
    """
    if str(path) == "-":
        return TablePath(CSV)
    found = table_path(path)
    if found is not None:
        return found
    if path.exists() and not path.is_file() and not path.is_dir():
        return TablePath(CSV)  # /dev/null, a named pipe
    suffix = "".join(path.suffixes) or "(no suffix)"
    raise ValueError(f"{path}: cannot write a table as {suffix!r}; use {suffix_help(path)}.")


def write_frames(frames: Iterable[Any], path: Path, kind: TablePath, *, name: str = "") -> int:
    """Write DataFrames (or pyarrow Tables), one after the other, as one table; the rows written.

    ``path`` is written as it is (see :func:`replacing` for an all-or-nothing
    write); ``-`` writes to standard output. Memory holds one block except
    for Excel, whose file is written whole. ``name`` is the file name kept
    inside a ``.zip`` archive (by default ``path``'s name without ``.zip``).

    Raises
    ------
    ImportError
        The format needs a package that is not installed (``name`` set).
    """
    fmt = kind.format
    rows = 0
    if fmt.name == "Parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        writer = None
        try:
            for frame in frames:
                table = frame if isinstance(frame, pa.Table) else _arrow(frame)
                if writer is None:
                    writer = pq.ParquetWriter(str(path), table.schema)
                elif table.schema != writer.schema:
                    table = table.cast(writer.schema)
                writer.write_table(table)
                rows += table.num_rows
        finally:
            if writer is not None:
                writer.close()
        return rows
    if fmt.name == "Excel":
        import pandas as pd

        whole = [_pandas(f) for f in frames]
        table = pd.concat(whole, ignore_index=True) if whole else pd.DataFrame()
        try:
            table.to_excel(path, index=False, engine="openpyxl")
        except ModuleNotFoundError as exc:
            raise ImportError(
                f"writing Excel files needs {exc.name}: pip install 'bayesrule[excel]'",
                name=exc.name,
            ) from None
        return len(table)
    member = name or Path(path).name.removesuffix(".zip").removesuffix(".ZIP")
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
