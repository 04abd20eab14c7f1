"""Data in other units: a batch squeezed into a tiny, far-off part of a feature's range.

:class:`~bayesrule.estimators._base.OutOfRangeWarning` catches values far
beyond the training range (pixels in 0-255 against [0, 1]: units too
large). Units too small (body mass in kilograms given to a model fitted in
grams) stay within the band it judges, yet every prediction then goes to
one class. This module finds them from the same cheap summaries: the batch's
per-feature minimum and maximum (of the same sample of rows), next
to the training range ``[lower, upper]`` of width ``W = upper - lower``.

A feature is flagged (:class:`UnitsWarning`) when, in one call,

* the batch's values of the feature span a width ``w`` with
  ``0 < w <= UNITS_FRACTION * W`` (a tenth of the training width or less;
  a constant batch is not judged: one value says nothing of a scale),
* they lie wholly outside the training range, at a distance of at least
  ``UNITS_GAP * W`` (a quarter of the training width) from it, and
* at least ``UNITS_ROWS`` (20) rows of the batch (of the sample) observe it.

Honest test data overlap their training range, so that no batch of 20 or
more rows lies wholly outside it; a narrow batch just beyond the range (new
data a little heavier than any seen) is not a quarter of the training width
away. Units ten or more times too small are flagged where the training
range stays away from zero (its lower end above about a fifth of its upper
end, as body masses, lengths, prices of one market); a feature whose range
reaches zero holds the values in the smaller units too, which its range
cannot tell apart from honest data, and is not flagged. Where the batch is
also beyond the band :class:`OutOfRangeWarning` judges, it is reported as
units (the more specific cause) and not again as out of range.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "UNITS_FRACTION",
    "UNITS_GAP",
    "UNITS_ROWS",
    "far_outside",
    "units_message",
    "units_suspects",
]

#: the batch's width is at most this fraction of the training width
UNITS_FRACTION = 0.1
#: the batch lies outside the training range by at least this fraction of its width
UNITS_GAP = 0.25
#: least number of rows (of the judged sample) that observe the feature
UNITS_ROWS = 20


def far_outside(
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    least: NDArray[np.float64],
    largest: NDArray[np.float64],
) -> NDArray[np.bool_]:
    """Features whose values ``[least, largest]`` lie wholly below or wholly above the
    training range ``[lower, upper]``, at least ``UNITS_GAP * (upper - lower)`` from it.

    The units rule's test of place (the module's second condition), written once: the
    out-of-range check's bound on the features it may skip
    (:func:`~bayesrule.estimators._ranges._in_doubt`) calls it with ``least = largest``
    and relies on its floating-point operations being these (a rounded subtraction is
    monotone, so a gap reached from ``least`` is reached from any larger value).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        gap = UNITS_GAP * (upper - lower)
        return np.asarray(
            ((largest < lower) & (lower - largest >= gap))
            | ((least > upper) & (least - upper >= gap))
        )


def units_suspects(
    Xs: Any,
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    seen_lo: NDArray[np.float64],
    seen_hi: NDArray[np.float64],
) -> NDArray[np.intp]:
    """Columns of the sample ``Xs`` that look like data in smaller units (the rule above).

    ``Xs`` is the judged sample (its ``shape`` and ``columns(cols)``, a dense array of
    those columns' values); ``seen_lo`` and ``seen_hi`` are its per-column bounds. Only
    the candidate columns are read again, to count their observed values.
    """
    if Xs.shape[0] < UNITS_ROWS:
        return np.empty(0, dtype=np.intp)
    with np.errstate(invalid="ignore", over="ignore"):
        W = upper - lower
        w = seen_hi - seen_lo
        flagged = (
            np.isfinite(W)
            & (W > 0)
            & np.isfinite(w)
            & (w > 0)
            # (to rounding: data exactly ten times too small span exactly a tenth)
            & (w <= UNITS_FRACTION * W * (1.0 + 1e-9))
            & far_outside(lower, upper, seen_lo, seen_hi)
        )
    cols = np.flatnonzero(flagged)
    if cols.size == 0:
        return cols
    observed = np.count_nonzero(np.isfinite(Xs.columns(cols)), axis=0)
    return cols[observed >= UNITS_ROWS]


def units_message(
    cols: NDArray[np.intp],
    label: Any,
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    seen_lo: NDArray[np.float64],
    seen_hi: NDArray[np.float64],
    named: int,
) -> str:
    """The warning's text: each feature's training range, the batch's, and their ratio."""

    def one(j: int) -> str:
        ratio = (upper[j] - lower[j]) / (seen_hi[j] - seen_lo[j])
        side = "below" if seen_hi[j] < lower[j] else "above"
        return (
            f"feature {label(j)}: training range [{lower[j]:.4g}, {upper[j]:.4g}], here "
            f"[{seen_lo[j]:.4g}, {seen_hi[j]:.4g}] ({ratio:.3g} times narrower, wholly {side} "
            "the training range)"
        )

    shown = "; ".join(one(int(j)) for j in cols[:named])
    more = f" (and {cols.size - named} more features)" if cols.size > named else ""
    return (
        f"X looks like data in other units than the training data in {cols.size} of "
        f"{lower.size} features: {shown}{more}. The values of a feature span at most "
        f"1/{1 / UNITS_FRACTION:g} of its training range and lie wholly outside it; the likely "
        "cause is units too small (kilograms against a model fitted in grams, metres against "
        "millimetres), which sends every row to one class. Transform X as the training data "
        "were. To silence this: warnings.filterwarnings('ignore', "
        "category=bayesrule.UnitsWarning)."
    )
