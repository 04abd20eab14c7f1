"""The estimator's declared specification, seen from code written before it.

The class flags (``_stats_type``, ``_allow_nan``, ``_min_classes``, ...) were
replaced by one :class:`~.seam.InputSpec` per class, ``spec``. Here:
read-only aliases of its fields under the old names (:class:`FromSpec`), the
folding of an older subclass's flags into its ``spec`` (:func:`fold_flags`),
and the check of a :class:`~.seam.Schema` given with statistics.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .seam import Schema

__all__ = ["FLAGS", "FromSpec", "checked_schema", "fold_flags"]


class FromSpec:
    """A read-only alias of one field of the class's ``spec`` (``_min_classes`` -> ``spec.min_classes``).

    For code not yet reading ``spec`` (or ``input_spec()``); the declaration
    is ``spec`` alone, and assigning an alias is refused.
    """

    def __init__(self, field: str) -> None:
        self.field = field

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        cls = owner if owner is not None else type(obj)
        return getattr(cls.spec, self.field)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"declare {self.field} in the class's spec, not on an instance.")


#: the class flags the specification replaced: flag -> field of InputSpec
FLAGS = {
    "_stats_type": "statistic",
    "_allow_nan": "allow_nan",
    "_min_classes": "min_classes",
    "_min_samples": "min_samples",
    "_strict_priors": "strict_priors",
    "_deferred_finite_check": "deferred_finite_check",
    "_sparse": "sparse",
    "_positive": "positive",
    "_values": "values",
    "_sign_from_stats": "sign_from_stats",
    "_inf_reaches_results": "inf_reaches_results",
    "_input_dtype_attrs": "input_dtype_attrs",
    "_input_dtype_outputs": "input_dtype_outputs",
    "_infers_from_data": "infers_from_data",
    "_multi_pass": "multi_pass",
    "_poor_score": "poor_score",
}


def fold_flags(cls: Any) -> None:
    """Fold the class flags a subclass declares (``_stats_type = ...``) into its ``spec``."""
    old = {
        flag: value
        for flag, value in list(vars(cls).items())
        if flag in FLAGS and not isinstance(value, FromSpec)
    }
    if not old:
        return
    warnings.warn(
        f"{cls.__name__} declares {', '.join(sorted(old))}: declare "
        "spec = InputSpec(...) (bayesrule.estimators.InputSpec) instead; the class "
        "flags are read into it for now.",
        DeprecationWarning,
        stacklevel=3,  # the class statement
    )
    for flag in old:
        delattr(cls, flag)
    cls.spec = cls.spec.replace(**{FLAGS[flag]: value for flag, value in old.items()})


def checked_schema(schema: Any, stats: Any) -> Schema:
    """``schema`` as a :class:`Schema` that agrees with the statistics' feature count."""
    parts = tuple(schema)
    if not 1 <= len(parts) <= 3:
        raise ValueError(
            f"schema must be a Schema (n_features, feature_names, dtype); got {schema!r}."
        )
    n, names, *rest = (*parts, None) if len(parts) == 1 else parts
    if int(n) != stats.n_features:
        raise ValueError(
            f"the schema has {int(n)} features, but the statistics have {stats.n_features}."
        )
    if names is not None:
        names = np.asarray([str(v) for v in np.ravel(names)], dtype=object)
        if names.size != stats.n_features:
            raise ValueError(
                f"the schema names {names.size} features, but the statistics have "
                f"{stats.n_features}."
            )
    dtype = np.dtype(rest[0]) if rest and rest[0] is not None else np.dtype(np.float64)
    if dtype.kind != "f":
        raise ValueError(f"the schema's dtype must be a floating dtype; got {dtype}.")
    return Schema(int(n), names, dtype)
