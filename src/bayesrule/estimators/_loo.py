"""Leave-one-out posteriors of the Gaussian discriminant analyses, from one fit.

Leaving row ``i`` (class ``g``, weight ``w``) out of the statistics changes
only class ``g``: with ``d = x_i - m_g`` and ``W_g`` the class's weight, its
mean moves to ``m_g - w d / (W_g - w)`` (so ``x_i - m_g' = rho d``,
``rho = W_g / (W_g - w)``) and its scatter loses the rank-one term
``c d d'``, ``c = w rho`` (Chan's update run backwards). The covariance of
the refitted model is then, for every setting with a closed form,

    R_i = alpha_i Sigma + gamma_i I - beta_i d d'

with ``Sigma`` the full-data covariance (LDA's pooled one, QDA's class one)
before shrinkage and regularisation: the divisor's change is a factor
``s_i`` of ``Sigma``, a float ``shrinkage`` adds the trace's change to
``gamma_i``, and ``reg_param`` adds ``r I``. In the eigenbasis of ``Sigma``,
``B_i = alpha_i Sigma + gamma_i I`` is diagonal, and Sherman-Morrison and
the matrix determinant lemma give every Mahalanobis distance and
log-determinant under ``R_i`` from a few ``(n, p)`` arrays: no refit, no
Python loop over rows.

A row whose closed form could disagree with a refit — where leaving it out
brings the covariance near the ``tol`` at which the refit would call it
singular (or drop a direction), or leaves a class too few rows — is refitted
exactly (``stats.subtract`` of that row, then the usual derivation), and a
refit that fails raises its error, naming the row and its class.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone

from ..stats import as_classes, encode
from ._base import _log_softmax

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))

#: A row is refitted unless its lower bound on the smallest eigenvalue of the
#: refitted covariance's correlation matrix exceeds the threshold of ``tol``
#: (``tol**2`` for LDA's rank, ``tol`` for QDA's regularity) by this factor
#: (the bound is proven; the factor covers the rounding of the eigenvalues).
_MARGIN = 2.0

#: More exact refits than this warn (each is a derivation of the model).
_WARN_REFITS = 1000


def _correlation_min(cov: _F) -> float:
    """Smallest eigenvalue of the correlation matrix of ``cov`` (0 if singular)."""
    var = np.diag(cov)
    if var.min() <= 0:
        return 0.0
    s = np.sqrt(var)
    return max(float(np.linalg.eigvalsh(cov / np.outer(s, s))[0]), 0.0)


def _min_bound(lam: _F, var: _F, alpha: _F, gamma: _F, kappa: float) -> _F:
    """A lower bound on the smallest correlation eigenvalue of ``alpha Sigma + gamma I``.

    It is at least that of ``Sigma`` (``kappa``, at most 1: with ``D`` the
    variances, ``alpha Sigma + gamma I >= alpha kappa D + gamma I``), and at
    least ``lmin(B) / max diag(B)``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = (alpha * lam[0] + gamma) / (alpha * var.max() + gamma)
    return np.maximum(np.nan_to_num(lo), kappa)


def _shift_terms(
    s: _F, f: _F, d2: _F, trace: float, p: int, shrinkage: float, reg: float
) -> tuple[_F, _F, _F]:
    """``alpha, gamma, beta`` of ``R = alpha Sigma + gamma I - beta d d'`` for each row.

    The downdated covariance is ``s (Sigma - f d d')``; a float shrinkage
    ``a`` blends it with its trace over ``p`` times ``I``; ``reg_param``
    ``r`` with ``I``.
    """
    a, r = shrinkage, reg
    alpha = (1.0 - r) * (1.0 - a) * s
    gamma = (1.0 - r) * a * s * np.maximum(trace - f * d2, 0.0) / p + r
    beta = (1.0 - r) * (1.0 - a) * s * f
    return alpha, gamma, beta


def lda_rows(est: Any, stats: Any, X: _F, yi: NDArray[np.intp], w: _F) -> tuple[_F, Any] | None:
    """LDA's leave-one-out log posteriors up to a per-row constant, and the rows to refit.

    ``est`` is the LDA fitted on ``stats`` (all rows); ``yi`` the class index
    of each row. Returns ``(jll, refit)``: ``jll`` of shape (n, K), ``-inf``
    for a class without data once the row is out; ``refit`` a boolean mask.
    """
    n, p = X.shape
    if isinstance(est.shrinkage, str) or est.reduced_rank or est._model.rank < p:
        return None  # the refit's intensities, directions or rank change with the row
    K = stats.n_classes
    ddof = est._ddof()
    a = 0.0 if est.shrinkage is None else float(est.shrinkage)
    present = stats.weights > 0
    Kp = int(present.sum())
    N = float(stats.weights.sum())
    Wg, cg = stats.weights[yi], stats.counts[yi]
    vanish = (w > 0) & (cg == 1)
    nu = N - ddof * Kp
    nu_out = N - w - ddof * (Kp - vanish)
    Sigma = stats.pooled_covariance(ddof)
    lam, V = np.linalg.eigh(Sigma)
    centre = est._model.centre
    Y = (X - centre) @ V
    M = (stats.means - centre) @ V
    D = Y - M[yi]
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(vanish, 1.0, Wg / (Wg - w))
        c = np.where(vanish, 0.0, w * rho)
        s = nu / nu_out
    f = c / nu
    alpha, gamma, beta = _shift_terms(
        s, f, np.einsum("ij,ij->i", D, D), float(np.trace(Sigma)), p, a, 0.0
    )
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = 1.0 / (alpha[:, None] * lam + gamma[:, None])
        q = np.einsum("ij,ij,ij->i", D, D, inv)
        phi = 1.0 - beta * q
        jll = np.full((n, K), -np.inf)
        for k in np.flatnonzero(present):
            Dk = Y - M[k]
            G = np.einsum("ij,ij,ij->i", Dk, Dk, inv)
            e = np.einsum("ij,ij,ij->i", D, Dk, inv)
            own = yi == k
            G[own], e[own] = rho[own] ** 2 * q[own], rho[own] * q[own]
            jll[:, k] = -0.5 * (G + beta * e * e / phi)
        jll[vanish, yi[vanish]] = -np.inf
        # R = B - beta d d' >= phi B, and its variances are at most B's: the
        # smallest correlation eigenvalue of R is at least phi times B's
        bound = phi**2 * _min_bound(lam, np.diag(Sigma), alpha, gamma, _correlation_min(Sigma))
    jll += _loo_log_priors(est, stats, yi, w, vanish)
    refit = ~(nu_out > 0) | ~(phi > 0) | ~(bound > _MARGIN * float(est.tol) ** 2)
    refit |= np.isnan(jll).any(axis=1) | np.isposinf(jll).any(axis=1)
    return jll, refit


def qda_rows(est: Any, stats: Any, X: _F, yi: NDArray[np.intp], w: _F) -> tuple[_F, Any] | None:
    """QDA's leave-one-out joint log likelihoods, and the rows to refit (see :func:`lda_rows`).

    Only the row's own class changes: the other classes' log densities are
    the fitted model's.
    """
    n, p = X.shape
    if isinstance(est.shrinkage, str):
        return None  # the estimated intensities change with the row
    ddof = est._ddof()
    a = 0.0 if est.shrinkage is None else float(est.shrinkage)
    r = float(est.reg_param)
    present = stats.weights > 0
    cg = stats.counts[yi]
    vanish = (w > 0) & (cg == 1)
    jll = np.array(est._class_log_density(X), dtype=float)
    refit = np.zeros(n, dtype=bool)
    for k in np.flatnonzero(present):
        rows = np.flatnonzero((yi == k) & ~vanish)
        if rows.size == 0:
            continue
        nu = float(stats.weights[k]) - ddof
        Sigma = stats.scatter[k] / nu
        lam, V = np.linalg.eigh(Sigma)
        wk = w[rows]
        Wk = float(stats.weights[k])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            rho = Wk / (Wk - wk)
            nu_out = Wk - wk - ddof
            s = nu / nu_out
            f = wk * rho / nu
            Yk = (X[rows] - stats.means[k]) @ V
            alpha, gamma, beta = _shift_terms(
                s, f, np.einsum("ij,ij->i", Yk, Yk), float(np.trace(Sigma)), p, a, r
            )
            den = alpha[:, None] * lam + gamma[:, None]
            q = np.einsum("ij,ij->i", Yk * Yk, 1.0 / den)
            phi = 1.0 - beta * q
            logdet = np.sum(np.log(den), axis=1) + np.log(phi)
            jll[rows, k] = -0.5 * (rho**2 * q / phi + logdet + p * _LOG_2PI)
            bound = phi**2 * _min_bound(lam, np.diag(Sigma), alpha, gamma, _correlation_min(Sigma))
        bad = ~(nu_out > 0) | ~(phi > 0) | ~(bound > _MARGIN * float(est.tol))
        # QDA refuses a class left with one row (of weight below 2): the refit says so
        bad |= (cg[rows] == 2) & (wk > 0)
        refit[rows] = bad | ~np.isfinite(jll[rows, k])
    jll[vanish, yi[vanish]] = -np.inf
    jll[:, ~present] = -np.inf
    jll += _loo_log_priors(est, stats, yi, w, vanish)
    return jll, refit


def _loo_log_priors(est: Any, stats: Any, yi: NDArray[np.intp], w: _F, vanish: Any) -> _F:
    """Log priors of each row's refit, (n, K): fixed ``priors``, or re-estimated proportions."""
    n, K = yi.size, stats.n_classes
    if est.priors is not None:
        out = np.broadcast_to(est._log_priors(), (n, K)).copy()
    else:
        weights = np.broadcast_to(stats.weights, (n, K)).copy()
        weights[np.arange(n), yi] -= w
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.log(np.maximum(weights, 0.0) / (float(stats.weights.sum()) - w)[:, None])
    out[vanish, yi[vanish]] = -np.inf
    return out


def leave_one_out(
    est: Any, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None, closed_form: Any
) -> tuple[NDArray[Any], _F]:
    """Classes and leave-one-out log posteriors (n, K) of ``est``'s model on ``(X, y)``.

    ``closed_form(full, stats, Xv, yi, w)`` returns ``(jll, refit)`` or None
    when the setting has no closed form (every row is then refitted).
    """
    est._validate_params()
    if getattr(est, "covariance_estimator", None) is not None:
        raise ValueError(
            "leave-one-out posteriors are computed from the statistics, and "
            "covariance_estimator needs the rows of every refit; set covariance_estimator=None "
            "(use shrinkage instead)."
        )
    Xv, y_arr, w = est._validate_fit_input(X, y, sample_weight, reset=True)
    classes = as_classes(y_arr)
    stats = est._stats_from(Xv, y_arr, w, classes)
    schema = est._schema(X, Xv.shape[1], Xv.dtype)
    if classes.size < est._min_classes:
        raise ValueError(
            f"{type(est).__name__} needs at least {est._min_classes} classes; y has "
            f"{classes.size} ({classes.tolist()})."
        )
    full = clone(est)
    full._install(stats, schema=schema)
    Xf = np.asarray(Xv, dtype=np.float64)
    yi = encode(y_arr, stats.classes)
    result = closed_form(full, stats, Xf, yi, w)
    if result is None:
        jll = np.empty((Xf.shape[0], stats.n_classes))
        refit = np.ones(Xf.shape[0], dtype=bool)
    else:
        jll, refit = result
    logp = _log_softmax(jll)
    if refit.sum() > _WARN_REFITS:
        why = (
            "this setting has no closed form"
            if result is None
            else "their removal brings a covariance near tol"
        )
        warnings.warn(
            f"leave-one-out: {int(refit.sum())} rows are refitted one by one ({why}; see "
            f"{type(est).__name__}.loo_predict_log_proba): {int(refit.sum())} derivations "
            "of the model. A float shrinkage or reg_param has a closed form.",
            UserWarning,
            stacklevel=3,
        )
    for i in np.flatnonzero(refit).tolist():
        logp[i] = _refit_row(full, est, stats, Xv, y_arr, w, i, schema)
    return stats.classes, logp


def _refit_row(full: Any, est: Any, stats: Any, Xv: Any, y: Any, w: _F, i: int, schema: Any) -> _F:
    """Log posteriors of row ``i`` from the model refitted without it (statistics downdate)."""
    row = type(stats).from_data(Xv[i : i + 1], y[i : i + 1], w[i : i + 1], classes=stats.classes)
    label = y[i : i + 1].tolist()[0]
    try:
        rest = stats.subtract(row)
        model = clone(est)
        model._install(rest, schema=schema)
        return np.asarray(model.predict_log_proba(Xv[i : i + 1])[0], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(
            f"leaving out row {i} (class {label!r}) leaves data no model can be fitted to: {exc}"
        ) from exc


class LeaveOneOutMixin:
    """``loo_predict_log_proba``, ``loo_predict_proba`` and ``loo_predict`` (MASS's ``CV=TRUE``)."""

    #: ``(full, stats, X, yi, w) -> (jll, refit)`` or None; see :func:`lda_rows`
    _loo_rows: Any = None

    def loo_predict_log_proba(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> _F:
        """Leave-one-out log posteriors: row ``i`` under the model fitted without it.

        Equal (to rounding) to ``n`` refits, ``clone(est).fit(X[others],
        y[others]).predict_log_proba(X[i])``, computed from one pass over
        the data: leaving a row out is a rank-one change of one class's
        statistics, and Sherman-Morrison and the matrix determinant lemma
        give the refitted model's posteriors for every row at once (see
        :mod:`bayesrule.estimators._loo`). The estimator is not changed and
        need not be fitted; its hyperparameters are used.

        What a refit means:

        * ``priors=None``: each refit re-estimates the class proportions
          without the row (a literal refit). MASS's ``lda(CV=TRUE)`` keeps
          the full data's proportions; pass them as ``priors`` to get MASS's
          posteriors.
        * A class whose only row is left out keeps its column, with
          probability 0 (as :meth:`forget` leaves it: declared, no data).
        * Rows whose refit has no model (a QDA class left with one row, or a
          class covariance left singular) raise a ValueError naming the row
          and its class.

        Closed forms: LDA with ``shrinkage`` None or a float, when the
        pooled covariance has full rank; QDA with ``shrinkage`` None or a
        float and any ``reg_param``. Everything else (an estimated
        ``shrinkage`` such as 'auto' or 'oas', LDA's ``reduced_rank``, an LDA
        whose covariance ``tol`` reduces its rank) refits each row exactly
        from the statistics, ``stats.subtract(row)`` and a derivation: ``n``
        derivations, ``O(n K p^3)``, slow for large ``n``. So is a row whose
        removal brings its covariance near ``tol`` (the refit decides).
        ``covariance_estimator`` needs the rows of every refit and is refused.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Frequency weights; leaving row ``i`` out removes its weight.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``np.unique(y)`` (the ``classes_`` of a fit).
        """
        return leave_one_out(self, X, y, sample_weight, type(self)._loo_rows)[1]

    def loo_predict_proba(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> _F:
        """Leave-one-out posteriors, shape (n_samples, n_classes); see :meth:`loo_predict_log_proba`."""
        return np.exp(self.loo_predict_log_proba(X, y, sample_weight))

    def loo_predict(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> NDArray[Any]:
        """The class each row gets from the model fitted without it (leave-one-out)."""
        classes, logp = leave_one_out(self, X, y, sample_weight, type(self)._loo_rows)
        return np.asarray(classes[np.argmax(logp, axis=1)])
