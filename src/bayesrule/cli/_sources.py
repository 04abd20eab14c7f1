"""What the DATA argument names: one file, or a table split over several files.

A directory of Parquet files (as Spark, Dask and pyarrow write a data set,
hive-style ``year=2024/`` folders included), a glob pattern the user quoted
(``'data/part-*.parquet'``, ``'logs/*.csv.gz'``) and several paths (a glob
the shell expanded) are one table: :func:`data_source` lists its files once,
in the order every reader then uses, so that the rows come in the same order
in memory, streamed and on a Dask cluster:

* a directory: its Parquet files, in it and its subdirectories, sorted by
  path as :func:`bayesrule.read_blocks` sorts them; a file or folder whose
  name starts with ``.`` or ``_`` is skipped, as ``pyarrow.dataset`` skips it
  (``_SUCCESS``, ``_metadata``, ``.part-0.crc``, Spark's ``_temporary/``);
* a glob: the files it matches, sorted by name as :func:`bayesrule.read_blocks`
  sorts them (a matched directory stands for its Parquet files; a matched
  ``_SUCCESS`` or other name starting with ``.`` or ``_`` that is not a table
  is skipped);
* several paths: in the order given (``_SUCCESS`` and the like skipped, as
  in a glob).

The columns are those of the first file (the column options choose among
them, as for one file); a later file that lacks one of them, or holds text
where the first holds numbers, is an error naming it. The values in
hive-style folder names are not columns: a column must be in the files.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ..io.formats import compressed_whole, compression_of
from ._data import STDIN, Columns, Dataset, UsageError, read_frame, select
from ._dataset import _IDX_IMAGES, _table_kind
from ._read_table import _table_sep

__all__ = ["Data", "FileSet", "data_source", "is_tabular", "read_dataset", "stream_source"]

_WILDCARDS = "*?["


@dataclass(frozen=True)
class FileSet:
    """The files of one table: one format (``"CSV"`` or ``"Parquet"``), in reading order."""

    given: str  # the argument(s) as the user wrote them, for messages
    name: str  # short: the folder's or the pattern's name, or the first file's and a count
    paths: tuple[Path, ...]
    kind: str

    def __str__(self) -> str:
        return self.given

    @property
    def size(self) -> int:
        """The bytes of every file (what decides whether to stream)."""
        return sum(p.stat().st_size for p in self.paths)

    def describe(self) -> str:
        n = len(self.paths)
        return f"{n} {self.kind} file{'s' if n != 1 else ''}"


#: DATA after :func:`data_source`: a single path (a file, ``-``, an IDX folder) or a file set
Data: TypeAlias = Path | FileSet


def is_tabular(data: Data) -> bool:
    """Whether DATA is read as a table (a CSV or Parquet file, standard input, a file set)."""
    return isinstance(data, FileSet) or data == STDIN or _table_kind(data) is not None


def stream_source(data: Data) -> str | list[str]:
    """The source for :func:`bayesrule.fit_stream` and friends: the file, or the files in order."""
    return [str(p) for p in data.paths] if isinstance(data, FileSet) else str(data)


def data_source(args: Sequence[Path]) -> Data:
    """What the DATA argument(s) name; a lone file, ``-`` or IDX folder is returned as it is.

    Raises
    ------
    UsageError
        A directory without Parquet (or IDX) files, a pattern that matches
        nothing or files of another kind, files of both formats, a missing
        file among several.
    """
    if len(args) == 1:
        path = args[0]
        if path == STDIN:
            return path
        if path.is_dir():
            if any(_IDX_IMAGES.match(p.name) for p in path.iterdir()):
                return path  # an MNIST-style folder
            return _file_set(str(path), path.name, _directory(path, alone=True))
        if not path.exists() and _is_pattern(path):
            return _file_set(str(path), path.name, _matched(path))
        return path
    if STDIN in args:
        raise UsageError("-: standard input cannot be one of several inputs; give files.")
    found: list[Path] = []
    for path in args:
        if path.is_dir():
            found += _directory(path, alone=False)
        elif path.exists():
            if not _writers_mark(path):  # `data/*` expanded by the shell names _SUCCESS
                found.append(path)
        elif _is_pattern(path):
            found += _matched(path)
        else:
            raise UsageError(f"{path}: no such file or directory.")
    shown = [str(a) for a in args]
    given = (
        " ".join(shown) if len(shown) <= 3 else f"{shown[0]} ... {shown[-1]} ({len(shown)} paths)"
    )
    name = f"{args[0].name} and {len(args) - 1} more path{'s' if len(args) > 2 else ''}"
    return _file_set(given, name, found)


def _is_pattern(path: Path) -> bool:
    return any(ch in str(path) for ch in _WILDCARDS)


def _skipped(path: Path, base: Path) -> bool:
    """Hidden or private to the writer, as pyarrow.dataset decides: a part starting . or _."""
    return any(part.startswith((".", "_")) for part in path.relative_to(base).parts)


def _writers_mark(path: Path) -> bool:
    """A file such as _SUCCESS or .part-0.crc: hidden or private to the writer, not a table."""
    return path.name.startswith((".", "_")) and _table_kind(path) is None


def _listing(path: Path) -> list[Path]:
    """The files in a directory and its subdirectories, sorted as read_blocks sorts them."""
    return sorted(q for q in path.rglob("*") if q.is_file() and not _skipped(q, path))


def _directory(path: Path, *, alone: bool) -> list[Path]:
    files = _listing(path)
    parquet = [q for q in files if _table_kind(q) == "Parquet"]
    if parquet:
        return parquet
    if not files:
        what = "is empty"
    else:
        csv = [q for q in files if _table_kind(q) == "CSV"]
        what = (
            f"holds CSV files ({_names(csv, path)}) but no Parquet files; give CSV files as a "
            f"quoted glob, e.g. '{path / '*.csv'}'"
            if csv
            else f"holds no Parquet files (found {_names(files, path)})"
        )
    also = " or MNIST-style IDX files" if alone else ""
    raise UsageError(
        f"{path}: the directory {what}; expected Parquet files (.parquet, .pq) in it or its "
        f"subdirectories{also}."
    )


def _matched(pattern: Path) -> list[Path]:
    hits = sorted(glob.glob(str(pattern), recursive=True))
    found: list[Path] = []
    for hit in map(Path, hits):
        if hit.is_dir():
            found += [q for q in _listing(hit) if _table_kind(q) == "Parquet"]
        elif hit.is_file() and not _writers_mark(hit):
            found.append(hit)
    if not found:
        raise UsageError(
            f"{pattern}: no file matches this pattern; expected CSV or Parquet files "
            "(quote the pattern so that the shell passes it on as it is)."
        )
    return found


def _names(paths: Sequence[Path], base: Path | None = None, n: int = 3) -> str:
    shown = [str(p.relative_to(base)) if base is not None else str(p) for p in paths[:n]]
    return ", ".join(shown) + (f", ... ({len(paths) - n} more)" if len(paths) > n else "")


def _file_set(given: str, name: str, paths: list[Path]) -> FileSet:
    kinds: dict[str, list[Path]] = {}
    for p in paths:
        kind = _table_kind(p)
        if kind not in ("CSV", "Parquet"):
            what = "neither a CSV nor a Parquet file" if kind is None else f"a {kind} file"
            inner = compressed_whole(p)
            if kind is None and inner is not None:
                raise UsageError(f"{given}: {p}: a compressed {inner.name} file cannot be read.")
            raise UsageError(
                f"{given}: {p} is {what} (by its suffix); a table in several files takes "
                ".csv/.tsv/.txt (compressed too) or .parquet/.pq files."
            )
        kinds.setdefault(kind, []).append(p)
    if len(kinds) > 1:
        raise UsageError(
            f"{given}: mixes CSV files ({_names(kinds['CSV'])}) and Parquet files "
            f"({_names(kinds['Parquet'])}); give files of one format."
        )
    (kind,) = kinds
    return FileSet(given, name, tuple(paths), kind)


# ------------------------------------------------------------------ reading at once
def read_dataset(
    files: FileSet,
    target: str | None = None,
    *,
    need_target: bool = False,
    columns: Columns | None = None,
    sep: str | None = None,
    missing_target: str = "drop",
    na_values: list[str] | None = None,
    **_: Any,
) -> Dataset:
    """The files of a set, one after the other, as one table; the columns chosen as for one file.

    ``sep`` (or, by default, the separator sniffed from the first CSV file)
    is used for every file. Other keyword arguments of
    :func:`~bayesrule.cli._data.read_data` (``split``) do not apply and are
    ignored.
    """
    frame = read_frames(files, sep, na_values)
    return select(
        frame, str(files), target, need_target, columns or Columns(), missing_target=missing_target
    )


def read_frames(files: FileSet, sep: str | None = None, na_values: list[str] | None = None) -> Any:
    """Every file read with :func:`~bayesrule.cli._data.read_frame`, checked and concatenated."""
    import pandas as pd

    frames: list[Any] = []
    first: Any = None
    first_path = files.paths[0]
    for path in files.paths:
        try:
            df = read_frame(path, sep=sep, na_values=na_values)
        except UsageError as exc:
            if "has no rows" not in str(exc):
                raise
            continue  # an empty part adds nothing (Spark writes them)
        if first is None:
            first, first_path = df, path
            if files.kind == "CSV" and sep is None:
                sep = _separator_of(path)
        else:
            df = _like_first(df, first, path, first_path)
        frames.append(df)
    if first is None:
        raise UsageError(f"{files}: the {files.describe()} have no rows.")
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _separator_of(path: Path) -> str:
    from ..io.formats import read_head, sniff_separator

    return sniff_separator(read_head(path, compression_of(path)), default=_table_sep(path))


def _like_first(df: Any, first: Any, path: Path, first_path: Path) -> Any:
    """``df`` with the first file's columns in its order; another layout is an error naming it."""
    import pandas as pd

    names = list(first.columns)
    lacking = [c for c in names if c not in df.columns]
    if lacking:
        shown = ", ".join(repr(c) for c in list(df.columns)[:20])
        raise UsageError(
            f"{path}: has no column {lacking[0]!r}, which the first file ({first_path}) has; "
            f"its columns are {shown}."
        )
    numeric = pd.api.types.is_numeric_dtype
    for c in names:
        a, b = numeric(first[c]), numeric(df[c])
        if a != b and df[c].notna().any() and first[c].notna().any():
            kinds = {True: "numbers", False: "text"}
            raise UsageError(
                f"{path}: column {c!r} holds {kinds[b]}, but the first file's ({first_path}) "
                f"holds {kinds[a]}; the files disagree on the column's type."
            )
    return df[names]
