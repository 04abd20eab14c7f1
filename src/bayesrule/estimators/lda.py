"""Linear discriminant analysis."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.base import TransformerMixin
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._util.affine_blocks import affine_rows
from .._util.dispatch import routed
from .._util.products import rows_dot, rows_wanted
from .._util.validation import TooFewRows
from ..models.tied import TiedGaussian
from ..stats import PooledScatterStats
from ._base import EstimatorSummariser
from ._da import _F, _MOMENTS, _SHRINKAGE, _GaussianDA
from ._lda_terms import decision_form, float64_terms, reduced_rank_model
from ._loo import LeaveOneOutMixin, lda_rows
from ._predict import _check_fitted, add_to_rows
from ._priors import PRIORS_CONSTRAINT, _check_prior_mass
from ._updatable import UpdatableMixin
from .registry import register


def _per_class(values: _F, present: NDArray[np.bool_]) -> _F:
    out = np.zeros(present.size)
    out[present] = values
    return out


@register("lda")
class LinearDiscriminantAnalysis(LeaveOneOutMixin, TransformerMixin, _GaussianDA, UpdatableMixin):
    r"""Linear discriminant analysis: Gaussian classes sharing one covariance.

    Each class ``k`` is modelled as ``N(mu_k, Sigma)`` with the pooled
    within-class covariance ``Sigma``; Bayes' rule then gives linear decision
    functions ``x' Sigma^+ mu_k - mu_k' Sigma^+ mu_k / 2 + log pi_k``. The
    same fit gives the Fisher (canonical) discriminant projection
    (:meth:`transform`), densities (:meth:`score_samples`) and new samples
    (:meth:`sample`). The class densities are a
    :class:`~bayesrule.models.tied.TiedGaussian` (``class_model(k)`` gives one
    class's Gaussian).

    Predictions, densities and the projection are computed from ``X`` minus
    the data's mean, so they do not depend on where the data lie (adding
    ``1e8`` to every feature changes the probabilities by rounding only).
    The statistics are :class:`~bayesrule.stats.ScatterStats`, or
    :class:`~bayesrule.stats.FourthMomentStats` when the exact Ledoit-Wolf
    intensity is wanted (see ``moments``); ``shrinkage`` can be changed
    after fitting (``set_params``, ``merge``, ``from_stats``) and the next
    derivation uses it.

    A drop-in for ``sklearn.discriminant_analysis.LinearDiscriminantAnalysis``:
    every parameter and fitted attribute is accepted or provided with the same
    meaning.

    Parameters
    ----------
    solver : {'svd', 'lsqr', 'eigen'}, default='svd'
        It does not change the result: bayesrule always derives the model
        from the eigendecomposition of the pooled covariance. As in
        scikit-learn, 'svd' refuses ``shrinkage`` (``NotImplementedError``)
        and ``covariance_estimator``, and 'lsqr' refuses :meth:`transform`;
        'eigen' allows everything.
    shrinkage : None, 'auto', 'ledoit-wolf', 'oas' or float in [0, 1], default=None
        Needs ``solver='eigen'`` or ``'lsqr'`` (scikit-learn refuses shrinkage with
        'svd'). A float ``a`` shrinks the pooled covariance towards ``(tr(Sigma)/p) I``,
        ``(1 - a) Sigma + a tr(Sigma)/p I``, as scikit-learn does. 'auto' and
        'ledoit-wolf' (the same) and 'oas' estimate an intensity ``a_k`` for
        each class in its correlation scale (its features standardised by its
        own standard deviations) and shrink its scatter there, towards its
        diagonal: ``(1 - a_k) S_k + a_k mu_k diag(S_k)``, ``mu_k`` the share of
        features that are not constant in the class; the shrunk scatters are
        pooled. With the default ``bias=False`` the model then does not
        depend on the features' units: a feature constant within a class is
        shrunk towards 0 there. With ``bias=True`` (and the default priors)
        'auto' is scikit-learn's ``shrinkage='auto'`` (``solver='lsqr'`` or
        ``'eigen'``), class-constant features included: scikit-learn's
        ``StandardScaler`` gives such a feature the scale 1, so it is shrunk
        towards a variance of ``a_k mu_k`` in its own units, and that model
        depends on the units (see ``bias``). The intensities are computed from the statistics, so streaming,
        merging and forgetting give the same ones. 'auto'/'ledoit-wolf' need
        the fourth moments (``moments``); 'oas' and floats need none.
    priors : array-like of shape (n_classes,), default=None
        Class priors; by default the weighted class proportions. They must be
        non-negative; if they do not sum to 1 (within 1e-5) they are
        renormalised with a warning.
    n_components : int, default=None
        Number of Fisher directions kept by :meth:`transform` (and, with
        ``reduced_rank=True``, by the classifier); at most
        ``min(n_classes - 1, n_features)``.
    store_covariance : bool, default=False
        Accepted for compatibility: ``covariance_`` is always stored.
    tol : float, default=1e-4
        Rank tolerance, scikit-learn's (``solver='svd'``) and MASS's
        meaning: the within-class residuals, each feature scaled by its
        standard deviation, keep the directions whose singular values (standard
        deviations) exceed ``tol``; in bayesrule's terms, the eigen-directions
        of the pooled covariance in its correlation scale with variance at
        most ``tol**2`` are treated as having no within-class variation and
        dropped, and the model works in the range of the covariance (a
        ``UserWarning`` "Variables are collinear" says how many). Features
        without within-class variance are set aside (no warning): constant
        features (MNIST's never-lit pixels) and ``n < p`` work without
        preprocessing. The rule has no units, and keeps as many directions as
        scikit-learn's ``svd`` solver. The same ``tol`` also drops Fisher
        directions whose between-class standard deviation is at most ``tol``
        times the largest, as scikit-learn does.
    covariance_estimator : estimator with ``fit`` and ``covariance_``, default=None
        A scikit-learn covariance estimator fitted on each class's centred rows;
        the pooled covariance is their prior-weighted average (as in
        scikit-learn). It needs the rows, so ``partial_fit`` and ``merge``
        refuse it.
    bias : bool, default=False
        False: the unbiased pooled estimate ``S_w / (n - K)``. True: the
        maximum-likelihood ``S_w / n``, which is scikit-learn's estimate with
        the default priors and gives the same predictions and probabilities.
        With an estimated ``shrinkage`` True is also scikit-learn's model of a
        feature constant within a class (a variance of ``a_k mu_k`` in its
        own units), which depends on that feature's units; False shrinks it
        towards 0, so that predictions never depend on the units.
    moments : {'auto', 'second', 'fourth'}, default='auto'
        The statistics a fit collects, fixed when the first block is
        summarised. 'second': :class:`~bayesrule.stats.ScatterStats`, enough
        for every shrinkage but Ledoit-Wolf. 'fourth':
        :class:`~bayesrule.stats.FourthMomentStats`, which adds the entrywise
        fourth moments (``O(K p^2)`` numbers, about four times the work of
        the pass) that the exact Ledoit-Wolf intensity in the correlation
        scale needs. 'auto': 'fourth' when ``shrinkage`` is 'auto' or
        'ledoit-wolf' at the first ``fit``, ``partial_fit`` or
        ``statistics`` call, 'second' otherwise; a fitted model keeps the
        statistics it has. A Ledoit-Wolf ``shrinkage`` set later on a model
        without fourth moments raises a ValueError saying so.
    reduced_rank : bool, default=False
        False: ``n_components`` only limits :meth:`transform`. True: reduced-rank
        LDA (Hastie, Tibshirani and Friedman, section 4.3.3): the classes are
        told apart in the first ``d = n_components`` Fisher directions only
        (all of them when ``n_components`` is None, which is the full model),
        as MASS's ``predict(lda_fit, dimen=d)`` does; the posteriors are
        MASS's. The model behind :meth:`predict_proba`,
        :meth:`decision_function`, ``coef_``, :meth:`score_samples`,
        :meth:`sample` and :meth:`class_model` is the Gaussian one with class
        means confined to the ``d``-dimensional affine subspace through the
        prior-weighted mean along those directions, and covariance the
        within-class covariance plus the between-class covariance of the
        discarded directions (``covariance_``); with ``bias=True`` and the
        default priors it is the maximum-likelihood fit of that family
        (Campbell 1984). It combines with every ``solver``, ``shrinkage``
        and ``covariance_estimator``: the directions are those of
        :meth:`transform`, in the metric of the covariance as estimated.
        ``means_``, ``scalings_`` and :meth:`transform` do not change.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Sum of sample weights per class.
    means_ : ndarray of shape (n_classes, n_features)
    covariance_ : ndarray of shape (n_features, n_features)
        The pooled covariance after shrinkage (with ``reduced_rank``, plus the
        between-class covariance of the discarded directions).
    shrinkage_ : ndarray of shape (n_classes,)
        The shrinkage intensity used for each class (the float ``shrinkage``
        for every class; 0 for a class without data).
    rank_ : int
        Number of directions kept (see ``tol``).
    coef_ : ndarray of shape (n_classes, n_features) or (1, n_features)
        Weights of the linear discriminants in scikit-learn's meaning
        (``Sigma^+ mu_k``); for two classes the single logistic form
        ``P(y = classes_[1] | x) = sigmoid(coef_ x + intercept_)``. Predictions
        use the same discriminant about the data's mean.
    intercept_ : ndarray of shape (n_classes,) or (1,)
    scalings_ : ndarray of shape (n_features, n_directions)
        Fisher directions: ``transform(X) = (X - xbar_) @ scalings_``; the
        projected classes have identity within-class covariance.
    xbar_ : ndarray of shape (n_features,)
        Prior-weighted overall mean.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Share of the between-class variance along each Fisher direction.
    stats_ : ScatterStats
        The sufficient statistics the model was derived from
        (:class:`~bayesrule.stats.PooledScatterStats` after a Spark fit that
        needed no class's own scatter: see docs/spark.md).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
    n_samples_seen_ : int

    References
    ----------
    R. A. Fisher, "The use of multiple measurements in taxonomic problems",
    Annals of Eugenics 7(2), 1936. T. Hastie, R. Tibshirani and J. Friedman,
    The Elements of Statistical Learning, 2nd ed., section 4.3. N. A. Campbell,
    "Canonical variate analysis - a general model formulation", Australian
    Journal of Statistics 26(1), 1984. T. Hastie and R. Tibshirani,
    "Discriminant analysis by Gaussian mixtures", JRSS B 58(1), 1996.
    W. N. Venables and B. D. Ripley, Modern Applied Statistics with S, 4th
    ed., 2002 (MASS's ``lda``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from bayesrule import LinearDiscriminantAnalysis
    >>> X, y = load_iris(return_X_y=True)
    >>> lda = LinearDiscriminantAnalysis().fit(X, y)
    >>> lda.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> print(f"{lda.score(X, y):.2f}")
    0.98

    Three classes span two Fisher directions; the first carries almost all
    the between-class variance:

    >>> lda.transform(X).shape
    (150, 2)
    >>> lda.explained_variance_ratio_.round(2)
    array([0.99, 0.01])

    Fitting in two blocks gives the model of one fit:

    >>> chunked = LinearDiscriminantAnalysis()
    >>> chunked = chunked.partial_fit(X[:75], y[:75], classes=[0, 1, 2])
    >>> chunked = chunked.partial_fit(X[75:], y[75:])
    >>> bool(np.allclose(chunked.predict_proba(X), lda.predict_proba(X)))
    True
    """

    _parameter_constraints: dict = {
        "solver": [StrOptions({"svd", "lsqr", "eigen"})],
        "shrinkage": _SHRINKAGE,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "priors": PRIORS_CONSTRAINT,
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "covariance_estimator": [HasMethods("fit"), None],
        "bias": ["boolean"],
        "moments": _MOMENTS,
        "reduced_rank": ["boolean"],
    }

    def __init__(
        self,
        solver: str = "svd",
        shrinkage: Any = None,
        priors: ArrayLike | None = None,
        n_components: int | None = None,
        store_covariance: bool = False,
        tol: float = 1e-4,
        covariance_estimator: Any = None,
        bias: bool = False,
        moments: str = "auto",
        reduced_rank: bool = False,
    ) -> None:
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.n_components = n_components
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator
        self.bias = bias
        self.moments = moments
        self.reduced_rank = reduced_rank

    spec = _GaussianDA.spec.replace(min_samples=2)
    _loo_rows = staticmethod(lda_rows)
    #: predict's argmax reads the narrow product row-major, in tiles (PredictMixin)
    _argmax_of_rows = True

    def _input_dtype_names(self) -> tuple[str, ...]:
        # every solver keeps float32 coefficients; 'svd' (scikit-learn's float32
        # solver throughout) also its projection
        names = ("means_", "priors_", "coef_", "intercept_")
        if self.solver == "svd":
            return (*names, "scalings_", "xbar_", "explained_variance_ratio_")
        return names

    def _outputs_in_input_dtype(self) -> bool:
        return bool(self.solver == "svd")

    _svd_estimator_message = (
        "covariance estimator is not supported with svd solver. Try another solver"
    )

    # the statistic: ScatterStats, or FourthMomentStats by the fit-time
    # ``moments`` choice (see _GaussianDA._statistic_type); PooledScatterStats
    # where a backend asks for it and nothing of the model needs a class's own scatter

    #: statistics a fitted model may hold besides ``spec.statistic`` and its
    #: extensions (model files accept them)
    other_statistics = (PooledScatterStats,)

    def summariser(
        self, first_block: Any = None, *, pooled_scatter: bool = False, **options: Any
    ) -> EstimatorSummariser:
        """The block task of :meth:`~GenerativeClassifier.summariser`, pooled where it may be.

        ``pooled_scatter=True`` (a backend's option: Spark, where every
        task's statistics cross the JVM) summarises the blocks by
        :class:`~bayesrule.stats.PooledScatterStats`, ``K`` times smaller than
        :class:`~bayesrule.stats.ScatterStats`, when the model needs no
        class's own scatter (:meth:`_pools`); the fitted model is the same
        (to rounding). It is ignored otherwise.
        """
        light = self._block_summariser(first_block)
        if pooled_scatter and self._pools():
            light.__dict__["_pooled_scatter"] = True
        return self._task(light)

    def _pools(self) -> bool:
        """Whether a fit may collect one pooled scatter instead of one per class.

        A fitted model keeps its statistics' kind. An unfitted one pools with
        ``moments='auto'`` and a ``shrinkage`` of None or a float (the
        estimated intensities, 'oas' and Ledoit-Wolf, need each class's
        scatter; ``moments='second'`` or ``'fourth'`` asks for those
        statistics by name) and no ``covariance_estimator`` (which needs the rows).
        """
        fitted = self.__dict__.get("stats_")
        if fitted is not None:
            return isinstance(fitted, PooledScatterStats)
        return (
            self.moments == "auto"
            and not isinstance(self.shrinkage, str)
            and self.covariance_estimator is None
        )

    def _block_summariser(self, first_block: Any = None) -> Any:
        light = super()._block_summariser(first_block)
        if isinstance(self.__dict__.get("stats_"), PooledScatterStats):
            light.__dict__["_pooled_scatter"] = True  # later blocks as the first ones
        return light

    def _statistic_type(self) -> Any:
        if self.__dict__.get("_pooled_scatter") or isinstance(
            self.__dict__.get("stats_"), PooledScatterStats
        ):
            return PooledScatterStats
        return super()._statistic_type()

    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        external = extra.get("external")
        K, p = stats.n_classes, stats.n_features
        max_components = min(K - 1, p)
        if self.n_components is not None and self.n_components > max_components:
            raise ValueError(
                "n_components cannot be larger than min(n_features, n_classes - 1). "
                f"min(n_features, n_classes - 1) = {max_components}; got {self.n_components}."
            )
        self._check_solver()
        if int(stats.counts.sum()) == K:
            raise TooFewRows(
                "The number of samples must be more than the number of classes. "
                f"{K} samples for {K} classes leave no within-class variation to estimate "
                "the shared covariance from."
            )
        present = stats.weights > 0
        ddof = self._ddof()
        if external is not None:
            cov = np.einsum("k,kpq->pq", priors, external)
            w = stats.weights[present]
            model = TiedGaussian.from_covariance(
                stats.means[present], cov, tol=self.tol, centre=w @ stats.means[present] / w.sum()
            )
        else:
            model = TiedGaussian.from_stats(
                stats,
                shrinkage=self.shrinkage,
                tol=self.tol,
                ddof=ddof,
                constant_unit_scale=bool(self.bias),
            )
        if model.rank < model.n_varying:
            warnings.warn(
                f"Variables are collinear: of the {model.n_varying} features that vary "
                f"within the classes, {model.n_varying - model.rank} direction(s) of the "
                f"pooled covariance have a standard deviation at most tol={self.tol:g} in its "
                f"correlation scale and were dropped (rank {model.rank}).",
                UserWarning,
                stacklevel=2,
            )
        whiten, c = model.whitening, model.centre
        means = stats.means
        # Fisher directions: principal axes of the prior-weighted class means in
        # whitened space (the between-class scatter relative to the within),
        # about the centre, where nothing cancels.
        pw = priors[present]
        if pw.sum() <= 0:
            pw = stats.weights[present]
        pw = pw / pw.sum()
        Mw = model.whitened_means
        Mbar = pw @ Mw
        C = np.sqrt(pw)[:, None] * (Mw - Mbar)
        _, s, Vt = np.linalg.svd(C, full_matrices=False)
        s2 = s * s
        q = int(np.sum(s > self.tol * s[0])) if s.size and s[0] > 0 else 0
        q = min(q, max_components)
        Vt = Vt[:q]
        # A deterministic sign for each direction: later classes (in the order of
        # classes_) project to larger values, sum_k k * <m_k - mbar, v> > 0.
        proj = (Mw - Mbar) @ Vt.T
        flip = np.sign(np.flatnonzero(present) @ proj)
        Vt = Vt * np.where(flip == 0, 1.0, flip)[:, None]
        fisher = whiten @ Vt.T
        n_out = max_components if self.n_components is None else self.n_components
        evr = s2 / s2.sum() if s2.sum() > 0 else s2
        if self.reduced_rank:
            # classify (and model the density) in the first n_components directions
            model = reduced_rank_model(model, Mw, Mbar, Vt, s[:q], min(n_out, q))
        whiten = model.whitening
        with np.errstate(divide="ignore"):
            log_priors = np.log(priors)
        # scikit-learn's coef_ and intercept_ for the solver asked for (see
        # decision_form). Classes without data: coefficients 0.
        xbar = c + pw @ (means[present] - c)
        origin = xbar if self.solver == "svd" else np.zeros(p)
        coef = np.zeros((K, p))
        intercept = log_priors.copy()
        coef[present], const = decision_form(model, origin)
        intercept[present] += const
        if K == 2:
            coef_out = (coef[1] - coef[0])[None, :]
            intercept_out = np.array([intercept[1] - intercept[0]])
        else:
            coef_out, intercept_out = coef, intercept
        return {
            "_model": model,
            "means_": means.copy(),
            "covariance_": model.covariance,
            "shrinkage_": _per_class(model.shrinkage, present),
            "rank_": model.rank,
            "coef_": coef_out,
            "intercept_": intercept_out,
            "scalings_": fisher,
            "xbar_": xbar,
            # as scikit-learn's, up to n_components, but never a direction between
            # classes without data (declared, or all forgotten): one fewer than those with
            "explained_variance_ratio_": evr[: min(n_out, max(int(present.sum()) - 1, 0))],
            "_max_components": n_out,
            "_n_features_out": min(n_out, q),
        }

    def _relative_joint(self, Xv: NDArray[Any]) -> _F:
        # log pi_k + log p_k(x) minus the class-independent -|x - c|^2_Sigma / 2
        # and normalising constant: one (n, p) x (p, K) product with X - c.
        rel = self._model.relative_log_prob(Xv)
        present = self.stats_.weights > 0
        if present.all():
            rel += self._log_priors()
            return rel
        out = np.full((rel.shape[0], present.size), -np.inf)
        out[:, present] = rel + self._log_priors()[present]
        return out

    def _numeric_X(self, X: Any, *, reset: bool) -> Any:
        # scikit-learn's LDA predicts on SciPy sparse rows (its fit refuses them, as this
        # one's does): they are laid out, as the user's .toarray() would
        return super()._numeric_X(X.toarray() if not reset and sp.issparse(X) else X, reset=reset)

    def _one_product_decision(self, Xv: Any, terms: tuple[_F, _F] | None = None) -> _F | None:
        """scikit-learn's form ``x' coef_k + b_k`` in one product, or None where it does not apply.

        For three classes or more, all with data, and a centre near the
        origin (the model's own test, :data:`~bayesrule.models.tied.ORIGIN_RATIO`),
        the log posterior up to its per-row term is ``x' (coef_k + s) +
        (quad0_k - c' s / 2) + log pi_k`` with ``s = Sigma^+ c``: one product with
        ``X``, no centred copy of it and no second pass. None (the general path)
        when any value is not finite, so that a row far from every class, or a
        NaN or infinity in ``X``, is handled and reported as before.
        """
        model = self._model
        present = self.stats_.weights > 0
        if (
            sp.issparse(Xv)
            or not getattr(model, "_origin", False)
            or present.size < 3
            or not present.all()
        ):
            return None
        # the model's terms (built with it: predicting changes no attribute), or those given
        if terms is None:
            coef, const = model.origin_coef, model.origin_const + self._log_priors()
        else:
            coef, const = terms
        with self._deferred(), self._threads(Xv):
            # narrow rows on a busy machine: product, constants and check a block at a time
            blocked = affine_rows(Xv, coef, const)
            if blocked is not None:
                return blocked
            out = rows_dot(Xv, coef)
            out = add_to_rows(out, const, out)  # a row-major result: a tile of rows at a time
            if not np.all(np.isfinite(out)):
                return None
        return out

    @routed
    def decision_function(self, X: ArrayLike) -> _F:
        """Confidence scores; shape (n,) for two classes, else (n, n_classes).

        For two classes, the log odds ``log P(classes_[1] | x) / P(classes_[0] | x)``,
        computed about the data's mean (unaffected by where the data lie). For
        more classes, scikit-learn's ``X @ coef_.T + intercept_`` for the solver
        given: the log posterior plus a per-row term, taken about ``xbar_`` with
        ``solver='svd'`` (the default) and about the origin with 'lsqr' and
        'eigen', as scikit-learn's solvers do (see :func:`~._lda_terms.decision_form`); for
        data far from that point the term is large (use
        :meth:`predict_log_proba` there).
        """
        _check_fitted(self)
        _check_prior_mass(self)
        Xv = self._input(X, reset=False)
        terms = None
        weights = self.stats_.weights
        if getattr(self._model, "_origin", False) and weights.size >= 3 and np.all(weights > 0):
            coef_, intercept_ = np.asarray(self.coef_), np.asarray(self.intercept_)
            if coef_.dtype == np.float64 and intercept_.dtype == np.float64:
                terms = (coef_, intercept_)  # decision_form's, assembled by the fit
            else:  # float32 attributes (a float32 fit): the float64 terms, once a model
                coef, const = float64_terms(self._model, self._decision_origin())
                terms = (coef, const + self._log_priors())
        with rows_wanted():  # the product is the answer: no reduction reads it
            fast = self._one_product_decision(Xv, terms) if terms is not None else None
        if fast is not None:
            return self._out(fast)
        with self._deferred(), self._threads(Xv):
            jll = self._relative_joint(Xv)
        self._after(Xv, jll[:, self.stats_.weights > 0])
        jll = self._repair(Xv, jll)  # rows far from every class: see bayesrule.models._terms
        with self._deferred():
            if jll.shape[1] == 2:
                out = jll[:, 1] - jll[:, 0]
            else:
                # the per-row term (x - c)' Sigma^+ u + u' Sigma^+ u / 2, u = c - o, that
                # scikit-learn's form about the origin o has beyond jll (about c)
                model = self._model
                u = model.centre - self._decision_origin()
                Su = model.whitening @ (model.whitening.T @ u)
                row = np.subtract(Xv, model.centre, dtype=float) @ Su
                out = jll + (row + 0.5 * float(u @ Su))[:, None]
        return self._out(out)

    def _decision_origin(self) -> _F:
        """Where ``decision_function`` takes scikit-learn's form about (see :func:`~._lda_terms.decision_form`).

        ``xbar_`` for ``solver='svd'`` (scikit-learn's default), the origin for
        'lsqr' and 'eigen': ``decision_function`` is ``X @ coef_.T + intercept_``
        with the namesake solver's ``coef_`` in both.
        """
        if self.solver == "svd":
            return np.asarray(self.xbar_, dtype=np.float64)
        return np.zeros(self.n_features_in_)

    @routed
    def transform(self, X: ArrayLike) -> _F:
        """Project onto the Fisher discriminant directions.

        Returns
        -------
        X_new : ndarray of shape (n_samples, min(n_components, n_directions))
        """
        if self.solver == "lsqr":
            raise NotImplementedError(
                "transform not implemented for 'lsqr' solver (use 'svd' or 'eigen'). bayesrule's "
                "solvers give the same model; 'lsqr' refuses transform as scikit-learn's does."
            )
        _check_fitted(self)
        Xv = self._validate_X(X, reset=False)
        self._warn_out_of_range(Xv)
        out = ((Xv - self.xbar_) @ self.scalings_)[:, : self._max_components]
        self._after(Xv, out)
        return out

    def get_feature_names_out(self, input_features: Any = None) -> NDArray[Any]:
        """Names ``lineardiscriminantanalysis0``, ... for the transformed columns."""
        check_is_fitted(self)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(self._n_features_out)], dtype=object)
