"""Reading the columns of a block for MixedNB, and the kind inferred for each column."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._nb import _F

# ---------------------------------------------------------------------------------
# input: the columns of a table or an array, and the kinds inferred from them
# ---------------------------------------------------------------------------------
#: At most this many distinct integers make a column of categories (years,
#: ratings, codes), if each value is seen twice on average.
MAX_LEVELS = 20


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
        elif isinstance(v, (float, np.floating)):
            key = "float"
        else:
            raise TypeError(
                f"column {name!r} of X holds a {type(v).__name__} at row {i}; each value must be "
                "a string, a number, a boolean or missing (the argument must be a string or a "
                "number)."
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


def _infer_kind(col: _Column) -> tuple[str, str]:
    """The kind a statistician would give a column, and why (see :class:`MixedNB`)."""
    if col.time:
        return "time", "dates or durations"  # refused unless ``columns`` declares a kind
    observed = ~col.missing
    if col.text:
        d = np.unique(col.values[observed]).size
        return "categorical", f"text, {d} distinct values"
    if col.boolean:
        return "bernoulli", "booleans"
    if not col.integral:
        return "gaussian", "floating-point numbers"
    v = col.values[observed]
    if v.size == 0:
        return "gaussian", "integers, none observed"
    levels = np.unique(v)
    d, lo, hi = levels.size, levels[0], levels[-1]
    if d <= 2 and lo >= 0 and hi <= 1:
        return "bernoulli", "integers 0 and 1"
    if d <= 2:
        return "categorical", f"{d} distinct integers ({_fmt(lo)}, {_fmt(hi)})"
    if lo >= 0 and _count_like(v):
        return "poisson", (
            f"counts: {d} distinct integers ({_fmt(lo)} to {_fmt(hi)}), mean "
            f"{np.mean(v):.3g}, variance {np.var(v):.3g}"
        )
    if d <= MAX_LEVELS and 2 * d <= v.size:
        return "categorical", f"{d} distinct integers ({_fmt(lo)} to {_fmt(hi)})"
    return "gaussian", f"integers, {d} distinct ({_fmt(lo)} to {_fmt(hi)})"


def _count_like(v: _F) -> bool:
    """Whether non-negative integers are spread as counts are (Poisson-like), not as codes.

    Counts are not under-dispersed (variance at least half the mean; years
    and codes are far less spread); their lower end reaches towards 0 — the
    smallest value at least 1.5 standard deviations below the mean, or 0
    with a right skew (skewness above 0.2), and at most half the mean (a
    measurement in grams is not) — and they are not flat, as a
    uniform spread of codes or ratings is (excess kurtosis above -0.9; a
    uniform one has -1.2, a Poisson one 1/mean).
    """
    mean, sd = float(np.mean(v)), float(np.std(v))
    if sd == 0 or sd * sd < mean / 2:
        return False
    z = (v - mean) / sd
    skew, kurt = float(np.mean(z**3)), float(np.mean(z**4)) - 3.0
    lo = float(v.min())
    reaches_zero = (lo <= mean - 1.5 * sd and skew > -0.1) or (lo == 0 and skew > 0.2)
    return reaches_zero and lo <= mean / 2 and kurt > -0.9


def _fmt(x: Any) -> str:
    """A number as a person writes it: 2008, 0.5."""
    f = float(x)
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else f"{f:.6g}"
