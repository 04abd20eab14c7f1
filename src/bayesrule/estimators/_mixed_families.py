"""The class models of MixedNB's columns, one family per kind, from the kinds' statistics.

Two choices differ from the single-kind estimators, both so that MixedNB
does not depend on the units of its columns, nor break on a class that
never observes a column:

* a 'gaussian' column's variances are raised by ``var_smoothing`` times
  that column's own variance (GaussianNB, after scikit-learn, uses the
  largest variance of all its features, which ties every feature to the
  units of the widest one);
* a class that never observes a column (missing in each of its rows) is
  given the column's distribution over all classes: the column then
  carries no evidence for or against that class, whatever its units, and
  a warning names the class and the column.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..models.diagonal import DiagonalGaussian, total_variance
from ..stats._common import label_repr

__all__ = ["gaussian_family", "pooled_where_unobserved"]

_F = NDArray[np.float64]


def _unobserved(part: Any) -> NDArray[np.bool_]:
    """(n_classes, n_features): a class with data that never observes the feature."""
    return np.asarray((part.feature_weights <= 0) & (part.weights > 0)[:, None])


def pooled_where_unobserved(kind: str, part: Any, names: list[Any]) -> Any:
    """``part`` with each class's unobserved features given the feature's pooled statistics.

    ``part`` is the statistic of the columns of one ``kind`` (see
    :data:`bayesrule.stats._mixed.KIND_STATS`); ``names`` names its columns.
    The statistics themselves are unchanged (this is a derivation step, so
    that merging and forgetting keep their laws). Warns once per class and
    column; raises a ValueError for a column observed in no row at all.
    """
    gone = _unobserved(part)
    if not gone.any():
        return part
    V = part.feature_weights
    empty = ~(V > 0).any(axis=0)
    if empty.any():
        j = int(np.flatnonzero(empty)[0])
        raise ValueError(
            f"column {names[j]!r} is missing (NaN) in every row; MixedNB cannot model it. "
            "Drop the column."
        )
    for k, j in zip(*np.nonzero(gone), strict=True):
        warnings.warn(
            f"column {names[int(j)]!r} is missing in every row of class "
            f"{label_repr(part.classes[int(k)])}: it carries no evidence for that class "
            "(the class is given the column's distribution over all classes).",
            UserWarning,
            stacklevel=6,
        )
    if kind == "gaussian":
        Vt = V.sum(axis=0)
        mean = (V * part.means).sum(axis=0) / Vt
        m2 = part.m2.sum(axis=0) + (V * (part.means - mean) ** 2).sum(axis=0)
        return dataclasses.replace(
            part,
            feature_weights=np.where(gone, Vt, V),
            means=np.where(gone, mean, part.means),
            m2=np.where(gone, m2, part.m2),
        )
    if kind in ("bernoulli", "poisson"):
        return dataclasses.replace(
            part,
            feature_weights=np.where(gone, V.sum(axis=0), V),
            sums=np.where(gone, part.sums.sum(axis=0), part.sums),
        )
    if kind == "categorical":
        cc = part.category_counts
        filled = np.where(gone[:, :, None], cc.sum(axis=0)[None], cc)
        return dataclasses.replace(part, category_counts=filled)
    # kernel: the weights of the feature's stored values, over all classes
    W = part.value_weights
    fill = gone[:, part.value_features]  # (K, U)
    return dataclasses.replace(part, value_weights=np.where(fill, W.sum(axis=0)[None], W))


def gaussian_family(part: Any, var_smoothing: float, names: list[Any]) -> DiagonalGaussian:
    """The normal model of each class with data, each column smoothed by its own variance.

    ``var_kj = M2_kj / V_kj + var_smoothing * Var(x_j)``, with ``Var(x_j)``
    the (biased) variance of column ``j`` over all classes: rescaling a
    column rescales its variances and leaves every prediction as it was. A
    column constant in all the training data (to 1e-12 of its value, the
    rounding of its class means) gets variance 1 in every class: its term
    is then the same for every class and has no say.
    """
    present = np.asarray(part.weights > 0)
    total = total_variance(part.feature_weights, part.means, part.m2)
    eps = float(var_smoothing) * total
    means = part.means[present]
    with np.errstate(over="ignore", invalid="ignore"):
        var = part.variances(ddof=0)[present] + eps
    # constant up to the rounding of the class means: no variance to be relative to
    V_all = part.feature_weights
    center_all = (V_all * part.means).sum(axis=0) / np.maximum(V_all.sum(axis=0), 1e-300)
    var[:, total <= (1e-12 * np.abs(center_all)) ** 2] = 1.0
    if np.any(~(var > 0) & ~np.isposinf(var)):
        k, j = (int(v[0]) for v in np.nonzero(~(var > 0) & ~np.isposinf(var)))
        raise ValueError(
            f"column {names[j]!r} has zero variance in class "
            f"{label_repr(part.classes[present][k])} and var_smoothing={var_smoothing} adds "
            "nothing; set var_smoothing > 0."
        )
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(var) & np.isfinite(means))
    if bad.any():
        k, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(
            f"column {names[j]!r} has a mean or variance that is not finite in class "
            f"{label_repr(part.classes[present][k])}: its values are so large that their "
            "squared deviations overflow float64 (or the sample weights are so small that "
            "their sums underflow); rescale X or sample_weight."
        )
    V = part.feature_weights[present]
    center = (V * means).sum(axis=0) / V.sum(axis=0)
    return DiagonalGaussian(means, var, center=center)
