"""The one atomic writer: files appear whole under their final names, or not at all.

Every writer of bayesrule (model files, tables, prediction outputs, the CLI's
reports) writes through :func:`staged`: each destination gets a temporary
file beside it, the caller writes the temporaries, and only when the block
ends without an error are they renamed over the destinations (a rename within
a directory is atomic on POSIX and Windows). On an error every temporary is
removed and every destination is left as it was. A writer holds a lock on its
temporaries and first removes those that killed writes to the same
destinations left behind (:func:`remove_abandoned`).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

try:  # POSIX: a writer holds a lock on its temporary file until it has renamed it
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["remove_abandoned", "staged", "temporary_pattern", "umask"]

#: ``.NAME.tmp-XXXXXXXX``: the temporary of a write to NAME (see :func:`remove_abandoned`)
_PREFIX = ".{name}.tmp-"


def umask() -> int:
    """The process's file-creation mask."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def temporary_pattern(path: Path) -> re.Pattern[str]:
    """The names of the temporaries that writes to ``path`` create.

    Also matches ``.NAME.XXXXXXXX.tmp``, the temporaries of bayesrule
    versions before this module (model saves and table writes), so that
    :func:`remove_abandoned` clears what an interrupted write of theirs left.
    """
    name = re.escape(f".{path.name}.")
    return re.compile(name + r"(?:tmp-[A-Za-z0-9_]+|[a-z0-9_]{8}\.tmp)")


@contextlib.contextmanager
def staged(
    paths: Path | Iterable[Path], *, lock: bool = True, durable: bool = False
) -> Iterator[dict[Path, Path]]:
    """Map each destination to a temporary to write; rename them all when the block succeeds.

    Parameters
    ----------
    paths : path or iterable of paths
        The destinations. One that exists and is not a regular file (a named
        pipe, ``/dev/null``) is written directly: it maps to itself.
    lock : bool, default=True
        Hold an exclusive lock on each temporary until it is renamed, so that
        :func:`remove_abandoned` never takes a write in progress for an
        abandoned one (POSIX), and first remove the temporaries that earlier,
        interrupted writes to the same destinations left (those no live
        process holds locked). ``False`` does neither: its temporaries look
        abandoned to every other writer while they are written.
    durable : bool
        ``fsync`` each file before the rename and the directory after it.

    Yields
    ------
    dict
        Destination -> the path to write. A temporary is created with the
        permissions a new file would get (or those of the file it replaces).
    """
    targets = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    mapping: dict[Path, Path] = {}
    held: list[int] = []
    temporaries: list[Path] = []
    try:
        for path in targets:
            if path.exists() and not path.is_file():
                if path.is_dir():
                    raise IsADirectoryError(f"{path}: is a directory.")
                mapping[path] = path
                continue
            if lock:
                remove_abandoned(path)
            fd, name = _temporary(path, lock)
            temporaries.append(Path(name))
            if lock and fcntl is not None:
                held.append(fd)
            else:
                os.close(fd)
            mapping[path] = Path(name)
        yield mapping
        mask = umask()
        for path, tmp in mapping.items():
            if tmp == path:
                continue
            if durable:
                with open(tmp, "rb+") as fh:
                    os.fsync(fh.fileno())
            mode = path.stat().st_mode & 0o7777 if path.is_file() else 0o666 & ~mask
            os.chmod(tmp, mode)
        for path, tmp in mapping.items():
            if tmp != path:
                os.replace(tmp, path)
        temporaries.clear()
        if durable:
            for directory in {p.parent for p in mapping}:
                _fsync_directory(directory)
    finally:
        for fd in held:
            os.close(fd)
        for tmp in temporaries:
            tmp.unlink(missing_ok=True)


def _temporary(path: Path, lock: bool) -> tuple[int, str]:
    """A new temporary beside ``path``: its descriptor (locked if ``lock``) and name.

    Between ``mkstemp`` and ``flock`` another process's :func:`remove_abandoned`
    could take the fresh temporary for an abandoned one and remove it; a
    temporary whose name no longer leads to it is made again.
    """
    while True:
        fd, name = tempfile.mkstemp(prefix=_PREFIX.format(name=path.name), dir=path.parent)
        if not lock or fcntl is None:
            return fd, name
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.path.samestat(os.fstat(fd), os.stat(name)):
                return fd, name
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise
        os.close(fd)


def remove_abandoned(path: Path) -> None:
    """Remove the temporaries that interrupted writes to ``path`` left behind.

    A write in progress with ``lock=True`` holds an exclusive lock on its
    temporary until the rename, so one that can be locked is abandoned (a
    killed process's lock is gone with it). Only regular files whose names
    match :func:`temporary_pattern` are touched.
    """
    pattern = temporary_pattern(path)
    try:
        entries = [e for e in os.scandir(path.parent) if pattern.fullmatch(e.name)]
    except OSError:
        return
    for entry in entries:
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            if fcntl is None:  # pragma: no cover - Windows
                os.unlink(entry.path)
                continue
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.unlink(entry.path)
            finally:
                os.close(fd)
        except OSError:  # locked by a write in progress, or already gone
            continue


def _fsync_directory(directory: Path) -> None:
    """Make a rename durable (POSIX); a file system that cannot does without."""
    if os.name == "nt":  # pragma: no cover - Windows
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
