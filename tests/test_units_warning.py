"""Data in units too small (issue #20 item 7): ``UnitsWarning``, and no false alarms.

The rule (:mod:`bayesrule.estimators._units`): in a batch of 20 rows or
more, a feature whose values span at most a tenth of its training range and
lie wholly outside it, a quarter of that range away or more. Kilograms
given to a model fitted in grams are flagged by every estimator that reads
the values; honest test sets (train/test splits of scikit-learn's data sets,
sorted so that a batch is as narrow as a batch gets, and MNIST with its
constant pixels) never are.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split

import bayesrule
from bayesrule import OutOfRangeWarning, UnitsWarning
from bayesrule.estimators._units import UNITS_FRACTION, UNITS_GAP, UNITS_ROWS
from bayesrule.estimators.registry import available

MODELS = available()
#: models that read the values themselves (BernoulliNB binarizes; CategoricalNB reads codes)
VALUE_MODELS = {s: c for s, c in MODELS.items() if s not in ("bnb", "catnb")}
FAST = {"rdacv": {"cv": 2, "alphas": (0.5,), "gammas": (0.1,)}, "mda": {"n_components": 1}}


def _penguins(n=240, seed=0):
    """Three species: bill (mm), flipper (mm) and body mass (g), all positive."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = np.c_[
        rng.normal(39 + 5 * y, 2.5), rng.normal(190 + 14 * y, 6), rng.normal(3700 + 700 * y, 350)
    ]
    return np.abs(X), y


def _units_messages(est, X):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        est.predict(X)
    return [str(w.message) for w in seen if issubclass(w.category, UnitsWarning)]


@pytest.mark.parametrize("short", list(VALUE_MODELS))
def test_kilograms_given_to_a_model_fitted_in_grams_are_flagged(short):
    X, y = _penguins()
    est = VALUE_MODELS[short](**FAST.get(short, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    kg = X.copy()
    kg[:, 2] /= 1000.0
    with pytest.warns(UnitsWarning, match=r"in 1 of 3 features: feature 2: training range") as rec:
        est.predict(kg)
    message = str(rec[0].message)
    assert "1e+03 times narrower, wholly below the training range" in message
    assert rec[0].filename == __file__  # points at the caller's line
    # the same data in the right units: no warning of either kind
    with warnings.catch_warnings():
        warnings.simplefilter("error", OutOfRangeWarning)
        est.predict(X)


def test_units_too_large_are_out_of_range_and_too_small_are_units():
    X, y = _penguins()
    est = bayesrule.GaussianNB().fit(X, y)
    big = X.copy()
    big[:, 2] *= 1000.0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        est.predict(big)
    kinds = {w.category for w in seen}
    assert kinds == {OutOfRangeWarning}


def test_the_message_names_features_by_name():
    pd = pytest.importorskip("pandas")
    X, y = _penguins()
    df = pd.DataFrame(X, columns=["bill_mm", "flipper_mm", "body_mass_g"])
    est = bayesrule.LinearDiscriminantAnalysis().fit(df, y)
    metres = df.assign(flipper_mm=df["flipper_mm"] / 1000.0, body_mass_g=df["body_mass_g"] / 1e3)
    with pytest.warns(
        UnitsWarning, match=r"in 2 of 3 features: feature 'flipper_mm'.*'body_mass_g'"
    ):
        est.predict(metres)


@settings(max_examples=30, deadline=None)
@given(
    p=st.integers(1, 6),
    offset=st.floats(1.0, 1e6),
    spread=st.floats(1e-3, 1.0),
    log_factor=st.floats(1.0, 9.0),
    seed=st.integers(0, 2**16),
)
def test_any_feature_in_units_ten_or_more_times_too_small_is_flagged(
    p, offset, spread, log_factor, seed
):
    # training values around ``offset`` (a range away from zero), one feature divided
    rng = np.random.default_rng(seed)
    y = np.arange(300) % 2
    X = offset * (1.0 + spread * rng.random((300, p))) + offset * spread * y[:, None]
    est = bayesrule.GaussianNB().fit(X, y)
    j = int(rng.integers(p))
    small = X[:100].copy()
    small[:, j] /= 10.0**log_factor
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        est.predict(small)
    units = [str(w.message) for w in seen if w.category is UnitsWarning]
    assert len(units) == 1 and f"feature {j}:" in units[0]
    assert f"in 1 of {p} features" in units[0]


def _fitted_on_a_range(lo=100.0, hi=200.0):
    rng = np.random.default_rng(1)
    X = rng.uniform(lo, hi, size=(400, 1))
    X[0, 0], X[1, 0] = lo, hi
    return bayesrule.GaussianNB().fit(X, np.arange(400) % 2)


def _batch(a, b, n=UNITS_ROWS):
    return np.linspace(a, b, n)[:, None]


@pytest.mark.parametrize(
    ("batch", "flagged"),
    [
        (_batch(1.0, 2.0), True),  # width 1, 98 below: flagged
        (_batch(1.0, 1.0 + 0.99 * UNITS_FRACTION * 100.0), True),  # about the widest flagged
        (_batch(1.0, 1.0 + 1.2 * UNITS_FRACTION * 100.0), False),  # a little wider
        (_batch(90.0, 99.0), False),  # 1 below the range: not a quarter of its width away
        (_batch(100.0 - UNITS_GAP * 100.0 - 4.0, 100.0 - UNITS_GAP * 100.0 - 1.0), True),
        (_batch(100.0 - UNITS_GAP * 100.0 + 1.0, 100.0 - UNITS_GAP * 100.0 + 4.0), False),
        (_batch(200.0 + UNITS_GAP * 100.0 + 1.0, 200.0 + UNITS_GAP * 100.0 + 3.0), True),  # above
        (_batch(1.0, 2.0, n=UNITS_ROWS - 1), False),  # too few rows
        (_batch(1.5, 1.5), False),  # a constant batch says nothing of a scale
        (_batch(120.0, 121.0), False),  # a narrow batch inside the range
    ],
)
def test_the_rule_at_its_boundaries(batch, flagged):
    est = _fitted_on_a_range()
    assert bool(_units_messages(est, batch)) == flagged


def test_rows_that_do_not_observe_the_feature_do_not_count():
    pd = pytest.importorskip("pandas")  # noqa: F841
    est = _fitted_on_a_range()
    batch = _batch(1.0, 2.0, n=40)
    batch[UNITS_ROWS - 1 :] = np.nan  # 19 observed values
    assert _units_messages(est, batch) == []
    batch[UNITS_ROWS - 1, 0] = 1.5
    assert len(_units_messages(est, batch)) == 1


def test_the_out_of_range_filter_silences_both():
    X, y = _penguins()
    est = bayesrule.GaussianNB().fit(X, y)
    kg = X.copy()
    kg[:, 2] /= 1000.0
    assert issubclass(UnitsWarning, OutOfRangeWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=OutOfRangeWarning)
        est.predict(kg)


def test_sparse_counts_are_judged_too():
    rng = np.random.default_rng(2)
    X = rng.poisson(50.0, size=(200, 4)).astype(float) + 1000.0
    y = np.arange(200) % 2
    est = bayesrule.MultinomialNB().fit(sp.csr_matrix(X), y)
    small = X[:60].copy()
    small[:, 3] /= 1000.0
    with pytest.warns(UnitsWarning, match="feature 3"):
        est.predict(sp.csr_matrix(small))


# ------------------------------------------------------------------------ no false alarms
@pytest.mark.parametrize("loader", [load_iris, load_wine, load_breast_cancer, load_digits])
@pytest.mark.parametrize("short", ["gnb", "lda", "knb", "mnb"])
def test_honest_test_sets_in_narrow_batches_never_warn(loader, short):
    X, y = loader(return_X_y=True)
    X = np.abs(X)
    for seed in range(4):
        Xa, Xb, ya, _ = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
        est = MODELS[short]().fit(Xa, ya)
        for j in range(0, X.shape[1], max(1, X.shape[1] // 8)):
            # sorted by one feature: the narrowest batches honest data give
            order = np.argsort(Xb[:, j], kind="stable")
            for start in range(0, order.size, UNITS_ROWS):
                assert _units_messages(est, Xb[order[start : start + UNITS_ROWS]]) == []


def test_mnist_like_data_with_constant_and_rare_pixels_never_warn():
    rng = np.random.default_rng(5)
    n, p = 3000, 100
    y = np.arange(n) % 10
    X = np.zeros((n, p))
    rare = rng.random((n, p)) < np.linspace(
        0.0, 0.6, p
    )  # pixel 0 constant, the rest rarer to commoner
    X[rare] = np.rint(rng.uniform(1, 255, size=rare.sum())) / 255.0
    X[:, 50:60] += (y[:, None] == np.arange(10)) * 0.5
    X = np.clip(X, 0, 1)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    est = bayesrule.GaussianNB().fit(Xa, ya)
    for k in range(10):  # a batch of one digit
        assert _units_messages(est, Xb[yb == k]) == []
    for start in range(0, Xb.shape[0], 50):
        assert _units_messages(est, Xb[start : start + 50]) == []


@pytest.mark.mnist
def test_mnist_test_set_in_batches_never_warns_of_units(mnist):
    X, y, Xt, yt = mnist
    est = bayesrule.GaussianNB().fit(X, y)
    for k in range(10):
        assert _units_messages(est, Xt[yt == k]) == []
    order = np.argsort(Xt.sum(axis=1))  # the faintest digits together
    for start in range(0, Xt.shape[0], 500):
        assert _units_messages(est, Xt[order[start : start + 500]]) == []
