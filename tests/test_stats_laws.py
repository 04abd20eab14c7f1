"""The laws of every statistic (see ``bayesrule.stats.Statistic``), checked with Hypothesis.

One table (``SPECS``) lists every statistic with a generator of data it is
meant for; every law runs over the whole table. The Gaussian statistics get
data far from the origin (offset 1e6), where raw sums of squares would lose
every digit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bayesrule.stats import (
    CategoryStats,
    CountStats,
    DiagonalStats,
    FourthMomentStats,
    MixedStats,
    PooledScatterStats,
    ScatterStats,
    Statistic,
    StatisticsError,
    ValueCountStats,
)
from bayesrule.stats._common import downdate_moments

_Make = Callable[[np.random.Generator, int, int], np.ndarray]

OFFSET = 1e6
LABELS = np.array(["a", "b", "c"])


def _gaussian(rng, n, p):
    return OFFSET + rng.normal(size=(n, p)) * rng.uniform(0.5, 5.0, size=p)


def _with_nan(make: _Make) -> _Make:
    def inner(rng, n, p):
        X = make(rng, n, p)
        X[rng.random((n, p)) < 0.15] = np.nan
        return X

    return inner


def _counts(rng, n, p):
    return rng.poisson(2.0, size=(n, p)).astype(float)


def _codes(rng, n, p):
    return rng.integers(0, 4, size=(n, p)).astype(float)


def _repeated_values(rng, n, p):
    # few distinct values, so that blocks share values and subtraction
    # leaves some with weight and uses others up
    return rng.choice([-1.5, 0.0, 0.25, 3.0, 1e3], size=(n, p))


def _mixed_kinds(p: int) -> tuple[str, ...]:
    kinds = ("gaussian", "poisson", "categorical", "bernoulli", "kernel")
    return tuple(kinds[j % len(kinds)] for j in range(p))


#: MixedStats seen through the table's two constructors, its columns' kinds
#: cycling through every kind (named as the class, for the error messages)
MIXED = type(
    "MixedStats",
    (),
    {
        "from_data": staticmethod(
            lambda X, y, w=None, classes=None: MixedStats.from_data(
                X, y, w, kinds=_mixed_kinds(np.shape(X)[1]), classes=classes
            )
        ),
        "empty": staticmethod(lambda classes, p: MixedStats.empty(classes, _mixed_kinds(p))),
    },
)


@dataclasses.dataclass(frozen=True)
class Spec:
    cls: type
    make: _Make
    #: tolerance of the merge laws
    rtol: float = 1e-10
    #: absolute tolerance: data of order 1 whose exact moments can be 0
    #: (integer codes) leave rounding residue of order 1e-15 there
    atol: float = 0.0


_GAUSSIAN_NAN = _with_nan(_gaussian)
GAUSSIAN = (_gaussian, _GAUSSIAN_NAN)

SPECS = [
    pytest.param(Spec(DiagonalStats, _GAUSSIAN_NAN), id="DiagonalStats"),
    pytest.param(Spec(CountStats, _with_nan(_counts)), id="CountStats"),
    pytest.param(Spec(CategoryStats, _with_nan(_codes)), id="CategoryStats"),
    pytest.param(Spec(ValueCountStats, _with_nan(_repeated_values)), id="ValueCountStats"),
    # The subtraction of the two scatter statistics is written in
    # stats/_scatter.py and stats/_pooled.py; their subtract tests run here too.
    pytest.param(Spec(PooledScatterStats, _gaussian), id="PooledScatterStats"),
    # its third and fourth residual moments keep fewer digits at an offset of 1e6
    pytest.param(Spec(ScatterStats, _gaussian, rtol=1e-9), id="ScatterStats"),
    # ScatterStats plus the entrywise moments T and Q (subtract in stats/_fourth.py)
    pytest.param(Spec(FourthMomentStats, _gaussian, rtol=1e-9), id="FourthMomentStats"),
    # every kind of column at once, on small integer codes every kind accepts
    pytest.param(Spec(MIXED, _with_nan(_codes), atol=1e-12), id="MixedStats"),
]

FAST = settings(max_examples=40, deadline=None, derandomize=True)


@st.composite
def blocks(draw, n_blocks=2, labels=None, min_rows=1, max_rows=12):
    """``n_blocks`` data sets ``(rng, n, y, w)`` sharing one feature count.

    Block ``i`` draws its labels from ``labels[i]``, so that blocks can see
    different classes; weights are small integers, zero included.
    """
    labels = labels or (LABELS,) * n_blocks
    p = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_blocks):
        n = draw(st.integers(min_rows, max_rows))
        y = rng.choice(labels[i], size=n)
        w = rng.integers(0, 4, size=n).astype(float)
        out.append((n, y, w))
    return p, rng, out


def _make_all(spec, p, rng, parts):
    return [(spec.make(rng, n, p), y, w) for n, y, w in parts]


def _with_counts(stats, counts):
    """``stats`` with other row counts (a MixedStats's parts count the same rows)."""
    if isinstance(stats, MixedStats):
        parts = {k: dataclasses.replace(v, counts=counts) for k, v in stats.parts.items()}
        return dataclasses.replace(stats, counts=counts, parts=parts)
    return dataclasses.replace(stats, counts=counts)


def _concat(*datasets):
    return tuple(np.concatenate(a) for a in zip(*datasets, strict=True))


# -- the protocol -------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS)
def test_every_statistic_follows_the_protocol(spec):
    assert isinstance(spec.cls.empty(LABELS, 2), Statistic)


# -- monoid laws ---------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS)
@FAST
@given(data=blocks(n_blocks=1))
def test_empty_is_identity(spec, data):
    p, rng, parts = data
    ((X, y, w),) = _make_all(spec, p, rng, parts)
    s = spec.cls.from_data(X, y, w, classes=LABELS)
    e = spec.cls.empty(LABELS, p)
    assert s.merge(e).allclose(s, rtol=0)
    assert e.merge(s).allclose(s, rtol=0)


@pytest.mark.parametrize("spec", SPECS)
@FAST
@given(data=blocks(n_blocks=3))
def test_merge_is_associative_and_commutative(spec, data):
    p, rng, parts = data
    a, b, c = (spec.cls.from_data(*d) for d in _make_all(spec, p, rng, parts))
    left = a.merge(b).merge(c)
    assert left.allclose(a.merge(b.merge(c)), rtol=spec.rtol, atol=spec.atol)
    assert left.allclose(c.merge(a).merge(b), rtol=spec.rtol, atol=spec.atol)


@pytest.mark.parametrize("spec", SPECS)
@FAST
@given(data=blocks(n_blocks=2, labels=(LABELS[:2], LABELS[1:])))
def test_merge_of_parts_equals_whole_with_different_classes(spec, data):
    p, rng, parts = data
    A, B = _make_all(spec, p, rng, parts)
    merged = spec.cls.from_data(*A).merge(spec.cls.from_data(*B))
    whole = spec.cls.from_data(*_concat(A, B))
    assert merged.allclose(whole, rtol=spec.rtol, atol=spec.atol)


@pytest.mark.parametrize("spec", SPECS)
@FAST
@given(data=blocks(n_blocks=1))
def test_integer_weights_equal_repeated_rows(spec, data):
    p, rng, parts = data
    ((X, y, w),) = _make_all(spec, p, rng, parts)
    reps = w.astype(int)
    assume(reps.sum() > 0)
    weighted = spec.cls.from_data(X, y, w, classes=LABELS)
    repeated = spec.cls.from_data(np.repeat(X, reps, axis=0), np.repeat(y, reps), classes=LABELS)
    # ``counts`` counts distinct rows with positive weight, which repetition
    # changes on purpose; everything else must agree
    assert _with_counts(weighted, repeated.counts).allclose(repeated, rtol=1e-9, atol=spec.atol)


# -- subtraction -----------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS)
@FAST
@given(data=blocks(n_blocks=2, labels=(LABELS[:2], LABELS[1:])))
def test_subtract_undoes_merge(spec, data):
    # B's labels include 'c' and A's do not: subtracting B removes class 'c'
    # whole, which stays declared with the empty statistic
    p, rng, parts = data
    A, B = _make_all(spec, p, rng, parts)
    whole = spec.cls.from_data(*_concat(A, B))
    rest = whole.subtract(spec.cls.from_data(*B))
    expected = spec.cls.from_data(*A, classes=whole.classes)
    # the feature bounds are an envelope: subtracting keeps those of the whole
    # (which contain A's) unless no row is left, see ClassStatistic
    if rest.counts.sum():
        assert np.array_equal(rest.lower, whole.lower, equal_nan=True)
        assert np.array_equal(rest.upper, whole.upper, equal_nan=True)
        assert not np.any(rest.lower > expected.lower) and not np.any(rest.upper < expected.upper)
        expected = expected.with_bounds(whole.lower, whole.upper)
    assert rest.allclose(expected, rtol=_subtract_rtol(spec, whole, rest), atol=spec.atol)
    gone = ~np.isin(whole.classes, A[1][A[2] > 0])
    assert np.all(rest.weights[gone] == 0) and np.all(rest.counts[gone] == 0)


def _subtract_rtol(spec, whole, rest):
    """1e-10, or for data far from the origin what the downdate can keep.

    Subtracting recovers ``m_A`` from means stored to ``eps |m|`` (1e-10 at
    an offset of 1e6), amplified by ``W_C / W_A``; the second moment's error
    ``~ (W_B W_C / W_A) |m_B - m_C| eps |m|`` is compared on the scale
    ``W_A (1e-6 |m|)^2``, so the tolerance grows as ``(W_C / W_A)^2``. This
    is the information the stored means hold, not a loss of the algorithm.
    """
    if spec.make not in GAUSSIAN:
        return spec.rtol
    held = getattr(whole, "feature_weights", whole.weights)
    left = getattr(rest, "feature_weights", rest.weights)
    amp = np.max(np.where(left > 0, held / np.where(left > 0, left, 1.0), 1.0), initial=1.0)
    if spec.cls in (ScatterStats, FourthMomentStats):
        # the third and fourth moments (M3, M4; T, Q) carry that error of the means times
        # |m_B - m_C| and |m_B - m_C|^2 more (relative 1e-7 at 1e6 in practice);
        # they only feed the Ledoit-Wolf intensity, which needs a few digits
        return max(2e-6 * amp**3, spec.rtol)
    return max(2e-9 * amp**2, spec.rtol)


@pytest.mark.parametrize("spec", SPECS)
@FAST
@given(data=blocks(n_blocks=1))
def test_subtract_everything_leaves_empty(spec, data):
    p, rng, parts = data
    ((X, y, w),) = _make_all(spec, p, rng, parts)
    s = spec.cls.from_data(X, y, w, classes=LABELS)
    assert s.subtract(s).allclose(spec.cls.empty(LABELS, p), rtol=0)


def _one_block(spec, n=6, p=2, seed=0, labels=LABELS[:2]):
    rng = np.random.default_rng(seed)
    X = spec.make(rng, n, p)
    y = np.resize(labels, n)
    return X, y, np.ones(n)


@pytest.mark.parametrize("spec", SPECS)
def test_subtract_refuses_more_weight_than_held(spec):
    X, y, w = _one_block(spec)
    s = spec.cls.from_data(X, y, w)
    with pytest.raises(
        StatisticsError, match=r"cannot remove weight 6 from class 'a', which holds 3"
    ):
        s.subtract(spec.cls.from_data(X, y, 2 * w))


@pytest.mark.parametrize("spec", SPECS)
def test_subtract_refuses_more_rows_than_held(spec):
    X, y, w = _one_block(spec)
    s = spec.cls.from_data(X, y, w)
    twice = s.merge(s)
    with pytest.raises(
        StatisticsError, match=r"cannot remove 6 rows from class 'a', which holds 3"
    ):
        s.subtract(twice)


@pytest.mark.parametrize("spec", SPECS)
def test_subtract_refuses_a_class_not_held(spec):
    X, y, w = _one_block(spec)
    s = spec.cls.from_data(X, y, w)
    other = spec.cls.from_data(X[:1], ["c"])
    with pytest.raises(StatisticsError, match=r"cannot forget class 'c': .*no such class"):
        s.subtract(other)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("action", ["merge", "subtract"])
def test_refuses_other_feature_counts(spec, action):
    a, b = spec.cls.empty(LABELS, 784), spec.cls.empty(LABELS, 783)
    with pytest.raises(StatisticsError, match="expected 784 features, got 783"):
        getattr(a, action)(b)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("action", ["merge", "subtract"])
def test_refuses_another_statistic_type(spec, action):
    other = CountStats if spec.cls is not CountStats else DiagonalStats
    with pytest.raises(StatisticsError, match=rf"can only {action} {spec.cls.__name__} with"):
        getattr(spec.cls.empty(LABELS, 2), action)(other.empty(LABELS, 2))


@pytest.mark.parametrize("spec", SPECS)
def test_refuses_labels_of_another_kind(spec):
    with pytest.raises(StatisticsError, match="class labels are of different kinds"):
        spec.cls.empty(LABELS, 2).merge(spec.cls.empty([0, 1], 2))


@pytest.mark.parametrize("spec", SPECS)
def test_allclose_is_false_for_another_type(spec):
    other = CountStats if spec.cls is not CountStats else DiagonalStats
    assert not spec.cls.empty(LABELS, 2).allclose(other.empty(LABELS, 2))


@pytest.mark.parametrize("spec", SPECS)
def test_update_equals_merge_of_from_data(spec):
    X, y, w = _one_block(spec, n=8)
    s = spec.cls.from_data(X[:4], y[:4], w[:4], classes=LABELS)
    expected = spec.cls.from_data(X, y, w, classes=LABELS)
    assert s.update(X[4:], y[4:], w[4:]).allclose(expected, rtol=1e-10)


# -- what each subtraction refuses on its own -------------------------------------


def test_value_counts_refuse_a_value_not_held():
    s = ValueCountStats.from_data([[1.0], [2.0]], ["a", "a"])
    other = ValueCountStats.from_data([[3.0]], ["a"])
    with pytest.raises(StatisticsError, match=r"value 3\.0 of feature 0 .*no such value"):
        s.subtract(other)


def test_value_counts_drop_used_up_values():
    s = ValueCountStats.from_data([[1.0], [2.0], [2.0]], ["a", "b", "a"])
    rest = s.subtract(ValueCountStats.from_data([[1.0], [2.0]], ["a", "a"]))
    assert rest.values.tolist() == [2.0]
    expected = ValueCountStats.from_data([[2.0]], ["b"], classes=["a", "b"])
    assert rest.allclose(expected.with_bounds(s.lower, s.upper))  # the bounds are an envelope


def test_categories_refuse_a_category_not_held():
    s = CategoryStats.from_data([[0.0], [1.0]], ["a", "a"])
    other = CategoryStats.from_data([[2.0]], ["a"])
    with pytest.raises(StatisticsError, match=r"category 2 of feature 0 of class 'a'"):
        s.subtract(other)


def test_counts_refuse_observed_weight_not_held():
    s = CountStats.from_data([[1.0, np.nan], [1.0, 2.0]], ["a", "a"])
    # as many rows and as much weight, but feature 1 was observed in one row only
    other = CountStats.from_data([[1.0, 2.0], [1.0, 2.0]], ["a", "a"])
    with pytest.raises(
        StatisticsError, match=r"observed weight 2 from feature 1 of class 'a', which holds 1"
    ):
        s.subtract(other)


def test_diagonal_refuses_a_clearly_negative_second_moment():
    # the weights fit, but the subtracted row was never there: C = {0, 10},
    # B = {20} would leave A = {-10} with M2 = 50 - 450 < 0
    s = DiagonalStats.from_data([[0.0], [10.0]], ["a", "a"])
    b = DiagonalStats.from_data([[20.0]], ["a"])
    with pytest.raises(StatisticsError, match=r"second moment of feature 0 of class 'a'"):
        s.subtract(b)


def test_a_class_without_rows_cannot_keep_weight():
    s = CountStats.from_data([[1.0]], ["a"], [2.0])
    with pytest.raises(StatisticsError, match=r"class 'a' would keep weight 1 with no rows"):
        s.subtract(CountStats.from_data([[1.0]], ["a"], [1.0]))


# -- the downdate helper on its own -------------------------------------------------


def _moments(X, w):
    W = w.sum()
    m = w @ X / W
    R = X - m
    return W, m, (R * w[:, None]).T @ R


@pytest.mark.parametrize("pooled", [False, True])
def test_downdate_outer_form_recovers_the_part(pooled):
    rng = np.random.default_rng(7)
    XA, XB = (OFFSET + rng.normal(size=(n, 3)) for n in (5, 9))
    wA, wB = rng.uniform(0.5, 2, 5), rng.uniform(0.5, 2, 9)
    A, B = _moments(XA, wA), _moments(XB, wB)
    C = _moments(np.vstack([XA, XB]), np.concatenate([wA, wB]))
    S = (lambda M: M) if pooled else (lambda M: M[None])
    W, m, M2 = downdate_moments(
        np.array([C[0]]), C[1][None], S(C[2]), np.array([B[0]]), B[1][None], S(B[2]), outer=True
    )
    np.testing.assert_allclose(W, [A[0]], rtol=1e-12)
    np.testing.assert_allclose(m[0], A[1], rtol=1e-14)
    np.testing.assert_allclose(M2 if pooled else M2[0], A[2], rtol=1e-6, atol=1e-6)
