"""Point masses plus a kernel density: the class model of kernel naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._bandwidth import bandwidths, check_bandwidth_resolution, weighted_moments
from ._checks import check_nonnegative_float, check_observed, feature_name
from ._family import KernelFamily, KernelOptions
from ._terms import scale_rows
from ._types import Floats as _F
from .kernel import _HALF_LOG_2PI, KernelDensity, _cv_bandwidths, split_far

__all__ = ["PointMassKernelDensity", "point_masses"]


def point_masses(stats: Any, share: float) -> NDArray[np.bool_]:
    """Which stored values of ``stats`` are point masses, shape (n_values,).

    A value is a point mass of its feature when, in some class, it holds at
    least ``share`` of the class's observed weight of the feature and a
    weight above 1, so that a value of one unweighted row is never one. The
    rule reads weights only (no row counts), so that an integer sample
    weight ``w`` gives the atoms of ``w`` copies of the row. ``share`` above
    1 gives none.
    """
    W = stats.value_weights
    V = stats.feature_weights
    f = stats.value_features
    heavy = (W >= share * V[:, f]) & (W > 1.0 + 1e-9)
    return np.asarray(heavy.any(axis=0))


class PointMassKernelDensity(KernelFamily):
    r"""Independent features, each a mixture of point masses and a Gaussian kernel density.

    Feature ``j`` has point masses (atoms) ``a`` shared by every class: the
    values that carry a large share of some class's weight (exactly 0 for
    MNIST's background, a sensor's clipping value, small counts). The density
    of class ``k`` is taken with respect to counting measure on the atoms plus
    Lebesgue measure elsewhere, the same measure for every class, so that
    classes compare under Bayes' rule:

    ``P_k(x = a) = (w_ka + alpha G_a) / (V_kj + alpha)`` at an atom, and
    ``f_k(x) = (C_kj fhat_kj(x) + alpha G_c g_j(x)) / (V_kj + alpha)`` elsewhere,

    with ``w_ka`` the class's weight at the atom, ``C_kj`` its weight on the
    other values, ``V_kj`` the sum, ``fhat_kj`` the kernel density of its
    other values, and the prior ``G`` the pooled distribution of the feature
    over all classes (atoms ``G_a``, and ``G_c`` on ``g_j``, the kernel
    density of the pooled other values; a weight of 1 is added to ``G_c``
    so that it is never 0). ``alpha`` is a weight: the posterior predictive
    of a Dirichlet process centred on the pooled distribution. A class that
    never had an atom, or no other value, still gives it a small probability.

    Parameters
    ----------
    kde : KernelDensity
        The continuous parts: ``n_classes`` rows of class kernel densities
        and, last, the pooled one ``g``.
    atoms : array-like of shape (n_features, n_slots)
        The atoms of each feature, padded with NaN.
    log_atom : array-like of shape (n_classes, n_features, n_slots)
        ``log P_k(x = a)``.
    log_class, log_prior : array-like of shape (n_classes, n_features)
        ``log(C_kj / (V_kj + alpha))`` and ``log(alpha G_c / (V_kj + alpha))``,
        the weights of ``fhat_kj`` and ``g_j``.

    References
    ----------
    T. S. Ferguson, "A Bayesian analysis of some nonparametric problems",
    Annals of Statistics 1(2), 1973. E. Parzen, "On estimation of a
    probability density function and mode", Annals of Mathematical
    Statistics 33(3), 1962.
    """

    def __init__(
        self,
        kde: KernelDensity,
        atoms: ArrayLike,
        log_atom: ArrayLike,
        log_class: ArrayLike,
        log_prior: ArrayLike,
        *,
        single: bool = False,
    ) -> None:
        self.kde = kde
        self.atoms = np.asarray(atoms, dtype=float)
        self.log_atom = np.asarray(log_atom, dtype=float)
        self.log_class = np.asarray(log_class, dtype=float)
        self.log_prior = np.asarray(log_prior, dtype=float)
        self._single = single
        K = self.log_class.shape[0]
        if len(kde) != K + 1:
            raise ValueError(f"kde must hold {K + 1} densities (the classes, then the pooled one).")
        self.bandwidth = kde.bandwidth[:K]

    @classmethod
    def _kernels(
        cls, stats: Any, options: KernelOptions, *, point_mass: float = 0.2, alpha: float = 0.1
    ) -> PointMassKernelDensity:
        """The atoms and kernel densities of each present class (see the class docstring).

        ``from_stats`` takes, besides the options of every kernel family:

        Parameters
        ----------
        point_mass : float, default=0.2
            A value holding at least this share of a class's weight of a
            feature (and a weight above 1) is an atom (:func:`point_masses`);
            above 1, there are none.
        alpha : float, default=0.1
            Weight of the pooled distribution (a number of rows, unweighted).
        """
        present, b, floor, kde_kw, bandwidth, feature_names = options
        share = check_nonnegative_float(point_mass, "point_mass")
        alpha = check_nonnegative_float(alpha, "alpha")
        check_observed(stats.feature_weights, present, stats.classes, feature_names)

        indptr, values, p = stats.indptr, stats.values, stats.n_features
        feature = stats.value_features
        is_atom = point_masses(stats, share)
        W = stats.value_weights[present]  # (K, U)
        K = W.shape[0]
        # weights, not row counts: an integer sample weight is that many copies of the row
        row = 1.0
        a_w = alpha

        # weights of the continuous parts: each class's other values, then the pooled ones
        Wc = np.where(is_atom, 0.0, W)
        pooled = W.sum(axis=0)
        Wp = np.where(is_atom, 0.0, pooled)
        C = weighted_moments(indptr, values, Wc)[0]  # (K, p)
        Cp = weighted_moments(indptr, values, Wp[None])[0][0]  # (p,)
        # a feature with no other value anywhere smooths its atoms for g_j instead
        no_cont = (Cp <= 0)[feature]
        Wp = np.where(no_cont, pooled, Wp)
        # a class with no other value gets the pooled ones; their weight in f_k is 0
        fill = (C <= 0)[:, feature]
        Wc_ext = np.vstack([np.where(fill, Wp, Wc), Wp])

        # bandwidths: rules per row, the floor from the classes' other values pooled
        mom = weighted_moments(indptr, values, Wc_ext)
        h, _, h_scott, lower = bandwidths((mom[0][:K], mom[1][:K], mom[2][:K]), b, floor)
        h_pool, _, hs_pool, low_pool = bandwidths((mom[0][K:], mom[1][K:], mom[2][K:]), b, floor)
        if isinstance(b, str) and b == "cv":
            h = _cv_bandwidths(indptr, values, Wc_ext[:K], h_scott, lower, **kde_kw)
        for bw in (h, h_pool):
            if not np.all(np.isfinite(bw)):
                k, j = (int(v[0]) for v in np.nonzero(~np.isfinite(np.atleast_2d(bw))))
                raise ValueError(
                    f"the kernel bandwidth of feature {feature_name(feature_names, j)!r} is not "
                    "finite: the feature's values are so large that their squared deviations "
                    "overflow float64; rescale X or give bandwidth as a number."
                )
        check_bandwidth_resolution(np.vstack([h, h_pool]), indptr, values, feature_names, bandwidth)
        kde = KernelDensity(indptr, values, Wc_ext, np.vstack([h, h_pool]), **kde_kw)

        # mixture weights, from the pooled distribution G with one row added to G_c
        Vk = stats.feature_weights[present]  # (K, p)
        Vp = Vk.sum(axis=0)
        G_c = (Cp + row) / (Vp + row)
        denom = Vk + a_w
        n_atoms = np.bincount(feature[is_atom], minlength=p)
        M = int(n_atoms.max(initial=0))
        atoms = np.full((p, M), np.nan)
        log_atom = np.full((K, p, M), -np.inf)
        if M:
            ai = np.flatnonzero(is_atom)
            fa = feature[ai]
            starts = np.concatenate([[0], np.cumsum(n_atoms)[:-1]])
            slot = np.arange(ai.size) - starts[fa]
            atoms[fa, slot] = values[ai]
            G_a = pooled[ai] / (Vp[fa] + row)
            with np.errstate(divide="ignore"):
                log_atom[:, fa, slot] = np.log(W[:, ai] + a_w * G_a) - np.log(denom[:, fa])
        with np.errstate(divide="ignore"):
            log_class = np.log(C) - np.log(denom)
            log_prior = np.log(a_w * G_c) - np.log(denom)
        return cls(kde, atoms, log_atom, log_class, log_prior)

    # -------------------------------------------------------------- density
    def _atom_slots(self, X: _F) -> NDArray[np.intp]:
        """The atom each entry equals (its slot), or -1; shape of ``X``."""
        hit = np.full(X.shape, -1, dtype=np.intp)
        for m in range(self.atoms.shape[1]):
            hit[(X == self.atoms[:, m]) & (hit < 0)] = m
        return hit

    def _continuous(self, x: _F, j: NDArray[np.intp]) -> _F:
        """``log f_k(x)`` off the atoms for single entries, shape (K, m)."""
        K = self.log_class.shape[0]
        cont = self.kde.entry_log_prob(x, j)
        return np.asarray(
            np.logaddexp(self.log_class[:, j] + cont[:K], self.log_prior[:, j] + cont[K])
        )

    def feature_log_prob(self, X: ArrayLike) -> _F:
        """``log p_kj(x_ij)`` for every class, row and feature, shape (K, n, p); NaN stays NaN.

        A density with respect to counting measure on the atoms plus Lebesgue measure.
        """
        X = np.asarray(X, dtype=float)
        K = self.log_class.shape[0]
        hit = self._atom_slots(X)
        out = np.full((K, *X.shape), np.nan)
        i, j = np.nonzero(hit >= 0)
        out[:, i, j] = self.log_atom[:, j, hit[i, j]]
        i, j = np.nonzero((hit < 0) & ~np.isnan(X))
        out[:, i, j] = self._continuous(X[i, j], j)
        return out

    def log_prob(self, X: ArrayLike, block_rows: int = 2048) -> _F:
        """Log density of each row, shape (n,) or (n, n_classes); NaN entries are skipped.

        The atoms' terms are one matrix product per atom slot; the kernel
        densities are evaluated only at the entries no atom takes.
        """
        X = np.asarray(X, dtype=float)
        K, p = self.log_class.shape
        out = np.zeros((X.shape[0], K))
        finite = np.isfinite(self.log_atom)
        L = np.where(finite, self.log_atom, 0.0)
        for s in range(0, X.shape[0], block_rows):
            Xb = X[s : s + block_rows]
            ob = out[s : s + block_rows]
            hit = self._atom_slots(Xb)
            for m in range(self.atoms.shape[1]):
                at = (hit == m).astype(float)
                ob += at @ L[:, :, m].T
                if not finite[:, :, m].all():
                    # an atom of probability 0 (alpha=0) makes the row impossible
                    ob[(at @ (~finite[:, :, m]).T.astype(float)) > 0] = -np.inf
            i, j = np.nonzero((hit < 0) & ~np.isnan(Xb))
            if i.size:
                cont = self._continuous(Xb[i, j], j)
                for k in range(K):
                    ob[:, k] += np.bincount(i, weights=cont[k], minlength=Xb.shape[0])
        return out[:, 0] if self._single else out

    def log_prob_terms(self, X: ArrayLike) -> list[tuple[_F, Any]]:
        """``log_prob`` as scaled terms that cannot overflow (see :mod:`bayesrule.models._terms`).

        An entry whose continuous density underflows for some class (far from
        every value) is given, for each class, by the component of its mixture
        that dominates there — its own kernel density or the pooled one, each
        from its nearer extreme value ``v`` — as ``log m + log w_v + norm -
        (x - v)^2 / (2 h^2)`` expanded with ``u = x 2^-E``: the component of
        larger bandwidth dominates, then the one whose ``v`` lies further out,
        then the larger constant. Every other entry is exact.
        """
        X = np.asarray(X, dtype=float)
        exact, far = split_far(self.feature_log_prob(X), X)
        if not far.any():
            return [(exact, 0)]
        kde, K = self.kde, len(self)
        U, E = scale_rows(np.where(far, X, 0.0))
        upper = X[None] > 0.5 * (kde._lo + kde._hi)[:, None, :]  # (K + 1, n, p)
        v = np.where(upper, kde._hi[:, None, :], kde._lo[:, None, :])
        lw = np.where(upper, kde._lw_hi[:, None, :], kde._lw_lo[:, None, :])
        h = np.broadcast_to(kde.bandwidth[:, None, :], v.shape)
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            const = lw - np.log(h) - _HALF_LOG_2PI - 0.5 * (v / h) ** 2  # (K + 1, n, p)
            own_c = const[:K] + self.log_class[:, None, :]
            pool_c = const[K][None] + self.log_prior[:, None, :]
            sign = np.sign(X)[None]
            own_h, pool_h = h[:K], h[K][None]
            own_v, pool_v = v[:K] * sign / h[:K] ** 2, v[K][None] * sign / h[K][None] ** 2
            take_pool = (pool_h > own_h) | (
                (pool_h == own_h) & ((pool_v > own_v) | ((pool_v == own_v) & (pool_c > own_c)))
            )
            hh = np.where(take_pool, pool_h, own_h)
            vv = np.where(take_pool, np.broadcast_to(v[K][None], own_h.shape), v[:K])
            cc = np.where(take_pool, pool_c, own_c)
            uh = U[None] / hh
            quad = np.where(far, -0.5 * uh * uh, 0.0).sum(axis=2).T
            lin = np.where(far, uh * (vv / hh), 0.0).sum(axis=2).T
            cst = np.where(far, cc, 0.0).sum(axis=2).T
        big = float(np.finfo(np.float64).max)
        return [
            (np.where(np.isnan(quad), -np.inf, quad), 2 * E),
            (np.nan_to_num(lin, nan=0.0, posinf=big, neginf=-big), E),
            (np.where(np.isnan(cst), -np.inf, cst), 0),
            (exact, 0),
        ]

    def __len__(self) -> int:
        return int(self.log_class.shape[0])

    def __getitem__(self, k: int) -> PointMassKernelDensity:
        K = len(self)
        kde = self.kde
        rows = KernelDensity(
            kde.indptr,
            kde.values,
            kde.weights[[k, K]],
            kde.bandwidth[[k, K]],
            method=kde.method,
            grid_size=kde.grid_size,
        )
        return PointMassKernelDensity(
            rows,
            self.atoms,
            self.log_atom[[k]],
            self.log_class[[k]],
            self.log_prior[[k]],
            single=True,
        )

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows from a single-class model: per feature an atom, or a kernel draw."""
        p, M = self.atoms.shape
        logw = np.concatenate(
            [self.log_atom[0], self.log_class[0][:, None], self.log_prior[0][:, None]], axis=1
        )  # (p, M + 2)
        prob = np.exp(logw)
        cum = np.cumsum(prob / prob.sum(axis=1, keepdims=True), axis=1)
        u = rng.random((n, p))
        comp = np.minimum((u[:, :, None] > cum[None]).sum(axis=2), M + 1)  # (n, p)
        out = self.kde[0].sample(n, rng)
        pooled = self.kde[1].sample(n, rng)
        out = np.where(comp == M + 1, pooled, out)
        if M:
            slot = np.minimum(comp, M - 1)
            at = self.atoms[np.arange(p)[None, :], slot]
            out = np.where(comp < M, at, out)
        return out

    def __repr__(self) -> str:
        K, p = self.log_class.shape
        return (
            f"PointMassKernelDensity(n_classes={K}, n_features={p}, "
            f"n_atoms={int(np.isfinite(self.atoms).sum())}, method={self.kde.method!r})"
        )
