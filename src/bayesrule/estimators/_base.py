"""The estimator layer shared by every bayesrule classifier.

A subclass says how to turn data into statistics (``_stats_type``), how to
derive its parameters from statistics (``_derive``), the log density of each
class (``_class_log_density``), and how to draw from one class
(``_sample_class``). Everything else — fitting at once, in chunks or by
merging, priors, Bayes' rule, posteriors, densities and sampling — is here,
written once.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_finite, check_lengths, check_priors, check_sample_weight
from ..stats._common import as_classes

__all__ = ["GenerativeClassifier", "as_generator"]


def as_generator(random_state: Any) -> np.random.Generator:
    """A ``numpy.random.Generator`` from None, an int, a Generator or a RandomState."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32 - 1, dtype=np.uint64))
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    raise ValueError(
        f"random_state must be None, an int, a numpy Generator or RandomState; got {random_state!r}."
    )


class GenerativeClassifier(ClassifierMixin, BaseEstimator):
    """Base class: Bayes' rule over per-class generative models built from statistics.

    Subclasses provide

    * ``_stats_type``: a statistics class with ``empty``, ``from_data`` and
      ``merge`` (see :mod:`bayesrule.stats`);
    * ``_derive(stats, priors) -> dict``: fitted attributes from statistics
      (raise ``ValueError`` when they cannot be derived);
    * ``_class_log_density(X) -> (n, K)``: ``log p_k(x)`` per class;
    * ``_sample_class(k, n, rng) -> (n, p)``: draws from class ``k``.

    Classes whose statistics hold no weight yet (declared to ``partial_fit``
    but not seen) have probability zero.
    """

    _stats_type: Any = None
    #: whether NaN in X means "missing" (naive Bayes) or is an error
    _allow_nan: bool = False
    #: minimum number of classes ``fit`` requires
    _min_classes: int = 2
    #: Look for NaN and infinity in the results (statistics, scores) instead of
    #: in X first, and search X for the offending row only when a result is
    #: not finite: non-finite input always reaches the results of these
    #: models, and this saves a pass over the data.
    _deferred_finite_check: bool = False
    #: whether scipy.sparse CSR input is accepted (and kept sparse)
    _sparse: bool = False

    # ------------------------------------------------------------------ input
    def _numeric_X(self, X: Any, *, reset: bool) -> Any:
        """X as a float array (or CSR matrix), feature count and names checked; no value checks."""
        try:
            return validate_data(
                self,
                X,
                reset=reset,
                accept_sparse="csr" if self._sparse else False,
                dtype=[np.float64, np.float32],
                ensure_all_finite=False,
            )
        except ValueError as exc:
            msg = str(exc)
            if "convert" in msg or "could not" in msg or "dtype" in msg:
                raise ValueError(f"X must be numeric: {msg}") from None
            raise

    def _validate_X(self, X: Any, *, reset: bool) -> NDArray[Any]:
        Xv = self._numeric_X(X, reset=reset)
        if not self._deferred_finite_check:
            check_finite(Xv, "X", allow_nan=self._allow_nan)
        return Xv

    def _after(self, Xv: NDArray[Any], result: NDArray[Any]) -> None:
        """With a deferred check: raise the row-naming error if ``result`` is not finite."""
        if self._deferred_finite_check and not np.all(np.isfinite(result)):
            check_finite(Xv, "X", allow_nan=self._allow_nan)

    def _deferred(self) -> Any:
        """Quiet NumPy's invalid/overflow warnings where :meth:`_after` raises on them anyway.

        With a deferred check, a NaN or infinity in ``X`` flows into the
        results and is then reported by row and column; the RuntimeWarnings
        it raised on the way would only be noise before that error.
        """
        if self._deferred_finite_check:
            return np.errstate(invalid="ignore", over="ignore")
        return contextlib.nullcontext()

    def _stats_from(self, Xv: NDArray[Any], y: NDArray[Any], w: NDArray[Any], classes: Any) -> Any:
        with self._deferred():
            stats = self._stats_type.from_data(Xv, y, w, classes=classes)
        if self._deferred_finite_check:
            # every statistic with means carries a NaN or infinity of X into them
            means = getattr(stats, "means", None)
            self._after(Xv, means if means is not None else np.array([np.nan]))
        return stats

    def _validate_fit_input(
        self, X: Any, y: Any, sample_weight: Any, *, reset: bool
    ) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]]:
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        Xv = self._validate_X(X, reset=reset)
        n = Xv.shape[0]
        y_arr = np.asarray(y)
        if y_arr.ndim == 2 and y_arr.shape[1] == 1:
            import warnings

            from sklearn.exceptions import DataConversionWarning

            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; ravelling it.",
                DataConversionWarning,
                stacklevel=3,
            )
            y_arr = y_arr.ravel()
        if y_arr.ndim != 1:
            raise ValueError(f"y must be 1-dimensional; got shape {y_arr.shape}.")
        sw = (
            None
            if sample_weight is None or np.isscalar(sample_weight)
            else np.asarray(sample_weight)
        )
        check_lengths(n, y=y_arr, sample_weight=sw)
        if n == 0:
            raise ValueError("X has 0 samples; at least one is required.")
        check_classification_targets(y_arr)
        w = check_sample_weight(sample_weight, Xv.shape[0])
        return Xv, y_arr, w

    # ------------------------------------------------------------------- fit
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Any:
        """Fit the model from ``(X, y)`` in one pass over the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative frequency weights: an integer weight ``w`` counts as
            ``w`` copies of the row.

        Returns
        -------
        self
        """
        self._validate_params()
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=True)
        classes = as_classes(y_arr)
        if classes.size < self._min_classes:
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_classes} classes to "
                f"classify; y has {classes.size} class ({classes.tolist()})."
            )
        self._install(self._stats_from(Xv, y_arr, w, classes))
        return self

    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> Any:
        """Update the model with one more block of data.

        The result equals ``fit`` on all the blocks seen so far (to rounding).
        ``classes`` lists every label the stream will contain; on the first
        call it defaults to the labels of that block. A block with a label
        outside the known classes raises ``ValueError``. A call that fails
        leaves the model exactly as it was.
        """
        saved = dict(self.__dict__)
        try:
            return self._partial_fit(X, y, classes, sample_weight)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _partial_fit(self, X: Any, y: Any, classes: Any, sample_weight: Any) -> Any:
        first = not hasattr(self, "stats_")
        if first:
            self._validate_params()
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=first)
        if first:
            declared = as_classes(y_arr if classes is None else classes)
            if declared.size < self._min_classes and classes is not None:
                raise ValueError(
                    f"classes must list at least {self._min_classes} labels; got {declared.tolist()}."
                )
            stats = self._stats_type.empty(declared, Xv.shape[1])
        else:
            if classes is not None and not np.array_equal(as_classes(classes), self.classes_):
                raise ValueError(
                    f"classes={as_classes(classes).tolist()} is not the same as the classes "
                    f"of the first call to partial_fit, {self.classes_.tolist()}."
                )
            stats = self.stats_
        new = stats.merge(self._stats_from(Xv, y_arr, w, stats.classes))
        self._install(new)
        return self

    def merge(self, other: GenerativeClassifier) -> Any:
        """A new model equal to one fitted on the training data of both.

        ``other`` must be a fitted estimator of the same type with the same
        number of features; its parameters are ignored (``self``'s are kept).
        Classes are united.
        """
        check_is_fitted(self)
        if type(other) is not type(self):
            raise ValueError(f"cannot merge a {type(self).__name__} with a {type(other).__name__}.")
        check_is_fitted(other)
        if other.n_features_in_ != self.n_features_in_:
            raise ValueError(
                f"cannot merge models with different numbers of features: expected "
                f"{self.n_features_in_} features, got {other.n_features_in_}."
            )
        merged = self.stats_.merge(other.stats_)
        new = clone(self)
        new.n_features_in_ = self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            new.feature_names_in_ = self.feature_names_in_
        new._install(merged)
        return new

    @classmethod
    def from_stats(cls, stats: Any, **params: Any) -> Any:
        """Build a fitted estimator directly from statistics (e.g. a distributed fit)."""
        est = cls(**params)
        est._validate_params()
        est.n_features_in_ = stats.n_features
        est._install(stats)
        return est

    def _install(self, stats: Any, **extra: Any) -> None:
        """Derive every fitted attribute from ``stats``, then set them all at once.

        Nothing is changed on the estimator unless the derivation succeeds.
        """
        present = stats.weights > 0
        if not present.any():
            raise ValueError(
                "every sample weight is zero: no sample has positive weight, nothing can be fitted."
            )
        priors = self._resolve_priors(stats)
        attrs = self._derive(stats, priors, **extra)
        attrs.update(
            stats_=stats,
            classes_=stats.classes,
            priors_=priors,
            class_count_=stats.weights.copy(),
            n_samples_seen_=int(stats.counts.sum()),
        )
        for name, value in attrs.items():
            setattr(self, name, value)

    def _resolve_priors(self, stats: Any) -> NDArray[np.float64]:
        """Class priors: the ``priors`` parameter, else the weighted class proportions.

        Subclasses whose prior parameters are spelled differently (naive
        Bayes' ``fit_prior`` / ``class_prior``) override this.
        """
        if self.priors is None:
            return np.asarray(stats.weights / stats.weights.sum(), dtype=float)
        return check_priors(self.priors, stats.n_classes)

    def _derive(self, stats: Any, priors: NDArray[np.float64], **extra: Any) -> dict[str, Any]:
        raise NotImplementedError

    # --------------------------------------------------------------- predict
    def _class_log_density(self, X: NDArray[Any]) -> NDArray[np.float64]:
        raise NotImplementedError

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        raise NotImplementedError

    def _log_priors(self) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return np.log(self.priors_)

    def _mask_absent(self, jll: NDArray[np.float64]) -> NDArray[np.float64]:
        absent = self.stats_.weights <= 0
        if absent.any():
            jll[:, absent] = -np.inf
        return jll

    def _joint(self, Xv: NDArray[Any]) -> NDArray[np.float64]:
        return self._mask_absent(self._class_log_density(Xv) + self._log_priors())

    def _relative_joint(self, Xv: NDArray[Any]) -> NDArray[np.float64]:
        """The joint log likelihood up to a constant per row (enough for posteriors).

        Subclasses override it when dropping that constant saves work (LDA).
        """
        return self._joint(Xv)

    def _decision(self, X: ArrayLike) -> NDArray[np.float64]:
        check_is_fitted(self)
        Xv = self._validate_X(X, reset=False)
        with self._deferred():
            jll = self._relative_joint(Xv)
        self._after(Xv, jll[:, self.stats_.weights > 0])
        return jll

    def predict_joint_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``log pi_k + log p_k(x)`` for each row and class, shape (n, n_classes)."""
        check_is_fitted(self)
        Xv = self._validate_X(X, reset=False)
        with self._deferred():
            jll = self._joint(Xv)
        self._after(Xv, jll[:, self.stats_.weights > 0])
        return jll

    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log posterior ``log P(y = k | x)``, a log-softmax stable for any input."""
        jll = self._decision(X)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Posterior probabilities ``P(y = k | x)``, shape (n, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The class of largest posterior probability for each row."""
        jll = self._decision(X)
        return self.classes_[np.argmax(jll, axis=1)]

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log posterior up to a per-row constant; for two classes, the log odds.

        Shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes).
        """
        jll = self._decision(X)
        if jll.shape[1] == 2:
            with np.errstate(invalid="ignore"):
                return jll[:, 1] - jll[:, 0]
        return jll

    def score_samples(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log density of the data under the model, ``log sum_k pi_k p_k(x)``."""
        jll = self.predict_joint_log_proba(X)
        return logsumexp(jll, axis=1)

    def sample(
        self, n_samples: int = 1, *, y: ArrayLike | None = None, random_state: Any = None
    ) -> tuple[NDArray[np.float64], NDArray[Any]]:
        """Draw new data from the fitted generative model.

        Parameters
        ----------
        n_samples : int
            Number of rows (ignored when ``y`` is an array).
        y : label or array-like of labels, optional
            Draw from these classes; by default labels are drawn from ``priors_``.
        random_state : None, int, Generator or RandomState

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        rng = as_generator(random_state)
        if y is None:
            if not isinstance(n_samples, (int, np.integer)) or n_samples < 0:
                raise ValueError(f"n_samples must be a non-negative int; got {n_samples!r}.")
            idx = rng.choice(self.classes_.size, size=int(n_samples), p=self.priors_)
        else:
            y_arr = np.asarray(y)
            if y_arr.ndim == 0:
                y_arr = np.full(int(n_samples), y_arr)
            pos = np.searchsorted(self.classes_, y_arr)
            pos = np.clip(pos, 0, self.classes_.size - 1)
            bad = self.classes_[pos] != y_arr
            if np.any(bad):
                raise ValueError(
                    f"y contains labels {np.unique(y_arr[bad]).tolist()} that are not among "
                    f"the classes {self.classes_.tolist()}."
                )
            idx = pos
        empty = self.stats_.weights[idx] <= 0
        if np.any(empty):
            raise ValueError(
                f"cannot sample class {self.classes_[idx[empty][0]]!r}: no data has been seen for it."
            )
        X = np.empty((idx.size, self.n_features_in_))
        for k in np.unique(idx):
            rows = idx == k
            X[rows] = self._sample_class(int(k), int(rows.sum()), rng)
        return X, self.classes_[idx]
