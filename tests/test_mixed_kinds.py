"""MixedNB on real columns: the kinds it infers, overrides, object arrays, samples, model files."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesrule as br
from bayesrule.stats import MixedStats, StatisticsError

pd = pytest.importorskip("pandas")

ISLANDS = np.array(["Biscoe", "Dream", "Torgersen"], dtype=object)


def penguins(n: int = 240, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """A table like Palmer penguins: text with missing values, years, measurements, counts."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    island = ISLANDS[(y + rng.integers(0, 2, n)) % 3].copy()
    island[rng.random(n) < 0.05] = None
    sex = np.where(rng.random(n) < 0.5, "male", "female").astype(object)
    sex[rng.random(n) < 0.05] = np.nan
    bill = rng.normal(39 + 5 * y, 2.5)
    bill[rng.random(n) < 0.05] = np.nan
    df = pd.DataFrame(
        {
            "island": island,
            "bill_length_mm": bill,
            "body_mass_g": rng.normal(3700 + 600 * (y == 2), 300).round().astype(np.int64),
            "sex": sex,
            "year": rng.integers(2007, 2010, n),
            "chicks": rng.poisson(1.0 + y),
            "tagged": rng.random(n) < 0.3 + 0.2 * y,
            "rating": 1 + rng.binomial(4, 0.3 + 0.2 * (y == 1)),
        }
    )
    return df, y


KINDS = {
    "island": "categorical",
    "bill_length_mm": "gaussian",
    "body_mass_g": "gaussian",
    "sex": "categorical",
    "year": "categorical",
    "chicks": "poisson",
    "tagged": "bernoulli",
    "rating": "gaussian",  # 1 + binomial(4, p): in doubt, a measurement
}


def _object_array(df: pd.DataFrame) -> np.ndarray:
    """The table as an object array (what a ColumnTransformer without pandas output gives)."""
    out = np.empty(df.shape, dtype=object)
    for j, name in enumerate(df.columns):
        out[:, j] = df[name].astype(object).to_numpy()
    return out


# ------------------------------------------------------------------ inference
def test_kinds_of_a_penguins_table():
    df, y = penguins()
    m = br.MixedNB().fit(df, y)
    assert dict(zip(df.columns, m.kinds_, strict=True)) == KINDS
    np.testing.assert_array_equal(m.categories_["year"], [2007.0, 2008.0, 2009.0])
    np.testing.assert_array_equal(m.categories_["sex"], ["female", "male"])
    assert set(m.categories_) == {"island", "sex", "year"}


def test_describe_says_what_was_inferred_and_why():
    df, y = penguins()
    m = br.MixedNB(columns={"body_mass_g": "kernel"}).fit(df, y)
    rows = {r["column"]: r for r in m.column_summary()}
    assert rows["year"]["why"].startswith("inferred: 3 distinct integers (2007 to 2009);")
    assert "held-out log likelihood per row: categorical" in rows["year"]["why"]
    assert rows["year"]["parameters"] == "3 categories: 2007, 2008, 2009"
    assert rows["year"]["dtype"] == "int64"
    assert rows["body_mass_g"]["why"] == "declared in columns"
    assert "times the mean" in rows["chicks"]["why"]
    means = [float(v) for v in rows["bill_length_mm"]["parameters"].split()[1::2]]
    np.testing.assert_allclose(
        means, [np.nanmean(df["bill_length_mm"][y == k]) for k in range(3)], rtol=1e-3
    )
    text = m.describe()
    assert len(text.splitlines()) == 1 + df.shape[1]
    assert all(name in text for name in df.columns)


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        # a few values, evenly spread: categories, once there are rows enough to tell
        (np.array([2007, 2008, 2009] * 100), "categorical"),  # years
        (np.array([1, 2, 3, 4, 5] * 60), "categorical"),  # ratings
        (np.array([-2, -1, 0, 1, 2] * 60), "categorical"),  # negative codes: never counts
        # 12 rows, 3 values evenly spread, no class signal: under 5 rows a value
        # the categories must also predict the classes, and in doubt the
        # column is a density (the normal, or the kernel beyond one SE over it)
        (np.array([2007, 2008, 2009] * 4), ("gaussian", "kernel")),
        (np.array([0, 1] * 15), "bernoulli"),
        (np.array([3, 7] * 15), "categorical"),  # two values, not 0/1
        (np.random.default_rng(3).poisson(1.5, 60), "poisson"),  # counts from 0
        (np.arange(-30, 30), "gaussian"),  # many distinct signed integers
        (np.arange(1000, 1060), "gaussian"),  # many distinct, far from 0
        (np.linspace(0, 1, 30), "gaussian"),  # floats
    ],
)
def test_inferred_kind_of_one_column(values, kind):
    y = np.arange(values.size) % 2
    for X in (pd.DataFrame({"v": values}), values[:, None]):
        got = br.MixedNB().fit(X, y).kinds_
        assert got == [kind] if isinstance(kind, str) else got[0] in kind, got


def test_few_values_relative_to_rows_are_not_categories():
    # 12 distinct integers in 12 rows: too few rows per value for categories
    values = np.arange(100, 112)
    assert br.MixedNB().fit(values[:, None], np.arange(12) % 2).kinds_ == ["gaussian"]


# ------------------------------------------------------------------- overrides
def test_columns_by_name_for_tables_and_by_position_for_arrays():
    df, y = penguins(120, 1)
    spec = {"year": "poisson", "rating": "gaussian"}
    m = br.MixedNB(columns=spec).fit(df, y)
    assert m.kinds_[4] == "poisson" and m.kinds_[7] == "gaussian"
    a = br.MixedNB(columns={4: "poisson", 7: "gaussian"}).fit(_object_array(df), y)
    assert a.kinds_ == m.kinds_
    assert br.MixedNB(columns=m.kinds_).fit(df, y).kinds_ == m.kinds_


def test_override_errors_name_the_column():
    df, y = penguins(60, 2)
    with pytest.raises(ValueError, match=r"unknown column 'penguin'.*'island'"):
        br.MixedNB(columns={"penguin": "gaussian"}).fit(df, y)
    with pytest.raises(ValueError, match=r"unknown column 9"):
        br.MixedNB(columns={9: "gaussian"}).fit(df[["year", "chicks"]].to_numpy(), y)
    with pytest.raises(ValueError, match=r"column 'year' the kind 'ordinal'; expected one of"):
        br.MixedNB(columns={"year": "ordinal"}).fit(df, y)
    with pytest.raises(ValueError, match=r"column 'island' holds .* only the 'categorical'"):
        br.MixedNB(columns={"island": "gaussian"}).fit(df, y)


def test_poisson_on_negative_integers_is_refused_naming_column_and_value():
    df = pd.DataFrame({"delta": [3, 1, -4, 2, 0, 5], "v": np.arange(6.0)})
    y = [0, 0, 0, 1, 1, 1]
    assert br.MixedNB().fit(df, y).kinds_[0] != "poisson"
    with pytest.raises(
        ValueError, match=r"column 'delta' .*'poisson'.*non-negative; got -4.0 at row 2"
    ):
        br.MixedNB(columns={"delta": "poisson"}).fit(df, y)
    with pytest.raises(ValueError, match=r"column 0 .*'poisson'.*-4.0"):
        br.MixedNB(columns={0: "poisson"}).fit(df.to_numpy(), y)


# --------------------------------------------------------------- object arrays
def test_object_array_equals_the_dataframe():
    df, y = penguins(200, 3)
    a = br.MixedNB().fit(_object_array(df), y)
    m = br.MixedNB().fit(df, y)
    assert a.kinds_ == m.kinds_
    np.testing.assert_array_equal(a.categories_[0], m.categories_["island"])
    np.testing.assert_array_equal(a.categories_[4], m.categories_["year"])
    np.testing.assert_allclose(a.predict_proba(_object_array(df)), m.predict_proba(df), rtol=1e-12)
    assert a.stats_.allclose(m.stats_)


def test_column_transformer_output_is_accepted():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    df, y = penguins(200, 4)
    prep = ColumnTransformer(
        [
            ("scale", StandardScaler(), ["bill_length_mm"]),
            ("keep", "passthrough", ["island", "year"]),
        ]
    )
    pipe = make_pipeline(prep, br.MixedNB()).fit(df, y)
    assert pipe[-1].kinds_ == ["gaussian", "categorical", "categorical"]
    assert pipe.score(df, y) > 0.6


def test_object_columns_of_strings_and_numbers_are_refused():
    X = np.array([[1.0, "a"], [2.0, "b"], ["five", "a"], [4.0, "b"]], dtype=object)
    with pytest.raises(ValueError, match=r"column 0 of X holds both strings \('five' at row 2\)"):
        br.MixedNB().fit(X, [0, 0, 1, 1])
    X[1, 0] = {"foo": "bar"}
    with pytest.raises(
        TypeError, match=r"column 0 holds a dict \(several fields in one cell\) at row 1"
    ):
        br.MixedNB().fit(X, [0, 0, 1, 1])


# --------------------------------------------------------------------- sample
def test_sample_is_a_dataframe_like_the_training_data():
    df, y = penguins(300, 5)
    df["island"] = df["island"].astype("category")
    m = br.MixedNB().fit(df, y)
    Xs, ys = m.sample(400, random_state=0)
    assert isinstance(Xs, pd.DataFrame)
    assert list(Xs.columns) == list(df.columns)
    assert Xs.dtypes.to_dict() == df.dtypes.to_dict()
    assert set(Xs["year"]) <= {2007, 2008, 2009}
    assert set(Xs["island"].cat.categories) == set(ISLANDS)
    assert set(Xs["sex"]) <= {"male", "female"}
    assert Xs["tagged"].dtype == bool and Xs["chicks"].min() >= 0
    assert Xs["rating"].dtype == df["rating"].dtype  # gaussian, drawn and rounded
    assert np.isfinite(m.score_samples(Xs)).all()
    np.testing.assert_array_equal(np.unique(ys), [0, 1, 2])


def test_sample_of_an_array_gives_values_not_codes():
    rng = np.random.default_rng(6)
    X = np.c_[rng.integers(2007, 2010, 600), rng.poisson(2.0, 600)]  # an integer array
    m = br.MixedNB().fit(X, np.arange(600) % 2)
    assert m.kinds_ == ["categorical", "poisson"]
    Xs, _ = m.sample(50, random_state=1)
    assert Xs.dtype == np.float64 and set(Xs[:, 0]) <= {2007.0, 2008.0, 2009.0}
    strings = br.MixedNB().fit(_object_array(penguins(90, 6)[0]), np.arange(90) % 3)
    Xo, _ = strings.sample(20, random_state=1)
    assert Xo.dtype == object and set(Xo[:, 0]) <= set(ISLANDS)


def test_sample_draws_only_the_categories_of_each_column():
    # a column of 2 categories next to one of 15: no code past a column's own
    rng = np.random.default_rng(7)
    df = pd.DataFrame(
        {"few": rng.choice(["a", "b"], 200), "many": rng.integers(0, 15, 200) * 7 + 1000}
    )
    m = br.MixedNB(alpha=5.0).fit(df, np.arange(200) % 2)
    assert m.kinds_ == ["categorical", "categorical"]
    Xs, _ = m.sample(2000, random_state=0)
    assert set(Xs["few"]) == {"a", "b"}
    assert set(Xs["many"]) == set(df["many"])


# ------------------------------------------------------- partial_fit and friends
def test_partial_fit_chooses_the_kinds_from_all_the_blocks():
    df, y = penguins(300, 8)
    later = df.iloc[150:].copy()
    later["chicks"] = later["chicks"] + 1000  # no longer counts near 0 once this arrives
    later.loc[later.index[0], "year"] = 2010  # a new year joins the vocabulary
    m = br.MixedNB().partial_fit(df.iloc[:150], y[:150], classes=[0, 1, 2])
    assert m.kinds_[list(df.columns).index("chicks")] == "poisson"
    m.partial_fit(later, y[150:])
    whole = br.MixedNB().fit(pd.concat([df.iloc[:150], later]), y)
    assert m.kinds_ == whole.kinds_
    assert m.kinds_[list(df.columns).index("chicks")] != "poisson"
    np.testing.assert_array_equal(m.categories_["year"], [2007, 2008, 2009, 2010])
    np.testing.assert_allclose(m.predict_proba(later), whole.predict_proba(later), rtol=1e-9)
    declared = br.MixedNB(columns={"chicks": "poisson"}).fit(df, y)
    bad = df.iloc[:5].copy()
    bad["chicks"] = -3
    with pytest.raises(ValueError, match=r"column 'chicks' .*non-negative; got -3.0"):
        declared.partial_fit(bad, y[:5])


def test_streamed_merged_forgotten_equal_fitted():
    # the kinds left to the data are chosen from the statistics: no pinning needed
    df, y = penguins(300, 9)
    whole = br.MixedNB().fit(df, y)
    streamed = br.MixedNB()
    for a, b in ((0, 100), (100, 220), (220, 300)):
        streamed.partial_fit(df.iloc[a:b], y[a:b], classes=[0, 1, 2])
    merged = (
        br.MixedNB().fit(df.iloc[:130], y[:130]).merge(br.MixedNB().fit(df.iloc[130:], y[130:]))
    )
    keep = (df["year"] != 2008).to_numpy()
    forgot = br.MixedNB().fit(df, y).forget(df[~keep], y[~keep])
    direct = br.MixedNB().fit(df[keep], y[keep])
    assert streamed.kinds_ == merged.kinds_ == whole.kinds_
    for other in (streamed, merged):
        np.testing.assert_allclose(other.predict_proba(df), whole.predict_proba(df), rtol=1e-9)
    assert forgot.kinds_ == direct.kinds_
    np.testing.assert_allclose(forgot.predict_proba(df), direct.predict_proba(df), rtol=1e-9)


def test_unseen_year_gets_the_unseen_probability():
    df = pd.DataFrame({"year": [2007, 2008, 2007, 2008, 2008, 2007]})
    y = np.array([0, 0, 1, 1, 1, 1])
    m = br.MixedNB(alpha=0.5).fit(df, y)
    jll = m.predict_joint_log_proba(pd.DataFrame({"year": [2011]}))[0]
    expected = np.log([2 / 6, 4 / 6]) + np.log(0.5 / (np.array([2.0, 4.0]) + 0.5 * 2))
    np.testing.assert_allclose(jll, expected, rtol=1e-12)


def test_statistics_of_numbers_and_strings_in_one_column_do_not_merge():
    est = br.MixedNB(columns={"c": "categorical"})
    a = est.statistics(pd.DataFrame({"c": [1, 2]}), [0, 1])
    b = est.statistics(pd.DataFrame({"c": ["x", "y"]}), [0, 1])
    with pytest.raises(StatisticsError, match="numeric categories in one and strings in the other"):
        a.merge(b)
    m = est.fit(pd.DataFrame({"c": [1, 2]}), [0, 1])
    with pytest.raises(
        ValueError, match=r"column 'c' holds strings, but the model was fitted on numbers"
    ):
        m.predict(pd.DataFrame({"c": ["x"]}))


def test_models_on_integer_codes_keep_working():
    # statistics whose categorical column holds codes (no vocabulary), as older models have
    X = np.array([[0.0], [1.0], [2.0], [1.0]])
    stats = MixedStats.from_data(X, [0, 0, 1, 1], kinds=("categorical",))
    m = br.MixedNB.from_stats(stats)
    assert m.categories_ == {}
    m.partial_fit(np.array([[3.0]]), [1])
    assert m.stats_.vocabularies == (None,)
    assert m.predict(np.array([[3.0], [0.0]])).tolist() == [1, 0]


# ------------------------------------------------------------------ model files
def test_model_file_keeps_kinds_dtypes_and_samples(tmp_path):
    df, y = penguins(200, 10)
    df["island"] = df["island"].astype("category")
    m = br.MixedNB().fit(df, y)
    loaded = br.load(br.save(m, tmp_path / "penguins.bayesrule"))
    assert loaded.kinds_ == m.kinds_
    assert loaded.describe() == m.describe()
    np.testing.assert_array_equal(loaded.predict_proba(df), m.predict_proba(df))
    a, ya = m.sample(100, random_state=3)
    b, yb = loaded.sample(100, random_state=3)
    pd.testing.assert_frame_equal(a, b)
    np.testing.assert_array_equal(ya, yb)
    arr = br.MixedNB().fit(_object_array(df), y)
    back = br.load(br.save(arr, tmp_path / "array.bayesrule"))
    np.testing.assert_array_equal(
        back.predict_proba(_object_array(df)), arr.predict_proba(_object_array(df))
    )


def test_from_stats_has_dtypes_and_reasons():
    df, y = penguins(100, 11)
    m = br.MixedNB().fit(df, y)
    rebuilt = br.MixedNB.from_stats(m.statistics(df, y), feature_names_in=df.columns)
    assert rebuilt.column_summary() == m.column_summary()
    assert rebuilt.sample(5, random_state=0)[0].dtypes.to_dict() == df.dtypes.to_dict()


# --------------------------------------------------------------- property test
GENERATORS = {
    "gaussian": lambda rng, n: rng.normal(rng.uniform(-50, 50), rng.uniform(0.5, 5), n),
    "poisson": lambda rng, n: rng.poisson(rng.uniform(1.0, 6.0), n),
    "categorical": lambda rng, n: rng.integers(0, rng.integers(3, 8), n) + rng.integers(1, 3000),
    "text": lambda rng, n: rng.choice(["a", "bb", "ccc", "dddd"], n).astype(object),
    "bernoulli": lambda rng, n: rng.random(n) < rng.uniform(0.2, 0.8),
}


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    kinds=st.lists(st.sampled_from(sorted(GENERATORS)), min_size=1, max_size=5),
    seed=st.integers(0, 2**16),
)
def test_random_tables_get_their_kinds(kinds, seed):
    rng = np.random.default_rng(seed)
    n = 300
    df = pd.DataFrame({f"c{j}": GENERATORS[k](rng, n) for j, k in enumerate(kinds)})
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    m = br.MixedNB().fit(df, y)
    # one Poisson rate with no class signal is close to a rounded normal: in doubt,
    # such a column may stay continuous (the poisson test with class rates is in
    # test_mixed_inference)
    allowed = {"text": {"categorical"}, "poisson": {"poisson", "gaussian", "kernel"}}
    assert all(got in allowed.get(k, {k}) for got, k in zip(m.kinds_, kinds, strict=True))
    assert m.sample(10, random_state=0)[0].dtypes.to_dict() == df.dtypes.to_dict()
    obj = br.MixedNB().fit(_object_array(df), y)
    np.testing.assert_allclose(
        obj.predict_proba(_object_array(df)), m.predict_proba(df), rtol=1e-12
    )
    est = br.MixedNB(columns=list(m.stats_.kinds))  # 'auto' where the data chose
    parts = est.statistics(df.iloc[:30], y[:30], classes=[0, 1]).merge(
        est.statistics(df.iloc[30:], y[30:], classes=[0, 1])
    )
    assert parts.allclose(m.stats_)


def test_categorical_model_draws_only_each_features_own_codes():
    from bayesrule.models import Categorical
    from bayesrule.stats import CategoryStats

    # feature 0 has codes 0..1, feature 1 codes 0..9: the table is 10 wide
    X = np.c_[np.arange(40) % 2, np.arange(40) % 10].astype(float)
    model = Categorical.from_stats(CategoryStats.from_data(X, np.zeros(40)), alpha=10.0)
    np.testing.assert_array_equal(model.n_categories, [2, 10])
    draws = model[0].sample(5000, np.random.default_rng(0))
    assert set(draws[:, 0]) == {0.0, 1.0} and set(draws[:, 1]) == set(range(10))


def test_a_model_file_from_before_dtypes_and_reasons_still_loads(tmp_path):
    import json
    import zipfile

    from bayesrule import io as brio

    df, y = penguins(100, 12)
    m = br.MixedNB().fit(df, y)
    path = br.save(m, tmp_path / "new.bayesrule")
    with zipfile.ZipFile(path) as z:
        members = {name: z.read(name) for name in z.namelist()}
    meta = json.loads(members[brio.METADATA])
    for name in ("dtypes", "reasons"):  # as an older bayesrule wrote it
        del meta["stats"]["fields"][name]
    del meta["checksum"]
    meta["checksum"] = brio._sha256(brio._canonical(meta))
    members[brio.METADATA] = json.dumps(meta).encode()
    old = tmp_path / "old.bayesrule"
    with zipfile.ZipFile(old, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    loaded = br.load(old)
    np.testing.assert_array_equal(loaded.predict_proba(df), m.predict_proba(df))
    assert loaded.stats_.dtypes == () and loaded.column_summary()[0]["why"] == ""
    assert isinstance(loaded.sample(3, random_state=0)[0], pd.DataFrame)
