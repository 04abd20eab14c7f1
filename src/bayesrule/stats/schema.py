"""Each statistic's fields declared once: dtype, shape, range, and whether indexed by class.

A statistic is a dataclass whose fields carry their declaration as metadata
made by the helpers here (:func:`labels`, :func:`per_class`, :func:`shared`,
:func:`bound`, :func:`nested`, :func:`special`), e.g.
``means: NDArray = field(metadata=per_class("K", "p"))``.
From that one declaration follow:

* :func:`field_schema`: the declared form of every field, which model files
  check a statistic against (:class:`ArraySpec`, :class:`NestedSpec`);
* :func:`per_class_fields`: the fields indexed by class along their first
  axis, which merging aligns and subtracting clears;
* :func:`empty_arrays`: the zero-filled arrays of the empty statistic.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ArraySpec",
    "NestedSpec",
    "bound",
    "empty_arrays",
    "field_schema",
    "labels",
    "nested",
    "per_class",
    "per_class_fields",
    "shared",
    "special",
]

#: The metadata key under which a field's declaration is stored.
_KEY = "bayesrule"


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


#: A field's declared form: an array, another statistic, a name the reader
#: checks by itself (MixedStats' ``"kinds"``), or ``None`` (any node, checked
#: by the class itself).
Spec = ArraySpec | NestedSpec | str | None


def _declare(spec: Spec, per_class: bool = False) -> dict[str, Any]:
    return {_KEY: (spec, per_class)}


def labels() -> dict[str, Any]:
    """The sorted class labels (``classes``)."""
    return _declare(ArraySpec("labels", ("K",)))


def per_class(*dims: str, dtype: str = "float64", low: float | None = None) -> dict[str, Any]:
    """An array indexed by class along its first axis (``dims[0]`` is ``"K"``).

    Merging places it in the united classes' order (zeros for a class it
    lacks, which is the empty statistic), and subtracting resets a class
    with no rows left to zeros.
    """
    if not dims or dims[0] != "K":
        raise ValueError(f"a per-class field's first axis is 'K'; got dims {dims}.")
    return _declare(ArraySpec(dtype, dims, low=low), per_class=True)


def shared(
    *dims: str,
    dtype: str = "float64",
    low: float | None = None,
    allow_neg_inf: bool = False,
    csr: str | None = None,
) -> dict[str, Any]:
    """An array common to all classes (a pooled scatter, the distinct values)."""
    return _declare(ArraySpec(dtype, dims, low=low, allow_neg_inf=allow_neg_inf, csr=csr))


def bound(
    *dims: str,
    dtype: str = "float64",
    low: float | None = None,
    allow_nonfinite: bool = True,
    allow_neg_inf: bool = False,
) -> dict[str, Any]:
    """An array a model file may lack (written before the field existed).

    For a keyword-only field whose default (``None``) ``__post_init__``
    replaces: the feature bounds ``lower`` and ``upper``, MixtureStats'
    later additions, and RDA-CV's held-out log-likelihoods.
    """
    spec = ArraySpec(
        dtype,
        dims,
        low=low,
        allow_neg_inf=allow_neg_inf,
        allow_nonfinite=allow_nonfinite,
        optional=True,
    )
    return _declare(spec)


def nested(cls: str) -> dict[str, Any]:
    """A field holding another statistic, of the class named ``cls``."""
    return _declare(NestedSpec(cls))


def special(name: str) -> dict[str, Any]:
    """A field of its own structure, checked by name (MixedStats' ``kinds``, ``parts``)."""
    return _declare(name)


#: field_schema and per_class_fields of each class, computed once
_SCHEMAS: dict[type[Any], dict[str, Spec]] = {}
_PER_CLASS: dict[type[Any], tuple[str, ...]] = {}


def _derived(f: dataclasses.Field[Any], per_class: tuple[str, ...]) -> Spec:
    """The form of an undeclared field: from its annotation, as model files always did."""
    ann = f.type if isinstance(f.type, str) else repr(f.type)
    if "NDArray" in ann or ann.strip() == "_F":
        dims = ("K", "...") if f.name in per_class else None
        return ArraySpec("index" if "int" in ann else "float64", dims)
    return None


def field_schema(cls: type[Any]) -> dict[str, Spec]:
    """The declared form of every field of the statistics class ``cls``, in field order.

    A field declared with the helpers of this module gives its declaration
    (inherited fields included); any other field is derived from its
    annotation: an ``NDArray`` is float64 (``"index"`` if integer) of any
    shape, anything else ``None`` (any node, checked by the class).
    """
    cached = _SCHEMAS.get(cls)
    if cached is not None:
        return dict(cached)
    out: dict[str, Spec] = {}
    per = per_class_fields(cls)
    for f in dataclasses.fields(cls):
        declared = f.metadata.get(_KEY)
        out[f.name] = declared[0] if declared is not None else _derived(f, per)
    _SCHEMAS[cls] = out
    return dict(out)


def per_class_fields(cls: type[Any]) -> tuple[str, ...]:
    """Names of the fields of ``cls`` indexed by class along their first axis."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get(_KEY, (None, False))[1])


def _size(dim: str, sizes: dict[str, int]) -> int:
    if dim.isdigit():
        return int(dim)
    return sizes.get(dim, 0)


_DTYPES = {"float64": np.float64, "int64": np.int64, "index": np.intp}


def empty_arrays(cls: type[Any], classes: NDArray[Any], n_features: int) -> dict[str, Any]:
    """The required fields of the empty statistic of ``cls``: zeros of the declared shapes.

    ``"K"`` is the number of classes, ``"p"`` of features and ``"p+1"`` one
    more; any other size (categories, distinct values) is 0, as nothing has
    been observed. Fields with a default (the bounds) are left to the class.
    """
    p = int(n_features)
    sizes = {"K": int(classes.size), "p": p, "p+1": p + 1}
    out: dict[str, Any] = {}
    for name, dtype, dims in _required_fields(cls):
        if dtype == "labels":
            out[name] = classes
        else:
            out[name] = np.zeros(tuple(_size(d, sizes) for d in dims), dtype=_DTYPES[dtype])
    return out


_REQUIRED: dict[type[Any], tuple[tuple[str, str, tuple[str, ...]], ...]] = {}


def _required_fields(cls: type[Any]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """``(name, dtype, dims)`` of each field of ``cls`` without a default (read once per class)."""
    found = _REQUIRED.get(cls)
    if found is None:
        schema = field_schema(cls)
        rows = []
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                continue
            spec = schema[f.name]
            if not isinstance(spec, ArraySpec) or spec.dims is None:
                raise TypeError(f"{cls.__name__}.{f.name} has no declared shape to be empty.")
            rows.append((f.name, spec.dtype, tuple(spec.dims)))
        found = _REQUIRED[cls] = tuple(rows)
    return found
