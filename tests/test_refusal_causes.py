"""Refusals that name the cause, and never advise what the call already does.

Found by an audit: a constant X told the user to set ``var_smoothing > 0``
when it was 1; DiagonalLDA's rows of small weight were blamed on the
feature and pointed at a ``ddof`` the estimator does not have; QDA's class
of small total weight got RDA's wording about ``alpha``; BernoulliNB's
enormous weight was blamed on ``alpha=1``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.datasets import load_iris

import bayesrule as br


def _refusal(fit) -> str:
    with pytest.raises(ValueError) as info:
        fit()
    return str(info.value)


@pytest.mark.parametrize("model", [br.GaussianNB, br.DiagonalLDA])
@pytest.mark.parametrize("smoothing", [1e-9, 1.0])
@pytest.mark.parametrize("p", [1, 3])
def test_constant_x_is_named_and_var_smoothing_not_advised(model, smoothing, p):
    X = np.full((30, p), 2.5)
    y = np.repeat([0, 1, 2], 10)
    msg = _refusal(lambda: model(var_smoothing=smoothing).fit(X, y))
    assert "X has no variance" in msg and "30 samples" in msg
    assert "set var_smoothing" not in msg
    assert ("the only feature" if p == 1 else f"every one of the {p} features") in msg


def test_var_smoothing_zero_is_still_advised_where_it_would_help():
    # feature 0 varies between classes, not within them: smoothing would give it a width
    X = np.c_[np.repeat([1.0, 2.0, 3.0], 10), np.linspace(0, 1, 30)]
    y = np.repeat([0, 1, 2], 10)
    assert "set var_smoothing > 0" in _refusal(lambda: br.GaussianNB(var_smoothing=0).fit(X, y))
    msg = _refusal(lambda: br.DiagonalLDA(var_smoothing=0).fit(X, y))
    assert "feature 0" in msg and "set var_smoothing > 0" in msg


def test_diagonal_lda_rows_of_small_weight_name_the_weight_and_bias():
    X, y = load_iris(return_X_y=True)
    w = np.full(150, 0.01)
    msg = _refusal(lambda: br.DiagonalLDA().fit(X, y, sample_weight=w))
    assert "total weight" in msg and "1.5 over 3 classes" in msg and "bias=True" in msg
    assert "ddof" not in msg and "var_smoothing" not in msg
    # the advice works: the biased variance fits the same rows
    assert br.DiagonalLDA(bias=True).fit(X, y, sample_weight=w).score(X, y) > 0.9


def test_qda_class_of_small_weight_names_the_weight_not_alpha():
    X, y = load_iris(return_X_y=True)
    msg = _refusal(
        lambda: br.QuadraticDiscriminantAnalysis().fit(X, y, sample_weight=np.full(150, 0.01))
    )
    assert "50 samples of total weight 0.5" in msg and "weights count as rows" in msg
    assert "alpha=1" not in msg and "at least 2 samples are needed" not in msg


def test_rda_one_row_class_keeps_the_blend_wording_only_with_a_blend():
    X, y = load_iris(return_X_y=True)
    X, y = X[:101], y[:101]  # class 2 has one row
    with pytest.warns(UserWarning):
        blend = _refusal(lambda: br.RegularizedDiscriminantAnalysis(alpha=0.5).fit(X, y))
    assert "class 2 has 1 sample" in blend and "alpha=0.5" in blend
    with pytest.warns(UserWarning):
        own = _refusal(lambda: br.RegularizedDiscriminantAnalysis(alpha=1.0).fit(X, y))
    assert "class 2 has 1 sample" in own and "blend" not in own


def test_bernoulli_weight_that_swamps_alpha_names_the_weight():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    y = [0, 0, 1, 1]
    msg = _refusal(lambda: br.BernoulliNB().fit(X, y, sample_weight=[1e20, 1, 1, 1]))
    assert "negligible against the class's total weight 1e+20" in msg
    assert not re.search(r"use alpha > 0", msg)
    # alpha=0 is still the cause where it is 0 (feature 0 set in every row of class 0)
    X0 = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])
    msg = _refusal(lambda: br.BernoulliNB(alpha=0, force_alpha=True).fit(X0, y))
    assert "use alpha > 0" in msg
