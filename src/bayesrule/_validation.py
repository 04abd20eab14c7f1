"""Input checks shared by every estimator.

Each check raises a ``ValueError`` whose message names the argument, says what
was expected and what was given, and (for bad entries) the first offending row,
so that a user never has to read a traceback from inside NumPy.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "check_finite",
    "check_lengths",
    "check_priors",
    "check_sample_weight",
    "first_nonfinite",
]


def first_nonfinite(X: NDArray[Any]) -> tuple[int, int] | None:
    """Return ``(row, column)`` of the first NaN or infinity in 2-D ``X``, or None."""
    bad = ~np.isfinite(X)
    if not bad.any():
        return None
    rows, cols = np.nonzero(bad)
    return int(rows[0]), int(cols[0])


def check_finite(X: NDArray[Any], name: str = "X", *, allow_nan: bool = False) -> None:
    """Raise a ValueError naming the first row and column holding NaN or infinity.

    The message contains the words ``NaN`` or ``infinity`` so that callers
    (and scikit-learn's estimator checks) can match on them.
    """
    if X.dtype.kind not in "fc":
        return
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(X)):  # fast path: a NaN or inf anywhere makes the sum non-finite
            return
    if allow_nan:
        bad = np.isinf(X)
        if not bad.any():
            return
        r, c = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(
            f"Input {name} contains infinity at row {r}, column {c}; "
            "only finite values or NaN (treated as missing) are accepted."
        )
    where = first_nonfinite(X)
    if where is None:
        return
    r, c = where
    kind = "NaN" if np.isnan(X[r, c]) else "infinity"
    raise ValueError(
        f"Input {name} contains {kind} at row {r}, column {c}; this model needs "
        "finite values (drop or impute the row, or use a naive Bayes model, "
        "which treats NaN as missing)."
    )


def check_lengths(n_rows: int, **arrays: Any) -> None:
    """Check that every named array has ``n_rows`` entries along its first axis."""
    for name, arr in arrays.items():
        if arr is None:
            continue
        n = len(arr)
        if n != n_rows:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{n_rows}, {n}]. X has {n_rows} rows but {name} has {n} entries; they "
                "must have the same length."
            )


def check_sample_weight(sample_weight: ArrayLike | None, n_rows: int) -> NDArray[np.float64]:
    """Return float64 weights of shape ``(n_rows,)``; ones when None.

    Weights are frequency weights: an integer weight ``w`` counts the row ``w``
    times. They must be finite and non-negative.
    """
    if sample_weight is None:
        return np.ones(n_rows)
    if np.isscalar(sample_weight):
        w = np.full(n_rows, sample_weight, dtype=float)
    else:
        try:
            w = np.asarray(sample_weight, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"sample_weight must be numeric; got {exc}") from None
    if w.ndim != 1:
        raise ValueError(
            f"sample_weight must be 1-dimensional of shape ({n_rows},); got shape {w.shape}."
        )
    if w.shape[0] != n_rows:
        raise ValueError(
            f"sample_weight has {w.shape[0]} entries but X has {n_rows} rows; "
            "sample_weight.shape == (n_samples,) is required."
        )
    bad = ~np.isfinite(w)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise ValueError(f"sample_weight must be finite; got {w[r]} at row {r}.")
    neg = w < 0
    if neg.any():
        r = int(np.flatnonzero(neg)[0])
        raise ValueError(f"sample_weight must be non-negative; got {w[r]} at row {r}.")
    return w


def check_priors(priors: ArrayLike, n_classes: int, *, strict: bool = False) -> NDArray[np.float64]:
    """Validate user priors: one non-negative number per class, summing to 1.

    Normalisation (the same as scikit-learn's discriminant analyses): priors
    whose sum differs from 1 by more than 1e-5 are renormalised with a
    ``UserWarning``. With ``strict`` (scikit-learn's ``GaussianNB``) they
    raise instead. Each message starts with scikit-learn's wording.
    """
    try:
        p = np.asarray(priors, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"priors must be an array of numbers; got {priors!r}.") from None
    if p.ndim != 1 or p.shape[0] != n_classes:
        raise ValueError(
            "Number of priors must match number of classes. The priors must have one entry "
            f"per class ({n_classes} classes); got shape {p.shape}."
        )
    if not np.all(np.isfinite(p)):
        raise ValueError(f"priors must be finite; got {p.tolist()}.")
    if strict and not np.isclose(p.sum(), 1.0):
        raise ValueError(
            f"The sum of the priors should be 1. They sum to {p.sum():g} ({p.tolist()}); "
            "GaussianNB does not renormalise them."
        )
    if np.any(p < 0):
        lead = "Priors must be non-negative. Got" if strict else "priors must be non-negative; got"
        raise ValueError(f"{lead} {p.tolist()}.")
    total = p.sum()
    if total <= 0:
        raise ValueError(f"priors must not all be zero; got {p.tolist()}.")
    if abs(total - 1.0) > 1e-5:
        warnings.warn(
            f"The priors sum to {total:g}, not 1. Renormalizing.", UserWarning, stacklevel=3
        )
    return p / total
