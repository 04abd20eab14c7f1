"""The estimator layer shared by every bayesrule classifier.

A subclass says which statistic it collects (``_stats_type``), how to derive
its parameters and its family of class models from statistics (``_derive``,
which sets ``_model``), and, where it needs one, how to prepare a validated
block before the statistics see it (``_prepare_X``). Everything else is
here, written once: the public seam ``statistics`` (a block's statistics,
without changing the estimator), fitting at once, in chunks, by merging or
by forgetting rows, priors, Bayes' rule, posteriors, densities and sampling.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._util.dispatch import handler_for, handler_named, routed
from .._util.parallel import blas_budget
from .._util.validation import (
    check_finite,
    check_labels,
    check_lengths,
    check_sample_weight,
    check_table,
    explain_X_error,
)
from ..models import combine_terms
from ..stats import as_classes, block_bounds, class_label
from ._classes import warn_about_classes, warn_about_labels
from ._priors import resolve_priors
from ._units import units_message, units_suspects
from .seam import InputSpec, Schema, Summariser

__all__ = ["GenerativeClassifier", "OutOfRangeWarning", "UnitsWarning", "as_generator"]


class OutOfRangeWarning(UserWarning):
    """Data to predict lie far outside the range of the training data.

    Raised (as a warning) by the prediction methods when some feature has
    more than :data:`OUT_OF_RANGE_FRACTION` (1%) of its values beyond the
    training range by more than :data:`OUT_OF_RANGE_MARGIN` (2) times the
    range's width (see
    :meth:`GenerativeClassifier.feature_range_`). The usual cause is data on
    another scale than the training data (pixels in 0-255 against a model
    fitted on pixels in [0, 1]). Silence it with the standard filter::

        warnings.filterwarnings("ignore", category=bayesrule.OutOfRangeWarning)
    """


class UnitsWarning(OutOfRangeWarning):
    """Data to predict look like data in other units: a tiny, far-off part of a feature's range.

    Warned by the prediction methods when, in a batch of 20 rows or more,
    a feature's values span at most a tenth of its training range and lie
    wholly outside it, at least ten of their own widths away (the rule is in
    :mod:`bayesrule.estimators._units`): the signature of units too small,
    such as kilograms given to a model fitted in grams. A subclass of
    :class:`OutOfRangeWarning`, whose filter silences both.
    """


#: A feature is out of range when more than ``OUT_OF_RANGE_FRACTION`` of its
#: values (of the rows of one call) lie below ``lower - OUT_OF_RANGE_MARGIN *
#: width`` or above ``upper + OUT_OF_RANGE_MARGIN * width`` (``width = upper -
#: lower`` of the training data): beyond a band five times as wide as the
#: training range, centred on it. A single such value in a batch of 100 rows
#: or more does not count (heavy tails produce them); in a smaller batch it does.
OUT_OF_RANGE_FRACTION = 0.01
OUT_OF_RANGE_MARGIN = 2.0
#: A larger batch is judged on an evenly strided sample of between this many
#: and twice as many rows (the fraction above is a rate, which the sample
#: estimates well; the check then costs little next to the prediction).
OUT_OF_RANGE_ROWS = 1024

#: features named in the warning's message
_NAMED = 5


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
    #: minimum number of rows ``fit`` requires (scikit-learn's LDA: 2)
    _min_samples: int = 1
    #: refuse priors that do not sum to 1 instead of renormalising them
    #: (scikit-learn's GaussianNB does; its discriminant analyses renormalise)
    _strict_priors: bool = False
    #: Look for NaN and infinity in the results (statistics, scores) instead of
    #: in X first, and search X for the offending row only when a result is
    #: not finite: non-finite input always reaches the results of these
    #: models, and this saves a pass over the data.
    _deferred_finite_check: bool = False
    #: whether scipy.sparse CSR input is accepted (and kept sparse)
    _sparse: bool = False
    #: fitted attributes given in the input's dtype (float32 input, float32
    #: attributes), where scikit-learn's namesake does so; the statistics and
    #: the derivation stay float64
    _input_dtype_attrs: tuple[str, ...] = ()
    #: whether predict_proba and its kin are given in the input's dtype (as scikit-learn's)
    _input_dtype_outputs: bool = False

    # ------------------------------------------------------------------ input
    def _numeric_X(self, X: Any, *, reset: bool) -> Any:
        """X as a float array (or CSR matrix); no value checks.

        With ``reset=False`` the feature count and names are checked against
        the fitted ones; with ``reset=True`` nothing is checked or recorded
        (:meth:`_record_schema` records them once a fit succeeds), so that
        :meth:`statistics` never changes the estimator.
        """
        kwargs: dict[str, Any] = {
            "accept_sparse": "csr" if self._sparse else False,
            "dtype": [np.float64, np.float32],
            "ensure_all_finite": False,
        }
        _refuse_dask(self, X)
        check_table(X)
        try:
            if reset:
                return check_array(X, input_name="X", estimator=self, **kwargs)
            return validate_data(self, X, reset=False, **kwargs)
        except (TypeError, ValueError) as exc:
            err = explain_X_error(X, exc)
            if err is exc:
                raise
            raise err from None

    def _validate_X(self, X: Any, *, reset: bool, fitting: bool = False) -> NDArray[Any]:
        """X checked as the model needs; ``fitting`` when the statistics' pass follows."""
        Xv = self._numeric_X(X, reset=reset)
        if not self._deferred_finite_check:
            check_finite(Xv, "X", allow_nan=self._allow_nan)
        return Xv

    def _prepare_X(self, Xv: Any) -> Any:
        """Transform a validated block as the statistics and the model see it.

        The identity here; BernoulliNB binarizes. It must not change the
        estimator: :meth:`statistics` and the predictions both call it.
        """
        return Xv

    def _input(self, X: Any, *, reset: bool) -> Any:
        """A block validated and prepared for the statistics or the model.

        With ``reset=False`` (data to predict), warns with
        :class:`OutOfRangeWarning` when it lies far outside the training range.
        """
        Xv = self._prepare_X(self._validate_X(X, reset=reset))
        if not reset:
            self._warn_out_of_range(Xv)
        return Xv

    @property
    def feature_range_(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Each feature's training range ``(lower, upper)``, two arrays of shape (n_features,).

        The smallest and largest finite value of the rows of positive weight
        the model was fitted on (as the statistics see them: after
        BernoulliNB's binarization, as category codes for CategoricalNB),
        read from the statistics (``stats_.lower``, ``stats_.upper``). NaN
        where not known: a feature without a finite value, a categorical
        column of MixedNB, or a model file written before ranges were
        recorded. After ``forget`` the range may be wider than the data left
        (it cannot shrink).
        """
        check_is_fitted(self)
        bounds = _stats_bounds(self.stats_)
        if bounds is None:
            nan = np.full(self.n_features_in_, np.nan)
            return nan, nan.copy()
        lo, hi = bounds
        none = ~(np.isfinite(lo) & np.isfinite(hi))
        return np.where(none, np.nan, lo), np.where(none, np.nan, hi)

    def _warn_out_of_range(self, Xv: Any) -> None:
        """Warn (:class:`OutOfRangeWarning`) if some feature of ``Xv`` is far outside its range.

        Also warns :class:`UnitsWarning` for features whose values look like
        data in smaller units (:func:`._units.units_suspects`, from the same
        sample and bounds).

        The rule (:data:`OUT_OF_RANGE_FRACTION`, :data:`OUT_OF_RANGE_MARGIN`):
        more than 1% of a feature's values below ``lower - 2 width`` or above
        ``upper + 2 width`` (in a batch of more than 2048 rows, 1% of an evenly
        strided sample of 1024 to 2048 rows: :data:`OUT_OF_RANGE_ROWS`). Only
        features with a known range of positive width are judged. Two
        reductions over ``Xv`` (its per-feature minimum and maximum) decide
        which features could be out; only those are counted.
        """
        bounds = _stats_bounds(getattr(self, "stats_", None))
        if bounds is None or Xv.shape[0] == 0:
            return
        if Xv.shape[0] >= 2 * OUT_OF_RANGE_ROWS:
            Xv = Xv[:: Xv.shape[0] // OUT_OF_RANGE_ROWS]
        n = Xv.shape[0]
        lo, hi = bounds
        with np.errstate(invalid="ignore", over="ignore"):
            width = hi - lo
            judged = np.isfinite(width) & (width > 0)
            if not judged.any():
                return
            fence_lo = lo - OUT_OF_RANGE_MARGIN * width
            fence_hi = hi + OUT_OF_RANGE_MARGIN * width
            seen_lo, seen_hi = block_bounds(Xv)
            maybe = judged & ((seen_lo < fence_lo) | (seen_hi > fence_hi))
            far = np.empty(0, dtype=np.intp)
            if maybe.any():
                cols = np.flatnonzero(maybe)
                part = Xv[:, cols]
                part = np.asarray(part.toarray() if hasattr(part, "toarray") else part)
                outside = np.count_nonzero(
                    (part < fence_lo[cols]) | (part > fence_hi[cols]), axis=0
                )
                far = cols[outside > OUT_OF_RANGE_FRACTION * n]
        units = units_suspects(Xv, lo, hi, seen_lo, seen_hi)
        far = np.setdiff1d(far, units)  # the more specific cause is reported
        if far.size == 0 and units.size == 0:
            return
        names = getattr(self, "feature_names_in_", None)

        def label(j: int) -> str:
            return repr(str(names[j])) if names is not None else f"{j}"

        import warnings

        if units.size:
            warnings.warn(
                units_message(units, label, lo, hi, seen_lo, seen_hi, _NAMED),
                UnitsWarning,
                stacklevel=_caller_level(),
            )
        if far.size == 0:
            return
        shown = "; ".join(
            f"feature {label(int(j))}: training range [{lo[j]:.4g}, {hi[j]:.4g}], "
            f"here [{seen_lo[j]:.4g}, {seen_hi[j]:.4g}]"
            for j in far[:_NAMED]
        )
        more = f" (and {far.size - _NAMED} more features)" if far.size > _NAMED else ""
        warnings.warn(
            f"X lies far outside the range of the training data in {far.size} of "
            f"{lo.size} features: {shown}{more}. More than "
            f"{OUT_OF_RANGE_FRACTION:.0%} of these features' values are beyond the training "
            f"range by more than {OUT_OF_RANGE_MARGIN:g} times its width. The likely cause is data on another scale than "
            "the training data (e.g. pixels in 0-255 against a model fitted on pixels in "
            "[0, 1]): transform X as the training data were. To silence this: "
            "warnings.filterwarnings('ignore', category=bayesrule.OutOfRangeWarning).",
            OutOfRangeWarning,
            stacklevel=_caller_level(),
        )

    @staticmethod
    def _schema(X: Any, n_features: int, dtype: Any = None) -> Any:
        """The feature count and, for a table with string column names, the names.

        With ``dtype`` (the validated block's), a third entry: the dtype the
        fitted attributes and outputs listed in ``_input_dtype_attrs`` take.
        """
        columns = getattr(X, "columns", None)
        names = None
        if columns is not None and hasattr(X, "dtypes"):
            listed = np.asarray(list(columns), dtype=object)
            if listed.size and all(isinstance(n, str) for n in listed):
                names = listed
        return (n_features, names) if dtype is None else (n_features, names, np.dtype(dtype))

    def _record_schema(self, schema: tuple[Any, ...]) -> None:
        self._fit_dtype = schema[2] if len(schema) > 2 else np.dtype(np.float64)
        self.n_features_in_ = int(schema[0])
        if schema[1] is None:
            self.__dict__.pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = schema[1]

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
        # the statistics that run BLAS products take the thread budget in their
        # own pass (blas_budget, in_parallel)
        with self._deferred():
            stats = self._statistic_type().from_data(Xv, y, w, classes=classes)
        if self._deferred_finite_check:
            # means (or the count sums) carry a NaN or infinity of X into them
            carrier = getattr(stats, "means", None)
            if carrier is None:
                carrier = getattr(stats, "sums", None)
            self._after(Xv, carrier if carrier is not None else np.array([np.nan]))
        return stats

    #: whether the statistics of a block depend on choices made from the data
    #: themselves (MixedNB's inferred column kinds): a fit over blocks computed
    #: apart then makes them once, from the first block (``_block_summariser``)
    _infers_from_data = False

    def _block_summariser(self, first_block: Any = None) -> Any:
        """An unfitted copy whose ``statistics`` summarise blocks as this estimator's own would.

        What a fit over blocks summarised apart (Dask tasks, out-of-core
        blocks) gives every block: the parameters only, no fitted state, with
        every choice that the fitted statistics (or, for an estimator that
        ``_infers_from_data``, the ``first_block``) made pinned as a
        parameter, so that all blocks' statistics merge.
        """
        return clone(self)

    def _statistic_type(self) -> Any:
        """The statistic a block is summarised by: ``_stats_type``.

        An estimator with an explicit fit-time choice of statistics
        (the discriminant analyses' ``moments``) overrides this; it is never
        a function of hyperparameters that can change after fitting.
        """
        return self._stats_type

    def _validate_fit_input(
        self, X: Any, y: Any, sample_weight: Any, *, reset: bool
    ) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]]:
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        _refuse_dask(self, X, y, sample_weight)
        # no range check: training data
        Xv = self._prepare_X(self._validate_X(X, reset=reset, fitting=True))
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
        check_lengths(n, y=y_arr)
        w = check_sample_weight(sample_weight, n)
        if n == 0:
            raise ValueError("X has 0 samples; at least one is required.")
        check_labels(y_arr)
        check_classification_targets(y_arr)
        return Xv, y_arr, w

    # ------------------------------------------------------------- the seam
    def statistics(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        classes: ArrayLike | None = None,
    ) -> Any:
        """The sufficient statistics of one block of data; the estimator is not changed.

        This is the one hook a distributed or out-of-core fit needs:
        ``Cls.from_stats(reduce(merge, [est.statistics(*block) for block in
        blocks]), **est.get_params())`` equals ``fit`` on the concatenated
        blocks. The block is validated (against the fitted features when the
        estimator is fitted) and prepared exactly as ``fit`` prepares it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        classes : array-like, optional
            Labels to declare (a class may have no row in this block); by
            default the labels of ``y``. Every label of ``y`` must be among them.

        Returns
        -------
        stats
            A statistic of the estimator's ``_stats_type``: a mergeable,
            subtractable value (see :class:`bayesrule.stats.Statistic`).
        """
        self._validate_params()
        return self._stats_of(X, y, sample_weight, classes, reset=not _is_fitted(self))[0]

    def _stats_of(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        """:meth:`_block`, or for Dask collections the merged statistics of their blocks.

        The Dask reduction (:mod:`bayesrule.backends.dask`) calls :meth:`statistics`
        on each block where the block lives; only statistics travel.
        """
        handler = handler_for(X, y, sample_weight)
        if handler is not None:
            return handler.statistics(self, X, y, sample_weight, classes, reset=reset)
        return self._block(X, y, sample_weight, classes, reset=reset)

    def _block(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, tuple[int, NDArray[Any] | None]]:
        """Statistics of a block and its feature schema (count, names)."""
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=reset)
        if classes is not None:
            check_labels(np.asarray(classes), "classes")
        c = as_classes(y_arr if classes is None else classes)
        return self._stats_from(Xv, y_arr, w, c), self._schema(X, Xv.shape[1], Xv.dtype)

    # ------------------------------------------------- the seam for backends
    def input_spec(self) -> InputSpec:
        """What this estimator's blocks must look like (see :mod:`bayesrule.estimators.seam`)."""
        stats_type = self._statistic_type()
        return InputSpec(
            frame=False,
            order="F" if getattr(stats_type, "column_major", False) else "C",
            side_by_side=not getattr(stats_type, "block_parallel", False),
            min_classes=self._min_classes,
            min_samples=self._min_samples,
            allow_nan=self._allow_nan,
            sparse=self._sparse,
            multi_pass=bool(getattr(self, "_multi_pass", False)),
        )

    def summariser(self, first_block: Any = None, **options: Any) -> Summariser:
        """A pure, picklable task summarising blocks as this estimator's fit would.

        Every choice the data make (MixedNB's column kinds, from
        ``first_block``) or the fitted model made is pinned in the task, so
        the summaries of blocks computed apart merge. ``options`` are the
        backend's (e.g. ``max_values`` for statistics that keep values); an
        estimator ignores those it has no use for.
        """
        return EstimatorSummariser(self._block_summariser(first_block))

    def fit_plan(
        self,
        reduce: Callable[[Summariser], Any],
        *,
        first_block: Any = None,
        classes: ArrayLike | None = None,
        **options: Any,
    ) -> Any:
        """Run the passes a fit needs; ``reduce(task)`` summarises all the data with ``task``.

        Returns the statistics to give :meth:`fit_statistics`. One pass for
        most estimators (``classes`` is then the backend's business: it
        passes them to ``task.statistics``).
        """
        return reduce(self.summariser(first_block, **options))

    def fit_statistics(self, stats: Any, *, schema: Schema | tuple[Any, ...] | None = None) -> Any:
        """Fit from statistics: derive every fitted attribute of ``self`` from ``stats``.

        ``schema`` (:class:`~bayesrule.estimators.seam.Schema`) gives the
        feature count, names and dtype of the data; by default the
        statistics' feature count, no names, float64. If the derivation
        fails, the estimator is left exactly as it was.
        """
        with self._atomic():
            self._install(stats, schema=None if schema is None else tuple(schema))
        return self

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
        stats, schema = self._stats_of(X, y, sample_weight, None, reset=True)
        n = int(stats.counts.sum())
        if 0 < n < self._min_samples:  # no weight at all: _install says so
            raise ValueError(
                f"Found array with {n} sample(s) (shape=({n}, {stats.n_features})) while a "
                f"minimum of {self._min_samples} is required by {type(self).__name__}. "
                "One row gives no estimate of the spread around the class means."
            )
        if stats.n_classes < self._min_classes:
            raise ValueError(
                "The number of classes has to be greater than one. Got "
                f"{stats.n_classes} class. {type(self).__name__} needs at least "
                f"{self._min_classes} classes to classify; y has {stats.n_classes} class "
                f"({stats.classes.tolist()})."
            )
        warn_about_classes(self, stats)  # before: a model that refuses a class still warns
        self._install(stats, schema=schema)
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
        ``classes`` lists every label the stream will contain; it must be
        given on the first call (as scikit-learn requires). A block with a
        label outside the known classes raises ``ValueError``. A call that
        fails leaves the model exactly as it was.
        """
        with self._atomic():
            return self._partial_fit(X, y, classes, sample_weight)

    def _partial_fit(self, X: Any, y: Any, classes: Any, sample_weight: Any) -> Any:
        if not _is_fitted(self):
            self._validate_params()
            if classes is None:
                raise ValueError(
                    "classes must be passed on the first call to partial_fit. It lists every "
                    "label the stream will contain (a later block may hold labels this one "
                    "does not); e.g. classes=np.unique(y_all)."
                )
            check_labels(np.asarray(classes), "classes")
            declared = as_classes(classes)
            if declared.size < self._min_classes:
                raise ValueError(
                    f"classes must list at least {self._min_classes} labels; "
                    f"got {declared.tolist()}."
                )
            stats, schema = self._stats_of(X, y, sample_weight, classes, reset=True)
            warn_about_labels(self, declared)
            self._install(stats, schema=schema)
            return self
        if classes is not None and not np.array_equal(as_classes(classes), self.classes_):
            raise ValueError(
                f"`classes={classes!r}` is not the same as on last call to partial_fit, was: "
                f"{self.classes_!r}. classes={as_classes(classes).tolist()} is not the same "
                f"as the classes of the first call to partial_fit, {self.classes_.tolist()}."
            )
        block, _ = self._stats_of(X, y, sample_weight, self.classes_, reset=False)
        self._install(self.stats_.merge(block))
        return self

    def forget(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Any:
        """Remove rows the model was fitted on, exactly.

        The result equals a fit on the training data without these rows (to
        rounding): the statistics of the block are subtracted from the
        model's (Chan's update run backwards). Use it for deletion requests,
        sliding windows, or cross-validation from one pass (a fold's model is
        the full model minus the fold). A class whose every row is forgotten
        stays declared with no data (probability zero).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows that were part of the training data.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            The weights the rows were fitted with.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A label the model does not have, more weight than a class holds,
            or forgetting every row; the model is then left unchanged.
        """
        check_is_fitted(self)
        with self._atomic():
            block, _ = self._stats_of(X, y, sample_weight, None, reset=False)
            unknown = np.setdiff1d(block.classes, self.classes_)
            if unknown.size:
                raise ValueError(
                    f"cannot forget rows of class {unknown.tolist()[:10]}: the model has no "
                    f"such class (classes: {self.classes_.tolist()[:20]})."
                )
            remaining = self.stats_.subtract(block)
            if not np.any(remaining.weights > 0):
                raise ValueError(
                    "forget would remove every row the model was fitted on; nothing would "
                    "be left to fit."
                )
            self._install(remaining)
        return self

    @contextlib.contextmanager
    def _atomic(self) -> Iterator[None]:
        """Restore the estimator exactly as it was if the block raises."""
        saved = dict(self.__dict__)
        try:
            yield
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def merge(self, other: GenerativeClassifier) -> Any:
        """A new model equal to one fitted on the training data of both.

        ``other`` must be a fitted estimator of the same type with the same
        features (count and names); its parameters are ignored (``self``'s
        are kept). Classes are united.
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
        mine = getattr(self, "feature_names_in_", None)
        theirs = getattr(other, "feature_names_in_", None)
        if (mine is None) != (theirs is None) or (
            mine is not None and theirs is not None and not np.array_equal(mine, theirs)
        ):
            raise ValueError(
                "cannot merge models fitted on different feature names: "
                f"{_names_text(mine)} and {_names_text(theirs)}."
            )
        merged = self.stats_.merge(other.stats_)
        new = clone(self)
        new._install(merged, schema=(self.n_features_in_, mine, self._dtype()))
        return new

    @classmethod
    def from_stats(
        cls,
        stats: Any,
        *,
        feature_names_in: ArrayLike | None = None,
        schema: Schema | tuple[Any, ...] | None = None,
        **params: Any,
    ) -> Any:
        """Build a fitted estimator from statistics (e.g. those of a distributed fit).

        ``cls.from_stats(est.statistics(X, y), **est.get_params())`` equals
        ``est.fit(X, y)``.

        Parameters
        ----------
        stats
            Statistics of the estimator's ``_stats_type``.
        feature_names_in : array-like of str, optional
            The names of the features, if the data had them.
        schema : Schema, optional
            The feature count, names and dtype of the data (see
            :meth:`fit_statistics`); instead of ``feature_names_in``.
        **params
            The estimator's hyperparameters.
        """
        est = cls(**params)
        names = None
        if feature_names_in is not None:
            names = np.asarray([str(n) for n in np.ravel(feature_names_in)], dtype=object)
            if names.size != stats.n_features:
                raise ValueError(
                    f"feature_names_in has {names.size} names, but the statistics have "
                    f"{stats.n_features} features."
                )
        if schema is not None:
            if feature_names_in is not None:
                raise ValueError("give the feature names in schema or feature_names_in, not both.")
            return est.fit_statistics(stats, schema=schema)
        est._install(stats, schema=(stats.n_features, names))
        return est

    def _install(self, stats: Any, *, schema: tuple[Any, ...] | None = None, **extra: Any) -> None:
        """Derive every fitted attribute from ``stats``, then set them all at once.

        The parameters are validated first (they may have changed since the
        last fit), and nothing is changed on the estimator unless the
        derivation succeeds.
        """
        self._validate_params()
        present = stats.weights > 0
        if not present.any():
            raise ValueError(
                "every sample weight is zero: no sample has positive weight, nothing can be fitted."
            )
        priors = self._resolve_priors(stats)
        # The derivation's messages name features by the names of the data
        # being fitted: the schema is in place while it runs, and put back as
        # it was if it fails.
        saved = {k: self.__dict__[k] for k in _SCHEMA if k in self.__dict__}
        if schema is not None:
            self._record_schema(schema)
        elif not hasattr(self, "n_features_in_"):
            self._record_schema((stats.n_features, None))
        try:
            # factorisations of up to (p, p) per class: on a busy machine the
            # BLAS runs them on one thread (see bayesrule.config_context)
            with blas_budget(float(stats.n_classes) * float(stats.n_features) ** 3):
                attrs = self._derive(stats, priors, **extra)
        except BaseException:
            for key in _SCHEMA:
                self.__dict__.pop(key, None)
            self.__dict__.update(saved)
            raise
        attrs.update(
            stats_=stats,
            classes_=stats.classes,
            priors_=priors,
            class_count_=stats.weights.copy(),
            n_samples_seen_=int(stats.counts.sum()),
        )
        dtype = self._dtype()
        if dtype != np.float64:
            for name in self._input_dtype_names():
                if name in attrs:
                    value = np.asarray(attrs[name]).astype(dtype)
                    attrs[name] = value[()] if value.ndim == 0 else value
        for name, value in attrs.items():
            setattr(self, name, value)

    def _dtype(self) -> np.dtype[Any]:
        """The floating dtype of the data fitted (float64 when built from statistics)."""
        return self.__dict__.get("_fit_dtype", np.dtype(np.float64))

    def _input_dtype_names(self) -> tuple[str, ...]:
        """The fitted attributes given in the input's dtype (scikit-learn's choice)."""
        return self._input_dtype_attrs

    def _outputs_in_input_dtype(self) -> bool:
        return self._input_dtype_outputs

    def _out(self, values: NDArray[Any]) -> NDArray[Any]:
        """``values`` in the fitted data's dtype where scikit-learn's outputs are."""
        if self._outputs_in_input_dtype() and self._dtype() != np.float64:
            return values.astype(self._dtype())
        return values

    def _resolve_priors(self, stats: Any) -> NDArray[np.float64]:
        """Class priors: the ``priors`` parameter, else the weighted class proportions.

        Subclasses whose prior parameters are spelled differently (naive
        Bayes' ``fit_prior`` / ``class_prior``) override this.
        """
        if self.priors is None:
            return np.asarray(stats.weights / stats.weights.sum(), dtype=float)
        return resolve_priors(self.priors, stats.classes, strict=self._strict_priors)

    def _derive(self, stats: Any, priors: NDArray[np.float64], **extra: Any) -> dict[str, Any]:
        raise NotImplementedError

    # --------------------------------------------------------------- predict
    def _model_index(self, k: int) -> int:
        """Position of class ``k`` in ``_model``, which may hold only the classes with data."""
        if len(self._model) == self.classes_.size:
            return k
        return int(np.count_nonzero(self.stats_.weights[:k] > 0))

    def _class_log_density(self, X: Any) -> NDArray[np.float64]:
        """``log p_k(x)`` per class, (n, n_classes); -inf for classes without data."""
        return self._scatter(self._model.log_prob(X))

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        return self._model[self._model_index(k)].sample(n, rng)

    @routed
    def class_log_density(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log density of each row under each class model, ``log p_k(x)``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            ``-inf`` for declared classes without data.
        """
        check_is_fitted(self)
        Xv = self._input(X, reset=False)
        with self._deferred():
            out = self._class_log_density(Xv)
        self._after(Xv, out[:, self.stats_.weights > 0])
        return self._repair(Xv, out, prior=False, relative=False)

    def class_model(self, label: Any) -> Any:
        """The fitted model of one class (from :mod:`bayesrule.models`).

        It offers ``log_prob(X)`` and ``sample(n, rng)``; Gaussian models also
        ``mean`` and ``covariance`` (the model's own, after any shrinkage or
        regularisation).
        """
        check_is_fitted(self)
        pos = np.flatnonzero(self.classes_ == label)
        if pos.size == 0:
            raise ValueError(f"{label!r} is not among the classes {self.classes_.tolist()}.")
        k = int(pos[0])
        if self.stats_.weights[k] <= 0:
            raise ValueError(f"class {label!r} has no data, so it has no model.")
        return self._class_model(k)

    def _class_model(self, k: int) -> Any:
        return self._model[self._model_index(k)]

    def _log_priors(self) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(self.priors_, dtype=np.float64))

    def _mask_absent(self, jll: NDArray[np.float64]) -> NDArray[np.float64]:
        absent = self.stats_.weights <= 0
        if absent.any():
            jll[:, absent] = -np.inf
        return jll

    def _scatter(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """(n, classes with data) values placed into (n, n_classes), -inf for the others."""
        present = self.stats_.weights > 0
        if values.shape[1] == present.size:
            return values
        out = np.full((values.shape[0], present.size), -np.inf)
        out[:, present] = values
        return out

    def _joint(self, Xv: NDArray[Any]) -> NDArray[np.float64]:
        return self._mask_absent(self._class_log_density(Xv) + self._log_priors())

    def _relative_joint(self, Xv: NDArray[Any]) -> NDArray[np.float64]:
        """The joint log likelihood up to a constant per row (enough for posteriors).

        The family's ``relative_log_prob`` when it has one (it leaves out a
        part that is the same for every class: a multinomial coefficient, a
        shared quadratic term); subclasses override it when they drop more (LDA).
        """
        relative = getattr(self._model, "relative_log_prob", None)
        if relative is None:
            return self._joint(Xv)
        return self._mask_absent(self._scatter(relative(Xv)) + self._log_priors())

    def _terms_of_rows(self, Xv: Any, rows: NDArray[np.intp], prior: bool) -> tuple[Any, Any]:
        """Relative and absolute joint log likelihoods of some rows, from scaled terms.

        See :mod:`bayesrule.models._terms`: the family gives ``log p_k(x)`` as
        a sum of terms kept apart by powers of two, which never overflows.
        """
        Xb = Xv[rows]
        if hasattr(Xb, "toarray"):
            Xb = Xb.toarray()
        present = self.stats_.weights > 0
        shape = (rows.size, int(present.sum()))
        with np.errstate(all="ignore"):
            terms_of = getattr(self._model, "log_prob_terms", None)
            if terms_of is not None:
                terms = list(terms_of(Xb))
            else:
                # a family without terms: its values, NaN and +inf made definite
                values = np.nan_to_num(
                    np.asarray(self._model.log_prob(Xb)).reshape(shape),
                    nan=-np.inf,
                    posinf=np.finfo(np.float64).max,
                    neginf=-np.inf,
                )
                terms = [(values, 0)]
            if prior:
                terms.append((self._log_priors()[present][None, :], 0))
            relative, absolute = combine_terms(terms, shape)
        return self._scatter(relative), self._scatter(absolute)

    def _repair(
        self, Xv: Any, values: NDArray[np.float64], *, prior: bool = True, relative: bool = True
    ) -> NDArray[np.float64]:
        """Recompute the rows of ``values`` that Bayes' rule cannot use, from scaled terms.

        A row far from every class (an entry of 1e300) has log densities that
        overflow: NaN, ``+inf`` or ``-inf`` for every class. One reduction of
        the (n, K) results finds those rows; only they are recomputed, with
        :meth:`_terms_of_rows` (relative: the row's best class at 0, the
        others below it, ``-inf`` beyond float64; absolute: ``-inf`` where
        the log density is below -max float). Normal rows cost nothing more.
        """
        present = self.stats_.weights > 0
        with np.errstate(invalid="ignore"):
            top = np.max(values[:, present], axis=1) if values.shape[0] else values[:, 0]
        bad = np.flatnonzero(~np.isfinite(top))
        if bad.size:
            rel, absolute = self._terms_of_rows(Xv, bad, prior)
            values = np.array(values, dtype=np.float64)
            values[bad] = rel if relative else absolute
        return values

    def _decision(self, X: ArrayLike) -> NDArray[np.float64]:
        check_is_fitted(self)
        Xv = self._input(X, reset=False)
        with self._deferred():
            jll = self._relative_joint(Xv)
        self._after(Xv, jll[:, self.stats_.weights > 0])
        return self._repair(Xv, jll)

    @routed
    def predict_joint_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``log pi_k + log p_k(x)`` for each row and class, shape (n, n_classes).

        Never NaN for finite input; ``-inf`` for a class without data and
        where the log likelihood is below the most negative float64 (a row
        far from the class: the density underflows).
        """
        check_is_fitted(self)
        Xv = self._input(X, reset=False)
        with self._deferred():
            jll = self._joint(Xv)
        self._after(Xv, jll[:, self.stats_.weights > 0])
        return self._out(self._repair(Xv, jll, relative=False))

    @routed
    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log posterior ``log P(y = k | x)``, a log-softmax stable for any finite input.

        The largest joint log likelihood of each row is subtracted before the
        sum (so a row whose values are all near -1e300 still sums to 1); a row
        far from every class is decided by the class that dominates in exact
        arithmetic (posterior 1, the others 0), never NaN.
        """
        return self._out(_log_softmax(self._decision(X)))

    @routed
    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Posterior probabilities ``P(y = k | x)``, shape (n, n_classes); rows sum to 1."""
        return self._out(np.exp(_log_softmax(self._decision(X))))

    @routed
    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The class of largest posterior probability for each row."""
        jll = self._decision(X)
        return self.classes_[np.argmax(jll, axis=1)]

    @routed
    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log posterior up to a per-row constant; for two classes, the log odds.

        Shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes). For a row far from every class the log odds may be
        ``+-inf``.
        """
        jll = self._decision(X)
        if jll.shape[1] == 2:
            with np.errstate(invalid="ignore"):
                return self._out(jll[:, 1] - jll[:, 0])
        return self._out(jll)

    @routed
    def score_samples(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log density of the data under the model, ``log sum_k pi_k p_k(x)``.

        Never NaN or ``+inf`` for finite input. A row so far from every class
        that its log density is below the most negative float64 gets
        ``-inf``: the log of a density that underflows.
        """
        jll = self.predict_joint_log_proba(X)
        with np.errstate(divide="ignore"):
            return np.asarray(logsumexp(jll, axis=1))

    def sample(
        self,
        n_samples: int = 1,
        *,
        y: ArrayLike | None = None,
        random_state: Any = None,
        chunks: Any = None,
    ) -> tuple[Any, Any]:
        """Draw new data from the fitted generative model.

        Parameters
        ----------
        n_samples : int
            Number of rows (ignored when ``y`` is an array).
        y : label or array-like of labels, optional
            Draw from these classes; by default labels are drawn from ``priors_``.
        random_state : None, int, Generator or RandomState
        chunks : int or tuple of int, optional
            Return Dask arrays drawn block by block where they are computed
            (rows per block, as Dask's ``chunks``), for more rows than fit in
            memory; each block draws from its own stream spawned from
            ``random_state``, so the draw is reproducible for a given
            ``random_state`` and ``chunks`` (it differs from the draw without
            ``chunks``). Needs ``pip install 'bayesrule[dask]'``. A Dask
            array ``y`` gives Dask arrays with its chunks.

        Returns
        -------
        X : ndarray (or Dask array) of shape (n_samples, n_features)
        y : ndarray (or Dask array) of shape (n_samples,)
        """
        check_is_fitted(self)
        handler = handler_for(y)
        if chunks is not None or handler is not None:
            handler = handler or handler_named("Dask")
            return handler.sample(self, n_samples, y=y, random_state=random_state, chunks=chunks)
        rng = as_generator(random_state)
        if y is None:
            if not isinstance(n_samples, (int, np.integer)) or n_samples < 0:
                raise ValueError(f"n_samples must be a non-negative int; got {n_samples!r}.")
            p = np.asarray(self.priors_, dtype=np.float64)
            idx = rng.choice(self.classes_.size, size=int(n_samples), p=p / p.sum())
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
                f"cannot sample class {class_label(self.classes_, idx[empty][0])!r}: no data has been seen for it."
            )
        X = np.empty((idx.size, self.n_features_in_))
        for k in np.unique(idx):
            rows = idx == k
            X[rows] = self._sample_class(int(k), int(rows.sum()), rng)
        return X, self.classes_[idx]


#: the fitted attributes that describe the input's features
_SCHEMA = ("n_features_in_", "feature_names_in_", "_fit_dtype")


def _log_softmax(jll: NDArray[np.float64]) -> NDArray[np.float64]:
    """``jll - log sum_k exp(jll)`` per row, with the row's largest value taken out first.

    scipy's ``logsumexp`` adds the largest value back before the subtraction,
    which loses the small terms next to a value of -1e300 (rows of
    probabilities that sum to 3); here they are differences from it.
    """
    top = np.max(jll, axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        d = jll - np.where(np.isfinite(top), top, 0.0)
    return d - np.log(np.sum(np.exp(d), axis=1, keepdims=True))


def _stats_bounds(stats: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """The statistics' feature bounds (RDA-CV's are those of its ``total``), or None."""
    if stats is not None and not hasattr(stats, "lower"):
        stats = getattr(stats, "total", None)
    lo, hi = getattr(stats, "lower", None), getattr(stats, "upper", None)
    if lo is None or hi is None:
        return None
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


#: modules whose frames a warning skips to reach the user's call (scikit-learn's
#: ``score`` calls ``predict``)
_INSIDE = ("bayesrule.", "sklearn.")


def _caller_level() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside bayesrule."""

    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_INSIDE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def _is_fitted(est: Any) -> bool:
    return hasattr(est, "stats_")


def _names_text(names: Any) -> str:
    if names is None:
        return "no names"
    shown = [str(n) for n in list(names)[:8]]
    return "[" + ", ".join(shown) + (", ..." if len(names) > 8 else "") + "]"


def _refuse_dask(est: Any, X: Any, y: Any = None, sample_weight: Any = None) -> None:
    """TypeError where a path would silently gather a Dask collection into memory."""
    handler = handler_for(X, y, sample_weight)
    if handler is not None:
        raise TypeError(
            f"{type(est).__name__} cannot take {handler.name} collections here: this operation needs "
            "the data in memory (e.g. a covariance_estimator). Compute them first "
            "(X.compute()), or use a model fitted from statistics."
        )


class EstimatorSummariser:
    """The one-pass task: an unfitted copy of the estimator with its data choices pinned.

    ``statistics`` is the copy's :meth:`GenerativeClassifier.statistics`;
    blocks combine by ``merge``.
    """

    def __init__(self, estimator: GenerativeClassifier) -> None:
        self.estimator = estimator

    def statistics(self, X: Any, y: Any, sample_weight: Any = None, classes: Any = None) -> Any:
        return self.estimator.statistics(X, y, sample_weight, classes=classes)

    def combine(self, total: Any, block: Any) -> Any:
        return block if total is None else total.merge(block)

    def finish(self, total: Any) -> Any:
        return total
