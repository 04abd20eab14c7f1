"""The ``.npy`` members: arrays written without pickle, and read back checked before allocating."""

from __future__ import annotations

import hashlib
import io
import math
import warnings
import zipfile
from collections.abc import Callable
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from .constants import _CHUNK, _SAFE_KINDS, MAX_NDIM, MAX_NPY_HEADER_BYTES, ModelFileError

Fail = Callable[[str], ModelFileError]
Corrupted = Callable[[BaseException | str], ModelFileError]
Errors = tuple[type[BaseException], ...]


def _safe_array(arr: NDArray[Any], where: str) -> NDArray[Any]:
    """The array as a dtype NumPy saves without pickle; object arrays of only
    strings (labels from pandas) become unicode, of only numbers numeric."""
    if arr.dtype.kind in _SAFE_KINDS:
        return arr
    if arr.dtype.kind == "O":
        items = arr.ravel().tolist()
        if all(isinstance(v, str) for v in items):
            return np.array(items, dtype=str).reshape(arr.shape)
        if all(isinstance(v, (bool, int, float, np.number, np.bool_)) for v in items):
            converted = np.array(items).reshape(arr.shape)
            if converted.dtype.kind in _SAFE_KINDS:
                return converted
    raise ModelFileError(
        f"{where} is an array of dtype {arr.dtype} that cannot be saved without pickle; "
        "use numbers or strings (e.g. class labels as str or int)."
    )


def npy_bytes(arr: NDArray[Any], where: str) -> bytes:
    """The ``.npy`` bytes of ``arr`` (made safe by :func:`_safe_array`), written without pickle."""
    buf = io.BytesIO()
    np.save(buf, _safe_array(np.asarray(arr), where), allow_pickle=False)
    return buf.getvalue()


def read_npy(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    digest_hex: str,
    fail: Fail,
    corrupted: Corrupted,
    errors: Errors,
) -> NDArray[Any]:
    """The array of a ``.npy`` member: header parsed and checked before allocating.

    ``digest_hex`` is the member's SHA-256 from the metadata. ``fail`` makes
    the error of a refused member, ``corrupted`` that of a damaged one (the
    exceptions ``errors`` that reading a damaged archive raises included).
    """
    name = info.filename
    digest = hashlib.sha256()
    try:
        with zf.open(info) as raw:
            fh = _HashingReader(raw, digest)
            shape, fortran, dtype = _npy_header(fh, name, fail, errors)
            count = math.prod(shape)
            nbytes = count * dtype.itemsize
            if fh.consumed + nbytes != info.file_size:
                raise fail(
                    f"{name} declares an array of shape {shape} and dtype {dtype} "
                    f"({nbytes} bytes), but the member holds "
                    f"{info.file_size - fh.consumed} bytes of data."
                )
            flat = np.empty(count, dtype=dtype)
            view = memoryview(flat.view(np.uint8))  # type: ignore[arg-type]
            done = 0
            while done < nbytes:
                chunk = fh.read(min(_CHUNK, nbytes - done))
                if not chunk:
                    break
                view[done : done + len(chunk)] = chunk
                done += len(chunk)
            if done != nbytes or fh.read(1):  # the end also checks the CRC
                raise corrupted(f"{name} does not hold its declared size")
    except ModelFileError:
        raise
    except errors as exc:
        raise corrupted(exc) from None
    if digest.hexdigest() != digest_hex:
        raise fail(f"checksum mismatch for {name}; the file was edited or damaged.")
    arr = flat.reshape(shape, order="F" if fortran else "C")
    if dtype.byteorder not in ("=", "|"):
        arr = arr.astype(dtype.newbyteorder("="))
    return arr


def _npy_header(
    fh: Any, name: str, fail: Fail, errors: Errors
) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if version == (1, 0):
                header = fmt.read_array_header_1_0(fh, max_header_size=MAX_NPY_HEADER_BYTES)
            elif version == (2, 0):
                header = fmt.read_array_header_2_0(fh, max_header_size=MAX_NPY_HEADER_BYTES)
            else:
                raise ValueError(f"unsupported .npy version {version}")
    except ModelFileError:
        raise
    except errors:
        raise
    except Exception as exc:  # ValueError, SyntaxError, ... from a hostile header
        raise fail(f"{name} is not a valid .npy array ({exc}).") from None
    shape, fortran, dtype = header
    if dtype.hasobject:
        # never unpickled: refused from its header alone
        raise fail(f"{name} cannot be read without pickle (dtype {dtype}).")
    if dtype.fields is not None or dtype.subdtype is not None or dtype.kind not in _SAFE_KINDS:
        raise fail(f"{name} has the dtype {dtype}, which no model file holds.")
    if len(shape) > MAX_NDIM or any(s < 0 for s in shape):
        raise fail(f"{name} declares the invalid shape {shape}.")
    return tuple(int(s) for s in shape), bool(fortran), dtype


class _HashingReader:
    """A file-like view of a member that hashes and counts what is read through it."""

    def __init__(self, raw: IO[bytes], digest: Any) -> None:
        self.raw, self.digest, self.consumed = raw, digest, 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.digest.update(data)
        self.consumed += len(data)
        return data
