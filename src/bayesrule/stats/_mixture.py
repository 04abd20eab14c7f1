"""The statistic of mixture discriminant analysis: weighted moments of sub-classes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._bounds import bounds_close
from ._common import (
    Floats as _F,
)
from ._common import (
    StatisticsError,
    arrays_close,
)
from .schema import bound, labels, per_class, shared

__all__ = ["MixtureStats"]


@dataclass(frozen=True, eq=False, repr=False)
class MixtureStats:
    r"""Responsibility-weighted moments of the sub-classes (mixture components) of each class.

    After an EM fit, component ``c`` of class ``k`` holds, over the rows
    ``x_i`` of class ``k`` with sample weights ``w_i`` and responsibilities
    ``r_ic`` (the last E-step's), the weight ``W_c = sum w_i r_ic``, the mean
    ``m_c`` and the centred scatter ``S_c = sum w_i r_ic (z_i - m_c)(z_i - m_c)'``
    of the projected rows ``z_i = B'(x_i - c)``. These are exactly what the
    M-step needs: the mixture's parameters are derived from them
    (:meth:`bayesrule.MixtureDiscriminantAnalysis.from_stats`), with the
    covariance structure and regularisation applied at derivation only.

    The projection (``centre``, orthonormal ``basis``, and the variance
    ``residual_var`` of the data outside it) is part of the statistic: it
    was fitted on the training data and every moment lives in its space.

    Within a fit, one EM iteration is "moments of each block of rows with
    the current model's responsibilities, merged (Chan–Golub–LeVeque,
    component by component), then derived"
    (:func:`~bayesrule.models.mixture.component_moments`,
    :func:`~bayesrule.models.mixture.merge_moments`). Two fitted statistics
    do not merge: the components of separate EM fits do not correspond, and
    their projections differ. ``subtract`` is refused too (a
    responsibility-weighted moment of rows depends on the model that weighted
    them).

    Attributes
    ----------
    classes : (K,) sorted labels
    counts : (K,) int64 rows with positive weight
    weights : (K,) sum of sample weights
    owner : (M,) int64 class index of each component (contiguous per class)
    component_weights : (M,)
    component_means : (M, d)
    component_scatter : (M, d, d)
    centre : (p,)
    basis : (p, d)
        Orthonormal columns: ``z = B'((x - centre) / scale)``.
    scale : (p,)
        The positive scale of each feature the projection divides by (its
        range in the training data; ones without a projection, and in model
        files written before it was recorded).
    reg_covar : (1,)
        The ridge the fit used (a fraction of each class's mean variance, see
        the estimator): what ``reg_covar='auto'`` chose; NaN when unknown (a
        model file written before it was recorded: 'auto' then derives with 0.1).
    shared : (1,) int64
        1 if the components share one covariance (``covariance_type='shared'``,
        or what ``'auto'`` chose), 0 if each has its own; -1 when unknown (a
        model file written before it was recorded: 'auto' then derives full
        covariances).
    residual_var : (1,)
    log_likelihood : (K,)
        ``sum_i w_i log p_k(z_i)`` of each class at the last E-step.
    n_iter : (1,) int64
        EM iterations of the fit (each one pass over the data).
    converged : (1,) int64
        1 if EM met ``tol`` before ``max_iter``.
    n_passes : (1,) int64
        Passes over the data the whole fit took (every EM run of ``n_init``
        and of ``n_components='bic'`` included); 0 when unknown (a model file
        written before it was recorded).
    """

    classes: NDArray[Any] = field(metadata=labels())
    counts: NDArray[np.int64] = field(metadata=per_class("K", dtype="int64", low=0))
    weights: _F = field(metadata=per_class("K", low=0.0))
    owner: NDArray[np.int64] = field(metadata=shared("M", dtype="index", low=0))
    component_weights: _F = field(metadata=shared("M", low=0.0))
    component_means: _F = field(metadata=shared("M", "d"))
    component_scatter: _F = field(metadata=shared("M", "d", "d"))
    centre: _F = field(metadata=shared("p"))
    basis: _F = field(metadata=shared("p", "d"))
    residual_var: _F = field(metadata=shared("1", low=0.0))
    log_likelihood: _F = field(metadata=per_class("K"))
    n_iter: NDArray[np.int64] = field(metadata=shared("1", dtype="int64", low=0))
    converged: NDArray[np.int64] = field(metadata=shared("1", dtype="int64", low=0))
    #: each feature's training range, in the original features (see
    #: ClassStatistic); unknown (NaN) when not given
    lower: _F = field(default=cast(Any, None), kw_only=True, metadata=bound("p"))
    upper: _F = field(default=cast(Any, None), kw_only=True, metadata=bound("p"))
    # later additions, missing from older model files: passes over the data
    # (0: unknown), each feature's scale in the projection (ones), and the
    # ridge the fit used (what reg_covar='auto' chose; NaN: unknown)
    n_passes: NDArray[np.int64] = field(
        default=cast(Any, None),
        kw_only=True,
        metadata=bound("1", dtype="int64", low=0, allow_nonfinite=False),
    )
    scale: _F = field(
        default=cast(Any, None), kw_only=True, metadata=bound("p", low=0.0, allow_nonfinite=False)
    )
    reg_covar: _F = field(default=cast(Any, None), kw_only=True, metadata=bound("1"))
    shared: NDArray[np.int64] = field(
        default=cast(Any, None),
        kw_only=True,
        metadata=bound("1", dtype="int64", low=-1, allow_nonfinite=False),
    )

    def __post_init__(self) -> None:
        p = self.n_features
        for name in ("lower", "upper"):
            value = getattr(self, name)
            value = np.full(p, np.nan) if value is None else np.asarray(value, dtype=np.float64)
            if value.shape != (p,):
                raise StatisticsError(
                    f"{name} must hold one bound per feature ({p}); got shape {value.shape}."
                )
            object.__setattr__(self, name, value)
        passes = np.zeros(1, dtype=np.int64) if self.n_passes is None else self.n_passes
        scale = np.ones(p) if self.scale is None else np.asarray(self.scale, dtype=np.float64)
        if scale.shape != (p,) or not np.all(np.isfinite(scale) & (scale > 0)):
            raise StatisticsError(
                f"scale must hold one positive finite number per feature ({p}); got "
                f"shape {scale.shape}."
            )
        object.__setattr__(self, "scale", scale)
        ridge = np.full(1, np.nan) if self.reg_covar is None else self.reg_covar
        object.__setattr__(self, "reg_covar", np.asarray(ridge, dtype=np.float64).reshape(1))
        shared = np.full(1, -1) if self.shared is None else self.shared
        shared = np.asarray(shared, dtype=np.int64).reshape(1)
        if int(shared[0]) not in (-1, 0, 1):
            raise StatisticsError(
                f"shared must be 1 (one covariance), 0 (one a component) or -1 (unknown); "
                f"got {int(shared[0])}."
            )
        object.__setattr__(self, "shared", shared)
        object.__setattr__(self, "n_passes", np.asarray(passes, dtype=np.int64).reshape(1))

    def with_bounds(self, lower: ArrayLike, upper: ArrayLike) -> MixtureStats:
        """The same statistics with other feature bounds ``lower``, ``upper`` (shape (p,))."""
        return dataclasses.replace(
            self,
            lower=np.asarray(lower, dtype=np.float64),
            upper=np.asarray(upper, dtype=np.float64),
        )

    @property
    def n_features(self) -> int:
        return int(self.centre.size)

    @property
    def n_classes(self) -> int:
        return int(self.classes.size)

    @property
    def n_dims(self) -> int:
        return int(self.basis.shape[1])

    @property
    def n_components(self) -> NDArray[np.int64]:
        """Components of each class, (K,)."""
        return np.bincount(self.owner, minlength=self.n_classes).astype(np.int64)

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> MixtureStats:
        raise StatisticsError(_NEEDS_EM)

    @classmethod
    def from_data(
        cls, X: Any, y: Any, sample_weight: Any = None, *, classes: Any = None
    ) -> MixtureStats:
        raise StatisticsError(_NEEDS_EM)

    def merge(self, other: Any) -> MixtureStats:
        """Refused: the components of two EM fits do not correspond (a ``StatisticsError``).

        Within a fit, the moments of blocks computed with one model's
        responsibilities do merge: that is
        :func:`bayesrule.models.mixture.merge_moments`, which each EM
        iteration uses.
        """
        raise StatisticsError(
            "MixtureStats of two EM fits cannot be merged: their components do not "
            "correspond (and their projections differ); refit on all the data."
        )

    def subtract(self, other: Any) -> MixtureStats:
        raise StatisticsError(
            "MixtureStats cannot be subtracted: the responsibilities that weighted the rows "
            "depend on the whole fit; refit without the rows instead."
        )

    def allclose(self, other: Any, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        if type(other) is not type(self):
            return False
        if not (
            np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and np.array_equal(self.owner, other.owner)
        ):
            return False
        for name in (
            "weights",
            "component_weights",
            "component_means",
            "component_scatter",
            "centre",
            "basis",
            "scale",
            "residual_var",
            "log_likelihood",
        ):
            if not arrays_close(getattr(self, name), getattr(other, name), rtol, atol):
                return False
        return bounds_close(self, other, rtol, atol)

    def __repr__(self) -> str:
        return (
            f"MixtureStats(n_classes={self.n_classes}, n_features={self.n_features}, "
            f"n_dims={self.n_dims}, n_components={self.n_components.tolist()}, "
            f"rows={int(self.counts.sum())})"
        )


_NEEDS_EM = (
    "MixtureStats come from an EM fit, which needs the estimator's settings; use "
    "MixtureDiscriminantAnalysis(...).statistics(X, y)."
)
