"""The range check from the count models' fused pass: the sample's maxima and X's minimum.

The fused product of MultinomialNB / ComplementNB records the least value of
``X`` and the per-column largest values of the range check's sample
(:func:`bayesrule._util.products.track_low`), not the sample's per-column
least values: :func:`~bayesrule.estimators._ranges.warn_out_of_range` takes
those itself for the features that the maxima and that one number leave in
doubt. The warnings (their categories, their texts, the features they
name) must be exactly those of the exact bounds, for every kind of data:
in range, far beyond it (either side), in smaller units (either side), and
columns of unknown or zero-width training range.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesrule as br
from bayesrule import OutOfRangeWarning, UnitsWarning
from bayesrule._util import products
from bayesrule._util.row_sample import run_rows, sample_runs
from bayesrule.estimators._ranges import _in_doubt, warn_out_of_range

#: how a column of the batch relates to its training range [lower, upper]
KINDS = ("inside", "far_above", "far_below", "units_above", "units_below", "edge", "wide")


def _column(kind: str, lower: float, upper: float, n: int, rng) -> np.ndarray:
    W = upper - lower
    u = rng.random(n)
    if kind == "inside":
        return lower + W * u
    if kind == "far_above":  # beyond the band on a fraction of the rows
        x = lower + W * u
        x[rng.random(n) < 0.3] = upper + 3 * W
        return x
    if kind == "far_below":
        x = lower + W * u
        x[rng.random(n) < 0.3] = lower - 3 * W
        return x
    if kind == "units_above":  # narrow and wholly beyond the range, a quarter width away
        return upper + 0.3 * W + 0.05 * W * u
    if kind == "units_below":
        return lower - 0.3 * W - 0.05 * W * u
    if kind == "edge":  # right at the rules' thresholds
        return np.where(u < 0.5, upper + 0.25 * W, lower - 2 * W)
    return lower - 3 * W + 7 * W * u  # wide: beyond on both sides


def _recorded(est, X, seen):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        warn_out_of_range(est, X, seen)
    return [(w.category, str(w.message)) for w in got]


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 5, 19, 20, 60, 700, 2048, 2500, 5000]),
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=8),
    odd=st.sampled_from(["none", "nan", "zero"]),
)
def test_the_maxima_and_the_minimum_warn_as_the_exact_bounds(seed, n, kinds, odd):
    rng = np.random.default_rng(seed)
    p = len(kinds)
    lower = rng.uniform(-5, 5, size=p)
    upper = lower + rng.uniform(0.1, 10, size=p)
    X = np.column_stack([_column(k, lower[j], upper[j], n, rng) for j, k in enumerate(kinds)])
    if odd == "nan":  # unknown training range: never judged
        lower[0] = upper[0] = np.nan
    elif odd == "zero":  # zero width: never judged
        upper[0] = lower[0]
    est = SimpleNamespace(stats_=SimpleNamespace(lower=lower, upper=upper))
    exact = _recorded(est, X, None)
    fused = (float(X.min()), X[run_rows(sample_runs(n))].max(axis=0))
    assert _recorded(est, X, fused) == exact


def test_columns_left_out_of_doubt_are_flagged_by_no_minimum():
    # for a column out of doubt, any least value from X's minimum up to its maximum
    # gives no warning: the rule never needs it
    rng = np.random.default_rng(1)
    lower, upper = np.zeros(6), np.ones(6)
    est = SimpleNamespace(stats_=SimpleNamespace(lower=lower, upper=upper))
    judged = np.ones(6, dtype=bool)
    for _ in range(200):
        hi = rng.uniform(-2, 4, size=6)
        low = float(hi.min() - rng.uniform(0, 3))
        clear = ~_in_doubt(low, hi, lower, upper, judged)
        for m in np.linspace(low, hi.min(), 7):
            X = np.vstack([np.full(30, m)[:, None] * np.ones((30, 6)), hi[None, :]])
            X[:, ~clear] = 0.5  # the columns in doubt kept inside
            assert _recorded(est, X, (float(X.min()), X.max(axis=0))) == [], (hi, m)


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB"])
@pytest.mark.parametrize("scale", [1.0, 255.0, 0.01])
def test_the_fused_path_warns_as_the_plain_path(name, scale, monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.poisson(2.0, size=(600, 80)).astype(np.float64)
    X[:, :5] += 20.0  # columns whose range stays away from zero: units can show
    y = np.arange(600) % 3
    est = getattr(br, name)().fit(X, y)
    Z = rng.poisson(2.0, size=(3000, 80)).astype(np.float64)
    Z[:, :5] += 20.0
    Z *= scale
    monkeypatch.setattr(products, "PARALLEL_MIN_WORK", 1.0)  # the fused path for this size
    assert products.fusable(Z, 3)

    def run(fused: bool):
        monkeypatch.setattr(type(est), "_fused_sign", fused)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out = est.predict_proba(Z)
        return out, [(w.category, str(w.message)) for w in got]

    out_f, warned_f = run(True)
    out_p, warned_p = run(False)
    # the two paths sum the same products in another order: at scale 255 a row's joint
    # log likelihood is about 1e5, whose rounding (1e-11) moves a posterior by ~1e-10
    np.testing.assert_allclose(out_f, out_p, rtol=1e-8 if scale > 1 else 1e-10, atol=1e-12)
    assert warned_f == warned_p
    if scale == 255.0:
        assert any(c is OutOfRangeWarning for c, _ in warned_f)
    if scale == 0.01:
        assert any(c is UnitsWarning for c, _ in warned_f)


_edges = st.sampled_from([0.0, 1.0, -1.0, 0.25, 1e300, -1e300, np.inf, -np.inf, np.nan])
_values = st.one_of(st.floats(-1e6, 1e6, allow_nan=False), _edges)


@settings(max_examples=300, deadline=None)
@given(lower=_values, upper=_values, a=_values, b=_values)
def test_units_place_test_is_shared_and_unchanged(lower, upper, a, b):
    # the units rule's place test, written once (_units.far_outside), is the test it was
    # before: the batch wholly below or above, a quarter of the training width away;
    # and _in_doubt's units part is that test read at seen_hi alone
    from bayesrule.estimators._units import UNITS_GAP, far_outside

    least, largest = min(a, b), max(a, b)
    L, U, m, M = (np.array([v]) for v in (lower, upper, least, largest))
    with np.errstate(invalid="ignore", over="ignore"):
        W = U - L
        below, above = M < L, m > U
        gap = np.where(below, L - M, m - U)
        before = (below | above) & (gap >= UNITS_GAP * W)
        # (below and above at once needs least > largest of a range of positive width)
        judged_before = before & (W > 0)
        assert (far_outside(L, U, m, M) & (W > 0)).tolist() == judged_before.tolist()
        quarter = UNITS_GAP * W
        old_doubt = ((M < L) & (L - M >= quarter)) | ((M > U) & (M - U >= quarter))
        assert far_outside(L, U, M, M).tolist() == old_doubt.tolist()
