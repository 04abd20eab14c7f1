"""The statistics protocol and the base class of every per-class statistic."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any, ClassVar, Protocol, TypeVar, cast, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._bounds import bounds_close, empty_bounds, union_bounds
from ._common import (
    Rows,
    StatisticsError,
    _label,
    arrays_close,
    as_classes,
    check_features,
    check_removal,
    expand,
    label_repr,
    prepare,
    union_classes,
)
from .schema import bound, empty_arrays, labels, per_class, per_class_fields

_S = TypeVar("_S", bound="Statistic")
_C = TypeVar("_C", bound="ClassStatistic")


@runtime_checkable
class Statistic(Protocol):
    r"""What a derivation (``Model.from_stats``) and a reducer need of a statistic.

    A statistic summarises the rows ``(X, y, w)`` of a data set per class. It
    holds the sorted class labels ``classes``, the number of rows with positive
    weight per class ``counts`` and their weight ``weights``, plus its own
    arrays. Writing ``s(A)`` for ``from_data`` of the rows ``A``, every
    statistic obeys these laws (checked with Hypothesis in
    ``tests/test_stats_laws.py``; equal means :meth:`allclose` to rounding):

    * identity: ``s.merge(empty(s.classes, p)) == s``;
    * associativity and commutativity of ``merge``;
    * ``s(A).merge(s(B)) == s(A ∪ B)``, also when ``A`` and ``B`` saw
      different classes (``merge`` unites the classes);
    * a row of integer weight ``w`` counts as ``w`` copies of it (except in
      ``counts``, which counts distinct rows);
    * ``s(A ∪ B).subtract(s(B)) == s(A)`` with ``A``'s classes widened to
      those of ``A ∪ B``: a class left with no rows stays declared, with
      zero weight and the empty statistic.

    Every incompatibility (types, feature counts, label kinds, removing what
    is not held) raises :class:`StatisticsError`.
    """

    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: NDArray[np.float64]

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        ...

    @property
    def n_classes(self) -> int:
        """Number of declared classes (``classes.size``)."""
        ...

    @classmethod
    def empty(cls: type[_S], classes: ArrayLike, n_features: int) -> _S:
        """The identity of ``merge``: no rows for any of ``classes``."""
        ...

    @classmethod
    def from_data(
        cls: type[_S],
        X: Any,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
    ) -> _S:
        """The statistic of the rows ``(X, y, sample_weight)``."""
        ...

    def merge(self: _S, other: _S) -> _S:
        """The statistic of the union of both data sets."""
        ...

    def subtract(self: _S, other: _S) -> _S:
        """The statistic of these rows without those of ``other``."""
        ...

    def allclose(self: _S, other: _S, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether both statistics agree to rounding."""
        ...


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ClassStatistic:
    """What every per-class statistic shares: the monoid plumbing around its merge rule.

    A subclass is a frozen dataclass that declares its own fields after
    ``classes``, ``counts`` and ``weights`` with the helpers of
    :mod:`bayesrule.stats.schema` (``means: NDArray = per_class("K", "p")``,
    ``scatter: NDArray = shared("p", "p")``): the fields declared per class
    are those aligned on merge (zero for a class not seen), the declared
    shapes give ``empty``, and :func:`~bayesrule.stats.field_schema` gives
    the model-file schema. It implements ``_from_rows`` (its own pass over
    the rows that :meth:`from_data` has validated), ``n_features``,
    ``_merge_aligned(other)`` and ``_subtract_aligned(other)`` for two values
    over the same classes.
    ``merge`` unites the classes, so statistics of data sets that saw
    different classes merge too; ``subtract`` checks what is removed and
    leaves a class without rows as the empty statistic. The laws every
    subclass obeys are those of :class:`Statistic`.

    Every statistic also holds the range of each feature in its training
    data, ``lower`` and ``upper`` (keyword-only fields, shape
    ``(n_features,)``): the smallest and largest observed (non-NaN) value of
    the rows of positive weight, over all classes. Predictions compare new
    data with them (:class:`bayesrule.OutOfRangeWarning`). ``(+inf, -inf)``
    means no value observed (the empty statistic), ``NaN`` means unknown
    (statistics made without them, such as a model file written before
    bounds were recorded). ``merge`` takes the elementwise ``min``/``max``
    (exact, so the merge laws hold for them exactly; unknown stays unknown).
    ``subtract`` cannot know which rows held the extremes, so it keeps the
    bounds of ``self``: after ``forget`` they are an envelope of the data
    that is left, never narrower than it (only removing every row resets
    them to the empty range).

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted class labels.
    counts : ndarray of shape (n_classes,), int64
        Rows seen with positive weight, per class.
    weights : ndarray of shape (n_classes,)
        Sum of the sample weights, per class.
    lower, upper : ndarray of shape (n_features,)
        The range of each feature (see above).
    """

    classes: NDArray[Any] = field(metadata=labels())
    counts: NDArray[np.int64] = field(metadata=per_class("K", dtype="int64", low=0))
    weights: NDArray[np.float64] = field(metadata=per_class("K", low=0.0))
    # None (the default) is replaced in __post_init__: the empty range for a
    # statistic without rows, unknown (NaN) for one with rows; missing from
    # model files written before bayesrule recorded it (the range is then unknown)
    lower: NDArray[np.float64] = field(default=cast(Any, None), kw_only=True, metadata=bound("p"))
    upper: NDArray[np.float64] = field(default=cast(Any, None), kw_only=True, metadata=bound("p"))

    def __post_init__(self) -> None:
        p = self.n_features
        lo, hi = self.lower, self.upper
        if lo is None and hi is None:
            if np.any(np.asarray(self.counts) > 0):
                lo, hi = np.full(p, np.nan), np.full(p, np.nan)
            else:
                lo, hi = empty_bounds(p)
        elif lo is None or hi is None:
            raise StatisticsError("the feature bounds lower and upper must be given together.")
        else:
            lo = np.asarray(lo, dtype=np.float64)
            hi = np.asarray(hi, dtype=np.float64)
            for name, a in (("lower", lo), ("upper", hi)):
                if a.shape != (p,):
                    raise StatisticsError(
                        f"the feature bounds {name} must have shape ({p},); got {a.shape}."
                    )
            # a feature's range is finite (lower <= upper), empty (+inf, -inf)
            # or unknown (NaN, NaN); nothing else
            with np.errstate(invalid="ignore"):
                valid = (np.isfinite(lo) & np.isfinite(hi) & (lo <= hi)) | (
                    (lo == np.inf) & (hi == -np.inf)
                )
            valid |= np.isnan(lo) & np.isnan(hi)
            if not np.all(valid):
                j = int(np.flatnonzero(~valid)[0])
                raise StatisticsError(
                    f"the range of feature {j} is [{lo[j]:g}, {hi[j]:g}]; a range must be "
                    "finite with lower <= upper, empty [inf, -inf], or unknown [nan, nan]."
                )
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    def with_bounds(self, lower: ArrayLike, upper: ArrayLike) -> Any:
        """The same statistics with other feature bounds ``lower``, ``upper`` (shape (p,)).

        E.g. to compare statistics after ``subtract`` (whose bounds are an
        envelope) with those of the remaining rows, or to declare a range.
        """
        lo = np.asarray(lower, dtype=np.float64)
        hi = np.asarray(upper, dtype=np.float64)
        return dataclasses.replace(self, lower=lo, upper=hi)

    @property
    def n_features(self) -> int:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @property
    def n_classes(self) -> int:
        return int(self.classes.size)

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> Any:
        """The identity element: no rows seen for any of ``classes``.

        Zeros of the shapes the fields declare (see :mod:`bayesrule.stats.schema`), with no
        category or distinct value observed.
        """
        c = as_classes(classes)
        return cls(**empty_arrays(cls, c, n_features))

    #: the dtype ``from_data`` gives ``X`` (None: a dense array as it is, and a
    #: scipy.sparse matrix passed through)
    input_dtype: ClassVar[Any] = None

    @classmethod
    def from_data(
        cls: type[_C],
        X: Any,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
        **options: Any,
    ) -> _C:
        """The statistics of the rows ``(X, y, sample_weight)``, in one pass over them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows (what a statistic accepts: see its class docstring).
        y : array-like of shape (n_samples,)
            Labels, each among ``classes`` when given.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative frequency weights (default: ones).
        classes : array-like, optional
            All class labels; defaults to the labels present in ``y``.
        **options
            What the statistic takes besides (``max_categories`` of
            :class:`CategoryStats`; the column kinds of :class:`MixedStats`).

        Raises
        ------
        ValueError
            If ``X`` is not 2-D or a label of ``y`` is not among ``classes``.
        """
        rows = prepare(X, y, sample_weight, classes, cls.input_dtype)
        return cls._from_rows(rows, **options)

    @classmethod
    def _from_rows(cls, rows: Rows) -> Any:
        """The statistic's own pass over prepared rows (see :func:`prepare`).

        A statistic that takes options declares them as keyword-only
        parameters here; anything else passed to ``from_data`` is refused.
        """
        raise NotImplementedError  # pragma: no cover

    def update(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Return the statistics of the rows seen so far plus ``(X, y, w)``."""
        shape = getattr(X, "shape", None) or np.shape(X)
        check_features(self.n_features, shape[1] if len(shape) == 2 else -1, "update")
        return self.merge(type(self).from_data(X, y, sample_weight, classes=self.classes))

    def _check_compatible(self, other: Any, action: str) -> None:
        if type(other) is not type(self):
            raise StatisticsError(
                f"can only {action} {type(self).__name__} with {type(self).__name__}, "
                f"not {type(other).__name__}."
            )
        check_features(self.n_features, other.n_features, action)

    def merge(self, other: Any) -> Any:
        """Statistics of the union of the two data sets (classes are united).

        Raises
        ------
        StatisticsError
            If ``other`` is of another type, has another number of features, or
            labels of another kind.
        """
        a, b = self._common_form(other)
        a._check_compatible(b, "merge")
        c = union_classes(a.classes, b.classes)
        out = a._aligned(c)._merge_aligned(b._aligned(c))
        return out.with_bounds(*union_bounds((a.lower, a.upper), (b.lower, b.upper)))

    def _common_form(self, other: Any) -> tuple[Any, Any]:
        """The two values in one type before a merge; the identity here.

        A statistic that extends another (more moments of the same rows)
        overrides this to merge with its base by dropping what the base lacks.
        """
        return self, other

    def subtract(self, other: Any) -> Any:
        """Statistics of these rows without the rows summarised by ``other``.

        ``s(A ∪ B).subtract(s(B)) == s(A)``; the classes are ``self.classes``
        (a class whose rows are all removed stays declared, with zero weight
        and the empty statistic).

        Raises
        ------
        StatisticsError
            If ``other`` is of another type or number of features, holds a
            class these statistics do not, or removes from a class more rows
            or weight (beyond rounding) than it holds; or, in a subclass,
            anything else it does not hold (a value, a category, a clearly
            negative second moment).
        """
        self._check_compatible(other, "subtract")
        union_classes(self.classes, other.classes)  # refuses labels of another kind
        unknown = np.setdiff1d(other.classes, self.classes)
        if unknown.size:
            raise StatisticsError(
                f"cannot forget class {label_repr(unknown[0])}: these statistics hold no such class "
                f"(classes: {self.classes.tolist()[:20]})."
            )
        b = other._aligned(self.classes)
        counts = self.counts - b.counts
        if np.any(counts < 0):
            k = int(np.flatnonzero(counts < 0)[0])
            raise StatisticsError(
                f"cannot remove {int(b.counts[k])} rows from {_label(self.classes, k)}, "
                f"which holds {int(self.counts[k])}."
            )
        weights = check_removal(self.weights, b.weights, self.classes)
        gone = counts == 0
        if np.any(gone & (weights > 0)):
            k = int(np.flatnonzero(gone & (weights > 0))[0])
            raise StatisticsError(
                f"cannot subtract: {_label(self.classes, k)} would keep weight "
                f"{weights[k]:g} with no rows left; the subtracted statistics are not part "
                "of these."
            )
        out = dataclasses.replace(self._subtract_aligned(b), counts=counts, weights=weights)
        out = out._cleared(gone)
        # which rows held the extremes is not known: the bounds stay (an
        # envelope), unless no row is left at all
        if np.any(counts > 0):
            return out.with_bounds(self.lower, self.upper)
        return out.with_bounds(*empty_bounds(self.n_features))

    def _merge_aligned(self, other: Any) -> Any:
        raise NotImplementedError  # pragma: no cover

    def _subtract_aligned(self, other: Any) -> Any:
        """``self`` without ``other`` (same classes); ``counts``/``weights`` are set by the caller."""
        raise NotImplementedError  # pragma: no cover

    def _cleared(self, gone: NDArray[np.bool_]) -> Any:
        """The same statistics with the classes in ``gone`` reset to the empty statistic."""
        if not np.any(gone):
            return self
        changes = {}
        for f in per_class_fields(type(self)):
            a = np.array(getattr(self, f), copy=True)
            a[gone] = 0
            changes[f] = a
        return dataclasses.replace(self, **changes)

    def _aligned(self, classes: NDArray[Any]) -> Any:
        if np.array_equal(classes, self.classes):
            return self
        changes = {
            f: expand(getattr(self, f), self.classes, classes) for f in per_class_fields(type(self))
        }
        return dataclasses.replace(self, classes=classes, **changes)

    def allclose(self, other: Any, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether ``other`` is the same statistic to rounding.

        False for another type or other classes or row counts; otherwise every
        array agrees to ``|a - b| <= atol + rtol * scale``, the scale being the
        array's largest entry (see :func:`arrays_close`; subclasses give
        centred moments a floor for rounding noise).
        """
        return (
            type(other) is type(self)
            and np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and bounds_close(self, other, rtol, atol)
            and self._close(other, rtol, atol)
        )

    def _close(self, other: Any, rtol: float, atol: float) -> bool:
        """Every field but ``classes`` and ``counts`` agrees to ``rtol`` on its own scale."""
        for f in dataclasses.fields(self):
            if f.name in ("classes", "counts", "lower", "upper"):
                continue
            a, b = getattr(self, f.name), getattr(other, f.name)
            if not arrays_close(np.asarray(a), np.asarray(b), rtol, atol):
                return False
        return True

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_classes={self.n_classes}, n_features={self.n_features}, "
            f"rows={int(self.counts.sum())}, weight={float(self.weights.sum()):g})"
        )
