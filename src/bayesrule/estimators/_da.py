"""Shared parts of the Gaussian discriminant analyses."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..models.covariance import NEEDS_FOURTH
from ..models.gaussian import GaussianFamily, SingularCovarianceError
from ..stats import FourthMomentStats, ScatterStats, encode
from ._base import GenerativeClassifier
from ._priors import PRIORS_CONSTRAINT
from .seam import InputSpec

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
    yi = encode(y, stats.classes)
    out = np.empty((stats.n_classes, stats.n_features, stats.n_features))
    for k in range(stats.n_classes):
        est = _fresh(estimator)
        est.fit(np.asarray(X[yi == k], dtype=float) - stats.means[k])  # its return value unused
        cov = getattr(est, "covariance_", None)
        if cov is None:
            raise ValueError(
                f"covariance_estimator {type(estimator).__name__} has no covariance_ "
                "attribute after fit: it must set covariance_ (an array of shape "
                f"({stats.n_features}, {stats.n_features})) in its fit(X)."
            )
        cov = np.asarray(cov, dtype=np.float64)
        if cov.shape != out.shape[1:]:
            raise ValueError(
                f"covariance_estimator {type(estimator).__name__} gave a covariance_ of shape "
                f"{cov.shape}; expected ({stats.n_features}, {stats.n_features}), one row and "
                "column per feature."
            )
        out[k] = cov
    return out


def _fresh(estimator: Any) -> Any:
    """An unfitted copy of ``estimator``: ``clone`` for a scikit-learn estimator, else a deep copy.

    scikit-learn asks of a ``covariance_estimator`` only ``fit(X)`` and
    ``covariance_`` (and fits the object it is given); a plain object
    without ``get_params`` is copied instead, so the user's object is left
    as it was.
    """
    import copy

    from sklearn.base import clone

    if hasattr(estimator, "get_params"):
        try:
            return clone(estimator)
        except (TypeError, RuntimeError):
            pass
    return copy.deepcopy(estimator)


class _GaussianDA(GenerativeClassifier):
    """Shared parts of the three Gaussian discriminant analyses."""

    spec = InputSpec(statistic=ScatterStats, deferred_finite_check=True)
    squares_deviations = True
    #: a stream's first rows (one row, one class) wait for more (see GenerativeClassifier)
    waits_for_rows = True

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
        return self._gaussian_attrs(stats, model, shrinkage, covs)

    def _gaussian_attrs(
        self, stats: ScatterStats, model: Any, shrinkage: Any, covs: Any
    ) -> dict[str, Any]:
        """The fitted attributes of the class Gaussians (or of a model waiting for rows)."""
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
