"""Mixture discriminant analysis: EM, its special cases, the family's guarantees, bad input."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as SkQDA
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesrule
from bayesrule import MixtureDiscriminantAnalysis as MDA
from bayesrule.discriminant_analysis import MixtureDiscriminantAnalysis
from bayesrule.models.mixture import component_moments, merge_moments

COVARIANCE_TYPES = ["full", "diag", "spherical", "shared", "ppca"]


def two_mixtures(n=400, seed=0):
    """Class 0: two blobs at (-4, 0) and (4, 0); class 1: two blobs at (0, -4) and (0, 4)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, -4.0], [0.0, 4.0]])
    comp = np.repeat(np.arange(4), [n // 4, 3 * n // 4, n // 2, n // 2])
    X = centres[comp] + rng.normal(scale=[0.5, 1.0], size=(comp.size, 2))
    return X, comp // 2, centres


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


# ------------------------------------------------------------------ EM and special cases
def test_em_recovers_a_known_mixture():
    X, y, centres = two_mixtures()
    m = MDA(n_components=2, projection=None, reg_covar=0.0).fit(X, y)
    for k in range(2):
        means = m.class_model(k).means
        true = centres[2 * k : 2 * k + 2]
        gaps = np.linalg.norm(means[:, None, :] - true[None, :, :], axis=2)
        assert np.all(gaps.min(axis=0) < 0.15) and np.all(gaps.min(axis=1) < 0.15)
    np.testing.assert_allclose(np.sort(m.class_model(0).weights), [0.25, 0.75], atol=0.02)
    cov = m._model.components.covariances()
    np.testing.assert_allclose(
        np.diagonal(cov, axis1=1, axis2=2), np.tile([0.25, 1.0], (4, 1)), rtol=0.25
    )
    assert m.converged_ and m.score(X, y) == 1.0


@pytest.mark.parametrize("dataset", ["iris", "digits"])
def test_one_full_component_is_qda(dataset, digits):
    if dataset == "iris":
        X, y = load_iris(return_X_y=True)
    else:
        from sklearn.decomposition import PCA

        X, y = digits
        X = PCA(12, random_state=0).fit_transform(X)  # every class covariance invertible
    m = MDA(n_components=1, covariance_type="full", projection=None, reg_covar=0.0).fit(X, y)
    ref = SkQDA().fit(X, y)
    np.testing.assert_array_equal(m.predict(X), ref.predict(X))
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(
        m.score_samples(X),
        bayesrule.QuadraticDiscriminantAnalysis(bias=True).fit(X, y).score_samples(X),
        rtol=1e-9,
    )


def test_one_shared_component_is_lda():
    X, y = load_iris(return_X_y=True)
    m = MDA(n_components=1, covariance_type="shared", projection=None, reg_covar=0.0).fit(X, y)
    ref = SkLDA(solver="lsqr").fit(X, y)
    np.testing.assert_array_equal(m.predict(X), ref.predict(X))
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), atol=1e-8)


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_every_covariance_type_classifies_and_is_a_density(covariance_type, digits):
    X, y = digits
    m = MDA(n_components=3, covariance_type=covariance_type, n_dims=20, rank=5).fit(X, y)
    P = m.predict_proba(X[:300])
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)
    assert m.score(X, y) > 0.9
    # log p(x) = logsumexp_k log pi_k + log p_k(x), each a mixture over its components
    joint = m.predict_joint_log_proba(X[:50])
    np.testing.assert_allclose(m.score_samples(X[:50]), np.logaddexp.reduce(joint, axis=1))
    cov = m._model.components.covariances()
    assert np.all(np.linalg.eigvalsh(cov) > 0)


def test_ppca_log_density_equals_the_full_gaussian_of_its_covariance():
    from scipy.stats import multivariate_normal

    X, y = load_digits(return_X_y=True)
    m = MDA(n_components=2, covariance_type="ppca", rank=3, n_dims=12).fit(X, y)
    comps = m._model.components
    Z = m._model.projection.transform(X[:40])
    from bayesrule.models.mixture import component_log_prob

    lp = component_log_prob(Z, comps)
    cov = comps.covariances()
    for c in range(4):
        ref = multivariate_normal(comps.means[c], cov[c]).logpdf(Z) + comps.log_weights[c]
        np.testing.assert_allclose(lp[:, c], ref, rtol=1e-9)


def test_block_moments_merge_into_those_of_the_whole():
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(90, 4)) + 100.0
    R = rng.dirichlet(np.ones(3), size=90)
    w = rng.uniform(0, 3, size=90)
    whole = component_moments(Z, R, w)
    parts = merge_moments(
        component_moments(Z[:31], R[:31], w[:31]), component_moments(Z[31:], R[31:], w[31:])
    )
    for a, b in zip(whole, parts, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-9)


def test_integer_weights_equal_repeated_rows(digits):
    X, y = digits
    X, y = X[:400], y[:400]
    w = np.random.default_rng(0).integers(0, 4, size=y.size)
    kw = dict(n_components=3, n_dims=15)
    a = MDA(**kw).fit(X, y, sample_weight=w)
    b = MDA(**kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-7)
    np.testing.assert_allclose(a.score_samples(X), b.score_samples(X), rtol=1e-8)


def test_priors_shift_the_joint_log_likelihood(digits):
    X, y = digits
    priors = np.linspace(1, 2, 10) / np.linspace(1, 2, 10).sum()
    a = MDA(n_components=2, n_dims=10).fit(X, y)
    b = MDA(n_components=2, n_dims=10, priors=priors).fit(X, y)
    diff = b.predict_joint_log_proba(X[:20]) - a.predict_joint_log_proba(X[:20])
    np.testing.assert_allclose(
        diff, np.tile(np.log(priors) - np.log(a.priors_), (20, 1)), atol=1e-9
    )


def test_model_file_round_trip_is_exact(tmp_path, digits):
    X, y = digits[0][:600], digits[1][:600]
    for ct in ("full", "ppca"):
        m = MDA(n_components=2, covariance_type=ct, n_dims=12, rank=4).fit(X, y)
        path = tmp_path / f"mda_{ct}.bayesrule"
        bayesrule.save(m, path)
        back = bayesrule.load(path)
        assert type(back) is MDA and back.get_params() == m.get_params()
        np.testing.assert_array_equal(back.predict_proba(X), m.predict_proba(X))
        np.testing.assert_array_equal(back.score_samples(X), m.score_samples(X))
        assert (back.n_iter_, back.converged_) == (m.n_iter_, m.converged_)


def test_from_stats_of_statistics_equals_fit(digits):
    X, y = digits[0][:600], digits[1][:600]
    est = MDA(n_components=2, n_dims=10)
    fitted = MDA(n_components=2, n_dims=10).fit(X, y)
    built = MDA.from_stats(est.statistics(X, y), **est.get_params())
    np.testing.assert_array_equal(built.predict_proba(X), fitted.predict_proba(X))


def test_streaming_methods_are_refused():
    m = MDA()
    for name in ("partial_fit", "merge", "forget"):
        assert not hasattr(m, name)
        with pytest.raises(AttributeError, match=f"no {name}"):
            getattr(m, name)


# ------------------------------------------------------------------ robustness
def test_collapsing_components_stay_finite():
    rng = np.random.default_rng(0)
    X = np.vstack(
        [
            np.tile([[1.0, 2.0, 3.0]], (30, 1)),
            rng.normal(size=(5, 3)),
            rng.normal(3, 1, size=(35, 3)),
        ]
    )
    y = np.repeat([0, 1], 35)
    m = MDA(n_components=5, projection=None).fit(X, y)
    P = m.predict_proba(X)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)
    assert np.all(np.isfinite(m.score_samples(X)))
    assert np.all(np.isfinite(m.sample(20, random_state=0)[0]))


def test_projection_maps_back_to_the_feature_space():
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(10, 3)))[0]
    Z = rng.normal(size=(200, 3)) * [3.0, 2.0, 1.0]
    X = 5.0 + Z @ basis.T
    y = (Z[:, 0] > 0).astype(int)
    m = MDA(n_components=2, n_dims=3).fit(X, y)
    B = m.projection_components_
    np.testing.assert_allclose(B @ B.T, np.eye(3), atol=1e-12)
    proj = m._model.projection
    np.testing.assert_allclose(proj.back(proj.transform(X)), X, atol=1e-9)
    Xs, _ = m.sample(50, random_state=0)
    assert Xs.shape == (50, 10)
    # samples lie in the data's subspace, up to the (tiny) residual variance
    np.testing.assert_allclose(proj.back(proj.transform(Xs)), Xs, atol=1e-4)


def test_fisher_projection_keeps_n_classes_minus_one_dims(digits):
    X, y = digits
    m = MDA(projection="fisher", n_components=2).fit(X, y)
    assert m.projection_components_.shape == (9, 64)
    assert m.score(X, y) > 0.9


def test_bic_chooses_the_true_number_of_components():
    X, y, _ = two_mixtures()
    X = np.vstack([X, np.random.default_rng(1).normal(10.0, 1.0, size=(300, 2))])
    y = np.concatenate([y, np.full(300, 2)])
    m = MDA(n_components="bic", max_components=4, projection=None).fit(X, y)
    np.testing.assert_array_equal(m.n_components_, [2, 2, 1])


def test_components_per_class_as_list_and_dict(digits):
    X, y = digits[0][:600], digits[1][:600]
    a = MDA(n_components=list(range(1, 11)), n_dims=10).fit(X, y)
    b = MDA(n_components={k: k + 1 for k in range(10)}, n_dims=10).fit(X, y)
    np.testing.assert_array_equal(a.n_components_, np.arange(1, 11))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"reg_covar": -1.0}, "reg_covar"),
        ({"covariance_type": "tied"}, "covariance_type"),
        ({"covariance_type": "ppca", "rank": 4, "projection": None}, "rank"),
        ({"covariance_type": "ppca", "rank": 5, "n_dims": 3}, "rank"),
        ({"n_components": [1, 2]}, "n_components"),
        ({"n_components": {0: 1}}, "n_components"),
        ({"n_components": 0}, "n_components"),
        ({"projection": "ica"}, "projection"),
    ],
)
def test_bad_parameters_are_named(params, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        MDA(**params).fit(X, y)


def test_a_small_class_gets_fewer_components_with_a_warning():
    X, y = load_iris(return_X_y=True)
    keep = np.concatenate([np.arange(100), [100, 101, 102]])
    with pytest.warns(UserWarning, match=r"class 2 has 3 samples"):
        m = MDA(n_components=5, projection=None).fit(X[keep], y[keep])
    assert m.n_components_.tolist() == [5, 5, 3]


def test_singular_component_without_regularisation_says_what_to_do():
    X = np.vstack([np.zeros((5, 3)), np.ones((5, 3))])
    y = np.repeat([0, 1], 5)
    with pytest.raises(ValueError, match="reg_covar"):
        MDA(n_components=1, reg_covar=0.0, projection=None).fit(X, y)


def test_non_convergence_warns():
    X, y = load_digits(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        MDA(max_iter=1, n_components=3, n_dims=10).fit(X, y)


# ------------------------------------------------------------------ scikit-learn and the CLI
ESTIMATORS = [
    MixtureDiscriminantAnalysis(n_components=1),
    MixtureDiscriminantAnalysis(n_components=2, covariance_type="shared"),
    MixtureDiscriminantAnalysis(n_components=2, covariance_type="ppca", projection=None),
]


# identical rows are one entry of the seeding sample, with their weights summed:
# weighted rows and repeated rows give the same fit
@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


def test_cli_fits_mda_end_to_end(tmp_path):
    pytest.importorskip("typer")
    pd = pytest.importorskip("pandas")
    X, y = load_iris(return_X_y=True)
    csv = tmp_path / "iris.csv"
    lines = ["a,b,c,d,species"] + [
        ",".join(f"{v:g}" for v in row) + f",{c}" for row, c in zip(X, y, strict=True)
    ]
    csv.write_text("\n".join(lines) + "\n")
    model = tmp_path / "mda.bayesrule"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p])
    cmd = [
        sys.executable,
        "-m",
        "bayesrule.cli",
        "fit",
        str(csv),
        "--target",
        "species",
        "--model",
        "mda",
        "--set",
        "n_components=2",
        "-o",
        str(model),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    loaded = bayesrule.load(model)
    assert isinstance(loaded, MDA) and loaded.n_components == 2
    frame = pd.read_csv(csv)
    X = frame.drop(columns="species")
    expected = MDA(n_components=2).fit(X, frame["species"])
    np.testing.assert_array_equal(loaded.predict_proba(X), expected.predict_proba(X))


@pytest.mark.mnist
def test_demo_draws_mda_samples(mnist, monkeypatch, tmp_path):
    """``bayesrule demo`` writes mda_samples.png: one row of generated digits per class."""
    import types

    pytest.importorskip("typer")
    pytest.importorskip("matplotlib")
    from typer.testing import CliRunner

    from bayesrule.cli._app import app

    X_train, y_train, _, _ = mnist
    lda = bayesrule.LinearDiscriminantAnalysis().fit(X_train[:3000], y_train[:3000])
    mda = MDA(n_components=2, n_dims=20).fit(X_train[:3000], y_train[:3000])
    module = types.ModuleType("bayesrule.demo")
    module.run = lambda data_dir=None, report_dir=None: {
        "models": {("mnist", "LDA"): lda, ("mnist", "MDA"): mda}
    }
    monkeypatch.setitem(sys.modules, "bayesrule.demo", module)
    monkeypatch.setattr(bayesrule, "demo", module, raising=False)
    report = tmp_path / "report"
    result = CliRunner().invoke(app, ["demo", "-o", str(report)])
    assert result.exit_code == 0, result.output
    import matplotlib.image as mpimg

    img = mpimg.imread(report / "mda_samples.png")
    assert min(img.shape[:2]) >= 300 and img[..., :3].std() > 0.05


@pytest.mark.mnist
def test_mnist_subsample_accuracy(mnist):
    """Defaults on 10000 training rows: about 0.97 on the test rows (0.98 with all 60000)."""
    X_train, y_train, X_test, y_test = mnist
    m = MDA().fit(X_train[:10000], y_train[:10000])
    assert m.score(X_test, y_test) >= 0.965


def test_shared_components_have_one_covariance(digits):
    X, y = digits
    m = MDA(n_components=3, covariance_type="shared", n_dims=10, reg_covar=0.2).fit(X, y)
    cov = m._model.components.covariances()
    np.testing.assert_array_equal(cov, np.broadcast_to(cov[0], cov.shape))
