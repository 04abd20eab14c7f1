"""One statistic per kind of column: the mixed naive Bayes statistic."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._categories import CategoryStats
from ._common import (
    as_classes,
    check_features,
    class_totals,
    encode,
    expand,
    union_classes,
)
from ._counts import CountStats, _close, _weights
from ._diagonal import DiagonalStats
from ._values import ValueCountStats

_F = NDArray[np.float64]


__all__ = ["KIND_STATS", "MixedStats"]

#: The statistic each kind of column needs.
KIND_STATS: dict[str, Any] = {
    "gaussian": DiagonalStats,
    "bernoulli": CountStats,
    "poisson": CountStats,
    "categorical": CategoryStats,
    "kernel": ValueCountStats,
}


@dataclass(frozen=True, eq=False)
class MixedStats:
    r"""One statistic per kind of column, for a model with a class model per column.

    ``kinds[j]`` names the model of column ``j`` (a key of ``KIND_STATS``);
    ``parts[kind]`` holds the statistics of the columns of that kind, in
    their order in ``X``. A monoid because each part is one; two values merge
    only if their kinds agree.

    Attributes
    ----------
    kinds : tuple of str, one per feature
    classes, counts, weights : as for the other statistics
    parts : dict of str to statistics
    """

    kinds: tuple[str, ...]
    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: _F
    parts: dict[str, Any] = field(default_factory=dict)

    def columns(self, kind: str) -> NDArray[np.intp]:
        """Indices of the columns of one kind."""
        return np.flatnonzero(np.asarray(self.kinds, dtype=object) == kind)

    @classmethod
    def empty(cls, classes: ArrayLike, kinds: tuple[str, ...]) -> MixedStats:
        """The identity element for columns of the given kinds."""
        c = as_classes(classes)
        kinds = tuple(kinds)
        parts = {
            kind: KIND_STATS[kind].empty(c, kinds.count(kind))
            for kind in KIND_STATS
            if kind in kinds
        }
        return cls(kinds, c, np.zeros(c.size, np.int64), np.zeros(c.size), parts)

    @classmethod
    def from_data(
        cls,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        kinds: tuple[str, ...],
        classes: ArrayLike | None = None,
    ) -> MixedStats:
        """Statistics of one numeric data set whose column ``j`` is of kind ``kinds[j]``."""
        X = np.asarray(X, dtype=np.float64)
        check_features(len(kinds), X.shape[1], "kinds")
        y = np.asarray(y)
        c = as_classes(y if classes is None else classes)
        w = _weights(X.shape[0], sample_weight)
        counts, weights = class_totals(encode(y, c), w, c.size)
        out = cls(tuple(kinds), c, counts, weights, {})
        parts = {
            kind: KIND_STATS[kind].from_data(X[:, out.columns(kind)], y, w, classes=c)
            for kind in KIND_STATS
            if kind in kinds
        }
        return cls(tuple(kinds), c, counts, weights, parts)

    def merge(self, other: MixedStats) -> MixedStats:
        """Statistics of the union of the two data sets."""
        if not isinstance(other, MixedStats):
            raise TypeError(f"can only merge MixedStats with MixedStats, not {type(other)}.")
        check_features(self.n_features, other.n_features, "merge")
        if self.kinds != other.kinds:
            raise ValueError(
                f"cannot merge statistics of columns of different kinds: {list(self.kinds)} "
                f"and {list(other.kinds)}."
            )
        c = union_classes(self.classes, other.classes)
        parts = {kind: part.merge(other.parts[kind]) for kind, part in self.parts.items()}
        return MixedStats(
            self.kinds,
            c,
            expand(self.counts, self.classes, c) + expand(other.counts, other.classes, c),
            expand(self.weights, self.classes, c) + expand(other.weights, other.classes, c),
            parts,
        )

    @property
    def n_features(self) -> int:
        return len(self.kinds)

    @property
    def n_classes(self) -> int:
        return int(self.classes.size)

    def allclose(self, other: MixedStats, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether every part agrees to ``rtol``."""
        return (
            self.kinds == other.kinds
            and np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and _close(self.weights, other.weights, rtol, atol)
            and all(self.parts[k].allclose(other.parts[k], rtol, atol) for k in self.parts)
        )

    def __repr__(self) -> str:
        kinds = {k: self.kinds.count(k) for k in self.parts}
        return f"MixedStats(n_classes={self.n_classes}, columns={kinds})"
