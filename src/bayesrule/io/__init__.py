"""Model files: a versioned, non-executable format for fitted estimators.

A bayesrule model file is a zip archive (see ``docs/model-files.md``) holding

* ``metadata.json`` — the format name and version, the library version, the
  estimator's class name and constructor parameters, a description of the
  statistics object, the number (and names) of the features, the SHA-256 of
  every other member and a checksum of the metadata itself;
* ``arrays/*.npy`` — every array, written by NumPy with ``allow_pickle=False``.

Only statistics and parameters are stored. Loading calls
``Estimator.from_stats(Stats(**arrays), **params)``, which derives every
fitted attribute again in exactly the way ``fit`` does, so a loaded model
predicts bit for bit like the saved one. Class names in the file are looked
up in a fixed table of bayesrule classes and never imported, and nothing in a
file is ever unpickled, so loading a file cannot run code.

A file is validated in full before anything is built from it, in the way
NumPy's ``.npy`` reader and ``zipfile`` guard themselves: the path must be a
regular file; every zip member's declared size, flags and compression method
are checked against the limits below before it is read, and it is read by a
bounded reader; the JSON is bounded in size and nesting; every ``.npy``
header is parsed here and its shape times its item size checked against the
member's byte count before any array is allocated; and every array's dtype,
shape and values are checked against what the estimator's statistics
declare (:data:`STATS_SCHEMA`). Anything else is refused with
:class:`ModelFileError`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
import re
import stat
import struct
import tempfile
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

try:  # POSIX: a save holds a lock on its temporary file, so that only abandoned ones are removed
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "FORMAT_VERSION",
    "MAX_JSON_DEPTH",
    "MAX_MEMBERS",
    "MAX_METADATA_BYTES",
    "MAX_MODEL_BYTES",
    "MAX_NPY_HEADER_BYTES",
    "STATS_SCHEMA",
    "ModelFileError",
    "load",
    "read_metadata",
    "save",
]

#: The format this version writes; it reads every version up to this one.
FORMAT_VERSION = 1
FORMAT_NAME = "bayesrule-model"
METADATA = "metadata.json"

# ----------------------------------------------------------------- the format's limits
#: Largest ``metadata.json``, uncompressed (its declared size is checked before reading).
MAX_METADATA_BYTES = 64 * 2**20
#: Deepest nesting of JSON arrays and objects in ``metadata.json``.
MAX_JSON_DEPTH = 64
#: Most members in one archive.
MAX_MEMBERS = 60_000
#: Default largest total uncompressed size of the arrays (``load(..., max_bytes=)``).
MAX_MODEL_BYTES = 4 * 2**30
#: Largest ``.npy`` header (NumPy's own default limit).
MAX_NPY_HEADER_BYTES = 10_000
#: Most axes of a stored array.
MAX_NDIM = 32

_ZIP_MAGIC = b"PK\x03\x04"
_END_MAGIC = b"PK\x05\x06"
# Members are plain names under arrays/: no directories, no '..', no absolute
# paths, no backslashes, no drive letters.
_MEMBER_NAME = re.compile(r"arrays/[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}\.npy")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# zip flag bits a member may carry: deflate options (1, 2), a data descriptor
# (3) and UTF-8 names (11). Bit 0 (encrypted), 6 (strong encryption), 13
# (masked directory) and every other bit are refused.
_ALLOWED_FLAGS = 0x0002 | 0x0004 | 0x0008 | 0x0800
_COMPRESSIONS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
# NumPy dtype kinds that np.save writes without pickling: bool, integers,
# floats, complex, byte and unicode strings, datetimes and timedeltas.
_SAFE_KINDS = "biufcSUMm"
# A fixed timestamp makes the same model give the same bytes on every save.
_EPOCH = (1980, 1, 1, 0, 0, 0)
_CHUNK = 1 << 20
_META_KEYS = frozenset(
    {
        "format",
        "format_version",
        "bayesrule_version",
        "estimator",
        "params",
        "stats",
        "n_features_in",
        "feature_names_in",
        "extra",
        "members",
        "checksum",
    }
)
_NODE_KEYS = {
    "value": {"kind", "value"},
    "float": {"kind", "value"},
    "array": {"kind", "member"},
    "list": {"kind", "items"},
    "tuple": {"kind", "items"},
    "dict": {"kind", "items"},
    # a mapping whose keys are not all strings (priors by integer label)
    "pairs": {"kind", "keys", "values"},
    "stats": {"kind", "class", "fields"},
}


class ModelFileError(ValueError):
    """A model file that cannot be written or read; the message names the file."""


# --------------------------------------------------------------------------- schema
@dataclasses.dataclass(frozen=True)
class ArraySpec:
    """What one array field of a statistic must be.

    ``dtype`` is ``"labels"`` (1-D, sorted, unique; bool, integers, finite
    floats or unicode), ``"int64"``, ``"index"`` (any integer type, read as
    ``intp``) or ``"float64"``. ``dims`` names the size of each axis: equal
    names must be equal sizes across the fields of one statistic (``"K"``
    the classes, ``"p"`` the features, ``"p+1"`` one more than ``"p"``), and
    ``"..."`` last allows any further axes; ``None`` allows any shape. Floats
    are finite, or also ``-inf`` with ``allow_neg_inf``, or anything (NaN and
    both infinities) with ``allow_nonfinite``; ``low`` is a lower bound on
    every value; ``csr`` says the array is a CSR ``indptr`` into the field
    named by it. An ``optional`` field may be missing from a file (one written
    before the field existed); the class then gets its default.
    """

    dtype: str
    dims: tuple[str, ...] | None = None
    low: float | None = None
    allow_neg_inf: bool = False
    csr: str | None = None
    allow_nonfinite: bool = False
    optional: bool = False


@dataclasses.dataclass(frozen=True)
class NestedSpec:
    """A field holding another statistic (``cls`` is its class name)."""

    cls: str


def _f8(*dims: str, low: float | None = None) -> ArraySpec:
    return ArraySpec("float64", dims, low=low)


_LABELS = ArraySpec("labels", ("K",))
_COUNTS = ArraySpec("int64", ("K",), low=0)
_WEIGHTS = ArraySpec("float64", ("K",), low=0.0)
#: each feature's training range (see ClassStatistic): +inf/-inf where nothing
#: was observed, NaN where unknown; missing from files written before bayesrule
#: recorded it (the range is then unknown)
_BOUND = ArraySpec("float64", ("p",), allow_nonfinite=True, optional=True)
_BASE = {
    "classes": _LABELS,
    "counts": _COUNTS,
    "weights": _WEIGHTS,
    "lower": _BOUND,
    "upper": _BOUND,
}

#: The declared form of every field of each statistics class: dtype, shape
#: (in the symbolic sizes of :class:`ArraySpec`) and range. A statistics class
#: missing here (or a field missing from its entry) gets a schema derived from
#: its dataclass fields: ``classes``, ``counts`` and ``weights`` as here,
#: other arrays float64 (integer if annotated so), finite, indexed by class
#: along their first axis if listed in ``_per_class``. The special fields of
#: :class:`~bayesrule.stats.MixedStats` (``kinds``, ``vocabularies``,
#: ``parts``) are checked by name.
STATS_SCHEMA: dict[str, dict[str, ArraySpec | NestedSpec | str]] = {
    "PooledScatterStats": {**_BASE, "means": _f8("K", "p"), "scatter": _f8("p", "p")},
    "ScatterStats": {
        **_BASE,
        "means": _f8("K", "p"),
        "scatter": _f8("K", "p", "p"),
        "m3": _f8("K", "p"),
        "m4": _f8("K"),
    },
    # with the fields of ScatterStats, which it extends (see _schema)
    "FourthMomentStats": {"t": _f8("K", "p", "p"), "q": _f8("K", "p", "p")},
    "DiagonalStats": {
        **_BASE,
        "feature_weights": _f8("K", "p", low=0.0),
        "means": _f8("K", "p"),
        "m2": _f8("K", "p"),
    },
    "CountStats": {**_BASE, "feature_weights": _f8("K", "p", low=0.0), "sums": _f8("K", "p")},
    "CategoryStats": {**_BASE, "category_counts": _f8("K", "p", "C", low=0.0)},
    "ValueCountStats": {
        **_BASE,
        "indptr": ArraySpec("index", ("p+1",), low=0, csr="values"),
        "values": _f8("V"),
        "value_weights": _f8("K", "V", low=0.0),
    },
    "MixedStats": {**_BASE, "kinds": "kinds", "vocabularies": "vocabularies", "parts": "parts"},
    "MixtureStats": {
        **_BASE,
        "owner": ArraySpec("index", ("M",), low=0),
        "component_weights": _f8("M", low=0.0),
        "component_means": _f8("M", "d"),
        "component_scatter": _f8("M", "d", "d"),
        "centre": _f8("p"),
        "basis": _f8("p", "d"),
        # each feature's scale in the projection; missing from older files (ones)
        "scale": ArraySpec("float64", ("p",), low=0.0, optional=True),
        # the ridge the fit used (what reg_covar='auto' chose); missing from older files
        "reg_covar": ArraySpec("float64", ("1",), allow_nonfinite=True, optional=True),
        "residual_var": _f8("1", low=0.0),
        "log_likelihood": _f8("K"),
        "n_iter": ArraySpec("int64", ("1",), low=0),
        "converged": ArraySpec("int64", ("1",), low=0),
        # passes over the data; missing from files written before it was recorded
        "n_passes": ArraySpec("int64", ("1",), low=0, optional=True),
    },
    "CrossValidatedStats": {
        "total": NestedSpec("ScatterStats"),
        # (alpha, gamma, ridge) of each candidate; -inf marks one where a
        # class covariance was singular
        "cv_points": _f8("M", "3", low=0.0),
        "cv_scores": ArraySpec("float64", ("M",), allow_neg_inf=True),
    },
}


def _schema(cls: type[Any]) -> dict[str, ArraySpec | NestedSpec | str | None]:
    """The schema of a statistics class: :data:`STATS_SCHEMA`, or derived from its fields."""
    # a statistic that extends another (FourthMomentStats) has its fields too
    declared: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        declared.update(STATS_SCHEMA.get(base.__name__, {}))
    per_class = getattr(cls, "_per_class", ())
    out: dict[str, ArraySpec | NestedSpec | str | None] = {}
    for f in dataclasses.fields(cls):
        if f.name in declared:
            out[f.name] = declared[f.name]
        elif f.name in _BASE:
            out[f.name] = _BASE[f.name]
        else:
            ann = f.type if isinstance(f.type, str) else repr(f.type)
            if "NDArray" in ann or ann.strip() == "_F":
                dims = ("K", "...") if f.name in per_class else None
                out[f.name] = ArraySpec("index" if "int" in ann else "float64", dims)
            else:
                out[f.name] = None  # any node, checked by the class itself
    return out


# --------------------------------------------------------------------------- classes
def _estimator_classes() -> dict[str, type[Any]]:
    from ..estimators.registry import available

    return {cls.__name__: cls for cls in available().values()}


def _stats_classes() -> dict[str, type[Any]]:
    """Every statistics dataclass of the package: those in ``bayesrule.stats`` and
    the ``_stats_type`` of each estimator (new statistics types join by themselves)."""
    from .. import stats as stats_module

    found: dict[str, type[Any]] = {}
    candidates = [getattr(stats_module, n, None) for n in getattr(stats_module, "__all__", [])]
    candidates += [getattr(c, "_stats_type", None) for c in _estimator_classes().values()]
    for c in candidates:
        if isinstance(c, type) and dataclasses.is_dataclass(c):
            found[c.__name__] = c
    return found


# --------------------------------------------------------------------------- encoding
class _Writer:
    """Turns parameters and statistics into JSON nodes plus ``.npy`` members."""

    def __init__(self, stats_classes: dict[str, type[Any]]) -> None:
        self.members: dict[str, bytes] = {}
        self.stats_classes = stats_classes

    def _array(self, value: Any, where: str) -> dict[str, Any]:
        arr = _safe_array(np.asarray(value), where)
        # a plain member name (see _MEMBER_NAME): no '..', no leading dot
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", where)
        stem = re.sub(r"\.{2,}", ".", stem).lstrip(".-")[:180] or "array"
        name = f"arrays/{stem}.npy"
        n = 1
        while name in self.members:
            n += 1
            name = f"arrays/{stem}-{n}.npy"
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        self.members[name] = buf.getvalue()
        return {"kind": "array", "member": name}

    def encode(self, value: Any, where: str) -> dict[str, Any]:
        if value is None or isinstance(value, (bool, str)):
            return {"kind": "value", "value": value}
        if isinstance(value, int) and not isinstance(value, np.integer):
            return {"kind": "value", "value": value}
        if isinstance(value, float):
            if math.isfinite(value):
                return {"kind": "value", "value": value}
            return {"kind": "float", "value": repr(value)}  # 'nan', 'inf', '-inf'
        if isinstance(value, (np.ndarray, np.generic)):
            return self._array(value, where)
        if isinstance(value, (list, tuple)):
            return {
                "kind": type(value).__name__,
                "items": [self.encode(v, f"{where}.{i}") for i, v in enumerate(value)],
            }
        if _is_labelled_series(value):
            value = value.to_dict()  # priors by label (see estimators._priors)
        elif type(value).__name__ == "Series" and hasattr(value, "to_numpy"):
            return self._array(value.to_numpy(), where)
        if isinstance(value, dict) and not all(isinstance(k, str) for k in value):
            keys = list(value)
            return {
                "kind": "pairs",
                "keys": self.encode(keys, f"{where}.keys"),
                "values": self.encode([value[k] for k in keys], f"{where}.values"),
            }
        if isinstance(value, dict):
            return {
                "kind": "dict",
                "items": {k: self.encode(v, f"{where}.{k}") for k, v in value.items()},
            }
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            name = type(value).__name__
            if self.stats_classes.get(name) is not type(value):
                raise ModelFileError(
                    f"{where}: {name} is not a bayesrule statistics class, so it cannot be saved."
                )
            return {
                "kind": "stats",
                "class": name,
                "fields": {
                    f.name: self.encode(getattr(value, f.name), f"{where}.{f.name}")
                    for f in dataclasses.fields(value)
                },
            }
        raise ModelFileError(
            f"{where} holds a {type(value).__name__}, which a model file cannot store "
            "(only numbers, strings, booleans, None, lists, dicts and arrays can be saved)."
        )


def _is_labelled_series(value: Any) -> bool:
    """A pandas Series indexed by labels (not ``0, 1, ...``): a mapping, as priors read it."""
    if type(value).__name__ != "Series" or not hasattr(value, "to_dict"):
        return False
    return type(getattr(value, "index", None)).__name__ != "RangeIndex"


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


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- save
def save(
    model: Any, path: str | os.PathLike[str], *, metadata: dict[str, Any] | None = None
) -> Path:
    """Write a fitted bayesrule estimator to a model file, atomically.

    The file is first written in full to a temporary file
    ``.{name}.tmp-XXXXXXXX`` in the same directory and then renamed over
    ``path``, so an interrupted save leaves either the old file or none,
    never half a model. Temporary files that earlier, interrupted saves to
    the same path left behind are removed.

    Parameters
    ----------
    model : fitted bayesrule estimator
        Its constructor parameters must be numbers, strings, booleans, None,
        lists or arrays (an object such as ``covariance_estimator`` is refused).
    path : str or path-like
        Where to write; an existing file is replaced. The suffix ``.bayesrule``
        is customary but not required.
    metadata : dict, optional
        Extra JSON-serialisable information kept with the model (for instance
        an image shape); :func:`read_metadata` returns it under ``"extra"``.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ModelFileError
        When the model is not a fitted bayesrule estimator or holds something
        the format cannot store; the message names the parameter.
    """
    path = Path(path)
    classes = _estimator_classes()
    name = type(model).__name__
    if classes.get(name) is not type(model):
        raise ModelFileError(
            f"cannot save a {name}: only bayesrule estimators ({', '.join(classes)}) can be saved."
        )
    if not hasattr(model, "stats_"):
        raise ModelFileError(f"cannot save an unfitted {name}; fit it first.")
    if not path.parent.is_dir():
        raise ModelFileError(f"{path}: the directory {path.parent} does not exist.")
    if path.exists() and not path.is_file():
        # replacing it would destroy what is there (a device such as /dev/null,
        # a pipe, a directory): a model file is only ever written as a new
        # regular file or over one
        raise ModelFileError(f"{path}: exists and is not a regular file; choose another path.")

    writer = _Writer(_stats_classes())
    # an estimator may keep a description instead of an object it no longer
    # needs (RDA-CV's cv splitter: see its _file_params)
    file_params = getattr(model, "_file_params", None)
    values = file_params() if file_params is not None else model.get_params(deep=False)
    params = {k: writer.encode(v, f"params.{k}") for k, v in values.items()}
    stats = writer.encode(model.stats_, "stats")
    names = getattr(model, "feature_names_in_", None)
    meta: dict[str, Any] = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "bayesrule_version": _library_version(),
        "estimator": name,
        "params": params,
        "stats": stats,
        "n_features_in": int(model.n_features_in_),
        "feature_names_in": None if names is None else writer.encode(names, "feature_names_in"),
        "extra": metadata or {},
    }
    meta["members"] = {m: _sha256(data) for m, data in sorted(writer.members.items())}
    try:
        meta["checksum"] = _sha256(_canonical(meta))
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"metadata cannot be written as JSON: {exc}") from None
    payload = {METADATA: json.dumps(meta, indent=1, sort_keys=True).encode(), **writer.members}
    _remove_abandoned_temporaries(path)
    _atomic_write_zip(path, payload)
    return path


def _library_version() -> str:
    from .. import __version__

    return str(__version__)


def _temporary_pattern(path: Path) -> re.Pattern[str]:
    """Names of the temporary files of saves to ``path`` (this version's and the
    ``.{name}.XXXXXXXX.tmp`` of earlier ones); ``mkstemp`` draws 8 of ``[a-z0-9_]``."""
    return re.compile(re.escape(f".{path.name}.") + r"(?:tmp-[a-z0-9_]{8}|[a-z0-9_]{8}\.tmp)")


def _remove_abandoned_temporaries(path: Path) -> None:
    """Remove the temporary files that interrupted saves to ``path`` left behind.

    A save in progress holds an exclusive lock on its temporary file until it
    has renamed it, so a file that can be locked is abandoned (the lock of a
    killed process is gone with it). Without ``fcntl`` (Windows), a file
    another process still writes cannot be deleted, so the attempt fails
    harmlessly. Nothing else is touched: only regular files whose names match.
    """
    pattern = _temporary_pattern(path)
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
        except OSError:  # locked by a save in progress, or already gone
            continue


def _atomic_write_zip(path: Path, members: dict[str, bytes]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    replaced = False
    try:
        with os.fdopen(fd, "wb") as fh:
            if fcntl is not None:
                # held until the rename, so that another save never takes this
                # file for an abandoned one
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            with zipfile.ZipFile(fh, "w") as zf:
                for member, data in members.items():
                    info = zipfile.ZipInfo(member, date_time=_EPOCH)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    zf.writestr(info, data)
            fh.flush()
            os.fsync(fh.fileno())
            # mkstemp creates the file readable by its owner only; give it the
            # permissions an ordinary new file would get.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            if os.name != "nt":  # Windows cannot rename an open file
                os.replace(tmp, path)
                replaced = True
        if not replaced:  # pragma: no cover - Windows
            os.replace(tmp, path)
            replaced = True
    except BaseException:
        if not replaced:
            Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable (POSIX); a file system that cannot does without."""
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


# --------------------------------------------------------------------------- load: the archive
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


# --------------------------------------------------------------------------- load: JSON
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def _json_depth(data: bytes) -> int:
    """Deepest nesting of arrays and objects, counted outside strings, without recursion."""
    b = np.frombuffer(_JSON_STRING.sub(b'""', data), dtype=np.uint8)
    step = (b == ord("[")).astype(np.int64) + (b == ord("{"))
    step -= (b == ord("]")).astype(np.int64) + (b == ord("}"))
    return int(np.max(np.cumsum(step), initial=0))


class _JSONRefused(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _JSONRefused(f"the key {key!r} appears twice in one object")
            seen.add(key)
    return out


def _refuse_constant(name: str) -> Any:
    raise _JSONRefused(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _JSONRefused(f"the number {text[:20]} is out of range")
    return value


def _parse_json(path: Path, data: bytes) -> Any:
    depth = _json_depth(data)
    if depth > MAX_JSON_DEPTH:
        raise ModelFileError(
            f"{path}: {METADATA} is nested {depth} deep; a model file nests at most "
            f"{MAX_JSON_DEPTH} deep."
        )
    try:
        return json.loads(
            data.decode("utf-8"),
            object_pairs_hook=_no_duplicates,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except (
        ValueError,
        RecursionError,
    ) as exc:  # JSONDecodeError, UnicodeDecodeError are ValueErrors
        raise ModelFileError(f"{path}: {METADATA} is not valid JSON ({exc}).") from None


# --------------------------------------------------------------------------- load: metadata
def _check_metadata(path: Path, meta: Any, infos: dict[str, zipfile.ZipInfo]) -> dict[str, Any]:
    """Format, version, checksum and the type of every top-level entry; the members
    listed must be exactly the ``.npy`` members of the archive."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ModelFileError(f"{path}: not a bayesrule model file ({METADATA} has no format tag).")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFileError(f"{path}: invalid format_version {version!r}.")
    if version > FORMAT_VERSION:
        found = meta.get("bayesrule_version")
        raise ModelFileError(
            f"{path}: written in model format version {version} (by bayesrule "
            f"{found if isinstance(found, str) else '?'}); this bayesrule ({_library_version()}) "
            f"reads format version {FORMAT_VERSION} at most. Upgrade bayesrule to load it."
        )
    body = {k: v for k, v in meta.items() if k != "checksum"}
    try:
        expected = _sha256(_canonical(body))
    except (TypeError, ValueError):
        expected = ""
    if meta.get("checksum") != expected:
        raise ModelFileError(
            f"{path}: checksum mismatch in {METADATA}; the file was edited or damaged."
        )
    if set(meta) != _META_KEYS:
        odd = sorted(set(meta) ^ _META_KEYS)
        raise ModelFileError(
            f"{path}: {METADATA} must have the keys {sorted(_META_KEYS)}; {odd} differ."
        )
    checks: list[tuple[str, type | tuple[type, ...], str]] = [
        ("bayesrule_version", str, "a string"),
        ("estimator", str, "a string"),
        ("params", dict, "an object"),
        ("stats", dict, "an object"),
        ("extra", dict, "an object"),
        ("members", dict, "an object"),
        ("feature_names_in", (dict, type(None)), "an object or null"),
    ]
    for key, types, what in checks:
        if not isinstance(meta[key], types):
            raise ModelFileError(f"{path}: {METADATA}: {key} must be {what}.")
    n = meta["n_features_in"]
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ModelFileError(f"{path}: {METADATA}: n_features_in must be a non-negative integer.")
    members = meta["members"]
    for name, digest in members.items():
        if ".." in name or not _MEMBER_NAME.fullmatch(name):
            raise ModelFileError(
                f"{path}: {METADATA} lists the member {name!r}, which is not a plain "
                "name arrays/NAME.npy."
            )
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise ModelFileError(f"{path}: {METADATA}: the checksum of {name} is malformed.")
    unexpected = sorted(set(infos) - set(members) - {METADATA})
    if unexpected:
        raise ModelFileError(f"{path}: unexpected member {unexpected[0]!r} in the model file.")
    missing = sorted(set(members) - set(infos))
    if missing:
        raise ModelFileError(f"{path}: the member {missing[0]} is missing.")
    return meta


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
        info = self.infos[name]
        digest = hashlib.sha256()
        try:
            with self.zf.open(info) as raw:
                fh = _HashingReader(raw, digest)
                shape, fortran, dtype = self._npy_header(fh, name)
                count = math.prod(shape)
                nbytes = count * dtype.itemsize
                if fh.consumed + nbytes != info.file_size:
                    raise self.fail(
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
                    raise _corrupted(self.path, f"{name} does not hold its declared size")
        except ModelFileError:
            raise
        except _ZIP_ERRORS as exc:
            raise _corrupted(self.path, exc) from None
        if digest.hexdigest() != self.meta["members"][name]:
            raise self.fail(f"checksum mismatch for {name}; the file was edited or damaged.")
        arr = flat.reshape(shape, order="F" if fortran else "C")
        if dtype.byteorder not in ("=", "|"):
            arr = arr.astype(dtype.newbyteorder("="))
        return arr

    def _npy_header(self, fh: Any, name: str) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
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
        except _ZIP_ERRORS:
            raise
        except Exception as exc:  # ValueError, SyntaxError, ... from a hostile header
            raise self.fail(f"{name} is not a valid .npy array ({exc}).") from None
        shape, fortran, dtype = header
        if dtype.hasobject:
            # never unpickled: refused from its header alone
            raise self.fail(f"{name} cannot be read without pickle (dtype {dtype}).")
        if dtype.fields is not None or dtype.subdtype is not None or dtype.kind not in _SAFE_KINDS:
            raise self.fail(f"{name} has the dtype {dtype}, which no model file holds.")
        if len(shape) > MAX_NDIM or any(s < 0 for s in shape):
            raise self.fail(f"{name} declares the invalid shape {shape}.")
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


# --------------------------------------------------------------------------- load: the nodes
_DIM_NAMES = {
    "K": "classes",
    "p": "features",
    "C": "categories",
    "V": "distinct values",
    "M": "mixture components",
    "d": "projected dimensions",
}
_DTYPES = {
    "labels": ("biufU", "class labels (bool, integer, float or unicode)"),
    "int64": ("i", "int64"),
    "index": ("iu", "integers"),
    "float64": ("f", "float64"),
}


class _Decoder:
    """Turns checked JSON nodes into values, reading and checking each array once."""

    def __init__(self, archive: _Archive) -> None:
        self.archive = archive
        self.used: set[str] = set()
        self.stats_classes = _stats_classes()

    def fail(self, message: str) -> ModelFileError:
        return self.archive.fail(message)

    def _node(self, node: Any, where: str, kinds: tuple[str, ...] | None = None) -> str:
        if not isinstance(node, dict) or not isinstance(node.get("kind"), str):
            raise self.fail(f"malformed entry at {where}.")
        if node["kind"] not in _NODE_KEYS:
            raise self.fail(f"malformed entry at {where}.")
        kind: str = node["kind"]
        if set(node) != _NODE_KEYS[kind]:
            raise self.fail(f"malformed {kind} entry at {where}: keys {sorted(node)}.")
        if kinds is not None and kind not in kinds:
            raise self.fail(f"{where} must be a {' or '.join(kinds)} entry; the file has a {kind}.")
        if kind in ("list", "tuple") and not isinstance(node["items"], list):
            raise self.fail(f"malformed {kind} at {where}.")
        if kind == "dict" and not isinstance(node["items"], dict):
            raise self.fail(f"malformed dict at {where}.")
        return kind

    def member(self, node: dict[str, Any], where: str) -> NDArray[Any]:
        name = node["member"]
        if not isinstance(name, str) or name not in self.archive.meta["members"]:
            raise self.fail(f"array member {name!r} at {where} is not listed in {METADATA}.")
        if name in self.used:
            raise self.fail(f"the member {name} is used twice (again at {where}).")
        self.used.add(name)
        return self.archive.array(name)

    def value(self, node: Any, where: str, *, stats_ok: bool = False) -> Any:
        """Any node of parameters (or of an undeclared field of a statistic)."""
        kind = self._node(node, where)
        if kind == "value":
            value = node["value"]
            if value is not None and not isinstance(value, (bool, int, float, str)):
                raise self.fail(f"malformed value at {where}.")
            return value
        if kind == "float":
            if node["value"] not in ("nan", "inf", "-inf"):
                raise self.fail(f"malformed float at {where}.")
            return float(node["value"])
        if kind == "array":
            arr = self.member(node, where)
            if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
                raise self.fail(f"{where} holds a non-finite number.")
            return arr[()] if arr.ndim == 0 else arr
        if kind in ("list", "tuple"):
            out = [
                self.value(v, f"{where}.{i}", stats_ok=stats_ok)
                for i, v in enumerate(node["items"])
            ]
            return out if kind == "list" else tuple(out)
        if kind == "dict":
            return {
                k: self.value(v, f"{where}.{k}", stats_ok=stats_ok)
                for k, v in node["items"].items()
            }
        if kind == "pairs":
            self._node(node["keys"], f"{where}.keys", ("list",))
            self._node(node["values"], f"{where}.values", ("list",))
            keys = self.value(node["keys"], f"{where}.keys")
            values = self.value(node["values"], f"{where}.values")
            if len(keys) != len(values):
                raise self.fail(
                    f"malformed pairs at {where}: {len(keys)} keys, {len(values)} values."
                )
            try:
                mapping: dict[Any, Any] = dict(zip(keys, values, strict=True))
            except TypeError:
                raise self.fail(f"malformed pairs at {where}: a key is not a label.") from None
            if len(mapping) != len(keys):
                raise self.fail(f"malformed pairs at {where}: a key appears twice.")
            return mapping
        cls = self.stats_classes.get(node["class"]) if isinstance(node["class"], str) else None
        if not stats_ok or cls is None:
            raise self.fail(f"unexpected statistics entry {node['class']!r} at {where}.")
        return self.stats(node, where, cls)

    # -- statistics, against their schema
    def stats(
        self, node: Any, where: str, cls: type[Any], env: dict[str, int] | None = None
    ) -> Any:
        self._node(node, where, ("stats",))
        if node["class"] != cls.__name__:
            raise self.fail(f"{where} must be {cls.__name__}; the file holds {node['class']!r}.")
        fields = node["fields"]
        schema = _schema(cls)
        # a field with a default (added after a file was written) may be absent
        optional = {
            f.name
            for f in dataclasses.fields(cls)
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        }
        required = {
            n
            for n, s in schema.items()
            if n not in optional and not (isinstance(s, ArraySpec) and s.optional)
        }
        if not isinstance(fields, dict) or not required <= set(fields) <= set(schema):
            found = sorted(fields) if isinstance(fields, dict) else fields
            raise self.fail(
                f"{where}: {cls.__name__} needs the fields {sorted(schema)}; the file has {found!r}."
            )
        env = dict(env or {})
        values: dict[str, Any] = {}
        for name, spec in schema.items():
            at = f"{where}.{name}"
            if name not in fields:  # an optional field of an older file: the default
                continue
            if isinstance(spec, ArraySpec):
                values[name] = self.spec_array(fields[name], at, spec, env)
            elif isinstance(spec, NestedSpec):
                inner = {k: v for k, v in env.items() if k in ("K", "p")}
                values[name] = self.stats(fields[name], at, self.stats_classes[spec.cls], inner)
            elif spec == "kinds":
                values[name] = self.kinds(fields[name], at, env)
            elif spec == "vocabularies":
                values[name] = self.vocabularies(fields[name], at, values["kinds"])
            elif spec == "parts":
                values[name] = self.parts(fields[name], at, values["kinds"], values["classes"], env)
            else:
                values[name] = self.value(fields[name], at, stats_ok=True)
        for name, spec in schema.items():
            if isinstance(spec, ArraySpec) and spec.csr is not None:
                ptr, target = values[name], values[spec.csr]
                if ptr[0] != 0 or np.any(np.diff(ptr) < 0) or ptr[-1] != len(target):
                    raise self.fail(
                        f"{where}.{name} must rise from 0 to the {len(target)} entries of "
                        f"{where}.{spec.csr}."
                    )
                # the entries of each row are distinct and sorted
                rising = np.diff(target) > 0
                starts = ptr[1:-1]
                rising[starts[(starts > 0) & (starts < len(target))] - 1] = True
                if not np.all(rising):
                    raise self.fail(
                        f"{where}.{spec.csr} must be sorted and distinct within each feature."
                    )
        try:
            return cls(**values)
        except Exception as exc:
            raise self.fail(f"{where}: not a valid {cls.__name__} ({exc}).") from None

    def spec_array(
        self, node: Any, where: str, spec: ArraySpec, env: dict[str, int]
    ) -> NDArray[Any]:
        self._node(node, where, ("array",))
        arr = self.member(node, where)
        kinds, desc = _DTYPES[spec.dtype]
        if arr.dtype.kind not in kinds or (
            spec.dtype in ("int64", "float64") and arr.dtype.itemsize != 8
        ):
            raise self.fail(f"{where} has the dtype {arr.dtype}; it must be {desc}.")
        if spec.dims is not None:
            dims = spec.dims
            fixed = dims[:-1] if dims[-1:] == ("...",) else dims
            if arr.ndim < len(fixed) or (fixed is dims and arr.ndim != len(dims)):
                raise self.fail(
                    f"{where} has the shape {arr.shape}; it must have {len(fixed)} axes ({', '.join(fixed)})."
                )
            for axis, dim in enumerate(fixed):
                self._bind(env, dim, arr.shape[axis], where, axis)
        if arr.dtype.kind == "f" and not spec.allow_nonfinite:
            ok = np.isfinite(arr)
            if spec.allow_neg_inf:
                ok |= arr == -np.inf
            if not np.all(ok):
                at = tuple(int(i[0]) for i in np.nonzero(~ok))
                raise self.fail(f"{where} holds {arr[at]} at {at}; it must hold finite numbers.")
        if spec.low is not None and arr.size and np.any(arr < spec.low):
            at = tuple(int(i[0]) for i in np.nonzero(arr < spec.low))
            raise self.fail(f"{where} holds {arr[at]} at {at}; it must be at least {spec.low:g}.")
        if spec.dtype == "labels":
            if arr.ndim != 1 or not np.array_equal(np.unique(arr), arr):
                raise self.fail(f"{where} must hold sorted, unique class labels.")
        if spec.dtype == "index":
            if arr.size and (np.any(arr < 0) or np.any(arr > np.iinfo(np.intp).max)):
                raise self.fail(f"{where} holds an index out of range.")
            arr = arr.astype(np.intp)
        return arr

    def _bind(self, env: dict[str, int], dim: str, size: int, where: str, axis: int) -> None:
        name, value = (dim[:-2], size - 1) if dim.endswith("+1") else (dim, size)
        what = _DIM_NAMES.get(name, f"'{name}'")
        if value < 0:
            raise self.fail(f"{where} has {size} entries along axis {axis}; it needs at least 1.")
        if name in env and env[name] != value:
            raise self.fail(
                f"{where} has {value} {what} along axis {axis}, but the other entries have "
                f"{env[name]}."
            )
        env[name] = value

    # -- MixedStats' own fields
    def kinds(self, node: Any, where: str, env: dict[str, int]) -> tuple[str, ...]:
        from ..stats import KIND_STATS

        self._node(node, where, ("list", "tuple"))
        out = []
        for i, item in enumerate(node["items"]):
            value = self.value(item, f"{where}.{i}")
            if value not in KIND_STATS:
                raise self.fail(
                    f"{where}.{i} is {value!r}; a column kind is one of {list(KIND_STATS)}."
                )
            out.append(value)
        self._bind(env, "p", len(out), where, 0)
        return tuple(out)

    def vocabularies(self, node: Any, where: str, kinds: tuple[str, ...]) -> tuple[Any, ...]:
        self._node(node, where, ("list", "tuple"))
        items = node["items"]
        if len(items) != len(kinds):
            raise self.fail(
                f"{where} has {len(items)} entries; it needs one per column ({len(kinds)})."
            )
        out: list[Any] = []
        for j, (item, kind) in enumerate(zip(items, kinds, strict=True)):
            at = f"{where}.{j}"
            if self._node(item, at, ("value", "array")) == "value":
                if item["value"] is not None:
                    raise self.fail(f"{at} must be null or an array of strings.")
                out.append(None)
                continue
            vocab = self.member(item, at)
            # strings, or the float64 values of a numeric categorical column (years)
            if kind != "categorical" or vocab.dtype.kind not in "Uf" or vocab.ndim != 1:
                raise self.fail(
                    f"{at} must be null, or for a categorical column a 1-D array of strings "
                    "or numbers."
                )
            if vocab.dtype.kind == "f" and not np.all(np.isfinite(vocab)):
                raise self.fail(f"{at} holds a non-finite number.")
            if not np.array_equal(np.unique(vocab), vocab):
                raise self.fail(f"{at} must hold sorted, unique values.")
            out.append(vocab)
        return tuple(out)

    def parts(
        self,
        node: Any,
        where: str,
        kinds: tuple[str, ...],
        classes: NDArray[Any],
        env: dict[str, int],
    ) -> dict[str, Any]:
        from ..stats import KIND_STATS

        self._node(node, where, ("dict",))
        items = node["items"]
        if set(items) != set(kinds):
            raise self.fail(
                f"{where} must hold one part per kind of column {sorted(set(kinds))}; the file has {sorted(items)}."
            )
        out = {}
        for kind in items:
            part = self.stats(
                items[kind],
                f"{where}.{kind}",
                KIND_STATS[kind],
                {"K": env["K"], "p": kinds.count(kind)},
            )
            if not np.array_equal(part.classes, classes):
                raise self.fail(
                    f"{where}.{kind}.classes differ from {where[: -len('.parts')]}.classes."
                )
            out[kind] = part
        return out

    def feature_names(self, node: Any, n_features: int) -> NDArray[Any]:
        self._node(node, "feature_names_in", ("array",))
        names = self.member(node, "feature_names_in")
        if names.dtype.kind != "U" or names.shape != (n_features,):
            raise self.fail(
                f"feature_names_in must be {n_features} strings; the file has an array of "
                f"dtype {names.dtype} and shape {names.shape}."
            )
        return names


# --------------------------------------------------------------------------- load
def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The verified metadata of a model file, without rebuilding the model.

    The archive and ``metadata.json`` are checked as by :func:`load` (the
    arrays are not read). Returns a dict with at least ``estimator``,
    ``format_version``, ``bayesrule_version``, ``n_features_in`` and
    ``extra`` (what was passed to :func:`save` as ``metadata``).
    """
    with _Archive(path, MAX_MODEL_BYTES) as archive:
        return archive.meta


def load(path: str | os.PathLike[str], *, max_bytes: int = MAX_MODEL_BYTES) -> Any:
    """Read a model file written by :func:`save`; loading never runs code.

    The whole file is checked against the format (``docs/model-files.md``)
    before anything is built from it: only a regular file is opened, every
    member's declared size is checked before it is read, and every array's
    dtype, shape and values against what the estimator's statistics declare.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int, default=MAX_MODEL_BYTES (4 GiB)
        The largest total uncompressed size of the arrays accepted.

    Returns
    -------
    estimator
        A fitted estimator whose ``predict_proba`` is identical to the saved one's.

    Raises
    ------
    ModelFileError
        (a ``ValueError``) for a missing file or one that is not a regular
        file, a pickle or any file that is not a bayesrule model, a truncated
        or edited file, one over the format's limits, arrays of the wrong
        dtype, shape or values, or a file written in a newer format version;
        the message names the file and the problem.
    """
    with _Archive(path, max_bytes) as archive:
        p, meta = archive.path, archive.meta
        name = meta["estimator"]
        classes = _estimator_classes()
        cls = classes.get(name)
        if cls is None:
            raise archive.fail(
                f"unknown estimator {name!r}; this bayesrule provides {', '.join(classes)}."
            )
        stats_node = meta["stats"]
        stats_type: type[Any] = cls._stats_type
        # an estimator is fitted from its _stats_type or, by a fit-time choice
        # (the discriminant analyses' moments), from one that extends it
        extended = _stats_classes().get(str(stats_node.get("class")))
        if extended is not None and issubclass(extended, stats_type):
            stats_type = extended
        if stats_node.get("class") != stats_type.__name__:
            raise archive.fail(
                f"{name} is built from {stats_type.__name__}, but the file holds "
                f"{stats_node.get('class')!r} statistics (relabelled as another estimator?)."
            )
        # a file holds every parameter of its estimator (save writes get_params()),
        # and no two estimators share a statistic and the same parameters; a file
        # of an older bayesrule may lack a parameter added since: it gets its default
        allowed = set(cls().get_params(deep=False))
        older = meta.get("bayesrule_version") != _library_version()
        odd = sorted(set(meta["params"]) - allowed)
        if not older:
            odd = sorted(set(meta["params"]) ^ allowed)
        if odd:
            what = "is not a parameter" if odd[0] in meta["params"] else "is missing, a parameter"
            raise archive.fail(
                f"{odd[0]!r} {what} of {name} (relabelled as another estimator?); its "
                f"parameters are {sorted(allowed)}."
            )
        n_features = meta["n_features_in"]
        decoder = _Decoder(archive)
        kwargs = {k: decoder.value(v, f"params.{k}") for k, v in meta["params"].items()}
        stats = decoder.stats(stats_node, "stats", stats_type, {"p": n_features})
        names_node = meta["feature_names_in"]
        names = None if names_node is None else decoder.feature_names(names_node, n_features)
        unused = sorted(set(meta["members"]) - decoder.used)
        if unused:
            raise archive.fail(f"the member {unused[0]} is listed but not used.")
    try:
        if stats.n_features != n_features:
            raise ValueError(
                f"the statistics have {stats.n_features} features, but the metadata "
                f"says {n_features}."
            )
        return cls.from_stats(stats, feature_names_in=names, **kwargs)
    except Exception as exc:
        raise ModelFileError(f"{p}: cannot rebuild {name} from the file: {exc}") from None
