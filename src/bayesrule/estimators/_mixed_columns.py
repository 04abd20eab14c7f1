"""Reading the columns of a block for MixedNB, and the kind inferred for each column."""

from __future__ import annotations

import decimal
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..models import feature_name
from ..stats import Vocabulary, block_bounds, check_categories
from ._nb import _F, KINDS
from ._ranges import check_squared_range


# ---------------------------------------------------------------------------------
# input: the columns of a table or an array, and the kinds inferred from them
# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Column:
    """One column of a block as MixedNB reads it.

    ``values``: float64 with NaN for missing values (numbers), or strings
    with ``mask`` marking the missing ones (``text``). ``dtype`` names the
    column's type in the data (``'int64'``, ``'category'``...), ``integral``
    whether its numbers are of an integer or boolean type, ``boolean``
    whether they are booleans, ``time`` whether it held dates or durations.
    """

    values: NDArray[Any]
    text: bool
    dtype: str
    integral: bool = False
    boolean: bool = False
    time: bool = False
    mask: NDArray[np.bool_] | None = None

    @property
    def missing(self) -> NDArray[np.bool_]:
        return np.isnan(self.values) if self.mask is None else self.mask


def _text_column(
    values: NDArray[Any], missing: NDArray[np.bool_], dtype: str, **kw: Any
) -> _Column:
    """A column of text: its values as strings, the missing ones marked."""
    v = np.array(values, dtype=object)
    v[missing] = ""
    return _Column(v.astype(str), True, dtype, mask=np.asarray(missing, dtype=bool), **kw)


def _is_dataframe(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, (float, np.floating)):
        return bool(np.isnan(v))
    return type(v).__name__ in ("NAType", "NaTType")


def _object_column(values: NDArray[Any], name: Any, dtype: str = "object") -> _Column:
    """A column of Python objects: strings (categories), numbers or booleans, and missing values."""
    missing = np.fromiter((_is_missing(v) for v in values), dtype=bool, count=values.size)
    kinds = {"str": -1, "bool": -1, "int": -1, "float": -1}
    for i, v in enumerate(values):
        if missing[i]:
            continue
        if isinstance(v, str):
            key = "str"
        elif isinstance(v, (bool, np.bool_)):
            key = "bool"
        elif isinstance(v, (int, np.integer)):
            key = "int"
        elif isinstance(v, (float, np.floating, decimal.Decimal)):
            key = "float"  # a Decimal is a number (Parquet's decimals), read as its float
        else:
            raise TypeError(
                f"column {name!r} holds {_described(v)} at row {i}; MixedNB takes text, "
                "numbers, booleans and missing values (a cell's argument must be a string or a "
                "number, as scikit-learn says): convert the column (dates to numbers such as "
                "days since a fixed date, several values per cell to columns of their own) or "
                "leave it out."
            )
        if kinds[key] < 0:
            kinds[key] = i
    if kinds["str"] >= 0:
        numbers = [i for k, i in kinds.items() if k != "str" and i >= 0]
        if numbers:
            r = min(numbers)
            raise ValueError(
                f"column {name!r} of X holds both strings ({values[kinds['str']]!r} at row "
                f"{kinds['str']}) and numbers ({values[r]!r} at row {r}); convert it to one type."
            )
    if kinds["str"] >= 0 or not (~missing).any():
        return _text_column(values, missing, dtype)
    nums = np.full(values.size, np.nan)
    nums[~missing] = np.asarray(values[~missing].tolist(), dtype=np.float64)
    boolean = kinds["int"] < 0 and kinds["float"] < 0
    integral = kinds["float"] < 0
    tag = "bool" if boolean else "int64" if integral else "float64"
    return _Column(nums, False, tag if dtype == "object" else dtype, integral, boolean)


def _described(v: Any) -> str:
    """A value MixedNB cannot take, in words: 'a date', 'a list', 'a dict'."""
    import datetime

    for kind, words in (
        (datetime.datetime, "a datetime"),
        (datetime.date, "a date"),
        (datetime.time, "a time of day"),
        (datetime.timedelta, "a duration"),
        ((list, tuple, np.ndarray), f"a {type(v).__name__} (several values in one cell)"),
        (dict, "a dict (several fields in one cell)"),
        ((bytes, bytearray), "binary data"),
    ):
        if isinstance(v, kind):
            return words
    return f"a value of type {type(v).__name__}"


def _frame_columns(X: Any) -> list[_Column]:
    """The columns of a pandas DataFrame."""
    import pandas as pd

    out = []
    for j, name in enumerate(X.columns):
        series = X.iloc[:, j]
        dtype = series.dtype
        tag = str(dtype)
        if dtype.kind in "mM" or isinstance(dtype, (pd.PeriodDtype, pd.DatetimeTZDtype)):
            values = series.astype(object).to_numpy()
            out.append(_text_column(values, np.asarray(pd.isna(values)), tag, time=True))
        elif pd.api.types.is_bool_dtype(dtype):
            nums = series.to_numpy(dtype=np.float64, na_value=np.nan)
            out.append(_Column(nums, False, tag, integral=True, boolean=True))
        elif pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype):
            nums = series.to_numpy(dtype=np.float64, na_value=np.nan)
            out.append(_Column(nums, False, tag, integral=dtype.kind in "iu"))
        elif isinstance(dtype, np.dtype) and dtype.kind == "O":
            out.append(_object_column(series.to_numpy(dtype=object), name))
        else:  # string, category and other extension types: their values as strings
            values = series.astype(object).to_numpy()
            out.append(_text_column(values, np.asarray(pd.isna(values)), tag))
    return out


#: The kinds ``columns`` may declare: those of the single-kind estimators, and
#: 'auto' (chosen from the data's statistics when the model is derived).
DECLARABLE = (*KINDS, "auto")


def _infer_kind(col: _Column) -> tuple[str, str]:
    """The kind of a column from its type alone, and why (see :class:`MixedNB`).

    Text is categorical and booleans are bernoulli; every other numeric
    column is 'auto': its kind is chosen from the statistics of all the
    training data when the model is derived (see ``_mixed_choice``), never
    from one block, so that chunks, streams and merges agree.
    """
    if col.time:
        return "time", "dates or durations"  # refused unless ``columns`` declares a kind
    if col.text:
        d = np.unique(col.values[~col.missing]).size
        return "categorical", f"text, {d} distinct values"
    if col.boolean:
        return "bernoulli", "booleans"
    return "auto", "numbers"


def _fmt(x: Any) -> str:
    """A number as a person writes it: 2008, 0.5."""
    f = float(x)
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else f"{f:.6g}"


# ---------------------------------------------------------------------------------
# encoding: a block as MixedStats takes it
# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Encoded:
    """A block as MixedStats takes it: numeric codes, the column kinds and vocabularies."""

    values: _F
    kinds: tuple[str, ...]
    vocabularies: tuple[Vocabulary, ...]
    dtypes: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()


class InferredKind(str):
    """A kind inferred from a column's type (a plain string otherwise).

    ``infer_columns`` pins such kinds in ``columns`` (a streamed fit does, from
    its first block); :func:`resolve_kinds` reports them as inferred, not as
    declared by the user, as the fit at once does.
    """

    __slots__ = ()

    def __reduce__(self) -> Any:
        return (InferredKind, (str(self),))


def resolve_kinds(
    spec: Any, cols: list[_Column], names: list[Any]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The kind of each column (declared in ``spec``, MixedNB's ``columns``, or inferred) and why."""
    p = len(cols)
    declared: dict[int, Any] = {}
    if isinstance(spec, list):
        if len(spec) != p:
            raise ValueError(f"columns must give one kind per column ({p}); got {len(spec)}.")
        declared = dict(enumerate(spec))
    elif spec is not None:
        for key, kind in spec.items():
            if key in names:
                declared[names.index(key)] = kind
            elif isinstance(key, (int, np.integer)) and 0 <= key < p:
                declared[int(key)] = kind
            else:
                raise ValueError(
                    f"columns names an unknown column {key!r}; the columns are "
                    f"{names[:20]}{' ...' if p > 20 else ''}."
                )
    kinds, reasons = [], []
    for j, col in enumerate(cols):
        if j in declared and isinstance(declared[j], InferredKind):
            # pinned from the data (``infer_columns``, a streamed fit's first block): inferred
            kind, why = _infer_kind(col)
            if kind == declared[j]:
                kinds.append(str(kind))
                reasons.append(f"inferred: {why}")
                continue
        if j in declared:
            kind = declared[j]
            if kind not in DECLARABLE:
                raise ValueError(
                    f"columns gives column {names[j]!r} the kind {kind!r}; expected one of "
                    f"{list(DECLARABLE)}."
                )
            kinds.append(str(kind))
            reasons.append("declared in columns")
            continue
        kind, why = _infer_kind(col)
        if kind == "time":
            raise ValueError(
                f"column {names[j]!r} holds {col.dtype} values, which MixedNB "
                "cannot model: convert it to numbers first (e.g. to seconds), or declare "
                f"columns={{{names[j]!r}: 'categorical'}} if its values are categories."
            )
        kinds.append(InferredKind(kind))
        reasons.append(f"inferred: {why}")
    return tuple(kinds), tuple(reasons)


def encode_columns(
    cols: list[_Column],
    shown: list[Any],
    kinds: tuple[str, ...],
    fitted_vocabs: tuple[Vocabulary, ...] | None,
    *,
    own: bool,
    max_categories: int,
) -> tuple[_F, tuple[Vocabulary, ...]]:
    """The columns as numeric codes (float64 with NaN for missing) and their vocabularies.

    ``shown`` names the columns in errors; ``fitted_vocabs`` are a fitted
    model's (None: not fitted). ``own``: code each categorical column by the
    block's own sorted vocabulary (statistics, which merge vocabularies);
    else by the fitted vocabulary, an unknown value getting the code of an
    unseen category (predictions).
    """
    fitted = fitted_vocabs is not None
    vocabularies = fitted_vocabs if fitted_vocabs is not None else (None,) * len(cols)
    n = cols[0].values.size if cols else 0
    out = np.empty((n, len(cols)), dtype=np.float64)
    vocabs: list[Vocabulary] = []
    for j, col in enumerate(cols):
        kind, fv = kinds[j], vocabularies[j]
        if col.text and kind != "categorical" and col.missing.all():
            # nothing observed (an object column of None): missing numbers
            col = _Column(np.full(n, np.nan), False, col.dtype)
        if col.text and kind != "categorical":
            what = "numbers (its kind chosen from them)" if kind == "auto" else repr(kind)
            raise ValueError(
                f"column {shown[j]!r} holds {col.dtype} values, which only the "
                f"'categorical' kind accepts; it is {what}."
            )
        if kind != "categorical" or (fitted and fv is None):
            # numbers, or the integer category codes of a model fitted on them
            if col.text:
                raise ValueError(
                    f"column {shown[j]!r} holds {col.dtype} values, but the model was "
                    "fitted on integer category codes in it."
                )
            out[:, j] = col.values
            vocabs.append(None)
            continue
        if fv is not None and (fv.dtype.kind == "U") != col.text:
            fitted_on = "strings" if fv.dtype.kind == "U" else "numbers"
            got = "strings" if col.text else "numbers"
            raise ValueError(
                f"categorical column {shown[j]!r} holds {got}, but the model was fitted on "
                f"{fitted_on} in it."
            )
        missing = col.missing
        seen = col.values[~missing]
        codes = np.full(n, np.nan)
        if own:
            vocab, codes[~missing] = np.unique(seen, return_inverse=True)
            if vocab.size > max_categories:
                raise ValueError(
                    f"column {shown[j]!r} holds {vocab.size} distinct values; a "
                    f"categorical column may hold at most max_categories="
                    f"{max_categories} (is it an identifier? drop it, or raise "
                    "max_categories)."
                )
            vocabs.append(vocab)
        else:
            assert fv is not None
            pos = np.minimum(np.searchsorted(fv, seen), max(fv.size - 1, 0))
            known = fv[pos] == seen if fv.size else np.zeros(seen.size, bool)
            codes[~missing] = np.where(known, pos, fv.size)
            vocabs.append(fv)
        out[:, j] = codes
    if np.isinf(out).any():
        r, c = (int(t[0]) for t in np.nonzero(np.isinf(out)))
        raise ValueError(
            f"Input X contains infinity in column {shown[c]!r} at row {r}; only finite "
            "values or NaN are accepted."
        )
    return out, tuple(vocabs)


def checked_values(X: _F, kinds: tuple[str, ...], names: Any, max_categories: int) -> _F:
    """Check the values of each kind (codes, counts) and binarize the bernoulli columns."""
    arr = np.asarray(kinds, dtype=object)
    cat = np.flatnonzero(arr == "categorical")
    if cat.size:
        check_categories(
            X[:, cat],
            cat if names is None else np.asarray(names, dtype=object)[cat],
            max_categories,
        )
    counts = np.flatnonzero(arr == "poisson")
    if counts.size:
        sub = X[:, counts]
        with np.errstate(invalid="ignore"):
            if np.any(sub < 0):
                r, c = (int(t[0]) for t in np.nonzero(sub < 0))
                raise ValueError(
                    f"column {feature_name(names, int(counts[c]))!r} is modelled as 'poisson' "
                    f"counts and must be non-negative; got {float(sub[r, c])!r} at row {r}."
                )
    binary = np.flatnonzero(arr == "bernoulli")
    if binary.size:
        sub = X[:, binary]
        X = X.copy()
        X[:, binary] = np.where(np.isnan(sub), np.nan, (sub > 0).astype(float))
    return X


#: the kinds whose statistics (or whose inference) square a column's deviations
_SQUARED_KINDS = ("gaussian", "kernel", "auto")


def check_squares(X: _F, kinds: tuple[str, ...], names: Any) -> None:
    """The fit's overflow check (:func:`._ranges.check_squared_range`) of the block's columns
    of a kind that squares its deviations (or whose inference does), before the kind
    inference's likelihoods and the moments would be infinite or NaN deep inside; a
    categorical column's codes may be of any size. Predictions take such values (as far
    from every class: the out-of-range warning)."""
    wanted = [j for j, kind in enumerate(kinds) if kind in _SQUARED_KINDS]
    if not wanted or X.shape[0] == 0:
        return
    lo, hi = np.full(X.shape[1], np.inf), np.full(X.shape[1], -np.inf)  # others: no range
    lo[wanted], hi[wanted] = block_bounds(X[:, wanted])
    advice = "rescale it (or declare it 'categorical' if it holds codes)."
    check_squared_range((lo, hi), X.shape[0], names, noun="column", advice=advice)
