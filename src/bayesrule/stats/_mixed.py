"""One statistic per kind of column, with the vocabularies of string columns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._base import ClassStatistic
from ._categories import MAX_CATEGORIES, CategoryStats
from ._common import (
    Rows,
    StatisticsError,
    arrays_close,
    as_classes,
    check_features,
    class_totals,
)
from ._counts import CountStats
from ._diagonal import DiagonalStats
from ._values import ValueCountStats
from ._vocabulary import (
    Vocabulary,
    as_vocab,
    as_vocabulary,
    check_vocabularies,
    form_mismatch,
    show_value,
    united_vocabulary,
    vocabulary_form,
)
from .schema import special

__all__ = ["KIND_STATS", "MixedStats", "as_vocabulary"]

#: The statistic each kind of column needs.
KIND_STATS: dict[str, Any] = {
    "gaussian": DiagonalStats,
    "bernoulli": CountStats,
    "poisson": CountStats,
    "categorical": CategoryStats,
    "kernel": ValueCountStats,
    # a numeric column whose kind the estimator chooses from the data when it
    # derives the model: the per-class weights of its distinct values, from
    # which every other kind's statistic follows
    "auto": ValueCountStats,
}


@dataclass(frozen=True, eq=False, repr=False)
class MixedStats(ClassStatistic):
    r"""One statistic per kind of column, for a model with a class model per column.

    ``kinds[j]`` names the model of column ``j`` (a key of ``KIND_STATS``), or
    is ``'auto'`` for a numeric column whose model is chosen from these
    statistics when a model is derived (it holds the column's distinct values
    with their per-class weights, as a 'kernel' column does: the kind is then
    the same for any chunking of the data and after merges);
    ``parts[kind]`` holds the statistics of the columns of that kind, in
    their order in ``X``. A categorical column holds either integer category
    codes used as they are (``vocabularies[j]`` is None) or codes into
    ``vocabularies[j]``, a sorted array of the strings seen with positive
    weight: code ``c`` stands for ``vocabularies[j][c]``. Every other column
    has no vocabulary (None).

    A numeric categorical column (years, ratings) has a vocabulary of float64
    values: code ``c`` stands for ``vocabularies[j][c]``, as for strings.

    ``dtypes`` and ``reasons`` describe the columns, for the estimator that
    reads and writes them (``()`` when unknown): the dtype each column had in
    the data (``'int64'``, ``'category'``...), and why it got its kind
    (``'inferred: text, 3 distinct values'``). They are not statistics: a merge
    keeps those of its left side (of the first block of a stream), or of the
    other side where the left side has none; ``allclose`` ignores them.

    A monoid like each part: ``merge`` unites the classes and, for string
    columns, the vocabularies (the sorted union, each side's category counts
    recoded onto it), so blocks that saw different strings merge to the
    statistics of all the data, and merging is associative and commutative.
    ``subtract`` removes the categories of ``other``; a category left with no
    weight leaves the vocabulary, so that ``s(A ∪ B).subtract(s(B)) == s(A)``.
    A categorical column in which nothing was observed takes the form of the
    other side (codes or strings); two values whose columns are of different
    kinds, or whose observed categorical columns are codes in one and strings
    in the other, raise :class:`StatisticsError`.

    Attributes
    ----------
    classes, counts, weights : as for the other statistics
    kinds : tuple of str, one per feature
    vocabularies : tuple of (ndarray of str or float64, or None), one per feature
    parts : dict of str to statistics
        One statistic per kind present, over the columns of that kind.
    dtypes, reasons : tuple of str, one per feature, or ()
    """

    kinds: tuple[str, ...] = field(metadata=special("kinds"))
    vocabularies: tuple[Vocabulary, ...] = field(metadata=special("vocabularies"))
    parts: dict[str, Any] = field(metadata=special("parts"))
    dtypes: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # a model file gives back lists where tuples were saved
        object.__setattr__(self, "kinds", tuple(str(k) for k in self.kinds))
        vocabs = tuple(as_vocab(v) for v in self.vocabularies)
        object.__setattr__(self, "vocabularies", vocabs)
        for name in ("dtypes", "reasons"):
            notes = tuple(str(t) for t in getattr(self, name))
            if notes and len(notes) != len(self.kinds):
                raise StatisticsError(
                    f"{name} must have one entry per column ({len(self.kinds)}) or none; "
                    f"got {len(notes)}."
                )
            object.__setattr__(self, name, notes)
        # one order of the parts (a model file's dict comes back sorted), so
        # that a model sums its per-kind log densities in one order
        if set(self.parts) != set(self.kinds):
            raise StatisticsError(
                f"MixedStats needs one part per kind of column {sorted(set(self.kinds))}; "
                f"got {sorted(self.parts)}."
            )
        parts = {kind: self.parts[kind] for kind in KIND_STATS if kind in self.parts}
        object.__setattr__(self, "parts", parts)
        if len(vocabs) != len(self.kinds):
            raise StatisticsError(
                f"vocabularies must have one entry per column ({len(self.kinds)}); "
                f"got {len(vocabs)}."
            )
        super().__post_init__()
        self._bounds_from_parts()

    def with_bounds(self, lower: ArrayLike, upper: ArrayLike) -> MixedStats:
        """The same statistics with these bounds for the numeric columns (see ClassStatistic).

        The bounds live in the parts; a categorical column's stay unknown.
        """
        lo, hi = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
        check_features(self.n_features, lo.size, "lower")
        check_features(self.n_features, hi.size, "upper")
        parts = {
            kind: part
            if kind == "categorical"
            else part.with_bounds(lo[self.columns(kind)], hi[self.columns(kind)])
            for kind, part in self.parts.items()
        }
        return dataclasses.replace(self, parts=parts)

    def _bounds_from_parts(self) -> None:
        """Set ``lower``/``upper`` from the parts: the numeric columns' ranges, NaN elsewhere.

        A categorical column's codes index a vocabulary that merging renumbers,
        so it has no range: its part's bounds are unknown (NaN) too, and
        merging and subtracting the parts keeps the laws.
        """
        p = len(self.kinds)
        lower, upper = np.full(p, np.nan), np.full(p, np.nan)
        parts = dict(self.parts)
        for kind, part in parts.items():
            if kind == "categorical":
                if not (np.isnan(part.lower).all() and np.isnan(part.upper).all()):
                    nan = np.full(part.n_features, np.nan)
                    parts[kind] = dataclasses.replace(part, lower=nan, upper=nan.copy())
                continue
            cols = self.columns(kind)
            lower[cols], upper[cols] = part.lower, part.upper
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    # ------------------------------------------------------------ constructors
    @staticmethod
    def _check_kinds(kinds: Any) -> tuple[str, ...]:
        if isinstance(kinds, (int, np.integer)):
            return ("gaussian",) * int(kinds)
        kinds = tuple(kinds)
        for j, kind in enumerate(kinds):
            if kind not in KIND_STATS:
                raise ValueError(
                    f"column {j} has the kind {kind!r}; expected one of {list(KIND_STATS)}."
                )
        return kinds

    def columns(self, kind: str) -> NDArray[np.intp]:
        """Indices of the columns of one kind."""
        return np.flatnonzero(np.asarray(self.kinds, dtype=object) == kind)

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: Any) -> MixedStats:
        """The identity element for columns of the given kinds.

        ``n_features`` is the tuple of kinds, or a number of columns (all
        'gaussian', as MixedNB models the columns of an array). Categorical
        columns have no vocabulary; as nothing is observed in them, they take
        the form of whatever they are merged with.
        """
        c = as_classes(classes)
        kinds = cls._check_kinds(n_features)
        parts = {
            kind: KIND_STATS[kind].empty(c, kinds.count(kind))
            for kind in KIND_STATS
            if kind in kinds
        }
        zeros = np.zeros(c.size)
        return cls(c, zeros.astype(np.int64), zeros, kinds, (None,) * len(kinds), parts)

    #: the columns are read as float64 (NaN = missing, codes for categorical ones)
    input_dtype = np.float64

    @classmethod
    def _from_rows(
        cls,
        rows: Rows,
        *,
        kinds: Any = None,
        vocabularies: Any = None,
        max_categories: int = MAX_CATEGORIES,
        dtypes: Any = (),
        reasons: Any = (),
    ) -> MixedStats:
        """Statistics of one numeric data set whose column ``j`` is of kind ``kinds[j]``.

        ``from_data`` takes, besides the rows:

        Parameters
        ----------
        kinds : tuple of str, default=None
            One kind per column; by default every column is 'gaussian'. A
            categorical column holds integer codes: indices into its
            vocabulary when it has one.
        vocabularies : sequence of (array-like of str or None), default=None
            For each column, the strings its codes stand for (sorted and
            unique) or numbers (float64, sorted and unique), or None.
            Categories of no positive weight are dropped.
        max_categories : int, default=MAX_CATEGORIES
            Bound on the codes of the categorical columns: each must be an
            integer in ``[0, max_categories)`` (see
            :func:`~bayesrule.stats.check_categories`).
        dtypes, reasons : sequence of str, default=()
            Descriptions of the columns (see the class docstring).
        """
        X, c, yi, w, _ = rows
        kinds = cls._check_kinds(X.shape[1] if kinds is None else kinds)
        check_features(len(kinds), X.shape[1], "kinds")
        vocabs = check_vocabularies(X, kinds, vocabularies)
        counts, weights = class_totals(yi, w, c.size)
        cols = {kind: np.flatnonzero(np.asarray(kinds, dtype=object) == kind) for kind in kinds}
        bound = {"categorical": {"max_categories": max_categories}}
        parts = {
            kind: KIND_STATS[kind]._from_rows(rows.columns(cols[kind]), **bound.get(kind, {}))
            for kind in KIND_STATS
            if kind in cols
        }
        return cls(
            c, counts, weights, kinds, vocabs, parts, tuple(dtypes), tuple(reasons)
        )._compacted()

    def update(self, X: Any, y: Any, sample_weight: Any = None, vocabularies: Any = None) -> Any:
        """The statistics of the rows seen so far plus ``(X, y, w)`` (codes into ``vocabularies``)."""
        block = MixedStats.from_data(
            X, y, sample_weight, kinds=self.kinds, vocabularies=vocabularies, classes=self.classes
        )
        return self.merge(block)

    # ---------------------------------------------------------- merge, subtract
    def _aligned(self, classes: NDArray[Any]) -> MixedStats:
        if np.array_equal(classes, self.classes):
            return self
        out = super()._aligned(classes)
        parts = {kind: part._aligned(classes) for kind, part in self.parts.items()}
        return dataclasses.replace(out, parts=parts)

    def _same_kinds(self, other: MixedStats, action: str) -> None:
        if self.kinds == other.kinds:
            return
        j = next(j for j, (a, b) in enumerate(zip(self.kinds, other.kinds, strict=True)) if a != b)
        raise StatisticsError(
            f"cannot {action} statistics of columns of different kinds: column {j} is "
            f"{self.kinds[j]!r} in one and {other.kinds[j]!r} in the other."
        )

    def _merge_aligned(self, other: MixedStats) -> MixedStats:
        self._same_kinds(other, "merge")
        vocabs = tuple(
            united_vocabulary(j, a, b, self._observed(j), other._observed(j))
            for j, (a, b) in enumerate(zip(self.vocabularies, other.vocabularies, strict=True))
        )
        a, b = self._recoded(vocabs), other._recoded(vocabs)
        parts = {kind: part.merge(b.parts[kind]) for kind, part in a.parts.items()}
        return MixedStats(
            self.classes,
            self.counts + other.counts,
            self.weights + other.weights,
            self.kinds,
            vocabs,
            parts,
            self.dtypes or other.dtypes,
            self.reasons or other.reasons,
        )

    def _subtract_aligned(self, other: MixedStats) -> MixedStats:
        self._same_kinds(other, "subtract")
        for j, (mine, theirs) in enumerate(zip(self.vocabularies, other.vocabularies, strict=True)):
            if not other._observed(j):
                continue
            if vocabulary_form(mine) != vocabulary_form(theirs):
                raise StatisticsError(form_mismatch(j, "subtract", mine, theirs))
            if theirs is not None and mine is not None:
                unknown = np.setdiff1d(theirs, mine)
                if unknown.size:
                    raise StatisticsError(
                        f"cannot forget category {show_value(unknown[0])} of column {j}: these "
                        "statistics never saw it."
                    )
        # other's unobserved columns hold nothing, so they take self's form
        b = other._recoded(self.vocabularies, C=self._n_categories())
        parts = {kind: part.subtract(b.parts[kind]) for kind, part in self.parts.items()}
        # counts and weights are set by ClassStatistic.subtract
        return dataclasses.replace(self, parts=parts)._compacted()

    # ------------------------------------------------------------- vocabularies
    def _observed(self, j: int) -> bool:
        """Whether categorical column ``j`` holds any weight (always True for other kinds)."""
        if self.kinds[j] != "categorical":
            return True
        i = int(np.searchsorted(self.columns("categorical"), j))
        return bool(np.any(self.parts["categorical"].category_counts[:, i, :] > 0))

    def _n_categories(self) -> int:
        part = self.parts.get("categorical")
        return 0 if part is None else int(part.n_categories)

    def _recoded(self, vocabs: tuple[Vocabulary, ...], C: int | None = None) -> MixedStats:
        """The same statistics with the codes of each string column into ``vocabs[j]``.

        ``vocabs[j]`` holds every category column ``j`` has weight for; an
        unobserved column may change form. ``C`` is the number of codes of the
        result (at least what the vocabularies and the integer-coded columns need).
        """
        if C is None and all(
            a is b or (a is not None and b is not None and np.array_equal(a, b))
            for a, b in zip(self.vocabularies, vocabs, strict=True)
        ):
            return self
        part = self.parts.get("categorical")
        if part is None:
            return dataclasses.replace(self, vocabularies=vocabs)
        cc = part.category_counts
        cat = self.columns("categorical")
        need = [
            len(v) if v is not None else (cc.shape[2] if self._observed(int(j)) else 0)
            for j, v in ((j, vocabs[j]) for j in cat)
        ]
        width = max([*need, 0] if C is None else [*need, C])
        out = np.zeros(cc.shape[:2] + (width,))
        for i, j in enumerate(cat):
            old, new = self.vocabularies[j], vocabs[j]
            if not self._observed(int(j)):
                continue
            if old is None:
                out[:, i, : cc.shape[2]] = cc[:, i, :]
            else:
                assert new is not None  # an observed column keeps its form
                out[:, i, np.searchsorted(new, old)] = cc[:, i, : old.size]
        parts = dict(self.parts)
        parts["categorical"] = dataclasses.replace(part, category_counts=out)
        return dataclasses.replace(self, vocabularies=vocabs, parts=parts)

    def _compacted(self) -> MixedStats:
        """The same statistics without the categories of no weight in string columns."""
        part = self.parts.get("categorical")
        if part is None:
            return self
        totals = part.category_counts.sum(axis=0)  # (n_categorical, C)
        vocabs = list(self.vocabularies)
        for i, j in enumerate(self.columns("categorical")):
            v = vocabs[j]
            if v is not None:
                vocabs[j] = v[totals[i, : v.size] > 0]
        new = tuple(vocabs)
        if all(
            a is None or b is None or a.size == b.size
            for a, b in zip(new, self.vocabularies, strict=True)
        ):
            return self
        out = np.zeros_like(part.category_counts)
        coded = False  # whether a column holds integer codes, which keep their width
        for i, j in enumerate(self.columns("categorical")):
            old = self.vocabularies[j]
            if old is None:
                coded = True
                out[:, i, :] = part.category_counts[:, i, :]
            else:
                keep = np.flatnonzero(totals[i, : old.size] > 0)
                out[:, i, : keep.size] = part.category_counts[:, i, keep]
        sizes = [v.size for v in new if v is not None]
        width = max([*sizes, out.shape[2] if coded else 0])
        parts = dict(self.parts)
        parts["categorical"] = dataclasses.replace(part, category_counts=out[:, :, :width])
        return dataclasses.replace(self, vocabularies=new, parts=parts)

    # ------------------------------------------------------------------ queries
    @property
    def n_features(self) -> int:
        return len(self.kinds)

    def allclose(self, other: Any, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether every part agrees to ``rtol``, the string columns compared category by category."""
        if not (
            type(other) is type(self)
            and self.kinds == other.kinds
            and np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and arrays_close(self.weights, other.weights, rtol, atol)
        ):
            return False
        try:
            vocabs = tuple(
                united_vocabulary(j, a, b, self._observed(j), other._observed(j))
                for j, (a, b) in enumerate(zip(self.vocabularies, other.vocabularies, strict=True))
            )
        except StatisticsError:
            return False
        width = max(self._n_categories(), other._n_categories())
        a, b = self._recoded(vocabs, C=width), other._recoded(vocabs, C=width)
        return all(part.allclose(b.parts[kind], rtol, atol) for kind, part in a.parts.items())

    def __repr__(self) -> str:
        kinds = {k: self.kinds.count(k) for k in self.parts}
        return f"MixedStats(n_classes={self.n_classes}, columns={kinds})"
