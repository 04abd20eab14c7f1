"""The plane a decision-regions picture is drawn in: Fisher directions, reference rows."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._base import (
    _gaussian_moments,
)


def _thinned(y: NDArray[Any], max_points: int, per_class: int = 30) -> NDArray[np.intp]:
    """Indices of at most ``max_points`` rows (more only to keep ``per_class`` of each class).

    A seeded random sample, so that the picture is the same every time; a
    class with few rows keeps up to ``per_class`` of them. The indices come
    in random order (points drawn later cover earlier ones).
    """
    rng = np.random.default_rng(0)
    n = y.size
    if n <= max_points:
        return np.asarray(rng.permutation(n), dtype=np.intp)
    chosen = np.zeros(n, dtype=bool)
    chosen[rng.choice(n, size=max_points, replace=False)] = True
    _, inverse = np.unique(y, return_inverse=True)
    for k in range(int(inverse.max()) + 1):
        rows = np.flatnonzero(inverse == k)
        short = min(per_class, rows.size) - int(chosen[rows].sum())
        if short > 0:
            chosen[rng.choice(rows[~chosen[rows]], size=short, replace=False)] = True
    return np.asarray(rng.permutation(np.flatnonzero(chosen)), dtype=np.intp)


def _as_frame(X: Any, estimator: Any, feature_names: list[str] | None) -> Any:
    """``X`` as a DataFrame named by the model's features (kept as it is when it is one)."""
    import pandas as pd

    if hasattr(X, "columns") and hasattr(X, "iloc"):
        return X.reset_index(drop=True)
    Xa = np.asarray(X, dtype=float)
    if Xa.ndim != 2:
        raise ValueError(f"X must be 2-D; got shape {Xa.shape}.")
    names = feature_names or [str(n) for n in getattr(estimator, "feature_names_in_", [])]
    if len(names) != Xa.shape[1]:
        names = [f"feature {j + 1}" for j in range(Xa.shape[1])]
    return pd.DataFrame(Xa, columns=names)


def _is_number(series: Any) -> bool:
    return bool(series.dtype.kind in "biuf")


def _numeric(frame: Any, what: str) -> NDArray[Any]:
    bad = [str(c) for c in frame.columns if not _is_number(frame[c])]
    if bad:
        raise ValueError(
            f"{what} needs numeric features; {', '.join(repr(c) for c in bad[:5])} are not: "
            "choose two features instead."
        )
    return np.asarray(frame.to_numpy(dtype=float))


def _frame_like(values: NDArray[Any], frame: Any) -> Any:
    import pandas as pd

    return pd.DataFrame(values, columns=frame.columns)


def _column_index(key: Any, names: list[str]) -> int:
    if isinstance(key, str) and key in names:
        return names.index(key)
    if isinstance(key, (int, np.integer)) and -len(names) <= int(key) < len(names):
        return int(key) % len(names)
    raise ValueError(f"no feature {str(key)!r}; the model's features are {', '.join(names[:20])}.")


def _fisher_directions(
    estimator: Any,
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]] | None:
    """``(xbar_, scalings_, covariance_)`` of a model with at least 2 Fisher directions."""
    S = getattr(estimator, "scalings_", None)
    xbar = getattr(estimator, "xbar_", None)
    cov = getattr(estimator, "covariance_", None)
    if S is None or xbar is None or cov is None or not hasattr(estimator, "transform"):
        return None
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or S.shape[1] < 2:
        return None
    return np.asarray(xbar, dtype=float), S, np.asarray(cov, dtype=float)


def _class_moments(
    estimator: Any,
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]] | None:
    """Class weights, means and the pooled covariance of a model's Gaussian class models.

    The pooled covariance is the class covariances (the model's own:
    regularised, diagonal for naive Bayes) averaged with the training class
    weights. None when a class model has no mean and covariance.
    """
    counts = np.asarray(getattr(estimator, "class_count_", []), dtype=float)
    present = np.flatnonzero(counts > 0)
    means, covs = [], []
    for k in present:
        moments = _gaussian_moments(estimator.class_model(estimator.classes_[k]))
        if moments is None:
            return None
        means.append(moments[0])
        covs.append(moments[1])
    if len(means) < 2:
        return None
    w = counts[present]
    pooled = np.einsum("k,kij->ij", w / w.sum(), np.stack(covs))
    return w, np.vstack(means), pooled


def _data_moments(
    X: NDArray[Any], y: NDArray[Any]
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """Class weights, means and the pooled within-class covariance of the rows drawn."""
    ok = np.all(np.isfinite(X), axis=1)
    X, y = X[ok], y[ok]
    classes, inverse = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"the Fisher plane needs at least 2 classes among the rows drawn; got {classes.size}."
        )
    w = np.bincount(inverse).astype(float)
    onehot = np.zeros((y.size, classes.size))
    onehot[np.arange(y.size), inverse] = 1.0
    means = (onehot.T @ X) / w[:, None]
    resid = X - means[inverse]
    pooled = resid.T @ resid / max(y.size - classes.size, 1)
    return w, means, pooled


def _fisher_plane(
    weights: NDArray[Any], means: NDArray[Any], pooled: NDArray[Any]
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], bool]:
    """``(centre, directions, pooled covariance, spread)`` of the Fisher plane of class moments.

    The directions ``S`` solve ``B s = λ W s`` (``B``: the weighted scatter
    of the class means about their weighted centre, ``W``: the pooled
    covariance) with ``Sᵀ W S = I``, largest ``λ`` first; features are
    scaled to unit within-class variance first, so units do not matter.
    With two classes there is one discriminant: the second axis is then the
    direction in which the classes spread most, ``W``-orthogonal to it
    (``spread`` is then True).
    """
    from scipy.linalg import eigh

    w = weights / weights.sum()
    centre = w @ means
    D = means - centre
    B = (D * w[:, None]).T @ D
    scale = np.sqrt(np.clip(np.diag(pooled), 0.0, None))
    scale[~(scale > 0)] = 1.0
    outer = np.outer(scale, scale)
    Ws = pooled / outer + 1e-10 * np.eye(pooled.shape[0])  # a constant feature is no singularity
    Bs = B / outer
    vals, vecs = eigh(Bs, Ws)
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    rank = int(np.sum(vals > 1e-10 * max(float(vals[0]), 1e-300)))
    if rank == 0:
        raise ValueError("no Fisher plane: the class means coincide; choose two features instead.")
    spread = rank < 2
    if spread:
        first = vecs[:, :1]
        # the within-class principal direction, made W-orthogonal to the discriminant
        _, pcs = np.linalg.eigh(Ws)
        u = pcs[:, -1:] - first @ (first.T @ Ws @ pcs[:, -1:])
        if float(np.linalg.norm(u)) < 1e-12:
            u = pcs[:, -2:-1] - first @ (first.T @ Ws @ pcs[:, -2:-1])
        u /= np.sqrt((u.T @ Ws @ u).item())
        vecs = np.hstack([first, u])
    else:
        vecs = vecs[:, :rank]
    return centre, vecs / scale[:, None], pooled, spread


def _reference(estimator: Any, frame: Any) -> tuple[Any, str]:
    """The point the other features are held at: the training means, and how they were found.

    The class means of the model's Gaussian class models weighted by the
    training class weights, when it has them; else the means (numbers) and
    most frequent values (other columns) of the data drawn.
    """
    counts = np.asarray(getattr(estimator, "class_count_", []), dtype=float)
    means: list[NDArray[Any]] = []
    for k in np.flatnonzero(counts > 0):
        mean = getattr(estimator.class_model(estimator.classes_[k]), "mean", None)
        if mean is None:
            means = []
            break
        means.append(np.asarray(mean, dtype=float).reshape(-1))
    row = frame.iloc[:1].copy().reset_index(drop=True)
    if means and all(m.size == frame.shape[1] for m in means):
        w = counts[counts > 0]
        centre = (w[:, None] * np.vstack(means)).sum(axis=0) / w.sum()
        for j, c in enumerate(frame.columns):
            row[c] = centre[j]
        return row, "training means"
    kinds = getattr(estimator, "kinds_", None)
    if kinds is None or len(kinds) != frame.shape[1]:
        kinds = ["gaussian" if frame[c].dtype.kind == "f" else "other" for c in frame.columns]
    for c, kind in zip(frame.columns, kinds, strict=True):
        col = frame[c]
        if kind in ("gaussian", "kernel"):
            row[c] = float(np.nanmean(col.to_numpy(dtype=float)))
        else:  # counts, categories, booleans: a value the column can take
            mode = col.mode(dropna=True)
            row[c] = mode.iloc[0] if len(mode) else col.iloc[0]
    return row, "means in the data drawn (most frequent values for counts and categories)"


@contextlib.contextmanager
def _quiet_names() -> Iterator[None]:
    """The grid is built with the model's column names; quiet the check of bare arrays."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        warnings.filterwarnings("ignore", message="X has feature names")
        yield
