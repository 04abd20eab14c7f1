"""Fields declared once: the schema, the empty value and the alignment follow from them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bayesrule import io, stats
from bayesrule.estimators._cv_stats import CrossValidatedStats
from bayesrule.stats import ArraySpec, NestedSpec, field_schema, per_class_fields
from bayesrule.stats.schema import empty_arrays, per_class, shared

CLASSES = [
    stats.ScatterStats,
    stats.PooledScatterStats,
    stats.FourthMomentStats,
    stats.DiagonalStats,
    stats.CountStats,
    stats.CategoryStats,
    stats.ValueCountStats,
    stats.MixedStats,
    stats.MixtureStats,
    CrossValidatedStats,
]
#: the statistics whose empty value comes from the declared shapes
GENERIC_EMPTY = [
    stats.ScatterStats,
    stats.PooledScatterStats,
    stats.FourthMomentStats,
    stats.DiagonalStats,
    stats.CountStats,
    stats.CategoryStats,
    stats.ValueCountStats,
]


def _plain(schema):
    """Specs as (type name, field values): io's copies of the classes compare equal."""
    return {
        name: (type(s).__name__, dataclasses.astuple(s)) if dataclasses.is_dataclass(s) else s
        for name, s in schema.items()
    }


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_field_schema_is_the_model_file_schema(cls):
    got, want = _plain(field_schema(cls)), _plain(io._schema(cls))
    assert list(got) == list(want) == [f.name for f in dataclasses.fields(cls)]
    assert got == want


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_field_schema_matches_the_declared_table(cls):
    """Every field io declares by hand is declared the same in the class."""
    declared = {}
    for base in reversed(cls.__mro__):
        declared.update(io.STATS_SCHEMA.get(base.__name__, {}))
    got = _plain(field_schema(cls))
    for name, spec in _plain(declared).items():
        assert got[name] == spec, name


def test_array_spec_has_the_fields_of_io_s():
    assert [f.name for f in dataclasses.fields(ArraySpec)] == [
        f.name for f in dataclasses.fields(io.ArraySpec)
    ]
    assert [f.name for f in dataclasses.fields(NestedSpec)] == [
        f.name for f in dataclasses.fields(io.NestedSpec)
    ]


@pytest.mark.parametrize("cls", GENERIC_EMPTY, ids=lambda c: c.__name__)
@pytest.mark.parametrize("k, p", [(1, 1), (3, 4), (2, 0)])
def test_empty_has_the_declared_shapes(cls, k, p):
    e = cls.empty(np.arange(k), p)
    sizes = {"K": k, "p": p, "p+1": p + 1}
    for name, spec in field_schema(cls).items():
        value = np.asarray(getattr(e, name))
        if spec.dtype == "labels":
            np.testing.assert_array_equal(value, np.arange(k))
            continue
        assert value.shape == tuple(sizes.get(d, 0) for d in spec.dims), name
        if name not in ("lower", "upper"):
            assert not np.any(value), name
    assert e.n_features == p
    assert np.all(e.lower == np.inf) and np.all(e.upper == -np.inf)
    # the identity of merge
    rng = np.random.default_rng(k + p)
    X = rng.integers(0, 3, size=(12, p)).astype(float)
    y = rng.integers(0, k, size=12)
    s = cls.from_data(X, y, classes=np.arange(k))
    assert s.merge(e).allclose(s) and e.merge(s).allclose(s)


@pytest.mark.parametrize("cls", CLASSES[:-1], ids=lambda c: c.__name__)
def test_per_class_fields_are_those_declared_by_class(cls):
    schema = field_schema(cls)
    names = per_class_fields(cls)
    assert {"counts", "weights"} <= set(names)
    for name in names:
        assert isinstance(schema[name], ArraySpec) and schema[name].dims[0] == "K"
    # labels are indexed by class but are the classes themselves
    assert "classes" not in names


def test_alignment_follows_the_declaration():
    """Merging statistics of different classes widens exactly the per-class fields."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    a = stats.PooledScatterStats.from_data(X[:10], np.zeros(10, int))
    b = stats.PooledScatterStats.from_data(X[10:], np.ones(10, int))
    m = a.merge(b)
    assert m.means.shape == (2, 3) and m.scatter.shape == (3, 3)
    assert m.allclose(stats.PooledScatterStats.from_data(X, np.repeat([0, 1], 10)))


def test_a_new_statistic_declares_its_fields_once():
    @dataclasses.dataclass(frozen=True, eq=False, repr=False)
    class SumStats(stats._base.ClassStatistic):
        sums: np.ndarray = dataclasses.field(metadata=per_class("K", "p"))
        total: np.ndarray = dataclasses.field(metadata=shared("p", low=0.0))

        @property
        def n_features(self):
            return int(self.total.size)

    e = SumStats.empty(["a", "b"], 5)
    assert e.sums.shape == (2, 5) and e.total.shape == (5,)
    assert per_class_fields(SumStats) == ("counts", "weights", "sums")
    assert field_schema(SumStats)["total"] == ArraySpec("float64", ("p",), low=0.0)
    wide = e._aligned(np.array(["a", "b", "c"]))
    assert wide.sums.shape == (3, 5) and wide.total.shape == (5,)
    assert set(empty_arrays(SumStats, np.array(["a"]), 2)) == {
        "classes",
        "counts",
        "weights",
        "sums",
        "total",
    }


def test_per_class_needs_the_class_axis_first():
    with pytest.raises(ValueError, match="first axis is 'K'"):
        per_class("p", "K")
