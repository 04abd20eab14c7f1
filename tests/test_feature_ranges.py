"""Each feature's training range: recorded in every statistic, saved in model files,
and compared with the data to predict (``OutOfRangeWarning``)."""

from __future__ import annotations

import hashlib
import io
import json
import warnings
import zipfile
from functools import reduce

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split

import bayesrule
from bayesrule import OutOfRangeWarning
from bayesrule.estimators.registry import available
from bayesrule.io import METADATA, load, save
from bayesrule.stats import (
    CategoryStats,
    CountStats,
    DiagonalStats,
    FourthMomentStats,
    MixedStats,
    PooledScatterStats,
    ScatterStats,
    StatisticsError,
    ValueCountStats,
)

KINDS = ("gaussian", "poisson", "categorical", "bernoulli", "kernel")


def _mixed_kinds(p):
    return tuple(KINDS[j % len(KINDS)] for j in range(p))


class _Mixed:
    """MixedStats through the two constructors the other statistics have."""

    @staticmethod
    def from_data(X, y, w=None, classes=None):
        return MixedStats.from_data(X, y, w, kinds=_mixed_kinds(np.shape(X)[1]), classes=classes)

    @staticmethod
    def empty(classes, p):
        return MixedStats.empty(classes, _mixed_kinds(p))


STATS = [
    DiagonalStats,
    CountStats,
    CategoryStats,
    ValueCountStats,
    PooledScatterStats,
    ScatterStats,
    FourthMomentStats,
    _Mixed,
]
STAT_IDS = [c.__name__.lstrip("_") for c in STATS]


def _data(rng, n=30, p=5, nan=True):
    """Small non-negative integer codes (every statistic accepts them), NaN missing."""
    X = rng.integers(0, 6, size=(n, p)).astype(float)
    if nan:
        X[rng.random((n, p)) < 0.1] = np.nan
    y = rng.choice(np.array(["a", "b", "c"]), size=n)
    w = rng.integers(0, 3, size=n).astype(float)
    return X, y, w


def _gaussian_only(cls):
    # these statistics refuse NaN (their estimators do); the others treat it as missing
    return cls in (PooledScatterStats, ScatterStats, FourthMomentStats)


def _expected(X, w, cls):
    """Per column: min and max of the finite values of the rows of positive weight."""
    Xp = X[w > 0]
    finite = np.isfinite(Xp)
    lo = np.where(finite, Xp, np.inf).min(axis=0, initial=np.inf)
    hi = np.where(finite, Xp, -np.inf).max(axis=0, initial=-np.inf)
    if cls is _Mixed:  # a categorical column has no range
        cat = np.array([k == "categorical" for k in _mixed_kinds(X.shape[1])])
        lo, hi = np.where(cat, np.nan, lo), np.where(cat, np.nan, hi)
    return lo, hi


def _bounds(s):
    return np.stack([s.lower, s.upper])


def _same(a, b):
    return np.array_equal(_bounds(a), _bounds(b), equal_nan=True)


# -- the statistics ---------------------------------------------------------------


@pytest.mark.oracle  # the range is _expected's NumPy transcription of the rule
@pytest.mark.parametrize("cls", STATS, ids=STAT_IDS)
@pytest.mark.parametrize("seed", range(4))
def test_from_data_records_the_range_of_observed_positive_weight_rows(cls, seed):
    rng = np.random.default_rng(seed)
    X, y, w = _data(rng, nan=not _gaussian_only(cls))
    X[0, 0] = 1e3  # an extreme in a row...
    w[0] = 0.0  # ...of zero weight does not count
    s = cls.from_data(X, y, w)
    lo, hi = _expected(X, w, cls)
    np.testing.assert_array_equal(s.lower, lo)
    np.testing.assert_array_equal(s.upper, hi)


@pytest.mark.parametrize("cls", STATS, ids=STAT_IDS)
def test_merge_of_parts_gives_the_range_of_the_whole(cls):
    rng = np.random.default_rng(1)
    X, y, w = _data(rng, n=40, nan=not _gaussian_only(cls))
    X[:20, 1] = -3.0  # the first part alone holds the smallest values of feature 1
    if cls in (CountStats, CategoryStats, _Mixed):
        X[:20, 1] = 7.0  # counts and codes are non-negative: the largest instead
    whole = cls.from_data(X, y, w)
    a, b = cls.from_data(X[:20], y[:20], w[:20]), cls.from_data(X[20:], y[20:], w[20:])
    assert _same(a.merge(b), whole) and _same(b.merge(a), whole)
    empty = cls.empty(whole.classes, X.shape[1])
    assert _same(whole.merge(empty), whole) and _same(empty.merge(whole), whole)


@pytest.mark.parametrize("cls", STATS, ids=STAT_IDS)
def test_the_empty_statistic_has_the_empty_range(cls):
    e = cls.empty(["a", "b"], 3)
    if cls is _Mixed:  # columns 0, 1 numeric, 2 categorical
        np.testing.assert_array_equal(e.lower, [np.inf, np.inf, np.nan])
    else:
        np.testing.assert_array_equal(e.lower, np.full(3, np.inf))
        np.testing.assert_array_equal(e.upper, np.full(3, -np.inf))


@pytest.mark.parametrize("cls", STATS, ids=STAT_IDS)
def test_subtract_keeps_the_range_until_nothing_is_left(cls):
    rng = np.random.default_rng(2)
    X, y, w = _data(rng, n=40, nan=not _gaussian_only(cls))
    w[:] = 1.0
    X[0, 0] = 5.0
    X[1:, 0] = np.minimum(X[1:, 0], 3.0)  # row 0 alone holds the largest value
    whole = cls.from_data(X, y, w)
    rest = whole.subtract(cls.from_data(X[:1], y[:1]))
    # the rows that held the extremes are not known: the range stays (an envelope)
    assert _same(rest, whole)
    assert _same(whole.subtract(whole), cls.empty(whole.classes, X.shape[1]))


def test_subtract_envelope_contains_the_range_of_what_is_left():
    rng = np.random.default_rng(3)
    X, y, _ = _data(rng, n=60, nan=False)
    whole = DiagonalStats.from_data(X, y)
    rest = whole.subtract(DiagonalStats.from_data(X[:30], y[:30]))
    left = DiagonalStats.from_data(X[30:], y[30:], classes=whole.classes)
    assert np.all(rest.lower <= left.lower) and np.all(rest.upper >= left.upper)
    assert rest.allclose(left.with_bounds(whole.lower, whole.upper))


@pytest.mark.parametrize("cls", STATS, ids=STAT_IDS)
def test_allclose_compares_the_ranges(cls):
    rng = np.random.default_rng(4)
    X, y, w = _data(rng, nan=False)
    s = cls.from_data(X, y, w)
    assert s.allclose(s.with_bounds(s.lower, s.upper))
    wider = s.with_bounds(s.lower - 1.0, s.upper)
    assert not s.allclose(wider) and not wider.allclose(s)


def test_unknown_ranges_stay_unknown_through_merge():
    rng = np.random.default_rng(5)
    X, y, _ = _data(rng, nan=False)
    s = DiagonalStats.from_data(X, y)
    nan = np.full(X.shape[1], np.nan)
    unknown = s.with_bounds(nan, nan)
    assert np.isnan(unknown.merge(s).lower).all() and np.isnan(s.merge(unknown).upper).all()
    # statistics built without bounds: unknown when they hold rows, empty otherwise
    bare = DiagonalStats(s.classes, s.counts, s.weights, s.feature_weights, s.means, s.m2)
    assert np.isnan(bare.lower).all() and np.isnan(bare.upper).all()


def test_infinite_and_missing_values_are_not_part_of_the_range():
    X = np.array([[np.inf, np.nan, 1.0], [-np.inf, np.nan, 2.0], [3.0, np.nan, -np.inf]])
    with np.errstate(all="ignore"):  # the moments of infinities are NaN
        s = DiagonalStats.from_data(X, ["a", "a", "b"])
    np.testing.assert_array_equal(s.lower, [3.0, np.inf, 1.0])
    np.testing.assert_array_equal(s.upper, [3.0, -np.inf, 2.0])


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_ranges_count_the_implicit_zeros(fmt):
    rng = np.random.default_rng(6)
    D = rng.poisson(0.7, size=(50, 6)).astype(float)
    D[:, 0] += 2.0  # no zero in column 0: its range starts at 2 or more
    D[:, 5] = 0.0  # nothing stored in column 5
    y = np.resize(["a", "b"], 50)
    w = rng.integers(0, 3, size=50).astype(float)
    s = CountStats.from_data(sp.csr_matrix(D).asformat(fmt), y, w)
    dense = CountStats.from_data(D, y, w)
    assert _same(s, dense)
    assert s.lower[0] >= 2.0 and s.lower[5] == s.upper[5] == 0.0


@pytest.mark.parametrize(
    "lower, upper, message",
    [
        ([0.0, 0.0], [1.0], "upper must have shape"),
        ([0.0, 2.0], [1.0, 1.0], "range of feature 1 is"),
        ([np.nan, 0.0], [1.0, 1.0], "range of feature 0 is"),
        ([0.0, 0.0], [np.inf, 1.0], "range of feature 0 is"),
    ],
)
def test_invalid_ranges_are_refused(lower, upper, message):
    s = DiagonalStats.from_data([[0.0, 0.0], [1.0, 1.0]], ["a", "b"])
    with pytest.raises(StatisticsError, match=message):
        s.with_bounds(np.array(lower), np.array(upper))


# -- the estimators ----------------------------------------------------------------

ESTIMATORS = sorted(available().items())
IDS = [s for s, _ in ESTIMATORS]
PARAMS: dict[str, dict] = {
    "qda": {"reg_param": 0.1},
    "rda": {"alpha": 0.5, "gamma": 0.1},
    "rdacv": {"alphas": (0.0, 1.0), "gammas": (0.1,), "cv": 3},
}


def _estimator_data(seed=0, n=150, p=4):
    """Small integer data every estimator accepts (counts, codes and numbers at once)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.array(["a", "b", "c"]), n // 3)
    k = np.searchsorted(["a", "b", "c"], y)
    X = ((rng.integers(0, 3, size=(n, p)) + k[:, None]) % 4).astype(float)
    X[:, 0] += rng.integers(0, 3, size=n)  # feature 0 ranges over 0 .. 5
    order = rng.permutation(n)
    return X[order], y[order]


def _make(short, cls):
    return cls(**PARAMS.get(short, {}))


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=IDS)
def test_fit_partial_fit_merge_and_statistics_give_the_same_range(short, cls):
    X, y = _estimator_data()
    est = _make(short, cls)
    fitted = clone(est).fit(X, y)
    lo, hi = fitted.feature_range_
    if short == "bnb":  # the statistics see the binarized data
        np.testing.assert_array_equal(lo, np.zeros(4))
        np.testing.assert_array_equal(hi, np.ones(4))
    else:
        np.testing.assert_array_equal(lo, X.min(axis=0))
        np.testing.assert_array_equal(hi, X.max(axis=0))
    if short in ("rdacv", "mda"):
        return  # cross-validation scores and EM fits do not merge; fit gives the range
    blocks = [(X[i : i + 50], y[i : i + 50]) for i in range(0, 150, 50)]
    stats = reduce(lambda a, b: a.merge(b), [est.statistics(Xb, yb) for Xb, yb in blocks])
    built = cls.from_stats(stats, **est.get_params())
    np.testing.assert_array_equal(np.stack(built.feature_range_), np.stack((lo, hi)))
    if not hasattr(est, "partial_fit"):
        return
    streamed = clone(est)
    for Xb, yb in blocks:
        streamed.partial_fit(Xb, yb, classes=["a", "b", "c"])
    np.testing.assert_array_equal(np.stack(streamed.feature_range_), np.stack((lo, hi)))
    left, right = clone(est).fit(X[:75], y[:75]), clone(est).fit(X[75:], y[75:])
    np.testing.assert_array_equal(np.stack(left.merge(right).feature_range_), np.stack((lo, hi)))


def _scaled_digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y  # pixels in [0, 1]


METHODS = [
    "predict",
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "score_samples",
    "predict_joint_log_proba",
    "class_log_density",
    "transform",
]


@pytest.mark.parametrize("method", METHODS)
def test_each_prediction_method_warns_once_per_call(method):
    X, y = _scaled_digits()
    est = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(est, method)(X[:200] * 255.0)  # 0-255 against a model of [0, 1]
    ours = [w for w in caught if issubclass(w.category, OutOfRangeWarning)]
    assert len(ours) == 1
    assert issubclass(OutOfRangeWarning, UserWarning)
    assert ours[0].filename == __file__  # it points at the caller's line
    message = str(ours[0].message)
    assert "training range [0, 1]" in message and "here [0, 255]" in message
    assert "0-255" in message  # the likely cause


def test_the_message_names_features_by_name_and_counts_the_rest():
    pd = pytest.importorskip("pandas")
    X, y = _scaled_digits()
    names = [f"px{j}" for j in range(X.shape[1])]
    est = bayesrule.GaussianNB().fit(pd.DataFrame(X, columns=names), y)
    bad = X[:300].copy()
    bad[:, 20] *= 255.0  # one feature in other units
    with pytest.warns(OutOfRangeWarning, match=r"in 1 of 64 features: feature 'px20'"):
        est.predict(pd.DataFrame(bad, columns=names))
    with pytest.warns(OutOfRangeWarning, match=r"\(and \d+ more features\)"):
        est.predict(pd.DataFrame(X[:300] * 255.0, columns=names))


def test_a_single_outlier_in_a_large_batch_does_not_warn_but_in_a_small_one_does():
    X, y = _scaled_digits()
    est = bayesrule.GaussianNB().fit(X, y)
    batch = X[:200].copy()
    batch[0, 30] = 50.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", OutOfRangeWarning)
        est.predict(batch)  # 1 value in 200: 0.5 %
        # every training range starts at 0: up to 2.5 times its top is within two widths
        est.predict(X[:200] * 2.5)
    with pytest.warns(OutOfRangeWarning, match="feature 30"):
        est.predict(batch[:10])  # 1 value in 10


def test_constant_and_unknown_features_are_not_judged():
    X, y = _scaled_digits()
    est = bayesrule.GaussianNB(var_smoothing=1e-2).fit(X, y)
    lo, hi = est.feature_range_
    constant = np.flatnonzero(lo == hi)
    assert constant.size  # digits have pixels that are always 0
    # the effect first: the same value in a feature that varies is judged
    far_varying = X[:50].copy()
    varying = np.flatnonzero(lo < hi)[0]
    far_varying[:, varying] = 100.0
    with pytest.warns(OutOfRangeWarning, match=f"feature {varying}"):
        est.predict(far_varying)
    far = X[:50].copy()
    far[:, constant] = 100.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", OutOfRangeWarning)
        est.predict(far)


def test_mixednb_judges_numeric_columns_only():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=120), "c": rng.choice(["u", "v"], size=120)})
    y = np.resize([0, 1], 120)
    est = bayesrule.MixedNB().fit(df, y)
    lo, hi = est.feature_range_
    assert np.isfinite(lo[0]) and np.isnan(lo[1]) and np.isnan(hi[1])
    with pytest.warns(OutOfRangeWarning, match="feature 'x'"):
        est.predict(df.assign(x=df["x"] * 1000.0))


@pytest.mark.parametrize("loader", [load_iris, load_wine, load_digits])
@pytest.mark.parametrize(
    "est",
    [bayesrule.GaussianNB(), bayesrule.LinearDiscriminantAnalysis(), bayesrule.KernelNB()],
    ids=["gnb", "lda", "knb"],
)
def test_ordinary_test_splits_do_not_warn(loader, est):
    X, y = loader(return_X_y=True)
    for seed in range(5):
        Xa, Xb, ya, _ = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
        model = clone(est).fit(Xa, ya)
        with warnings.catch_warnings():
            warnings.simplefilter("error", OutOfRangeWarning)
            model.predict_proba(Xb)


@pytest.mark.mnist
def test_mnist_test_set_does_not_warn_and_0_255_data_do(mnist):
    X, y, Xt, _ = mnist
    for est in (bayesrule.GaussianNB(), bayesrule.LinearDiscriminantAnalysis()):
        est.fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", OutOfRangeWarning)
            est.predict(Xt)
        with pytest.warns(OutOfRangeWarning, match=r"training range \[0, 1\], here \[0, 255\]"):
            est.predict(np.rint(Xt * 255.0))


# -- model files ---------------------------------------------------------------------


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=IDS)
def test_model_files_keep_the_range(short, cls, tmp_path):
    X, y = _estimator_data()
    est = _make(short, cls).fit(X, y)
    path = save(est, tmp_path / "m.bayesrule")
    back = load(path)
    np.testing.assert_array_equal(
        np.stack(back.feature_range_), np.stack(est.feature_range_), strict=True
    )
    assert back.stats_.allclose(est.stats_, rtol=0)


def _without_bounds(path):
    """The model file as written before ranges were recorded: no lower/upper fields."""
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members[METADATA])
    dropped = []

    def strip(node):
        if isinstance(node, dict):
            if node.get("kind") == "stats" and "lower" in node["fields"]:
                for name in ("lower", "upper"):
                    dropped.append(node["fields"].pop(name)["member"])
            for v in node.values():
                strip(v)
        elif isinstance(node, list):
            for v in node:
                strip(v)

    strip(meta["stats"])
    assert dropped
    # a file without ranges predates RDA's ``target`` too (its model used the identity)
    meta["params"].pop("target", None)
    meta["bayesrule_version"] = "0.0.1"
    for name in dropped:
        del members[name]
        del meta["members"][name]
    body = {k: v for k, v in meta.items() if k != "checksum"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    members[METADATA] = json.dumps({**body, "checksum": hashlib.sha256(canon).hexdigest()}).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    path.write_bytes(buf.getvalue())


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=IDS)
def test_older_model_files_load_with_unknown_ranges_and_never_warn(short, cls, tmp_path):
    X, y = _estimator_data()
    est = _make(short, cls)
    if "target" in est.get_params():  # the era of files without ranges: see _without_bounds
        est.set_params(target="identity")
    est.fit(X, y)
    path = save(est, tmp_path / "old.bayesrule")
    _without_bounds(path)
    old = load(path)
    lo, hi = old.feature_range_
    assert np.isnan(lo).all() and np.isnan(hi).all()
    np.testing.assert_array_equal(old.predict_proba(X), est.predict_proba(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error", OutOfRangeWarning)
        old.predict(X * 255.0 + 40.0)


def test_the_documented_example_runs():
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)
    (example,) = [b for b in blocks if "OutOfRangeWarning" in b]
    with warnings.catch_warnings():  # the example installs a filter of its own
        exec(compile(example, str(doc), "exec"), {})
