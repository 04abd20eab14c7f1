"""The vocabularies of MixedStats' categorical columns: their forms, union and checks."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._common import Floats as _F
from ._common import StatisticsError, check_features, label_repr

__all__ = ["Vocabulary", "as_vocabulary"]

#: The vocabulary of a categorical column: its sorted unique values, strings
#: (a text column) or float64 numbers (a numeric column of categories such as
#: years); None for a column whose values are used as they are (numbers, or
#: integer category codes).
Vocabulary = NDArray[Any] | None


def as_vocabulary(values: ArrayLike) -> NDArray[np.str_]:
    """Strings as a sorted unique unicode array (the form every vocabulary takes)."""
    v = np.asarray(values, dtype=str).ravel()
    return np.unique(v) if v.size else np.array([], dtype=str)


FORM_NAMES = {None: "integer category codes", "str": "strings", "num": "numeric categories"}


def vocabulary_form(v: Vocabulary) -> str | None:
    """How a categorical column is coded: None (codes), 'str' or 'num' (a vocabulary)."""
    if v is None:
        return None
    return "str" if v.dtype.kind == "U" else "num"


def show_value(value: Any) -> str:
    """A category as an error message shows it: 'Quito', 2008."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return repr(value.item() if isinstance(value, np.generic) else value)


def as_vocab(v: Any) -> Vocabulary:
    """A vocabulary in its one form: None, unicode strings, or float64 numbers."""
    if v is None:
        return None
    arr = np.asarray(v)
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64)
    return arr.astype(str)


def form_mismatch(j: int, action: str, a: Vocabulary, b: Vocabulary) -> str:
    if vocabulary_form(a) is not None and vocabulary_form(b) is None:
        a, b = b, a  # integer codes first
    return (
        f"cannot {action} statistics of categorical column {j}: it holds "
        f"{FORM_NAMES[vocabulary_form(a)]} in one and {FORM_NAMES[vocabulary_form(b)]} in the other."
    )


def united_vocabulary(
    j: int, a: Vocabulary, b: Vocabulary, a_seen: bool, b_seen: bool
) -> Vocabulary:
    """The vocabulary of column ``j`` after a merge: the sorted union of both.

    A column with nothing observed takes the other side's form; codes in one
    and strings in the other raise :class:`StatisticsError`.
    """
    if a is None and b is None:
        return None
    if a is not None and b is not None:
        if vocabulary_form(a) != vocabulary_form(b):
            if not (a.size and b.size):  # an empty vocabulary takes the other's form
                return a if a.size else b
            raise StatisticsError(form_mismatch(j, "merge", a, b))
        return np.union1d(a, b) if a.size or b.size else a
    if a is None:  # put the strings first
        a, b, a_seen, b_seen = b, a, b_seen, a_seen
    if a_seen and b_seen:
        raise StatisticsError(form_mismatch(j, "merge", a, b))
    return None if b_seen else a


def check_vocabularies(X: _F, kinds: tuple[str, ...], vocabularies: Any) -> tuple[Vocabulary, ...]:
    if vocabularies is None:
        return (None,) * len(kinds)
    vocabs = list(vocabularies)
    check_features(len(kinds), len(vocabs), "vocabularies")
    out: list[Vocabulary] = []
    for j, v in enumerate(vocabs):
        if v is None:
            out.append(None)
            continue
        if kinds[j] != "categorical":
            raise ValueError(
                f"column {j} is of kind {kinds[j]!r}; only a categorical column has a vocabulary."
            )
        arr = as_vocab(np.asarray(v).ravel())
        assert arr is not None
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError(f"the vocabulary of column {j} must hold finite numbers.")
        if arr.size > 1 and not np.all(arr[1:] > arr[:-1]):
            raise ValueError(f"the vocabulary of column {j} must be sorted and unique.")
        col = X[:, j]
        with np.errstate(invalid="ignore"):
            bad = ~np.isnan(col) & ((col < 0) | (col >= arr.size) | (col != np.floor(col)))
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"column {j} must hold codes 0 .. {arr.size - 1} into its vocabulary; "
                f"got {label_repr(col[r])} at row {r}."
            )
        out.append(arr)
    return tuple(out)
