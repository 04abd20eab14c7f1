"""The one suffix table: a table's format and compression by its file name.

Every reader and writer of tables (the command line, the streaming backend,
:mod:`bayesrule.io.formats`) asks :func:`table_path`, :func:`output_format`,
:func:`strip_compression` or :data:`COMPRESSIONS` and keeps no list of its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: compression by suffix (the last suffix of a file name)
COMPRESSIONS: dict[str, str] = {
    ".gz": "gzip",
    ".bz2": "bz2",
    ".xz": "xz",
    ".zst": "zstd",
    ".zstd": "zstd",
    ".zip": "zip",
}
#: the first bytes of a file in each compression (what standard input is told by)
COMPRESSION_MAGIC: dict[bytes, str] = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bz2",
    b"\xfd7zXZ": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"PK\x03\x04": "zip",
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
    inner = compressed_whole(path) if path is not None else None
    if inner is not None:
        return f"{text}; a {inner.name} file compresses its own contents, not as a whole"
    return text


def compressed_whole(path: str | os.PathLike[str]) -> Format | None:
    """The format of ``path`` when it is compressed as a whole although that format
    compresses its own contents (``x.parquet.gz``: Parquet), else None."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if len(suffixes) >= 2 and suffixes[-1] in COMPRESSIONS:
        inner = FORMATS.get(suffixes[-2])
        if inner is not None and not inner.compressible:
            return inner
    return None


def strip_compression(name: str) -> str:
    """``name`` without its compression suffix (``t.csv.gz`` -> ``t.csv``), by :data:`COMPRESSIONS`.

    A name without one is returned as it is. This is also the name of the
    file kept inside a ``.zip`` archive that :func:`~bayesrule.io.formats.write_frames`
    writes.
    """
    suffix = Path(name).suffix
    return name[: -len(suffix)] if suffix and suffix.lower() in COMPRESSIONS else name


def compression_of(path: str | os.PathLike[str]) -> str | None:
    """The compression ``path``'s last suffix names (``"gzip"``, ...), or None."""
    suffixes = Path(path).suffixes
    return COMPRESSIONS.get(suffixes[-1].lower()) if suffixes else None


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


def sniff_compression(data: bytes) -> str | None:
    """The compression of a file whose first bytes are ``data`` (by
    :data:`COMPRESSION_MAGIC`), or None. An Excel workbook is a zip archive
    too: the caller tells it by its members."""
    return next((c for magic, c in COMPRESSION_MAGIC.items() if data.startswith(magic)), None)
