"""Oracle: each model's class densities are SciPy's distributions with its fitted parameters.

``class_log_density`` is compared with ``scipy.stats`` (norm, poisson,
bernoulli, multinomial, multivariate_normal) evaluated at the fitted
parameters, ``score_samples`` with the log of the prior-weighted mixture of
those densities, and ``predict_proba`` with Bayes' rule over them, for
several data sets each.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesrule as br

pytestmark = pytest.mark.oracle


@cache
def _data(kind: str, seed: int):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), [30, 50, 40])
    k = y[:, None]
    if kind == "counts":
        X = rng.poisson(1.0 + k * np.arange(1, 5) / 2.0, size=(120, 4)).astype(float)
    else:
        X = rng.normal(size=(120, 4)) * (1.0 + 0.5 * k) + k * np.array([1.0, -1.0, 0.5, 2.0])
    return X, y


def _gauss(m, X):
    sd = np.sqrt(m.var_)
    sd = np.broadcast_to(sd, m.means_.shape if hasattr(m, "means_") else m.theta_.shape)
    means = m.means_ if hasattr(m, "means_") else m.theta_
    return np.stack(
        [stats.norm.logpdf(X, means[c], sd[c]).sum(axis=1) for c in range(len(m.classes_))], 1
    )


def _poisson(m, X):
    return np.stack([stats.poisson.logpmf(X, r).sum(axis=1) for r in m.rate_], 1)


def _bernoulli(m, X):
    B = (X > m.binarize).astype(int)
    return np.stack(
        [stats.bernoulli.logpmf(B, np.exp(f)).sum(axis=1) for f in m.feature_log_prob_], 1
    )


def _multinomial(m, X):
    n = X.sum(axis=1)
    return np.stack(
        [
            np.array(
                [stats.multinomial.logpmf(x, int(t), np.exp(f)) for x, t in zip(X, n, strict=True)]
            )
            for f in m.feature_log_prob_
        ],
        1,
    )


def _mvn_lda(m, X):
    return np.stack([stats.multivariate_normal.logpdf(X, mu, m.covariance_) for mu in m.means_], 1)


def _mvn_qda(m, X):
    return np.stack(
        [
            stats.multivariate_normal.logpdf(X, mu, c)
            for mu, c in zip(m.means_, m.covariance_, strict=True)
        ],
        1,
    )


MODELS = {
    "gnb": (br.GaussianNB, {}, "real", _gauss),
    "dlda": (br.DiagonalLDA, {}, "real", _gauss),
    "pnb": (br.PoissonNB, {}, "counts", _poisson),
    "bnb": (br.BernoulliNB, {"binarize": 2.0}, "counts", _bernoulli),
    "mnb": (br.MultinomialNB, {}, "counts", _multinomial),
    "lda": (br.LinearDiscriminantAnalysis, {}, "real", _mvn_lda),
    "lda-biased": (br.LinearDiscriminantAnalysis, {"bias": True}, "real", _mvn_lda),
    "qda": (br.QuadraticDiscriminantAnalysis, {"store_covariance": True}, "real", _mvn_qda),
    "qda-biased": (
        br.QuadraticDiscriminantAnalysis,
        {"store_covariance": True, "bias": True},
        "real",
        _mvn_qda,
    ),
}
SEEDS = [0, 1, 2]
#: scikit-learn's data sets too (test_oracle_sklearn's, continuous or binned into
#: counts); digits and cancer only for the diagonal models: their full covariances
#: are singular or nearly so
SK_REAL = ["iris", "wine", "blobs", "blobs-imbalanced", "blobs-2class"]
SK_ALL = ["iris", "wine", "cancer", "digits", "blobs", "blobs-imbalanced", "blobs-2class"]


def _sources(name: str) -> list:
    kind = MODELS[name][2]
    if kind == "counts":
        return [*SEEDS, *SK_ALL]
    return [*SEEDS, *(SK_ALL if name in ("gnb", "dlda") else SK_REAL)]


CASES = [(name, source) for name in MODELS for source in _sources(name)]
IDS = [f"{name}-{source}" for name, source in CASES]


@cache
def _fitted(name: str, source):
    cls, params, kind, density = MODELS[name]
    if isinstance(source, str):
        from test_oracle_sklearn import _counts, _dataset

        X, y = _counts(source) if kind == "counts" else _dataset(source)
        Xq = X[::3]  # rows it was fitted on
    else:
        X, y = _data(kind, source)
        Xq, _ = _data(kind, source + 100)  # other rows of the same kind to evaluate
    model = cls(**params).fit(X, y)
    return model, Xq, density(model, Xq)


@pytest.mark.parametrize("name,seed", CASES, ids=IDS)
def test_class_log_density_is_scipys(name, seed):
    model, Xq, expected = _fitted(name, seed)
    np.testing.assert_allclose(model.class_log_density(Xq), expected, rtol=1e-9, atol=_atol(seed))


def _atol(source) -> float:
    """Digits' constant pixels have var_smoothing's variance alone (about 1e-8): the
    two matrix products (x^2/v - 2 x m/v + m^2/v) cancel terms of 1e10 there, which
    leaves about 1e-7 of the log density, the price of the BLAS form."""
    return 1e-6 if source == "digits" else 1e-9


@pytest.mark.parametrize("name,seed", CASES, ids=IDS)
def test_score_samples_is_the_log_of_the_prior_weighted_mixture(name, seed):
    model, Xq, expected = _fitted(name, seed)
    mixture = logsumexp(expected + np.log(model.priors_), axis=1)
    np.testing.assert_allclose(model.score_samples(Xq), mixture, rtol=1e-9, atol=_atol(seed))


@pytest.mark.parametrize("name,seed", CASES, ids=IDS)
def test_predict_proba_is_bayes_rule_over_scipys_densities(name, seed):
    model, Xq, expected = _fitted(name, seed)
    joint = expected + np.log(model.priors_)
    posterior = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(
        model.predict_proba(Xq), posterior, rtol=0, atol=1e-10 if seed != "digits" else 1e-6
    )
