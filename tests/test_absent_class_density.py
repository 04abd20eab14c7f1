"""A prior given to a class declared but never seen: the density and the draws leave it out.

``partial_fit(..., classes=[0, 1, 2])`` on rows of classes 0 and 1 only, with
priors that give class 2 mass: class 2 has no model, so its prior is left out
of ``score_samples`` (the priors of the classes with data renormalised, as
the posteriors are) and of the labels ``sample`` draws. The model must then
score and draw as the same model fitted on the two classes with those
renormalised priors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.integrate import trapezoid
from sklearn.datasets import load_iris

import bayesrule as br

COUNT = {"BernoulliNB", "CategoricalNB", "ComplementNB", "MultinomialNB"}

MODELS = [
    "GaussianNB",
    "DiagonalLDA",
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysis",
    "KernelNB",
    "MixedNB",
    "PoissonNB",
    "BernoulliNB",
    "CategoricalNB",
    "MultinomialNB",
]


def _data(name: str) -> tuple[np.ndarray, np.ndarray]:
    X, y = load_iris(return_X_y=True)
    if name in COUNT or name == "PoissonNB":
        X = np.floor(X)
    return X, y


def _model(name: str, priors: list[float]) -> object:
    key = "class_prior" if name in COUNT else "priors"
    return getattr(br, name)(**{key: priors})


def _declared(name: str, priors: list[float]) -> tuple[object, np.ndarray, np.ndarray]:
    """The model of ``name`` fitted on classes 0 and 1 with classes 0, 1, 2 declared; its data."""
    X, y = _data(name)
    seen = y < 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _model(name, priors)
        model.partial_fit(X[seen], y[seen], classes=[0, 1, 2])
    return model, X, y


@pytest.mark.parametrize("name", MODELS)
def test_a_prior_on_a_class_without_data_is_left_out_of_the_density(name):
    declared, X, y = _declared(name, [0.2, 0.4, 0.4])
    seen = y < 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the same model on the two classes, their priors renormalised: 0.2 / 0.6, 0.4 / 0.6
        alone = _model(name, [1 / 3, 2 / 3]).fit(X[seen], y[seen])
    got = declared.score_samples(X)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, alone.score_samples(X), rtol=1e-10, atol=1e-10)
    # the posteriors were already those of the classes with data
    P = declared.predict_proba(X)
    np.testing.assert_allclose(P[:, :2], alone.predict_proba(X), rtol=1e-10, atol=1e-12)
    assert np.all(P[:, 2] == 0)


@pytest.mark.parametrize("name", ["GaussianNB", "LinearDiscriminantAnalysis", "MixedNB"])
def test_the_density_left_integrates_to_one(name):
    X, y = load_iris(return_X_y=True)
    x = X[:, [2]]
    model = _model(name, [0.3, 0.3, 0.4])
    model.partial_fit(x[y < 2], y[y < 2], classes=[0, 1, 2])
    grid = np.linspace(-5.0, 15.0, 40001)[:, None]
    mass = trapezoid(np.exp(model.score_samples(grid)), grid[:, 0])
    assert mass == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("name", ["GaussianNB", "QuadraticDiscriminantAnalysis", "MixedNB"])
def test_labels_are_drawn_from_the_classes_with_data(name):
    X, y = load_iris(return_X_y=True)
    model = _model(name, [0.2, 0.4, 0.4])
    model.partial_fit(X[y < 2], y[y < 2], classes=[0, 1, 2])
    _, labels = model.sample(6000, random_state=0)
    counts = np.bincount(np.asarray(labels, dtype=int), minlength=3)
    assert counts[2] == 0
    # 1/3 and 2/3 of the draws, within five standard deviations
    assert abs(counts[0] / 6000 - 1 / 3) < 5 * np.sqrt((1 / 3) * (2 / 3) / 6000)
    # a draw asked of the class without data is still refused, naming it
    with pytest.raises(ValueError, match="class 2: no data"):
        model.sample(3, y=2)


@pytest.mark.parametrize("name", MODELS)
def test_all_prior_mass_on_classes_without_data_is_refused_naming_them(name):
    # the posteriors over the classes with data would be 0 / 0: no answer is given
    model, X, _ = _declared(name, [0.0, 0.0, 1.0])
    methods = ["predict", "predict_proba", "predict_log_proba", "score_samples"]
    if hasattr(model, "decision_function"):
        methods.append("decision_function")
    for method in methods:
        with pytest.raises(ValueError, match=r"every class with data \(0, 1\) has prior 0.*\(2\)"):
            getattr(model, method)(X[:3])


def test_complement_nb_whose_scores_carry_no_priors_still_predicts():
    X, y = _data("ComplementNB")
    model = br.ComplementNB(class_prior=[0.0, 0.0, 1.0])
    model.partial_fit(X[y < 2], y[y < 2], classes=[0, 1, 2])
    P = model.predict_proba(X)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)
