"""Model files: a versioned, non-executable format for fitted estimators.

A bayesrule model file is a zip archive (see ``docs/model-files.md``) holding

* ``metadata.json`` — the format name and version, the library version, the
  estimator's class name and constructor parameters, a description of the
  statistics object, the number (and names) of the features, the SHA-256 of
  every other member and a checksum of the metadata itself;
* ``arrays/*.npy`` — every array, written and read by NumPy with
  ``allow_pickle=False``.

Only statistics and parameters are stored. Loading calls
``Estimator.from_stats(Stats(**arrays), **params)``, which derives every
fitted attribute again in exactly the way ``fit`` does, so a loaded model
predicts bit for bit like the saved one. Class names in the file are looked
up in a fixed table of bayesrule classes and never imported, and nothing in a
file is ever unpickled, so loading a file cannot run code.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
import re
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["FORMAT_VERSION", "ModelFileError", "load", "read_metadata", "save"]

#: The format this version writes; it reads every version up to this one.
FORMAT_VERSION = 1
FORMAT_NAME = "bayesrule-model"
METADATA = "metadata.json"
_ZIP_MAGIC = b"PK\x03\x04"
_NPY_MAGIC = b"\x93NUMPY"
# NumPy dtype kinds that np.save writes without pickling: bool, integers,
# floats, complex, byte and unicode strings, datetimes and timedeltas.
_SAFE_KINDS = "biufcSUMm"
# A fixed timestamp makes the same model give the same bytes on every save.
_EPOCH = (1980, 1, 1, 0, 0, 0)


class ModelFileError(ValueError):
    """A model file that cannot be written or read; the message names the file."""


# --------------------------------------------------------------------------- classes
def _estimator_classes() -> dict[str, type[Any]]:
    from ._registry import available

    return {cls.__name__: cls for cls in available().values()}


def _stats_classes() -> dict[str, type[Any]]:
    """Every statistics dataclass of the package: those in ``bayesrule.stats`` and
    the ``_stats_type`` of each estimator (new statistics types join by themselves)."""
    from . import stats as stats_module

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
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", where) or "array"
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
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise ModelFileError(f"{where}: only dicts with string keys can be saved.")
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

    The file is first written in full to a temporary file in the same
    directory and then renamed over ``path``, so an interrupted save leaves
    either the old file or none, never half a model.

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

    writer = _Writer(_stats_classes())
    params = {k: writer.encode(v, f"params.{k}") for k, v in model.get_params(deep=False).items()}
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
    _atomic_write_zip(path, payload)
    return path


def _library_version() -> str:
    from . import __version__

    return str(__version__)


def _atomic_write_zip(path: Path, members: dict[str, bytes]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
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
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- load
def _read(path: str | os.PathLike[str]) -> tuple[Path, dict[str, Any], zipfile.ZipFile]:
    """Open and verify a model file: format, version, checksums. Nothing is executed."""
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"{path}: no such model file.")
    if path.is_dir():
        raise ModelFileError(f"{path}: is a directory, not a model file.")
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head != _ZIP_MAGIC:
        if head[:1] == b"\x80":
            raise ModelFileError(
                f"{path}: looks like a Python pickle. bayesrule never unpickles files "
                "(unpickling can run arbitrary code); save the model with bayesrule.save."
            )
        raise ModelFileError(f"{path}: not a bayesrule model file (not a zip archive).")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelFileError(f"{path}: truncated or corrupted model file ({exc}).") from None
    try:
        meta = _read_metadata(path, zf)
    except BaseException:
        zf.close()
        raise
    return path, meta, zf


def _member(path: Path, zf: zipfile.ZipFile, name: str) -> bytes:
    try:
        return zf.read(name)
    except KeyError:
        raise ModelFileError(f"{path}: the member {name} is missing.") from None
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
        raise ModelFileError(f"{path}: truncated or corrupted model file ({exc}).") from None


def _read_metadata(path: Path, zf: zipfile.ZipFile) -> dict[str, Any]:
    try:
        meta = json.loads(_member(path, zf, METADATA))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: {METADATA} is not valid JSON ({exc}).") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ModelFileError(f"{path}: not a bayesrule model file ({METADATA} has no format tag).")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFileError(f"{path}: invalid format_version {version!r}.")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: written in model format version {version} (by bayesrule "
            f"{meta.get('bayesrule_version', '?')}); this bayesrule ({_library_version()}) "
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
    members = meta.get("members")
    if not isinstance(members, dict):
        raise ModelFileError(f"{path}: {METADATA} lists no members.")
    listed = set(members) | {METADATA}
    unexpected = sorted(set(zf.namelist()) - listed)
    if unexpected:
        raise ModelFileError(f"{path}: unexpected member {unexpected[0]!r} in the model file.")
    return meta


class _Reader:
    def __init__(self, path: Path, zf: zipfile.ZipFile, meta: dict[str, Any]) -> None:
        self.path, self.zf, self.members = path, zf, meta["members"]
        self.stats_classes = _stats_classes()

    def fail(self, message: str) -> ModelFileError:
        return ModelFileError(f"{self.path}: {message}")

    def array(self, name: Any) -> NDArray[Any]:
        if not isinstance(name, str) or name not in self.members:
            raise self.fail(f"array member {name!r} is not listed in {METADATA}.")
        data = _member(self.path, self.zf, name)
        if _sha256(data) != self.members[name]:
            raise self.fail(f"checksum mismatch for {name}; the file was edited or damaged.")
        if not data.startswith(_NPY_MAGIC):
            raise self.fail(f"{name} is not a .npy array.")
        try:
            return np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as exc:
            # allow_pickle=False refuses object arrays: such a member is never unpickled.
            raise self.fail(f"{name} cannot be read without pickle ({exc}).") from None

    def decode(self, node: Any, where: str) -> Any:
        if not isinstance(node, dict):
            raise self.fail(f"malformed entry at {where}.")
        kind = node.get("kind")
        if kind == "value":
            value = node.get("value")
            if value is not None and not isinstance(value, (bool, int, float, str)):
                raise self.fail(f"malformed value at {where}.")
            return value
        if kind == "float":
            if node.get("value") not in ("nan", "inf", "-inf"):
                raise self.fail(f"malformed float at {where}.")
            return float(node["value"])
        if kind == "array":
            arr = self.array(node.get("member"))
            return arr[()] if arr.ndim == 0 else arr
        if kind in ("list", "tuple"):
            items = node.get("items")
            if not isinstance(items, list):
                raise self.fail(f"malformed {kind} at {where}.")
            out = [self.decode(v, f"{where}.{i}") for i, v in enumerate(items)]
            return out if kind == "list" else tuple(out)
        if kind == "dict":
            items = node.get("items")
            if not isinstance(items, dict):
                raise self.fail(f"malformed dict at {where}.")
            return {k: self.decode(v, f"{where}.{k}") for k, v in items.items()}
        if kind == "stats":
            cls = self.stats_classes.get(node.get("class"))  # type: ignore[arg-type]
            if cls is None:
                raise self.fail(f"unknown statistics class {node.get('class')!r} at {where}.")
            fields = node.get("fields")
            wanted = {f.name for f in dataclasses.fields(cls)}
            if not isinstance(fields, dict) or set(fields) != wanted:
                raise self.fail(
                    f"{where}: {cls.__name__} needs the fields {sorted(wanted)}; "
                    f"the file has {sorted(fields) if isinstance(fields, dict) else fields!r}."
                )
            return cls(**{k: self.decode(v, f"{where}.{k}") for k, v in fields.items()})
        raise self.fail(f"unknown entry kind {kind!r} at {where}.")


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The verified metadata of a model file, without rebuilding the model.

    Returns a dict with at least ``estimator``, ``format_version``,
    ``bayesrule_version``, ``n_features_in`` and ``extra`` (what was passed to
    :func:`save` as ``metadata``).
    """
    p, meta, zf = _read(path)
    zf.close()
    return meta


def load(path: str | os.PathLike[str]) -> Any:
    """Read a model file written by :func:`save`; loading never runs code.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    estimator
        A fitted estimator whose ``predict_proba`` is identical to the saved one's.

    Raises
    ------
    ModelFileError
        (a ``ValueError``) for a missing file, a pickle or any file that is not a
        bayesrule model, a truncated or edited file, or a file written in a newer
        format version; the message names the file and the problem.
    """
    p, meta, zf = _read(path)
    with zf:
        reader = _Reader(p, zf, meta)
        name = meta.get("estimator")
        cls = _estimator_classes().get(name)  # type: ignore[arg-type]
        if cls is None:
            raise reader.fail(
                f"unknown estimator {name!r}; this bayesrule provides "
                f"{', '.join(_estimator_classes())}."
            )
        params = meta.get("params")
        if not isinstance(params, dict):
            raise reader.fail("malformed parameters.")
        kwargs = {k: reader.decode(v, f"params.{k}") for k, v in params.items()}
        stats = reader.decode(meta.get("stats"), "stats")
        names_node = meta.get("feature_names_in")
        names = None if names_node is None else reader.decode(names_node, "feature_names_in")
    try:
        est = cls.from_stats(stats, **kwargs)
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"{p}: cannot rebuild {name} from the file: {exc}") from None
    if est.n_features_in_ != meta.get("n_features_in"):
        raise ModelFileError(
            f"{p}: the statistics have {est.n_features_in_} features, but the metadata "
            f"says {meta.get('n_features_in')}."
        )
    if names is not None:
        # scikit-learn keeps feature names as an object array of str.
        est.feature_names_in_ = np.asarray([str(n) for n in np.ravel(names)], dtype=object)
    return est
