"""Predicting on device arrays: the model's prediction terms moved once, Bayes' rule there.

For the models whose log posterior is, up to a constant per row, a
quadratic form with no cross terms, ``(X - s)^2 @ A + (X - s) @ B + c``
(GaussianNB; the linear ones with ``A = 0``: LDA, DiagonalLDA, MultinomialNB,
BernoulliNB after binarising, PoissonNB), the terms are built once per model
and device from the public fitted attributes, checked against the NumPy
model on probe rows (a term that does not reproduce it to 1e-9 is never
used: that model predicts through the host), kept in a module-level cache
keyed by the estimator (never in the estimator: its ``__dict__`` and pickle
do not change), and evaluated on the device: one or two matrix products,
then a log-softmax with the row's largest value taken out. Rows whose
largest joint log likelihood is not finite, and every other model and
method, go through the host: the data are copied there once, the NumPy
model predicts (with its repairs and warnings), and the result comes back
to the input's namespace and device.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np

from ..._util.row_sample import sample_runs
from ...estimators import present_log_mass
from .arrays import is_device_array, namespace_and_device, to_device, to_host, where
from .fit import _float_dtype, checked_X
from .hold import held, host_view, release

__all__ = ["cached_terms", "device_method", "forget_home", "home_of", "set_home"]

#: the prediction methods computed on the device from the cached terms
FAST = frozenset({"predict", "predict_proba", "predict_log_proba", "decision_function"})
#: methods computed on the device only where the probe check passed for them
#: (the decision function's form; the terms' joint log likelihood being absolute)
NEEDS = {
    "decision_function": "decision",
    "predict_joint_log_proba": "joint",
    "score_samples": "joint",
    "transform": "transform",
}
_LOG_2PI = float(np.log(2.0 * np.pi))
#: largest difference from the NumPy model on the probe rows for the terms to be used
CHECK_TOL = 1e-9
#: the same for a model fitted on float32 data (float32 attributes and outputs)
CHECK_TOL_32 = 1e-4

_TERMS: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()
_HOME: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


# ------------------------------------------------------------- where it lives
def set_home(est: Any, xp: Any, dev: Any, stats: Any = None) -> None:
    """Record that ``est`` is being fitted on ``dev`` (``xp``).

    ``stats``: the statistics a new fit will install (the home is theirs);
    None for an update (``partial_fit``, ``forget``, ``statistics``), whose
    result is known only once installed: the home is then bound to the next
    statistics the model holds, or, if it holds the same ones as now
    (nothing was installed), the former home stays.
    """
    before = est.__dict__.get("stats_")
    _HOME[est] = {
        "xp": xp,
        "dev": dev,
        "bound": None if stats is None else weakref.ref(stats),
        "before": None if before is None else weakref.ref(before),
        "old": _HOME.get(est),
    }


def forget_home(est: Any) -> None:
    _HOME.pop(est, None)


def home_of(est: Any) -> tuple[Any, Any] | None:
    """The namespace and device ``est`` was fitted on; None for a host (NumPy) model.

    A home belongs to the statistics installed by the fit or update that
    recorded it; once the model holds other statistics (a NumPy fit, a
    merge, a copy or a model file) it has none and predicts anywhere.
    """
    entry = _HOME.get(est)
    current = est.__dict__.get("stats_")
    while entry is not None and current is not None:
        before = entry["before"]() if entry["before"] is not None else None
        if entry["bound"] is None and current is not before:
            entry["bound"] = weakref.ref(current)
        if entry["bound"] is not None and entry["bound"]() is current:
            _HOME[est] = entry
            return entry["xp"], entry["dev"]
        if current is before:  # nothing was installed: the home it had
            entry = entry["old"]
            continue
        break
    forget_home(est)
    return None


# ------------------------------------------------------------------ the terms
def _host_terms(est: Any) -> dict[str, Any] | None:
    """The model's prediction terms in float64 from its public fitted attributes, or None.

    ``{"B": (p, K), "c": (K,), "binarize": threshold or None}`` for the
    models linear in X (``X @ B + c``); GaussianNB's per-class diagonal
    Gaussians as ``{"theta": (K, p), "iv": (K, p), "c": (K,)}``, evaluated
    class by class as ``c_k - sum_j iv_kj (x_j - theta_kj)^2 / 2`` (never
    expanded: a variance of 1e-9 beside a mean of 10 would lose every digit).
    """
    from ...estimators import (
        BernoulliNB,
        ComplementNB,
        DiagonalLDA,
        GaussianNB,
        LinearDiscriminantAnalysis,
        MultinomialNB,
        PoissonNB,
    )
    from ...models.poisson import poisson_reference

    K = int(est.classes_.size)
    absent = np.asarray(est.stats_.weights) <= 0
    terms: dict[str, Any] = {"binarize": None}
    with np.errstate(divide="ignore", invalid="ignore"):
        log_prior = np.log(np.asarray(est.priors_, dtype=np.float64))
        if isinstance(est, (LinearDiscriminantAnalysis, DiagonalLDA)):
            coef = np.asarray(est.coef_, dtype=np.float64)
            intercept = np.asarray(est.intercept_, dtype=np.float64).ravel()
            if coef.shape[0] == 1 and K == 2:
                coef = np.vstack([np.zeros_like(coef), coef])
                intercept = np.array([0.0, intercept[0]])
            terms.update(B=coef.T.copy(), c=intercept.copy())
        elif isinstance(est, GaussianNB):
            theta = np.asarray(est.theta_, dtype=np.float64)
            var = np.asarray(est.var_, dtype=np.float64)
            c = log_prior - 0.5 * np.sum(np.log(2.0 * np.pi * var), axis=1)
            terms.update(theta=np.where(absent[:, None], 0.0, theta), iv=1.0 / var, c=c)
            terms["iv"][absent] = 0.0
        elif isinstance(est, ComplementNB):
            # scikit-learn's rule: the complement weights alone, the prior only
            # for a single class (the probe check below holds it to the NumPy model)
            B = np.asarray(est.feature_log_prob_, dtype=np.float64).T.copy()
            c = np.zeros(K) if K > 1 else np.asarray(est.class_log_prior_, dtype=np.float64)
            terms.update(B=B, c=c)
        elif isinstance(est, MultinomialNB):
            B = np.asarray(est.feature_log_prob_, dtype=np.float64).T.copy()
            terms.update(B=B, c=np.asarray(est.class_log_prior_, dtype=np.float64).copy())
        elif isinstance(est, BernoulliNB):
            flp = np.asarray(est.feature_log_prob_, dtype=np.float64)
            neg = np.log1p(-np.exp(flp))
            c = np.asarray(est.class_log_prior_, dtype=np.float64) + neg.sum(axis=1)
            terms.update(B=(flp - neg).T.copy(), c=c, binarize=est.binarize)
        elif isinstance(est, PoissonNB):
            # relative to each feature's reference rate, as the NumPy model's
            # posteriors (Poisson.relative_log_prob): x log(rate) - rate alone
            # is 1e17 for counts of 4e15, and the classes' differences drown
            # in its rounding. Posteriors and the decision function only (the
            # joint is not absolute: score_samples goes through the host).
            rate = np.asarray(est.rate_, dtype=np.float64)
            B = np.zeros(rate.shape)
            shift = np.zeros(K)
            if (~absent).any():
                ref, log_ratio = poisson_reference(rate[~absent])
                B[~absent] = log_ratio
                shift[~absent] = (rate[~absent] - ref).sum(axis=1)
            terms.update(B=B.T.copy(), c=log_prior - shift)
        elif _is_mixture(est):
            mix = _mixture_terms(est, absent, log_prior)
            if mix is None:
                return None
            terms.update(mix)
        else:
            gauss = _gaussian_terms(est, absent, log_prior)
            if gauss is None:
                return None
            terms.update(gauss)
    if "B" in terms:
        terms["B"][:, absent] = 0.0
    terms["c"] = np.where(absent, -np.inf, terms["c"])
    arrays = [v for k, v in terms.items() if k in ("B", "theta", "iv", "W", "means")]
    if "mix" in terms:
        arrays += [terms["mix"]["basis"], terms["mix"]["centre"]]
    if not all(np.all(np.isfinite(a)) for a in arrays):
        return None
    return terms


def _is_mixture(est: Any) -> bool:
    from ...models.mixture import MixtureFamily

    return isinstance(est.__dict__.get("_model"), MixtureFamily)


def _mixture_terms(est: Any, absent: Any, log_prior: Any) -> dict[str, Any] | None:
    """MixtureDiscriminantAnalysis: the projection, every component's terms, the residual.

    ``log p_k(x) = logsumexp_c [log w_c + log N(z; m_c, S_c)] + residual(x)``
    with ``z = (x - centre) @ B`` (the scale folded into ``B``); the
    components' terms are those of the device's E-step
    (:func:`~.mda._log_prob_terms`), the class's components a contiguous
    range. None when a class has no component or no data (the host then).
    """
    from .mda import _log_prob_terms

    family = est.model_family()
    comps, proj = family.components, family.projection
    K = int(est.classes_.size)
    owner = np.asarray(comps.owner)
    if absent.any() or len(family) != K:
        return None
    starts = np.searchsorted(owner, np.arange(K + 1))
    if np.any(np.diff(starts) <= 0) or not np.array_equal(owner, np.sort(owner)):
        return None
    d = int(comps.n_dims)
    comp = _log_prob_terms(np, comps, np.arange(owner.size), d, np.float64, "cpu")
    p = int(proj.basis.shape[0])
    rv = float(proj.residual_var)
    jac = float(np.log(np.asarray(proj.scale, dtype=np.float64)).sum())
    residual = d < p and rv > 0
    mix = {
        "comp": comp,
        "starts": tuple(int(v) for v in starts),
        "identity": bool(proj.identity),
        "centre": np.asarray(proj.centre, dtype=np.float64),
        "basis": np.asarray(proj.basis, dtype=np.float64)
        / np.asarray(proj.scale, dtype=np.float64)[:, None],
        "inv_scale": 1.0 / np.asarray(proj.scale, dtype=np.float64),
        "residual": residual,
        # the residual's constant: -k (log rv + log 2 pi) / 2 - log |J|
        "res_c": float((-0.5 * (p - d) * (np.log(rv) + _LOG_2PI) if residual else 0.0) - jac),
        "res_rv": float(rv if residual else 1.0),
    }
    return {"mix": mix, "c": np.asarray(log_prior, dtype=np.float64).copy()}


def _mixture_jll(xp: Any, X: Any, terms: dict[str, Any], absolute: bool) -> Any:
    """``log pi_k + log p_k(x)`` of every row and class from the mixture's terms.

    Without ``absolute``, the residual (the same for every class) is left
    out, as the NumPy model's posteriors leave it out: with a residual
    variance near zero it is ill-conditioned (``|D|^2 - |z|^2`` over a tiny
    variance), and the probe check then keeps the absolute methods on the host.
    """
    from .mda import _log_prob

    mix = terms["mix"]
    Xc = X if mix["identity"] else X - mix["centre"]
    Z = Xc if mix["identity"] else Xc @ mix["basis"]
    lp = _log_prob(xp, Z, mix["comp"])  # (n, M)
    starts = mix["starts"]
    cols = []
    for k in range(len(starts) - 1):
        seg = lp[:, starts[k] : starts[k + 1]]
        top = xp.max(seg, axis=1, keepdims=True)
        cols.append(top[:, 0] + xp.log(xp.sum(xp.exp(seg - top), axis=1)))
    out = xp.stack(cols, axis=1) + terms["c"]
    if not absolute:
        return out
    if mix["residual"]:
        D = Xc * mix["inv_scale"]
        r2 = xp.sum(D * D, axis=1) - xp.sum(Z * Z, axis=1)
        r2 = xp.maximum(r2, xp.zeros_like(r2))
        return out + (mix["res_c"] - 0.5 * r2 / mix["res_rv"])[:, None]
    return out + mix["res_c"]


def _gaussian_terms(est: Any, absent: Any, log_prior: Any) -> dict[str, Any] | None:
    """Per-class full Gaussians (QDA, RDA): each class model's mean and whitening ``W_k``.

    ``log p_k(x) = log_norm_k - |(x - mean_k) W_k|^2 / 2``; None when the
    class models are not single Gaussians (MDA's mixtures).
    """
    means: list[Any] = []
    whitenings: list[Any] = []
    c: list[float] = []
    p = int(est.n_features_in_)
    for k, label in enumerate(est.classes_):
        if absent[k]:
            means.append(np.zeros(p))
            whitenings.append(None)
            c.append(-np.inf)
            continue
        model = est.class_model(label)
        if not all(hasattr(model, a) for a in ("mean", "whitening", "log_norm")):
            return None
        means.append(np.asarray(model.mean, dtype=np.float64))
        whitenings.append(np.asarray(model.whitening, dtype=np.float64))
        c.append(float(model.log_norm) + float(log_prior[k]))
    rank = max(w.shape[1] for w in whitenings if w is not None)
    W = np.zeros((len(means), p, rank))  # ranks may differ: zero columns add nothing
    for k, w in enumerate(whitenings):
        if w is not None:
            W[k, :, : w.shape[1]] = w
    return {"means": np.stack(means), "W": W, "c": np.asarray(c)}


def _jll(xp: Any, X: Any, terms: dict[str, Any], absolute: bool = False) -> Any:
    """The joint log likelihood, up to a constant per row, from the terms (``xp`` arrays).

    ``absolute``: the whole joint log likelihood where the terms can give it
    (MDA's residual added; the other class-density terms are absolute already).
    """
    if "mix" in terms:
        return _mixture_jll(xp, X, terms, absolute)
    threshold = terms["binarize"]
    if threshold is not None:
        X = xp.astype(X > threshold, X.dtype)
    if "B" in terms:
        return X @ terms["B"] + terms["c"]
    if "W" in terms:
        means, W = terms["means"], terms["W"]
        cols = []
        for k in range(W.shape[0]):  # one product with each class's whitening
            Z = (X - means[k, :]) @ W[k, ...]
            cols.append(xp.sum(Z * Z, axis=1))
        return terms["c"] - 0.5 * xp.stack(cols, axis=1)
    theta, iv = terms["theta"], terms["iv"]
    cols = []
    for k in range(theta.shape[0]):  # K passes of a matrix-vector product
        R = X - theta[k, :]
        cols.append((R * R) @ iv[k, :])
    return terms["c"] - 0.5 * xp.stack(cols, axis=1)


def _log_softmax(xp: Any, jll: Any) -> Any:
    top = xp.max(jll, axis=1, keepdims=True)
    d = jll - top
    return d - xp.log(xp.sum(xp.exp(d), axis=1, keepdims=True))


def _probe(est: Any) -> np.ndarray[Any, Any]:
    """Rows to check the terms on: spread over each feature's training range."""
    lo, hi = est.feature_range_
    lo = np.where(np.isfinite(lo), lo, 0.0)
    hi = np.where(np.isfinite(hi), hi, 1.0)
    u = np.random.default_rng(0).random((16, lo.size))
    return lo + (hi - lo) * u


def _checked(est: Any, terms: dict[str, Any]) -> dict[str, bool]:
    """Which methods the terms reproduce on the probe rows.

    To CHECK_TOL for a model fitted on float64 data; a model fitted on
    float32 data has float32 fitted attributes (as scikit-learn's) and
    float32 outputs, and is checked to CHECK_TOL_32.
    """
    X = _probe(est)
    tol = CHECK_TOL if est.fit_schema().dtype == np.float64 else CHECK_TOL_32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_lp = np.asarray(est.predict_log_proba(X))
        # a model without a decision function (naive Bayes, as scikit-learn's) has none to check
        has_df = hasattr(est, "decision_function")
        want_df = np.asarray(est.decision_function(X)) if has_df else np.zeros(0)
        # only the class-density terms can be absolute (the linear ones drop a
        # term common to the classes); and LDA's own joint caches a term
        absolute = "B" not in terms
        want_joint = (
            np.asarray(est.predict_joint_log_proba(X), dtype=np.float64) if absolute else None
        )
    out_dtype = want_lp.dtype
    want_lp, want_df = want_lp.astype(np.float64), want_df.astype(np.float64)
    jll = _jll(np, X, terms)
    got_lp = _log_softmax(np, jll)
    got_df = jll[:, 1] - jll[:, 0] if jll.shape[1] == 2 else jll

    def close(a: Any, b: Any) -> bool:
        return bool(a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol))

    if want_joint is not None and "mix" in terms:
        jll = _jll(np, X, terms, absolute=True)
    return {
        "proba": close(got_lp, want_lp),
        "decision": has_df and close(got_df, want_df),
        "joint": want_joint is not None and close(jll, want_joint),
        "float32": out_dtype == np.float32,
    }


def _projection(est: Any) -> dict[str, Any] | None:
    """LDA's ``transform`` as ``(X - shift) @ S``, when the public attributes reproduce it.

    ``S`` is the leading columns of ``scalings_``, ``shift`` the mean ``xbar_``
    or nothing; the form that matches the NumPy model on the probe rows (to
    :data:`CHECK_TOL`) is kept, else None (the host transforms).
    """
    scalings = getattr(est, "scalings_", None)
    if scalings is None or not hasattr(type(est), "transform"):
        return None
    X = _probe(est)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.asarray(est.transform(X), dtype=np.float64)
    except (NotImplementedError, ValueError, AttributeError):  # lsqr has no transform
        return None
    S = np.asarray(scalings, dtype=np.float64)[:, : want.shape[1]]
    tol = CHECK_TOL if est.fit_schema().dtype == np.float64 else CHECK_TOL_32
    xbar = getattr(est, "xbar_", None)
    for shift in ([np.asarray(xbar, dtype=np.float64)] if xbar is not None else []) + [None]:
        got = (X - shift if shift is not None else X) @ S
        if got.shape == want.shape and np.allclose(got, want, rtol=tol, atol=tol):
            return {"shift": shift, "S": S}
    return None


def cached_terms(est: Any, xp: Any, dev: Any) -> dict[str, Any] | None:
    """The model's terms on ``dev`` (made and checked once per model, device and statistics)."""
    per_model = _TERMS.get(est)
    stats = est.__dict__.get("stats_")
    if per_model is None or per_model.get("stats") is not stats:
        src = host_view(est)  # a device model's NumPy twin
        host = _host_terms(src)
        ok = _checked(src, host) if host is not None else {}
        per_model = {"stats": stats, "host": host, "ok": ok, "projection": _projection(src)}
        _TERMS[est] = per_model
    if per_model["host"] is None or not per_model["ok"].get("proba", False):
        return None
    key = (str(getattr(xp, "__name__", xp)), str(dev))
    if key not in per_model:
        dt = _float_dtype(xp, dev)
        moved = _moved(per_model["host"], xp, dev, dt)
        classes = est.classes_
        labels = to_device(classes, xp, dev) if classes.dtype.kind in "biuf" else None
        proj = per_model["projection"]
        if proj is not None:
            proj = {
                k: (v if v is None else xp.asarray(v, dtype=dt, device=dev))
                for k, v in proj.items()
            }
        per_model[key] = {
            "terms": moved,
            "labels": labels,
            "dtype": dt,
            "projection": proj,
            "transform": proj is not None,
            **per_model["ok"],
        }
    return per_model[key]


def _moved(terms: dict[str, Any], xp: Any, dev: Any, dt: Any) -> dict[str, Any]:
    """The host terms on ``dev`` (nested dicts too); numbers, strings and tuples stay."""
    out: dict[str, Any] = {}
    for k, v in terms.items():
        if isinstance(v, dict):
            out[k] = _moved(v, xp, dev, dt)
        elif v is None or np.isscalar(v) or isinstance(v, tuple):
            out[k] = v
        else:
            out[k] = xp.asarray(np.asarray(v, dtype=np.float64), dtype=dt, device=dev)
    return out


# ------------------------------------------------------------------- methods
def _back(out: Any, xp: Any, dev: Any) -> Any:
    if isinstance(out, tuple):
        return tuple(_back(o, xp, dev) for o in out)
    return to_device(out, xp, dev)


def device_method(est: Any, method: str, X: Any, *args: Any, **kwargs: Any) -> Any:
    """``est.<method>(X)`` for a device array ``X``: the result in X's namespace, on its device."""
    from sklearn.utils.validation import check_is_fitted

    name = type(est).__name__
    check_is_fitted(est)
    if not is_device_array(X):
        return _host_input(est, method, X, *args, **kwargs)
    xp, dev = namespace_and_device(X)
    home = home_of(est)
    if home is not None and (str(home[1]) != str(dev) or home[0].__name__ != xp.__name__):
        raise ValueError(
            f"{name} was fitted on {where(*home)} and cannot {method} data on {where(xp, dev)}. "
            "Move the model first: bayesrule.move_to(model, X)."
        )
    counts = est.input_spec().positive or "binarize" in est.get_params()
    X = checked_X(est, X, xp, dev, counts=counts)
    if X.shape[1] != est.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {name} is expecting {est.n_features_in_} "
            "features as input."
        )
    # negative counts: the NumPy model's refusal, on the host
    refused = est.input_spec().positive and bool(xp.any(X < 0))
    if (method in FAST or method in NEEDS) and not args and not kwargs and not refused:
        cached = cached_terms(est, xp, dev)
        if cached is not None and cached.get(NEEDS.get(method, "proba"), False):
            out = _fast(est, method, X, xp, cached)
            if out is not None:
                return out
    return _back(getattr(host_view(est), method)(to_host(X), *args, **kwargs), xp, dev)


def _host_input(est: Any, method: str, X: Any, *args: Any, **kwargs: Any) -> Any:
    """NumPy (or array-like) ``X`` given to a model the engine watches.

    A model whose attributes live on a device refuses it, naming both (as
    scikit-learn's ``check_same_namespace``); a model that turned out to
    be a host model (its fit failed, a NumPy fit replaced it) predicts.
    """
    from ..._util.dispatch import unwatch

    home = home_of(est)
    if home is not None and held(est) is not None:
        raise ValueError(
            f"{type(est).__name__}.{method}() must use the same namespace and device as the "
            f"fit: the model lives on {where(*home)}, X is a {type(X).__name__} (host memory). "
            "Give X on that device, or make it a NumPy model: bayesrule.move_to(model, numpy)."
        )
    release(est)
    unwatch(est)
    return getattr(est, method)(X, *args, **kwargs)


#: the pre-check's margin, in training-range widths: half the NumPy check's, so
#: that every batch the NumPy check would warn about reaches it
RANGE_MARGIN = 1.0


def _warn_out_of_range(est: Any, X: Any, xp: Any) -> None:
    """The NumPy model's range warnings, for a batch predicted on the device.

    Two reductions on the device (each feature's least and largest value of
    the same sample of rows the NumPy check reads: runs of consecutive rows,
    :mod:`bayesrule._util.row_sample`) against a fence half as far out as
    the NumPy check's; only when a feature crosses it does the sample (at
    most 2 047 rows) go to the host, where the NumPy model's own check
    decides and words the warning.
    """
    n = int(X.shape[0])
    if n == 0:
        return
    count, rows, spacing = sample_runs(n)
    sample = (
        X
        if count == 1
        else xp.concat([X[r * spacing : r * spacing + rows, :] for r in range(count)], axis=0)
    )
    lo, hi = est.feature_range_
    width = hi - lo
    judged = np.isfinite(width) & (width > 0)
    if not judged.any():
        return
    seen_lo = to_host(xp.min(sample, axis=0)).astype(np.float64)
    seen_hi = to_host(xp.max(sample, axis=0)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        cross = (seen_lo < lo - RANGE_MARGIN * width) | (seen_hi > hi + RANGE_MARGIN * width)
    if np.any(judged & cross):
        host_view(est).predict(to_host(sample))  # for its warnings


def _fast(est: Any, method: str, X: Any, xp: Any, cached: dict[str, Any]) -> Any:
    """The method from the device terms; None when a row needs the host's repairs."""
    if method == "transform":
        proj = cached["projection"]
        Xc = xp.astype(X, cached["dtype"])
        out = (Xc - proj["shift"] if proj["shift"] is not None else Xc) @ proj["S"]
        if not bool(xp.all(xp.isfinite(out))):
            return None
        _warn_out_of_range(est, X, xp)
        # NumPy's dtype: that of X (the probe's was float64) with the attributes'
        x32 = np.float32 if X.dtype == xp.float32 else np.float64
        src = host_view(est)
        attrs = [np.asarray(getattr(src, a, np.float32(0))).dtype for a in ("xbar_", "scalings_")]
        return xp.astype(out, xp.float32) if np.result_type(x32, *attrs) == np.float32 else out
    if cached["terms"]["binarize"] is not None and not bool(xp.all(xp.isfinite(X))):
        return None  # binarising would hide a NaN: the NumPy model's own handling
    absolute = method in ("score_samples", "predict_joint_log_proba")
    jll = _jll(xp, xp.astype(X, cached["dtype"]), cached["terms"], absolute)
    top = xp.max(jll, axis=1)
    if not bool(xp.all(xp.isfinite(top))):
        return None
    _warn_out_of_range(est, X, xp)
    if method == "predict":
        idx = xp.argmax(jll, axis=1)
        labels = cached["labels"]
        if labels is None:  # string labels: a NumPy array, as they cannot live on a device
            return est.classes_[to_host(idx)]
        return xp.take(labels, idx)
    if method == "score_samples":
        out = top + xp.log(xp.sum(xp.exp(jll - top[:, None]), axis=1))
        mass = present_log_mass(est)  # priors of classes without data left out, as in NumPy
        if mass != 0.0:
            out = out - mass
    elif method == "decision_function":
        out = jll[:, 1] - jll[:, 0] if jll.shape[1] == 2 else jll
    elif method == "predict_joint_log_proba":
        out = jll
    else:
        out = _log_softmax(xp, jll)
        if method == "predict_proba":
            out = xp.exp(out)
    if cached["float32"]:  # the outputs of a model fitted on float32 data, as in NumPy
        out = xp.astype(out, xp.float32)
    return out
