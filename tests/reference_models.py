"""Independent computations of the registered estimators' probabilities, for the oracles.

``reference_proba(short, params, X, y, Xq)`` is what the model ``short``
fitted with ``params`` on ``(X, y)`` should give as ``predict_proba(Xq)``,
computed without bayesrule: by scikit-learn's namesake where the models
coincide at those parameters, else by a NumPy/SciPy transcription of the
documented model and Bayes' rule (class means, the unbiased class and
pooled covariances, ``scipy.stats`` densities, posteriors by ``logsumexp``).
``has_reference(short, params)`` says whether there is one; models and
parameters without one (KernelNB, MDA, RDA-CV, any non-default parameter
not handled below) return ``None`` and their items are not oracles.

It is not a test module (no ``test_`` prefix): the probe suites import it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sklearn.naive_bayes as sknb
from scipy import stats
from scipy.special import logsumexp

#: scikit-learn's namesakes: equal to bayesrule's at the same parameters (naive Bayes)
SKLEARN_NB = {
    "gnb": sknb.GaussianNB,
    "bnb": sknb.BernoulliNB,
    "mnb": sknb.MultinomialNB,
    "cnb": sknb.ComplementNB,
    "catnb": sknb.CategoricalNB,
}
#: transcriptions, and the parameters each transcribes (the others at their defaults)
TRANSCRIBED = {
    "lda": (),
    "qda": ("reg_param",),
    "rda": ("alpha", "gamma", "ridge"),
    "dlda": (),
    "pnb": (),
    "mixed": ("columns",),
}


#: models whose features are independent given the class: a missing cell (NaN) drops
#: its term, and each feature is fitted on the rows where it is observed
FEATUREWISE = ("gnb", "bnb", "catnb", "pnb", "dlda", "mixed")


def has_reference(short: str, params: dict | None = None) -> bool:
    """Whether ``reference_proba`` computes model ``short`` at ``params``: scikit-learn's
    namesake at parameters it has (not ComplementNB's ``add_prior``), a transcription
    at the defaults."""
    if short in SKLEARN_NB:
        return set(params or {}) <= set(SKLEARN_NB[short]().get_params())
    if short == "mixed":
        # the transcription is MixedNB with every column declared Gaussian: undeclared,
        # a numeric column's kind is chosen from the data (test_mixed_choice.py)
        columns = (params or {}).get("columns")
        return (
            set(params or {}) <= {"columns"}
            and isinstance(columns, list | tuple)
            and all(kind == "gaussian" for kind in columns)
        )
    return short in TRANSCRIBED and set(params or {}) <= set(TRANSCRIBED[short])


def _classes(y: Any) -> tuple[np.ndarray, np.ndarray]:
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    return classes, codes


def _posterior(joint: np.ndarray) -> np.ndarray:
    return np.exp(joint - logsumexp(joint, axis=1, keepdims=True))


def _moments(X: np.ndarray, codes: np.ndarray, k: int):
    counts = np.bincount(codes, minlength=k).astype(float)
    means = np.stack([X[codes == c].mean(axis=0) for c in range(k)])
    resid = X - means[codes]
    return counts, means, resid


def _gaussian_transcription(short: str, X: np.ndarray, codes: np.ndarray, k: int, Xq, params):
    """LDA, QDA (``reg_param``: ``(1 - r) S_k + r I``) and Friedman's RDA
    (``alpha S_k + (1 - alpha) S_pooled``, then ``(1 - gamma) S + gamma tr(D^-1 S)/p D``,
    then ``(1 - ridge) S + ridge D``, ``D`` the diagonal of the pooled covariance: the
    default ``target='pooled'``, where the ridge's ``t I`` is ``D``), with the unbiased
    class and pooled covariances."""
    n, p = X.shape
    counts, means, resid = _moments(X, codes, k)
    pooled = resid.T @ resid / (n - k)
    own = [resid[codes == c].T @ resid[codes == c] / (counts[c] - 1) for c in range(k)]
    if short == "lda":
        covs = [pooled] * k
    elif short == "qda":
        r = params.get("reg_param", 0.0)
        covs = [(1 - r) * S + r * np.eye(p) for S in own]
    else:
        # RDA's default target='pooled': gamma shrinks towards the scaled identity
        # of the features standardised by their pooled variances, diag(pooled) back
        a, g = params.get("alpha", 0.9), params.get("gamma", 0.0)
        blend = [a * own[c] + (1 - a) * pooled for c in range(k)]
        unit = np.diag(pooled)
        covs = [(1 - g) * S + g * np.sum(np.diag(S) / unit) / p * np.diag(unit) for S in blend]
        # the ridge towards t I in the pooled standardised coordinates, where every
        # feature's pooled variance is t: diag(pooled) in the features' units
        rho = params.get("ridge", 0.1)
        covs = [(1 - rho) * S + rho * np.diag(unit) for S in covs]
    joint = np.stack([_mvn_logpdf(Xq, means[c], covs[c]) for c in range(k)], axis=1)
    return joint + np.log(counts / n)


def _mvn_logpdf(Xq: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """The normal log density by the eigendecomposition (SciPy's refuses ill-conditioned
    covariances that the models accept)."""
    w, V = np.linalg.eigh(cov)
    z = (Xq - mean) @ V
    return -0.5 * (len(mean) * np.log(2 * np.pi) + np.log(w).sum() + (z**2 / w).sum(axis=1))


def _diagonal_transcription(X, codes, k, Xq, pooled: bool):
    """Diagonal Gaussian classes: pooled unbiased variances (diagonal LDA) or each class's
    maximum-likelihood ones (MixedNB's Gaussian columns), each raised by 1e-9 of its
    feature's variance in all the data."""
    n = X.shape[0]
    counts, means, resid = _moments(X, codes, k)
    if pooled:
        var = np.broadcast_to((resid**2).sum(axis=0) / (n - k), means.shape)
    else:
        var = np.stack([(resid[codes == c] ** 2).mean(axis=0) for c in range(k)])
    var = var + 1e-9 * X.var(axis=0)
    joint = np.stack(
        [stats.norm.logpdf(Xq, means[c], np.sqrt(var[c])).sum(axis=1) for c in range(k)], axis=1
    )
    return joint + np.log(counts / n)


def _poisson_transcription(X, codes, k, Xq):
    """Poisson naive Bayes, rate (S + 1) / n_k; the log x! term is common to the classes."""
    counts = np.bincount(codes, minlength=k).astype(float)
    sums = np.stack([X[codes == c].sum(axis=0) for c in range(k)])
    rate = (sums + 1.0) / counts[:, None]
    joint = Xq @ np.log(rate).T - rate.sum(axis=1)
    return joint + np.log(counts / len(codes))


def reference_proba(
    short: str, params: dict | None, X: Any, y: Any, Xq: Any, priors: Any = None
) -> np.ndarray | None:
    """The probabilities model ``short`` with ``params`` should give, or ``None``.

    ``priors``, in the order of the sorted classes, replaces the class frequencies.
    """
    params = dict(params or {})
    if not has_reference(short, params):
        return None
    X = np.asarray(X, dtype=float)
    Xq = np.asarray(Xq, dtype=float)
    if np.isnan(X).any():
        return _featurewise(short, params, X, y, Xq, priors)
    if short in SKLEARN_NB:
        if priors is not None:
            params["priors" if short == "gnb" else "class_prior"] = np.asarray(priors, float)
        return SKLEARN_NB[short](**params).fit(X, np.asarray(y)).predict_proba(Xq)
    classes, codes = _classes(y)
    k = len(classes)
    if short in ("lda", "qda", "rda"):
        joint = _gaussian_transcription(short, X, codes, k, Xq, params)
    elif short in ("dlda", "mixed"):  # MixedNB with every column declared Gaussian
        joint = _diagonal_transcription(X, codes, k, Xq, pooled=short == "dlda")
    else:
        joint = _poisson_transcription(X, codes, k, Xq)
    if priors is not None:  # the transcriptions add the log class frequencies
        counts = np.bincount(codes, minlength=k) / len(codes)
        joint = joint - np.log(counts) + np.log(np.asarray(priors, float))
    return _posterior(joint)


def _featurewise(short: str, params: dict, X: np.ndarray, y: Any, Xq: np.ndarray, priors: Any):
    """Naive Bayes with missing cells, one feature at a time (docs/naive_bayes.md):
    ``log prior_k + sum_j log p_j(x_j | k)``, each ``p_j`` the reference fitted on
    feature ``j``'s observed rows alone (its posterior less its own log prior)."""
    if short not in FEATUREWISE:
        raise ValueError(f"no reference for {short} with missing values")
    classes, codes = _classes(y)
    k = len(classes)
    counts = np.bincount(codes, minlength=k)
    prior = counts / counts.sum() if priors is None else np.asarray(priors, float)
    joint = np.tile(np.log(prior), (len(Xq), 1))
    for j in range(X.shape[1]):
        seen = ~np.isnan(X[:, j])
        own = np.bincount(codes[seen], minlength=k)
        if np.any(own == 0):
            raise ValueError(f"feature {j} is missing in every row of a class")
        post = reference_proba(short, params, X[seen][:, [j]], codes[seen], Xq[:, [j]])
        joint += np.log(post) - np.log(own / own.sum())
    return _posterior(joint)
