"""Rows a model cannot score: empty cells in ``predict``, left out of ``evaluate``.

A model that needs finite values (LDA, QDA, RDA, MDA) refuses a whole block
of rows when one cell is missing or infinite; the naive Bayes family
marginalises a missing cell (NaN) itself but refuses an infinite one. The
command line scores every row it can: :func:`scorable` finds the rows the
model takes, :func:`gapped` gives a copy of the model whose prediction
methods score those rows and leave the others empty (``None`` for a
prediction, NaN for a probability), and :func:`unscored` counts the empty
rows of a result. ``--incomplete error`` keeps the refusal instead.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["CHOICES", "describe", "gapped", "scorable", "unscored", "with_gaps"]

#: the values of ``--incomplete``
CHOICES = ("empty", "error")
#: the prediction methods a gapped copy scores row by row
_METHODS = ("predict", "predict_proba", "predict_log_proba")


def _takes_nan(est: Any) -> bool:
    """Whether the model marginalises a missing (NaN) cell itself (the naive Bayes family)."""
    return bool(est.input_spec().allow_nan)


def _bad_cells(est: Any, X: Any) -> tuple[NDArray[np.bool_], list[str]]:
    """Cells the model cannot take, as a (rows, numeric columns) mask, and those columns."""
    nan_ok = _takes_nan(est)
    if hasattr(X, "columns"):  # a DataFrame: only its numeric columns can hold inf or NaN
        cols = [c for c in X.columns if X[c].dtype.kind in "fiuc"]
        values = X[cols].to_numpy(dtype=float) if cols else np.zeros((len(X), 0), dtype=float)
        names = [str(c) for c in cols]
    else:
        values = np.asarray(X)
        if values.dtype.kind not in "fc":
            return np.zeros((values.shape[0], 0), dtype=bool), []
        names = [f"x{j}" for j in range(values.shape[1])]
    bad = np.isinf(values) if nan_ok else ~np.isfinite(values)
    return bad, names


def scorable(est: Any, X: Any) -> NDArray[np.bool_]:
    """Rows of ``X`` the model can score: no infinite cell, and no NaN unless it takes NaN."""
    bad, _ = _bad_cells(est, X)
    return np.asarray(~bad.any(axis=1), dtype=bool)


def describe(est: Any, X: Any, names: list[str] | None = None) -> str:
    """Which columns hold the cells the model cannot take, and the first row (1-based)."""
    bad, cols = _bad_cells(est, X)
    if names is not None and len(names) == len(cols):
        cols = names
    parts = []
    for j in np.flatnonzero(bad.any(axis=0)):
        values = _column(X, int(j))[bad[:, j]]
        n_nan = int(np.isnan(values).sum())
        what = (
            "missing"
            if n_nan == values.size
            else "infinite"
            if n_nan == 0
            else "missing or infinite"
        )
        parts.append(f"{cols[j]!r} ({values.size:,} {what})")
    rows = np.flatnonzero(bad.any(axis=1))
    what = "infinite" if _takes_nan(est) else "missing or infinite"
    where = f" (first in data row {int(rows[0]) + 1})" if rows.size else ""
    return f"{what} cells in {', '.join(parts[:10])}{where}"


def _column(X: Any, j: int) -> NDArray[np.float64]:
    """The ``j``-th numeric column of ``X`` as floats (as :func:`_bad_cells` numbers them)."""
    if hasattr(X, "columns"):
        cols = [c for c in X.columns if X[c].dtype.kind in "fiuc"]
        return np.asarray(X[cols[j]].to_numpy(dtype=float))
    return np.asarray(np.asarray(X)[:, j], dtype=float)


def _subset(X: Any, rows: NDArray[np.bool_]) -> Any:
    return X.loc[rows] if hasattr(X, "loc") else np.asarray(X)[rows]


def with_gaps(values: NDArray[Any], rows: NDArray[np.bool_]) -> NDArray[Any]:
    """``values`` of the scorable ``rows`` placed among empty ones (NaN, or None for labels)."""
    n = rows.size
    if values.dtype.kind == "f":
        out: NDArray[Any] = np.full((n, *values.shape[1:]), np.nan, dtype=values.dtype)
    else:  # labels: an object array, so that None is an empty cell in every format
        out = np.full((n, *values.shape[1:]), None, dtype=object)
    out[rows] = values
    return out


def _gapped_call(est: Any, method: str, X: Any, *args: Any, **kwargs: Any) -> NDArray[Any]:
    rows = scorable(est, X)
    if rows.all():
        return np.asarray(getattr(est, method)(X, *args, **kwargs))
    if not rows.any():  # nothing to score: the shape and kind of the result from no rows
        n_out = 0 if method == "predict" else est.classes_.size
        empty = np.empty((0, n_out) if n_out else (0,), dtype=float)
        if method == "predict":
            empty = est.classes_[:0]
        return with_gaps(empty, rows)
    return with_gaps(np.asarray(getattr(est, method)(_subset(X, rows), *args, **kwargs)), rows)


def gapped(est: Any) -> Any:
    """A shallow copy of ``est`` whose prediction methods leave unscorable rows empty.

    The copy is still an instance of the model's class (the streaming reader
    asks what it is); only ``predict``, ``predict_proba`` and
    ``predict_log_proba`` are replaced, on the copy alone.
    """
    twin = copy.copy(est)
    for method in _METHODS:
        setattr(twin, method, functools.partial(_gapped_call, est, method))
    return twin


def unscored(values: Any) -> NDArray[np.bool_]:
    """Rows of a result of :func:`gapped` that were left empty."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        return np.asarray(np.isnan(arr).any(axis=1) if arr.ndim == 2 else np.isnan(arr))
    if arr.dtype.kind == "O":
        import pandas as pd

        empty = np.asarray(pd.isna(arr), dtype=bool).reshape(arr.shape[0], -1)
        return np.asarray(empty.any(axis=1), dtype=bool)
    return np.zeros(arr.shape[0], dtype=bool)
