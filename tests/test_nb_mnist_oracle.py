"""Naive Bayes on MNIST against scikit-learn fitted in the same test.

Replaces ``test_mnist_accuracies`` of ``test_naive_bayes.py``, which pinned
scikit-learn's scores as copied from a run (0.556, 0.836, 0.843): here
scikit-learn's models are fitted on the same rows and the two must agree.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn import naive_bayes as sknb

import bayesrule as br

PAIRS = {
    "GaussianNB": (br.GaussianNB, sknb.GaussianNB, {}),
    "MultinomialNB": (br.MultinomialNB, sknb.MultinomialNB, {}),
    "BernoulliNB": (br.BernoulliNB, sknb.BernoulliNB, {"binarize": 0.5}),
}


@pytest.mark.mnist
@pytest.mark.oracle
@pytest.mark.parametrize("name", list(PAIRS))
def test_mnist_naive_bayes_is_sklearns(mnist, name):
    Xtr, ytr, Xte, yte = mnist
    ours_cls, theirs_cls, params = PAIRS[name]
    ours = ours_cls(**params).fit(Xtr, ytr)
    theirs = theirs_cls(**params).fit(Xtr, ytr)
    a, b = ours.predict_proba(Xte), theirs.predict_proba(Xte)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    agree = (ours.predict(Xte) == theirs.predict(Xte)).mean()
    assert agree >= 0.999, agree  # only rows tied to rounding may differ
    assert abs(ours.score(Xte, yte) - theirs.score(Xte, yte)) <= 1e-3


@pytest.mark.mnist
def test_mnist_kernel_nb_with_a_bandwidth_floor_fits_without_warnings(mnist):
    Xtr, ytr, Xte, yte = mnist
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernel = br.KernelNB(bandwidth_floor=3.0).fit(Xtr, ytr).score(Xte, yte)
    assert kernel > 0.75
