"""MixedNB's kind inference checked against the data: generated columns of each kind and tables."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import StratifiedKFold

import bayesrule as br

pd = pytest.importorskip("pandas")

SEEDS = range(30)


def _kinds(draw, n: int) -> Counter:
    """The kinds inferred for 30 seeded draws of a column of ``n`` rows."""
    return Counter(
        br.MixedNB().infer_columns(draw(np.random.default_rng(s), n)[:, None])[0] for s in SEEDS
    )


# a measurement recorded in whole units (inches, horsepower): never counts or categories
MEASUREMENTS = {
    "width in inches": lambda r, n: np.round(r.normal(r.uniform(40, 200), r.uniform(3, 10), n)),
    "horsepower": lambda r, n: np.round(r.lognormal(r.uniform(4.5, 5.2), r.uniform(0.25, 0.5), n)),
    "grams": lambda r, n: np.round(r.normal(3700, 450, n)),
}


@pytest.mark.parametrize("name", sorted(MEASUREMENTS))
@pytest.mark.parametrize("n", [60, 93, 300])
def test_integer_measurements_are_gaussian(name, n):
    kinds = _kinds(lambda r, m: MEASUREMENTS[name](r, m).astype(np.int64), n)
    assert kinds == Counter(gaussian=len(SEEDS))


@pytest.mark.parametrize("n", [60, 93, 300, 1000])
def test_overdispersed_counts_are_not_poisson(n):
    # negative binomial: variance 6 to 11 times the mean
    kinds = _kinds(lambda r, m: r.negative_binomial(0.8, 0.8 / (0.8 + r.uniform(4, 8)), m), n)
    assert kinds["poisson"] == 0


def test_the_reason_names_the_dispersion():
    rng = np.random.default_rng(0)
    hp = np.round(rng.lognormal(4.9, 0.35, 93)).astype(np.int64)
    m = br.MixedNB().fit(pd.DataFrame({"horsepower": hp}), np.arange(93) % 3)
    why = m.column_summary()[0]["why"]
    assert m.kinds_ == ["gaussian"]
    assert "times the mean: not Poisson counts" in why, why


@pytest.mark.parametrize("n", [60, 93, 300, 1000])
@pytest.mark.parametrize("mixture", [False, True])
def test_poisson_counts_are_poisson(n, mixture):
    # one rate, or the classes' rates (up to 10x apart) mixed in the column
    def draw(r, m):
        rate = r.choice(r.uniform(0.5, 5, 3), m) if mixture else r.uniform(0.5, 6)
        return r.poisson(rate, m)

    assert _kinds(draw, n)["poisson"] >= 0.85 * len(SEEDS)


CODES = {
    "nominal codes": lambda r, n: (
        r.choice(d := int(r.integers(3, 9)), n, p=r.dirichlet(np.ones(d) * 0.7))
        + int(r.integers(0, 3))
    ),
    "uniform codes": lambda r, n: r.integers(0, int(r.integers(3, 10)), n),
    "ratings 1-5": lambda r, n: r.choice(5, n, p=r.dirichlet(np.ones(5) * 2)) + 1,
    "binomial ratings": lambda r, n: 1 + r.binomial(4, r.uniform(0.2, 0.8), n),
    "years": lambda r, n: r.integers(2005, 2005 + int(r.integers(3, 9)), n),
}


@pytest.mark.parametrize("name", sorted(CODES))
@pytest.mark.parametrize("n", [60, 93, 300])
def test_codes_ratings_and_years_are_categorical(name, n):
    kinds = _kinds(CODES[name], n)
    assert kinds["categorical"] >= 0.95 * len(SEEDS), kinds


def test_booleans_text_and_decimals():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "flag": rng.random(50) < 0.4,
            "text": rng.choice(["x", "y", "z"], 50).astype(object),
            "mm": rng.normal(40, 3, 50).round(1),
        }
    )
    assert br.MixedNB().fit(df, np.arange(50) % 2).kinds_ == [
        "bernoulli",
        "categorical",
        "gaussian",
    ]


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
def test_a_car_tables_measurements_are_inferred_gaussian(seed):
    df, y = cars(seed)
    with pytest.warns(UserWarning, match="'luggage' is missing in every row of class 3"):
        inferred = br.MixedNB().fit(df, y)
    kinds = dict(zip(df.columns, inferred.kinds_, strict=True))
    assert [kinds[c] for c in NUMERIC_CARS] == ["gaussian"] * len(NUMERIC_CARS)


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
    wide = br.MixedNB().fit(np.random.default_rng(0).normal(size=(20, 12)), np.arange(20) % 2)
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
    assert m.kinds_[list(wine.columns).index("proline")] == "gaussian"
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
