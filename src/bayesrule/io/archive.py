"""The zip container of a model file: opened only if regular, bounded before it is parsed."""

from __future__ import annotations

import os
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

from numpy.typing import NDArray

from .arrays import read_npy
from .constants import (
    _ALLOWED_FLAGS,
    _COMPRESSIONS,
    _END_MAGIC,
    _EPOCH,
    _MEMBER_NAME,
    _ZIP_MAGIC,
    MAX_MEMBERS,
    MAX_METADATA_BYTES,
    METADATA,
    ModelFileError,
)
from .metadata import _check_metadata, _parse_json

_FILE_KINDS = [
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
]


def _not_regular(path: Path, mode: int) -> ModelFileError:
    what = next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")
    return ModelFileError(f"{path}: is {what}, not a model file; only regular files are read.")


def _open_regular(path: Path) -> tuple[IO[bytes], int]:
    """Open ``path`` for reading if it is a regular file (symbolic links followed).

    The path is examined with ``os.stat`` before it is opened, so a FIFO or a
    device is never opened (opening a FIFO blocks); the opened file is checked
    again, in case the path changed in between.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file.") from None
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read the model file ({exc.strerror}).") from None
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read the model file ({exc.strerror}).") from None
    fst = os.fstat(fd)
    if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        if not stat.S_ISREG(fst.st_mode):
            raise _not_regular(path, fst.st_mode)
        raise ModelFileError(f"{path}: the file changed while it was opened.")
    return os.fdopen(fd, "rb"), int(fst.st_size)


def _corrupted(path: Path, exc: BaseException | str) -> ModelFileError:
    return ModelFileError(f"{path}: truncated or corrupted model file ({exc}).")


def _check_end_record(path: Path, fh: IO[bytes], size: int) -> None:
    """Bound the central directory before ``zipfile`` parses it: at most
    :data:`MAX_MEMBERS` entries, of a size that fits them."""
    tail_size = min(size, 22 + 0xFFFF)
    fh.seek(size - tail_size)
    tail = fh.read(tail_size)
    at = tail.rfind(_END_MAGIC)
    if at < 0 or len(tail) - at < 22:
        raise _corrupted(path, "no end of central directory record")
    entries, cd_size = struct.unpack("<HI", tail[at + 10 : at + 16])
    if entries > MAX_MEMBERS or cd_size > MAX_MEMBERS * (46 + 2 * 0xFFFF):
        raise ModelFileError(
            f"{path}: the archive declares {entries} members ({cd_size} bytes of directory); "
            f"a model file has at most {MAX_MEMBERS}."
        )
    fh.seek(0)


def _check_infos(
    path: Path, zf: zipfile.ZipFile, size: int, max_bytes: int
) -> dict[str, zipfile.ZipInfo]:
    """Every member's name, flags, compression and declared sizes, before reading any."""
    infos: dict[str, zipfile.ZipInfo] = {}
    total = 0
    members = zf.infolist()
    if len(members) > MAX_MEMBERS:
        raise ModelFileError(
            f"{path}: {len(members)} members; a model file has at most {MAX_MEMBERS}."
        )
    for info in members:
        name = info.filename
        if name in infos:
            raise ModelFileError(f"{path}: the member {name!r} appears twice in the archive.")
        if name != METADATA and (".." in name or not _MEMBER_NAME.fullmatch(name)):
            raise ModelFileError(
                f"{path}: unexpected member {name!r} in the model file; members are "
                f"{METADATA} and plain names arrays/NAME.npy."
            )
        if info.flag_bits & 0x1:
            raise ModelFileError(f"{path}: the member {name} is encrypted; model files never are.")
        if info.flag_bits & ~_ALLOWED_FLAGS:
            raise ModelFileError(
                f"{path}: the member {name} has unsupported zip flags {info.flag_bits:#06x}."
            )
        if info.compress_type not in _COMPRESSIONS:
            raise ModelFileError(
                f"{path}: the member {name} uses zip compression method {info.compress_type}; "
                "a model file uses only stored (0) or deflated (8)."
            )
        limit = MAX_METADATA_BYTES if name == METADATA else max_bytes
        if info.file_size > limit:
            raise ModelFileError(
                f"{path}: the member {name} declares {info.file_size} bytes, more than the "
                f"limit of {limit}."
            )
        if info.compress_size > size or (
            info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size
        ):
            raise _corrupted(path, f"the sizes declared for {name} do not fit the file")
        total += info.file_size
        if total > max_bytes + MAX_METADATA_BYTES:
            raise ModelFileError(
                f"{path}: the members declare more than {max_bytes} bytes in all (the limit; "
                "pass load(..., max_bytes=) to read a larger model)."
            )
        infos[name] = info
    if METADATA not in infos:
        raise ModelFileError(f"{path}: not a bayesrule model file (no {METADATA}).")
    return infos


_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    zlib.error,
    OSError,
    NotImplementedError,
    RuntimeError,
    struct.error,
    UnicodeDecodeError,
)


def _read_member(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes, read by a reader bounded by its declared (checked) size."""
    try:
        with zf.open(info) as raw:
            data = raw.read(info.file_size)
            extra = raw.read(1)  # reaching the end checks the CRC
    except _ZIP_ERRORS as exc:
        raise _corrupted(path, exc) from None
    except ValueError as exc:
        raise _corrupted(path, exc) from None
    if len(data) != info.file_size or extra:
        raise _corrupted(path, f"{info.filename} does not hold its declared {info.file_size} bytes")
    return data


class _Archive:
    """An open, checked model file: its zip members and verified metadata."""

    def __init__(self, path: str | os.PathLike[str], max_bytes: int) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        fh, size = _open_regular(self.path)
        try:
            head = fh.read(4)
            if head != _ZIP_MAGIC:
                if head[:1] == b"\x80":
                    raise ModelFileError(
                        f"{self.path}: looks like a Python pickle. bayesrule never unpickles "
                        "files (unpickling can run arbitrary code); save the model with "
                        "bayesrule.save."
                    )
                raise ModelFileError(
                    f"{self.path}: not a bayesrule model file (not a zip archive)."
                )
            _check_end_record(self.path, fh, size)
            try:
                self.zf = zipfile.ZipFile(fh)
            except ModelFileError:
                raise
            except (*_ZIP_ERRORS, ValueError, IndexError, KeyError, OverflowError) as exc:
                raise _corrupted(self.path, exc) from None
        except BaseException:
            fh.close()
            raise
        self.fh = fh
        try:
            self.infos = _check_infos(self.path, self.zf, size, max_bytes)
            data = _read_member(self.path, self.zf, self.infos[METADATA])
            meta = _parse_json(self.path, data)
            self.meta = _check_metadata(self.path, meta, self.infos)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.zf.close()
        self.fh.close()

    def __enter__(self) -> _Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def fail(self, message: str) -> ModelFileError:
        return ModelFileError(f"{self.path}: {message}")

    def array(self, name: str) -> NDArray[Any]:
        """The array of a ``.npy`` member: header parsed and checked before allocating."""
        return read_npy(
            self.zf,
            self.infos[name],
            self.meta["members"][name],
            self.fail,
            lambda exc: _corrupted(self.path, exc),
            _ZIP_ERRORS,
        )


def write_zip(fh: IO[bytes], members: dict[str, bytes]) -> None:
    """Write ``members`` as a zip archive to ``fh``: deflated, with a fixed timestamp
    (the same model gives the same bytes on every save)."""
    with zipfile.ZipFile(fh, "w") as zf:
        for member, data in members.items():
            info = zipfile.ZipInfo(member, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
