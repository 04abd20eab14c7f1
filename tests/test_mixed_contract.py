"""MixedNB and MixedStats under the statistics contract: vocabularies live in the statistics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

import bayesrule as br
from bayesrule.stats import MixedStats, StatisticsError

pd = pytest.importorskip("pandas")

COLOURS = np.array(["red", "green", "blue", "teal"], dtype=object)


def _frame(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Strings with None, booleans, a pandas categorical with NaN, counts and floats with NaN."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    city = np.array(["Oslo", "Rome", "Lima", "Kyiv", "Pune"], dtype=object)[
        (y + rng.integers(0, 3, n)) % 5
    ]
    city[rng.random(n) < 0.1] = None
    colour = COLOURS[(2 * y + rng.integers(0, 2, n)) % 4].copy()
    colour[rng.random(n) < 0.1] = np.nan
    height = rng.normal(160 + 8 * y, 6)
    height[rng.random(n) < 0.1] = np.nan
    df = pd.DataFrame(
        {
            "city": city,
            "member": rng.random(n) < 0.2 + 0.3 * y,
            "colour": pd.Categorical(colour),
            "visits": rng.poisson(1 + 2 * y),
            "height": height,
        }
    )
    return df, y


KINDS = ["categorical", "bernoulli", "categorical", "poisson", "gaussian"]


# ---------------------------------------------------------------- model files
def test_model_file_keeps_kinds_and_vocabularies(tmp_path):
    df, y = _frame(300, 0)
    m = br.MixedNB().fit(df, y)
    path = br.save(m, tmp_path / "mixed.bayesrule")
    loaded = br.load(path)
    # a batch whose string column holds one category only (the bug: the loaded
    # model rebuilt its vocabulary from this batch, so 'Rome' got code 0)
    batch = df.iloc[:40].copy()
    batch["city"] = "Rome"
    np.testing.assert_array_equal(loaded.predict_proba(batch), m.predict_proba(batch))
    np.testing.assert_array_equal(loaded.predict_proba(df), m.predict_proba(df))


def test_loaded_model_has_kinds_and_categories(tmp_path):
    df, y = _frame(200, 1)
    m = br.MixedNB().fit(df, y)
    loaded = br.load(br.save(m, tmp_path / "mixed.bayesrule"))
    assert loaded.kinds_ == m.kinds_ == KINDS
    assert sorted(loaded.categories_) == sorted(m.categories_) == ["city", "colour"]
    for j, vocab in m.categories_.items():
        np.testing.assert_array_equal(loaded.categories_[j], vocab)
    np.testing.assert_array_equal(m.categories_["city"], ["Kyiv", "Lima", "Oslo", "Pune", "Rome"])


def test_from_stats_has_kinds_and_categories():
    df, y = _frame(200, 2)
    m = br.MixedNB(alpha=0.5).fit(df, y)
    rebuilt = br.MixedNB.from_stats(
        m.statistics(df, y), feature_names_in=df.columns, **m.get_params()
    )
    assert rebuilt.kinds_ == KINDS
    np.testing.assert_array_equal(rebuilt.categories_["colour"], ["blue", "green", "red", "teal"])
    np.testing.assert_array_equal(rebuilt.predict_proba(df), m.predict_proba(df))


# ----------------------------------------------------------- block statistics
def _blocks(df, y, cuts):
    edges = [0, *cuts, len(y)]
    return [(df.iloc[a:b], y[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


def test_blocks_with_different_categories_merge_to_the_whole():
    df, y = _frame(240, 3)
    order = np.argsort(df["city"].fillna("~").to_numpy(), kind="stable")
    df, y = df.iloc[order].reset_index(drop=True), y[order]  # blocks see different cities
    est = br.MixedNB(columns=KINDS)  # kinds pinned: each block would infer its own
    parts = [est.statistics(X, t, classes=[0, 1, 2]) for X, t in _blocks(df, y, [60, 130, 200])]
    assert len({tuple(p.vocabularies[0]) for p in parts}) == len(parts)
    total = parts[0]
    for p in parts[1:]:
        total = total.merge(p)
    whole = est.statistics(df, y)
    assert total.allclose(whole)
    np.testing.assert_array_equal(total.vocabularies[0], whole.vocabularies[0])
    reverse = parts[-1]
    for p in parts[-2::-1]:
        reverse = p.merge(reverse)
    assert reverse.allclose(whole)
    fitted = br.MixedNB().fit(df, y)
    merged = br.MixedNB.from_stats(total, feature_names_in=df.columns)
    np.testing.assert_allclose(merged.predict_proba(df), fitted.predict_proba(df), rtol=1e-10)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), cut=st.floats(0.1, 0.9))
def test_merge_and_subtract_laws_on_tables(seed, cut):
    df, y = _frame(60, seed)
    m = int(cut * len(y))
    est = br.MixedNB(columns=KINDS)
    a = est.statistics(df.iloc[:m], y[:m], classes=[0, 1, 2])
    b = est.statistics(df.iloc[m:], y[m:], classes=[0, 1, 2])
    whole = est.statistics(df, y, classes=[0, 1, 2])
    assert a.merge(b).allclose(whole) and b.merge(a).allclose(whole)
    left = whole.subtract(b)
    # subtracting keeps the feature ranges (an envelope; see ClassStatistic)
    assert left.allclose(a.with_bounds(whole.lower, whole.upper))
    # a category no longer seen leaves the vocabulary, as if never fitted
    for mine, theirs in zip(left.vocabularies, a.vocabularies, strict=True):
        assert (mine is None and theirs is None) or np.array_equal(mine, theirs)
    empty = MixedStats.empty([0, 1, 2], tuple(KINDS))
    assert empty.merge(a).allclose(a) and a.merge(empty).allclose(a)


def test_subtracting_everything_leaves_the_empty_statistic():
    df, y = _frame(80, 12)
    whole = br.MixedNB().statistics(df, y)
    left = whole.subtract(whole)
    assert left.allclose(MixedStats.empty(whole.classes, whole.kinds))
    assert left.vocabularies[0].size == 0


def test_forget_equals_fit_without_the_rows():
    df, y = _frame(200, 4)
    keep = (df["city"] != "Pune").to_numpy()  # every 'Pune' row is forgotten
    model = br.MixedNB().fit(df, y).forget(df[~keep], y[~keep])
    direct = br.MixedNB().fit(df[keep], y[keep])
    assert "Pune" not in model.categories_["city"]
    np.testing.assert_allclose(model.predict_proba(df), direct.predict_proba(df), rtol=1e-10)


def test_statistics_leave_the_estimator_unchanged():
    df, y = _frame(100, 5)
    est = br.MixedNB()
    est.statistics(df, y)
    assert vars(est) == vars(br.MixedNB())
    est.fit(df.iloc[:50], y[:50])
    before = dict(vars(est))
    other = df.iloc[50:].copy()
    other["city"] = "Quito"  # a string the model has not seen
    s = est.statistics(other, y[50:])
    assert vars(est).keys() == before.keys()
    assert all(vars(est)[k] is v for k, v in before.items())
    np.testing.assert_array_equal(s.vocabularies[0], ["Quito"])


def test_partial_fit_unites_vocabularies():
    df, y = _frame(150, 6)
    streamed = br.MixedNB()
    for X, t in _blocks(df, y, [40, 90]):
        streamed.partial_fit(X, t, classes=[0, 1, 2])
    whole = br.MixedNB().fit(df, y)
    np.testing.assert_array_equal(streamed.categories_["city"], whole.categories_["city"])
    np.testing.assert_allclose(streamed.predict_proba(df), whole.predict_proba(df), rtol=1e-10)


# ------------------------------------------------------------------ predictions
def test_unseen_string_gets_the_unseen_probability():
    df = pd.DataFrame({"c": ["x", "y", "x", "y", "y"], "v": [1.0, 2.0, 1.5, 2.5, 3.0]})
    y = np.array([0, 0, 1, 1, 1])
    m = br.MixedNB(alpha=0.5).fit(df, y)
    row = pd.DataFrame({"c": ["never seen"], "v": [np.nan]})
    jll = m.predict_joint_log_proba(row)[0]
    # log prior + log(alpha / (N_k + alpha n)) with n = 2 categories
    expected = np.log([2 / 5, 3 / 5]) + np.log(0.5 / (np.array([2.0, 3.0]) + 0.5 * 2))
    np.testing.assert_allclose(jll, expected, rtol=1e-12)


def test_text_in_a_numeric_column_names_the_column():
    df, y = _frame(50, 7)
    m = br.MixedNB().fit(df, y)
    bad = df.copy()
    bad["height"] = "tall"
    with pytest.raises(ValueError, match=r"column 'height' .*(numbers|'gaussian')"):
        m.predict(bad)


def test_block_statistics_keep_the_fitted_kinds():
    df, y = _frame(50, 7)
    m = br.MixedNB(columns={"visits": "poisson"}).fit(df, y)
    bad = df.copy()
    bad["visits"] = bad["visits"].astype(str)
    with pytest.raises(ValueError, match=r"column 'visits' .*'poisson'"):
        m.statistics(bad, y)


def test_zero_variance_error_names_the_column():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "flat": [5.0, 5.0, 1.0, 2.0]})
    with pytest.raises(ValueError, match=r"column 'flat' has zero variance in class 0"):
        br.MixedNB(columns={"flat": "gaussian"}, var_smoothing=0.0).fit(df, [0, 0, 1, 1])


def test_kernel_floor_is_a_parameter():
    rng = np.random.default_rng(8)
    df = pd.DataFrame({"v": np.r_[np.full(20, 1.0), rng.normal(size=20)]})
    y = np.repeat([0, 1], 20)
    low = br.MixedNB(columns={"v": "kernel"}, bandwidth_floor=0.05).fit(df, y)
    high = br.MixedNB(columns={"v": "kernel"}, bandwidth_floor=0.5).fit(df, y)
    assert low.predict_joint_log_proba(df)[0, 0] > high.predict_joint_log_proba(df)[0, 0]


# ------------------------------------------------------------------------ errors
def test_merge_of_different_kinds_names_the_column():
    df, y = _frame(60, 9)
    a = br.MixedNB(columns={"height": "gaussian"}).fit(df, y)
    b = br.MixedNB(columns={"height": "kernel"}).fit(df, y)
    with pytest.raises(ValueError, match=r"column 'height' is 'gaussian' in one and 'kernel'"):
        a.merge(b)
    sa, sb = a.statistics(df, y), b.statistics(df, y)
    with pytest.raises(StatisticsError, match=r"column 4 is 'gaussian' in one and 'kernel'"):
        sa.merge(sb)


def test_merge_needs_fitted_models_with_the_same_features():
    df, y = _frame(60, 10)
    a = br.MixedNB().fit(df, y)
    with pytest.raises(NotFittedError):
        br.MixedNB().merge(a)
    renamed = br.MixedNB().fit(df.rename(columns={"visits": "trips"}), y)
    with pytest.raises(ValueError, match=r"different feature names.*visits.*trips"):
        a.merge(renamed)


def test_subtracting_an_unseen_category_is_refused():
    df, y = _frame(60, 11)
    est = br.MixedNB(columns=KINDS)
    whole = est.statistics(df, y)
    other = df.iloc[:5].copy()
    other["city"] = "Quito"
    with pytest.raises(StatisticsError, match=r"category 'Quito' of column 0"):
        whole.subtract(est.statistics(other, y[:5]))


def test_codes_and_strings_in_one_column_do_not_merge():
    X = np.array([[0.0], [1.0]])
    codes = MixedStats.from_data(X, [0, 1], kinds=("categorical",))
    words = MixedStats.from_data(X, [0, 1], kinds=("categorical",), vocabularies=[["a", "b"]])
    with pytest.raises(StatisticsError, match="integer category codes in one and strings"):
        codes.merge(words)
    # a column with nothing observed takes the other's form
    assert MixedStats.empty([0, 1], ("categorical",)).merge(words).allclose(words)
