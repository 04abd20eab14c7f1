"""Friedman's regularized discriminant analysis."""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any, ClassVar

from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from ..models import shrinkage_scale
from ._da import _CLASS_GAUSSIAN_PARAMS, _F, _ClassGaussianDA
from ._updatable import UpdatableMixin
from .registry import register


@register("rda")
class RegularizedDiscriminantAnalysis(_ClassGaussianDA, UpdatableMixin):
    r"""Friedman's regularized discriminant analysis, between QDA and LDA.

    Each class covariance is blended with the pooled one and then shrunk
    towards a scaled identity in coordinates relative to the data (see
    ``target``):

    ``Sigma_k(alpha) = alpha Sigma_k + (1 - alpha) Sigma_pooled``,
    ``Sigma_k(alpha, gamma) = (1 - gamma) Sigma_k(alpha) + gamma tr(Sigma_k(alpha))/p I``,

    then given a ridge common to every class, relative to the data's scale:
    ``(1 - ridge) Sigma_k(alpha, gamma) + ridge t I`` with ``t = tr(Sigma_pooled)/p``
    the average within-class variance, and then, with ``reg_param``,
    scikit-learn QDA's ridge in the features' units:
    ``(1 - reg_param) Sigma_k + reg_param I``.

    The ``gamma`` and ``ridge`` steps are made on the covariances of
    ``z_j = x_j / s_j`` and mapped back: in the features' units the targets
    are the diagonals ``(tr(D^-1 Sigma D^-1)/p) D^2`` and ``t_z D^2``
    (``D = diag(s)``). By default (``target='pooled'``) ``s_j`` is feature
    ``j``'s pooled within-class standard deviation, so the scaled identity
    of ``z`` is ``diag(pooled variances)`` in the features' units and
    ``ridge`` is scikit-learn's ``reg_param`` on features standardised by
    their pooled variances. The model then does not depend on any
    feature's unit: rescaling each feature by its own factor changes no
    prediction (without ``reg_param``, which is in the features' units; a
    feature that is 0 in every training row has no unit to read and takes
    the largest). The scale is a function of the statistics, so ``merge``,
    ``partial_fit`` and ``forget`` stay exact. With ``target='range'``
    (:class:`RegularizedDiscriminantAnalysisCV`'s default) ``s_j`` is the
    feature's range in the training data (``stats_.upper - stats_.lower``;
    a constant feature's magnitude, or 1): as free of units, and better on
    images, where a rarely lit pixel has a tiny pooled variance but the
    range of any pixel (RDA-CV on MNIST: 0.9616 with the range, 0.9165
    pooled); but the range is an envelope of every row seen, so ``forget``
    is refused with it when ``gamma`` or ``ridge`` is set. To reproduce
    RDA-CV's choice, pass its ``alpha_``, ``gamma_``, ``ridge_`` and
    ``target``. ``target='identity'`` (``s = 1``) is Friedman's scaled
    identity in the features' own units, this estimator's default before
    (a model file written before ``target`` existed loads with it, as it
    was fitted): free of a unit common to every feature, not of each
    feature's own. With ``gamma=0`` and ``ridge=0`` the target plays no
    part.

    The default ``ridge=0.1`` makes every class covariance regular: its
    eigenvalues are at least a tenth of the average within-class variance
    (in the coordinates of ``target``), so a class with a constant
    feature, collinear features or fewer rows than features (the border
    pixels of images) is fitted, not refused, and the model stays free of
    the features' units. ``alpha=0.9`` and ``ridge=0.1`` were chosen on
    tables and images (see ``docs/defaults.md``); ``alpha=0.5, ridge=0``
    were the defaults before (a model file written before ``ridge``
    existed loads with ``ridge=0``), and ``ridge=0`` is Friedman's model as
    he wrote it.

    ``alpha=1, gamma=0, ridge=0`` is :class:`QuadraticDiscriminantAnalysis`
    (with the same ``reg_param``) and ``alpha=0, gamma=0, ridge=0,
    reg_param=0`` is :class:`LinearDiscriminantAnalysis` (when the pooled
    covariance has full rank).

    Parameters
    ----------
    alpha : float in [0, 1], default=0.9
        Weight of the class's own covariance. The default leans towards QDA
        (tables whose classes differ in shape lose 7 to 11 points at
        ``alpha=0.5``) and keeps a tenth of the pooled covariance, which
        steadies a class of few rows (``alpha=0.5`` was the default before).
    gamma : float in [0, 1], default=0.0
        Shrinkage towards ``(tr/p) I`` (a class's own scale), in the
        coordinates chosen by ``target``.
    ridge : float in [0, 1], default=0.1
        Shrinkage of every class towards the same ``t I``, ``t`` the average
        within-class variance (``tr(Sigma_pooled)/p``), in the coordinates of ``target``:
        scikit-learn QDA's ``reg_param`` measured in the data's own scale, so
        that changing the unit of any feature changes nothing (with the
        default ``target``, scikit-learn's ``reg_param`` on features
        standardised by their pooled variances). Friedman's ``gamma`` shrinks
        each class towards its own scale instead, which is not the same when
        classes differ in spread: on MNIST (whose 1s vary much less than its
        0s) ``alpha=1, ridge=0.7`` (``target='identity'``) scores 0.9616
        (test set) where ``alpha=1, gamma=0.2`` scores 0.934. The default
        0.1 keeps every class regular (see above); 0 gives Friedman's model
        as he wrote it, which refuses a singular class.
    reg_param : float in [0, 1], default=0.0
        After the blend and the shrinkage, ``Sigma_k <- (1 - reg_param)
        Sigma_k + reg_param I`` (a ridge in the features' units, as
        scikit-learn's QDA); any ``reg_param > 0`` makes every class regular.
    priors : array-like of shape (n_classes,), default=None
    store_covariance : bool, default=False
    tol : float, default=1e-4
        A class covariance is singular (an error naming the class) when a
        feature has no variance in it or when its correlation matrix has an
        eigenvalue at most ``tol`` (as in
        :class:`QuadraticDiscriminantAnalysis`; no units).
    bias : bool, default=False
        Maximum-likelihood (True) or unbiased (False) class and pooled covariances.
    target : {'pooled', 'range', 'identity'}, default='pooled'
        The coordinates ``x_j / s_j`` in which ``gamma`` and ``ridge`` shrink
        towards a scaled identity: ``s_j`` the pooled within-class standard
        deviation (free of every feature's unit, ``forget`` exact), the
        training range (free of units too, better on images; ``forget``
        refused with ``gamma`` or ``ridge``) or 1 (the features' own units,
        Friedman's and the earlier default). See above.

    Attributes
    ----------
    classes_, priors_, class_count_, means_, stats_, n_features_in_
    covariance_ : ndarray of shape (n_classes, n_features, n_features)
        Only with ``store_covariance=True``.
    rotations_, scalings_ : lists of ndarray
        Eigenvectors and eigenvalues of each class covariance (computed on use).
    shrinkage_ : ndarray of shape (n_classes,)
        ``gamma`` for each class with data.

    References
    ----------
    J. H. Friedman, "Regularized discriminant analysis", Journal of the
    American Statistical Association 84(405), 1989.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from bayesrule import RegularizedDiscriminantAnalysis
    >>> X, y = load_iris(return_X_y=True)
    >>> rda = RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.1).fit(X, y)
    >>> rda.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> print(f"{rda.score(X, y):.2f}")
    0.98
    >>> rda.shrinkage_
    array([0.1, 0.1, 0.1])

    Removing rows gives the model of the rows that remain:

    >>> rest = RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.1).fit(X[:120], y[:120])
    >>> rda = rda.forget(X[120:], y[120:])
    >>> bool(np.allclose(rda.predict_proba(X), rest.predict_proba(X)))
    True
    """

    #: a model file from before ``target`` (``ridge``) existed was fitted with
    #: the identity (without a ridge)
    params_before_added: ClassVar[Mapping[str, Any]] = {"target": "identity", "ridge": 0.0}

    _parameter_constraints: dict = {
        **_CLASS_GAUSSIAN_PARAMS,
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "gamma": [Interval(Real, 0, 1, closed="both")],
        "ridge": [Interval(Real, 0, 1, closed="both")],
        "reg_param": [Interval(Real, 0, 1, closed="both")],
        "target": [StrOptions({"pooled", "identity", "range"})],
    }
    _remedy = (
        "set ridge > 0 (the default is 0.1), gamma > 0 (e.g. gamma=0.05), reg_param > 0 "
        "or lower alpha"
    )

    def __init__(  # noqa: D107
        self,
        *,
        alpha: float = 0.9,
        gamma: float = 0.0,
        ridge: float = 0.1,
        reg_param: float = 0.0,
        priors: ArrayLike | None = None,
        store_covariance: bool = False,
        tol: float = 1.0e-4,
        bias: bool = False,
        target: str = "pooled",
    ) -> None:
        self.alpha = alpha
        self.gamma = gamma
        self.ridge = ridge
        self.reg_param = reg_param
        self.priors = priors
        self.store_covariance = store_covariance
        self.tol = tol
        self.bias = bias
        self.target = target

    def forget(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """As :meth:`GenerativeClassifier.forget`; refused with ``target='range'``.

        The range is an envelope of every row seen, which forgetting cannot
        shrink, so the model would not be the one fitted without the rows.
        """
        if self.target == "range" and (float(self.gamma) > 0 or float(self.ridge) > 0):
            raise ValueError(
                "forget cannot remove rows from a model with target='range' and gamma or "
                "ridge > 0: the training range it is scaled by cannot be shrunk; refit "
                "without the rows, or use target='pooled' (the default) or 'identity'."
            )
        return super().forget(X, y, sample_weight=sample_weight)

    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        return self._family_attrs(
            stats,
            alpha=float(self.alpha),
            shrinkage=float(self.gamma),
            ridge=float(self.ridge),
            reg_param=float(self.reg_param),
            target_scale=shrinkage_scale(stats, str(self.target)),
        )
