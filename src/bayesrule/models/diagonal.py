"""Gaussians with diagonal covariance: the class model of Gaussian naive Bayes and diagonal LDA."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._util.products import rows_dot
from .._util.validation import TooFewRows
from ..stats import class_label
from ._checks import check_nonnegative_float, check_observed, feature_name, present_classes
from ._missing import as_2d_params, finish, split_missing
from ._terms import Terms, matrix_exponent, row_exponent
from ._types import LOG_2PI as _LOG_2PI
from ._types import Floats as _F

__all__ = [
    "DiagonalGaussian",
    "check_class_variances",
    "check_finite_moments",
    "total_variance",
    "variance_epsilon",
]


def total_variance(V: _F, means: _F, m2: _F) -> _F:
    """Per-feature (biased) variance of all the data, from per-class moments, shape (p,).

    ``M2 = sum_k M2_k + sum_k V_k (m_k - m)^2`` with ``m`` the pooled mean: the
    Chan-Golub-LeVeque merge of the classes.
    """
    Vt = V.sum(axis=0)
    safe = np.where(Vt > 0, Vt, 1.0)
    m = (V * means).sum(axis=0) / safe
    M2 = m2.sum(axis=0) + (V * (means - m) ** 2).sum(axis=0)
    return np.where(Vt > 0, M2 / safe, 0.0)


def variance_epsilon(stats: Any, var_smoothing: float, *, per_feature: bool = False) -> Any:
    """The variance added to every class variance.

    ``per_feature=False`` (scikit-learn's rule, kept by :class:`GaussianNB`
    for parity): ``var_smoothing * max_j Var(x_j)``, one float. It mixes the
    features' units: a feature measured in smaller units than the widest one
    gets relatively more smoothing, so the model changes when a column's
    units change.

    ``per_feature=True``: ``var_smoothing * Var(x_j)`` for each feature, an
    array of shape (p,), free of units. A feature constant in all the data
    (variance 0) takes the smallest positive value of the others (0 when
    every feature is constant, which the models then refuse): its class
    means are all equal, so it moves no posterior, only the density.

    ``stats`` is a :class:`bayesrule.stats.DiagonalStats`; the variance is
    that of all the data, from the merged statistics, so that fitting in
    chunks gives the ``epsilon`` of fitting at once.
    """
    var_smoothing = check_nonnegative_float(var_smoothing, "var_smoothing")
    total = total_variance(stats.feature_weights, stats.means, stats.m2)
    if not per_feature:
        return var_smoothing * float(np.max(total, initial=0.0))
    positive = total[total > 0]
    # every feature constant: nothing to be relative to, and nothing to learn (from_stats refuses)
    fallback = float(positive.min()) if positive.size else 0.0
    return var_smoothing * np.where(total > 0, total, fallback)


class DiagonalGaussian:
    r"""Independent normal features, ``x_j ~ N(mean_j, var_j)``, for one or several classes.

    Parameters
    ----------
    mean : array-like of shape (n_features,) or (n_classes, n_features)
    var : array-like of the same shape
        Positive variances.
    center : array-like of shape (n_features,), optional
        Where the expansion below is taken; by default the average class
        mean. It should lie among the data (any point does mathematically).

    ``log_prob`` of a (n, p) matrix is (n,) for one class and (n, n_classes)
    for several, computed for all classes by two matrix products,
    ``-(1/2) [d^2 A' - 2 d B' + c]`` with ``d = x - center``, ``A = 1/var``
    and ``B = (mean - center)/var``. Centring first makes the expansion lose
    no digits on data far from the origin: the rounding error of each term is
    relative to ``(x - center)^2 / var``, not ``x^2 / var``. NaN entries are
    missing and their term is dropped (exact marginalisation).
    """

    def __init__(self, mean: ArrayLike, var: ArrayLike, *, center: ArrayLike | None = None) -> None:
        self._single, (self.mean, self.var) = as_2d_params(mean, var)
        if self.var.shape != self.mean.shape:
            raise ValueError(
                f"var of a DiagonalGaussian must have the shape of mean {self.mean.shape}; "
                f"got {self.var.shape}."
            )
        if np.any(~(self.var > 0)):
            raise ValueError("var of a DiagonalGaussian must be positive.")
        if center is None:
            self.center = self.mean.mean(axis=0)
        else:
            self.center = np.broadcast_to(
                np.asarray(center, dtype=np.float64), self.mean.shape[1:]
            ).copy()
        d = self.mean - self.center
        with np.errstate(over="ignore"):
            self._A = 1.0 / self.var
            self._B = d * self._A
            self._C = d * self._B + np.log(self.var) + _LOG_2PI
        if not (np.all(np.isfinite(self._A)) and np.all(np.isfinite(self._C))):
            raise ValueError(
                "a DiagonalGaussian needs finite means and variances whose ratios "
                "(mean - center)^2 / var and 1 / var stay below the float64 maximum; "
                "rescale the data or add variance (var_smoothing)."
            )
        # Features whose variance is the same in every class (all of them for
        # pooled variances) have the same quadratic term in every class: it
        # cancels from Bayes' rule, and relative_log_prob leaves it out.
        self._shared = np.all(self._A == self._A[0], axis=0)
        self._A_rel = np.where(self._shared, 0.0, self._A)

    @classmethod
    def from_stats(
        cls,
        stats: Any,
        *,
        var_smoothing: float = 1e-9,
        pooled: bool = False,
        ddof: float = 0.0,
        feature_names: Any = None,
        per_feature_smoothing: bool = False,
    ) -> DiagonalGaussian:
        """The normal model of each class with positive weight in ``stats``.

        Parameters
        ----------
        stats : bayesrule.stats.DiagonalStats
        var_smoothing : float, default=1e-9
            Every variance is raised by :func:`variance_epsilon`:
            ``var_smoothing`` times the largest per-feature variance of all
            the data, or each feature's own variance with
            ``per_feature_smoothing=True`` (free of units).
        pooled : bool, default=False
            False: each class its own variances ``M2_kj / (V_kj - ddof)``
            (Gaussian naive Bayes). True: one variance per feature shared by
            the classes, ``sum_k M2_kj / (sum_k V_kj - ddof K_j)`` (diagonal
            LDA), with ``K_j`` the classes observing feature ``j``.
        ddof : float, default=0.0
        feature_names : sequence of str, optional
            Used in error messages.

        Raises
        ------
        ValueError
            If a class never observes a feature, or a variance is not
            positive (naming the feature and class).
        """
        present = present_classes(stats)
        ddof = check_nonnegative_float(ddof, "ddof")
        check_observed(stats.feature_weights, present, stats.classes, feature_names)
        # an overflow of the statistics themselves is named before var_smoothing (a multiple
        # of the largest variance, so infinite too) hides which feature it came from
        check_finite_moments(
            stats.means[present], stats.m2[present], stats.classes[present], names=feature_names
        )
        with np.errstate(over="ignore", invalid="ignore"):
            eps = variance_epsilon(stats, var_smoothing, per_feature=per_feature_smoothing)
        _check_some_variance(stats, var_smoothing, eps, feature_names)
        means = stats.means[present]
        if pooled:
            _check_pooled_weight(stats, present, ddof, feature_names)
            with np.errstate(over="ignore", invalid="ignore"):
                var = stats.pooled_variances(ddof=ddof) + eps
            if np.any(~(var > 0) & ~np.isposinf(var)):
                j = int(np.flatnonzero(~(var > 0) & ~np.isposinf(var))[0])
                raise ValueError(
                    f"feature {feature_name(feature_names, j)!r} has no within-class variance "
                    f"(every class holds a single value in it) and var_smoothing={var_smoothing} "
                    "adds nothing; set var_smoothing > 0."
                )
            var = np.broadcast_to(var, means.shape)
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                var = stats.variances(ddof=ddof)[present] + eps
        check_class_variances(
            means,
            var,
            stats.classes[present],
            var_smoothing=var_smoothing,
            names=feature_names,
            rows=stats.counts[present],
        )
        # centre at the data's mean: the weighted mean of the classes present
        V = stats.feature_weights[present]
        center = (V * means).sum(axis=0) / V.sum(axis=0)
        return cls(means, var, center=center)

    def _log_prob(self, X: ArrayLike, A: _F) -> _F:
        """``-(1/2) [d^2 A' - 2 d B' + c]`` with ``d = x - center``, shape (n, n_classes)."""
        with np.errstate(invalid="ignore", over="ignore"):
            Xc = np.asarray(X, dtype=np.float64) - self.center
            # Optimistic: a NaN shows up in the products; only then split it out.
            missing = None
            X0 = Xc
            quadratic = bool(np.any(A))
            out = rows_dot(X0 * X0, A) if quadratic else np.zeros((Xc.shape[0], len(self)))
            out -= 2.0 * rows_dot(X0, self._B)
            if not np.all(np.isfinite(out)) and np.isnan(np.min(Xc)):
                X0, missing = split_missing(Xc)
                out = rows_dot(X0 * X0, A) if quadratic else np.zeros_like(out)
                out -= 2.0 * rows_dot(X0, self._B)
            out += self._C.sum(axis=1)
            if missing is not None:
                out -= missing @ self._C.T
            out *= -0.5
        return out

    def log_prob(self, X: ArrayLike) -> _F:
        """Log density of each row, shape (n,) or (n, n_classes).

        For rows far from every class the terms overflow (``-inf`` or NaN);
        :meth:`log_prob_terms` gives the same values without overflow.
        """
        return finish(self._log_prob(X, self._A), self._single)

    def relative_log_prob(self, X: ArrayLike) -> _F:
        """``log_prob`` less the quadratic terms of the features whose variance all classes share.

        That part is the same for every class, so Bayes' rule does not need
        it; leaving it out saves a product (diagonal LDA) and keeps the
        digits of the linear terms for rows far from the data. Shape
        (n, n_classes).
        """
        return self._log_prob(X, self._A_rel)

    def log_prob_terms(self, X: ArrayLike) -> Terms:
        """``log_prob`` as scaled terms that cannot overflow (see :mod:`bayesrule.models._terms`).

        With ``d = (x - center) 2^-E`` (every entry below 2 in magnitude),
        ``log p_k(x) = 2^2E (-1/2) d^2 A_k' + 2^E d B_k' - (1/2) sum_j C_kj``;
        the quadratic part of the shared-variance features is its own term,
        with equal columns.
        """
        X = np.asarray(X, dtype=np.float64)
        E = np.maximum(row_exponent(X), matrix_exponent(self.center))
        with np.errstate(under="ignore"):
            D = np.ldexp(X, -E) - np.ldexp(self.center, -E)
        D, missing = split_missing(D)
        D2 = D * D
        eA, eB = matrix_exponent(self._A), matrix_exponent(self._B)
        A = np.ldexp(self._A, -eA)
        shared = np.broadcast_to(
            -0.5 * (D2[:, self._shared] @ A[0, self._shared])[:, None], (X.shape[0], len(self))
        )
        own = -0.5 * (D2[:, ~self._shared] @ A[:, ~self._shared].T)
        linear = D @ np.ldexp(self._B, -eB).T
        const = np.broadcast_to(-0.5 * self._C.sum(axis=1), own.shape).copy()
        if missing is not None:
            const += 0.5 * (missing @ self._C.T)
        return [(shared, 2 * E + eA), (own, 2 * E + eA), (linear, E + eB), (const, 0)]

    @property
    def covariance(self) -> _F:
        """The diagonal covariance: (n_features, n_features), or one per class (K, p, p)."""
        cov = self.var[:, :, None] * np.eye(self.var.shape[1])
        return cov[0] if self._single or len(self) == 1 else cov

    def __len__(self) -> int:
        return int(self.mean.shape[0])

    def __getitem__(self, k: int) -> DiagonalGaussian:
        return DiagonalGaussian(self.mean[k], self.var[k])

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows from a single-class model."""
        return self.mean[0] + np.sqrt(self.var[0]) * rng.standard_normal((n, self.var.shape[1]))

    def __repr__(self) -> str:
        k, p = self.mean.shape
        return f"DiagonalGaussian(n_classes={k}, n_features={p})"


def _overflow_message(noun: str, name: Any, label: Any) -> str:
    return (
        f"{noun} {name!r} has a mean or variance that is not finite in class {label!r}: its "
        "values are so large that their squared deviations overflow float64 (or the sample "
        "weights are so small that their sums underflow); rescale X or sample_weight."
    )


def check_finite_moments(
    means: _F, m2: _F, classes: NDArray[Any], *, names: Any = None, noun: str = "feature"
) -> None:
    """ValueError naming the first feature and class whose mean or sum of squared deviations
    overflowed (``means`` and ``m2`` of shape (n_classes, n_features), over ``classes``).

    Checked on the statistics, before any smoothing: a variance that overflowed is
    infinite (or NaN, from ``inf - inf``), and ``var_smoothing``'s multiple of the
    largest variance would then make every variance infinite, or a NaN pass for a
    variance of zero."""
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(means) & np.isfinite(m2))
    if bad.any():
        k, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(_overflow_message(noun, feature_name(names, j), class_label(classes, k)))


def check_class_variances(
    means: _F,
    var: _F,
    classes: NDArray[Any],
    *,
    var_smoothing: float,
    names: Any = None,
    noun: str = "feature",
    rows: NDArray[np.int64] | None = None,
) -> None:
    """ValueError unless every class's variances are positive and its moments finite.

    ``means`` and ``var`` have shape (n_classes, n_features), over the
    ``classes`` modelled (those with weight). A variance that is 0 (or NaN)
    after ``var_smoothing`` was added, and a mean or variance that overflowed,
    are named by the ``noun`` (``"feature"``, ``"column"``) with its name in
    ``names`` (its index without them) and the class; ``rows``, the row count
    of each class, adds "or too few rows" to the first message.
    """
    zero = ~(var > 0) & ~np.isposinf(var)
    if np.any(zero):
        k, j = (int(v[0]) for v in np.nonzero(zero))
        few = f" (or too few rows: {_samples(rows[k])})" if rows is not None else ""
        raise ValueError(
            f"{noun} {feature_name(names, j)!r} has zero variance{few} in class "
            f"{class_label(classes, k)!r} and var_smoothing={var_smoothing} adds nothing; "
            "set var_smoothing > 0."
        )
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(var) & np.isfinite(means))
    if bad.any():
        k, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(_overflow_message(noun, feature_name(names, j), class_label(classes, k)))
    if rows is not None:
        # a class of one row has no variance of its own: the smoothing alone, which for
        # data of tiny scale (1e-150) is so small that its reciprocal overflows. More
        # rows of the class mend it (an update waits for them, as for a first row)
        with np.errstate(divide="ignore", over="ignore"):
            tiny = ~np.isfinite(1.0 / var) & (np.asarray(rows)[:, None] <= 1)
        if tiny.any():
            k, j = (int(v[0]) for v in np.nonzero(tiny))
            raise TooFewRows(
                f"class {class_label(classes, k)!r} has {_samples(rows[k])}: the variance of "
                f"{noun} {feature_name(names, j)!r} in it is var_smoothing={var_smoothing} "
                f"times the data's variance alone, {float(var[k, j]):.3g}, whose reciprocal "
                "overflows float64; give the class more rows, or rescale X."
            )


def _check_some_variance(stats: Any, var_smoothing: float, eps: Any, names: Any) -> None:
    """ValueError where no feature varies in all the data, so var_smoothing cannot help.

    The smoothing is a fraction of the data's variance (the largest, or each
    feature's own), which is 0 when every feature is constant: raising
    ``var_smoothing`` then adds nothing, and no Gaussian has a width.
    """
    if var_smoothing > 0 and not np.any(np.asarray(eps) > 0):
        total = total_variance(stats.feature_weights, stats.means, stats.m2)
        if not np.any(total > 0):
            p = int(np.size(total))
            which = "the only feature" if p == 1 else f"every one of the {p} features"
            raise TooFewRows(
                f"X has no variance ({_samples(stats.counts.sum())}): {which} holds a single "
                "value in every row, so a "
                "Gaussian has no width to fit and var_smoothing (a fraction of the data's "
                f"variance, here 0) adds nothing; the model needs a feature that varies."
            )


def _check_pooled_weight(stats: Any, present: NDArray[np.bool_], ddof: float, names: Any) -> None:
    """ValueError where the rows' total weight is too small for the unbiased pooled variance.

    The pooled variance of a feature divides by its total weight less
    ``ddof`` per class; weights count as rows, so rows of small weight (a
    total of 1.5 over 3 classes) leave nothing to divide by, whatever the
    features hold.
    """
    if ddof <= 0:
        return
    V = stats.feature_weights[present]
    denom = V.sum(axis=0) - ddof * (V > 0).sum(axis=0)
    if np.any(denom <= 0):
        j = int(np.flatnonzero(denom <= 0)[0])
        k = int((V[:, j] > 0).sum())
        raise TooFewRows(
            f"the rows' total weight in feature {feature_name(names, j)!r} is "
            f"{float(V[:, j].sum()):.6g} over {k} classes ({_samples(stats.counts.sum())}): "
            f"the unbiased pooled variance divides by the total weight less {ddof:g} per "
            "class, which leaves nothing; weights count as rows, so give weights that sum "
            "to more than the number of classes, or fit the biased variance (bias=True)."
        )


def _samples(n: Any) -> str:
    """``"1 sample"``, ``"5 samples"``: the count in a message."""
    n = int(n)
    return f"{n} sample" + ("" if n == 1 else "s")
