"""Accuracy on real data: MNIST (the lecture notes' figures) and wine."""

from __future__ import annotations

import numpy as np
import pytest

from bayesrule import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from bayesrule.datasets import wine_split


def test_lda_mnist_accuracy(mnist):
    Xtr, ytr, Xte, yte = mnist
    acc = (LinearDiscriminantAnalysis().fit(Xtr, ytr).predict(Xte) == yte).mean()
    assert acc >= 0.873  # lecture notes' LDA: 0.83; scikit-learn's svd solver: 0.873


def test_qda_mnist_accuracy(mnist):
    Xtr, ytr, Xte, yte = mnist
    acc = (QuadraticDiscriminantAnalysis(reg_param=0.05).fit(Xtr, ytr).predict(Xte) == yte).mean()
    assert acc >= 0.957


def test_lda_mnist_streamed_in_chunks_equals_fit(mnist):
    Xtr, ytr, Xte, yte = mnist
    full = LinearDiscriminantAnalysis().fit(Xtr, ytr)
    streamed = LinearDiscriminantAnalysis()
    for idx in np.array_split(np.arange(len(ytr)), 6):
        streamed.partial_fit(Xtr[idx], ytr[idx], classes=np.arange(10))
    assert streamed.stats_.allclose(full.stats_, rtol=1e-10)
    np.testing.assert_array_equal(streamed.predict(Xte), full.predict(Xte))


def test_lda_wine_median_errors():
    errors = []
    for seed in range(25):
        Xtr, ytr, Xte, yte = wine_split(random_state=seed)
        errors.append(int((LinearDiscriminantAnalysis().fit(Xtr, ytr).predict(Xte) != yte).sum()))
    assert np.median(errors) <= 1, errors


@pytest.mark.parametrize("reg_param", [0.05])
def test_qda_mnist_samples_look_like_their_class(mnist, reg_param):
    """Generated digits are classified as the digit they were drawn from, mostly."""
    Xtr, ytr, _, _ = mnist
    lda = LinearDiscriminantAnalysis().fit(Xtr, ytr)
    Xs, ys = lda.sample(500, random_state=0)
    assert Xs.shape == (500, 784)
    assert (lda.predict(Xs) == ys).mean() > 0.9
