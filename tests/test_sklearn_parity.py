"""Parity with scikit-learn 1.9: defaults, refused inputs, one-class fits, dtypes and tags.

Each test runs scikit-learn's estimator on the same input and compares: the
same predictions, the same exception type (ours may be a subclass) with
scikit-learn's wording first, the same dtypes, the same tags. The remaining
differences are listed in docs/compatibility.md.
"""

from __future__ import annotations

import numpy as np
import pytest
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


@pytest.mark.parametrize("name", _NB_NAMES + _NB_ONLY_OURS)
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
        if name != "MultinomialNB":  # ours includes the multinomial coefficient
            np.testing.assert_allclose(
                ours.predict_joint_log_proba(X), theirs.predict_joint_log_proba(X), rtol=1e-9
            )
