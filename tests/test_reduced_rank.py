"""Reduced-rank LDA (``reduced_rank=True``) against MASS's ``predict.lda(dimen=)``.

The reference below is an independent NumPy transcription of the algorithm of
MASS's ``lda.default`` (method "moment") and ``predict.lda`` (method
"plug-in"), as read in MASS's ``R/lda.R`` (W. N. Venables and B. D. Ripley):

* the within-class scatter, each column scaled by its standard deviation,
  divided by ``n - K``; its SVD gives a first scaling that whitens it (rank
  from ``tol`` on the singular values);
* the class means about their prior-weighted centre, weighted by
  ``sqrt(n prior_k / (K - 1))`` and put through that scaling; the right
  singular vectors of that matrix give the discriminant directions;
* at prediction, rows and class means are centred at the prior-weighted mean
  and projected; class ``k`` gets ``x_d . m_kd - |m_kd|^2 / 2 + log prior_k``
  over the first ``dimen`` coordinates, and the posterior is its softmax.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.datasets import load_iris, load_wine

from bayesrule import LinearDiscriminantAnalysis


def mass_posterior(X, y, X_new, prior=None, dimen=None, tol=1e-4):
    classes, g = np.unique(y, return_inverse=True)
    n, _ = X.shape
    K = classes.size
    prior = np.bincount(g) / n if prior is None else np.asarray(prior, dtype=float)
    group_means = np.stack([X[g == k].mean(axis=0) for k in range(K)])
    resid = X - group_means[g]
    col_sd = resid.std(axis=0, ddof=1)
    first = np.diag(1.0 / col_sd)
    _, sv, vt = np.linalg.svd(np.sqrt(1.0 / (n - K)) * resid @ first, full_matrices=False)
    r = int(np.sum(sv > tol))
    first = first @ vt[:r].T / sv[:r]
    centre = prior @ group_means
    between = np.sqrt(n * prior / (K - 1))[:, None] * (group_means - centre) @ first
    _, sb, vtb = np.linalg.svd(between, full_matrices=False)
    rank = int(np.sum(sb > tol * sb[0]))
    scaling = first @ vtb[:rank].T
    dimen = rank if dimen is None else min(dimen, rank)
    z = ((X_new - centre) @ scaling)[:, :dimen]
    dm = ((group_means - centre) @ scaling)[:, :dimen]
    dist = 0.5 * np.sum(dm**2, axis=1) - np.log(prior) - z @ dm.T
    e = np.exp(-(dist - dist.min(axis=1, keepdims=True)))
    return e / e.sum(axis=1, keepdims=True)


def _synthetic(seed=0, n=300, p=6, K=5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=n)
    centres = rng.normal(scale=2.0, size=(K, p))
    A = rng.normal(size=(p, p))
    X = centres[y] + rng.normal(size=(n, p)) @ A.T
    X[:, 0] = X[:, 0] * 1e3 + 5e4  # units and an offset far from the origin
    return X, y


DATASETS = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "synthetic": _synthetic,
}


def _cases():
    for name, load in DATASETS.items():
        X, y = load()
        K = np.unique(y).size
        for prior in (None, "explicit"):
            for d in range(1, K):
                yield pytest.param(name, prior, d, id=f"{name}-{prior}-d{d}")


@pytest.mark.parametrize(("name", "prior", "d"), list(_cases()))
def test_posteriors_equal_mass_dimen(name, prior, d):
    X, y = DATASETS[name]()
    K = np.unique(y).size
    priors = None if prior is None else np.linspace(1.0, 2.0, K) / np.linspace(1.0, 2.0, K).sum()
    ref = mass_posterior(X, y, X, prior=priors, dimen=d)
    est = LinearDiscriminantAnalysis(n_components=d, reduced_rank=True, priors=priors).fit(X, y)
    rng = np.random.default_rng(1)
    X_new = X[rng.choice(X.shape[0], 40)] + rng.normal(size=(40, X.shape[1])) * X.std(axis=0)
    np.testing.assert_allclose(est.predict_proba(X), ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(
        est.predict_proba(X_new), mass_posterior(X, y, X_new, priors, d), rtol=0, atol=1e-8
    )
    assert np.array_equal(est.predict(X), est.classes_[np.argmax(ref, axis=1)])
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), ref, rtol=0, atol=1e-8)
    full = LinearDiscriminantAnalysis(priors=priors).fit(X, y).predict_proba(X)
    if d == K - 1:  # every direction kept: full LDA
        np.testing.assert_allclose(est.predict_proba(X), full, rtol=0, atol=1e-8)
    else:  # the reduced rule is a different classifier
        assert np.abs(est.predict_proba(X) - full).max() > 1e-3


def test_iris_dimen_one_differs_from_full_by_mass_amount():
    X, y = load_iris(return_X_y=True)
    reduced = LinearDiscriminantAnalysis(n_components=1, reduced_rank=True).fit(X, y)
    plain = LinearDiscriminantAnalysis(n_components=1).fit(X, y)
    gap = np.abs(reduced.predict_proba(X) - plain.predict_proba(X)).max()
    ref_gap = np.abs(mass_posterior(X, y, X, dimen=1) - mass_posterior(X, y, X)).max()
    assert gap == pytest.approx(ref_gap, abs=1e-8)
    assert gap > 0.3


@pytest.mark.parametrize("name", list(DATASETS))
def test_decision_function_is_log_posterior_up_to_row_constant(name):
    X, y = DATASETS[name]()
    est = LinearDiscriminantAnalysis(n_components=1, reduced_rank=True).fit(X, y)
    dec = est.decision_function(X)
    logp = np.log(mass_posterior(X, y, X, dimen=1))
    diff = dec - logp
    # the row term of scikit-learn's form is large where the data lie far
    # from the origin; its rounding is relative to it
    tol = 1e-9 * max(1.0, float(np.abs(dec).max()))
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=tol)
    # coef_ and intercept_ are the reduced rule's (scikit-learn's form)
    np.testing.assert_allclose(dec, X @ est.coef_.T + est.intercept_, rtol=1e-7, atol=1e-6)


def test_reduced_rank_without_n_components_is_full_lda():
    X, y = load_wine(return_X_y=True)
    a = LinearDiscriminantAnalysis(reduced_rank=True).fit(X, y)
    b = LinearDiscriminantAnalysis().fit(X, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.score_samples(X), b.score_samples(X), rtol=1e-10)


def test_score_samples_is_the_rank_constrained_gaussian_mixture():
    """score_samples = log sum_k pi_k N(x; m~_k, Sigma~), checked with scipy.stats."""
    X, y = _synthetic(3, p=4, K=4)
    X[:, 0] = (X[:, 0] - 5e4) / 1e3
    est = LinearDiscriminantAnalysis(n_components=2, reduced_rank=True).fit(X, y)
    K = est.classes_.size
    dens = np.stack(
        [
            multivariate_normal(est.class_model(c).mean, est.covariance_).logpdf(X)
            for c in est.classes_
        ],
        axis=1,
    )
    mix = np.log(np.exp(dens) @ est.priors_)
    np.testing.assert_allclose(est.score_samples(X), mix, rtol=1e-9)
    # the class means lie in a 2-dimensional affine subspace
    M = np.stack([est.class_model(c).mean for c in est.classes_])
    sv = np.linalg.svd(M - M.mean(axis=0), compute_uv=False)
    assert sv[2] < 1e-9 * sv[0] and K == 4
    # and the posteriors are Bayes' rule on that mixture
    np.testing.assert_allclose(
        est.predict_proba(X), np.exp(dens + np.log(est.priors_) - mix[:, None]), atol=1e-9
    )


def _class_loglik(X, y, means, cov):
    return sum(multivariate_normal(means[k], cov).logpdf(X[y == k]).sum() for k in range(3))


def test_rank_constrained_model_is_the_maximum_likelihood_one():
    """bias=True, default priors: no nearby model in the family fits the data better.

    The family: Gaussian classes with one covariance and means
    ``a + beta_k b`` on a line (d=1). Random perturbations of every parameter
    (the line's point and direction, the positions, the covariance's
    Cholesky factor) never raise the log-likelihood.
    """
    X, y = load_iris(return_X_y=True)
    est = LinearDiscriminantAnalysis(n_components=1, reduced_rank=True, bias=True).fit(X, y)
    M = np.stack([est.class_model(c).mean for c in est.classes_])
    best = _class_loglik(X, y, M, est.covariance_)
    a, b = M.mean(axis=0), M[2] - M[0]
    beta = (M - a) @ b / (b @ b)
    C = np.linalg.cholesky(est.covariance_)
    rng = np.random.default_rng(0)
    for scale in (1e-2, 1e-3):
        for _ in range(20):
            a2 = a + scale * rng.normal(size=4) * X.std(axis=0)
            b2 = b + scale * rng.normal(size=4) * np.abs(b).max()
            beta2 = beta + scale * rng.normal(size=3)
            C2 = C + np.tril(scale * rng.normal(size=(4, 4))) * np.abs(C).max()
            other = _class_loglik(X, y, a2 + np.outer(beta2, b2), C2 @ C2.T)
            assert other <= best + 1e-9
    # and the unconstrained LDA fits better (it has more parameters)
    full = LinearDiscriminantAnalysis(bias=True).fit(X, y)
    assert _class_loglik(X, y, full.means_, full.covariance_) > best


@pytest.mark.parametrize(
    "params",
    [
        {"solver": "eigen", "shrinkage": 0.3},
        {"solver": "lsqr", "shrinkage": "oas"},
        {"solver": "eigen", "shrinkage": "auto"},
        {"bias": True},
    ],
)
def test_combines_with_shrinkage_and_bias_as_full_lda_in_that_metric(params):
    """With any covariance estimate: the same construction in its metric.

    At ``n_components = K - 1`` it is the full model with those parameters,
    and for fewer directions its posteriors are MASS's rule applied to the
    whitened data of that model (the projection ``transform`` gives).
    """
    X, y = load_wine(return_X_y=True)
    full = LinearDiscriminantAnalysis(**params).fit(X, y)
    red = LinearDiscriminantAnalysis(n_components=2, reduced_rank=True, **params).fit(X, y)
    np.testing.assert_allclose(red.predict_proba(X), full.predict_proba(X), atol=1e-9)
    one = LinearDiscriminantAnalysis(n_components=1, reduced_rank=True, **params).fit(X, y)
    z = (X - full.xbar_) @ full.scalings_[:, :1]  # transform (which 'lsqr' refuses)
    zm = (full.means_ - full.xbar_) @ full.scalings_[:, :1]
    logit = z @ zm.T - 0.5 * np.sum(zm**2, axis=1) + np.log(full.priors_)
    ref = np.exp(logit - logit.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(one.predict_proba(X), ref, atol=1e-9)
    # the directions are unchanged by reduced_rank
    np.testing.assert_allclose(one.scalings_, full.scalings_, atol=1e-12)


def test_streaming_and_set_params_give_the_same_reduced_model():
    X, y = _synthetic(5)
    whole = LinearDiscriminantAnalysis(n_components=2, reduced_rank=True).fit(X, y)
    est = LinearDiscriminantAnalysis(n_components=2, reduced_rank=True)
    for part in np.array_split(np.arange(X.shape[0]), 3):
        est.partial_fit(X[part], y[part], classes=np.unique(y))
    np.testing.assert_allclose(est.predict_proba(X), whole.predict_proba(X), atol=1e-9)
    plain = LinearDiscriminantAnalysis(n_components=2).fit(X, y)
    params = {**plain.get_params(), "reduced_rank": True}
    switched = LinearDiscriminantAnalysis.from_stats(plain.stats_, **params)
    np.testing.assert_allclose(switched.predict_proba(X), whole.predict_proba(X), atol=1e-12)


def test_bad_reduced_rank_is_refused():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="reduced_rank"):
        LinearDiscriminantAnalysis(reduced_rank="yes").fit(X, y)
    with pytest.raises(ValueError, match="n_components cannot be larger"):
        LinearDiscriminantAnalysis(n_components=3, reduced_rank=True).fit(X, y)
