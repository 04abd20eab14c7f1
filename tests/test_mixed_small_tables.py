"""MixedNB's inferred kinds on small tables, tables of many classes, and classes missing a column."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

import bayesrule as br
from bayesrule.estimators._mixed_choice import choose_kinds

pd = pytest.importorskip("pandas")


def _fit(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return br.MixedNB(**kw).fit(X, y)


def _codes(r: np.random.Generator, y: np.ndarray, d: int, k: int) -> np.ndarray:
    """Nominal codes: each class its own frequencies over ``d`` labels in a random order."""
    P = r.dirichlet(np.ones(d), k)
    labels = r.permutation(d) * 3 + 1  # integers on a lattice whose order means nothing
    return labels[np.array([r.choice(d, p=P[c]) for c in y])]


@pytest.mark.parametrize("d", [3, 4])
def test_nominal_codes_of_tables_of_tens_of_rows_a_class_are_categorical(d):
    # 20 rows a class: categories predict the held-out rows better than a
    # normal or kernel density of codes whose order means nothing, by more than
    # one standard error (two, a significance test, kept 4 to 6 in 20 Gaussian)
    kinds = Counter()
    for s in range(20):
        r = np.random.default_rng(s)
        y = np.repeat(np.arange(3), 20)
        kinds[_fit(_codes(r, y, d, 3)[:, None].astype(float), y).kinds_[0]] += 1
    assert kinds["categorical"] >= 18, kinds


def test_nominal_codes_under_five_rows_a_value_are_categorical():
    # 8 codes, 30 rows in the smallest class (under 5 a code): categories are a
    # candidate down to one row a value when they also predict the classes
    kinds = Counter()
    for s in range(10):
        r = np.random.default_rng(s)
        y = np.r_[np.zeros(30, int), np.ones(60, int)]
        kinds[_fit(_codes(r, y, 8, 2)[:, None].astype(float), y).kinds_[0]] += 1
    assert kinds["categorical"] >= 9, kinds


@pytest.mark.parametrize("d", [4, 5, 6])
def test_nominal_codes_with_a_class_of_fewer_rows_than_codes_are_categorical(d):
    # 6 classes, one of d - 1 rows and five of 7: the classes average more than
    # one row a code, so categories are a candidate although the smallest class
    # cannot hold every code (under a rule on the smallest class they were
    # never one, and the codes, whose order means nothing, stayed Gaussian)
    kinds = Counter()
    for s in range(20):
        r = np.random.default_rng(s)
        y = np.repeat(np.arange(6), [d - 1, 7, 7, 7, 7, 7])
        kinds[_fit(_codes(r, y, d, 6)[:, None].astype(float), y).kinds_[0]] += 1
    assert kinds["categorical"] >= 18, kinds


@pytest.mark.parametrize("rows", [6, 8])
def test_counts_from_zero_of_few_rows_a_class_are_poisson(rows):
    # Poisson counts of 3 classes of 6 or 8 rows (rates 0.5 to 5, so zeros):
    # the Poisson model, simpler than the normal, is the default in doubt for
    # counts from zero (with the Gaussian default: 19 and 21 of 30)
    kinds = Counter()
    for s in range(30):
        r = np.random.default_rng(s)
        y = np.repeat(np.arange(3), rows)
        x = r.poisson(r.uniform(0.5, 5, 3)[y]).astype(float)
        kinds[_fit(x[:, None], y).kinds_[0]] += 1
    assert kinds["poisson"] >= 25, kinds


def test_counts_not_from_zero_keep_the_gaussian_default():
    # Poisson counts where the normal scores a little better but within one
    # standard error: from zero they are Poisson (the simpler model in doubt);
    # the same counts plus one, still a Poisson candidate, stay Gaussian
    from bayesrule.estimators._mixed_choice import _choose_column

    r = np.random.default_rng(118)
    y = np.repeat(np.arange(3), 8)
    x = r.poisson(r.uniform(0.5, 5, 3)[y]).astype(float)
    v = np.unique(x)
    W = np.array([[np.sum((y == k) & (x == u)) for u in v] for k in range(3)], dtype=float)
    h = np.ones(3)
    at_zero = _choose_column(v, W, h, var_smoothing=1e-9, alpha=1.0)
    above = _choose_column(v + 1.0, W, h, var_smoothing=1e-9, alpha=1.0)
    assert v[0] == 0 and at_zero.scores["gaussian"] >= at_zero.scores["poisson"]
    assert at_zero.kind == "poisson", at_zero.why
    assert "counts from zero: poisson the default in doubt" in at_zero.why
    assert "poisson" in above.scores and above.kind == "gaussian", above.why
    assert "counts from zero" not in above.why


def test_an_overdispersed_count_of_many_values_is_not_categorical():
    # ~30 values of a negative binomial count in 125 rows a class: each class's
    # frequencies are mostly smoothing, and categories would predict the classes
    # worse than a density of the counts (the case the rule of five rows is for)
    for s in range(6):
        r = np.random.default_rng(s)
        y = np.repeat([0, 1], 125)
        mu = np.array([8.0, 10.0])[y]
        x = r.negative_binomial(2, 2 / (2 + mu)).astype(float)[:, None]
        m = _fit(x, y)
        assert m.kinds_[0] != "categorical", m.column_summary()[0]["why"]


def test_sparse_categories_are_refused_when_they_predict_the_classes_worse():
    # a code whose classes share one distribution has no class signal: with
    # under five rows a value, categories must not replace the continuous kind
    # on likelihood alone
    refused = 0
    for s in range(10):
        r = np.random.default_rng(s)
        y = np.repeat([0, 1, 2], 12)
        x = (r.integers(0, 6, y.size) * 2 + 1).astype(float)
        m = _fit(x[:, None], y)
        why = m.column_summary()[0]["why"]
        if "predict the classes worse" in why:
            refused += 1
            assert m.kinds_[0] != "categorical"
    assert refused >= 1


def test_a_class_missing_a_column_is_not_scored_on_the_pooled_values():
    # the column's scores (and kind) are those of the classes that observe it:
    # the pooled values the missing class is given are not its rows
    for s in range(6):
        r = np.random.default_rng(s)
        y = r.integers(0, 3, 150)
        v = np.where(r.random(150) < 0.3, 0.0, r.gamma(2.0, 1.0 + y)).round(1)
        v = np.where(y == 2, np.nan, v)
        a = _fit(pd.DataFrame({"v": v, "w": r.normal(y, 1.0)}), y)
        seen = y != 2
        b = _fit(pd.DataFrame({"v": v[seen], "w": r.normal(y[seen], 1.0)}), y[seen])
        assert a.kinds_[0] == b.kinds_[0]
        assert a.column_summary()[0]["why"] == b.column_summary()[0]["why"]


def test_choose_kinds_skips_the_classes_marked_unobserved():
    m = _fit(pd.DataFrame({"v": np.arange(40) % 7}), np.arange(40) % 2)
    part = m.stats_.parts["auto"]
    h = np.ones((2, 1))
    both = choose_kinds(part, h, var_smoothing=1e-9, alpha=1.0)[0]
    one = choose_kinds(
        part, h, var_smoothing=1e-9, alpha=1.0, observed=np.array([[True], [False]])
    )[0]
    assert both.scores != one.scores  # the second class's rows no longer count


def _table(seed: int, n: int, k: int) -> tuple[pd.DataFrame, np.ndarray, dict[str, str]]:
    """A mixed table of ``k`` classes: measurements, counts, codes, ratings, flags, text."""
    r = np.random.default_rng(seed)
    y = r.integers(0, k, n)
    mu = r.normal(0, 0.7, k)
    df = pd.DataFrame(
        {
            "length": (40 + 3 * (mu[y] + r.normal(0, 1, n))).round(1),
            "height": np.round(60 + 4 * (mu[::-1][y] + r.normal(0, 1, n))).astype(np.int64),
            "visits": r.poisson(r.uniform(0.5, 5, k)[y]),
            "code": _codes(r, y, int(r.integers(3, 7)), k),
            "rating": 1 + np.array([r.choice(5, p=p) for p in r.dirichlet(2 * np.ones(5), k)[y]]),
            "member": r.random(n) < r.uniform(0.2, 0.8, k)[y],
            "region": np.array(list("nsew"), dtype=object)[(y + r.integers(0, 3, n)) % 4],
        }
    )
    kinds = dict(length="gaussian", height="gaussian", visits="poisson", code="categorical")
    kinds.update(rating="categorical", member="bernoulli", region="categorical")
    return df, y, kinds


def _cv(df: pd.DataFrame, y: np.ndarray, columns, seed: int) -> float:
    hits = 0
    for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(df, y):
        m = _fit(df.iloc[train], y[train], columns=columns)
        hits += int(np.sum(m.predict(df.iloc[test]) == y[test]))
    return hits / y.size


@pytest.mark.parametrize(("n", "k", "tables", "margin"), [(150, 2, 4, 0.01), (400, 6, 3, 0.01)])
def test_inferred_kinds_score_within_a_point_of_the_kinds_drawn(n, k, tables, margin):
    # the mean over generated tables (two fold splits each) of the drawn kinds'
    # accuracy less the inferred kinds'
    gaps = [
        _cv(df, y, kinds, f) - _cv(df, y, None, f)
        for df, y, kinds in (_table(1000 + s, n, k) for s in range(tables))
        for f in (0, 1)
    ]
    assert np.mean(gaps) <= margin, gaps


def test_tables_of_sixteen_rows_a_class_score_within_a_point_of_the_kinds_drawn():
    # with 16 training rows a class, codes and ratings of 5 values have under
    # five rows a value: categories are a candidate that must also predict the
    # classes, and a discrete kind within one standard error of the best
    # likelihood is chosen when it predicts the held-out rows' classes better
    gaps = [
        _cv(df, y, kinds, f) - _cv(df, y, None, f)
        for df, y, kinds in (_table(1000 + s, 60, 3) for s in range(6))
        for f in (0, 1)
    ]
    assert np.mean(gaps) <= 0.01, gaps


def test_class_log_probability_equals_a_refit_without_each_row():
    # the held-out log probability of a row's class given its value: its own
    # class refitted without it, the other classes' whole models, weights as
    # priors; checked row by row against categorical refits
    from bayesrule.estimators._mixed_choice import _categorical_loo, _class_log_loss, _full

    r = np.random.default_rng(3)
    W = r.integers(1, 6, size=(3, 4)).astype(float)  # counts of 4 values in 3 classes
    v = np.arange(4.0)
    own = _categorical_loo(W, W.sum(axis=0), 1.0, 4.0)
    full = _full("categorical", v, W, eps=0.0, h=np.ones(3), step=1.0, alpha=1.0)
    got = _class_log_loss(own, full, W)
    prior = W.sum(axis=1) / W.sum()
    for k in range(3):
        for u in range(4):
            Wk = W.copy()
            Wk[k, u] -= 1.0  # the row held out of its own class
            p = (Wk + 1.0) / (Wk.sum(axis=1, keepdims=True) + 4.0)
            q = (W + 1.0) / (W.sum(axis=1, keepdims=True) + 4.0)
            joint = prior * q[:, u]
            joint[k] = prior[k] * p[k, u]
            assert got[k, u] == pytest.approx(np.log(joint[k] / joint.sum()), rel=1e-12)


@pytest.mark.parametrize("rows", [6, 9, 15])
def test_normal_columns_of_few_rows_a_class_are_gaussian(rows):
    # a measurement drawn normal, 4 classes of 6 to 15 rows: the normal
    # model's held-out score is its t predictive and the kernel's bandwidth is
    # that of the rows kept, so the kernel no longer wins on the plug-in
    # normal's overconfidence (it did on 36 of 40 columns of 6 rows a class)
    kinds = Counter()
    for s in range(40):
        r = np.random.default_rng(s)
        y = np.repeat(np.arange(4), rows)
        x = 40 + 3 * (r.normal(0, 0.7, 4)[y] + r.normal(0, 1, y.size))
        kinds[_fit(x[:, None], y).kinds_[0]] += 1
    assert kinds["gaussian"] >= 34, kinds


def test_a_code_that_one_class_holds_a_single_value_of_is_categorical():
    # 3 codes on a lattice, 9 rows a class, one class all one code: not
    # gaussian (that class would have no variance); the categories are kept
    # unless the kernel beats them beyond one standard error
    kinds = Counter()
    for s in range(40):
        r = np.random.default_rng(s)
        y = np.repeat(np.arange(4), 9)
        P = r.dirichlet(np.ones(3), 4)
        P[0] = [1.0, 0.0, 0.0]
        x = np.array([r.choice(3, p=P[k]) for k in y]) * 3 + 1.0
        m = _fit(x[:, None], y)
        kinds[m.kinds_[0]] += 1
        if m.kinds_[0] == "categorical":
            why = m.column_summary()[0]["why"]
            assert "a class holds a single value" in why, why
    assert kinds["categorical"] >= 34, kinds
    assert kinds["gaussian"] == 0, kinds


def test_a_near_tie_goes_to_a_discrete_kind_of_better_likelihood_only():
    # a discrete kind chosen on the near-tie rule (its gain within one standard
    # error, the classes predicted better) has a held-out likelihood above the
    # Gaussian's, and the reason says why it was chosen
    from bayesrule.models import bandwidths

    ties = 0
    for s in range(80):
        r = np.random.default_rng(1000 + s)
        # counts of a few values (binomial) in 12 rows a class, and Poisson counts of
        # close rates in 20: the near ties of a discrete kind and the normal
        if s % 2:
            y = np.repeat(np.arange(4), 12)
            x = r.binomial(6, r.uniform(0.2, 0.8, 4)[y]).astype(float)
        else:
            y = np.repeat(np.arange(3), 20)
            x = r.poisson(r.uniform(2, 3, 3)[y]).astype(float)
        part = _fit(x[:, None], y).stats_.parts["auto"]
        h = bandwidths(part.moments(), "scott", 0.1)[0]
        c = choose_kinds(part, np.asarray(h), var_smoothing=1e-9, alpha=1.0)[0]
        if "predicts the classes better" in c.why:
            ties += 1
            assert c.kind in ("poisson", "categorical"), c
            if "a class holds a single value" not in c.why:
                assert c.scores[c.kind] > c.scores["gaussian"], c
    assert ties >= 1


def test_the_dispersion_test_refuses_counts_whose_variance_is_far_from_the_mean():
    # Fisher's index of dispersion, summed over the classes: Poisson counts
    # pass at about its level whatever the rows; an integer measurement of
    # spread 4 around 60 (variance a quarter of the mean) and an
    # overdispersed count fail it already at 8 rows a class
    from bayesrule.estimators._mixed_choice import DISPERSION_LEVEL, _dispersed_as_poisson

    def test(x, y):
        v, inv = np.unique(x, return_inverse=True)
        W = np.zeros((y.max() + 1, v.size))
        np.add.at(W, (y, inv), 1.0)
        return _dispersed_as_poisson(v.astype(float), W)

    refused = Counter()
    for s in range(200):
        r = np.random.default_rng(s)
        rows = (8, 30, 200)[s % 3]
        y = np.repeat(np.arange(3), rows)
        refused["poisson"] += not test(r.poisson(r.uniform(0.5, 8, 3)[y]), y)
        if rows == 8:
            refused["measurement"] += not test(np.round(60 + 4 * r.normal(size=y.size)), y)
            mu = r.uniform(4, 9, 3)[y]
            refused["overdispersed"] += not test(r.negative_binomial(1, 1 / (1 + mu)), y)
    # 200 draws at level 0.01: 2 expected, 8 is 4 standard deviations above
    assert refused["poisson"] <= 8 * DISPERSION_LEVEL / 0.01, refused
    assert refused["measurement"] >= 60, refused  # of 67
    assert refused["overdispersed"] >= 60, refused
