"""Class labels of every form, and the warnings about the classes (issue #20, items 1 and 12).

Labels arrive as pandas Series of strings, pandas Categoricals, pandas'
``string`` dtype, Python lists, object arrays, NumPy text, integers and
booleans. Every estimator fits, predicts, streams and names a class in its
messages (zero variance, a feature missing throughout a class, a class of
one row, ``alpha=0``) with any of them: the message shows the label as the
user wrote it, never a crash from assuming a NumPy scalar.

:class:`bayesrule.ClassWarning` is warned for a single class, for a class of
fewer than two rows and for labels equal up to case and spaces, and for
nothing else.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesrule
from bayesrule import ClassWarning
from bayesrule.estimators.registry import available
from reference_models import has_reference, reference_proba

MODELS = available()
#: the smallest parameters that fit the small tables below in every model
FAST = {
    "rdacv": {"cv": 2, "alphas": (0.5,), "gammas": (0.1,)},
    "mda": {"n_components": 1},
    "bnb": {"binarize": 3.5},
    # every column declared Gaussian: the reference transcribes that model
    "mixed": {"columns": ["gaussian"] * 3},
}

TEXT = ["Adelie", "Chinstrap", "Gentoo"]


def _labels(kind: str, values: list) -> object:
    """``values`` (texts) in the form ``kind``, and the label each text then stands for."""
    if kind == "series":
        return pd.Series(values)
    if kind == "categorical":
        return pd.Categorical(values)
    if kind == "string_dtype":
        return pd.Series(values, dtype="string")
    if kind == "list":
        return list(values)
    if kind == "object":
        return np.array(values, dtype=object)
    if kind == "numpy_str":
        return np.array(values)
    if kind == "int":
        return np.array([TEXT.index(v) * 7 - 3 for v in values])
    if kind == "bool":
        return np.array([v != TEXT[0] for v in values])
    if kind == "nullable_int":
        return pd.Series([TEXT.index(v) for v in values], dtype="Int64")
    if kind == "nullable_bool":
        return pd.Series([v != TEXT[0] for v in values], dtype="boolean")
    raise AssertionError(kind)


KINDS = [
    "series",
    "categorical",
    "string_dtype",
    "list",
    "object",
    "numpy_str",
    "int",
    "bool",
    "nullable_int",
    "nullable_bool",
]


def _table(n_per_class: int = 12, n_classes: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    texts = [TEXT[k] for k in range(n_classes) for _ in range(n_per_class)]
    X = rng.poisson(3.0, size=(len(texts), 3)).astype(float)
    X[:, 0] += 3.0 * np.array([TEXT.index(t) for t in texts])
    return X, texts


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _with_reference(short: str):
    """The model's name, an oracle item where an independent computation exists."""
    if has_reference(short, FAST.get(short, {})):
        return pytest.param(short, marks=pytest.mark.oracle)
    return short


@pytest.mark.parametrize("short", [_with_reference(s) for s in MODELS])
@pytest.mark.parametrize("kind", KINDS)
def test_every_form_of_labels_fits_predicts_and_streams(short, kind):
    cls = MODELS[short]
    n_classes = 2 if kind.endswith("bool") else 3
    X, texts = _table(n_classes=n_classes)
    y = _labels(kind, texts)
    expected = np.unique(np.asarray(y))
    est = _quiet_fit(cls(**FAST.get(short, {})), X, y)
    assert [_plain(c) for c in est.classes_] == [_plain(c) for c in expected]
    pred = est.predict(X)
    assert set(map(_plain, pred)) <= set(map(_plain, expected))
    proba = est.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    # the model learns something: better than the largest class
    assert np.mean(pred == np.asarray(y)) > 1.0 / n_classes + 0.1
    # whatever the form of the labels, the probabilities are those of scikit-learn's
    # namesake or a NumPy transcription fitted on the labels' codes in class order
    codes = np.unique(np.asarray(y), return_inverse=True)[1]
    reference = reference_proba(short, FAST.get(short, {}), X, codes, X)
    if reference is not None:
        np.testing.assert_allclose(proba, reference, rtol=0, atol=1e-9)
    if hasattr(est, "partial_fit"):
        stream = cls(**FAST.get(short, {}))
        half = X.shape[0] // 2
        y_arr = np.asarray(y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stream.partial_fit(X[::2], y_arr[::2], classes=expected)
            stream.partial_fit(X[1::2], y_arr[1::2])
        assert half > 0
        np.testing.assert_allclose(stream.predict_proba(X), proba, rtol=1e-6, atol=1e-9)


#: (short name, parameters, how to break the table, what the message says of class 'Adelie')
NAMING_PATHS = [
    ("gnb", {"var_smoothing": 0.0}, "constant", r"zero variance .*in class 'Adelie'"),
    ("dlda", {}, "missing", r"missing \(NaN\) in every row of class 'Adelie'"),
    ("gnb", {}, "missing", r"missing \(NaN\) in every row of class 'Adelie'"),
    ("bnb", {"alpha": 0.0}, "constant", r"in class 'Adelie'; use alpha > 0"),
    ("pnb", {}, "missing", r"missing \(NaN\) in every row of class 'Adelie'"),
    ("pnb", {"alpha": 0.0}, "zero", r"rate 0 in class 'Adelie'"),
    ("mnb", {}, "missing", r"class 'Adelie'"),
    ("cnb", {}, "missing", r"class 'Adelie'"),
    ("catnb", {}, "missing", r"class 'Adelie'"),
    ("knb", {}, "missing", r"class 'Adelie'"),
    ("qda", {}, "single", r"class 'Adelie' has 1 sample"),
    ("qda", {}, "constant", r"covariance matrix of class 'Adelie'"),
    ("rda", {}, "single", r"class 'Adelie' has 1 sample"),
]


@pytest.mark.parametrize(("short", "params", "how", "match"), NAMING_PATHS)
@pytest.mark.parametrize("kind", ["series", "categorical", "string_dtype", "object", "list"])
def test_messages_that_name_a_class_show_the_label_as_written(short, params, how, match, kind):
    X, texts = _table()
    first = np.array([t == "Adelie" for t in texts])
    if how == "constant":
        X[first, 1] = 1.0
    elif how == "zero":
        X[first, 1] = 0.0
    elif how == "missing":
        X[first, 2] = np.nan
    elif how == "single":
        keep = ~first
        keep[0] = True
        X, texts = X[keep], [t for t, k in zip(texts, keep, strict=True) if k]
    y = _labels(kind, texts)
    with pytest.raises(ValueError, match=match) as info:
        _quiet_fit(MODELS[short](**params), X, y)
    assert "np.str_" not in str(info.value)


@pytest.mark.parametrize("kind", ["series", "object", "int"])
def test_sampling_a_class_without_data_names_it_as_written(kind):
    X, texts = _table()
    y = np.asarray(_labels(kind, texts))
    classes = np.unique(y)
    keep = y != classes[0]
    est = bayesrule.GaussianNB().partial_fit(X[keep], y[keep], classes=classes)
    with pytest.raises(
        ValueError, match=rf"cannot sample class {re.escape(repr(_plain(classes[0])))}"
    ):
        est.sample(3, y=[classes[0]] * 3)


# ------------------------------------------------------------------- ClassWarning
def _class_warnings(est, X, y, **kw):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            est.fit(X, y, **kw)
        except ValueError:
            pass  # a model that refuses the table outright says so itself
    return [str(w.message) for w in seen if issubclass(w.category, ClassWarning)]


@pytest.mark.parametrize("short", list(MODELS))
def test_clean_classes_give_no_class_warning(short):
    X, texts = _table()
    assert _class_warnings(MODELS[short](**FAST.get(short, {})), X, np.array(texts)) == []


# RDA-CV refuses a class of one row before its statistics exist (its folds need two)
@pytest.mark.parametrize("short", [s for s in MODELS if s != "rdacv"])
@pytest.mark.parametrize("stray", ["?", "adelie ", " Adelie", "ADELIE", "Chin strap"])
def test_a_stray_label_is_named(short, stray):
    X, texts = _table()
    y = np.array(texts, dtype=object)
    y[5] = stray
    messages = "ClassWarning".join(_class_warnings(MODELS[short](**FAST.get(short, {})), X, y))
    assert re.search(rf"fewer than 2 rows: {re.escape(repr(stray))} \(1 row\)", messages)
    if stray != "?" and stray != "Chin strap":
        folded = [m for m in messages.split("ClassWarning") if "differ only by case" in m]
        assert "'Adelie'" in folded[0] and repr(stray) in folded[0]


@pytest.mark.parametrize("short", [s for s, c in MODELS.items() if c._min_classes == 1])
@pytest.mark.parametrize("kind", ["series", "int", "object"])
def test_a_single_class_fits_with_a_warning(short, kind):
    X, texts = _table(n_classes=1)
    y = _labels(kind, texts)
    with pytest.warns(ClassWarning, match=r"y has a single class \(.+\): .* will predict it"):
        est = MODELS[short]().fit(X, y)
    assert est.classes_.size == 1


@pytest.mark.parametrize("short", [s for s, c in MODELS.items() if c._min_classes > 1])
def test_a_single_class_is_refused_by_models_that_need_two(short):
    X, texts = _table(n_classes=1)
    with pytest.raises(ValueError, match=r"greater than one|at least 2"):
        _quiet_fit(MODELS[short](**FAST.get(short, {})), X, texts)


def test_partial_fit_warns_about_the_declared_classes():
    X, texts = _table()
    with pytest.warns(ClassWarning, match=r"'Gentoo', 'gentoo'"):
        bayesrule.MultinomialNB().partial_fit(X, texts, classes=[*TEXT, "gentoo"])


def test_many_small_classes_are_counted_and_the_first_ten_named():
    X, texts = _table(n_per_class=20)
    y = np.array(texts, dtype=object)
    y[:15] = [f"typo{i:02d}" for i in range(15)]
    (message,) = [m for m in _class_warnings(bayesrule.GaussianNB(), X, y) if "fewer than" in m]
    assert message.startswith("15 classes of y have fewer than 2 rows: 'typo00' (1 row)")
    assert "'typo09' (1 row) and 5 more." in message and "typo10" not in message


def test_a_weighted_single_row_is_still_one_row():
    X, texts = _table()
    y = np.array(texts, dtype=object)
    y[0] = "?"
    w = np.ones(len(y))
    w[0] = 50.0
    messages = _class_warnings(bayesrule.LinearDiscriminantAnalysis(), X, y, sample_weight=w)
    assert any("'?' (1 row)" in m for m in messages)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.text(alphabet="abcAB xyz", min_size=1, max_size=6).filter(lambda s: s.strip()),
        min_size=2,
        max_size=6,
        unique=True,
    )
)
def test_the_case_and_space_warning_fires_exactly_for_folded_duplicates(names):
    folded = [" ".join(n.split()).casefold() for n in names]
    expect = len(set(folded)) < len(folded)
    y = np.repeat(np.array(names, dtype=object), 3)
    X = np.random.default_rng(len(names)).normal(size=(y.size, 2))
    messages = _class_warnings(bayesrule.GaussianNB(), X, y)
    assert any("differ only by case or spaces" in m for m in messages) == expect
    assert not any("fewer than" in m for m in messages)


def test_the_warning_points_at_the_callers_line():
    X, texts = _table()
    y = np.array(texts, dtype=object)
    y[0] = "?"
    with pytest.warns(ClassWarning) as record:
        bayesrule.GaussianNB().fit(X, y)
    assert record[0].filename == __file__
