"""Writing tables and files: all or nothing, through :func:`bayesrule._util.atomic.staged`."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeAlias

from .._util.atomic import staged, temporary_pattern
from ..io.formats import (
    TablePath,
    output_format,
    strip_compression,
    write_frames,
)
from ..io.table_files import ColumnTypeConflict, TableTooLarge, excel_row_limit
from ._dataset import STDIN, UsageError

#: Set on an OSError that reading the input raised while an output was written
_FROM_INPUT = "_bayesrule_from_input"


def output_kind(path: Path) -> TablePath:
    """The format of an output path; an unknown suffix is a UsageError naming the suffixes."""
    try:
        return output_format(path)
    except ValueError as exc:
        raise UsageError(f"{exc} ('-' writes CSV to standard output.)") from None


def _writing(kind: TablePath, path: Path, write: Callable[[], Any]) -> None:
    try:
        write()
    except ImportError as exc:
        extra = "excel" if kind.name == "Excel" else "cli"
        raise UsageError(
            f"writing {kind.name} needs {exc.name}: pip install 'bayesrule[{extra}]'"
        ) from None
    except (TableTooLarge, ColumnTypeConflict) as exc:
        raise UsageError(f"{path}: {exc}") from None


def _from_input(blocks: Iterable[Any]) -> Iterator[Any]:
    """``blocks``, with an OSError of theirs (reading the input) marked as not the output's."""
    iterator = iter(blocks)
    while True:
        try:
            block = next(iterator)
        except StopIteration:
            return
        except OSError as exc:
            setattr(exc, _FROM_INPUT, True)
            raise
        yield block


def check_rows_fit(path: Path, n_rows: int) -> None:
    """Refuse, before any work, ``n_rows`` rows for an output whose format cannot hold them."""
    if path == STDIN:
        return
    if output_kind(path).format.name == "Excel":
        why = excel_row_limit(n_rows)
        if why is not None:
            raise UsageError(f"{path}: {why}")


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (a link, another spelling of the path)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def input_files(data: Any, what: str) -> dict[Path, str]:
    """The files DATA names, each with ``what`` it is, for :func:`refuse_overwriting`.

    ``data`` is the DATA argument (a list of paths: the files among them) or
    what :func:`~bayesrule.cli._sources.data_source` made of it (a file set:
    its files; an IDX folder: the files in it).
    """
    paths = getattr(data, "paths", None)
    if paths is not None:
        return {p: f"{what} (a file of {data})" for p in paths}
    found: dict[Path, str] = {}
    for item in data if isinstance(data, (list, tuple)) else [data]:
        if not isinstance(item, (str, os.PathLike)) or Path(item) == STDIN:
            continue
        path = Path(item)
        if path.is_file():
            found[path] = what
        elif path.is_dir() and not isinstance(data, (list, tuple)):
            found.update({p: f"{what} (a file of {path})" for p in path.iterdir() if p.is_file()})
    return found


def refuse_overwriting(output: Path, inputs: Mapping[Path, str]) -> None:
    """Refuse an output that is one of the files the command reads (``inputs``: path -> what).

    Writing it would replace the data it is made from. Checked before
    anything is read or written: with :func:`os.path.samefile` where both
    exist (a symbolic or hard link, ``./x``, ``dir/../x``), by resolved path
    otherwise. An output that exists and is not a regular file (``/dev/null``,
    a pipe) is written directly, never replaced: it is not checked.
    """
    if output == STDIN or (output.exists() and not output.is_file()):
        return
    for path, what in inputs.items():
        if path == STDIN:
            continue
        if _same_file(output, path):
            same = "" if str(path) == str(output) else f" ({path})"
            raise UsageError(
                f"-o {output}: this is the {what}{same}; writing there would replace it. "
                "Choose another output name."
            )


def table_writer(df: Any, path: Path) -> Callable[[Path], None]:
    """A function writing ``df`` in the format of ``path``'s suffixes (for :func:`write_files`).

    Every format a table is read from can be written: CSV and TSV (compressed
    by suffix: ``.csv.gz``, ``.tsv.xz``, ...), Parquet, JSON lines and
    Excel; ``-`` (and a device such as ``/dev/null``) takes CSV.
    """
    return block_writer([df], path)


def block_writer(
    blocks: Any, path: Path, types: Mapping[str, Any] | None = None
) -> Callable[[Path], None]:
    """A function writing an iterable of DataFrames, one after the other, as one table.

    The format follows the suffixes of ``path``, as for :func:`table_writer`;
    the blocks are written as they come, so memory holds one block (an Excel
    file is written whole; a block that would pass an Excel sheet's rows is
    refused, and nothing is written). ``types`` declares the pyarrow types
    of columns of a Parquet output (see :func:`bayesrule.io.formats.write_frames`).
    """
    kind = output_kind(path)

    def write(target: Path) -> None:
        _writing(
            kind,
            path,
            lambda: write_frames(
                _from_input(blocks), target, kind, name=_member_name(path), types=types
            ),
        )

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
            if path.parent.exists():
                raise UsageError(f"{path}: {path.parent} is a file, not a directory.")
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
            try:
                _write(targets[path], files[path])
            except OSError as exc:
                if getattr(exc, _FROM_INPUT, False):
                    raise
                raise UsageError(_write_failed(path, targets[path], exc)) from None
    if STDIN in files:
        _write(STDIN, files[STDIN])


def _write_failed(path: Path, target: Path, exc: OSError) -> str:
    """The message for a write to ``path`` (through ``target``) that failed with ``exc``."""
    if exc.strerror:
        reason = exc.strerror
    elif exc.errno:
        reason = os.strerror(exc.errno)
    else:  # pyarrow's: "Error writing bytes to file. Detail: [errno 28] No space left on device"
        reason = str(exc).split("Detail:")[-1].strip() or type(exc).__name__
    if target == path:  # a device or a pipe, written directly
        return f"{path}: writing the output failed ({reason})."
    return f"{path}: writing the output failed ({reason}); the file is left as it was."


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
