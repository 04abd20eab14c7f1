"""Shared parts of the Gaussian discriminant analyses."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._util.validation import check_labels
from ..models.covariance import NEEDS_FOURTH
from ..models.gaussian import GaussianFamily, SingularCovarianceError
from ..stats import FourthMomentStats, ScatterStats, encode
from ._base import EstimatorSummariser, GenerativeClassifier
from ._priors import PRIORS_CONSTRAINT
from .seam import InputSpec, Summariser

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))

_SHRINKAGE = [StrOptions({"auto", "ledoit-wolf", "oas"}), Interval(Real, 0, 1, closed="both"), None]
_MOMENTS = [StrOptions({"auto", "second", "fourth"})]


def _external_covariances(
    estimator: Any, X: NDArray[Any], y: NDArray[Any], stats: ScatterStats
) -> _F:
    """Per-class covariances from a scikit-learn covariance estimator.

    It is fitted on each class's rows centred at the class mean, as
    scikit-learn does; it needs the rows, so it only works with ``fit``.
    """
    from sklearn.base import clone

    yi = encode(y, stats.classes)
    out = np.empty((stats.n_classes, stats.n_features, stats.n_features))
    for k in range(stats.n_classes):
        est = clone(estimator).fit(np.asarray(X[yi == k], dtype=float) - stats.means[k])
        if not hasattr(est, "covariance_"):
            raise ValueError(
                f"covariance_estimator {type(estimator).__name__} has no covariance_ "
                "attribute after fit."
            )
        out[k] = est.covariance_
    return out


def _column_pass(est: Any) -> Any:
    """The statistic's ``from_columns`` where a block's statistics are its own, else None.

    The estimator's blocks must be summarised by the statistic itself (not
    wrapped, as RDA-CV's search wraps them) and that statistic must have a
    column pass (:class:`~bayesrule.stats.ScatterStats` and its extension,
    and LDA's pooled statistics, a backend's option).
    """
    declared = est.spec.statistic
    if not (isinstance(declared, type) and issubclass(declared, ScatterStats)):
        return None
    return getattr(est._statistic_type(), "from_columns", None)


class ColumnDASummariser(EstimatorSummariser):
    """A discriminant analysis's one-pass task; it also summarises a block given as its columns.

    A backend whose blocks hold their features column by column (Arrow
    record batches read from Parquet) calls :meth:`column_statistics` with
    the columns as they are, and lays the block out for :meth:`statistics`
    only when it answers None.
    """

    def column_statistics(
        self, columns: Sequence[Any], y: Any, sample_weight: Any = None, classes: Any = None
    ) -> Any:
        """``statistics(X, y, sample_weight, classes)`` of ``X`` the ``columns`` side by side, or None.

        ``columns`` are 1-D float arrays (float32 or float64, one dtype), one
        per feature, of one length. The statistics are those of
        :meth:`statistics` on the columns laid out (the statistic's
        ``from_columns``, e.g. :meth:`bayesrule.stats.ScatterStats.from_columns`).
        None where that call would raise (labels it refuses, a NaN or an
        infinity), where the block has sample weights or no row, or where
        the statistic has no ``from_columns``: the caller then gives
        :meth:`statistics` the block laid out, and its error, naming the row
        and column, is the one raised.
        """
        est = self.estimator
        from_columns = _column_pass(est)
        if from_columns is None or sample_weight is not None or not len(columns):
            return None
        dtypes = {np.asarray(col).dtype for col in columns}
        if len(dtypes) != 1 or next(iter(dtypes)) not in (np.float32, np.float64):
            return None
        y_arr = np.asarray(y)
        n = len(columns[0])
        if y_arr.ndim != 1 or y_arr.shape[0] != n or n == 0:
            return None
        try:
            est._validate_params()
            check_labels(y_arr)
            check_classification_targets(y_arr)
            if classes is not None:
                check_labels(np.asarray(classes), "classes")
            with est._deferred():  # a NaN or an infinity: None below
                stats = from_columns(columns, y_arr, classes=classes)
        except (ValueError, TypeError):
            return None
        # a NaN or infinity of X reaches the means: the laid-out block names its row
        return stats if bool(np.all(np.isfinite(stats.means))) else None


class _GaussianDA(GenerativeClassifier):
    """Shared parts of the three Gaussian discriminant analyses."""

    spec = InputSpec(statistic=ScatterStats, deferred_finite_check=True)

    def input_spec(self) -> InputSpec:
        """As :meth:`GenerativeClassifier.input_spec`; blocks by columns where the statistic takes them.

        A statistic with ``from_columns`` (:class:`~bayesrule.stats.ScatterStats`
        and its extension) summarises a Parquet block from Arrow's column
        buffers (:meth:`ColumnDASummariser.column_statistics`), gathering
        them once in class order instead of laying the block out first.
        """
        spec = super().input_spec()
        by_columns = _column_pass(self) is not None and not spec.frame
        return dataclasses.replace(spec, column_blocks=by_columns)

    def summariser(self, first_block: Any = None, **options: Any) -> Summariser:
        """The block task of :meth:`GenerativeClassifier.summariser`, which also takes
        a block held column by column (:meth:`ColumnDASummariser.column_statistics`)."""
        return ColumnDASummariser(self._block_summariser(first_block))

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Any:
        """Fit as :meth:`GenerativeClassifier.fit`; with a ``covariance_estimator``, in memory.

        A ``covariance_estimator`` (scikit-learn's API) needs the rows, not
        only the statistics: it is fitted on each class's centred rows, and
        the result is neither streamed, merged nor forgotten.
        """
        if getattr(self, "covariance_estimator", None) is None:
            return super().fit(X, y, sample_weight)
        self._validate_params()
        self._check_solver()
        if getattr(self, "solver", None) == "svd":
            raise ValueError(
                f"{self._svd_estimator_message} (bayesrule's solvers give the same model)."
            )
        if getattr(self, "shrinkage", None) not in (None, 0):
            raise ValueError(
                "covariance_estimator and shrinkage parameters are not None. Only one of the "
                "two can be set: covariance_estimator and shrinkage are both set; only one of "
                "the two can be used."
            )
        if sample_weight is not None:
            raise ValueError("covariance_estimator does not support sample_weight.")
        Xv, y_arr, w = self._validate_fit_input(X, y, None, reset=True)
        stats = ScatterStats.from_data(Xv, y_arr, w)
        self._after(Xv, stats.means)
        if stats.n_classes < 2:
            raise ValueError(
                "The number of classes has to be greater than one. Got 1 class. "
                f"{type(self).__name__} needs at least 2 classes; y has 1."
            )
        covs = _external_covariances(self.covariance_estimator, Xv, y_arr, stats)
        self._install(stats, schema=self._schema(X, Xv.shape[1], Xv.dtype), external=covs)
        return self

    def _partial_fit(self, X: Any, y: Any, classes: Any, sample_weight: Any) -> Any:
        if getattr(self, "covariance_estimator", None) is not None:
            raise ValueError(
                "covariance_estimator needs all rows at once; it cannot be used with "
                "partial_fit or merge. Use shrinkage instead."
            )
        return super()._partial_fit(X, y, classes, sample_weight)

    def _ddof(self) -> float:
        return 0.0 if self.bias else 1.0

    def _block_summariser(self, first_block: Any = None) -> Any:
        light = super()._block_summariser(first_block)
        if getattr(self, "moments", None) == "auto" and "stats_" in self.__dict__:
            # later blocks are summarised as the first ones were, as partial_fit does
            fourth = self._statistic_type() is FourthMomentStats
            light.set_params(moments="fourth" if fourth else "second")
        return light

    def _statistic_type(self) -> Any:
        moments = getattr(self, "moments", "second")
        if moments == "auto":
            fitted = self.__dict__.get("stats_")
            if fitted is not None:  # later blocks are summarised as the first ones were
                return type(fitted)
            moments = "fourth" if getattr(self, "shrinkage", None) in NEEDS_FOURTH else "second"
        return FourthMomentStats if moments == "fourth" else ScatterStats

    #: scikit-learn's refusal of a covariance_estimator with solver='svd'
    _svd_estimator_message = ""

    def _check_solver(self) -> None:
        """Refuse shrinkage with solver='svd', as scikit-learn does (NotImplementedError).

        bayesrule's solvers give the same model; the refusal keeps code that
        runs here running with scikit-learn.
        """
        if getattr(self, "solver", None) == "svd" and getattr(self, "shrinkage", None) is not None:
            raise NotImplementedError(
                "shrinkage not supported with 'svd' solver. Set solver='eigen' to use "
                f"shrinkage={self.shrinkage!r} (bayesrule's solvers give the same model)."
            )


#: The parameters every per-class Gaussian analysis (QDA, RDA, RDA-CV) has.
_CLASS_GAUSSIAN_PARAMS: dict = {
    "priors": PRIORS_CONSTRAINT,
    "store_covariance": ["boolean"],
    "tol": [Interval(Real, 0, None, closed="left")],
    "bias": ["boolean"],
}


class _ClassGaussianDA(_GaussianDA):
    """A Gaussian per class with its own covariance: what QDA, RDA and RDA-CV share.

    A subclass declares its parameters and derives its model with
    :meth:`_family_attrs`, naming the covariance hyperparameters of
    :meth:`bayesrule.models.GaussianFamily.from_stats` it sets. Fitted
    attributes: ``means_``, ``shrinkage_``, ``covariance_`` (with
    ``store_covariance``), ``rotations_`` and ``scalings_`` (on use).
    """

    #: the remedy a singular class covariance suggests, in the estimator's parameters
    _remedy = "regularise the class covariances"

    def _family_attrs(self, stats: ScatterStats, **hyper: Any) -> dict[str, Any]:
        """``_model`` and the fitted attributes from ``GaussianFamily.from_stats(stats, **hyper)``."""
        try:
            model = GaussianFamily.from_stats(
                stats,
                ddof=self._ddof(),
                tol=float(self.tol),
                constant_unit_scale=bool(self.bias),
                **hyper,
            )
        except SingularCovarianceError as exc:
            raise SingularCovarianceError(
                exc.detail,
                self._remedy,
                lead=self._singular_lead(exc.label, exc.n_samples, stats.n_features),
                label=exc.label,
                n_samples=exc.n_samples,
            ) from None
        present = stats.weights > 0
        covs = np.zeros_like(stats.scatter)
        covs[present] = model.covariances
        shrinkage = np.zeros(stats.n_classes)
        shrinkage[present] = model.shrinkage
        attrs: dict[str, Any] = {
            "_model": model,
            "means_": stats.means.copy(),
            "shrinkage_": shrinkage,
            "_covs_": covs,
        }
        if self.store_covariance:
            attrs["covariance_"] = covs
        return attrs

    def _singular_lead(self, label: Any, n_samples: int | None, n_features: int) -> str:
        """scikit-learn's wording for a singular class covariance; none where it has no such model."""
        return ""

    def _eigen(self) -> tuple[list[Any], list[Any]]:
        cached = self.__dict__.get("_eigen_cache")
        if cached is None or cached[0] is not self._covs_:
            rotations: list[Any] = []
            scalings: list[Any] = []
            # a device model's covariances: their host copy (the eigensolver is NumPy's)
            for k, cov in enumerate(self._host_array("_covs_")):
                if self.stats_.weights[k] <= 0:
                    rotations.append(np.zeros((cov.shape[0], 0)))
                    scalings.append(np.zeros(0))
                    continue
                lam, V = eigh(cov, driver="evr")
                rotations.append(V[:, ::-1])
                scalings.append(lam[::-1])
            cached = (self._covs_, rotations, scalings)
            self.__dict__["_eigen_cache"] = cached
        return cached[1], cached[2]

    @property
    def rotations_(self) -> list[Any]:
        """Eigenvectors of each class covariance, by decreasing eigenvalue (computed on use)."""
        check_is_fitted(self, "_covs_")
        return [r.astype(self._dtype(), copy=False) for r in self._eigen()[0]]

    @property
    def scalings_(self) -> list[Any]:
        """Eigenvalues of each class covariance, decreasing (computed on use)."""
        check_is_fitted(self, "_covs_")
        return [s.astype(self._dtype(), copy=False) for s in self._eigen()[1]]
