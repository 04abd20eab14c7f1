"""Gaussian naive Bayes."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets

from .._util.validation import check_labels
from ..models.diagonal import DiagonalGaussian, variance_epsilon
from ..stats import DiagonalStats, as_classes
from ._base import EstimatorSummariser
from ._nb import _F, _BaseNB, per_class
from ._priors import PRIORS_CONSTRAINT
from .registry import register
from .seam import Summariser


@register("gnb")
class GaussianNB(_BaseNB):
    r"""Gaussian naive Bayes: per class, independent normal features.

    A drop-in for ``sklearn.naive_bayes.GaussianNB`` (same parameters,
    fitted attributes, predictions and probabilities), fitted from
    :class:`bayesrule.stats.DiagonalStats`. ``var_smoothing`` is applied only
    when the parameters are derived, from the merged statistics, so
    ``partial_fit`` and ``merge`` give exactly the model ``fit`` gives
    (scikit-learn's ``partial_fit`` fixes ``epsilon_`` on the first batch).
    NaN entries are missing. The class models are
    :meth:`bayesrule.models.DiagonalGaussian.from_stats`.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Class priors; by default the weighted class proportions.
    var_smoothing : float, default=1e-9
        Added to every variance: ``var_smoothing`` times the largest
        per-feature (biased, weighted) variance of all the data.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Sum of sample weights per class.
    class_prior_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
        The same as ``class_prior_``.
    theta_ : ndarray of shape (n_classes, n_features)
        Per-class means (over the observed entries); 0 for a class without data.
    var_ : ndarray of shape (n_classes, n_features)
        Per-class (biased) variances plus ``epsilon_`` (``epsilon_`` alone
        for a class without data, as scikit-learn).
    epsilon_ : float
    stats_ : DiagonalStats
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    References
    ----------
    T. Hastie, R. Tibshirani and J. Friedman, The Elements of Statistical
    Learning, 2nd ed., section 6.6.3. T. F. Chan, G. H. Golub and R. J.
    LeVeque, "Updating formulae and a pairwise algorithm for computing sample
    variances", COMPSTAT 1982.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.naive_bayes import GaussianNB as SklearnGaussianNB
    >>> from bayesrule import GaussianNB
    >>> X, y = load_iris(return_X_y=True)
    >>> gnb = GaussianNB().fit(X, y)
    >>> gnb.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> print(f"{gnb.score(X, y):.2f}")
    0.96
    >>> bool((gnb.predict(X) == SklearnGaussianNB().fit(X, y).predict(X)).all())
    True

    Fitting in blocks gives the model of one fit:

    >>> stream = GaussianNB()
    >>> for start in range(0, 150, 50):
    ...     stream = stream.partial_fit(X[start:start + 50], y[start:start + 50], classes=[0, 1, 2])
    >>> bool(np.allclose(stream.theta_, gnb.theta_) and np.allclose(stream.var_, gnb.var_))
    True
    """

    spec = _BaseNB.spec.replace(
        statistic=DiagonalStats,
        column_blocks=True,
        strict_priors=True,
        input_dtype_attrs=("theta_", "var_", "epsilon_", "class_prior_", "priors_", "class_count_"),
        input_dtype_outputs=True,
    )
    _parameter_constraints: dict = {
        "priors": PRIORS_CONSTRAINT,
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, priors: ArrayLike | None = None, var_smoothing: float = 1e-9) -> None:
        self.priors = priors
        self.var_smoothing = var_smoothing

    def summariser(self, first_block: Any = None, **options: Any) -> Summariser:
        """The block task of :meth:`~GenerativeClassifier.summariser`, which also takes
        a block held column by column (:meth:`ColumnSummariser.column_statistics`)."""
        return ColumnSummariser(self._block_summariser(first_block))

    def _derive(self, stats: DiagonalStats, priors: _F, **extra: Any) -> dict[str, Any]:
        model = DiagonalGaussian.from_stats(
            stats, var_smoothing=self.var_smoothing, feature_names=self._feature_names()
        )
        eps = variance_epsilon(stats, self.var_smoothing)
        return {
            "theta_": stats.means.copy(),
            "var_": per_class(model.var, np.asarray(stats.weights > 0), fill=eps),
            "epsilon_": eps,
            "class_prior_": priors,
            "_model": model,
        }


class ColumnSummariser(EstimatorSummariser):
    """GaussianNB's one-pass task; it also summarises a block given as its feature columns.

    A backend whose blocks hold their features column by column (Arrow
    record batches read from Parquet) calls :meth:`column_statistics` with
    the columns as they are, and lays the block out for :meth:`statistics`
    only when it answers None.
    """

    def column_statistics(
        self, columns: Sequence[Any], y: Any, sample_weight: Any = None, classes: Any = None
    ) -> DiagonalStats | None:
        """``statistics(X, y, sample_weight, classes)`` of ``X`` the ``columns`` side by side, or None.

        ``columns`` are 1-D float arrays (float32 or float64, one dtype), one
        per feature, of one length. The statistics are those of
        :meth:`statistics` on the columns laid out (see
        :meth:`bayesrule.stats.DiagonalStats.from_columns`). None where that
        call would raise or warn (labels it refuses, sample weights, an
        infinite value, no row), so that the caller gives it the block laid
        out and its error, naming the row, is the one raised.
        """
        if sample_weight is not None or not len(columns):
            return None
        dtypes = {np.asarray(col).dtype for col in columns}
        if len(dtypes) != 1 or next(iter(dtypes)) not in (np.float32, np.float64):
            return None
        y_arr = np.asarray(y)
        n = len(columns[0])
        if y_arr.ndim != 1 or y_arr.shape[0] != n or n == 0:
            return None
        try:
            self.estimator._validate_params()
            check_labels(y_arr)
            if y_arr.dtype.kind not in "biu":
                # integer labels are always a classification target (binary or
                # multiclass); scikit-learn's check costs ~3 ms a block
                check_classification_targets(y_arr)
            if classes is not None:
                check_labels(np.asarray(classes), "classes")
            c = as_classes(y_arr if classes is None else classes)
            with np.errstate(invalid="ignore", over="ignore"):  # an infinity: None below
                stats = DiagonalStats.from_columns(columns, y_arr, classes=c)
        except (ValueError, TypeError):
            return None
        if not (np.isfinite(stats.means).all() and np.isfinite(stats.m2).all()):
            return None  # an infinity: statistics names its row
        return stats
