"""Parameters and statistics as the JSON nodes of ``metadata.json`` plus ``.npy`` members."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import numpy as np

from .arrays import npy_bytes
from .constants import ModelFileError


class _Writer:
    """Turns parameters and statistics into JSON nodes plus ``.npy`` members."""

    def __init__(self, stats_classes: dict[str, type[Any]]) -> None:
        self.members: dict[str, bytes] = {}
        self.stats_classes = stats_classes

    def _array(self, value: Any, where: str) -> dict[str, Any]:
        data = npy_bytes(value, where)
        # a plain member name (see _MEMBER_NAME): no '..', no leading dot
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", where)
        stem = re.sub(r"\.{2,}", ".", stem).lstrip(".-")[:180] or "array"
        name = f"arrays/{stem}.npy"
        n = 1
        while name in self.members:
            n += 1
            name = f"arrays/{stem}-{n}.npy"
        self.members[name] = data
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
