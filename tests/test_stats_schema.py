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


# The model-file schema as io declared it by hand before the fields declared
# themselves: files written then must load the same, so the declarations must
# give exactly this (kept here, frozen, as the reference).
def _f8(*dims: str, low: float | None = None) -> ArraySpec:
    return ArraySpec("float64", dims, low=low)


_LABELS = ArraySpec("labels", ("K",))
_COUNTS = ArraySpec("int64", ("K",), low=0)
_WEIGHTS = ArraySpec("float64", ("K",), low=0.0)
#: each feature's training range (see ClassStatistic): +inf/-inf where nothing
#: was observed, NaN where unknown; missing from files written before bayesrule
#: recorded it (the range is then unknown)
_BOUND = ArraySpec("float64", ("p",), allow_nonfinite=True, optional=True)
_BASE = {
    "classes": _LABELS,
    "counts": _COUNTS,
    "weights": _WEIGHTS,
    "lower": _BOUND,
    "upper": _BOUND,
}

#: The declared form of every field of each statistics class: dtype, shape
#: (in the symbolic sizes of :class:`ArraySpec`) and range. A statistics class
#: missing here (or a field missing from its entry) gets a schema derived from
#: its dataclass fields: ``classes``, ``counts`` and ``weights`` as here,
#: other arrays float64 (integer if annotated so), finite, indexed by class
#: along their first axis if listed in ``_per_class``. The special fields of
#: :class:`~bayesrule.stats.MixedStats` (``kinds``, ``vocabularies``,
#: ``parts``) are checked by name.
LEGACY_SCHEMA = {
    "PooledScatterStats": {**_BASE, "means": _f8("K", "p"), "scatter": _f8("p", "p")},
    "ScatterStats": {
        **_BASE,
        "means": _f8("K", "p"),
        "scatter": _f8("K", "p", "p"),
        "m3": _f8("K", "p"),
        "m4": _f8("K"),
    },
    # with the fields of ScatterStats, which it extends (see _schema)
    "FourthMomentStats": {"t": _f8("K", "p", "p"), "q": _f8("K", "p", "p")},
    "DiagonalStats": {
        **_BASE,
        "feature_weights": _f8("K", "p", low=0.0),
        "means": _f8("K", "p"),
        "m2": _f8("K", "p"),
    },
    "CountStats": {**_BASE, "feature_weights": _f8("K", "p", low=0.0), "sums": _f8("K", "p")},
    "CategoryStats": {**_BASE, "category_counts": _f8("K", "p", "C", low=0.0)},
    "ValueCountStats": {
        **_BASE,
        "indptr": ArraySpec("index", ("p+1",), low=0, csr="values"),
        "values": _f8("V"),
        "value_weights": _f8("K", "V", low=0.0),
    },
    "MixedStats": {**_BASE, "kinds": "kinds", "vocabularies": "vocabularies", "parts": "parts"},
    "MixtureStats": {
        **_BASE,
        "owner": ArraySpec("index", ("M",), low=0),
        "component_weights": _f8("M", low=0.0),
        "component_means": _f8("M", "d"),
        "component_scatter": _f8("M", "d", "d"),
        "centre": _f8("p"),
        "basis": _f8("p", "d"),
        # each feature's scale in the projection; missing from older files (ones)
        "scale": ArraySpec("float64", ("p",), low=0.0, optional=True),
        # the ridge the fit used (what reg_covar='auto' chose); missing from older files
        "reg_covar": ArraySpec("float64", ("1",), allow_nonfinite=True, optional=True),
        # 1: the components share one covariance (what covariance_type='auto' chose),
        # 0: each has its own, -1: unknown; missing from older files
        "shared": ArraySpec("int64", ("1",), low=-1, optional=True),
        "residual_var": _f8("1", low=0.0),
        "log_likelihood": _f8("K"),
        "n_iter": ArraySpec("int64", ("1",), low=0),
        "converged": ArraySpec("int64", ("1",), low=0),
        # passes over the data; missing from files written before it was recorded
        "n_passes": ArraySpec("int64", ("1",), low=0, optional=True),
    },
    "CrossValidatedStats": {
        "total": NestedSpec("ScatterStats"),
        # (alpha, gamma, ridge) of each candidate; -inf marks one where a
        # class covariance was singular
        "cv_points": _f8("M", "3", low=0.0),
        "cv_scores": ArraySpec("float64", ("M",), allow_neg_inf=True),
        # the tie-break of near-equal accuracies; missing from older files
        "cv_log_likelihoods": ArraySpec("float64", ("M",), allow_neg_inf=True, optional=True),
    },
}


def _legacy(cls):
    """The old io._schema(cls): the table, inherited fields included, else derived."""
    declared = {}
    for base in reversed(cls.__mro__):
        declared.update(LEGACY_SCHEMA.get(base.__name__, {}))
    out = {}
    for f in dataclasses.fields(cls):
        out[f.name] = declared.get(f.name, _BASE.get(f.name))
    return out


def _plain(schema):
    """Specs as (type name, field values): io's copies of the classes compare equal."""
    return {
        name: (type(s).__name__, dataclasses.astuple(s)) if dataclasses.is_dataclass(s) else s
        for name, s in schema.items()
    }


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_field_schema_is_the_model_file_schema(cls):
    got, want = _plain(field_schema(cls)), _plain(_legacy(cls))
    assert list(got) == list(want) == [f.name for f in dataclasses.fields(cls)]
    assert got == want


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_field_schema_matches_the_declared_table(cls):
    """Every field io declares by hand is declared the same in the class."""
    declared = {}
    for base in reversed(cls.__mro__):
        declared.update(LEGACY_SCHEMA.get(base.__name__, {}))
    got = _plain(field_schema(cls))
    for name, spec in _plain(declared).items():
        assert got[name] == spec, name


def test_io_reads_the_declared_schema():
    """Model files are checked against the declarations: one table, not two."""
    assert io.ArraySpec is ArraySpec and io.NestedSpec is NestedSpec
    for cls in CLASSES:
        assert io.schema.field_schema(cls) == field_schema(cls)
    for name, schema in io.STATS_SCHEMA.items():
        assert schema == field_schema(getattr(stats, name))


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
