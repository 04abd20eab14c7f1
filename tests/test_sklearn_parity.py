"""Parity with scikit-learn 1.9: defaults, refused inputs, one-class fits, dtypes and tags.

Each test runs scikit-learn's estimator on the same input and compares: the
same predictions, the same exception type (ours may be a subclass) with
scikit-learn's wording first, the same dtypes, the same tags. The remaining
differences are listed in docs/compatibility.md.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from numpy.linalg import LinAlgError
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sk
from sklearn.feature_extraction.text import CountVectorizer

import bayesrule as br


# ------------------------------------------------------------ ComplementNB on text
def _corpus(n_docs: int = 300, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """Documents of three imbalanced topics, each with its own favourite words."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(120)]
    y = rng.choice(3, size=n_docs, p=[0.6, 0.3, 0.1])
    docs = []
    for k in y:
        weights = np.ones(len(vocab))
        weights[40 * k : 40 * k + 40] += 3.0  # the topic's own words are likelier
        words = rng.choice(vocab, size=rng.integers(5, 30), p=weights / weights.sum())
        docs.append(" ".join(words))
    return docs, y


@pytest.mark.parametrize("params", [{}, {"norm": True}, {"alpha": 0.3, "fit_prior": False}])
def test_complement_nb_is_sklearns_on_text(params):
    docs, y = _corpus()
    X = CountVectorizer().fit_transform(docs)
    ours = br.ComplementNB(**params).fit(X, y)
    theirs = sk.ComplementNB(**params).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12)
    np.testing.assert_allclose(ours.class_log_prior_, theirs.class_log_prior_, rtol=1e-12)


def test_complement_nb_add_prior_adds_the_log_priors():
    docs, y = _corpus()
    X = CountVectorizer().fit_transform(docs)
    plain = br.ComplementNB(norm=True).fit(X, y)
    with_prior = br.ComplementNB(norm=True, add_prior=True).fit(X, y)
    expected = plain.predict_joint_log_proba(X) + plain.class_log_prior_
    np.testing.assert_allclose(with_prior.predict_joint_log_proba(X), expected, rtol=1e-12)


# --------------------------------------------------------------- one-class naive Bayes
_NB_NAMES = ["GaussianNB", "BernoulliNB", "MultinomialNB", "ComplementNB", "CategoricalNB"]
_NB_ONLY_OURS = ["DiagonalLDA", "PoissonNB", "KernelNB", "MixedNB"]


def _one_class_data():
    rng = np.random.default_rng(0)
    return rng.poisson(2.0, size=(12, 3)).astype(float), np.full(12, "spam")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.oracle) for n in _NB_NAMES] + _NB_ONLY_OURS
)
@pytest.mark.parametrize("how", ["fit", "partial_fit"])
def test_naive_bayes_fits_one_class_and_predicts_it(name, how):
    X, y = _one_class_data()
    ours = getattr(br, name)()
    if how == "fit":
        ours.fit(X, y)
    else:
        ours.partial_fit(X[:6], y[:6], classes=["spam"]).partial_fit(X[6:], y[6:])
    assert ours.predict(X[::-1]).tolist() == ["spam"] * 12
    np.testing.assert_array_equal(ours.predict_proba(X[::-1]), np.ones((12, 1)))
    if hasattr(sk, name):
        theirs = getattr(sk, name)().fit(X, y)
        np.testing.assert_array_equal(ours.classes_, theirs.classes_)
        expected = theirs.predict_joint_log_proba(X)
        np.testing.assert_allclose(ours.predict_joint_log_proba(X), expected, rtol=1e-9)


# --------------------------------------------------------------- refused inputs
_RNG = np.random.default_rng(0)
_COUNTS = _RNG.poisson(2.0, size=(20, 3)).astype(float)
_GAUSS = _RNG.normal(size=(20, 3))
_Y = np.repeat([0, 1], 10)
_COLLINEAR = np.c_[_GAUSS, _GAUSS[:, :1] * 2.0]
_DISCRETE = ["BernoulliNB", "MultinomialNB", "ComplementNB", "CategoricalNB"]
_LDA, _QDA = "LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"


def _sk(name):
    return getattr(sk, name, None) or getattr(skda, name)


def _case(name, params, X, y, how="fit", id=None):
    return pytest.param(name, params, X, y, how, id=id or f"{name}-{how}-{sorted(params)}")


REFUSED = [
    _case("GaussianNB", {"priors": [0.5, 0.6]}, _GAUSS, _Y, id="gnb-priors-sum"),
    _case("GaussianNB", {"priors": [-0.5, 1.5]}, _GAUSS, _Y, id="gnb-priors-negative"),
    _case("GaussianNB", {"priors": [0.2, 0.3, 0.5]}, _GAUSS, _Y, id="gnb-priors-count"),
    *[
        _case(n, {"class_prior": [0.2, 0.3, 0.5]}, _COUNTS, _Y, id=f"{n}-prior-count")
        for n in _DISCRETE
    ],
    *[
        _case(n, {"alpha": np.array([1.0, -1.0, 1.0])}, _COUNTS, _Y, id=f"{n}-alpha-neg")
        for n in _DISCRETE[:3]
    ],
    *[
        _case(n, {"alpha": np.array([1.0, 1.0])}, _COUNTS, _Y, id=f"{n}-alpha-shape")
        for n in _DISCRETE[:3]
    ],
    *[_case(n, {}, -_COUNTS, _Y, id=f"{n}-negative-X") for n in _DISCRETE[1:]],
    *[
        _case(
            n, {}, _COUNTS if n != "GaussianNB" else _GAUSS, _Y, "partial_fit", id=f"{n}-no-classes"
        )
        for n in ["GaussianNB", *_DISCRETE]
    ],
    *[_case(n, {}, _GAUSS, _Y[:5], id=f"{n}-lengths") for n in ["GaussianNB", _LDA, _QDA]],
    _case(
        "CategoricalNB", {"min_categories": np.array([2.0, 2.0, 2.0])}, _COUNTS, _Y, id="min-cat"
    ),
    _case(_LDA, {}, _GAUSS, np.arange(20), id="lda-samples-eq-classes"),
    _case(_LDA, {}, _GAUSS[:1], _Y[:1], id="lda-one-sample"),
    _case(_LDA, {"priors": [-0.5, 1.5]}, _GAUSS, _Y, id="lda-priors-negative"),
    _case(_LDA, {"n_components": 5}, _GAUSS, _Y, id="lda-n-components"),
    _case(_QDA, {}, _GAUSS, np.zeros(20), id="qda-one-class"),
    _case(_QDA, {}, _GAUSS[:3], np.array([0, 1, 1]), id="qda-one-sample-class"),
    _case(_QDA, {}, _COLLINEAR, _Y, id="qda-singular"),
    _case(_QDA, {}, _GAUSS[:6], np.repeat([0, 1], 3), id="qda-singular-few-rows"),
]


def _oas():
    from sklearn.covariance import OAS

    return OAS()


REFUSED += [
    *[
        _case(n, {"shrinkage": s}, _GAUSS, _Y, id=f"{n[:3]}-svd-shrinkage-{s}")
        for n in (_LDA, _QDA)
        for s in ("auto", 0.0, 0.5)
    ],
    *[
        _case(n, {"covariance_estimator": _oas()}, _GAUSS, _Y, id=f"{n[:3]}-svd-est")
        for n in (_LDA, _QDA)
    ],
    *[
        _case(
            n,
            {"solver": "eigen", "shrinkage": 0.5, "covariance_estimator": _oas()},
            _GAUSS,
            _Y,
            id=f"{n[:3]}-both",
        )
        for n in (_LDA, _QDA)
    ],
    _case(_LDA, {"solver": "lsqr"}, _GAUSS, _Y, "transform", id="lda-lsqr-transform"),
]


def _call(cls, params, X, y, how):
    est = cls(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if how == "transform":
            return est.fit(X, y).transform(X)
        return est.partial_fit(X, y) if how == "partial_fit" else est.fit(X, y)


def _refusal(cls, params, X, y, how):
    try:
        _call(cls, params, X, y, how)
    except Exception as exc:  # noqa: BLE001 - scikit-learn's refusal is the reference
        return exc
    raise AssertionError(f"scikit-learn accepted {cls.__name__}({params}).{how}")


@pytest.mark.parametrize("name, params, X, y, how", REFUSED)
def test_refused_as_sklearn_refuses(name, params, X, y, how):
    theirs = _refusal(_sk(name), params, X, y, how)
    # scikit-learn's wording first (its first sentence), our explanation after it
    lead = str(theirs).split(". ")[0]
    with pytest.raises(type(theirs), match="^" + re.escape(lead)) as ours:
        _call(getattr(br, name), params, X, y, how)
    assert isinstance(ours.value, type(theirs))


def test_singular_class_covariance_is_both_value_and_linalg_error():
    with pytest.raises(LinAlgError, match=r"^The covariance matrix of class 0 is not full rank"):
        br.QuadraticDiscriminantAnalysis().fit(_COLLINEAR, _Y)
    with pytest.raises(ValueError, match=r"class 0 is singular.*reg_param"):
        br.QuadraticDiscriminantAnalysis().fit(_COLLINEAR, _Y)


# --------------------------------------------------------------- dtypes
_PAIRS = [
    ("GaussianNB", {}, "gauss"),
    ("BernoulliNB", {}, "counts"),
    ("MultinomialNB", {}, "counts"),
    ("ComplementNB", {}, "counts"),
    ("CategoricalNB", {}, "counts"),
    (_LDA, {}, "gauss"),
    (_LDA, {"solver": "eigen", "shrinkage": 0.1, "store_covariance": True}, "gauss"),
    (_QDA, {"store_covariance": True}, "gauss"),
]
_OUTPUTS = ("predict_proba", "predict_log_proba", "decision_function", "transform")


def _float_dtype(value):
    value = value[0] if isinstance(value, list) else value
    dtype = getattr(value, "dtype", None)
    return dtype if dtype is not None and dtype.kind == "f" else None


@pytest.mark.parametrize("name, params, data", _PAIRS, ids=lambda v: str(v)[:40])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fitted_attributes_and_outputs_have_sklearns_dtypes(name, params, data, dtype):
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 3)) if data == "gauss" else rng.poisson(2.0, size=(60, 3))
    X = X.astype(dtype)
    theirs = _sk(name)(**params).fit(X, y)
    ours = getattr(br, name)(**params).fit(X, y)
    for attr in vars(theirs):
        if attr.endswith("_") and not attr.startswith("_"):
            if name == _LDA and attr in ("coef_", "intercept_"):
                # float32 with every solver (issue 20); scikit-learn's 'lsqr'
                # and 'eigen' give float64
                assert _float_dtype(getattr(ours, attr)) == dtype, attr
                continue
            expected = _float_dtype(getattr(theirs, attr))
            if expected is not None:
                assert _float_dtype(getattr(ours, attr)) == expected, attr
    for method in _OUTPUTS:
        if hasattr(theirs, method) and hasattr(ours, method):
            assert getattr(ours, method)(X).dtype == getattr(theirs, method)(X).dtype, method
    # the statistics accumulate in float64 whatever the input
    assert ours.stats_.weights.dtype == np.float64


def test_float32_fit_predicts_as_float64_fit():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(90, 4)).astype(np.float32), np.repeat([0, 1, 2], 30)
    single = br.LinearDiscriminantAnalysis().fit(X, y)
    double = br.LinearDiscriminantAnalysis().fit(X.astype(np.float64), y)
    np.testing.assert_allclose(single.predict_proba(X), double.predict_proba(X), rtol=1e-5)
    merged = single.merge(single)
    assert merged.coef_.dtype == np.float32


# --------------------------------------------------------------- tags
# bayesrule deliberately does more: naive Bayes treats NaN as missing. It does
# not implement the array API (scikit-learn's GaussianNB and LDA do).
_DELIBERATE = ("allow_nan", "array_api_support")


@pytest.mark.parametrize("name", [*_NB_NAMES, _LDA, _QDA])
def test_tags_are_sklearns(name):
    ours, theirs = getattr(br, name)().__sklearn_tags__(), _sk(name)().__sklearn_tags__()
    assert ours.input_tags.allow_nan is (name in _NB_NAMES)
    ours.input_tags.allow_nan = theirs.input_tags.allow_nan
    ours.array_api_support = theirs.array_api_support
    assert ours == theirs


@pytest.mark.parametrize(
    "later",
    [
        {"y": np.repeat([0, 2], 10)},  # a label outside the classes
        {"y": _Y, "classes": [0, 2]},  # other classes than on the first call
    ],
    ids=["unseen-label", "other-classes"],
)
def test_later_partial_fit_refused_as_sklearn_refuses(later):
    def call(cls):
        est = cls().partial_fit(_GAUSS, _Y, classes=[0, 1])
        return est.partial_fit(_GAUSS, **later)

    try:
        call(sk.GaussianNB)
    except ValueError as exc:
        theirs = exc
    with pytest.raises(type(theirs), match="^" + re.escape(str(theirs).split(". ")[0])):
        call(br.GaussianNB)


def test_lda_predicts_on_sparse_rows_as_scikit_learn_does():
    # scikit-learn's LDA (a linear classifier) takes CSR rows at prediction after a dense
    # fit; both refuse sparse data in fit
    import scipy.sparse as sp
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    ours = br.LinearDiscriminantAnalysis(bias=True).fit(X, y)
    theirs = skda.LinearDiscriminantAnalysis().fit(X, y)
    for make in (sp.csr_matrix, sp.csc_matrix, sp.coo_array):
        Xs = make(X)
        np.testing.assert_array_equal(ours.predict(Xs), theirs.predict(Xs))
        np.testing.assert_allclose(ours.predict_proba(Xs), theirs.predict_proba(Xs), atol=1e-8)
        np.testing.assert_allclose(ours.decision_function(Xs), ours.decision_function(X))
    with pytest.raises(TypeError, match="Sparse data was passed"):
        br.LinearDiscriminantAnalysis().fit(sp.csr_matrix(X), y)
