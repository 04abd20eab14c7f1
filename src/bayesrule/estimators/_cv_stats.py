"""RDA-CV's statistic and the bookkeeping of its search.

:class:`CrossValidatedStats` (the statistics of all the data and the
candidates' held-out scores), the table of candidates scored so far and the
order in which they are preferred, and the k-fold structure of a list of splits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any, NamedTuple, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.model_selection import StratifiedKFold

from .._util.validation import TooFewRows
from ..stats import ScatterStats, StatisticsError, encode
from ..stats.schema import bound, nested, shared

__all__ = ["CrossValidatedStats", "Rows"]

_F = NDArray[np.float64]


@dataclass(frozen=True)
class CrossValidatedStats:
    """The statistic of :class:`RegularizedDiscriminantAnalysisCV`.

    Parameters
    ----------
    total : ScatterStats
        The statistics of all the data (the final model is derived from them).
    cv_points : ndarray of shape (n_candidates, 3)
        The ``(alpha, gamma, ridge)`` of every candidate scored.
    cv_scores : ndarray of shape (n_candidates,)
        Mean held-out score of each candidate (``-inf`` where a class
        covariance was singular on some split).
    cv : str
        A description of the cross-validation that gave the scores (the
        ``repr`` of ``cv``; a splitter object is not kept).
    cv_log_likelihoods : ndarray of shape (n_candidates,), optional
        Mean held-out log posterior of the true class of each candidate
        (``-inf`` where ``cv_scores`` is): the tie-break of held-out
        accuracies (see :func:`ranked`). Missing from model files written
        before it existed; the choice then follows ``cv_scores`` alone.

    Notes
    -----
    Held-out scores depend on every row of every split, not on sums over
    rows, so two such statistics cannot be merged or subtracted (a
    ``StatisticsError``); ``from_data`` needs the cross-validation settings,
    so use ``RegularizedDiscriminantAnalysisCV().statistics(X, y)``.
    """

    total: ScatterStats = field(metadata=nested("ScatterStats"))
    # (alpha, gamma, ridge) of each candidate; -inf marks one where a class
    # covariance was singular
    cv_points: NDArray[np.float64] = field(metadata=shared("M", "3", low=0.0))
    cv_scores: NDArray[np.float64] = field(metadata=shared("M", allow_neg_inf=True))
    cv: str = ""
    cv_log_likelihoods: NDArray[np.float64] = field(
        default=cast(Any, None),
        kw_only=True,
        metadata=bound("M", allow_nonfinite=False, allow_neg_inf=True),
    )

    @property
    def classes(self) -> NDArray[Any]:
        return self.total.classes

    @property
    def counts(self) -> NDArray[np.int64]:
        return self.total.counts

    @property
    def weights(self) -> _F:
        return self.total.weights

    @property
    def n_features(self) -> int:
        return self.total.n_features

    @property
    def n_classes(self) -> int:
        return self.total.n_classes

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> CrossValidatedStats:
        raise StatisticsError(_NOT_STREAMABLE)

    @classmethod
    def from_data(
        cls, X: Any, y: Any, sample_weight: Any = None, *, classes: Any = None
    ) -> CrossValidatedStats:
        raise StatisticsError(
            "CrossValidatedStats need the cross-validation settings; use "
            "RegularizedDiscriminantAnalysisCV(...).statistics(X, y)."
        )

    def merge(self, other: Any) -> CrossValidatedStats:
        raise StatisticsError(_NOT_STREAMABLE)

    def subtract(self, other: Any) -> CrossValidatedStats:
        raise StatisticsError(_NOT_STREAMABLE)

    def allclose(self, other: Any, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        return (
            isinstance(other, CrossValidatedStats)
            and self.cv_scores.shape == other.cv_scores.shape
            and self.cv_points.shape == other.cv_points.shape
            and self.total.allclose(other.total, rtol, atol)
            and bool(np.array_equal(self.cv_points, other.cv_points))
            and bool(np.allclose(self.cv_scores, other.cv_scores, rtol=rtol, atol=atol))
            and (self.cv_log_likelihoods is None) == (other.cv_log_likelihoods is None)
            and (
                self.cv_log_likelihoods is None
                or bool(
                    np.allclose(
                        self.cv_log_likelihoods, other.cv_log_likelihoods, rtol=rtol, atol=atol
                    )
                )
            )
        )


_NOT_STREAMABLE = (
    "cross-validation scores cannot be merged or subtracted (each held-out score "
    "depends on every row of its training split); fit RegularizedDiscriminantAnalysisCV "
    "on all the data, or use RegularizedDiscriminantAnalysis with the chosen alpha_, "
    "gamma_, ridge_ and target to stream"
)


def _check_finite(cov: _F) -> None:
    if not np.all(np.isfinite(cov)):
        raise ValueError(
            "a class covariance matrix of a training split is not finite: X holds "
            "values so large that their squares overflow float64; rescale X."
        )


class _Table:
    """The candidates scored so far: ``(alpha, gamma, ridge)``, held-out score and log-likelihood."""

    def __init__(self, band: Any = None) -> None:
        self.points: list[_F] = []
        self.scores: list[_F] = []
        self.log_liks: list[_F] = []
        self.band = band

    def add(self, points: _F, scores: _F, log_liks: _F) -> None:
        self.points.append(np.asarray(points, dtype=float).reshape(-1, 3))
        self.scores.append(np.asarray(scores, dtype=float).ravel())
        self.log_liks.append(np.asarray(log_liks, dtype=float).ravel())

    def add_grid(self, alphas: _F, gammas: _F, ridges: _F, scores: _F, log_liks: _F) -> None:
        """``scores`` of shape (A, G * R), candidate ``i * R + j`` = ``(gammas[i], ridges[j])``."""
        a, g, r = np.meshgrid(alphas, gammas, ridges, indexing="ij")
        points = np.column_stack([a.ravel(), g.ravel(), r.ravel()])
        scores, log_liks = np.asarray(scores).ravel(), np.asarray(log_liks).ravel()
        if self.points:  # a candidate scored before keeps its first score
            seen = {tuple(row) for row in np.concatenate(self.points).tolist()}
            new = np.array([tuple(row) not in seen for row in points.tolist()])
            points, scores, log_liks = points[new], scores[new], log_liks[new]
        self.add(points, scores, log_liks)

    def arrays(self) -> tuple[_F, _F, _F]:
        return (
            np.concatenate(self.points),
            np.concatenate(self.scores),
            np.concatenate(self.log_liks),
        )

    def best(self) -> tuple[float, float, float]:
        points, scores, log_liks = self.arrays()
        return ranked(points, scores, log_liks, self.band)[0]


def accuracy_band(n_rows: float, width: float = 1.0) -> Any:
    """The band of ``width`` standard errors of a held-out accuracy over ``n_rows`` rows.

    A function of the best accuracy ``a``: ``width * sqrt(a (1 - a) / n_rows)``,
    with the binomial standard error of ``a`` measured on ``n_rows`` held-out rows.
    """
    n = max(float(n_rows), 1.0)

    def band(best: float) -> float:
        return float(width * np.sqrt(max(best * (1.0 - best), 0.0) / n))

    return band


def ranked(
    points: _F, scores: _F, log_liks: _F | None = None, band: Any = None
) -> list[tuple[float, float, float]]:
    """Candidates with a finite score, best first.

    Without ``band``: by score; ties (scores equal to 1e-12) go to the more
    regularised candidate: smaller alpha, then larger ridge, then larger
    gamma. With ``band`` (a function of the best score, such as
    :func:`accuracy_band`) and ``log_liks``: the candidates whose score is
    within ``band(best)`` of the best come first, ordered by held-out
    log-likelihood (its ties as above); the others follow, by score.
    Differences of held-out accuracy smaller than its standard error are
    noise, most of all on small tables, where many candidates tie; the
    log-likelihood, a proper score that sees each row's posterior and not
    only its argmax, then decides: the one-standard-error rule (Hastie,
    Tibshirani and Friedman, section 7.10), with the best log-likelihood in
    the band in place of the simplest model.
    """
    finite = np.flatnonzero(np.isfinite(scores))
    if finite.size == 0:
        raise ValueError(
            "every (alpha, gamma, ridge) candidate gave a singular class covariance on some "
            "split; add gammas > 0 or ridges > 0, or set reg_param > 0."
        )

    def order(idx: NDArray[np.intp], key: _F) -> list[int]:
        rounded = np.round(key[idx], 12)
        o = np.lexsort((-points[idx, 1], -points[idx, 2], points[idx, 0], -rounded))
        return [int(i) for i in idx[o]]

    chosen = order(finite, scores)
    if band is not None and log_liks is not None:
        best = float(scores[finite].max())
        near = (scores[finite] >= best - band(best) - 1e-12) & np.isfinite(log_liks[finite])
        if near.any():
            chosen = order(finite[near], log_liks) + order(finite[~near], scores)
    return [tuple(float(v) for v in points[i]) for i in chosen]  # type: ignore[misc]


#: the alpha sweep's step: candidates this close in alpha are neighbours
ALPHA_STEP = 0.02
#: alphas adjacent among those scored are neighbours when at most this far apart
NEIGHBOUR_ALPHA_GAP = 0.1


def auto_alphas(n_features: int) -> _F:
    """The grid's alphas of ``alphas='auto'``: the sweep's lattice up to 100 features, else (0, 1).

    Up to 100 features a grid alpha costs one eigendecomposition of at most
    100 x 100 per class and split, so every alpha of the lattice (steps of
    ``ALPHA_STEP``) is scored at every ``(gamma, ridge)``; above, LDA's and
    QDA's ends, refined by the sweep.
    """
    if n_features <= 100:
        return np.round(np.linspace(0.0, 1.0, int(round(1.0 / ALPHA_STEP)) + 1), 12)
    return np.array([0.0, 1.0])


def neighbourhood_means(points: _F, values: _F) -> _F:
    """Each candidate's value averaged with its scored neighbours' (``-inf`` stays ``-inf``).

    Neighbours: alphas adjacent (or equal) among the alphas scored and at
    most ``NEIGHBOUR_ALPHA_GAP`` (0.1) apart, gammas and ridges adjacent (or
    equal) among the values scored; a neighbour with a non-finite value (a
    singular covariance) is left out. On the lattice of ``ALPHA_STEP`` the
    alphas 0.02 apart; where only the coarse alphas of the refined search
    were scored (:mod:`._rda_lattice`), those 0.1 apart. A held-out score
    measured on few rows is noisy: a candidate whose score stands alone
    above its neighbours' is most likely lucky, one on a plateau is not.
    """
    points = np.asarray(points, dtype=float)
    values = np.asarray(values, dtype=float)
    idx = [np.searchsorted(np.unique(points[:, j]), points[:, j]) for j in (0, 1, 2)]
    near = np.abs(points[:, None, 0] - points[None, :, 0]) <= NEIGHBOUR_ALPHA_GAP + 1e-9
    for j in idx:
        near &= np.abs(j[:, None] - j[None, :]) <= 1
    finite = np.isfinite(values)
    near &= finite[None, :]
    total = near.astype(float) @ np.where(finite, values, 0.0)
    out = total / np.maximum(near.sum(axis=1), 1)
    return np.where(finite, out, -np.inf)


def _fold_structure(
    splits: list[tuple[NDArray[np.intp], NDArray[np.intp]]], n: int
) -> tuple[list[NDArray[np.intp]] | None, NDArray[np.intp]]:
    """For k-fold-like splits, the test folds and the rows in no test fold.

    When the test sets are disjoint and each training set is exactly the
    other rows, each training split is the merge of the other folds (and of
    the rows that are never held out). Otherwise ``(None, [])``.
    """
    owner = np.full(n, -1)
    for i, (_, test) in enumerate(splits):
        if np.any(owner[test] >= 0) or np.unique(test).size != test.size:
            return None, np.empty(0, dtype=np.intp)
        owner[test] = i
    for i, (train, _) in enumerate(splits):
        expected = np.flatnonzero(owner != i)
        if train.size != expected.size or not np.array_equal(np.sort(train), expected):
            return None, np.empty(0, dtype=np.intp)
    return [test for _, test in splits], np.flatnonzero(owner < 0)


class HeldOut(NamedTuple):
    """One split: its training rows' statistics and its held-out rows (X, class codes, weights)."""

    train: ScatterStats
    X: Any  # NumPy, or an array of the rows' namespace on their device
    yi: NDArray[np.intp]
    w: _F


class Rows:
    """The rows a cross-validated search reads: NumPy rows in host memory.

    The seam an engine replaces (the array API backend's rows live on a
    device): ``statistics(idx)`` is the :class:`ScatterStats` of the rows
    ``idx`` (all of them for None), ``held_out(idx)`` those rows as the
    held-out scoring reads them (an array the scoring's products accept:
    NumPy here, the device's namespace there), ``split_X`` what a
    splitter's ``split`` is given, and ``after(result)`` the estimator's
    deferred check of a result computed from the rows.
    """

    def __init__(self, X: _F, y: NDArray[Any], w: _F, classes: NDArray[Any]) -> None:
        self.X, self.y, self.w, self.classes = X, y, w, classes
        self.n = int(X.shape[0])
        self.split_X = X

    def statistics(self, idx: NDArray[np.intp] | None) -> ScatterStats:
        if idx is None:
            return ScatterStats.from_data(self.X, self.y, self.w, classes=self.classes)
        return ScatterStats.from_data(self.X[idx], self.y[idx], self.w[idx], classes=self.classes)

    def held_out(self, idx: NDArray[np.intp]) -> Any:
        return self.X[idx]


class SplitStatistics:
    """The statistics of all the data and of each split's training rows, from one pass.

    With k-fold-like splits (:func:`_fold_structure`) the folds' statistics
    are computed once and each training split is the total less its fold
    (``subtract``), with the training rows' own bounds (those of a plain fit
    on them: the merge of the other parts' bounds); otherwise each training
    split's statistics are computed when asked for. ``rows`` (:class:`Rows`)
    computes the statistics of a set of rows, where the rows live.
    """

    def __init__(self, splits: list[tuple[NDArray[np.intp], NDArray[np.intp]]], rows: Rows) -> None:
        self.splits, self.rows = splits, rows
        parts, rest = _fold_structure(splits, rows.n)
        self.parts: list[ScatterStats] | None = None
        if parts is not None:
            self.parts = [rows.statistics(idx) for idx in parts + ([rest] if rest.size else [])]
            self.total = _merge_all(self.parts)
        else:
            self.total = rows.statistics(None)

    def of_split(self, i: int) -> ScatterStats:
        """The statistics of split ``i``'s training rows."""
        if self.parts is None:
            return self.rows.statistics(self.splits[i][0])
        # the other folds and the rows never held out: all the data less fold i
        others = [st for j, st in enumerate(self.parts) if j != i]
        return self.total.subtract(self.parts[i]).with_bounds(
            np.min([st.lower for st in others], axis=0),
            np.max([st.upper for st in others], axis=0),
        )


def _merge_all(parts: list[ScatterStats]) -> ScatterStats:
    total = parts[0]
    for part in parts[1:]:
        total = total.merge(part)
    return total


def check_cv(cv: Any) -> Any:
    """``cv`` as scikit-learn reads it, or a ValueError saying what is accepted."""
    cv = 5 if cv is None else cv
    expected = (
        "cv must be 'auto', an int >= 2 (that many stratified folds), None (5 folds), a "
        "cross-validation splitter (an object with a split(X, y) method, such as "
        "StratifiedKFold) or an iterable of (train, test) index arrays"
    )
    if isinstance(cv, (bool, np.bool_)) or isinstance(cv, (str, bytes)):
        raise ValueError(f"{expected}; got {cv!r}.")
    if isinstance(cv, Integral):
        if int(cv) < 2:
            raise ValueError(f"{expected}; got {cv!r}.")
        return int(cv)
    if isinstance(cv, Real) or not (hasattr(cv, "split") or isinstance(cv, Iterable)):
        raise ValueError(f"{expected}; got {cv!r} ({type(cv).__name__}).")
    return cv


def cv_splits(
    given: Any, random_state: Any, Xv: Any, y: NDArray[Any], classes: NDArray[Any]
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """The (train, test) row indices of every split of the ``cv`` parameter ``given``, checked.

    An int is that many stratified folds shuffled with ``random_state``.
    """
    n = Xv.shape[0]
    cv = check_cv(given)
    if isinstance(cv, int):
        counts = np.bincount(encode(y, classes), minlength=classes.size)
        smallest = int(counts.min())
        n_splits = min(cv, smallest)
        if n_splits < 2:
            label = classes[int(np.argmin(counts))]
            label = label.item() if hasattr(label, "item") else label
            raise TooFewRows(
                f"cv={cv} needs at least 2 samples of every class; class {label!r} has "
                f"{smallest} (the fold that holds out its only row trains without it): give "
                "it more rows, or drop it."
            )
        cv = StratifiedKFold(n_splits, shuffle=True, random_state=random_state)
    raw = cv.split(Xv, y) if hasattr(cv, "split") else cv
    splits = []
    for i, pair in enumerate(raw):
        try:
            train, test = pair
            train = np.asarray(train).ravel()
            test = np.asarray(test).ravel()
        except (TypeError, ValueError):
            raise ValueError(
                f"cv must give (train, test) pairs of row indices; split {i} is {pair!r}."
            ) from None
        for name, idx in (("train", train), ("test", test)):
            if idx.dtype == bool:
                if idx.size != n:
                    raise ValueError(
                        f"split {i}: the {name} mask has {idx.size} entries for {n} rows."
                    )
                idx = np.flatnonzero(idx)
            if idx.size and (idx.dtype.kind not in "iu" or idx.min() < -n or idx.max() >= n):
                raise ValueError(
                    f"split {i}: {name} indices must be integers in [0, {n}); "
                    f"got {idx[:5].tolist()}..."
                )
            if name == "train":
                train = np.asarray(idx, dtype=np.intp) % max(n, 1)
            else:
                test = np.asarray(idx, dtype=np.intp) % max(n, 1)
        if train.size == 0 or test.size == 0:
            raise ValueError(f"split {i} has an empty training or test set.")
        splits.append((train, test))
    if not splits:
        raise ValueError(f"cv={given!r} gave no (train, test) split.")
    return splits
