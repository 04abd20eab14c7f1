"""LDA's model terms beyond the tied Gaussian: the reduced-rank model and scikit-learn's decision form.

Functions of a :class:`~bayesrule.models.tied.TiedGaussian` that
:class:`~.lda.LinearDiscriminantAnalysis` derives its fitted attributes with.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..models.tied import TiedGaussian
from ._da import _F

__all__ = ["decision_form", "float64_terms", "reduced_rank_model"]


def reduced_rank_model(
    model: TiedGaussian, Mw: _F, Mbar: _F, Vt: _F, s: _F, d: int
) -> TiedGaussian:
    """The Gaussian model whose class means lie in the first ``d`` Fisher directions.

    In the whitened coordinates of ``model`` (within-class covariance ``I``),
    with ``Mw`` the class means, ``Mbar`` their prior-weighted mean and the
    rows of ``Vt`` the Fisher directions (``s`` the between-class standard
    deviations along them): each class mean keeps its component along the
    first ``d`` directions and takes ``Mbar``'s along the others, and the
    between-class variance ``s_j^2`` of a discarded direction is added to the
    covariance there (``I + Vx' diag(s_x^2) Vx``): the maximum-likelihood
    model of Gaussian classes with a shared covariance and class means
    confined to a ``d``-dimensional affine subspace (Campbell 1984; Hastie
    and Tibshirani 1996). The discarded directions are the same for every
    class, so Bayes' rule sees only the first ``d``: MASS's
    ``predict(lda, dimen=d)``.
    """
    W = model.whitening
    Vd, Vx, sx = Vt[:d], Vt[d:], s[d:]
    M_red = Mbar + ((Mw - Mbar) @ Vd.T) @ Vd
    A = model.covariance @ W  # W' A = I on the range: back from whitened coordinates
    AVx = A @ Vx.T
    cov = model.covariance + (AVx * sx**2) @ AVx.T
    cov = 0.5 * (cov + cov.T)
    # a whitening of the new covariance: shrink the discarded directions by 1/sqrt(1 + s^2)
    whiten = W - ((W @ Vx.T) * (1.0 - 1.0 / np.sqrt(1.0 + sx**2))) @ Vx
    means = model.centre + M_red @ A.T
    return TiedGaussian(means, cov, whiten, model.centre, model.shrinkage)


def decision_form(model: Any, origin: _F) -> tuple[_F, _F]:
    """``(coef, const)`` of scikit-learn's decision ``x' coef_k + const_k (+ log pi_k)``.

    The log posterior up to a term of the row, taken about ``origin``:
    ``coef_k = Sigma^+ (mu_k - o)`` and ``const_k = -(mu_k - o)' Sigma^+ (mu_k - o) / 2
    - o' coef_k``. scikit-learn's 'lsqr' and 'eigen' solvers take it about the
    origin (``coef_k = Sigma^+ mu_k``); its default 'svd' solver about ``xbar_``,
    the prior-weighted mean of the class means, which keeps only the directions
    between the classes. The two differ by a term of the row for three classes
    or more (the same two-class ``coef_``); meta-estimators that calibrate
    ``decision_function`` class by class (``CalibratedClassifierCV``) read the
    second far better. Assembled from the model's terms about its centre ``c``
    (``(mu_k - o) W = whitened_means_k - (o - c) W``), where nothing cancels.
    """
    W = model.whitening
    Wm = model.whitened_means - (origin - model.centre) @ W
    coef = Wm @ W.T
    const = -0.5 * np.einsum("kr,kr->k", Wm, Wm) - coef @ origin
    return coef, const


#: :func:`decision_form`'s float64 terms of a fitted model whose attributes are float32,
#: by model (each fit or update makes a new one), with the origin they were taken about
_FLOAT64_TERMS: weakref.WeakKeyDictionary[Any, tuple[_F, _F, _F]] = weakref.WeakKeyDictionary()


def float64_terms(model: Any, origin: _F) -> tuple[_F, _F]:
    """``decision_form(model, origin)``, computed once per model and origin (a p x p
    product per class: 9 ms of a 10 ms ``decision_function`` of one row, 2,000
    features and 100 classes, when it was computed again at every call)."""
    held = _FLOAT64_TERMS.get(model)
    if held is not None and np.array_equal(held[0], origin):
        return held[1], held[2]
    coef, const = decision_form(model, origin)
    _FLOAT64_TERMS[model] = (np.array(origin, copy=True), coef, const)
    return coef, const
