"""MixedNB's kind inference checked against the data: generated columns of each kind and tables."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

import bayesrule as br

pd = pytest.importorskip("pandas")

SEEDS = range(20)
N = 400


def _kinds(draw, n: int = N, classes: int = 3) -> Counter:
    """The kinds chosen for 20 seeded draws of a column with class signal, ``n`` rows."""
    out = Counter()
    for s in SEEDS:
        r = np.random.default_rng(s)
        y = r.integers(0, classes, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[br.MixedNB().fit(draw(r, y)[:, None], y).kinds_[0]] += 1
    return out


# measurements: a normal spread per class, recorded to 0.1 or as floats
MEASUREMENTS = {
    "floats": lambda r, y: r.normal(r.uniform(-5, 5, 3)[y], r.uniform(0.5, 2)),
    "mm to 0.1": lambda r, y: np.round(r.normal(50 + 3 * y, 4), 1),
    # a spread of 3 to 6 inches: variance 0.13 to 0.5 times the mean (at a spread of
    # sqrt(70) = 8.4 rounded normal values are Poisson counts, which they may then be)
    "width in inches": lambda r, y: np.round(r.normal(70 + 2 * y, r.uniform(3, 6))),
    "grams": lambda r, y: np.round(r.normal(3700 + 300 * y, 450)),
}


@pytest.mark.parametrize("name", sorted(MEASUREMENTS))
def test_measurements_are_continuous(name):
    kinds = _kinds(lambda r, y: MEASUREMENTS[name](r, y).astype(np.float64))
    assert kinds["gaussian"] + kinds["kernel"] == len(SEEDS), kinds
    assert kinds["gaussian"] >= 0.8 * len(SEEDS), kinds  # in doubt: gaussian


def test_two_peaked_or_zero_inflated_measurements_are_kernel():
    def two_peaks(r, y):
        return np.where(r.random(y.size) < 0.5, -3.0, 3.0) + y + r.normal(0, 0.4, y.size)

    def rainfall(r, y):  # 40 % dry days, a gamma spread on the others
        return np.where(r.random(y.size) < 0.4, 0.0, r.gamma(2.0, 1.0 + y))

    assert _kinds(two_peaks)["kernel"] == len(SEEDS)
    assert _kinds(rainfall)["kernel"] == len(SEEDS)


def test_poisson_counts_with_class_rates_are_poisson():
    kinds = _kinds(lambda r, y: r.poisson(r.uniform(0.5, 4, 3)[y]))
    assert kinds["poisson"] >= 0.8 * len(SEEDS), kinds


@pytest.mark.parametrize("n", [93, 400, 1500])
def test_overdispersed_counts_and_horsepower_are_not_poisson(n):
    # negative binomial (variance 5 to 10 times the mean) and horsepower-like values
    def nb(r, y):
        return r.negative_binomial(0.8, 0.8 / (0.8 + r.uniform(4, 8, 3)[y]))

    def horsepower(r, y):
        return np.round(r.lognormal(4.6 + 0.25 * y, 0.3))

    assert _kinds(nb, n)["poisson"] == 0
    assert _kinds(horsepower, n)["poisson"] == 0
    assert _kinds(horsepower, n)["categorical"] == 0


def test_the_reason_names_the_scores_and_the_dispersion():
    rng = np.random.default_rng(0)
    y = np.arange(93) % 3
    hp = np.round(rng.lognormal(4.6 + 0.25 * y, 0.3)).astype(np.int64)
    m = br.MixedNB().fit(pd.DataFrame({"horsepower": hp}), y)
    why = m.column_summary()[0]["why"]
    assert m.kinds_[0] in ("gaussian", "kernel")
    assert why.startswith("inferred: ") and "held-out log likelihood per row" in why, why
    assert "times the mean" in why and "poisson" in why, why


CODES = {
    "nominal codes": lambda r, y: (
        np.array([r.choice(6, p=p) for p in r.dirichlet(np.ones(6) * 0.7, 3)[y]]) + 1
    ),
    "ratings 1-5": lambda r, y: (
        np.array([r.choice(5, p=p) for p in r.dirichlet(np.ones(5), 3)[y]]) + 1
    ),
    "years": lambda r, y: (
        2005 + np.array([r.choice(4, p=p) for p in r.dirichlet(np.ones(4), 3)[y]])
    ),
}


@pytest.mark.parametrize("name", sorted(CODES))
def test_codes_ratings_and_years_with_class_signal_are_categorical(name):
    kinds = _kinds(CODES[name])
    assert kinds["categorical"] >= 0.9 * len(SEEDS), kinds


def test_many_distinct_non_integer_values_are_never_categorical():
    # a numeric column of distinct decimals, each value seen once or twice
    kinds = _kinds(lambda r, y: np.round(r.normal(10 + y, 2), 2))
    assert kinds["categorical"] == 0


def test_booleans_text_and_zero_one_integers():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "flag": rng.random(50) < 0.4,
            "text": rng.choice(["x", "y", "z"], 50).astype(object),
            "zero_one": rng.integers(0, 2, 50),
            "mm": rng.normal(40, 3, 50).round(1),
        }
    )
    kinds = br.MixedNB().fit(df, np.arange(50) % 2).kinds_
    assert kinds[:3] == ["bernoulli", "categorical", "bernoulli"]
    assert kinds[3] in ("gaussian", "kernel")


def test_declared_kinds_override_and_auto_can_be_declared():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 300)
    df = pd.DataFrame({"visits": rng.poisson(1 + 2 * y), "mm": rng.normal(y, 1)})
    assert br.MixedNB().fit(df, y).kinds_[0] == "poisson"
    m = br.MixedNB(columns={"visits": "gaussian", "mm": "auto"}).fit(df, y)
    assert m.kinds_[0] == "gaussian"
    assert m.column_summary()[0]["why"] == "declared in columns"
    assert m.column_summary()[1]["why"].startswith("inferred: ")
    with pytest.raises(ValueError, match=r"column 'visits' the kind 'counts'; expected one of"):
        br.MixedNB(columns={"visits": "counts"}).fit(df, y)


# ---------------------------------------------------- the choice is the statistics'
def _table(seed: int, n: int = 240) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    df = pd.DataFrame(
        {
            "mm": np.round(rng.normal(50 + 3 * y, 4), 1),
            "skew": rng.lognormal(0.3 * y, 1.0),
            "visits": rng.poisson(np.array([0.5, 2.0, 4.0])[y]),
            "code": np.array([rng.choice(4, p=p) for p in rng.dirichlet(np.ones(4), 3)[y]]),
            "hp": np.round(rng.lognormal(4.6 + 0.25 * y, 0.3)).astype(np.int64),
            "region": np.array(["n", "s", "e"], dtype=object)[(y + rng.integers(0, 2, n)) % 3],
        }
    )
    return df, y


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    cuts=st.lists(st.integers(1, 239), min_size=1, max_size=4, unique=True),
    seed=st.integers(0, 50),
)
def test_kinds_are_the_same_for_any_chunking_and_merge(cuts, seed):
    df, y = _table(seed)
    order = np.random.default_rng(seed).permutation(y.size)
    df, y = df.iloc[order].reset_index(drop=True), y[order]
    whole = br.MixedNB().fit(df, y)
    edges = [0, *sorted(cuts), y.size]
    streamed = br.MixedNB()
    parts = []
    for a, b in zip(edges[:-1], edges[1:], strict=False):
        streamed.partial_fit(df.iloc[a:b], y[a:b], classes=[0, 1, 2])
        parts.append(br.MixedNB().partial_fit(df.iloc[a:b], y[a:b], classes=[0, 1, 2]))
    merged = parts[0]
    for other in parts[1:]:
        merged = merged.merge(other)
    for other in (streamed, merged):
        assert other.kinds_ == whole.kinds_
        np.testing.assert_allclose(other.predict_proba(df), whole.predict_proba(df), rtol=1e-7)


def test_forgetting_rows_chooses_as_a_fit_on_the_rest():
    df, y = _table(3)
    keep = np.arange(y.size) % 4 != 0
    forgot = br.MixedNB().fit(df, y).forget(df[~keep], y[~keep])
    direct = br.MixedNB().fit(df[keep], y[keep])
    assert forgot.kinds_ == direct.kinds_
    np.testing.assert_allclose(forgot.predict_proba(df), direct.predict_proba(df), rtol=1e-7)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    logs=st.lists(st.floats(-3, 3), min_size=3, max_size=3),
    seed=st.integers(0, 30),
)
def test_continuous_columns_are_unit_free(logs, seed):
    # floats, decimals recorded to 0.1 and a skewed column, each rescaled by 1e-3..1e3
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 200)
    X = np.c_[
        rng.normal(y, 1.0), np.round(rng.normal(50 + 2 * y, 4), 1), rng.lognormal(0.4 * y, 1.0)
    ]
    scaled = X * 10.0 ** np.asarray(logs)
    a, b = br.MixedNB().fit(X, y), br.MixedNB().fit(scaled, y)
    assert a.kinds_ == b.kinds_
    np.testing.assert_allclose(b.predict_proba(scaled), a.predict_proba(X), atol=1e-7)


def test_a_rescaled_integer_column_keeps_its_kind_unless_it_was_counts():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 400)
    code = np.array([rng.choice(5, p=p) for p in rng.dirichlet(np.ones(5), 3)[y]]) * 1.0
    visits = rng.poisson(np.array([0.5, 2.0, 4.0])[y]) * 1.0
    m = br.MixedNB().fit(np.c_[code, visits], y)
    assert m.kinds_ == ["categorical", "poisson"]
    r = br.MixedNB().fit(np.c_[code * 0.37, visits * 0.37], y)
    assert r.kinds_[0] == "categorical"  # categories of any unit are categories
    assert r.kinds_[1] != "poisson"  # 0.37 visits are not counts
    # the same class probabilities of the code column at either scale
    only = br.MixedNB(columns=["auto", "gaussian"])
    a, b = only.fit(np.c_[code, visits], y), clone(only).fit(np.c_[code * 0.37, visits], y)
    np.testing.assert_allclose(
        b.predict_proba(np.c_[code * 0.37, visits]), a.predict_proba(np.c_[code, visits])
    )


# ---------------------------------------------------------------------- tables
def _cv_accuracy(df: pd.DataFrame, y: np.ndarray, columns: object) -> float:
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    hits = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for train, test in folds.split(df, y):
            m = br.MixedNB(columns=columns).fit(df.iloc[train], y[train])
            hits += int(np.sum(m.predict(df.iloc[test]) == y[test]))
    return hits / y.size


def cars(seed: int, n: int = 93) -> tuple[pd.DataFrame, np.ndarray]:
    """A table like the 93 cars of 1993: integer measurements, text, a column empty for vans."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)  # small, midsize, large, van
    size = y + rng.normal(0, 0.7, n)
    df = pd.DataFrame(
        {
            "price": (12 + 6 * size + rng.gamma(2, 3, n)).round(1),
            "mpg_city": np.round(30 - 3 * size + rng.normal(0, 3, n)).astype(np.int64),
            "horsepower": np.round(np.exp(4.6 + 0.25 * size + rng.normal(0, 0.25, n))).astype(
                np.int64
            ),
            "length": np.round(170 + 12 * size + rng.normal(0, 8, n)).astype(np.int64),
            "width": np.round(66 + 2.5 * size + rng.normal(0, 1.5, n)).astype(np.int64),
            "turn_circle": np.round(37 + 1.5 * size + rng.normal(0, 1.5, n)).astype(np.int64),
            "passengers": np.clip(np.round(4 + size + rng.normal(0, 0.6, n)), 2, 8).astype(
                np.int64
            ),
            "origin": np.where(rng.random(n) < 0.5, "USA", "non-USA").astype(object),
            "luggage": np.where(y == 3, np.nan, np.round(11 + 3 * size + rng.normal(0, 2, n))),
        }
    )
    return df, y


NUMERIC_CARS = ["price", "mpg_city", "horsepower", "length", "width", "turn_circle", "luggage"]


@pytest.mark.parametrize("seed", range(6))
def test_a_car_tables_measurements_are_inferred_continuous(seed):
    df, y = cars(seed)
    with pytest.warns(UserWarning, match="'luggage' is missing in every row of class 3"):
        inferred = br.MixedNB().fit(df, y)
    kinds = dict(zip(df.columns, inferred.kinds_, strict=True))
    # horsepower (variance ~20 times its mean) is never Poisson, nor categories
    assert kinds["horsepower"] in ("gaussian", "kernel")
    assert all(kinds[c] != "categorical" for c in NUMERIC_CARS)


def test_car_tables_score_as_well_as_with_their_measurements_declared_gaussian():
    # the fit on each fold infers its own kinds; compared over six tables of 93 rows
    declared = dict.fromkeys(NUMERIC_CARS, "gaussian")
    tables = [cars(seed) for seed in range(6)]
    inferred = np.mean([_cv_accuracy(df, y, None) for df, y in tables])
    assert inferred >= np.mean([_cv_accuracy(df, y, declared) for df, y in tables]) - 0.01


def mixed_table(seed: int, n: int = 300) -> tuple[pd.DataFrame, np.ndarray, dict[str, str]]:
    """Measurements, counts and categories with class signal, and the kinds they were drawn as."""
    rng = np.random.default_rng(seed)
    k = 3
    y = rng.integers(0, k, n)
    mu = rng.normal(0, 0.8, k)
    d = int(rng.integers(3, 8))
    P = rng.dirichlet(np.ones(d), k)
    R = rng.dirichlet(np.ones(5) * 2, k)
    r = rng.uniform(0.8, 2.0)
    means = rng.uniform(2, 8, k)[y]
    df = pd.DataFrame(
        {
            "mm": (50 + 4 * (mu[y] + rng.normal(0, 1, n))).round(1),
            "inches": np.round(70 + 3 * (mu[::-1][y] + rng.normal(0, 1, n))).astype(np.int64),
            "visits": rng.poisson(rng.uniform(0.5, 4, k)[y]),
            "claims": rng.negative_binomial(r, r / (r + means)),
            "code": np.array([rng.choice(d, p=P[c]) for c in y]) + 1,
            "rating": np.array([rng.choice(5, p=R[c]) for c in y]) + 1,
            "member": rng.random(n) < rng.uniform(0.2, 0.8, k)[y],
            "region": np.array(["n", "s", "e", "w"], dtype=object)[(y + rng.integers(0, 3, n)) % 4],
        }
    )
    truth = {
        "mm": "gaussian",
        "inches": "gaussian",
        "visits": "poisson",
        "claims": "gaussian",
        "code": "categorical",
        "rating": "categorical",
        "member": "bernoulli",
        "region": "categorical",
    }
    return df, y, truth


def test_inferred_kinds_score_within_a_point_of_the_declared_kinds():
    inferred, declared = [], []
    for seed in range(6):
        df, y, truth = mixed_table(seed, 300 if seed % 2 else 120)
        inferred.append(_cv_accuracy(df, y, None))
        declared.append(_cv_accuracy(df, y, truth))
    assert np.mean(inferred) >= np.mean(declared) - 0.01, (inferred, declared)


def test_kinds_line_is_one_line_naming_each_kind():
    df, y, _ = mixed_table(0, 100)
    m = br.MixedNB(columns={"mm": "kernel"}).fit(df, y)
    line = m.kinds_line()
    assert "\n" not in line
    assert "mm kernel" in line and "region categorical" in line
    assert "inferred: 7, declared: 1" in line
    wide = br.MixedNB(columns=["gaussian"] * 12).fit(
        np.random.default_rng(0).normal(size=(20, 12)), np.arange(20) % 2
    )
    assert wide.kinds_line().startswith("kinds: 12 gaussian (12 columns)")


def test_scikit_learn_tables_made_mixed_score_as_well_as_declared():
    from sklearn.datasets import load_digits, load_wine

    data = load_wine(as_frame=True)
    wine = data.frame.drop(columns="target").copy()
    for c in ("magnesium", "proline"):  # whole numbers: integer measurements
        wine[c] = wine[c].round().astype(np.int64)
    wine["color_intensity"] = pd.qcut(wine["color_intensity"], 4, labels=list("abcd")).astype(str)
    y = data.target.to_numpy()
    m = br.MixedNB().fit(wine, y)
    assert m.kinds_[list(wine.columns).index("proline")] in ("gaussian", "kernel")
    declared = {c: "gaussian" for c in wine.columns if c != "color_intensity"}
    assert _cv_accuracy(wine, y, None) >= _cv_accuracy(wine, y, declared) - 0.01
    # digits: 8x8 integer pixels 0..16; the inferred kinds beat declaring them all gaussian
    X, t = load_digits(return_X_y=True)
    pixels = pd.DataFrame(X[:600].astype(np.int64), columns=[f"p{j}" for j in range(64)])
    all_gaussian = dict.fromkeys(pixels.columns, "gaussian")
    assert _cv_accuracy(pixels, t[:600], None) >= _cv_accuracy(pixels, t[:600], all_gaussian) - 0.01


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    values=st.lists(
        st.one_of(st.integers(0, 30), st.integers(-(2**62), 2**62)), min_size=1, max_size=80
    )
)
def test_any_integer_column_gets_a_kind_and_a_finite_fit(values):
    v = np.asarray(values, dtype=np.int64)
    y = np.arange(v.size) % 2
    m = br.MixedNB().fit(pd.DataFrame({"v": v}), y)
    assert m.kinds_[0] in ("gaussian", "kernel", "poisson", "bernoulli", "categorical")
    assert m.column_summary()[0]["why"].startswith("inferred: ")
    P = m.predict_proba(pd.DataFrame({"v": v}))
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_the_reason_says_when_a_better_score_was_within_doubt():
    # over car-like and mixed tables: a kind other than the best-scoring one is
    # always explained, and the chosen kind is among the scored candidates
    seen = 0
    for seed in range(4):
        for df, y in (cars(seed), mixed_table(seed, 120)[:2]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = br.MixedNB().fit(df, y)
            for row in m.column_summary():
                why = row["why"]
                if "held-out log likelihood per row: " not in why:
                    continue
                ranked = why.split("per row: ")[1].split(" (")[0].split(", ")
                kinds = [part.split(" ")[0] for part in ranked]
                assert row["kind"] in kinds, why
                if kinds[0] != row["kind"] and "single value" not in why:
                    seen += 1
                    assert f"({kinds[0]}'s gain within one standard error)" in why, why
    assert seen > 0  # the tables hold such columns: the check ran
