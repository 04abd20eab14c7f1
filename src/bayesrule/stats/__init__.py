"""Mergeable sufficient statistics: the bottom layer of bayesrule.

Every statistic is a commutative monoid: an empty value, ``update`` with a
block of ``(X, y, sample_weight)``, ``merge`` with another value, and estimates
derived on demand; ``subtract`` removes rows again. Hyperparameters never
enter here, so fitting at once, in chunks, or on a cluster gives the same
statistics. :class:`Statistic` states the protocol and its laws, and every
incompatibility raises :class:`StatisticsError`.
"""

from ._categories import MAX_CATEGORIES, CategoryStats, check_categories
from ._common import (
    Statistic,
    StatisticsError,
    as_classes,
    block_bounds,
    class_label,
    encode,
    label_repr,
    one_hot_classes,
)
from ._counts import CountStats
from ._diagonal import DiagonalStats
from ._fourth import FourthMomentStats
from ._mixed import KIND_STATS, MixedStats, Vocabulary
from ._mixture import MixtureStats
from ._pooled import PooledScatterStats
from ._scatter import ScatterStats
from ._sketch import RowSample, row_keys
from ._values import ValueCountStats

__all__ = [
    "KIND_STATS",
    "MAX_CATEGORIES",
    "MixtureStats",
    "RowSample",
    "Vocabulary",
    "as_classes",
    "block_bounds",
    "class_label",
    "label_repr",
    "row_keys",
    "CategoryStats",
    "CountStats",
    "DiagonalStats",
    "FourthMomentStats",
    "MixedStats",
    "PooledScatterStats",
    "ScatterStats",
    "Statistic",
    "StatisticsError",
    "ValueCountStats",
    "check_categories",
    "encode",
    "one_hot_classes",
]
