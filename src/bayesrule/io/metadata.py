"""``metadata.json``: its canonical form and checksum, a bounded JSON parser, and its checks."""

from __future__ import annotations

import hashlib
import json
import math
import re
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from .constants import (
    _MEMBER_NAME,
    _META_KEYS,
    _SHA256,
    FORMAT_NAME,
    FORMAT_VERSION,
    MAX_JSON_DEPTH,
    METADATA,
    ModelFileError,
)


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _library_version() -> str:
    """This bayesrule's version, as ``bayesrule.__version__`` gives it (without importing
    the package, which imports this module)."""
    try:
        return version("bayesrule")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0"


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
