"""Shared parts of the naive Bayes estimators.

The derivations (smoothing, variances, bandwidths) live with the class
models, as ``Family.from_stats`` in :mod:`bayesrule.models`; what is here is
the estimator side: input checks and the prior parameters.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.utils._param_validation import Interval

from .._util import products
from .._util.row_sample import sample_runs
from .._util.validation import check_finite, plain_rows
from ..models import check_alpha
from ..models import feature_name as _name
from ._predict import all_finite
from ._priors import PRIORS_CONSTRAINT, resolve_priors
from ._ranges import warn_out_of_range
from ._updatable import UpdatableMixin
from .seam import InputSpec

_F = NDArray[np.float64]

KINDS = ("gaussian", "kernel", "bernoulli", "categorical", "poisson")


def per_class(values: Any, present: NDArray[np.bool_], fill: Any = np.nan) -> _F:
    """Rows of the present classes placed into an array over every class, ``fill`` elsewhere."""
    values = np.asarray(values, dtype=np.float64)
    if values.shape[0] == present.size:
        return values.copy()
    out = np.full((present.size, *values.shape[1:]), fill, dtype=np.float64)
    out[present] = values
    return out


def _check_nonnegative(X: Any, who: str, names: Any = None, what: str = "counts") -> None:
    """ValueError naming the first column holding a negative value."""
    data = X.data if sp.issparse(X) else X
    with np.errstate(invalid="ignore"):
        neg = data < 0
    if not neg.any():
        return
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        i = int(np.flatnonzero(X.data < 0)[0])
        j, v = int(X.indices[i]), X.data[i]
    else:
        r, j = (int(t[0]) for t in np.nonzero(neg))
        v = X[r, j]
    raise ValueError(
        f"Negative values in data passed to {who} (input X). The first is in column "
        f"{_name(names, j)!r} ({float(v)!r}); {what} must be non-negative."
    )


# ---------------------------------------------------------------------------------
# shared estimator parts
# ---------------------------------------------------------------------------------
class _BaseNB(UpdatableMixin):
    """Naive Bayes: NaN means missing, and the class models are independent per feature."""

    #: NaN is missing; as scikit-learn's, one class fits (and is then always
    #: predicted); non-finite values are found from the results (see InputSpec)
    spec = InputSpec(allow_nan=True, min_classes=1, deferred_finite_check=True)

    #: no decision_function, as scikit-learn's naive Bayes (see PredictMixin)
    has_decision_function = False
    #: an update whose rows leave a class without an observed value of a feature (a
    #: first row with a NaN, streamed one row at a time) keeps its statistics and waits
    #: for later rows, as a class without rows enough does (``TooFewRows``)
    waits_for_rows = True
    refusals = {
        "decision_function": "naive Bayes has no decision_function, as scikit-learn's has "
        "none (so that CalibratedClassifierCV and other meta-estimators use predict_proba); "
        "use predict_log_proba, or predict_joint_log_proba for log pi_k + log p_k(x)",
    }

    def _feature_names(self) -> Any:
        return getattr(self, "feature_names_in_", None)

    #: Rows to predict that scikit-learn's ``validate_data`` would return unchanged and
    #: without a warning (:func:`~bayesrule._util.validation.plain_rows`) skip it: the
    #: count models, whose prediction is one product and whose own value checks follow.
    _plain_rows_pass = False

    def _numeric_X(self, X: Any, *, reset: bool) -> Any:
        if (
            self._plain_rows_pass
            and not reset
            and "feature_names_in_" not in self.__dict__
            and plain_rows(X, self.__dict__.get("n_features_in_"))
        ):
            return X
        return super()._numeric_X(X, reset=reset)

    def _validate_X(self, X: Any, *, reset: bool, fitting: bool = False) -> Any:
        Xv = self._numeric_X(X, reset=reset)
        if fitting and self.spec.sign_from_stats:
            return Xv  # the statistics' own pass settles it (see _stats_from)
        return self._check_values(Xv)

    def _check_values(self, Xv: Any) -> Any:
        """The value checks of :meth:`_validate_X` on numeric ``Xv``."""
        values = Xv.data if sp.issparse(Xv) else Xv
        # One fast reduction decides the common case: NaN propagates through
        # min, and min gives the sign. +inf is left to the deferred check on
        # the results (it always reaches them), which saves a pass.
        lo = float(np.min(values, initial=0.0))
        hi = 0.0 if self.spec.inf_reaches_results else float(np.max(values, initial=0.0))
        self._check_sign(Xv, lo, hi)
        return Xv

    def _stats_from(self, Xv: Any, y: Any, w: Any, classes: Any) -> Any:
        stats = super()._stats_from(Xv, y, w, classes)  # refuses infinity (the sums carry it)
        if self.spec.sign_from_stats:
            # the lower bounds are the least value of each feature over the rows
            # of positive weight (a NaN is missing, an infinity was refused)
            lower = np.asarray(stats.lower)
            if np.any(lower < 0) or not np.all(w > 0):
                values = Xv.data if sp.issparse(Xv) else Xv
                if not float(np.nanmin(values, initial=0.0)) >= 0:
                    _check_nonnegative(
                        Xv, type(self).__name__, self._feature_names(), self.spec.values
                    )
        return stats

    #: Data to predict have their sign checked with the product (dense wide
    #: float64 rows, :func:`~bayesrule._util.products.fusable`): the
    #: estimators whose prediction multiplies the rows themselves.
    _fused_sign = False

    def _input(self, X: Any, *, reset: bool) -> Any:
        """As the base's; with :attr:`_fused_sign`, wide dense rows to predict skip the
        minimum's pass: the product takes it block by block (checked in :meth:`_after`,
        before the range warning, so errors and warnings come as they would)."""
        products.track_low(None)
        if reset or not self._fused_sign or not self.spec.positive:
            return super()._input(X, reset=reset)
        Xv = self._numeric_X(X, reset=False)
        if not products.fusable(Xv, int(self.classes_.size)):
            Xv = self._prepare_X(self._check_values(Xv))
            self._warn_out_of_range(Xv)
            return Xv
        products.track_low(Xv, sample=sample_runs(Xv.shape[0]))
        return Xv

    def _after(self, Xv: Any, result: Any) -> None:
        self._after_finite(Xv, result)

    def _after_finite(self, Xv: Any, result: Any) -> bool:
        """:meth:`_after`; True where it found every entry of ``result`` finite (one sum)."""
        if self._fused_sign and products.tracking(Xv):
            low, seen = products.tracked_low()
            self._check_sign(Xv, float(np.min(Xv, initial=0.0)) if low is None else low)
            warn_out_of_range(self, Xv, seen)
        if not self.spec.inf_reaches_results:
            return False  # _validate_X has already refused infinity; NaN is missing
        if all_finite(result):
            return True  # one sum of the results, not a temporary of their size
        values = Xv.data if sp.issparse(Xv) else Xv
        super()._after(np.atleast_2d(values), result)
        return False

    def _check_sign(self, Xv: Any, lo: float, hi: float = 0.0) -> None:
        """Refuse infinity (when ``lo``/``hi`` are not finite) and, for counts, negative values."""
        values = Xv.data if sp.issparse(Xv) else Xv
        if not (np.isfinite(lo) and np.isfinite(hi)):
            check_finite(np.atleast_2d(values), "X", allow_nan=True)
        if self.spec.positive and not lo >= 0:
            _check_nonnegative(Xv, type(self).__name__, self._feature_names(), self.spec.values)


class _DiscreteNB(_BaseNB):
    """Priors spelled as scikit-learn's discrete naive Bayes: ``fit_prior`` and ``class_prior``."""

    #: scikit-learn says the same of its discrete naive Bayes: on the checks'
    #: Gaussian blobs a count or binary model is not expected to reach 83%
    spec = _BaseNB.spec.replace(poor_score=True)

    def _resolve_priors(self, stats: Any) -> _F:
        K = stats.n_classes
        if self.class_prior is not None:
            return resolve_priors(self.class_prior, stats.classes, name="class_prior")
        if self.fit_prior:
            return np.asarray(stats.weights / stats.weights.sum(), dtype=float)
        return np.full(K, 1.0 / K)

    def _alpha(self, n_features: int) -> Any:
        """``alpha`` checked once per derivation (so a too-small alpha warns once)."""
        return check_alpha(self.alpha, self.force_alpha, n_features, self._feature_names())

    def _prior_attrs(self, priors: _F) -> dict[str, Any]:
        with np.errstate(divide="ignore"):
            return {"class_log_prior_": np.log(priors)}


_ALPHA = [Interval(Real, 0, None, closed="left"), "array-like"]
_PRIOR_PARAMS: dict = {"fit_prior": ["boolean"], "class_prior": PRIORS_CONSTRAINT}
