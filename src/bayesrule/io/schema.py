"""What each statistics class's fields must be in a model file, and the checks of an array against it.

Each statistics class declares the dtype, the shape (in symbolic sizes) and
the range of every field once, in its dataclass fields
(:mod:`bayesrule.stats.schema`); :func:`field_schema` reads that declaration
and is the one place the rest of :mod:`bayesrule.io` reads specifications
from. :data:`STATS_SCHEMA` is the same, by class name, for every statistic
of the package.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..stats import ArraySpec, NestedSpec
from ..stats import field_schema as _declared_schema
from .constants import ModelFileError

__all__ = ["STATS_SCHEMA", "ArraySpec", "NestedSpec", "field_schema"]


# --------------------------------------------------------------------------- specs
def field_schema(cls: type[Any]) -> dict[str, ArraySpec | NestedSpec | str | None]:
    """The schema of a statistics class, as its fields declare it (:func:`bayesrule.stats.field_schema`)."""
    return _declared_schema(cls)


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
    candidates += [stats_type_of(c) for c in _estimator_classes().values()]
    for c in candidates:
        if isinstance(c, type) and dataclasses.is_dataclass(c):
            found[c.__name__] = c
    return found


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

Fail = Callable[[str], ModelFileError]


def check_array(
    arr: NDArray[Any], where: str, spec: ArraySpec, env: dict[str, int], fail: Fail
) -> NDArray[Any]:
    """``arr`` checked against ``spec`` (dtype, shape, values); its sizes bound in ``env``."""
    kinds, desc = _DTYPES[spec.dtype]
    if arr.dtype.kind not in kinds or (
        spec.dtype in ("int64", "float64") and arr.dtype.itemsize != 8
    ):
        raise fail(f"{where} has the dtype {arr.dtype}; it must be {desc}.")
    if spec.dims is not None:
        dims = spec.dims
        fixed = dims[:-1] if dims[-1:] == ("...",) else dims
        if arr.ndim < len(fixed) or (fixed is dims and arr.ndim != len(dims)):
            raise fail(
                f"{where} has the shape {arr.shape}; it must have {len(fixed)} axes ({', '.join(fixed)})."
            )
        for axis, dim in enumerate(fixed):
            bind(env, dim, arr.shape[axis], where, axis, fail)
    if arr.dtype.kind == "f" and not spec.allow_nonfinite:
        ok = np.isfinite(arr)
        if spec.allow_neg_inf:
            ok |= arr == -np.inf
        if not np.all(ok):
            at = tuple(int(i[0]) for i in np.nonzero(~ok))
            raise fail(f"{where} holds {arr[at]} at {at}; it must hold finite numbers.")
    if spec.low is not None and arr.size and np.any(arr < spec.low):
        at = tuple(int(i[0]) for i in np.nonzero(arr < spec.low))
        raise fail(f"{where} holds {arr[at]} at {at}; it must be at least {spec.low:g}.")
    if spec.dtype == "labels":
        if arr.ndim != 1 or not np.array_equal(np.unique(arr), arr):
            raise fail(f"{where} must hold sorted, unique class labels.")
    if spec.dtype == "index":
        if arr.size and (np.any(arr < 0) or np.any(arr > np.iinfo(np.intp).max)):
            raise fail(f"{where} holds an index out of range.")
        arr = arr.astype(np.intp)
    return arr


def bind(env: dict[str, int], dim: str, size: int, where: str, axis: int, fail: Fail) -> None:
    """Record the size ``dim`` has in ``where``; refuse one the other fields contradict."""
    name, value = (dim[:-2], size - 1) if dim.endswith("+1") else (dim, size)
    what = _DIM_NAMES.get(name, f"'{name}'")
    if value < 0:
        raise fail(f"{where} has {size} entries along axis {axis}; it needs at least 1.")
    if name in env and env[name] != value:
        raise fail(
            f"{where} has {value} {what} along axis {axis}, but the other entries have {env[name]}."
        )
    env[name] = value


def check_csr(values: dict[str, Any], schema: dict[str, Any], where: str, fail: Fail) -> None:
    """Each CSR ``indptr`` field rises from 0 to the length of the field it indexes,
    whose entries are sorted and distinct within each row."""
    for name, spec in schema.items():
        if isinstance(spec, ArraySpec) and spec.csr is not None:
            ptr, target = values[name], values[spec.csr]
            if ptr[0] != 0 or np.any(np.diff(ptr) < 0) or ptr[-1] != len(target):
                raise fail(
                    f"{where}.{name} must rise from 0 to the {len(target)} entries of "
                    f"{where}.{spec.csr}."
                )
            # the entries of each row are distinct and sorted
            rising = np.diff(target) > 0
            starts = ptr[1:-1]
            rising[starts[(starts > 0) & (starts < len(target))] - 1] = True
            if not np.all(rising):
                raise fail(f"{where}.{spec.csr} must be sorted and distinct within each feature.")


def stats_type_of(cls: type[Any]) -> Any:
    """The statistics class an estimator class is fitted from (None if it declares none)."""
    spec = getattr(cls, "spec", None)
    return getattr(spec, "statistic", None)


def _stats_schema() -> dict[str, dict[str, ArraySpec | NestedSpec | str | None]]:
    from .. import stats as stats_module

    found = {}
    for name in getattr(stats_module, "__all__", []):
        c = getattr(stats_module, name, None)
        if isinstance(c, type) and dataclasses.is_dataclass(c) and hasattr(c, "from_data"):
            found[c.__name__] = field_schema(c)
    return found


#: The declared form of every field of each statistics class of
#: :mod:`bayesrule.stats` (by class name): dtype, shape and range.
STATS_SCHEMA = _stats_schema()
