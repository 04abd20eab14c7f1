"""Hostile model files: a generated probe of ``bayesrule.load``.

Valid files of several estimators are mutated systematically: relabelled
estimators and statistics, metadata of the wrong type or shape, deep JSON,
unsupported zip features, lying ``.npy`` headers and zip bombs, path-like
member names, non-finite and negative numbers, wrong dtypes and shapes, byte
flips and truncations at seeded offsets, and paths that are not regular
files. Every case must load a model identical to the original or raise
``ModelFileError`` — never another exception, never a hang (each load runs
under an alarm). The number of cases tried is counted and checked.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import signal
import socket
import struct
import sys
import warnings
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bayesrule
from bayesrule.estimators.registry import available
from bayesrule.io import METADATA, ModelFileError, load, read_metadata, save

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "setitimer") or not hasattr(os, "mkfifo"), reason="needs POSIX"
)

TIMEOUT_S = 5.0
STRICT, SAME_CLASS = "strict", "same-class"


class Hang(Exception):
    """Raised by the alarm: a load that did not return in time."""


@contextlib.contextmanager
def alarm(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise Hang(f"load did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# ----------------------------------------------------------------------------- originals
def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, p = 60, 3
    k = np.repeat(np.arange(3), n // 3)
    X = rng.poisson(1.0 + k[:, None] * np.arange(1, p + 1), size=(n, p)).astype(float)
    return X, np.array(["ant", "bee", "cat"])[k]


class Original:
    def __init__(self, short: str, model: Any, X: Any, path: Path) -> None:
        self.short, self.model, self.X, self.path = short, model, X, path
        self.proba = model.predict_proba(X)
        self.bytes = path.read_bytes()
        with zipfile.ZipFile(path) as zf:
            self.members = {n: zf.read(n) for n in zf.namelist()}
        self.meta = json.loads(self.members[METADATA])


@pytest.fixture(scope="module")
def originals(tmp_path_factory) -> dict[str, Original]:
    out: dict[str, Original] = {}
    root = tmp_path_factory.mktemp("originals")
    X, y = _data()
    models = {
        "lda": bayesrule.LinearDiscriminantAnalysis(),
        # FourthMomentStats: the schema of ScatterStats plus t and q
        "lda4": bayesrule.LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto"),
        "rda": bayesrule.RegularizedDiscriminantAnalysis(
            alpha=0.3, priors=np.array([0.2, 0.3, 0.5])
        ),
        "rdacv": bayesrule.RegularizedDiscriminantAnalysisCV(cv=3),
        "gnb": bayesrule.GaussianNB(),
        "mnb": bayesrule.MultinomialNB(),
        "catnb": bayesrule.CategoricalNB(),
        "knb": bayesrule.KernelNB(),
    }
    for short, est in models.items():
        path = save(est.fit(X, y), root / f"{short}.bayesrule")
        out[short] = Original(short, est, X, path)
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {"a": rng.normal(size=60), "b": rng.choice(["x", "y", "z"], 60), "d": rng.poisson(2, 60)}
    )
    mixed = bayesrule.MixedNB(columns={"d": "poisson"}).fit(df, y)
    out["mixed"] = Original("mixed", mixed, df, save(mixed, root / "mixed.bayesrule"))
    return out


# ----------------------------------------------------------------------------- the probe
class Probe:
    """Loads each case under an alarm and records what came of it."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.tried = 0
        self.outcomes: Counter[str] = Counter()
        self.failures: list[str] = []
        self.other: list[str] = []

    def check(self, label: str, path: Path, original: Original | None, expect: str) -> None:
        """``expect``: STRICT (ModelFileError, or a model identical to the original) or
        SAME_CLASS (ModelFileError, or any fitted model of the original's class: a
        resealed file that says something else valid)."""
        self.tried += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with alarm(TIMEOUT_S):
                    model = load(path)
        except ModelFileError as exc:
            self.outcomes["refused"] += 1
            if str(path) not in str(exc):
                self.failures.append(f"{label}: the message does not name the file: {exc}")
            return
        except Hang as exc:
            self.failures.append(f"{label}: {exc}")
            return
        except BaseException as exc:  # noqa: BLE001 - any other type is the defect probed for
            self.failures.append(f"{label}: {type(exc).__name__}: {exc}")
            return
        if original is None:
            self.failures.append(f"{label}: accepted")
            return
        if type(model) is not type(original.model):
            self.failures.append(f"{label}: loaded a {type(model).__name__}")
            return
        try:
            proba = model.predict_proba(original.X)
        except ValueError as exc:
            if expect == SAME_CLASS and "feature names" in str(exc):
                self.outcomes["other valid model"] += 1  # a model of other features
            else:
                self.failures.append(f"{label}: loaded a model that cannot predict: {exc!r}")
            return
        if np.array_equal(proba, original.proba):
            self.outcomes["identical"] += 1
        elif expect == SAME_CLASS:
            self.outcomes["other valid model"] += 1
            self.other.append(label)
        else:
            self.failures.append(f"{label}: loaded a model that differs from the original")

    def file(
        self, label: str, data: bytes, original: Original | None, expect: str = STRICT
    ) -> None:
        path = self.tmp / "case.bayesrule"
        path.write_bytes(data)
        self.check(label, path, original, expect)

    def members(
        self, label: str, members: dict[str, bytes], original: Original, expect: str = STRICT
    ) -> None:
        self.file(label, _zip(members), original, expect)


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names
        with zipfile.ZipFile(buf, "w", compression=method) as zf:
            for name, data in members.items():
                zf.writestr(name.rstrip("\0"), data)
    return buf.getvalue()


def _reseal(meta: dict[str, Any]) -> bytes:
    """Metadata with a correct checksum again, as a forger would write it."""
    body = {k: v for k, v in meta.items() if k != "checksum"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return json.dumps({**body, "checksum": hashlib.sha256(canon).hexdigest()}).encode()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=arr.dtype.hasobject)
    return buf.getvalue()


def _with_member(orig: Original, name: str, data: bytes, *, meta: dict | None = None) -> dict:
    """The original's members with ``name`` replaced by ``data``, listed and resealed."""
    members = dict(orig.members)
    members[name] = data
    meta = json.loads(json.dumps(orig.meta if meta is None else meta))
    meta["members"][name] = hashlib.sha256(data).hexdigest()
    members[METADATA] = _reseal(meta)
    return members


def _array_nodes(node: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(where, member) of every array node of the metadata."""
    if isinstance(node, dict):
        if node.get("kind") == "array":
            yield where, node["member"]
        for k, v in node.items():
            yield from _array_nodes(v, f"{where}.{k}" if where else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _array_nodes(v, f"{where}.{i}")


def _paths(node: Any, at: tuple = ()) -> Iterator[tuple]:
    """The path of every entry of the JSON tree."""
    yield at
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*at, i))


def _set(tree: Any, at: tuple, value: Any) -> Any:
    tree = json.loads(json.dumps(tree))
    node = tree
    for key in at[:-1]:
        node = node[key]
    node[at[-1]] = value
    return tree


# ----------------------------------------------------------------------------- cases
def relabelled(probe: Probe, orig: Original) -> None:
    for other in available().values():
        name = other.__name__
        if name == orig.meta["estimator"]:
            continue
        meta = dict(orig.meta, estimator=name)
        probe.members(f"{orig.short} as {name}", {**orig.members, METADATA: _reseal(meta)}, orig)
        raw = json.dumps(meta).encode()  # not resealed
        probe.members(f"{orig.short} as {name}, no reseal", {**orig.members, METADATA: raw}, orig)
    for cls in ["ScatterStats", "PooledScatterStats", "DiagonalStats", "CountStats",
                "CategoryStats", "ValueCountStats", "MixedStats", "CrossValidatedStats",
                "Statistic", "StatisticsError", "os.system", ""]:  # fmt: skip
        if cls == orig.meta["stats"]["class"]:
            continue
        meta = _set(orig.meta, ("stats", "class"), cls)
        probe.members(
            f"{orig.short} stats as {cls}", {**orig.members, METADATA: _reseal(meta)}, orig
        )


WRONG_VALUES: list[Any] = [
    None, True, 0, -1, 2**70, 1.5, "x", "../x", [], {}, [1, [2]], {"kind": "value"},
    {"kind": "array", "member": "../../etc/passwd"}, {"kind": "array", "member": METADATA},
    {"kind": "array", "member": "arrays/none.npy"}, {"kind": "float", "value": "nan"},
    {"kind": "stats", "class": "ScatterStats", "fields": {}}, {"kind": "list", "items": {}},
    {"kind": "dict", "items": []}, {"kind": "tuple", "items": [{"kind": "value", "value": {}}]},
]  # fmt: skip


def wrong_metadata(probe: Probe, orig: Original, rng: np.random.Generator) -> None:
    paths = [p for p in _paths(orig.meta) if p and p[0] != "checksum"]
    chosen = rng.choice(len(paths), size=min(len(paths), 25), replace=False)
    for i in sorted(chosen):
        at = paths[i]
        for value in WRONG_VALUES[:: 1 + int(i) % 3]:
            meta = _set(orig.meta, at, value)
            probe.members(
                f"{orig.short} {'.'.join(map(str, at))} = {value!r}",
                {**orig.members, METADATA: _reseal(meta)},
                orig,
                SAME_CLASS,
            )
    for key in list(orig.meta):
        meta = {k: v for k, v in orig.meta.items() if k != key}
        probe.members(
            f"{orig.short} without {key}", {**orig.members, METADATA: _reseal(meta)}, orig
        )
    meta = dict(orig.meta, surprise=1)
    probe.members(f"{orig.short} extra key", {**orig.members, METADATA: _reseal(meta)}, orig)
    for text in [b"[]", b"null", b"1", b'"x"', b"{", b"\xff\xfe{}", b"{}" * 3,
                 b'{"format": NaN}', b'{"a": 1, "a": 2}', b"1" * 5000, b"1e99999"]:  # fmt: skip
        probe.members(
            f"{orig.short} metadata {text[:12]!r}", {**orig.members, METADATA: text}, orig
        )
    canon = orig.members[METADATA]
    dup = canon.replace(b'"extra": {}', b'"extra": {}, "extra": {"x": 1}', 1)
    probe.members(f"{orig.short} duplicate key", {**orig.members, METADATA: dup}, orig)
    nan = canon.replace(b'"extra": {}', b'"extra": NaN', 1)
    probe.members(f"{orig.short} NaN literal", {**orig.members, METADATA: nan}, orig)


def deep_json(probe: Probe, orig: Original) -> None:
    canon = orig.members[METADATA]
    for depth in [65, 1000, 100_000]:
        for opener, closer in [(b"[", b"]"), (b'{"a":', b"}")]:
            deep = opener * depth + b"1" + closer * depth
            text = canon.replace(b'"extra": {}', b'"extra": ' + deep, 1)
            probe.members(f"{orig.short} JSON {depth} deep", {**orig.members, METADATA: text}, orig)
    # deep but inside a string: harmless, refused only by the checksum
    text = canon.replace(b'"extra": {}', b'"extra": "' + b"[" * 100_000 + b'"', 1)
    probe.members(f"{orig.short} brackets in a string", {**orig.members, METADATA: text}, orig)


def _patch_member(data: bytes, name: str, *, flag: int = 0, method: int | None = None,
                  file_size: int | None = None) -> bytes:  # fmt: skip
    """The zip with ``name``'s flag bits or-ed with ``flag``, its method or declared
    size replaced, in the local header and in the central directory."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.getinfo(name)
    at = info.header_offset
    end = data.rfind(b"PK\x05\x06")
    (cd,) = struct.unpack("<I", data[end + 16 : end + 20])
    entries = []
    pos = cd
    while data[pos : pos + 4] == b"PK\x01\x02":
        n, m, k = struct.unpack("<HHH", data[pos + 28 : pos + 34])
        if data[pos + 46 : pos + 46 + n] == name.encode():
            entries.append(pos)
        pos += 46 + n + m + k
    for fl, me, size in [(at + 6, at + 8, at + 22)] + [(e + 8, e + 10, e + 24) for e in entries]:
        (flags,) = struct.unpack("<H", out[fl : fl + 2])
        out[fl : fl + 2] = struct.pack("<H", flags | flag)
        if method is not None:
            out[me : me + 2] = struct.pack("<H", method)
        if file_size is not None:
            out[size : size + 4] = struct.pack("<I", file_size)
    return bytes(out)


def zip_features(probe: Probe, orig: Original) -> None:
    for name in [METADATA, next(iter(orig.meta["members"]))]:
        for flag in [0x1, 0x40, 0x2000, 0x1000]:
            probe.file(
                f"{orig.short} {name} flag {flag:#x}",
                _patch_member(orig.bytes, name, flag=flag),
                orig,
            )
        for method in [1, 6, 9, 12, 14, 93, 98, 99]:
            probe.file(
                f"{orig.short} {name} method {method}",
                _patch_member(orig.bytes, name, method=method),
                orig,
            )
        for size in [0, 1, 2**31, 2**32 - 1]:
            probe.file(
                f"{orig.short} {name} declares {size} bytes",
                _patch_member(orig.bytes, name, file_size=size),
                orig,
            )
    for method in [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, zipfile.ZIP_STORED]:
        probe.file(f"{orig.short} written with method {method}", _zip(orig.members, method), orig)
    # duplicated, directory, path-like and unlisted members
    members = list(orig.members.items())
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(buf, "w") as zf:
            for n, d in members + [members[-1]]:
                zf.writestr(n, d)
    probe.file(f"{orig.short} duplicate member", buf.getvalue(), orig)
    evil = ["../evil.npy", "/etc/evil.npy", "arrays/../evil.npy", "arrays\\evil.npy", "C:/evil.npy",
            "arrays/", "arrays/sub/evil.npy", "arrays/..npy", "arrays/.npy", "arrays/x.npy/",
            "arrays/x.pkl", "ARRAYS/x.npy", "arrays/x.npy\0.txt"]  # fmt: skip
    first = next(iter(orig.meta["members"]))
    for name in evil:
        # renamed in the zip and in the metadata, resealed
        text = orig.members[METADATA].decode().replace(f'"{first}"', json.dumps(name))
        members = {METADATA: _reseal(json.loads(text))}
        members.update(
            {(name if n == first else n): d for n, d in orig.members.items() if n != METADATA}
        )
        probe.members(f"{orig.short} member named {name!r}", members, orig)
        probe.members(f"{orig.short} extra member {name!r}", {**orig.members, name: b"x"}, orig)
    listed = json.loads(json.dumps(orig.meta))
    listed["members"]["arrays/ghost.npy"] = "0" * 64
    probe.members(
        f"{orig.short} listed, absent member", {**orig.members, METADATA: _reseal(listed)}, orig
    )
    ghost = _npy(np.zeros(2))
    probe.members(
        f"{orig.short} listed, unused member", _with_member(orig, "arrays/ghost.npy", ghost), orig
    )
    twice = json.loads(json.dumps(orig.meta))
    where = [w for w, _ in _array_nodes(twice["stats"])]
    if len(where) >= 2:
        a, b = where[0].split("."), where[1].split(".")
        node_a = twice["stats"]
        for k in a:
            node_a = node_a[int(k) if isinstance(node_a, list) else k]
        node_b = twice["stats"]
        for k in b[:-1]:
            node_b = node_b[int(k) if isinstance(node_b, list) else k]
        node_b[b[-1]] = dict(node_a)
        probe.members(
            f"{orig.short} one member used twice", {**orig.members, METADATA: _reseal(twice)}, orig
        )
    probe.file(
        f"{orig.short} without metadata",
        _zip({k: v for k, v in orig.members.items() if k != METADATA}),
        orig,
    )


def bombs(probe: Probe, orig: Original) -> None:
    # an honest metadata.json past the limit: 100 MiB of spaces, about 100 KiB compressed
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = b" " * (1 << 20)
    body = b"".join(comp.compress(chunk) for _ in range(100)) + comp.flush()
    crc = 0
    for _ in range(100):
        crc = zlib.crc32(chunk, crc)
    size = 100 << 20
    probe.file(f"{orig.short} 100 MiB metadata", _raw_zip(METADATA, body, crc, size), orig)
    # a small member that declares 1 GiB, or declares 10 bytes and inflates to 100 MiB
    probe.file(
        f"{orig.short} metadata declares 1 GiB", _raw_zip(METADATA, body, crc, 1 << 30), orig
    )
    probe.file(
        f"{orig.short} metadata inflates past its size", _raw_zip(METADATA, body, crc, 10), orig
    )
    name = next(iter(orig.meta["members"]))
    probe.file(
        f"{orig.short} array declares 5 GiB",
        _patch_member(orig.bytes, name, file_size=2**32 - 1),
        orig,
    )
    # an array member that honestly inflates to more than load(max_bytes=) allows
    probe.tried += 1
    with pytest.raises(ModelFileError, match="limit"):
        load(orig.path, max_bytes=16)
    probe.outcomes["refused"] += 1


def _raw_zip(name: str, compressed: bytes, crc: int, size: int) -> bytes:
    """A one-member deflated zip with the given declared size, written by hand."""
    n = name.encode()
    local = struct.pack(
        "<4s5H3I2H", b"PK\x03\x04", 20, 0, 8, 0, 0x21, crc, len(compressed), size, len(n), 0
    )
    central = struct.pack(
        "<4s6H3I5H2I",
        b"PK\x01\x02",
        20,
        20,
        0,
        8,
        0,
        0x21,
        crc,
        len(compressed),
        size,
        len(n),
        0,
        0,
        0,
        0,
        0,
        0,
    )
    cd_at = len(local) + len(n) + len(compressed)
    cd = central + n
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, len(cd), cd_at, 0)
    return local + n + compressed + cd + end


NPY_HEADERS = [
    "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000,), }",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (" + "1, " * 40 + "), }",
    "{'descr': '<f8', 'fortran_order': False, 'shape': " + "(" * 300 + ")" * 300 + ", }",
    "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }",
    "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }",
    "{'descr': '|V8', 'fortran_order': False, 'shape': (3,), }",
    "{'descr': '<U0', 'fortran_order': False, 'shape': (3,), }",
    "{'descr': 'nonsense', 'fortran_order': False, 'shape': (3,), }",
    "{'descr': '<f8', 'fortran_order': 'yes', 'shape': (3,), }",
    "{'descr': '<f8', 'shape': (3,), }",
    "__import__('os').system('true')",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': " + "9" * 9000 + "}",
    "[" * 5000,
]


def lying_headers(probe: Probe, orig: Original) -> None:
    name = next(m for _, m in _array_nodes(orig.meta["stats"]) if "means" in m or "weights" in m)
    for header in NPY_HEADERS:
        raw = header.encode("latin1")
        pad = (-(10 + len(raw) + 1)) % 64
        data = (
            b"\x93NUMPY\x01\x00" + struct.pack("<H", len(raw) + pad + 1) + raw + b" " * pad + b"\n"
        )
        probe.members(
            f"{orig.short} npy header {header[:40]}",
            _with_member(orig, name, data + bytes(4000)),
            orig,
        )
    huge = b"\x93NUMPY\x02\x00" + struct.pack("<I", 2**31) + b"{"
    probe.members(f"{orig.short} npy 2 GiB header", _with_member(orig, name, huge), orig)
    for version in [b"\x03\x00", b"\x09\x09"]:
        data = b"\x93NUMPY" + version + _npy(np.zeros(3))[8:]
        probe.members(f"{orig.short} npy version {version!r}", _with_member(orig, name, data), orig)
    probe.members(f"{orig.short} not npy", _with_member(orig, name, b"PK\x03\x04 nothing"), orig)
    probe.members(f"{orig.short} empty npy", _with_member(orig, name, b""), orig)


def _mutations(arr: np.ndarray, free_last: bool) -> Iterator[tuple[str, np.ndarray, str]]:
    """(label, mutated array, expectation) for one stored array; ``free_last``: its last
    axis is not tied to the other arrays (the categories seen)."""
    yield (
        "float32",
        arr.astype(np.float32) if arr.dtype.kind != "U" else arr.astype("S"),
        SAME_CLASS,
    )
    for dtype in ["i4", "c16", "?", "M8[s]", "m8[s]", "S3", "U3"]:
        try:
            mutated = arr.astype(dtype)
        except (TypeError, ValueError):
            continue
        yield f"as {dtype}", mutated, SAME_CLASS
    yield "as object", arr.astype(object), STRICT
    yield "big-endian", arr.astype(arr.dtype.newbyteorder(">")), STRICT
    if arr.ndim and arr.shape[0]:
        yield "a row short", arr[:-1], STRICT
        yield "a row more", np.concatenate([arr, arr[:1]]), STRICT
        yield "an axis more", arr[None], STRICT
        yield "reversed", arr[::-1].copy(), SAME_CLASS
    if arr.ndim >= 2 and arr.shape[-1]:
        yield "a column short", arr[..., :-1], SAME_CLASS if free_last else STRICT
        yield "flattened", arr.ravel(), STRICT
        yield "fortran order", np.asfortranarray(arr.T), SAME_CLASS
    if arr.ndim == 0:
        yield "an axis more", arr[None], STRICT
    if arr.dtype.kind in "fi" and arr.size:
        for bad in [np.nan, np.inf, -np.inf, -1.0, 1e308]:
            mutated = arr.astype(float)
            mutated.flat[arr.size // 2] = bad
            if arr.dtype.kind == "i":
                if not -(2**62) < bad < 2**62:
                    continue
                mutated = mutated.astype(arr.dtype)
            yield f"holding {bad}", mutated, SAME_CLASS


def wrong_arrays(probe: Probe, orig: Original) -> None:
    for where, name in _array_nodes(
        {k: orig.meta[k] for k in ("stats", "params", "feature_names_in")}
    ):
        arr = np.load(io.BytesIO(orig.members[name]), allow_pickle=False)
        for label, mutated, expect in _mutations(arr, "category_counts" in where):
            probe.members(
                f"{orig.short} {where} {label}",
                _with_member(orig, name, _npy(mutated)),
                orig,
                expect,
            )


def non_finite_refused(probe: Probe, orig: Original) -> None:
    """NaN and infinity in any stored moment or weight, and negative weights, are refused."""
    for where, name in _array_nodes(orig.meta["stats"]):
        arr = np.load(io.BytesIO(orig.members[name]), allow_pickle=False)
        if arr.dtype.kind != "f" or not arr.size:
            continue
        # held-out scores and log-likelihoods may be -inf (a candidate that gave a
        # held-out row probability zero): declared so, and only that
        scores = "cv_scores" in where or "cv_log_likelihoods" in where
        for bad in [np.nan, np.inf] + ([-np.inf] if not scores else []):
            if np.array_equal(arr.flat[:1], [bad], equal_nan=True):
                continue  # a feature bound that is already unknown or empty: no change
            mutated = arr.copy()
            mutated.flat[0] = bad
            probe.members(
                f"{orig.short} {where}[0] = {bad}", _with_member(orig, name, _npy(mutated)), None
            )
        if "weights" in where or "counts" in where:
            mutated = arr.copy()
            mutated.flat[0] = -1.0
            probe.members(
                f"{orig.short} {where}[0] = -1", _with_member(orig, name, _npy(mutated)), None
            )
    for key, value in orig.meta["params"].items():
        if value.get("kind") == "value" and isinstance(value["value"], float):
            for bad in ["nan", "inf", "-inf"]:
                meta = _set(orig.meta, ("params", key), {"kind": "float", "value": bad})
                probe.members(
                    f"{orig.short} params.{key} = {bad}",
                    {**orig.members, METADATA: _reseal(meta)},
                    orig,
                    SAME_CLASS,
                )


def flips_and_cuts(probe: Probe, orig: Original, rng: np.random.Generator) -> None:
    data = orig.bytes
    for offset in rng.choice(len(data), size=min(len(data), 60), replace=False):
        flipped = bytearray(data)
        flipped[offset] ^= int(rng.integers(1, 256))
        probe.file(f"{orig.short} byte {offset} flipped", bytes(flipped), orig)
    for offset in sorted(
        set(rng.integers(0, len(data), size=20).tolist()) | {0, 1, 4, len(data) - 1}
    ):
        probe.file(f"{orig.short} cut at {offset}", data[:offset], orig)
    probe.file(f"{orig.short} garbage appended", data + b"\0" * 100, orig)
    probe.file(f"{orig.short} garbage prepended", b"\0" * 100 + data, orig)


def not_regular_files(probe: Probe, orig: Original) -> None:
    tmp = probe.tmp
    fifo = tmp / "fifo.bayesrule"
    os.mkfifo(fifo)
    probe.check("FIFO", fifo, None, STRICT)
    link = tmp / "to-fifo.bayesrule"
    link.symlink_to(fifo)
    probe.check("symlink to a FIFO", link, None, STRICT)
    folder = tmp / "dir.bayesrule"
    folder.mkdir()
    probe.check("directory", folder, None, STRICT)
    probe.check("character device", Path(os.devnull), None, STRICT)
    dangling = tmp / "dangling.bayesrule"
    dangling.symlink_to(tmp / "nothing")
    probe.check("dangling symlink", dangling, None, STRICT)
    loop = tmp / "loop.bayesrule"
    loop.symlink_to(loop)
    probe.check("symlink loop", loop, None, STRICT)
    probe.check("missing file", tmp / "missing.bayesrule", None, STRICT)
    probe.check("path through a file", orig.path / "x", None, STRICT)
    sock_path = tmp / "s.bayesrule"
    if len(str(sock_path)) < 100:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(sock_path))
            probe.check("socket", sock_path, None, STRICT)
    good = tmp / "to-good.bayesrule"
    good.symlink_to(orig.path)
    probe.check("symlink to a model file", good, orig, STRICT)
    for path in [fifo, link, folder, dangling, loop, sock_path, good]:
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink(missing_ok=True)


# ----------------------------------------------------------------------------- the tests
def test_every_hostile_file_is_refused_or_loads_identically(tmp_path, originals, capsys):
    probe = Probe(tmp_path)
    rng = np.random.default_rng(20240611)
    for orig in originals.values():
        probe.file(f"{orig.short} untouched", orig.bytes, orig)
        relabelled(probe, orig)
        wrong_metadata(probe, orig, rng)
        deep_json(probe, orig)
        zip_features(probe, orig)
        lying_headers(probe, orig)
        wrong_arrays(probe, orig)
        non_finite_refused(probe, orig)
        flips_and_cuts(probe, orig, rng)
    bombs(probe, originals["lda"])
    not_regular_files(probe, originals["gnb"])
    with capsys.disabled():
        sys.stdout.write(f"\n[hostile model files] {probe.tried} cases: {dict(probe.outcomes)}\n")
    if os.environ.get("HOSTILE_DUMP"):
        Path(os.environ["HOSTILE_DUMP"]).write_text(
            "\n".join(probe.failures + ["--"] + probe.other)
        )
    assert not probe.failures, f"{len(probe.failures)} of {probe.tried} cases:\n" + "\n".join(
        probe.failures[:40]
    )
    assert probe.tried > 3000 and probe.outcomes["refused"] > 2000


# ----------------------------------------------------------------------------- messages
@pytest.fixture
def lda(originals) -> Original:
    return originals["lda"]


def _load_members(tmp_path: Path, members: dict[str, bytes]) -> Any:
    path = tmp_path / "m.bayesrule"
    path.write_bytes(_zip(members))
    return load(path)


def test_relabelled_estimator_is_named(tmp_path, lda):
    meta = dict(lda.meta, estimator="GaussianNB")
    with pytest.raises(
        ModelFileError,
        match="GaussianNB is built from DiagonalStats, but the file holds 'ScatterStats'",
    ):
        _load_members(tmp_path, {**lda.members, METADATA: _reseal(meta)})
    meta = dict(lda.meta, estimator="QuadraticDiscriminantAnalysis")
    with pytest.raises(ModelFileError, match="'n_components' is not a parameter of Quadratic"):
        _load_members(tmp_path, {**lda.members, METADATA: _reseal(meta)})


def test_fifo_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "pipe.bayesrule"
    os.mkfifo(fifo)
    with alarm(TIMEOUT_S), pytest.raises(ModelFileError, match=r"is a FIFO \(named pipe\)"):
        load(fifo)


def test_lying_npy_header_is_refused_before_allocating(tmp_path, lda):
    raw = b"{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000,), }"
    data = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(raw) + 1) + raw + b"\n" + bytes(4000)
    with pytest.raises(ModelFileError, match=r"shape \(100000000000,\).*holds 4000 bytes"):
        _load_members(tmp_path, _with_member(lda, "arrays/stats.means.npy", data))


def test_deep_json_is_refused(tmp_path, lda):
    text = lda.members[METADATA].replace(
        b'"extra": {}', b'"extra": ' + b"[" * 100_000 + b"]" * 100_000
    )
    with pytest.raises(ModelFileError, match="nested 100001 deep"):
        _load_members(tmp_path, {**lda.members, METADATA: text})


def test_encrypted_and_unsupported_members_are_named(tmp_path, lda):
    path = tmp_path / "m.bayesrule"
    path.write_bytes(_patch_member(lda.bytes, METADATA, flag=0x1))
    with pytest.raises(ModelFileError, match="metadata.json is encrypted"):
        load(path)
    path.write_bytes(_patch_member(lda.bytes, METADATA, method=14))
    with pytest.raises(ModelFileError, match="compression method 14"):
        load(path)


def test_metadata_bomb_is_refused_by_its_declared_size(tmp_path):
    path = tmp_path / "bomb.bayesrule"
    body = zlib.compress(b" " * (1 << 20))[2:-4]
    path.write_bytes(_raw_zip(METADATA, body, 0, 1 << 30))
    with pytest.raises(ModelFileError, match=r"metadata.json declares 1073741824 bytes, more than"):
        load(path)


def test_path_like_member_name_is_refused(tmp_path, lda):
    text = lda.members[METADATA].decode().replace('"arrays/stats.means.npy"', '"../means.npy"')
    members = {METADATA: _reseal(json.loads(text))}
    members.update(
        {
            ("../means.npy" if n == "arrays/stats.means.npy" else n): d
            for n, d in lda.members.items()
            if n != METADATA
        }
    )
    with pytest.raises(ModelFileError, match=r"unexpected member '../means.npy'"):
        _load_members(tmp_path, members)


@pytest.mark.parametrize(
    "field,value,match",
    [
        ("means", np.nan, r"stats.means holds nan at \(0, 0\); it must hold finite numbers"),
        ("weights", -1.0, r"stats.weights holds -1.0 at \(0,\); it must be at least 0"),
        ("scatter", np.inf, "stats.scatter holds inf"),
    ],
)
def test_non_finite_statistics_are_named(tmp_path, lda, field, value, match):
    name = f"arrays/stats.{field}.npy"
    arr = np.load(io.BytesIO(lda.members[name]))
    arr.flat[0] = value
    with pytest.raises(ModelFileError, match=match):
        _load_members(tmp_path, _with_member(lda, name, _npy(arr)))


def test_wrong_shape_and_dtype_are_named(tmp_path, lda):
    name = "arrays/stats.means.npy"
    arr = np.load(io.BytesIO(lda.members[name]))
    with pytest.raises(
        ModelFileError,
        match="stats.means has 2 features along axis 1, but the other entries have 3",
    ):
        _load_members(tmp_path, _with_member(lda, name, _npy(arr[:, :2])))
    with pytest.raises(
        ModelFileError, match="stats.means has the dtype float32; it must be float64"
    ):
        _load_members(tmp_path, _with_member(lda, name, _npy(arr.astype(np.float32))))
    name = "arrays/stats.classes.npy"
    labels = np.load(io.BytesIO(lda.members[name]))
    with pytest.raises(ModelFileError, match="sorted, unique class labels"):
        _load_members(tmp_path, _with_member(lda, name, _npy(labels[::-1].copy())))


def test_read_metadata_checks_the_archive(tmp_path, lda):
    path = tmp_path / "m.bayesrule"
    path.write_bytes(_patch_member(lda.bytes, METADATA, flag=0x1))
    with pytest.raises(ModelFileError, match="encrypted"):
        read_metadata(path)


def test_building_errors_become_model_file_errors(tmp_path, lda, monkeypatch):
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise AttributeError("deep inside")

    monkeypatch.setattr(bayesrule.LinearDiscriminantAnalysis, "from_stats", classmethod(broken))
    with pytest.raises(
        ModelFileError, match=r"lda.bayesrule: cannot rebuild LinearDiscriminantAnalysis"
    ):
        load(lda.path)
