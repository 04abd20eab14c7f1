"""The JSON nodes of ``metadata.json`` back into values, each array read and checked once."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .archive import _Archive
from .constants import _NODE_KEYS, METADATA, ModelFileError
from .schema import (
    ArraySpec,
    NestedSpec,
    _stats_classes,
    bind,
    check_array,
    check_csr,
    field_schema,
)


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
        schema = field_schema(cls)
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
        check_csr(values, schema, where, self.fail)
        try:
            return cls(**values)
        except Exception as exc:
            raise self.fail(f"{where}: not a valid {cls.__name__} ({exc}).") from None

    def spec_array(
        self, node: Any, where: str, spec: ArraySpec, env: dict[str, int]
    ) -> NDArray[Any]:
        self._node(node, where, ("array",))
        return check_array(self.member(node, where), where, spec, env, self.fail)

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
        bind(env, "p", len(out), where, 0, self.fail)
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
