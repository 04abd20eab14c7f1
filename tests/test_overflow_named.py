"""Training values whose squared deviations overflow float64: every model that squares them
refuses the fit with a message naming the feature (or MixedNB's column), never one that blames
another feature or class, a "zero variance", or a warning of NumPy's from inside the statistics;
the count models, which do not square, fit and give finite probabilities."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bayesrule import DiagonalStats, GaussianNB, MixedNB
from bayesrule.estimators.registry import available

SQUARING = ("gnb", "dlda", "knb", "lda", "qda", "rda", "rdacv", "mda")
COUNTS = ("mnb", "cnb", "pnb", "bnb")

rng = np.random.default_rng(0)
y = np.repeat([0, 1, 2], 20)
X = np.abs(np.round(rng.normal(size=(60, 4)) * 2 + y[:, None] + 3))


def _with(value: float, row: int = 45, col: int = 2) -> np.ndarray:
    out = X.copy()
    out[row, col] = value
    return out


@pytest.mark.parametrize("name", SQUARING)
@pytest.mark.parametrize("col", [0, 2, 3])
@pytest.mark.parametrize("value", [1e160, 1e200, 1.7e308])
def test_the_overflowing_feature_is_named(name, col, value):
    frame = pd.DataFrame(_with(value, col=col), columns=list("abcd"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # none of NumPy's
        with pytest.raises(ValueError, match=rf"feature '{'abcd'[col]}' holds values so far apart"):
            available()[name]().fit(frame, y)


@pytest.mark.parametrize("name", SQUARING)
def test_values_just_below_the_overflow_fit(name):
    # the refusal is for an overflow, not for large values: 1e150 apart over 60 rows is finite
    model = available()[name]().fit(_with(1e150), y)
    P = model.predict_proba(X)
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", ("gnb", "dlda", "lda", "qda", "rda"))
def test_a_later_block_that_overflows_is_named_and_leaves_the_model(name):
    model = available()[name]().partial_fit(X[:30], y[:30], classes=[0, 1, 2])
    before = model.predict_proba(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"feature 1 holds values so far apart"):
            model.partial_fit(_with(1e200, row=40, col=1)[30:], y[30:])
    np.testing.assert_array_equal(model.predict_proba(X), before)


@pytest.mark.parametrize("name", COUNTS)
def test_count_models_fit_huge_counts(name):
    model = available()[name]().fit(_with(1e200), y)
    P = model.predict_proba(_with(1e200))
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1.0)
    assert model.predict(_with(1e200)[[45]])[0] == y[45]  # the row that holds it: its class


@pytest.mark.parametrize("columns", [None, ["gaussian"] * 4, ["kernel"] * 4])
def test_mixed_nb_names_the_column(columns):
    frame = pd.DataFrame(_with(1e200), columns=list("abcd"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"column 'c' holds values so far apart .*1e\+200"):
            MixedNB(columns=columns).fit(frame, y)
        with pytest.raises(ValueError, match=r"column 2 holds values so far apart"):
            MixedNB(columns=columns).fit(_with(1e200), y)


def test_mixed_nb_codes_of_any_size_are_categories():
    # a categorical column does not square its values: a code of 1e200 is a label
    kinds = ["gaussian", "gaussian", "categorical", "gaussian"]
    model = MixedNB(columns=kinds).fit(_with(1e200), y)
    assert np.isfinite(model.predict_proba(_with(1e200))).all()


def test_gaussian_nb_blames_no_zero_variance():
    # the overflow was once reported as "zero variance (or too few rows)"
    with pytest.raises(ValueError) as info:
        GaussianNB().fit(_with(1e200), y)
    assert "zero variance" not in str(info.value)


def test_merging_an_empty_part_keeps_an_overflow_infinite():
    # a part without weight adds nothing; it once made inf * 0 = NaN of an overflowed M2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        full = DiagonalStats.from_data(_with(1e200), y)
    empty = DiagonalStats.empty(full.classes, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for merged in (empty.merge(full), full.merge(empty)):
            assert np.isposinf(merged.m2[2, 2])
            np.testing.assert_array_equal(np.isnan(merged.m2), np.isnan(full.m2))
            np.testing.assert_array_equal(merged.means, full.means)


@pytest.mark.parametrize("name", ("gnb", "lda", "qda", "knb"))
@pytest.mark.parametrize("suffix", ("csv", "parquet"))
def test_a_streamed_fit_names_the_feature(tmp_path, name, suffix):
    import bayesrule

    frame = pd.DataFrame(_with(1e200), columns=list("abcd")).assign(y=y)
    path = tmp_path / f"rows.{suffix}"
    if suffix == "csv":
        frame.to_csv(path, index=False)
    else:
        pytest.importorskip("pyarrow")
        frame.to_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"feature 'c' holds values so far apart"):
            bayesrule.fit_stream(available()[name](), path, target="y", progress=False)


@pytest.mark.parametrize("name", ("gnb", "lda", "qda"))
def test_statistics_merged_elsewhere_are_refused_by_name(name):
    # statistics summed on a cluster reach only from_stats: each part's range is fine, the
    # whole's overflows, and the feature is named there too
    est = available()[name]()
    first, second = _with(1e153, row=10)[:40], _with(-1e153, row=45)[40:]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        stats = est.statistics(first, y[:40]).merge(est.statistics(second, y[40:]))
        with pytest.raises(ValueError, match=r"feature 2 holds values so far apart .*-1e\+153"):
            type(est).from_stats(stats)
