"""Display objects: what they compute, what they draw, and the install hint."""

from __future__ import annotations

import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import bayesrule  # noqa: E402
from bayesrule.plotting import (  # noqa: E402
    ConfusionMatrixDisplay,
    DecisionRegionsDisplay,
    SampleGridDisplay,
    density_level,
    gaussian_mass,
    image_shape_for,
    require_matplotlib,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0, 0, 0], [4, 0, 1, 0], [0, 4, 0, 1]], dtype=float)
    y = np.repeat(np.array(["a", "b", "c"]), 40)
    X = centres[np.repeat(np.arange(3), 40)] + rng.normal(size=(120, 4))
    return X, y


def test_decision_regions_in_two_dimensions(blobs):
    X, y = blobs
    model = bayesrule.QuadraticDiscriminantAnalysis().fit(X[:, :2], y)
    disp = DecisionRegionsDisplay.from_estimator(model, X[:, :2], y, grid_resolution=50)
    assert disp.regions.shape == (50, 50)
    # every region shown is the model's own prediction at that grid point
    point = np.array([[disp.xx[10, 20], disp.yy[10, 20]]])
    assert model.classes_[disp.regions[10, 20]] == model.predict(point)[0]
    np.testing.assert_allclose(disp.means, model.means_)
    assert disp.note is None
    assert [t.get_text() for t in disp.ax_.get_legend().get_texts()][:3] == ["a", "b", "c"]
    assert disp.ax_.get_xlabel() == "feature 1"


@pytest.fixture(scope="module")
def plane():
    """Three classes in two features, each with its own correlated covariance."""
    rng = np.random.default_rng(3)
    shapes = [np.array([[1.0, 0.0], [0.8, 0.5]]), np.array([[0.4, 0.0], [-0.3, 1.2]]), np.eye(2)]
    centres = np.array([[0.0, 0.0], [4.0, 1.0], [1.0, 4.0]])
    y = np.repeat(np.array(["a", "b", "c"]), 30)
    X = np.concatenate(
        [c + rng.normal(size=(30, 2)) @ L.T for c, L in zip(centres, shapes, strict=True)]
    )
    return X + 3.0, y  # positive, for the count models too


def _ellipse_covariance(patch, n_std=2.0):
    """The covariance whose ``n_std``-sigma ellipse is ``patch``."""
    t = np.radians(patch.angle)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    axes = np.array([patch.width, patch.height]) / (2.0 * n_std)
    return rot @ np.diag(axes**2) @ rot.T


def _grid(disp):
    return np.column_stack([disp.xx.ravel(), disp.yy.ravel()])


REGULARISED = {
    "LDA(shrinkage=0.5)": lambda: bayesrule.LinearDiscriminantAnalysis(
        solver="lsqr", shrinkage=0.5
    ),
    "QDA(reg_param=0.5)": lambda: bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.5),
    "RDA(alpha=0.3, gamma=0.4)": lambda: bayesrule.RegularizedDiscriminantAnalysis(
        alpha=0.3, gamma=0.4
    ),
}


@pytest.mark.parametrize("make", REGULARISED.values(), ids=REGULARISED.keys())
def test_ellipses_draw_the_models_own_covariance(plane, make):
    X, y = plane
    model = make().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=30)
    drawn = np.stack([_ellipse_covariance(e) for e in disp.ellipses_])
    own = np.stack([model.class_model(c).covariance for c in model.classes_])
    np.testing.assert_allclose(drawn, own, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("make", REGULARISED.values(), ids=REGULARISED.keys())
def test_regularised_covariances_are_not_the_empirical_ones(plane, make):
    # the ellipses of the test above would match a re-derivation from the statistics otherwise
    X, y = plane
    model = make().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=30)
    resid = X - np.stack([X[y == c].mean(axis=0) for c in y])
    pooled = [resid.T @ resid / (X.shape[0] - d) for d in (0, model.classes_.size)]
    for k, c in enumerate(model.classes_):
        empirical = [np.cov(X[y == c], rowvar=False, bias=b) for b in (True, False)] + pooled
        assert not any(np.allclose(disp.covariances[k], e, rtol=0.02) for e in empirical)


def test_gaussian_nb_ellipses_are_axis_aligned_from_its_variances(plane):
    X, y = plane
    model = bayesrule.GaussianNB().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=30)
    drawn = np.stack([_ellipse_covariance(e) for e in disp.ellipses_])
    np.testing.assert_allclose(drawn, np.stack([np.diag(v) for v in model.var_]), atol=1e-12)


@pytest.mark.parametrize("make", [bayesrule.KernelNB, bayesrule.MultinomialNB])
def test_other_models_draw_contours_of_their_class_log_density(plane, make):
    X, y = plane
    model = make().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=60)
    surface = model.class_log_density(_grid(disp)).T.reshape(disp.log_density.shape)
    expected = [density_level(s, gaussian_mass(2.0)) for s in surface]
    assert disp.ellipses_ == [None] * 3
    np.testing.assert_allclose([c.levels[0] for c in disp.contours_], expected, rtol=1e-12)


def test_legend_says_what_is_drawn(plane):
    X, y = plane
    ellipses = DecisionRegionsDisplay.from_estimator(
        bayesrule.QuadraticDiscriminantAnalysis().fit(X, y), X, y, grid_resolution=30
    )
    contours = DecisionRegionsDisplay.from_estimator(
        bayesrule.KernelNB().fit(X, y), X, y, grid_resolution=30
    )
    texts = [[t.get_text() for t in d.ax_.get_legend().get_texts()] for d in (ellipses, contours)]
    assert (texts[0][3:], texts[1][3:]) == (
        ["model mean", "2σ ellipse of the model"],
        ["model density, 86% region"],
    )


@pytest.mark.parametrize(
    "make",
    [bayesrule.LinearDiscriminantAnalysis, bayesrule.GaussianNB, bayesrule.KernelNB],
    ids=["ellipses", "diagonal ellipses", "contours"],
)
def test_decision_regions_png_is_not_blank(plane, make, tmp_path):
    import matplotlib.image as mpimg

    X, y = plane
    disp = DecisionRegionsDisplay.from_estimator(make().fit(X, y), X, y, grid_resolution=40)
    disp.figure_.savefig(tmp_path / "regions.png", dpi=60)
    img = mpimg.imread(tmp_path / "regions.png")[..., :3]
    assert img.std() > 0.05 and np.unique(img.reshape(-1, 3), axis=0).shape[0] > 50


def test_density_level_of_a_gaussian_is_its_ellipse():
    g = np.linspace(-8.0, 8.0, 801)
    xx, yy = np.meshgrid(g, g)
    log_pdf = -np.log(2 * np.pi) - 0.5 * (xx**2 + yy**2)
    # the 2-sigma circle of a standard normal: radius 2, mass 1 - exp(-2)
    assert density_level(log_pdf, gaussian_mass(2.0)) == pytest.approx(
        -np.log(2 * np.pi) - 2.0, abs=0.02
    )


def test_more_features_use_the_fisher_plane_and_say_so(blobs):
    X, y = blobs
    model = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=30)
    np.testing.assert_allclose(disp.X, model.transform(X)[:, :2])
    assert "Fisher" in disp.note and "Fisher" in disp.ax_.get_title()


def _hidden_signal(seed, n_classes=3, n=90, p=6):
    """Classes that differ only in the last features: the first two show one class."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), n // n_classes)
    X = rng.normal(size=(y.size, p)) * rng.uniform(0.5, 3.0, size=p)
    X[:, -2] += 4.0 * (y == 1)
    X[:, -1] += 4.0 * (y == 2)
    return np.abs(X) + 1.0, y  # positive: the count models take it too


OTHER_MODELS = {
    "QDA": bayesrule.QuadraticDiscriminantAnalysis,
    "GaussianNB": bayesrule.GaussianNB,
    "KernelNB": bayesrule.KernelNB,
    "RDA": bayesrule.RegularizedDiscriminantAnalysis,
}


@pytest.mark.parametrize("make", OTHER_MODELS.values(), ids=OTHER_MODELS.keys())
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_model_is_drawn_in_a_fisher_plane_by_default(make, seed):
    X, y = _hidden_signal(seed)
    model = make().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=40)
    assert "Fisher" in disp.note and disp.xlabel == "first Fisher discriminant"
    # every class has a region in the plane (a slice through the first two features shows one)
    assert np.unique(disp.regions).size == 3
    # the regions are the model's predictions at the feature vectors the plane stands for
    origin, basis = disp.plane_
    c = _grid(disp)
    pred = model.predict(origin + c @ basis.T)
    np.testing.assert_array_equal(model.classes_[disp.regions.ravel()], pred)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_fisher_plane_from_the_data_is_ldas_discriminant_space(seed):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA

    X, y = _hidden_signal(seed, n_classes=3, n=150)
    model = bayesrule.KernelNB().fit(X, y)  # no Gaussian class models: the data's moments
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=20)
    assert "the data's class means" in disp.note
    reference = SkLDA(solver="eigen").fit(X, y).transform(X)[:, :2]
    for k in range(2):  # the same directions, up to sign and scale
        r = np.corrcoef(disp.X[:, k], reference[:, k])[0, 1]
        assert abs(r) > 1 - 1e-8


@pytest.mark.parametrize("seed", [0, 1])
def test_fisher_plane_from_a_models_own_moments(seed):
    X, y = _hidden_signal(seed)
    model = bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.3).fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=20)
    assert "QuadraticDiscriminantAnalysis's class means" in disp.note
    w = model.class_count_ / model.class_count_.sum()
    origin, basis = disp.plane_
    np.testing.assert_allclose(origin, w @ model.means_, atol=1e-10)
    pooled = np.einsum(
        "k,kij->ij", w, np.stack([model.class_model(c).covariance for c in (0, 1, 2)])
    )
    # the plane's point at c projects back onto c, and the axes are W-orthonormal
    S = np.linalg.solve(pooled, basis) @ np.linalg.inv(np.linalg.solve(pooled, basis).T @ basis)
    np.testing.assert_allclose((disp.X[:5] @ basis.T) @ S, disp.X[:5], atol=1e-8)
    np.testing.assert_allclose(S.T @ pooled @ S, np.eye(2), atol=1e-8)


def test_two_classes_get_the_discriminant_and_the_spread_within_classes(blobs):
    X, y = blobs
    two = y != "c"
    model = bayesrule.QuadraticDiscriminantAnalysis().fit(X[two], y[two])
    disp = DecisionRegionsDisplay.from_estimator(model, X[two], y[two], grid_resolution=30)
    assert disp.xlabel == "first Fisher discriminant"
    assert disp.ylabel == "most spread direction within the classes"
    assert np.unique(disp.regions).size == 2
    # the classes are apart along the first axis
    a, b = disp.X[y[two] == "a", 0], disp.X[y[two] == "b", 0]
    assert abs(a.mean() - b.mean()) > 2 * max(a.std(), b.std())


def test_features_projection_still_slices_through_two_features(blobs):
    X, y = blobs
    model = bayesrule.GaussianNB().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(
        model, X, y, projection="features", grid_resolution=30
    )
    assert "first two numeric of 4 features" in disp.note and disp.plane_ is None
    np.testing.assert_array_equal(disp.X, X[:, :2])


@pytest.mark.parametrize("n,small", [(10_000, 5), (5_000, 100), (2_500, 2)])
def test_thousands_of_points_are_thinned_and_every_class_kept(n, small):
    rng = np.random.default_rng(n)
    y = np.concatenate([np.zeros(n - small, dtype=int), np.ones(small, dtype=int)])
    X = rng.normal(size=(n, 2)) + 3.0 * y[:, None]
    model = bayesrule.GaussianNB().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=20)
    shown = disp.shown_
    assert 2000 <= shown.size <= 2000 + 30 and np.unique(shown).size == shown.size
    assert np.sum(y[shown] == 1) >= min(small, 30)  # a small class is never lost
    assert f"{shown.size:,} of {n:,} rows drawn" in disp.ax_.get_title()
    again = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=20)
    np.testing.assert_array_equal(again.shown_, shown)  # the same picture every time
    (points,) = [c for c in disp.ax_.collections if c.get_offsets().shape[0] == shown.size]
    assert points.get_alpha() < 0.5  # translucent


def test_few_points_are_all_drawn_opaque(plane):
    X, y = plane
    disp = DecisionRegionsDisplay.from_estimator(
        bayesrule.GaussianNB().fit(X, y), X, y, grid_resolution=20
    )
    assert sorted(disp.shown_) == list(range(len(y)))
    assert "rows drawn" not in disp.ax_.get_title()


def test_bad_projection_is_named(blobs):
    X, y = blobs
    model = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    with pytest.raises(ValueError, match="projection must be"):
        DecisionRegionsDisplay.from_estimator(model, X, y, projection="pca")


def test_confusion_matrix_rows_are_normalised():
    y_true = np.array([0, 0, 0, 0, 1, 1, 2, 2])
    y_pred = np.array([0, 0, 0, 1, 1, 1, 2, 0])
    disp = ConfusionMatrixDisplay.from_predictions(y_true, y_pred)
    np.testing.assert_allclose(disp.matrix[0], [0.75, 0.25, 0.0])
    np.testing.assert_allclose(disp.matrix.sum(axis=1), 1.0)
    assert disp.accuracy == pytest.approx(6 / 8)
    assert disp.ax_.get_xlabel() == "predicted class" and "75.00%" in disp.ax_.get_title()


def test_confusion_matrix_from_estimator(blobs):
    X, y = blobs
    model = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    disp = ConfusionMatrixDisplay.from_estimator(model, X, y)
    assert disp.accuracy == pytest.approx(model.score(X, y))
    assert disp.labels.tolist() == ["a", "b", "c"]


def test_sample_grid_shape_and_labels():
    rng = np.random.default_rng(1)
    y = np.repeat([3, 5], 50)
    X = rng.normal(size=(100, 16)) + 3.0 * (y[:, None] == 5)
    model = bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y)
    disp = SampleGridDisplay.from_estimator(model, n_per_class=6, random_state=0)
    assert disp.images.shape == (2, 6, 4, 4)
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == ["3", "5"]
    assert disp.vmin == pytest.approx(model.means_.min())


def test_sample_grid_of_a_model_without_means_uses_the_samples_range():
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 40)
    X = (rng.random((80, 16)) < np.where(y[:, None] == 1, 0.8, 0.2)).astype(float)
    model = bayesrule.BernoulliNB().fit(X, y)
    disp = SampleGridDisplay.from_estimator(model, n_per_class=5, random_state=0)
    assert (disp.vmin, disp.vmax) == (0.0, 1.0)


def test_sample_grid_needs_an_image_shape(blobs):
    X, y = blobs
    model = bayesrule.LinearDiscriminantAnalysis().fit(X[:, :3], y)
    with pytest.raises(ValueError, match="cannot show 3 features as images"):
        SampleGridDisplay.from_estimator(model)


@pytest.mark.parametrize("p,shape", [(784, (28, 28)), (64, (8, 8)), (16, None), (783, None)])
def test_image_shape_for(p, shape):
    assert image_shape_for(p) == shape


def test_missing_matplotlib_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'bayesrule\[plot\]'"):
        require_matplotlib()
