"""The files of a source and the columns a read takes from them.

A source is a path, a list of paths, a glob or a directory of CSV, Parquet or
``.npy`` files (one format at a time); :func:`_files` lists them with their
format, and :func:`_make_plan` picks the columns by name.
"""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...io.formats import (
    STREAMED_COMPRESSIONS,
    decimal_for,
    na_markers,
    near_name,
    read_head,
    sniff_separator,
    suffix_help,
    table_path,
)


def _need_pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:  # pragma: no cover - pyarrow is installed in the test environment
        raise ImportError(
            "reading CSV and Parquet files block by block needs pyarrow: "
            "pip install 'bayesrule[parquet]'"
        ) from None
    return pyarrow


# ---------------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------------
@dataclass
class _File:
    path: Path
    kind: str  # 'csv', 'parquet', 'npy'
    compression: str | None = None
    # CSV: how the text is read (see _csv_options), and the header's names once read
    sep: str = ","
    decimal: str = "."
    null_values: list[str] = field(default_factory=lambda: na_markers(None))
    names: list[str] | None = None

    @property
    def name(self) -> str:
        return str(self.path)


def _kind_of(path: Path) -> _File:
    if path.suffix.lower() == ".npy":
        return _File(path, "npy")
    found = table_path(path)
    if found is not None and found.name == "Parquet":
        return _File(path, "parquet")
    if found is not None and found.format.is_csv:
        if found.compression not in (None, *STREAMED_COMPRESSIONS):
            raise ValueError(
                f"source {str(path)!r}: a .zip archive cannot be read block by block; "
                "compress it with gzip, bzip2, xz or zstd instead."
            )
        return _File(path, "csv", found.compression, sep=found.format.sep or ",")
    if found is not None:
        raise ValueError(
            f"source {str(path)!r}: {found.name} files are not read block by block; read the "
            "table with pandas and call the estimator's fit, or convert it to CSV or Parquet."
        )
    raise ValueError(
        f"source {str(path)!r}: cannot tell its format from the name; expected a CSV or "
        f"Parquet file ({suffix_help(path)}) or .npy."
    )


def _csv_options(files: list[_File], sep: str | None, decimal: str | None, na_values: Any) -> None:
    """Set how every CSV file is read: the separator and decimal mark of the first, the markers.

    The separator (among , ; tab |) and the decimal mark are sniffed from
    the first lines of the first file unless given, as the command line
    does. A missing-value marker also counts after the space that follows
    a separator (``a, NA, c``).
    """
    markers = na_markers(na_values)
    if sep is not None and (not isinstance(sep, str) or len(sep) != 1):
        raise ValueError(f"sep must be one character; got {sep!r}.")
    if decimal is not None and decimal not in (".", ","):
        raise ValueError(f"decimal must be '.' or ','; got {decimal!r}.")
    first = files[0]
    head = ""
    if sep is None or decimal is None:
        try:
            head = read_head(first.path, first.compression)
        except (OSError, EOFError, ValueError) as exc:
            raise ValueError(f"{first.name}: cannot be read as CSV: {_first_line(exc)}") from None
    sep = sep if sep is not None else sniff_separator(head, default=first.sep)
    decimal = decimal if decimal is not None else decimal_for(head, sep)
    if decimal == sep:
        raise ValueError(f"decimal {decimal!r} is also the separator; give sep=.")
    nulls = list(dict.fromkeys([*markers, *(" " + m for m in markers)]))
    for f in files:
        f.sep, f.decimal, f.null_values = sep, decimal, nulls


def _is_path(source: Any) -> bool:
    return isinstance(source, (str, os.PathLike))


def _files(source: Any) -> list[_File] | None:
    """The files of a path, directory, glob or list of them; None for an iterable of blocks."""
    if _is_path(source):
        items: list[Any] = [source]
    elif isinstance(source, (list, tuple)) and source and all(_is_path(s) for s in source):
        items = list(source)
    else:
        return None
    out: list[_File] = []
    for item in items:
        text = os.fspath(item)
        if any(ch in text for ch in "*?[") and not Path(text).exists():
            found = sorted(glob.glob(text, recursive=True))
            if not found:
                raise ValueError(f"source {text!r}: no file matches this pattern.")
            out.extend(_kind_of(Path(f)) for f in found if Path(f).is_file())
            continue
        path = Path(text)
        if path.is_dir():
            inner: list[_File] = []
            for q in sorted(path.rglob("*")):
                if q.is_file() and not q.name.startswith((".", "_")):
                    with contextlib.suppress(ValueError):
                        inner.append(_kind_of(q))
            if not inner:
                raise ValueError(
                    f"source {text!r}: the directory holds no .parquet, .csv or .npy files."
                )
            out.extend(inner)
        elif not path.exists():
            raise ValueError(f"source {text!r}: no such file or directory.")
        else:
            out.append(_kind_of(path))
    kinds = {f.kind for f in out}
    if len(kinds) > 1:
        raise ValueError(
            f"source mixes file formats ({', '.join(sorted(kinds))}); give files of one format."
        )
    return out


def _total_bytes(files: list[_File]) -> int:
    return sum(f.path.stat().st_size for f in files)


# ---------------------------------------------------------------------------------
# columns
# ---------------------------------------------------------------------------------
@dataclass
class _Plan:
    """Which columns a read takes, by name, and how they are delivered."""

    features: list[str]
    target: str | None
    weight: str | None
    keep: list[str] = field(default_factory=list)
    frame: bool = False  # X as a pandas DataFrame with the original dtypes

    @property
    def columns(self) -> list[str]:
        cols = list(self.features)
        for extra in [self.target, self.weight, *self.keep]:
            if extra is not None and extra not in cols:
                cols.append(extra)
        return cols


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(repr(n) for n in list(names)[:20])
    return "[" + shown + (", ..." if len(names) > 20 else "") + "]"


@dataclass(frozen=True)
class _Selection:
    """The columns a read asks for, by name or pattern, before any file's header is seen.

    ``exclude`` are columns never read as features (a label column left out
    of the default features when predicting).
    """

    features: Any = None
    target: Any = None
    weight: Any = None
    keep: Any = None
    frame: bool = False
    exclude: Sequence[str] = ()


def _make_plan(
    names: list[str], where: str, selection: _Selection, hidden: Sequence[str] = ()
) -> _Plan:
    """The columns to read; by default every column but the target, weight, kept and ``hidden``.

    ``hidden`` are the columns a DataFrame's index was written to (left out
    unless asked for by name).
    """
    features, target, weight, keep = (
        selection.features,
        selection.target,
        selection.weight,
        selection.keep,
    )
    for what, col in (("target", target), ("weight", weight)):
        if col is not None and col not in names:
            near = near_name(str(col), names)
            hint = f" (did you mean {near!r}?)" if near is not None else ""
            raise ValueError(
                f"{where}: the {what} column {col!r} is not in the file{hint}; its columns are "
                f"{_listing(names)}."
            )
    kept = [keep] if isinstance(keep, str) else list(keep or [])
    for col in kept:
        if col not in names:
            raise ValueError(
                f"{where}: the column {col!r} to keep is not in the file; its columns are "
                f"{_listing(names)}."
            )
    taken = {c for c in (target, weight, *selection.exclude) if c is not None}
    if features is None:
        chosen = [n for n in names if n not in taken and n not in kept and n not in hidden]
    else:
        patterns = [features] if isinstance(features, str) else list(features)
        chosen = []
        for pat in patterns:
            pat = str(pat)
            hits = (
                [n for n in names if fnmatch.fnmatchcase(n, pat)]
                if any(ch in pat for ch in "*?[")
                else ([pat] if pat in names else [])
            )
            if not hits:
                near = near_name(pat, names)
                hint = f" (did you mean {near!r}?)" if near is not None else ""
                raise ValueError(
                    f"{where}: no column matches the feature {pat!r}{hint}; the columns are "
                    f"{_listing(names)}."
                )
            chosen.extend(h for h in hits if h not in chosen and h not in taken)
    if not chosen:
        raise ValueError(f"{where}: no feature column is left to read.")
    return _Plan(chosen, target, weight, kept, selection.frame)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
