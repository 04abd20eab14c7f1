"""Hostile input to every estimator: a clear refusal or a sensible result, never NumPy's words.

One table of inputs (ragged lists, strings, objects, complex numbers, dates,
nullable columns with ``pd.NA``, duplicate or mixed-type column names, bad
labels, stray category codes...) is tried on every estimator of
``bayesrule.estimators.registry.available()`` through ``fit``, ``statistics``,
``partial_fit``, ``forget`` and ``predict``. Each call either succeeds with a
result of the right shape, or raises ``ValueError``/``TypeError`` (or
scikit-learn's ``NotFittedError``) whose message matches the case's pattern
(it names the argument or the column) and holds none of NumPy's or pandas'
internal phrases; a call that fails leaves a fitted model exactly as it was.
"""

from __future__ import annotations

import pickle
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from bayesrule import CategoricalNB, MixedNB
from bayesrule.estimators.registry import available
from reference_models import FEATUREWISE, has_reference, reference_proba

MODELS = available()
METHODS = ("fit", "statistics", "partial_fit", "forget", "predict")

#: phrases of NumPy's, pandas' and Python's internals that must never reach a user
FORBIDDEN = re.compile(
    r"setting an array element with a sequence|inhomogeneous|could not convert|"
    r"Maximum allowed dimension|Unable to allocate|DType|unsized object|"
    r"not supported between instances|Expected unique column names|object has no attribute"
)
#: what forget may rightly say about rows that are valid but were not fitted
FORGET_OK = r"cannot (remove|subtract|forget)|forget would remove"

rng = np.random.default_rng(0)
X = rng.integers(0, 4, size=(40, 3)).astype(float)
y = np.repeat([0, 1], 20)
X[y == 1] += 1
DF = pd.DataFrame(X, columns=["a", "b", "c"])


def _with(values: Any, row: int, col: int, value: Any) -> Any:
    out = np.array(values, dtype=object if isinstance(value, (str, dict)) else float)
    out[row, col] = value
    return out


def _nullable(dtype: str) -> pd.DataFrame:
    df = DF.astype(dtype)
    df.loc[0, "a"] = pd.NA
    return df


@dataclass
class Case:
    name: str
    X: Any
    y: Any = None
    match: str = r"\bX\b|column"
    params: dict = field(default_factory=dict)
    only: tuple[str, ...] = ()
    methods: tuple[str, ...] = METHODS

    def __post_init__(self) -> None:
        if self.y is None:
            self.y = y


Y_ONLY = ("fit", "statistics", "partial_fit", "forget")
CAT = {"a": "categorical"}

CASES = [
    Case("ragged", [[1.0, 2.0, 3.0], [1.0, 2.0]], [0, 1]),
    Case("strings", _with(X, 5, 1, "five")),
    Case("dict_entry", _with(X, 5, 1, {"foo": "bar"})),
    Case("complex", X + 1j),
    Case("datetime_column", DF.assign(a=pd.date_range("2020", periods=40))),
    Case("tz_datetime_column", DF.assign(a=pd.date_range("2020", periods=40, tz="UTC"))),
    Case("timedelta_column", DF.assign(a=pd.to_timedelta(np.arange(40), unit="D"))),
    Case("datetime_array", np.array(["2020-01-01"] * 120, dtype="datetime64[D]").reshape(40, 3)),
    Case("X_3d", X.reshape(40, 3, 1), match=r"dim 3|\bX\b"),
    Case("X_1d", X[:, 0], match=r"2D array|\bX\b"),
    Case("X_empty", np.empty((0, 3)), np.empty(0), match=r"0 sample|\bX\b"),
    Case("X_no_features", np.empty((40, 0)), match=r"0 feature|\bX\b"),
    Case("X_scalar", 3.0, match=r"2D array|\bX\b"),
    Case("X_none", None, match=r"\bX\b|None"),
    Case("nullable_Int64_NA", _nullable("Int64"), match=r"\bX\b.*NaN"),
    Case("nullable_Float64_NA", _nullable("Float64"), match=r"\bX\b.*NaN"),
    Case("bool", X > 1),
    Case("sparse", sp.csr_matrix(X), match=r"[Ss]parse"),
    Case("duplicate_columns", pd.DataFrame(X, columns=["a", "a", "b"]), match=r"duplicate"),
    Case("int_column_names", pd.DataFrame(X, columns=[0, 1, 2])),
    Case("mixed_column_names", pd.DataFrame(X, columns=["a", 1, "c"]), match=r"names"),
    Case("y_mixed_types", X, np.array([0, "a"] * 20, dtype=object), r"\by\b", methods=Y_ONLY),
    Case("y_nan", X, np.r_[np.nan, y[1:]].astype(float), r"\by\b.*NaN", methods=Y_ONLY),
    Case("y_none", X, np.array([None, *y[1:]], dtype=object), r"\by\b.*None", methods=Y_ONLY),
    Case("y_str_none", X, np.array(["p", None] * 20, dtype=object), r"\by\b", methods=Y_ONLY),
    Case("y_nullable_NA", X, pd.array([pd.NA, *y[1:]], dtype="Int64"), r"\by\b", methods=Y_ONLY),
    Case("y_2d", X, np.c_[y, y], r"\by\b", methods=Y_ONLY),
    Case("y_short", X, y[:-1], r"\by\b", methods=Y_ONLY),
    Case("y_continuous", X, np.linspace(0, 1, 40), r"Unknown label|continuous", methods=Y_ONLY),
    Case("y_labels_not_fitted", X, np.r_[y[:-1], 7], r"7|label|class", methods=Y_ONLY),
    # category codes: CategoricalNB, and MixedNB's integer-coded categorical columns
    Case("code_1e9", _with(X, 39, 0, 1e9), match=r"column .*1000000000.*max_categories"),
    # (1e300 in the other models is a matter of overflow, tested with them)
    Case("code_1e300", _with(X, 39, 0, 1e300), match=r"column .*1e\+300.*max_c", only=("catnb",)),
    Case("code_2_16", _with(X, 39, 0, 2.0**16), match=r"column .*65536 at row 39"),
    Case("code_negative", _with(X, 39, 0, -1.0), match=r"column \S+ .*non-negative"),
    Case("code_fraction", _with(X, 39, 0, 1.5), match=r"column .*integer.*row 39"),
    Case("code_inf", _with(X, 39, 0, np.inf), match=r"infinity.*row 39"),
    Case("code_1e9_df", DF.assign(a=_with(X, 39, 0, 1e9)[:, 0]), match=r"column 'a' .*code 1000000000",
         params={"columns": CAT}, only=("mixed",)),
    Case("code_1e300_df", DF.assign(a=_with(X, 39, 0, 1e300)[:, 0]), match=r"column 'a' .*1e\+300",
         params={"columns": CAT}, only=("mixed",)),
    Case("code_negative_df", DF.assign(a=_with(X, 39, 0, -2.0)[:, 0]), match=r"column 'a'.*row 39",
         params={"columns": CAT}, only=("mixed",)),
    Case("code_fraction_df", DF.assign(a=_with(X, 39, 0, 0.5)[:, 0]), match=r"column 'a'.*row 39",
         params={"columns": CAT}, only=("mixed",)),
]  # fmt: skip


_FITTED: dict[tuple[type, bool, str], bytes] = {}


def _fitted(cls: type, case: Case) -> Any:
    """A model fitted on the clean data in the form of the case (a table with names or an array)."""
    clean = _clean_like(case)
    key = (cls, clean is DF, repr(case.params))
    if key not in _FITTED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[key] = pickle.dumps(cls(**case.params).fit(clean, y))
    return pickle.loads(_FITTED[key])


def _call(est: Any, method: str, case: Case) -> Any:
    if method == "fit":
        return est.fit(case.X, case.y)
    if method == "statistics":
        return est.statistics(case.X, case.y)
    if method == "partial_fit":
        return est.partial_fit(case.X, case.y)
    if method == "forget":
        return est.forget(case.X, case.y)
    return est.predict(case.X)


def _same_values(case: Case) -> bool:
    """Whether the case holds the clean data's values in another form (names, dtype, layout)."""
    try:
        if np.iscomplexobj(case.X):
            return False
        if isinstance(case.X, pd.DataFrame):
            values = case.X.to_numpy(dtype=float, na_value=np.nan)
        else:
            values = np.asarray(case.X, dtype=float)
        labels = np.asarray(case.y)
    except (TypeError, ValueError):
        return False
    return (
        values.shape == X.shape
        and bool(np.array_equal(values, X))
        and labels.shape == y.shape
        and bool(np.all(labels == y))
    )


#: the inputs the models handle, by case (the rest of each case they refuse or is not
#: compared): a call on one of these must succeed, and its result is compared with the
#: model fitted independently (reference_models) on the input's numeric values
COUNT_MODELS = ("catnb", "cnb", "mnb", "pnb")
HANDLED = {
    "bool": lambda short, method: True,
    "int_column_names": lambda short, method: True,
    "code_1e9": lambda short, method: short != "catnb",
    "code_2_16": lambda short, method: short != "catnb",
    "code_fraction": lambda short, method: short != "catnb",
    "code_negative": lambda short, method: short not in COUNT_MODELS,
    "sparse": lambda short, method: short in ("bnb", "cnb", "mnb", "pnb"),
    # a label the model was not fitted with is a new class to fit (not to stream into);
    # QDA and RDA cannot fit a class of one row
    "y_labels_not_fitted": lambda short, method: (
        method in ("fit", "statistics") and short not in ("qda", "rda")
    ),
    # naive Bayes marginalises a missing cell: predictions are those of the model fitted
    # without that feature, and a fit takes each feature's observed rows
    # (MixedNB infers each integer column's kind, categorical or Poisson, from its values:
    # test_mixed_oracle.py compares such tables)
    "nullable_Int64_NA": lambda short, method: _missing_is_handled(short, method, ("mixed",)),
    "nullable_Float64_NA": lambda short, method: _missing_is_handled(short, method, ()),
}


def _missing_is_handled(short: str, method: str, inferred: tuple[str, ...]) -> bool:
    if method == "predict":
        return MODELS[short]._allow_nan
    # the fits with an independent computation
    return short in FEATUREWISE and short not in inferred


def _oracle_item(short: str, case: Case, method: str) -> bool:
    """Whether the call must succeed and is compared with an independent computation
    (the reference, or the model fitted on the clean data the input holds in another form)."""
    rule = HANDLED.get(case.name)
    return (
        method != "forget"
        and rule is not None
        and rule(short, method)
        and (has_reference(short, case.params) or _same_values(case))
    )


def _params():
    for short, cls in MODELS.items():
        for case in CASES:
            if case.only and short not in case.only:
                continue
            if case.params and short not in case.only:
                continue
            for method in case.methods:
                if not hasattr(cls, method):
                    continue
                marks = [pytest.mark.oracle] if _oracle_item(short, case, method) else []
                yield pytest.param(
                    short, case, method, id=f"{short}-{case.name}-{method}", marks=marks
                )


PARAMS = list(_params())


def _declared(short: str, case: Case, method: str) -> Case:
    """MixedNB's numeric columns declared Gaussian where the reference is MixedNB's
    Gaussian transcription (undeclared, each column's kind is chosen from the data, and
    the kind choice has its own oracle tests in test_mixed_choice.py); a boolean
    table fitted afresh keeps its Bernoulli columns (its oracle is BernoulliNB)."""
    if short != "mixed" or "columns" in case.params:
        return case
    if case.name == "bool" and method in ("fit", "statistics"):
        return case
    return replace(case, params={**case.params, "columns": ["gaussian"] * 3})


@pytest.mark.parametrize(("short", "case", "method"), PARAMS)
def test_hostile_input_is_refused_clearly_or_handled(short, case, method):
    case = _declared(short, case, method)
    cls = MODELS[short]
    if method in ("fit", "statistics"):
        est = cls(**case.params)
    else:
        est = _fitted(cls, case)
    before = pickle.dumps(est)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = _call(est, method, case)
    except (ValueError, TypeError, NotFittedError) as exc:
        msg = str(exc)
        assert not _oracle_item(short, case, method), f"a handled input was refused: {msg}"
        assert not FORBIDDEN.search(msg), f"internal message: {msg}"
        allowed = case.match + ("|" + FORGET_OK if method == "forget" else "")
        assert re.search(allowed, msg), f"{type(exc).__name__}: {msg!r} does not match {allowed!r}"
        if method != "fit":  # a failed call leaves the model exactly as it was
            assert pickle.dumps(est) == before
        return
    # it succeeded: the result must make sense
    n = 40 if case.name not in ("ragged",) else 2
    if method == "predict":
        assert out.shape == (n,)
        assert set(np.unique(out)) <= set(est.classes_.tolist())
    elif method == "statistics":
        assert out.n_features == 3
        assert pickle.dumps(est) == before  # statistics never changes the estimator
    else:
        assert out is est
        assert est.n_features_in_ == 3
        assert np.all(np.isfinite(est.predict_proba(_clean_like(case))))
    if _same_values(case):
        _agrees_with_the_clean_input(short, case, method, est, out)
    if _oracle_item(short, case, method) and has_reference(short, case.params):
        _agrees_with_the_reference(short, case, method, est, out)


def _agrees_with_the_clean_input(short: str, case: Case, method: str, est: Any, out: Any) -> None:
    """A hostile input that holds the clean data's values in another form gives what the
    clean data give: the same statistics, model and predictions (to the rounding of
    another memory layout's summation order)."""
    clean = _clean_like(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "predict":
            np.testing.assert_array_equal(out, est.predict(clean))
        elif method == "statistics":
            reference = MODELS[short](**case.params).statistics(clean, y)
            assert type(out) is type(reference)
            for name, value in vars(reference).items():
                if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
                    np.testing.assert_allclose(getattr(out, name), value, rtol=1e-12, err_msg=name)
        elif method == "fit":
            reference = _fitted(MODELS[short], case)
            np.testing.assert_allclose(
                est.predict_proba(clean), reference.predict_proba(clean), rtol=1e-12, atol=1e-15
            )
        elif method == "partial_fit":
            reference = _fitted(MODELS[short], case).partial_fit(clean, y)
            np.testing.assert_allclose(
                est.predict_proba(clean), reference.predict_proba(clean), rtol=1e-12, atol=1e-15
            )


def _numeric(case: Case) -> np.ndarray:
    """The case's input as the numbers a model sees (NaN where a cell is missing)."""
    if isinstance(case.X, pd.DataFrame):
        return case.X.to_numpy(dtype=float, na_value=np.nan)
    if sp.issparse(case.X):
        return case.X.toarray().astype(float)
    return np.asarray(case.X, dtype=float)


def _like(case: Case, values: np.ndarray) -> Any:
    """``values`` in the form the model was fitted with (a table keeps its column names)."""
    if isinstance(case.X, pd.DataFrame):
        return pd.DataFrame(values, columns=case.X.columns)
    return values


def _agrees_with_the_reference(short: str, case: Case, method: str, est: Any, out: Any) -> None:
    """The oracle of a handled input: scikit-learn's namesake or a NumPy transcription
    (reference_models) fitted on the input's numbers gives the same probabilities.

    ``fit`` and ``statistics`` (the model fitted from them) are compared on the
    input's rows; ``partial_fit`` onto the clean model with the reference
    fitted on both; ``predict`` of the clean model, its probabilities and
    labels, with the reference fitted on the clean data. A missing cell
    (naive Bayes) is the model fitted without that feature (docs/naive_bayes.md).
    """
    values, labels = _numeric(case), np.asarray(case.y)
    missing = np.isnan(values)
    oracle = short
    if short == "mixed" and method in ("fit", "statistics"):
        # MixedNB takes boolean columns as Bernoulli, as BernoulliNB (alpha=1); a model
        # fitted on numbers keeps its Gaussian columns for partial_fit and predict
        oracle = {"bool": "bnb"}.get(case.name, short)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "predict":
            expected = reference_proba(oracle, case.params, X, y, np.nan_to_num(values))
            for row, col in zip(*np.nonzero(missing), strict=True):
                keep = np.arange(X.shape[1]) != col
                expected[row] = reference_proba(
                    oracle, case.params, X[:, keep], y, values[row : row + 1, keep]
                )[0]
            got = est.predict_proba(case.X)
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-8)
            clear = np.sort(expected, axis=1)[:, -1] - np.sort(expected, axis=1)[:, -2] > 1e-6
            best = est.classes_[np.argmax(expected, axis=1)]
            np.testing.assert_array_equal(out[clear], best[clear])
            return
        if method == "statistics":
            est = MODELS[short](**case.params).fit_statistics(out)
        query = values[~missing.any(axis=1)]  # (a missing cell is the predict branch's)
        if method == "partial_fit":
            values, labels = np.vstack([X, values]), np.r_[y, labels]
        # with missing cells the reference fits each feature on its observed rows
        expected = reference_proba(oracle, case.params, values, labels, query)
        got = est.predict_proba(_like(case, query))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-8 if missing.any() else 1e-9)


def _clean_like(case: Case) -> Any:
    return DF if isinstance(case.X, pd.DataFrame) and list(case.X.columns) == ["a", "b", "c"] else X


def test_the_probe_covers_every_estimator_and_many_cases():
    assert {p.values[0] for p in PARAMS} == set(MODELS)
    assert len(PARAMS) > 1000


# ------------------------------------------------------------------ arguments of fit
BAD_WEIGHTS = {
    "short": (np.ones(39), ValueError, r"X has 40 rows but sample_weight has 39"),
    "two_d": (np.ones((40, 1)), ValueError, r"sample_weight must be 1-dimensional"),
    "nan": (np.r_[np.nan, np.ones(39)], ValueError, r"sample_weight must be finite; got nan at row 0"),
    "inf": (np.r_[np.ones(39), np.inf], ValueError, r"sample_weight must be finite; got inf at row 39"),
    "negative": (np.r_[1.0, -2.0, np.ones(38)], ValueError, r"non-negative; got -2.0 at row 1"),
    "strings": (np.array(["a"] * 40), TypeError, r"sample_weight must be .*numbers; got 'a' at row 0"),
    "dict": ({"a": 1}, TypeError, r"sample_weight must be .*numbers; got a dict"),
    "str": ("heavy", TypeError, r"sample_weight must be .*numbers"),
    "objects": ([object()] * 40, TypeError, r"sample_weight must be .*numbers"),
    "complex": (np.ones(40) + 1j, TypeError, r"sample_weight must be .*real numbers"),
}  # fmt: skip


@pytest.mark.parametrize("short", list(MODELS))
@pytest.mark.parametrize("kind", list(BAD_WEIGHTS))
def test_bad_sample_weight_names_it(short, kind):
    w, err, match = BAD_WEIGHTS[kind]
    with pytest.raises(err, match=match):
        MODELS[short]().fit(X, y, sample_weight=w)
    if hasattr(MODELS[short], "partial_fit"):
        est = MODELS[short]().fit(X, y)
        before = pickle.dumps(est)
        with pytest.raises(err, match=match):
            est.partial_fit(X, y, sample_weight=w)
        assert pickle.dumps(est) == before


BAD_PRIORS = {
    "short": ([1.0], r"one entry per class \(2 classes\)"),
    "two_d": ([[0.5, 0.5]], r"one entry per class"),
    "negative": ([-0.5, 1.5], r"non-negative"),
    "nan": ([np.nan, 1.0], r"finite"),
    "strings": (["a", "b"], r"array of numbers"),
    "zeros": ([0.0, 0.0], r"not all be zero|should be 1"),
}


@pytest.mark.parametrize("short", list(MODELS))
@pytest.mark.parametrize("kind", list(BAD_PRIORS))
def test_bad_priors_name_the_parameter(short, kind):
    cls = MODELS[short]
    name = "class_prior" if "class_prior" in cls().get_params() else "priors"
    if name not in cls().get_params():
        pytest.skip(f"{short} has no priors")
    value, match = BAD_PRIORS[kind]
    with pytest.raises(ValueError, match=rf"priors must .*{match}|{match}"):
        cls(**{name: value}).fit(X, y)


@pytest.mark.parametrize("short", [s for s, c in MODELS.items() if hasattr(c, "partial_fit")])
def test_partial_fit_classes_must_cover_y(short):
    cls = MODELS[short]
    with pytest.raises(ValueError, match=r"y contains labels \[1\] .*classes \[0, 2\]"):
        cls().partial_fit(X, y, classes=[0, 2])
    # naive Bayes accepts a single class (as scikit-learn's); y must still be in it
    single = r"not among the classes \[0\]" if cls._min_classes == 1 else "at least 2"
    with pytest.raises(ValueError, match=rf"classes must list {single}|{single}"):
        cls().partial_fit(X, y, classes=[0])
    est = cls().partial_fit(X, y, classes=[0, 1, 2])
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match=r"not the same as the classes"):
        est.partial_fit(X, y, classes=[0, 1])
    assert pickle.dumps(est) == before


@pytest.mark.parametrize("short", [s for s, c in MODELS.items() if s not in ("lda", "qda", "rda")])
def test_nullable_na_is_missing_for_naive_bayes_and_refused_by_the_others(short):
    cls = MODELS[short]
    df = _nullable("Int64")
    if cls._allow_nan:
        proba = cls().fit(df, y).predict_proba(df)
        assert np.all(np.isfinite(proba))
    else:
        with pytest.raises(ValueError, match=r"X contains NaN at row 0, column 0"):
            cls().fit(df, y)


# -------------------------------------------------------------------------- merge
MERGEABLE = [s for s, c in MODELS.items() if hasattr(c, "merge")]


@pytest.mark.parametrize("short", MERGEABLE)
def test_merge_checks_feature_names_and_fitted_state(short):
    cls = MODELS[short]
    a = cls().fit(DF, y)
    b = cls().fit(DF.rename(columns={"c": "d"}), y)
    plain = cls().fit(X, y)
    before = pickle.dumps(a)
    with pytest.raises(ValueError, match=r"different feature names: \[a, b, c\] and \[a, b, d\]"):
        a.merge(b)
    with pytest.raises(ValueError, match=r"different feature names: \[a, b, c\] and no names"):
        a.merge(plain)
    with pytest.raises(NotFittedError):
        a.merge(cls())
    with pytest.raises(NotFittedError):
        cls().merge(a)
    with pytest.raises(ValueError, match=r"cannot merge a \w+ with a"):
        a.merge(object())
    with pytest.raises(ValueError, match=r"expected 3 features, got 2"):
        a.merge(cls().fit(DF[["a", "b"]], y))
    assert pickle.dumps(a) == before
    merged = a.merge(cls().fit(DF, y))
    np.testing.assert_array_equal(merged.feature_names_in_, ["a", "b", "c"])


def test_mixed_nb_merge_names_the_column_of_another_kind():
    a = MixedNB(columns=["gaussian"] * 3).fit(DF, y)
    b = MixedNB(columns=CAT).fit(DF, y)
    with pytest.raises(ValueError, match=r"column 'a' is 'gaussian' in one and 'categorical'"):
        a.merge(b)


# ------------------------------------------------------------- the category-code bound
def test_the_category_bound_is_the_same_for_both_categorical_models():
    bad = _with(X, 39, 0, 70000.0)
    with pytest.raises(ValueError, match=r"column 0 holds category code 70000 at row 39") as e1:
        CategoricalNB().fit(bad, y)
    tail = "codes must be integers in [0, 65535] (max_categories=65536)"
    assert tail in str(e1.value)
    # MixedNB's numeric categorical columns have a vocabulary of their values
    # (70000 is a category like 2008); the bound is on how many there are
    ids = DF.assign(a=np.arange(40.0) * 1000)
    with pytest.raises(ValueError, match=r"column 'a' holds 40 distinct values.*max_categories=10"):
        MixedNB(columns=CAT, max_categories=10).fit(ids, y)
    assert (
        CategoricalNB().get_params()["max_categories"] == MixedNB().get_params()["max_categories"]
    )


def test_raising_max_categories_admits_larger_codes():
    bad = _with(X, 39, 0, 70000.0)
    cat = CategoricalNB(max_categories=2**17).fit(bad, y)
    assert cat.n_categories_[0] == 70001
    mixed = MixedNB(columns=CAT, max_categories=2**17).fit(DF.assign(a=bad[:, 0]), y)
    assert np.all(np.isfinite(mixed.predict_proba(DF)))
    with pytest.raises(ValueError, match=r"max_categories=10\b"):
        CategoricalNB(max_categories=10).fit(_with(X, 0, 0, 10.0), y)


@pytest.mark.parametrize("code", [4.0, 9.0, 65535.0])
def test_a_code_beyond_the_fitted_ones_but_within_the_bound_is_an_unseen_category(code):
    cat = CategoricalNB().fit(X, y)
    Xt = _with(X, 0, 0, code)
    proba = cat.predict_proba(Xt)
    assert np.all(np.isfinite(proba))
    mixed = MixedNB(columns=CAT).fit(DF, y)
    assert np.all(np.isfinite(mixed.predict_proba(DF.assign(a=Xt[:, 0]))))


def test_min_categories_may_not_exceed_max_categories():
    with pytest.raises(ValueError, match=r"min_categories must be at most max_categories=65536"):
        CategoricalNB(min_categories=10**9).fit(X, y)
    assert CategoricalNB(min_categories=8, max_categories=8).fit(X, y).n_categories_.tolist() == [
        8,
        8,
        8,
    ]


def test_the_statistics_refuse_a_code_beyond_the_bound_before_allocating():
    from bayesrule.stats import CategoryStats, MixedStats

    with pytest.raises(ValueError, match=r"column 0 holds category code 1000000000"):
        CategoryStats.from_data(_with(X, 3, 0, 1e9), y)
    with pytest.raises(ValueError, match=r"category code 1e\+300"):
        MixedStats.from_data(_with(X, 3, 0, 1e300), y, kinds=("categorical",) * 3)
    stats = CategoryStats.from_data(_with(X, 3, 0, 70000.0), y, max_categories=70001)
    assert stats.n_categories == 70001


def test_mixed_nb_bounds_the_distinct_strings_of_a_column():
    ids = DF.assign(a=[f"id{i}" for i in range(40)])
    with pytest.raises(ValueError, match=r"column 'a' holds 40 distinct values.*max_categories=10"):
        MixedNB(max_categories=10).fit(ids, y)
    assert MixedNB(max_categories=40).fit(ids, y).predict(ids).shape == (40,)


def test_mixed_nb_takes_a_date_column_declared_categorical():
    dated = DF.assign(a=pd.date_range("2020", periods=40))
    with pytest.raises(ValueError, match=r"column 'a' holds datetime64.*declare columns="):
        MixedNB().fit(dated, y)
    model = MixedNB(columns=CAT).fit(dated, y)
    assert model.kinds_[0] == "categorical"
    assert model.predict(dated).shape == (40,)


# ------------------------------------------------------------------------------------
# Where scikit-learn's namesake refuses, bayesrule refuses with its phrase (issue #20, 18)
# ------------------------------------------------------------------------------------
DISCRETE_NB = ("BernoulliNB", "MultinomialNB", "ComplementNB", "CategoricalNB")
X3 = np.random.default_rng(7).integers(0, 3, size=(30, 4)).astype(float)
Y3 = np.arange(30) % 3


def _both(name: str, **params: Any) -> list[Any]:
    import sklearn.naive_bayes as sk_nb

    import bayesrule

    return [getattr(sk_nb, name)(**params), getattr(bayesrule, name)(**params)]


@pytest.mark.parametrize("name", DISCRETE_NB)
@pytest.mark.parametrize("prior", [[0.5, 0.5], [0.25] * 4, [[0.3, 0.3, 0.4]]])
def test_class_prior_of_the_wrong_length_is_refused_as_scikit_learn_does(name, prior):
    phrase = "Number of priors must match number of classes."
    for est in _both(name, class_prior=prior):
        with pytest.raises(ValueError, match=re.escape(phrase)):
            est.fit(X3, Y3)
    for est in _both(name, class_prior=prior):
        with pytest.raises(ValueError, match=re.escape(phrase)):
            est.partial_fit(X3, Y3, classes=[0, 1, 2])


@pytest.mark.parametrize("name", DISCRETE_NB)
@pytest.mark.parametrize("later", [[0, 1, 2, 3], [0, 1], [1, 2, 3]])
def test_partial_fit_classes_other_than_the_first_calls_are_refused_as_scikit_learn_does(
    name, later
):
    phrase = "is not the same as on last call to partial_fit"
    for est in _both(name, class_prior=[0.2, 0.3, 0.5]):
        est.partial_fit(X3, Y3, classes=[0, 1, 2])
        with pytest.raises(ValueError, match=phrase):
            est.partial_fit(X3, Y3, classes=later)


@pytest.mark.parametrize("shape", [(3,), (5,), (1, 4), (4, 1)])
def test_min_categories_of_the_wrong_shape_is_refused_as_scikit_learn_does(shape):
    phrase = rf"'min_categories' should have shape \(4,\) when an array-like is provided. Got {re.escape(str(shape))} instead"
    sk_est, br_est = _both("CategoricalNB", min_categories=np.full(shape, 3))
    # scikit-learn words the 2-D case so; a 1-D one of the wrong length reaches NumPy's
    # broadcasting error there (a refusal all the same)
    with pytest.raises(ValueError, match=phrase if len(shape) == 2 else "broadcast"):
        sk_est.fit(X3, Y3)
    with pytest.raises(ValueError, match=phrase):
        br_est.fit(X3, Y3)


@pytest.mark.parametrize(("row", "col", "value"), [(0, 0, 0.5), (17, 3, 2.25), (29, 1, 1e-9)])
def test_a_non_integer_category_code_is_refused_naming_row_and_column(row, col, value):
    Xb = X3.copy()
    Xb[row, col] = value
    with pytest.raises(
        ValueError, match=rf"column {col} .*integer.*{re.escape(repr(value))} at row {row}"
    ):
        CategoricalNB().fit(Xb, Y3)
    fitted = CategoricalNB().fit(X3, Y3)
    with pytest.raises(ValueError, match=rf"column {col} .*integer.* at row {row}"):
        fitted.predict(Xb)
