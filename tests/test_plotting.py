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


def test_more_features_use_the_fisher_plane_and_say_so(blobs):
    X, y = blobs
    model = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    disp = DecisionRegionsDisplay.from_estimator(model, X, y, grid_resolution=30)
    np.testing.assert_allclose(disp.X, model.transform(X)[:, :2])
    assert "Fisher" in disp.note and "Fisher" in disp.ax_.get_title()


def test_two_classes_fall_back_to_the_first_two_features(blobs):
    X, y = blobs
    two = y != "c"
    model = bayesrule.QuadraticDiscriminantAnalysis().fit(X[two], y[two])
    disp = DecisionRegionsDisplay.from_estimator(model, X[two], y[two], grid_resolution=30)
    assert "first two of 4 features" in disp.note
    np.testing.assert_array_equal(disp.X, X[two][:, :2])


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
