"""Reduced-rank MDA (``dimension``): the constrained M-step, its special cases, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.linalg import eigh
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesrule
from bayesrule import LinearDiscriminantAnalysis as LDA
from bayesrule import MixtureDiscriminantAnalysis as MDA
from bayesrule.models.mixture import derive_components, reduced_rank


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:700] / 16.0, y[:700]


def shared(**params):
    return MDA(covariance_type="shared", **params)


# ------------------------------------------------------------------ the M-step on its own
@pytest.mark.parametrize("seed", range(4))
def test_reduced_rank_is_the_generalised_eigenproblem(seed):
    """Means projected on the leading eigenvectors of (B, Sigma) in Sigma's metric; the
    eigenvalues left out join the covariance (an implementation through scipy's eigh)."""
    rng = np.random.default_rng(seed)
    M, d = int(rng.integers(3, 9)), int(rng.integers(2, 7))
    W = rng.uniform(0.5, 5.0, size=M)
    means = rng.normal(scale=3.0, size=(M, d)) + 100.0
    A = rng.normal(size=(d, d))
    sigma = A @ A.T + 0.5 * np.eye(d)
    p = W / W.sum()
    mbar = p @ means
    B = (means - mbar).T @ ((means - mbar) * p[:, None])
    vals, vecs = eigh(B, sigma)  # v' sigma v = 1, ascending
    vals, vecs = vals[::-1], vecs[:, ::-1]
    for dim in range(1, min(M - 1, d) + 1):
        got_means, got_cov = reduced_rank(W, means, sigma, dim)
        V, Vx = vecs[:, :dim], vecs[:, dim:]
        want_means = mbar + (means - mbar) @ (sigma @ V @ V.T).T
        SVx = sigma @ Vx
        want_cov = sigma + (SVx * np.maximum(vals[dim:], 0.0)) @ SVx.T
        np.testing.assert_allclose(got_means, want_means, atol=1e-9 * np.abs(means).max())
        np.testing.assert_allclose(got_cov, want_cov, atol=1e-9 * np.abs(want_cov).max())
        # the confined means span a dim-dimensional affine subspace
        sv = np.linalg.svd(got_means - p @ got_means, compute_uv=False)
        assert np.all(sv[dim:] <= 1e-8 * sv[0]) and sv[dim - 1] > 1e-6 * sv[0]
        # the weighted mean is kept and the covariance only grows
        np.testing.assert_allclose(p @ got_means, mbar, rtol=1e-12)
        assert np.linalg.eigvalsh(got_cov - sigma).min() > -1e-9 * np.abs(sigma).max()
    # the full dimension changes nothing
    full_means, full_cov = reduced_rank(W, means, sigma, min(M - 1, d))
    np.testing.assert_allclose(full_means, means, rtol=1e-10)
    np.testing.assert_allclose(full_cov, sigma, atol=1e-10 * np.abs(sigma).max())


def test_derive_components_without_dimension_is_unchanged():
    rng = np.random.default_rng(0)
    M, d = 5, 3
    owner = np.array([0, 0, 1, 1, 1])
    W = rng.uniform(1, 4, size=M)
    means = rng.normal(size=(M, d))
    scatter = np.stack([np.cov(rng.normal(size=(20, d)).T) * W[m] for m in range(M)])
    common = dict(covariance_type="shared", reg_covar=0.1, rank=0, scale=np.ones(2))
    a = derive_components(owner, W, means, scatter, **common)
    b = derive_components(owner, W, means, scatter, dimension=None, **common)
    for name in ("means", "factors", "whitening", "log_det", "log_weights"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    c = derive_components(owner, W, means, scatter, dimension=1, **common)
    cov = c.covariances()
    assert np.allclose(cov, cov[0]) and np.linalg.matrix_rank(c.means - c.means[0]) == 1


# ------------------------------------------------------------------ special cases
@pytest.mark.parametrize("loader", [load_iris, load_wine])
@pytest.mark.parametrize("solver", ["svd", "lsqr", "eigen"])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_component_per_class_is_reduced_rank_lda(loader, solver, weighted):
    """One component per class: responsibilities are 1, and the fit is MASS's predict(dimen=d)."""
    X, y = loader(return_X_y=True)
    w = np.random.default_rng(1).uniform(0.2, 3.0, size=y.size) if weighted else None
    for dim in range(1, np.unique(y).size):
        m = shared(n_components=1, projection=None, reg_covar=0.0, dimension=dim)
        m.fit(X, y, sample_weight=w)
        ref = LDA(n_components=dim, reduced_rank=True, bias=True, solver=solver)
        ref.fit(X, y, sample_weight=w)
        np.testing.assert_array_equal(m.predict(X), ref.predict(X))
        np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), atol=1e-8)
        np.testing.assert_allclose(m.score_samples(X), ref.score_samples(X), rtol=1e-9)


def test_dimension_none_and_full_dimension_are_the_shared_form(digits):
    X, y = digits
    free = shared(n_components=3, n_dims=12).fit(X, y)
    full = shared(n_components=3, n_dims=12, dimension=12).fit(X, y)  # min(30 - 1, 12)
    np.testing.assert_allclose(full.predict_proba(X), free.predict_proba(X), atol=1e-8)
    assert full.n_iter_ == free.n_iter_
    lower = shared(n_components=3, n_dims=12, dimension=3).fit(X, y)
    assert not np.allclose(lower.predict_proba(X), free.predict_proba(X), atol=1e-3)


@pytest.mark.parametrize("dim", [1, 2, 5])
def test_fitted_means_lie_in_a_subspace_and_probabilities_are_proper(dim, digits):
    X, y = digits
    m = shared(n_components=2, n_dims=10, dimension=dim).fit(X, y)
    comps = m._model.components
    W = np.exp(comps.log_weights) * m.stats_.weights[comps.owner]
    centred = comps.means - (W / W.sum()) @ comps.means
    sv = np.linalg.svd(centred, compute_uv=False)
    assert np.all(sv[dim:] <= 1e-8 * sv[0])
    cov = comps.covariances()
    assert np.allclose(cov, cov[0]) and np.linalg.eigvalsh(cov[0]).min() > 0
    P = m.predict_proba(X)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)
    assert np.all(np.isfinite(m.score_samples(X)))
    assert m.score(X, y) > {1: 0.3, 2: 0.5, 5: 0.85}[dim]


@pytest.mark.parametrize("dim", [1, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_em_log_likelihood_never_decreases(dim, seed, digits):
    """Without a ridge the M-step maximises the constrained likelihood: EM climbs."""
    X, y = digits
    bounds = []
    for it in range(1, 13):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = shared(
                n_components=3,
                n_dims=8,
                reg_covar=0.0,
                dimension=dim,
                tol=0.0,
                max_iter=it,
                random_state=seed,
            ).fit(X, y)
        bounds.append(m.lower_bound_)
    steps = np.diff(bounds)
    assert np.all(steps >= -1e-10 * np.abs(bounds).max()), steps
    assert bounds[-1] > bounds[0]


def test_bic_with_a_dimension(digits):
    X, y = digits
    m = shared(n_components="bic", max_components=3, n_dims=8, dimension=4).fit(X, y)
    assert np.all((m.n_components_ >= 1) & (m.n_components_ <= 3))
    assert m.score(X, y) > 0.8


# ------------------------------------------------------------------ the model file
def test_model_file_round_trip_and_from_stats_are_exact(tmp_path, digits):
    X, y = digits
    m = shared(n_components=2, n_dims=10, dimension=3).fit(X, y)
    path = tmp_path / "mda_rr.bayesrule"
    bayesrule.save(m, path)
    back = bayesrule.load(path)
    assert type(back) is MDA and back.get_params() == m.get_params() and back.dimension == 3
    np.testing.assert_array_equal(back.predict_proba(X), m.predict_proba(X))
    np.testing.assert_array_equal(back.score_samples(X), m.score_samples(X))
    built = MDA.from_stats(m.statistics(X, y), **m.get_params())
    np.testing.assert_array_equal(built.predict_proba(X), m.predict_proba(X))
    # the same statistics with another dimension give another model
    other = MDA.from_stats(m.stats_, **{**m.get_params(), "dimension": 1})
    assert not np.allclose(other.predict_proba(X), m.predict_proba(X), atol=1e-3)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical", "ppca"])
def test_dimension_needs_the_shared_form(covariance_type):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"dimension .*covariance_type='shared'.*"):
        MDA(covariance_type=covariance_type, n_components=2, dimension=1).fit(X, y)


@pytest.mark.parametrize(
    "params, match",
    [
        # 3 classes x 2 components: the means span at most 5 dimensions; iris has 4
        (dict(n_components=2, projection=None, dimension=5), r"at most min.*= 4; got dimension=5"),
        (dict(n_components=1, projection=None, dimension=3), r"at most min.*= 2; got dimension=3"),
        (dict(n_components=2, n_dims=2, dimension=3), r"at most min.*= 2; got dimension=3"),
        (
            dict(n_components="bic", max_components=3, projection=None, dimension=3),
            r"n_classes - 1 with n_components='bic'.*got dimension=3",
        ),
        (dict(n_components=2, dimension=0), r"dimension"),
        (dict(n_components=2, dimension=1.5), r"dimension"),
        (dict(n_components=2, dimension="2"), r"dimension"),
    ],
)
def test_bad_dimensions_are_named(params, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        shared(**params).fit(X, y)


def test_from_stats_refuses_a_dimension_the_statistics_cannot_have():
    X, y = load_iris(return_X_y=True)
    m = shared(n_components=1, projection=None).fit(X, y)
    with pytest.raises(ValueError, match=r"got dimension=3"):
        MDA.from_stats(m.stats_, **{**m.get_params(), "dimension": 3})
    with pytest.raises(ValueError, match=r"covariance_type='shared'"):
        MDA.from_stats(m.stats_, **{**m.get_params(), "covariance_type": "full", "dimension": 1})


@parametrize_with_checks(
    [MDA(n_components=2, covariance_type="shared", dimension=2)],
    expected_failed_checks=lambda est: {
        "check_fit2d_1feature": "dimension=2 needs two dimensions: one feature is refused "
        "with a ValueError naming dimension",
    },
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
