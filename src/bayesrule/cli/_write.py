"""Writing tables and files: all or nothing, through :func:`bayesrule._util.atomic.staged`."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeAlias

from .._util.atomic import staged, temporary_pattern
from ..io.formats import (
    TablePath,
    output_format,
    strip_compression,
    write_frames,
)
from ._dataset import STDIN, UsageError


def _output_kind(path: Path) -> TablePath:
    try:
        return output_format(path)
    except ValueError as exc:
        raise UsageError(f"{exc} ('-' writes CSV to standard output.)") from None


def _writing(kind: TablePath, write: Callable[[], Any]) -> None:
    try:
        write()
    except ImportError as exc:
        extra = "excel" if kind.name == "Excel" else "cli"
        raise UsageError(
            f"writing {kind.name} needs {exc.name}: pip install 'bayesrule[{extra}]'"
        ) from None


def table_writer(df: Any, path: Path) -> Callable[[Path], None]:
    """A function writing ``df`` in the format of ``path``'s suffixes (for :func:`write_files`).

    Every format a table is read from can be written: CSV and TSV (compressed
    by suffix: ``.csv.gz``, ``.tsv.xz``, ...), Parquet, JSON lines and
    Excel; ``-`` (and a device such as ``/dev/null``) takes CSV.
    """
    return block_writer([df], path)


def block_writer(blocks: Any, path: Path) -> Callable[[Path], None]:
    """A function writing an iterable of DataFrames, one after the other, as one table.

    The format follows the suffixes of ``path``, as for :func:`table_writer`;
    the blocks are written as they come, so memory holds one block (an Excel
    file is written whole).
    """
    kind = _output_kind(path)

    def write(target: Path) -> None:
        _writing(kind, lambda: write_frames(blocks, target, kind, name=_member_name(path)))

    return write


def _member_name(path: Path) -> str:
    """The name of the file inside a ``.zip`` archive: the archive's name without ``.zip``."""
    return strip_compression(path.name)


def write_table(df: Any, path: Path) -> None:
    """Write a DataFrame in the format of ``path``'s suffixes; all or nothing.

    ``-`` writes CSV to standard output.
    """
    write_files({path: table_writer(df, path)})


Content: TypeAlias = bytes | Callable[[Path], None]


def write_files(files: Mapping[Path, Content]) -> None:
    """Write every file in full, or none of them.

    The files are written through :func:`bayesrule._util.atomic.staged`:
    each to a temporary file next to it, renamed over its path only when all
    are written. A failure (a full disk, a directory that cannot be written,
    an interrupt) removes the temporary files and leaves the paths as they
    were. A path that is not a regular file (``/dev/null``, a named pipe) is
    written directly, never replaced; ``-`` is standard output (written
    last).

    Parameters
    ----------
    files : mapping of Path to bytes or callable
        The content of each file, or a function that writes it to the path
        it is given.
    """
    paths = [path for path in files if path != STDIN]
    for path in paths:
        if not path.parent.is_dir():
            raise UsageError(f"{path}: the directory {path.parent} does not exist.")
        if path.is_dir():
            raise UsageError(f"{path}: is a directory.")
    with contextlib.ExitStack() as stack:
        try:
            targets = stack.enter_context(staged(paths))
        except OSError as exc:  # no temporary file can be made beside one of the paths
            raise UsageError(
                f"{_unwritable(paths, exc)}: cannot write there ({exc.strerror})."
            ) from None
        for path in paths:
            _write(targets[path], files[path])
    if STDIN in files:
        _write(STDIN, files[STDIN])


def _unwritable(paths: list[Path], exc: OSError) -> Path:
    """The path whose temporary file could not be made (``exc`` names the temporary)."""
    made = Path(str(exc.filename or ""))
    for path in paths:
        if made.parent == path.parent and temporary_pattern(path).fullmatch(made.name):
            return path
    return next((p for p in paths if made.parent == p.parent), paths[0])


def _write(path: Path, content: Content) -> None:
    if isinstance(content, bytes) and path == STDIN:
        sys.stdout.flush()
        sys.stdout.buffer.write(content)
        sys.stdout.buffer.flush()
    elif isinstance(content, bytes):
        with open(path, "wb") as fh:
            fh.write(content)
    else:
        content(path)
