"""Checks shared by the ``from_stats`` derivations of the naive Bayes families.

Every family validates the hyperparameters it uses here, so that an
estimator and :class:`bayesrule.MixedNB` (which composes the families per
column) raise the same errors, naming the parameter and, when the caller
passes ``feature_names``, the feature.
"""

from __future__ import annotations

import warnings
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._util.validation import TooFewRows
from ..stats import class_label
from ._types import Floats as _F

__all__ = [
    "check_alpha",
    "check_nonnegative_float",
    "check_observed",
    "feature_name",
    "present_classes",
    "smoothing",
]


def feature_name(names: Any, j: int) -> Any:
    """The name of feature ``j``: ``names[j]``, or ``j`` itself when there are no names."""
    return j if names is None else names[j]


def present_classes(stats: Any) -> NDArray[np.bool_]:
    """Which classes of ``stats`` hold positive weight (those a family models)."""
    present = np.asarray(stats.weights > 0)
    if not present.any():
        raise ValueError("the statistics hold no class with positive weight; nothing to model.")
    return present


def check_observed(
    V: _F, present: NDArray[np.bool_], classes: NDArray[Any], names: Any = None
) -> None:
    """Raise a ValueError naming the feature and class when a class never observes a feature.

    ``V[k, j]`` is the weight of the rows of class ``k`` where feature ``j``
    is observed (not NaN); only the ``present`` classes are checked. The
    error is :class:`~bayesrule._util.validation.TooFewRows`: ``fit`` refuses
    such data, while an update (``partial_fit`` of a first row with a NaN)
    keeps its statistics until later rows observe the feature.
    """
    bad = (V <= 0) & present[:, None]
    if bad.any():
        k, j = (int(v[0]) for v in np.nonzero(bad))
        raise TooFewRows(
            f"feature {feature_name(names, j)!r} is missing (NaN) in every row of class "
            f"{class_label(classes, k)!r}; its class model cannot be estimated. Drop the feature or "
            "give the class some observed values."
        )


def check_nonnegative_float(value: Any, name: str) -> float:
    """``value`` as a finite float >= 0, else a ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a non-negative float; got {value!r}.")
    v = float(value)
    if not (np.isfinite(v) and v >= 0):
        raise ValueError(f"{name} must be a non-negative float; got {value!r}.")
    return v


def check_alpha(alpha: Any, force_alpha: bool, n_features: int, names: Any = None) -> Any:
    """``alpha`` as a float or a (n_features,) array of non-negative values.

    Unless ``force_alpha``, values below 1e-10 are raised to 1e-10 with a
    warning (scikit-learn's rule: an alpha of 0 gives probabilities 0 and 1).
    """
    if isinstance(alpha, (bool, np.bool_)):
        raise ValueError(f"alpha must be a non-negative float or array-like; got {alpha!r}.")
    if isinstance(alpha, Real):
        a: Any = float(alpha)
        if not (np.isfinite(a) and a >= 0):
            raise ValueError(f"alpha must be non-negative; got {alpha!r}.")
    else:
        try:
            a = np.asarray(alpha, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"alpha must be a non-negative float or array-like; got {alpha!r}."
            ) from None
        if a.shape != (n_features,):
            got = a.shape[0] if a.ndim == 1 else a.shape
            raise ValueError(
                "When alpha is an array, it should contains `n_features`. Got "
                f"{got} elements instead of {n_features}. alpha must be a float or an array "
                f"of one value per feature ({n_features}); got shape {a.shape}."
            )
        bad = ~(np.isfinite(a) & (a >= 0))
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise ValueError(
                "All values in alpha must be greater than 0. alpha must be non-negative; "
                f"got {a[j]} for feature {feature_name(names, j)!r}."
            )
    if np.min(a) < 1e-10 and not force_alpha:
        warnings.warn(
            "alpha too small will result in numeric errors, setting alpha = 1.0e-10. "
            "Use `force_alpha=True` to keep alpha unchanged.",
            UserWarning,
            stacklevel=4,
        )
        return np.maximum(a, 1e-10)
    return a


def smoothing(
    stats: Any, alpha: Any, force_alpha: bool, names: Any = None, *, observed: bool = True
) -> tuple[NDArray[np.bool_], Any]:
    """The start of a smoothed count model's ``from_stats``: ``(present, alpha)``.

    The classes with weight (:func:`present_classes`), ``alpha`` checked
    (:func:`check_alpha`) and, with ``observed``, every feature observed in
    every such class (:func:`check_observed`, on ``stats.feature_weights``).
    """
    present = present_classes(stats)
    a = check_alpha(alpha, force_alpha, stats.n_features, names)
    if observed:
        check_observed(stats.feature_weights, present, stats.classes, names)
    return present, a
