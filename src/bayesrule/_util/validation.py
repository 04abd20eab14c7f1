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


def _plain_repr(value: Any) -> str:
    """``repr`` of a value as the user wrote it (``1.5``, not ``np.float64(1.5)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


__all__ = [
    "TooFewRows",
    "check_finite",
    "check_labels",
    "check_lengths",
    "check_priors",
    "check_sample_weight",
    "check_table",
    "explain_X_error",
    "first_nonfinite",
    "first_non_numeric",
    "plain_rows",
]


class TooFewRows(ValueError):
    """Statistics with too few rows (or too little weight, or nothing varying yet) for a model.

    More rows can mend it: a streamed update (``partial_fit``, ``merge``,
    ``forget``) whose derivation raises it keeps its statistics, and the model
    refuses to predict with this error until later rows make it derivable;
    ``fit`` raises it at once.
    """


#: the dtypes scikit-learn's ``validate_data`` keeps for a model that takes float64 or float32
_KEPT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def plain_rows(X: Any, n_features: Any) -> bool:
    """Whether ``X`` is rows that scikit-learn's ``validate_data`` would return as they are.

    With ``reset=False``, ``dtype=[float64, float32]``, no finite check and no
    sparse input, ``validate_data`` returns a plain 2-D NumPy array (not a
    subclass) of native float64 or float32, with at least one row and the
    fitted ``n_features`` columns, unchanged and without a warning, provided
    the estimator was fitted without feature names (it warns otherwise: the
    caller checks that). A prediction on such rows may skip it (about a tenth
    of a millisecond of checks whose outcome is known); anything else takes it,
    with its errors and warnings.
    """
    return (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype in _KEPT_DTYPES
        and isinstance(n_features, int)
        and n_features > 0
        and X.shape[1] == n_features
        and X.shape[0] > 0
    )


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
        if isinstance(sample_weight, (str, bytes)) or not np.issubdtype(
            np.asarray(sample_weight).dtype, np.number
        ):
            raise TypeError(
                f"sample_weight must be None, a number or an array of numbers; got "
                f"{sample_weight!r}."
            )
        w = np.full(n_rows, sample_weight, dtype=float)
    else:
        w = _as_float_array(sample_weight, "sample_weight")
    if w.ndim != 1:
        raise ValueError(
            f"sample_weight must be 1-dimensional of shape ({n_rows},); got shape {w.shape}."
        )
    if w.shape[0] != n_rows:
        raise ValueError(
            f"X has {n_rows} rows but sample_weight has {w.shape[0]} entries; they must "
            "have the same length (sample_weight.shape == (n_samples,))."
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


def _as_float_array(values: Any, name: str) -> NDArray[np.float64]:
    """``values`` as a float array, or a TypeError naming ``name`` and the first non-number."""
    if isinstance(values, (dict, set, str, bytes)):
        raise TypeError(
            f"{name} must be an array of numbers; got a {type(values).__name__}: {values!r:.80}."
        )
    try:
        arr = np.asarray(values)
    except ValueError:  # a ragged nested sequence
        raise ValueError(f"{name} must be a 1-dimensional array of numbers.") from None
    if arr.dtype.kind in "mMc" or (arr.dtype.kind in "OSU" and arr.ndim == 0):
        raise TypeError(f"{name} must be an array of real numbers; got dtype {arr.dtype}.")
    try:
        return np.asarray(arr, dtype=float)
    except (TypeError, ValueError):
        where = first_non_numeric(np.atleast_2d(arr.T).T if arr.ndim == 1 else arr)
        detail = "" if where is None else f" {_plain_repr(where[2])} at row {where[0]}"
        raise TypeError(
            f"{name} must be an array of numbers; got{detail or ' ' + str(arr.dtype)}."
        ) from None


def first_non_numeric(X: Any) -> tuple[int, int, Any] | None:
    """``(row, column, value)`` of the first entry of 2-D ``X`` that is not a number, or None.

    Strings that spell numbers ("1.5") count as numbers, as NumPy converts them.
    Meant for the error path: it walks the offending column in Python.
    """
    arr = np.asarray(X, dtype=object)
    if arr.ndim != 2:
        return None
    for j in range(arr.shape[1]):
        col = arr[:, j]
        try:
            np.asarray(col, dtype=float)
            continue
        except (TypeError, ValueError):
            pass
        for i, v in enumerate(col):
            try:
                float(v)
            except (TypeError, ValueError):
                return i, j, v
    return None


def check_table(X: Any, *, numeric: bool = True) -> None:
    """Refuse a table (a pandas DataFrame) whose columns a model cannot read.

    Duplicate column names are a ValueError (a name would stand for two
    columns); names that mix strings and other types a TypeError (as
    scikit-learn's, which only stores all-string names); with ``numeric``,
    a datetime, timedelta or period column (or array) a ValueError naming
    the column.
    """
    if numeric and _is_time(getattr(X, "dtype", None)):
        raise ValueError(
            f"X must be numeric; got {X.dtype} values. Convert dates and durations to "
            "numbers first (e.g. to seconds)."
        )
    columns = getattr(X, "columns", None)
    dtypes = getattr(X, "dtypes", None)
    if columns is None or dtypes is None:
        return
    names = list(columns)
    if len(set(map(_hashable, names))) != len(names):
        seen: set[Any] = set()
        dups = []
        for n in names:
            key = _hashable(n)
            if key in seen and n not in dups:
                dups.append(n)
            seen.add(key)
        raise ValueError(
            f"X has duplicate column names {dups[:10]}; every column needs its own name."
        )
    types = sorted({type(n).__name__ for n in names})
    if len(types) > 1 and any(isinstance(n, str) for n in names):
        raise TypeError(
            "Feature names are only supported if all input features have string names, "
            f"but X's column names are of types {types}; convert them all to strings "
            "(X.columns = X.columns.astype(str)) or none of them."
        )
    if numeric:
        for name, dtype in zip(names, list(dtypes), strict=False):
            if _is_time(dtype):
                raise ValueError(
                    f"X column {name!r} holds {dtype} values; this model needs numbers. "
                    "Convert the column first (e.g. to seconds, or to its year, month "
                    "and day as separate columns)."
                )


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _is_time(dtype: Any) -> bool:
    """Whether a column dtype holds dates, times, durations or periods."""
    kind = getattr(dtype, "kind", "O")
    return kind in "mM" or type(dtype).__name__ in ("PeriodDtype", "DatetimeTZDtype")


def check_labels(y: NDArray[Any], name: str = "y") -> None:
    """Refuse missing labels (None, NaN, ``pd.NA``) and labels of mixed types, naming a row.

    Labels must all be numbers (booleans included) or all be strings;
    scikit-learn's own checks (``check_classification_targets``) run after.
    """
    if y.dtype.kind == "f":
        bad = np.isnan(y)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"Input {name} contains NaN at row {r}; every row needs a label "
                "(drop the unlabelled rows)."
            )
        return
    if y.dtype.kind != "O":
        return
    values = y.tolist()
    types = set(map(type, values))
    na = _pd_na()
    if any(t is type(None) or issubclass(t, float) or t is type(na) for t in types):
        for r, v in enumerate(values):
            if v is None or v is na or (isinstance(v, float) and v != v):
                raise ValueError(
                    f"Input {name} contains a missing label ({_plain_repr(v)}) at row {r}; every row "
                    "needs a label (drop the unlabelled rows)."
                )
    text = {t for t in types if issubclass(t, (str, bytes))}
    if text and len(text) < len(types):
        rs = next(r for r, v in enumerate(values) if type(v) in text)
        rn = next(r for r, v in enumerate(values) if type(v) not in text)
        raise ValueError(
            f"{name} mixes labels of different types: {_plain_repr(values[rn])} at row {rn} and "
            f"{_plain_repr(values[rs])} (a string) at row {rs}; labels must be all numbers or all "
            "strings."
        )


def _pd_na() -> Any:
    import sys

    pd = sys.modules.get("pandas")
    return getattr(pd, "NA", None) if pd is not None else None


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


def explain_X_error(X: Any, exc: Exception) -> Exception:
    """The error to raise when scikit-learn's ``check_array`` refused ``X`` with ``exc``.

    NumPy's messages (a ragged nested list, a string, an object, complex
    numbers, dates) are replaced by one that names ``X``, what was expected
    and, where it can be found, the offending row and column; scikit-learn's
    own messages (feature counts, dimensions, sparse input) are kept.
    """
    if X is None:
        return ValueError("X must be an array-like of shape (n_samples, n_features); got None.")
    msg = str(exc)
    if "Sparse data" in msg:  # scikit-learn's, for a model that needs dense X
        return exc
    if "inhomogeneous" in msg or "setting an array element with a sequence" in msg:
        return ValueError(
            "X must be numeric: a 2-dimensional array with the same number of values in "
            f"every row; {_ragged_detail(X)}."
        )
    if "Complex data not supported" in msg:
        return ValueError(
            "X must be numeric: real numbers; got complex values (Complex data not supported)."
        )
    kind = getattr(getattr(X, "dtype", None), "kind", "")
    if kind in ("m", "M"):
        return ValueError(
            f"X must be numeric; got {X.dtype} values. Convert dates and durations to "
            "numbers first (e.g. to seconds)."
        )
    if isinstance(exc, TypeError) and "argument must be" in msg:
        # scikit-learn's estimator checks match this message (a dict in X)
        return TypeError(f"X must be numeric{_where(X)}: {msg}")
    if "convert" in msg or "could not" in msg or "dtype" in msg or "DType" in msg:
        return ValueError(
            f"X must be numeric{_where(X)}. Encode text columns first (e.g. with "
            "scikit-learn's OrdinalEncoder for CategoricalNB), or use MixedNB, which reads "
            "string columns of a DataFrame."
        )
    return exc


def _ragged_detail(X: Any) -> str:
    if isinstance(X, (list, tuple)):
        lengths = [len(row) if hasattr(row, "__len__") else 1 for row in X]
        for r, n in enumerate(lengths):
            if n != lengths[0]:
                return f"got row 0 with {lengths[0]} values and row {r} with {n}"
    return "got rows of different lengths (a ragged nested list?)"


def _where(X: Any) -> str:
    """``"; got 'a' at row 3, column 'city'"`` for the first entry that is not a number."""
    try:
        where = first_non_numeric(X)
    except (TypeError, ValueError):
        return ""
    if where is None:
        return ""
    r, j, v = where
    columns = getattr(X, "columns", None)
    name = repr(list(columns)[j]) if columns is not None else str(j)
    return f"; got {v!r:.60} at row {r}, column {name}"
