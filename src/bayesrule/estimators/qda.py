"""Quadratic discriminant analysis."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._util.validation import TooFewRows
from ..models.gaussian import SingularCovarianceError
from ._da import _CLASS_GAUSSIAN_PARAMS, _F, _MOMENTS, _SHRINKAGE, _ClassGaussianDA
from ._loo import LeaveOneOutMixin, qda_rows
from ._underived import Underived
from ._updatable import UpdatableMixin
from .registry import register


@register("qda")
class QuadraticDiscriminantAnalysis(LeaveOneOutMixin, _ClassGaussianDA, UpdatableMixin):
    r"""Quadratic discriminant analysis: one Gaussian with its own covariance per class.

    A drop-in for ``sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis``.

    Parameters
    ----------
    solver : {'svd', 'eigen'}, default='svd'
        The class covariances are always eigendecomposed, and ``reg_param``
        applies with both. As in scikit-learn, 'svd' refuses ``shrinkage``
        (``NotImplementedError``) and ``covariance_estimator``.
    shrinkage : None, 'auto', 'ledoit-wolf', 'oas' or float in [0, 1], default=None
        Applied to each class covariance before ``reg_param``. A float ``a``
        gives ``(1 - a) Sigma_k + a tr(Sigma_k)/p I`` (scikit-learn's meaning).
        'auto' / 'ledoit-wolf' (the same) and 'oas' estimate ``a_k`` in the
        class's correlation scale and shrink towards its diagonal,
        ``(1 - a_k) Sigma_k + a_k mu_k diag(Sigma_k)`` (see
        :class:`LinearDiscriminantAnalysis`). With the default ``bias=False``
        free of the features' units: a feature constant within a class is
        shrunk towards 0, which leaves that class singular (use
        ``reg_param``). With ``bias=True`` it is scikit-learn's
        ``solver='eigen', shrinkage='auto'``, class-constant features
        included: they get a variance of ``a_k mu_k`` in their own units
        (``StandardScaler``'s scale 1), so that model depends on their units.
    priors : array-like of shape (n_classes,), default=None
    reg_param : float in [0, 1], default=0.0
        ``Sigma_k <- (1 - reg_param) Sigma_k + reg_param I``, as scikit-learn.
    store_covariance : bool, default=False
        Store ``covariance_`` (the regularised class covariances).
    tol : float, default=1e-4
        scikit-learn's meaning, on standardised features: a class covariance
        (after regularisation) is singular when an eigenvalue of its
        correlation matrix — a variance in the scale where each feature has
        variance 1 in the class — is at most ``tol``, or when a feature has
        no variance in it; ``fit`` then raises a ``LinAlgError`` (also a
        ``ValueError``) naming the class, with scikit-learn's message.
        scikit-learn compares the covariance's own eigenvalues with ``tol``,
        in the features' units; bayesrule's test has no units, so rescaling
        the features does not change the answer, and on features with unit
        variance in each class the two tests coincide.
    covariance_estimator : estimator with ``fit`` and ``covariance_``, default=None
        Fitted on each class's centred rows instead of the empirical estimate
        (``fit`` only).
    bias : bool, default=False
        False: the unbiased ``S_k / (n_k - 1)`` estimate. True: the
        maximum-likelihood ``S_k / n_k`` that scikit-learn 1.9 uses; it gives
        the same predictions and probabilities as scikit-learn. With an
        estimated ``shrinkage`` True also shrinks a feature constant within a
        class as scikit-learn does, towards a variance of ``a_k mu_k`` in its
        own units (a model that depends on them); False shrinks it towards 0.
    moments : {'auto', 'second', 'fourth'}, default='auto'
        The statistics a fit collects (see
        :class:`LinearDiscriminantAnalysis`): 'fourth' holds the entrywise
        fourth moments that 'auto' / 'ledoit-wolf' need; 'auto' collects
        them when ``shrinkage`` is one of those at the first fit.

    Attributes
    ----------
    classes_, priors_, class_count_, means_, stats_, n_features_in_
    covariance_ : ndarray of shape (n_classes, n_features, n_features)
        Only with ``store_covariance=True``.
    rotations_ : list of ndarray of shape (n_features, n_features)
        Eigenvectors of each class covariance, by decreasing eigenvalue.
    scalings_ : list of ndarray of shape (n_features,)
        The matching eigenvalues (variances along the principal axes).
    shrinkage_ : ndarray of shape (n_classes,)

    References
    ----------
    T. Hastie, R. Tibshirani and J. Friedman, The Elements of Statistical
    Learning, 2nd ed., section 4.3.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_wine
    >>> from bayesrule import QuadraticDiscriminantAnalysis
    >>> X, y = load_wine(return_X_y=True)
    >>> qda = QuadraticDiscriminantAnalysis(reg_param=0.01).fit(X, y)
    >>> qda.predict(X[[0, 60, 150]])
    array([0, 1, 2])
    >>> print(f"{qda.score(X, y):.2f}")
    0.99

    Two models fitted on the two halves of the rows merge into the model of
    all the rows:

    >>> odd = QuadraticDiscriminantAnalysis(reg_param=0.01).fit(X[1::2], y[1::2])
    >>> even = QuadraticDiscriminantAnalysis(reg_param=0.01).fit(X[::2], y[::2])
    >>> bool(np.allclose(even.merge(odd).predict_proba(X), qda.predict_proba(X)))
    True

    Each class is a Gaussian that can be drawn from:

    >>> X_new, y_new = qda.sample(6, random_state=0)
    >>> X_new.shape, y_new.shape
    ((6, 13), (6,))
    """

    _parameter_constraints: dict = {
        **_CLASS_GAUSSIAN_PARAMS,
        "solver": [StrOptions({"svd", "eigen"})],
        "shrinkage": _SHRINKAGE,
        "reg_param": [Interval(Real, 0, 1, closed="both")],
        "covariance_estimator": [HasMethods("fit"), None],
        "moments": _MOMENTS,
    }
    _loo_rows = staticmethod(qda_rows)
    _remedy = (
        "set reg_param > 0 (e.g. reg_param=0.05: scikit-learn's ridge, in the features' "
        "units) or shrinkage='auto', or use RegularizedDiscriminantAnalysis(alpha=1, "
        "ridge=0.05) (a ridge relative to each feature's pooled variance, free of units) or "
        "RegularizedDiscriminantAnalysisCV(), which chooses the regularisation by "
        "cross-validation"
    )
    spec = _ClassGaussianDA.spec.replace(input_dtype_attrs=("means_", "covariance_"))
    _svd_estimator_message = (
        "covariance_estimator is not supported with solver='svd'. Try solver='eigen' instead."
    )

    def __init__(
        self,
        *,
        solver: str = "svd",
        shrinkage: Any = None,
        priors: ArrayLike | None = None,
        reg_param: float = 0.0,
        store_covariance: bool = False,
        tol: float = 1.0e-4,
        covariance_estimator: Any = None,
        bias: bool = False,
        moments: str = "auto",
    ) -> None:
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.reg_param = reg_param
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator
        self.bias = bias
        self.moments = moments

    def _singular_lead(self, label: Any, n_samples: int | None, n_features: int) -> str:
        lead = f"The covariance matrix of class {label} is not full rank."
        if self.solver == "svd" and n_samples is not None and n_samples <= n_features:
            return (
                f"{lead} When using `solver='svd'` the number of samples in each class should "
                f"be more than the number of features, but class {label} has {n_samples} "
                f"samples and {n_features} features. Try using `solver='eigen'` and setting "
                "the parameter `shrinkage` for regularization."
            )
        param = "shrinkage" if self.solver == "eigen" else "reg_param"
        return f"{lead} Increase the value of `{param}` to reduce the collinearity."

    def _rows_needed(self, n_features: int) -> int:
        """The rows a class needs for its covariance: ``p + 1`` unregularised, else 2."""
        regularised = float(self.reg_param) > 0 or self.shrinkage not in (None, 0)
        return 2 if regularised else n_features + 1

    def _deferral(self, exc: ValueError, stats: Any) -> str | None:
        """A class with fewer rows than its covariance needs waits for more (``partial_fit``).

        The derivation's errors for such a class (one row; a singular
        covariance of at most ``p`` rows) name it and its rows; any other
        error (a class with rows enough, a collinear one) is not deferred.
        """
        n_samples = getattr(exc, "n_samples", None)
        if n_samples is None or not hasattr(exc, "label"):
            return super()._deferral(exc, stats)
        need = self._rows_needed(stats.n_features)
        if n_samples >= need:
            # regularised, yet singular with at most p rows (a reg_param too small for
            # the class's variances): p + 1 rows can mend it, as unregularised
            if not isinstance(exc, SingularCovarianceError) or n_samples > stats.n_features:
                return None
            need = stats.n_features + 1
        label = np.asarray(exc.label).tolist()
        rows = "1 row" if n_samples == 1 else f"{n_samples} rows"
        return (
            f"This model holds the statistics of every row it was given (partial_fit, merge, "
            f"forget or from_stats), but it cannot predict while class {label!r} has {rows}: "
            f"its covariance needs at least {need} rows. Give it more rows of class {label!r} "
            "(or use the remedies above)."
        )

    def _underived_attrs(self, stats: Any, exc: BaseException) -> dict[str, Any]:
        waiting = Underived(exc)
        return self._gaussian_attrs(stats, waiting, waiting, waiting)

    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        self._check_solver()
        # scikit-learn refuses a class of one row; a row weighted w >= 2 is w rows
        single = np.flatnonzero((stats.counts == 1) & (stats.weights < 2.0))
        if single.size:
            label = stats.classes[single[0] : single[0] + 1].tolist()[0]
            error = TooFewRows(
                f"y has only 1 sample in class {label}, covariance is ill defined. "
                f"class {label!r} has 1 sample; at least 2 samples are needed to estimate its "
                "covariance (LinearDiscriminantAnalysis and RegularizedDiscriminantAnalysis("
                "alpha=0) use the pooled covariance, which such a class can share)."
            )
            # as SingularCovarianceError names them (for _deferral)
            error.label, error.n_samples = label, 1  # type: ignore[attr-defined]
            raise error
        return self._family_attrs(
            stats,
            shrinkage=self.shrinkage,
            reg_param=float(self.reg_param),
            covariances=extra.get("external"),
        )
