"""The estimator layer shared by every bayesrule classifier.

A subclass declares its input (``spec``, an :class:`~.seam.InputSpec`: the
statistic it collects, what ``X`` may hold, the fewest classes and rows), how
to derive its parameters and its family of class models from statistics
(``_derive``, which sets ``_model``), and, where it needs one, how to prepare
a validated block before the statistics see it (``_prepare_X``). Everything
else is written once, in the modules this one brings together:

* :mod:`._input`: validating ``X``, ``y`` and weights as ``spec`` says;
* :mod:`._predict`: Bayes' rule, posteriors and densities;
* :mod:`._sampling`: drawing new data;
* :mod:`._ranges`: the warnings for data far outside the training range;
* here: the public fit seam (``statistics``, ``input_spec``, ``summariser``,
  ``fit_plan``, ``fit_statistics``, ``from_stats``) and ``fit``;
* :mod:`._updatable`: ``partial_fit``, ``forget`` and ``merge``, a mixin that
  estimators which cannot do them do not inherit (their ``refusals`` say why).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from .._util.dispatch import after_install, after_unpickle, handler_for, handler_named, watcher
from .._util.parallel import blas_budget
from .._util.validation import check_labels
from ..stats import CategoryStats, ValueCountStats, as_classes, block_bounds
from ._classes import warn_about_classes
from ._predict import log_softmax
from ._priors import resolve_priors
from ._ranges import OutOfRangeWarning, UnitsWarning, check_squared_range, stats_bounds
from ._sampling import SampleMixin, as_generator
from ._spec import FromSpec, checked_schema, fold_flags
from ._tasks import ColumnSummariser, EstimatorSummariser
from ._underived import Underived, waiting_attrs, waiting_reason
from .seam import InputSpec, Schema, Summariser

__all__ = [
    "EstimatorSummariser",
    "GenerativeClassifier",
    "OutOfRangeWarning",
    "UnitsWarning",
    "as_generator",
    "is_fitted",
]

#: the name the leave-one-out module knows Bayes' rule's log-softmax by
_log_softmax = log_softmax


class GenerativeClassifier(SampleMixin, ClassifierMixin, BaseEstimator):
    """Base class: Bayes' rule over per-class generative models built from statistics.

    Subclasses provide

    * ``spec``: an :class:`~bayesrule.estimators.seam.InputSpec` whose
      ``statistic`` is a statistics class with ``empty``, ``from_data`` and
      ``merge`` (see :mod:`bayesrule.stats`);
    * ``_derive(stats, priors) -> dict``: fitted attributes from statistics
      (raise ``ValueError`` when they cannot be derived);
    * ``_class_log_density(X) -> (n, K)``: ``log p_k(x)`` per class;
    * ``_sample_class(k, n, rng) -> (n, p)``: draws from class ``k``.

    Classes whose statistics hold no weight yet (declared to ``partial_fit``
    but not seen) have probability zero.
    """

    #: methods this estimator does not have, with the reason (``hasattr`` is
    #: False; using one raises an AttributeError that says why)
    refusals: ClassVar[Mapping[str, str]] = {}
    #: whether the model squares the features' deviations (Gaussian and kernel models):
    #: a fit then refuses a feature whose squared deviations overflow, naming it
    #: (:func:`._ranges.check_squared_range`, from the statistics' bounds; RDA-CV and
    #: MDA, whose statistics are a search, check their rows before it)
    squares_deviations: ClassVar[bool] = False
    #: whether an update whose statistics hold too few rows for the model yet
    #: (:class:`~bayesrule._util.validation.TooFewRows`) keeps them, the model
    #: refusing to predict until later rows mend it (see :meth:`_deferral`)
    waits_for_rows: ClassVar[bool] = False
    #: parameters added after model files were first written, with the value
    #: that reproduces the model such a file (which lacks them) was saved from
    params_before_added: ClassVar[Mapping[str, Any]] = {}

    # read-only aliases of ``spec``, for code that has not moved to it yet
    _stats_type = FromSpec("statistic")
    _allow_nan = FromSpec("allow_nan")
    _min_classes = FromSpec("min_classes")
    _min_samples = FromSpec("min_samples")
    _multi_pass = FromSpec("multi_pass")
    _infers_from_data = FromSpec("infers_from_data")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fold_flags(cls)  # a subclass written before ``spec``: its flags go into it

    def __getattr__(self, name: str) -> Any:
        # only reached when the ordinary lookup fails
        reason = type(self).refusals.get(name)
        if reason is not None:
            raise AttributeError(f"{type(self).__name__} has no {name}: {reason}.")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.spec.allow_nan
        tags.input_tags.sparse = self.spec.sparse
        tags.input_tags.positive_only = self.spec.positive
        tags.classifier_tags.poor_score = self.spec.poor_score
        # PyTorch, CuPy, array-api-strict input through bayesrule.backends.array_api,
        # for every model except those whose statistics keep values or categories
        tags.array_api_support = self.spec.statistic not in _NO_ARRAY_API and not self.spec.frame
        return tags

    def __sklearn_array_api_convert__(self, converter: Callable[[Any], Any]) -> Any:
        """scikit-learn's ``move_estimator_to``: a copy whose fitted arrays live on the target.

        The copy's numeric fitted arrays are moved to the namespace and
        device ``converter`` moves arrays to (NumPy: a host model), by the
        engine holding such arrays (``bayesrule.move_to``); its statistics
        stay NumPy values (model files and merges need them on the host).
        """
        import copy

        moved = copy.deepcopy(self)
        if is_fitted(self):
            probe = converter(np.zeros(1))
            handler = handler_for(probe) or watcher(moved) or handler_named("array API")
            move = getattr(handler, "move", None)
            if move is not None:
                move(moved, probe)
        return moved

    def _host_array(self, name: str) -> Any:
        """The fitted attribute ``name`` as the NumPy code reads it.

        For a model whose fitted arrays live on a device (an engine holds
        it: ``bayesrule.backends.array_api``), the host copy that engine
        keeps; otherwise the attribute itself. For lazily computed
        attributes written in NumPy (QDA's ``rotations_``).
        """
        handler = watcher(self)
        view = handler.host_view(self) if handler is not None else self
        return getattr(view, name)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        # a pickle of a model whose arrays live on a device: that engine adopts it
        after_unpickle(self)

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
        bounds = stats_bounds(self.stats_)
        if bounds is None:
            nan = np.full(self.n_features_in_, np.nan)
            return nan, nan.copy()
        lo, hi = bounds
        none = ~(np.isfinite(lo) & np.isfinite(hi))
        return np.where(none, np.nan, lo), np.where(none, np.nan, hi)

    def _stats_from(self, Xv: NDArray[Any], y: NDArray[Any], w: NDArray[Any], classes: Any) -> Any:
        # the statistics that run BLAS products take the thread budget in their
        # own pass (blas_budget, in_parallel)
        with self._deferred():
            stats = self._statistic_type().from_data(Xv, y, w, classes=classes)
        if self.spec.deferred_finite_check:
            # means (or the count sums) carry a NaN or infinity of X into them
            carrier = getattr(stats, "means", None)
            if carrier is None:
                carrier = getattr(stats, "sums", None)
            self._after(Xv, carrier if carrier is not None else np.array([np.nan]))
        return stats

    def _block_summariser(self, first_block: Any = None) -> Any:
        """An unfitted copy whose ``statistics`` summarise blocks as this estimator's own would.

        What a fit over blocks summarised apart (Dask tasks, out-of-core
        blocks) gives every block: the parameters only, no fitted state, with
        every choice that the fitted statistics (or, for an estimator whose
        spec ``infers_from_data``, the ``first_block``) made pinned as a
        parameter, so that all blocks' statistics merge.
        """
        return clone(self)

    def _statistic_type(self) -> Any:
        """The statistic a block is summarised by: ``spec.statistic``.

        An estimator with an explicit fit-time choice of statistics
        (the discriminant analyses' ``moments``) overrides this; it is never
        a function of hyperparameters that can change after fitting.
        """
        return self.spec.statistic

    def _column_pass(self) -> Any:
        """The fit statistic's ``from_columns`` where a block's statistics are its own, else None.

        A block held column by column (Arrow's buffers) is summarised by it
        (:class:`~._tasks.ColumnSummariser`) when the declared statistic has
        a column pass (not a search's wrapper around one, as RDA-CV's) and
        the statistic of this fit has one too: the declared one, its
        extension, or a backend's variant (LDA's pooled statistics).
        """
        declared = self.spec.statistic
        if not (isinstance(declared, type) and hasattr(declared, "from_columns")):
            return None
        return getattr(self._statistic_type(), "from_columns", None)

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
            A statistic of the estimator's ``input_spec().statistic``: a mergeable,
            subtractable value (see :class:`bayesrule.stats.Statistic`).
        """
        self._validate_params()
        return self._stats_of(X, y, sample_weight, classes, reset=not is_fitted(self))[0]

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
    ) -> tuple[Any, Any]:
        """Statistics of a block and its feature schema (count, names)."""
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=reset)
        if classes is not None:
            check_labels(np.asarray(classes), "classes")
        c = as_classes(y_arr if classes is None else classes)
        schema = self._schema(X, Xv.shape[1], Xv.dtype)
        if not self.squares_deviations:
            return self._stats_from(Xv, y_arr, w, c), schema
        # an overflow is named by its feature where the statistics are installed
        # (:meth:`_install`), whatever their source: a stream's blocks, a cluster's parts
        with np.errstate(over="ignore", invalid="ignore"):
            return self._stats_from(Xv, y_arr, w, c), schema

    def _check_squares(self, X: Any, Xv: Any, w: Any) -> None:
        """Refuse a feature whose squared deviations overflow, naming it, from the rows
        themselves: RDA-CV's and MDA's check, whose statistics are a search."""
        check_squared_range(block_bounds(Xv, w), Xv.shape[0], self._schema(X, Xv.shape[1])[1])

    # ------------------------------------------------- the seam for backends
    def input_spec(self) -> InputSpec:
        """What this estimator's blocks must look like (see :mod:`bayesrule.estimators.seam`).

        The class's declared ``spec``, with the statistic of this fit and
        the layout it is fastest on (``order``, ``side_by_side``), and
        ``column_blocks`` where that statistic has a column pass
        (:meth:`_column_pass`).
        """
        stats_type = self._statistic_type()
        return dataclasses.replace(
            self.spec,
            statistic=stats_type,
            column_blocks=self._column_pass() is not None and not self.spec.frame,
            order="F" if getattr(stats_type, "column_major", False) else self.spec.order,
            side_by_side=self.spec.side_by_side
            and not getattr(stats_type, "block_parallel", False),
        )

    def file_params(self) -> dict[str, Any]:
        """The parameters a model file keeps (:func:`bayesrule.save`): ``get_params(deep=False)``.

        An estimator holding an object a file cannot keep and a fitted model
        no longer needs (RDA-CV's ``cv`` splitter) describes it here instead.
        """
        return dict(self.get_params(deep=False))

    def check_params(self) -> Any:
        """Validate the hyperparameters (as ``fit`` does first); returns ``self``.

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            (a ``ValueError``) naming the parameter, what it must be and what it is.
        """
        self._validate_params()
        return self

    def summariser(self, first_block: Any = None, **options: Any) -> Summariser:
        """A pure, picklable task summarising blocks as this estimator's fit would.

        Every choice the data make (MixedNB's column kinds, from
        ``first_block``) or the fitted model made is pinned in the task, so
        the summaries of blocks computed apart merge. ``options`` are the
        backend's (e.g. ``max_values`` for statistics that keep values); an
        estimator ignores those it has no use for. Where the statistic has a
        column pass, the task also summarises a block held column by column
        (:meth:`ColumnSummariser.column_statistics`).
        """
        return self._task(self._block_summariser(first_block))

    def _task(self, light: Any) -> EstimatorSummariser:
        """The one-pass task of ``light``, this estimator's block copy."""
        if self._column_pass() is not None:
            return ColumnSummariser(light)
        return EstimatorSummariser(light)

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
        expected = self.spec.statistic
        if expected is not None and not isinstance(stats, expected):
            raise TypeError(
                f"{type(self).__name__}.fit_statistics expects {expected.__name__} "
                f"(as {type(self).__name__}.statistics returns), got {type(stats).__name__}"
            )
        if schema is not None:
            schema = checked_schema(schema, stats)
        with self._atomic():
            self._install(stats, schema=schema)
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
        spec = self.spec
        if 0 < n < spec.min_samples:  # no weight at all: _install says so
            raise ValueError(
                f"Found array with {n} sample(s) (shape=({n}, {stats.n_features})) while a "
                f"minimum of {spec.min_samples} is required by {type(self).__name__}. "
                "One row gives no estimate of the spread around the class means."
            )
        if stats.n_classes < spec.min_classes:
            raise ValueError(
                "The number of classes has to be greater than one. Got "
                f"{stats.n_classes} class. {type(self).__name__} needs at least "
                f"{spec.min_classes} classes to classify; y has {stats.n_classes} class "
                f"({stats.classes.tolist()})."
            )
        warn_about_classes(self, stats)  # before: a model that refuses a class still warns
        self._install(stats, schema=schema)
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
            Statistics of the estimator's ``input_spec().statistic``.
        feature_names_in : array-like of str, optional
            The names of the features, if the data had them.
        schema : Schema, optional
            The feature count, names and dtype of the data (see
            :meth:`fit_statistics`); instead of ``feature_names_in``.
        **params
            The estimator's hyperparameters.

        Statistics in which a class has too few rows for its model yet (a
        checkpoint of a stream, see ``partial_fit``) give an estimator that
        holds them and refuses to predict until an update gives the class
        enough rows; ``fit`` and :meth:`fit_statistics` refuse such data.
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
            expected = est.spec.statistic
            if expected is not None and not isinstance(stats, expected):
                return est.fit_statistics(stats, schema=schema)  # its TypeError
            est._install(stats, schema=checked_schema(schema, stats), defer=True)
            return est
        est._install(stats, schema=(stats.n_features, names), defer=True)
        return est

    def _install(
        self,
        stats: Any,
        *,
        schema: tuple[Any, ...] | None = None,
        defer: bool = False,
        **extra: Any,
    ) -> None:
        """Derive every fitted attribute from ``stats``, then set them all at once.

        The parameters are validated first (they may have changed since the
        last fit), and nothing is changed on the estimator unless the
        derivation succeeds. With ``defer`` (``partial_fit``, ``merge``,
        ``forget``, ``from_stats``), a derivation that fails for want of rows
        (:meth:`_deferral`) still installs the statistics; the derived
        attributes are then :class:`~._underived.Underived`, which raise that
        error on use, until an update gives the classes enough rows.
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
            if self.squares_deviations:  # statistics from any source (streams, clusters)
                names = self.__dict__.get("feature_names_in_")
                check_squared_range(stats_bounds(stats), int(stats.counts.sum()), names)
            # factorisations of up to (p, p) per class: on a busy machine the
            # BLAS runs them on one thread (see bayesrule.config_context)
            with blas_budget(float(stats.n_classes) * float(stats.n_features) ** 3):
                attrs = self._derive(stats, priors, **extra)
            # the names a later update waiting for rows makes Underived (no stale values)
            attrs["_derived_names"] = tuple(k for k in attrs if k != "_model")
        except BaseException as exc:
            why = self._deferral(exc, stats) if defer and isinstance(exc, ValueError) else None
            if why is None:
                for key in _SCHEMA:
                    self.__dict__.pop(key, None)
                self.__dict__.update(saved)
                raise
            exc.args = (f"{exc} {why}", *exc.args[1:])
            attrs = self._underived_attrs(stats, exc)
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
                if name in attrs and not isinstance(attrs[name], Underived):
                    value = np.asarray(attrs[name]).astype(dtype)
                    attrs[name] = value[()] if value.ndim == 0 else value
        for name, value in attrs.items():
            setattr(self, name, value)
        # a model an engine holds (its arrays on a device): the engine moves them
        after_install(self)

    def _deferral(self, exc: ValueError, stats: Any) -> str | None:
        """Why ``exc`` waits for more rows (an update keeps its statistics), or None: see
        :func:`~._underived.waiting_reason`."""
        return waiting_reason(self, exc)

    def _underived_attrs(self, stats: Any, exc: BaseException) -> dict[str, Any]:
        """The fitted attributes of a model waiting for rows: see :func:`~._underived.waiting_attrs`."""
        return waiting_attrs(self, exc)

    def _input_dtype_names(self) -> tuple[str, ...]:
        """The fitted attributes given in the input's dtype (scikit-learn's choice)."""
        return self.spec.input_dtype_attrs

    def _resolve_priors(self, stats: Any) -> NDArray[np.float64]:
        """Class priors: the ``priors`` parameter, else the weighted class proportions.

        Subclasses whose prior parameters are spelled differently (naive
        Bayes' ``fit_prior`` / ``class_prior``) override this.
        """
        if self.priors is None:
            return np.asarray(stats.weights / stats.weights.sum(), dtype=float)
        return resolve_priors(self.priors, stats.classes, strict=self.spec.strict_priors)

    def _derive(self, stats: Any, priors: NDArray[np.float64], **extra: Any) -> dict[str, Any]:
        raise NotImplementedError


#: statistics with no array API path (values kept, categories counted): their
#: estimators refuse device arrays (KernelNB, CategoricalNB; MixedNB reads frames)
_NO_ARRAY_API = (ValueCountStats, CategoryStats)

#: the fitted attributes that describe the input's features
_SCHEMA = ("n_features_in_", "feature_names_in_", "_fit_dtype")


def is_fitted(est: Any) -> bool:
    """Whether ``est`` holds fitted statistics."""
    return hasattr(est, "stats_")
