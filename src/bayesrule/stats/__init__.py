"""Mergeable sufficient statistics: the bottom layer of bayesrule.

Every statistic is a commutative monoid: an empty value, ``update`` with a
block of ``(X, y, sample_weight)``, ``merge`` with another value, and estimates
derived on demand; ``subtract`` removes rows again. Hyperparameters never
enter here, so fitting at once, in chunks, or on a cluster gives the same
statistics. :class:`Statistic` states the protocol and its laws, and every
incompatibility raises :class:`StatisticsError`. Each statistic declares its
fields once (:mod:`bayesrule.stats.schema`), from which its empty value, its
alignment of classes and its model-file schema (:func:`field_schema`) follow.
"""

from ._base import Statistic
from ._bounds import block_bounds
from ._categories import MAX_CATEGORIES, CategoryStats, check_categories
from ._common import (
    StatisticsError,
    as_classes,
    class_label,
    encode,
    label_repr,
    one_hot_classes,
    scratch_space,
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
from .schema import ArraySpec, NestedSpec, field_schema, per_class_fields

__all__ = [
    "ArraySpec",
    "NestedSpec",
    "field_schema",
    "per_class_fields",
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
    "scratch_space",
]
