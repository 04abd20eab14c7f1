"""Data far outside the training range: the warnings and the rule that raises them.

:class:`OutOfRangeWarning` (a feature's values far beyond its training range)
and :class:`UnitsWarning` (values that look like data in other units) are
warned by the prediction methods of every estimator, through
:func:`warn_out_of_range`.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._util.row_sample import SAMPLE_ROWS, run_rows, runs_view, sample_runs
from ..stats import block_bounds
from ._units import far_outside, units_message, units_suspects

__all__ = ["OutOfRangeWarning", "UnitsWarning", "stats_bounds", "warn_out_of_range"]


class OutOfRangeWarning(UserWarning):
    """Data to predict lie far outside the range of the training data.

    Raised (as a warning) by the prediction methods when some feature has
    more than :data:`OUT_OF_RANGE_FRACTION` (1%) of its values beyond the
    training range by more than :data:`OUT_OF_RANGE_MARGIN` (2) times the
    range's width (see
    :meth:`GenerativeClassifier.feature_range_`). The usual cause is data on
    another scale than the training data (pixels in 0-255 against a model
    fitted on pixels in [0, 1]). Silence it with the standard filter::

        warnings.filterwarnings("ignore", category=bayesrule.OutOfRangeWarning)
    """


class UnitsWarning(OutOfRangeWarning):
    """Data to predict look like data in other units: a tiny, far-off part of a feature's range.

    Warned by the prediction methods when, in a batch of 20 rows or more,
    a feature's values span at most a tenth of its training range and lie
    wholly outside it, at least ten of their own widths away (the rule is in
    :mod:`bayesrule.estimators._units`): the signature of units too small,
    such as kilograms given to a model fitted in grams. A subclass of
    :class:`OutOfRangeWarning`, whose filter silences both.
    """


#: A feature is out of range when more than ``OUT_OF_RANGE_FRACTION`` of its
#: values (of the rows of one call) lie below ``lower - OUT_OF_RANGE_MARGIN *
#: width`` or above ``upper + OUT_OF_RANGE_MARGIN * width`` (``width = upper -
#: lower`` of the training data): beyond a band five times as wide as the
#: training range, centred on it. A single such value in a batch of 100 rows
#: or more does not count (heavy tails produce them); in a smaller batch it does.
OUT_OF_RANGE_FRACTION = 0.01
OUT_OF_RANGE_MARGIN = 2.0
#: A batch of twice as many rows or more is judged on a sample of this many:
#: 32 runs of 32 consecutive rows, their starts evenly spaced over the batch
#: (:mod:`bayesrule._util.row_sample`; the fraction above is a rate, which the
#: sample estimates well, and the check then costs little next to the prediction).
OUT_OF_RANGE_ROWS = SAMPLE_ROWS

#: features named in the warning's message
_NAMED = 5


def stats_bounds(stats: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """The statistics' feature bounds (RDA-CV's are those of its ``total``), or None."""
    if stats is not None and not hasattr(stats, "lower"):
        stats = getattr(stats, "total", None)
    lo, hi = getattr(stats, "lower", None), getattr(stats, "upper", None)
    if lo is None or hi is None:
        return None
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


class _Sample:
    """The rows of a batch that the check judges (:func:`sample_runs`), read without a copy.

    A dense array's sample is a ``(runs, rows, features)`` view, reduced over
    its first two axes; a sparse matrix's rows are taken by index; a batch
    below ``2 * OUT_OF_RANGE_ROWS`` rows is judged whole.
    """

    def __init__(self, Xv: Any) -> None:
        n = Xv.shape[0]
        runs = sample_runs(n)
        self.shape = (runs[0] * runs[1], Xv.shape[1])
        if runs[0] == 1:
            self._rows: Any = Xv
        elif isinstance(Xv, np.ndarray):
            self._rows = runs_view(Xv, runs)
        else:
            self._rows = Xv[run_rows(runs)]

    def bounds(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per feature, the smallest and largest finite value (as :func:`block_bounds`)."""
        rows = self._rows
        if rows.ndim == 2:
            return block_bounds(rows)
        lo = np.asarray(rows.min(axis=(0, 1)), dtype=np.float64)
        hi = np.asarray(rows.max(axis=(0, 1)), dtype=np.float64)
        odd = np.flatnonzero(~(np.isfinite(lo) & np.isfinite(hi)))
        if odd.size:  # NaN or infinity in a column: its finite values alone
            lo[odd], hi[odd] = block_bounds(self.columns(odd))
        return lo, hi

    def columns(self, cols: NDArray[np.intp]) -> NDArray[Any]:
        """The sample's values of the features ``cols``, a dense (rows, len(cols)) array."""
        rows = self._rows
        part = rows[:, cols] if rows.ndim == 2 else rows[:, :, cols].reshape(-1, cols.size)
        return np.asarray(part.toarray() if hasattr(part, "toarray") else part)


def warn_out_of_range(est: Any, Xv: Any, seen: Any = None) -> None:
    """Warn (:class:`OutOfRangeWarning`) if some feature of ``Xv`` is far outside its range.

    Also warns :class:`UnitsWarning` for features whose values look like
    data in smaller units (:func:`._units.units_suspects`, from the same
    sample and bounds).

    The rule (:data:`OUT_OF_RANGE_FRACTION`, :data:`OUT_OF_RANGE_MARGIN`):
    more than 1% of a feature's values below ``lower - 2 width`` or above
    ``upper + 2 width`` (in a batch of 2048 rows or more, 1% of a sample of
    1024 rows in evenly spaced runs: :data:`OUT_OF_RANGE_ROWS`). Only
    features with a known range of positive width are judged. Two
    reductions over ``Xv`` (its per-feature minimum and maximum) decide
    which features could be out; only those are counted. ``seen``: those
    reductions (of the sample) already made, NaN where a value is NaN (the
    count models take them with their product); they are made again where
    they are not finite. Its first part may be one number no larger than
    any value of the sample (the least value of ``Xv``): the features the
    maxima and that number cannot clear (:func:`_in_doubt`) then have their
    minimum taken; the others can be flagged by neither rule whatever their
    minimum, so that the warnings are those of the exact minima (with no
    feature in doubt, nothing more is computed).
    """
    bounds = stats_bounds(getattr(est, "stats_", None))
    if bounds is None or Xv.shape[0] == 0:
        return
    Xs = _Sample(Xv)
    n = Xs.shape[0]
    lo, hi = bounds
    with np.errstate(invalid="ignore", over="ignore"):
        width = hi - lo
        judged = np.isfinite(width) & (width > 0)
        if not judged.any():
            return
        fence_lo, fence_hi = _fences(lo, hi)
        if seen is None or not (np.all(np.isfinite(seen[0])) and np.all(np.isfinite(seen[1]))):
            seen = Xs.bounds()
        elif np.ndim(seen[0]) == 0:
            low, seen_hi = float(seen[0]), np.asarray(seen[1])
            doubt = np.flatnonzero(_in_doubt(low, seen_hi, lo, hi, judged))
            if doubt.size == 0:
                return  # no feature that either rule could flag, whatever its least value
            seen = _sample_minima(Xs, low, seen_hi, doubt)
        seen_lo, seen_hi = seen
        maybe = judged & ((seen_lo < fence_lo) | (seen_hi > fence_hi))
        far = np.empty(0, dtype=np.intp)
        if maybe.any():
            cols = np.flatnonzero(maybe)
            part = Xs.columns(cols)
            outside = np.count_nonzero((part < fence_lo[cols]) | (part > fence_hi[cols]), axis=0)
            far = cols[outside > OUT_OF_RANGE_FRACTION * n]
    units = units_suspects(Xs, lo, hi, seen_lo, seen_hi)
    if far.size and units.size:
        far = np.setdiff1d(far, units)  # the more specific cause is reported
    if far.size == 0 and units.size == 0:
        return
    names = getattr(est, "feature_names_in_", None)

    def label(j: int) -> str:
        return repr(str(names[j])) if names is not None else f"{j}"

    if units.size:
        warnings.warn(
            units_message(units, label, lo, hi, seen_lo, seen_hi, _NAMED),
            UnitsWarning,
            stacklevel=caller_level(),
        )
    if far.size == 0:
        return
    shown = "; ".join(
        f"feature {label(int(j))}: training range [{lo[j]:.4g}, {hi[j]:.4g}], "
        f"here [{seen_lo[j]:.4g}, {seen_hi[j]:.4g}]"
        for j in far[:_NAMED]
    )
    more = f" (and {far.size - _NAMED} more features)" if far.size > _NAMED else ""
    warnings.warn(
        f"X lies far outside the range of the training data in {far.size} of "
        f"{lo.size} features: {shown}{more}. More than "
        f"{OUT_OF_RANGE_FRACTION:.0%} of these features' values are beyond the training "
        f"range by more than {OUT_OF_RANGE_MARGIN:g} times its width. The likely cause is data on another scale than "
        "the training data (e.g. pixels in 0-255 against a model fitted on pixels in "
        "[0, 1]): transform X as the training data were. To silence this: "
        "warnings.filterwarnings('ignore', category=bayesrule.OutOfRangeWarning).",
        OutOfRangeWarning,
        stacklevel=caller_level(),
    )


def _in_doubt(
    low: float,
    seen_hi: NDArray[np.float64],
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    judged: NDArray[np.bool_],
) -> NDArray[np.bool_]:
    """The judged features that either rule could flag, knowing each one's largest value in
    the sample (``seen_hi``) and only a number ``low`` no larger than its least.

    Each rule's condition on a feature's least value ``m >= low`` is necessary for
    it to flag the feature, and is written so that it implies the one here, in the
    same floating-point operations: out of range below, ``m < lower - 2 width``
    (then ``low`` is too); units below, ``seen_hi < lower`` with a gap
    ``lower - seen_hi`` of a quarter width (no least value in it); units above,
    ``m > upper`` with ``m - upper`` a quarter width, which ``seen_hi >= m`` then
    reaches too (a rounded subtraction is monotone). Out of range above reads
    ``seen_hi`` alone. The fences and the units test are the rules' own functions
    (:func:`_fences`, :func:`._units.far_outside` with ``least = largest = seen_hi``). A feature outside this set is flagged by neither rule
    whatever its least value (from ``low`` up to ``seen_hi``).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        fence_lo, fence_hi = _fences(lo, hi)
        return judged & (
            (low < fence_lo)
            | (seen_hi > fence_hi)
            # both units conditions at once: the units rule's own test, from seen_hi alone
            | far_outside(lo, hi, seen_hi, seen_hi)
        )


def _fences(
    lo: NDArray[np.float64], hi: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The out-of-range rule's fences, ``lower - 2 width`` and ``upper + 2 width``: the one
    spelling of them (:func:`warn_out_of_range` and :func:`_in_doubt`)."""
    width = hi - lo
    return lo - OUT_OF_RANGE_MARGIN * width, hi + OUT_OF_RANGE_MARGIN * width


def _sample_minima(
    Xs: _Sample, low: float, seen_hi: NDArray[np.float64], cols: NDArray[np.intp]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The sample's per-feature bounds where only its maxima and a lower bound ``low`` of
    its values are known: the features in doubt ``cols`` (:func:`_in_doubt`) get their own
    minimum (a reduction of those columns of the sample), the others ``low``, with which
    no rule flags them (the warnings and their texts are those of the exact minima)."""
    seen_lo = np.full(seen_hi.shape, low)
    seen_lo[cols] = Xs.columns(cols).min(axis=0)
    return seen_lo, seen_hi


#: modules whose frames a warning skips to reach the user's call (scikit-learn's
#: ``score`` calls ``predict``)
_INSIDE = ("bayesrule.", "sklearn.")


def caller_level() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside bayesrule."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_INSIDE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def check_squared_range(
    bounds: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
    n_rows: int,
    names: Any = None,
    *,
    noun: str = "feature",
    advice: str = "rescale X.",
) -> None:
    """ValueError naming the first feature whose values are so far apart that the sum of
    their squared deviations may overflow float64.

    With a range ``r`` over ``m`` rows, any class's sum of squared deviations (a
    variance's, a scatter's diagonal; a cross product's, by Cauchy-Schwarz) is at
    most ``m r**2``: where that is infinite, the statistics of the models that
    square deviations (Gaussian and kernel ones) overflow, and their later checks
    could only say that some covariance is not finite. Empty and unknown ranges
    pass. ``noun`` and ``advice`` word the message (MixedNB's columns)."""
    if bounds is None:
        return
    lo, hi = bounds
    with np.errstate(over="ignore", invalid="ignore"):
        span = hi - lo
        bound = span * span * float(max(n_rows, 1))
        over = np.flatnonzero(np.isinf(bound) & (lo <= hi))
    if over.size:
        from ..models import feature_name

        j = int(over[0])
        raise ValueError(
            f"{noun} {feature_name(names, j)!r} holds values so far apart (from {lo[j]:g} to "
            f"{hi[j]:g}) that their squared deviations overflow float64; {advice}"
        )
