"""What each statistics class's fields must be in a model file, and the checks of an array against it.

:data:`STATS_SCHEMA` declares the dtype, the shape (in symbolic sizes) and the
range of every field; :func:`field_schema` gives a class's whole schema and
is the one place the rest of :mod:`bayesrule.io` reads specifications from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .constants import ModelFileError

__all__ = ["STATS_SCHEMA", "ArraySpec", "NestedSpec", "field_schema"]


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


def field_schema(cls: type[Any]) -> dict[str, ArraySpec | NestedSpec | str | None]:
    """The schema of a statistics class: :data:`STATS_SCHEMA`, or derived from its fields."""
    # a statistic that extends another (FourthMomentStats) has its fields too
    declared: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        declared.update(STATS_SCHEMA.get(base.__name__, {}))
    # TODO(lead): a private attribute of the statistics; the stats helper's
    # field_schema(cls) replaces this function (one line: field_schema = stats.field_schema)
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
    # TODO(lead): the private attribute of the estimators; the est helper adds a public accessor
    return getattr(cls, "_stats_type", None)
