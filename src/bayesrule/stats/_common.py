"""What the statistics share: the protocol, the base class, its error, and helpers.

Label encoding, class alignment, blocking of rows, and the Chan-Golub-LeVeque
downdate that subtraction uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, ClassVar, Protocol, TypeVar, cast, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._util import parallel as _parallel

#: Rows are processed in blocks of about this many float64 values (16 MiB), so
#: that the temporary copies a block needs stay small next to the training
#: matrix; a buffer this size is also reused by the allocator between calls
#: instead of being mapped (and page-faulted) afresh.
BLOCK_VALUES = 1 << 21

#: Relative size of rounding residue in a difference of weights: removing
#: weight ``W_B`` from ``W_C`` may leave ``W_C - W_B`` as low as
#: ``-ROUNDING * W_C`` before it counts as removing more than is held, and a
#: remainder up to ``ROUNDING * W_C`` counts as nothing left.
ROUNDING = 1e-9

#: A second moment left by a downdate is "clearly negative" (the subtracted
#: statistics were not part of these) below ``-NEGATIVE_MOMENT`` times its scale.
NEGATIVE_MOMENT = 1e-8


class StatisticsError(ValueError):
    """Two statistics cannot be merged or subtracted.

    Raised for statistics of different types, of different feature counts
    ("expected 784 features, got 783"), of class labels of different kinds,
    and when a subtraction removes what the statistics do not hold (a class,
    a value, more rows or weight than there are). A ``ValueError``, so that
    callers validating input catch it with the rest.
    """


_S = TypeVar("_S", bound="Statistic")


@runtime_checkable
class Statistic(Protocol):
    r"""What a derivation (``Model.from_stats``) and a reducer need of a statistic.

    A statistic summarises the rows ``(X, y, w)`` of a data set per class. It
    holds the sorted class labels ``classes``, the number of rows with positive
    weight per class ``counts`` and their weight ``weights``, plus its own
    arrays. Writing ``s(A)`` for ``from_data`` of the rows ``A``, every
    statistic obeys these laws (checked with Hypothesis in
    ``tests/test_stats_laws.py``; equal means :meth:`allclose` to rounding):

    * identity: ``s.merge(empty(s.classes, p)) == s``;
    * associativity and commutativity of ``merge``;
    * ``s(A).merge(s(B)) == s(A ∪ B)``, also when ``A`` and ``B`` saw
      different classes (``merge`` unites the classes);
    * a row of integer weight ``w`` counts as ``w`` copies of it (except in
      ``counts``, which counts distinct rows);
    * ``s(A ∪ B).subtract(s(B)) == s(A)`` with ``A``'s classes widened to
      those of ``A ∪ B``: a class left with no rows stays declared, with
      zero weight and the empty statistic.

    Every incompatibility (types, feature counts, label kinds, removing what
    is not held) raises :class:`StatisticsError`.
    """

    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: NDArray[np.float64]

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        ...

    @property
    def n_classes(self) -> int:
        """Number of declared classes (``classes.size``)."""
        ...

    @classmethod
    def empty(cls: type[_S], classes: ArrayLike, n_features: int) -> _S:
        """The identity of ``merge``: no rows for any of ``classes``."""
        ...

    @classmethod
    def from_data(
        cls: type[_S],
        X: Any,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
    ) -> _S:
        """The statistic of the rows ``(X, y, sample_weight)``."""
        ...

    def merge(self: _S, other: _S) -> _S:
        """The statistic of the union of both data sets."""
        ...

    def subtract(self: _S, other: _S) -> _S:
        """The statistic of these rows without those of ``other``."""
        ...

    def allclose(self: _S, other: _S, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether both statistics agree to rounding."""
        ...


def as_classes(classes: ArrayLike) -> NDArray[Any]:
    """Sorted unique labels as a 1-D array."""
    c = np.unique(np.asarray(classes))
    if c.ndim != 1:
        raise ValueError(f"classes must be 1-dimensional; got shape {c.shape}.")
    return c


def class_label(classes: NDArray[Any], k: Any) -> Any:
    """Label ``k`` of ``classes`` as a Python value (``'cat'`` or ``3``), for messages.

    ``classes[k]`` is a ``str`` for labels held in an object array (pandas
    strings), a NumPy scalar otherwise (whose ``repr`` is ``np.int64(3)``);
    a one-element slice's ``tolist`` gives the plain value in both cases.
    """
    k = int(k)
    return np.asarray(classes)[k : k + 1].tolist()[0]


def encode(y: ArrayLike, classes: NDArray[Any]) -> NDArray[np.intp]:
    """Map labels to their index in ``classes``; unknown labels raise ValueError."""
    y = np.asarray(y)
    if classes.size == 0:
        raise ValueError("no classes were declared, so no label can be encoded.")
    try:
        idx = np.searchsorted(classes, y)
    except TypeError:
        raise ValueError(
            f"labels of type {y.dtype} cannot be compared with the classes {classes.tolist()}."
        ) from None
    idx = np.clip(idx, 0, classes.size - 1)
    unknown = classes[idx] != y
    if np.any(unknown):
        bad = np.unique(y[unknown])
        raise ValueError(
            # scikit-learn's wording (GaussianNB.partial_fit) first
            f"The target label(s) {bad[:10]} in y do not exist in the initial classes "
            f"{classes[:20]}. y contains labels {bad.tolist()[:10]} that are not among the "
            f"classes {classes.tolist()[:20]}; declare every class up front (classes=...)."
        )
    return idx.astype(np.intp)


def prepare(
    X: Any, y: ArrayLike, sample_weight: ArrayLike | None, classes: ArrayLike | None
) -> tuple[Any, NDArray[Any], NDArray[np.intp], NDArray[np.float64], bool]:
    """The common start of every ``from_data``: ``(X, classes, codes, weights, unit)``.

    ``X`` is checked to be 2-D (dense arrays are not copied; sparse matrices
    are passed through), the classes default to the labels of ``y``, labels are
    encoded against them, and ``unit`` says whether every weight is 1.
    """
    if not hasattr(X, "tocsr"):
        X = np.asarray(X)
    if len(X.shape) != 2:
        raise ValueError(f"X must be 2-dimensional; got shape {X.shape}.")
    y = np.asarray(y)
    c = as_classes(y if classes is None else classes)
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    unit = sample_weight is None or bool(np.all(w == 1.0))
    return X, c, encode(y, c), w, unit


def union_classes(a: NDArray[Any], b: NDArray[Any]) -> NDArray[Any]:
    """Sorted union of two label arrays, refusing to mix strings with numbers."""
    if a.size and b.size and (a.dtype.kind in "OUS") != (b.dtype.kind in "OUS"):
        raise StatisticsError(
            f"cannot combine statistics whose class labels are of different kinds: "
            f"{a.tolist()[:5]} and {b.tolist()[:5]}."
        )
    return np.union1d(a, b)


def expand(values: NDArray[Any], own: NDArray[Any], target: NDArray[Any]) -> NDArray[Any]:
    """Place per-class rows of ``values`` (indexed by ``own``) into ``target``'s order.

    Classes missing from ``own`` get zeros, which is the empty statistic.
    """
    if own.shape == target.shape and np.array_equal(own, target):
        return values
    out = np.zeros((target.size,) + values.shape[1:], dtype=values.dtype)
    out[np.searchsorted(target, own)] = values
    return out


def block_slices(n_rows: int, n_features: int) -> Iterator[slice]:
    """Row slices of at most about ``BLOCK_VALUES`` values each."""
    step = max(256, BLOCK_VALUES // max(n_features, 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def check_features(expected: int, got: int, what: str = "statistics") -> None:
    """Raise :class:`StatisticsError` "expected 784 features, got 783" on a mismatch."""
    if expected != got:
        raise StatisticsError(f"expected {expected} features, got {got} ({what}).")


def one_hot_classes(yi: NDArray[np.intp], w: NDArray[np.float64], k: int) -> Any:
    """Sparse ``(k, n)`` CSR matrix whose row ``j`` holds the weights of class ``j``.

    ``one_hot_classes(yi, w, k) @ X`` gives per-class weighted sums in one product.
    """
    import scipy.sparse as sp

    n = yi.size
    return sp.csr_matrix((w, (yi, np.arange(n))), shape=(k, n))


def class_matrix(yi: NDArray[np.intp], w: NDArray[np.float64], k: int) -> Any:
    """``(k, n)`` matrix whose row ``j`` holds the weights of class ``j``'s rows.

    Dense with few classes, so that ``class_matrix(...) @ X`` is one BLAS
    product; sparse (:func:`one_hot_classes`) with many.
    """
    if k > 64:
        return one_hot_classes(yi, w, k)
    H = np.zeros((k, yi.size))
    H[yi, np.arange(yi.size)] = w
    return H


def syrk_add(D: NDArray[np.float64], acc: NDArray[np.float64]) -> None:
    """Add ``D' D`` to the symmetric ``acc`` in place.

    NumPy recognises ``D.T @ D`` and calls BLAS syrk (half the work of a
    general product), and releases the GIL while it runs, so that
    :func:`in_parallel` can run such products side by side.
    """
    if D.shape[0]:
        acc += np.dot(D.T, D)


def row_ranges(n: int, work: float) -> list[tuple[int, int]]:
    """Contiguous ``(start, stop)`` row ranges, one per thread :func:`in_parallel` will use."""
    parts = min(_parallel.thread_count(work), max(1, n // 64))
    edges = np.linspace(0, n, parts + 1).astype(int).tolist()
    return list(zip(edges[:-1], edges[1:], strict=True))


def arrays_close(
    a: NDArray[Any], b: NDArray[Any], rtol: float, atol: float = 0.0, floor: float = 0.0
) -> bool:
    """Entrywise ``|a - b| <= atol + rtol * max(|a|, |b|, floor)`` over the whole array.

    ``floor`` is the scale below which a centred moment is rounding noise: a
    moment that is zero in exact arithmetic (one distinct row, symmetric data)
    is compared on that scale rather than on its own.
    """
    if a.shape != b.shape:
        return False
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)), floor)
    return bool(np.all(np.abs(a - b) <= atol + rtol * scale))


def noise_floor(weights: NDArray[np.float64], means: NDArray[np.float64], order: int) -> float:
    """Scale of a centred moment of ``order`` made of rounding noise alone.

    Centring loses about the digits of ``|mean|``; we take ``W (1e-6 |mean|)^order``
    (far above that loss, far below any real spread).
    """
    return (
        float(np.max(weights, initial=0.0))
        * (1e-6 * float(np.max(np.abs(means), initial=0.0))) ** order
    )


def class_totals(
    yi: NDArray[np.intp], w: NDArray[np.float64], k: int
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Per class: rows with positive weight, and the sum of the weights."""
    counts = np.bincount(yi, weights=(w > 0).astype(float), minlength=k).astype(np.int64)
    return counts, np.bincount(yi, weights=w, minlength=k).astype(np.float64)


#: Rows sampled (at a fixed stride) to estimate provisional class means.
PILOT_ROWS = 8192


def pilot_means(
    X: NDArray[Any], yi: NDArray[np.intp], w: NDArray[np.float64], k: int
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """Rows with positive weight, weight sums, and provisional class centres.

    The centres are the weighted class means of an evenly strided sample of
    at most about ``PILOT_ROWS`` rows (all rows for small data), so no extra
    pass over a large ``X`` is needed. Moments are then accumulated about these
    centres and corrected exactly with the residual sums: with centres close to
    the means (a sample of thousands of rows), nothing is lost, unlike raw sums
    of squares.
    """
    n, p = X.shape
    counts, weights = class_totals(yi, w, k)
    stride = max(1, n // PILOT_ROWS)
    rows = np.arange(0, n, stride)
    ws, ys = w[rows], yi[rows]
    Xs = np.asarray(X[rows], dtype=np.float64)
    sw = np.bincount(ys, weights=ws, minlength=k)
    sums = np.asarray(one_hot_classes(ys, ws, k) @ Xs)
    total = float(sw.sum())
    fallback = sums.sum(axis=0) / total if total > 0 else np.zeros(p)
    centres = np.where(sw[:, None] > 0, sums / np.where(sw > 0, sw, 1.0)[:, None], fallback)
    return counts, weights, centres


#: Rows sampled to estimate whether products about the origin would cancel.
PROBE_ROWS = 1024


def origin_cancellation(X: Any, yi: NDArray[np.intp], w: NDArray[np.float64], k: int) -> float:
    """Estimated ``max_j sum_i w_i x_ij^2 / sum_i w_i (x_ij - m_{y_i j})^2``.

    The largest ratio, over the columns, of the raw to the within-class sum
    of squares, on an evenly strided sample of about ``PROBE_ROWS`` rows: the
    factor by which ``X'X - sum_k W_k m_k m_k'`` would amplify rounding. A
    column without spread in the sample counts as 1 if it is zero there and
    as infinite otherwise, and so does anything non-finite.
    """
    n = X.shape[0]
    stride = max(1, n // PROBE_ROWS)
    Xs = np.asarray(X[::stride], dtype=np.float64)
    ys, ws = yi[::stride], w[::stride]
    sw = np.bincount(ys, weights=ws, minlength=k)
    means = np.asarray(one_hot_classes(ys, ws, k) @ Xs) / np.where(sw > 0, sw, 1.0)[:, None]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        raw = ws @ (Xs * Xs)
        R = Xs - means[ys]
        within = ws @ (R * R)
        ratio = np.where(raw == 0.0, 1.0, raw / within)
    return float(np.max(ratio, initial=1.0)) if np.all(np.isfinite(ratio)) else np.inf


def label_repr(label: Any) -> str:
    """``repr`` of a class label as the user wrote it (``'a'``, not ``np.str_('a')``)."""
    return repr(label.item() if isinstance(label, np.generic) else label)


def _label(classes: NDArray[Any] | None, k: int) -> str:
    return f"class {label_repr(classes[k])}" if classes is not None else f"class number {k}"


def check_removal(
    held: NDArray[np.float64],
    removed: NDArray[np.float64],
    classes: NDArray[Any] | None = None,
    what: str = "weight",
    axes: tuple[str, ...] = ("feature",),
) -> NDArray[np.float64]:
    """``held - removed`` with rounding residue set to 0; StatisticsError if clearly negative.

    ``held`` and ``removed`` are non-negative per-class quantities of shape
    ``(n_classes, ...)``. A difference down to ``-ROUNDING * held`` is rounding
    (clipped to 0), and so is one up to ``+ROUNDING * held`` (set to 0, so that
    removing everything leaves exactly nothing). Anything lower means removing
    more than is held, and the error names the class (first axis) and the
    position along the other ``axes`` (by default, a feature).
    """
    left = held - removed
    tol = ROUNDING * np.abs(held)
    bad = left < -tol
    if np.any(bad):
        at = tuple(int(i[0]) for i in np.nonzero(bad))
        where = _label(classes, at[0])
        for name, i in zip(axes, at[1:], strict=False):
            where = f"{name} {i} of {where}"
        raise StatisticsError(
            f"cannot remove {what} {removed[at]:g} from {where}, which holds {held[at]:g}."
        )
    return np.where(left <= tol, 0.0, left)


def downdate_moments(
    W_C: NDArray[np.float64],
    m_C: NDArray[np.float64],
    M2_C: NDArray[np.float64],
    W_B: NDArray[np.float64],
    m_B: NDArray[np.float64],
    M2_B: NDArray[np.float64],
    *,
    outer: bool = False,
    classes: NDArray[Any] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    r"""Weight, mean and centred second moment of ``A`` from those of ``C = A ∪ B`` and ``B``.

    The Chan-Golub-LeVeque update run backwards:

    .. math::

        W_A = W_C - W_B, \quad
        m_A = m_C + \frac{W_B}{W_A} (m_C - m_B), \quad
        M2_A = M2_C - M2_B - \frac{W_A W_B}{W_C} (m_B - m_A)^2 .

    Parameters
    ----------
    W_C, W_B : ndarray of shape (n_classes, n_features), or (n_classes,) if ``outer``
        Weights (per class and feature in the elementwise form, per class in
        the outer form).
    m_C, m_B : ndarray of shape (n_classes, n_features)
        Weighted means.
    M2_C, M2_B : ndarray
        Centred second moments: ``(n_classes, n_features)`` elementwise
        (``sum w (x - m)^2`` per feature); with ``outer``, scatter matrices
        ``(n_classes, p, p)`` per class, or one ``(p, p)`` pooled over the
        classes (the between-parts terms of all classes are then summed).
    outer : bool
        Use ``(m_B - m_A)(m_B - m_A)'`` rather than the elementwise square.
    classes : ndarray of shape (n_classes,), optional
        Labels, to name the class in errors.

    Returns
    -------
    W_A, m_A, M2_A : ndarray
        Shapes as the inputs. Where nothing is left (``W_A`` within rounding
        of 0) the weight, the mean and (per class) the moment are exactly 0,
        as in the empty statistic.

    Raises
    ------
    StatisticsError
        When more weight is removed than held (beyond ``ROUNDING``), or a
        second moment (a diagonal entry in the outer form) comes out below
        ``-NEGATIVE_MOMENT`` times its scale: ``B`` was not part of ``C``.
        Negative rounding residue above that is clipped to 0.

    Notes
    -----
    The mean's rounding error ``eps |m|`` is amplified by ``W_C / W_A``, so
    removing most of the weight of data far from the origin costs digits; the
    scale below which a negative moment counts as rounding grows accordingly,
    ``M2_C + M2_B + (W_A W_B / W_C)(|m_B - m_A| + u)^2`` with
    ``u = 1e-6 |m| W_C / W_A``.

    References
    ----------
    T. F. Chan, G. H. Golub and R. J. LeVeque, "Updating formulae and a
    pairwise algorithm for computing sample variances", COMPSTAT 1982.
    """
    W_A = check_removal(W_C, W_B, classes)
    left = W_A > 0
    safe = np.where(left, W_A, 1.0)
    f = W_A * W_B / np.where(left, W_C, 1.0)
    ratio = W_B / safe
    amp = W_C / safe
    if outer:
        left_m, ratio, amp, fm = left[:, None], ratio[:, None], amp[:, None], f[:, None]
    else:
        left_m, fm = left, f
    m_A = np.where(left_m, m_C + ratio * (m_C - m_B), 0.0)
    d = np.where(left_m, m_B - m_A, 0.0)
    u = 1e-6 * np.maximum(np.abs(m_C), np.abs(m_B)) * amp
    noise = fm * (np.abs(d) + u) ** 2  # scale of the between-parts term, rounding included
    if outer:
        between = f[:, None, None] * d[:, :, None] * d[:, None, :]
        if M2_C.ndim == 2:  # pooled over the classes
            between, noise = between.sum(axis=0), noise.sum(axis=0)
        M2_A = M2_C - M2_B - between
        diag = np.diagonal(M2_A, axis1=-2, axis2=-1)
        scale = (
            np.abs(np.diagonal(M2_C, axis1=-2, axis2=-1))
            + np.abs(np.diagonal(M2_B, axis1=-2, axis2=-1))
            + noise
        )
    else:
        M2_A = M2_C - M2_B - fm * d * d
        diag = M2_A
        scale = np.abs(M2_C) + np.abs(M2_B) + noise
    bad = diag < -NEGATIVE_MOMENT * scale
    if np.any(bad):
        at = tuple(int(i[0]) for i in np.nonzero(bad))
        where = (
            f"feature {at[-1]} of {_label(classes, at[0])}"
            if diag.ndim == 2
            else f"feature {at[0]}"
        )
        raise StatisticsError(
            f"cannot subtract: the second moment of {where} would be {diag[at]:g} "
            f"(on a scale of {scale[at]:g}); the subtracted statistics are not part of these."
        )
    if outer:
        # only the diagonal must be non-negative; its rounding residue goes
        n = M2_A.shape[-1]
        idx = np.arange(n)
        M2_A = M2_A.copy()
        M2_A[..., idx, idx] = np.maximum(diag, 0.0)
        if M2_A.ndim == 3:
            M2_A[~left] = 0.0
    else:
        M2_A = np.where(left, np.maximum(M2_A, 0.0), 0.0)
    return W_A, m_A, M2_A


def empty_bounds(n_features: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The range of no value at all: ``(+inf, -inf)`` per feature, the identity of :func:`union_bounds`."""
    return np.full(n_features, np.inf), np.full(n_features, -np.inf)


def union_bounds(
    a: tuple[NDArray[np.float64], NDArray[np.float64]],
    b: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The elementwise smallest lower and largest upper bound; NaN (unknown) stays NaN."""
    return np.minimum(a[0], b[0]), np.maximum(a[1], b[1])


def block_bounds(
    X: Any, w: NDArray[np.float64] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per column, the smallest and largest finite value of the rows of positive weight.

    NaN entries are missing and, like infinities, ignored; a column without a
    finite value gets ``(+inf, -inf)`` (see :func:`empty_bounds`). ``X`` may be a dense array of
    any real dtype (reduced in its own dtype, no float64 copy) or a
    scipy.sparse matrix, whose implicit zeros count as values. Two NumPy
    reductions over a dense block; only columns whose result is not finite
    are reduced again, ignoring what is not finite.
    """
    n, p = X.shape
    if w is not None and not bool(np.all(w > 0)):
        X = X[np.asarray(w) > 0]
        n = X.shape[0]
    lo, hi = empty_bounds(p)
    if n == 0 or p == 0:
        return lo, hi
    if hasattr(X, "tocsc"):
        return _sparse_bounds(X)
    X = np.asarray(X)
    if X.dtype.kind not in "biuf":
        X = X.astype(np.float64)
    lo = np.asarray(X.min(axis=0), dtype=np.float64)
    hi = np.asarray(X.max(axis=0), dtype=np.float64)
    odd = ~(np.isfinite(lo) & np.isfinite(hi))
    if odd.any():
        cols = np.flatnonzero(odd)
        part = np.asarray(X[:, cols], dtype=np.float64)
        part = np.where(np.isfinite(part), part, np.nan)
        lo[cols] = np.fmin.reduce(part, axis=0)
        hi[cols] = np.fmax.reduce(part, axis=0)
        lo[np.isnan(lo)], hi[np.isnan(hi)] = np.inf, -np.inf  # nothing finite
    return lo, hi


def _sparse_bounds(X: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`block_bounds` of a scipy.sparse matrix: stored values and implicit zeros."""
    C = X.tocsc()
    n, p = C.shape
    lo, hi = empty_bounds(p)
    stored = np.diff(C.indptr)
    has = stored > 0
    if has.any():
        data = np.asarray(C.data, dtype=np.float64)
        if not np.all(np.isfinite(data)):
            data = np.where(np.isfinite(data), data, np.nan)
        starts = C.indptr[:-1][has]
        lo[has] = np.fmin.reduceat(data, starts)
        hi[has] = np.fmax.reduceat(data, starts)
        lo[np.isnan(lo)], hi[np.isnan(hi)] = np.inf, -np.inf
    implicit = stored < n  # (duplicates aside) some rows hold an implicit zero
    lo[implicit] = np.minimum(lo[implicit], 0.0)
    hi[implicit] = np.maximum(hi[implicit], 0.0)
    return lo, hi


#: Rows of a block are visited in chunks of about this many values when a pass
#: takes the feature range along: a chunk read for the range stays in cache for
#: the pass's own work on it.
CHUNK_VALUES = 1 << 17


def chunk_rows(n_features: int) -> int:
    """Rows per chunk of about :data:`CHUNK_VALUES` values."""
    return max(64, CHUNK_VALUES // max(n_features, 1))


def fold_bounds(bounds: tuple[NDArray[np.float64], NDArray[np.float64]], chunk: Any) -> None:
    """Widen ``bounds`` in place by the column minima and maxima of a dense ``chunk``.

    For passes over rows that all have positive weight: a non-finite entry
    (NaN, infinity) leaves a non-finite bound, after which the caller takes
    :func:`block_bounds` of the block instead (see :func:`settled_bounds`).
    """
    if chunk.shape[0]:
        np.minimum(bounds[0], chunk.min(axis=0), out=bounds[0])
        np.maximum(bounds[1], chunk.max(axis=0), out=bounds[1])


def settled_bounds(
    bounds: tuple[NDArray[np.float64], NDArray[np.float64]],
    X: Any,
    w: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``bounds`` folded from every row of ``X``, or :func:`block_bounds` where that is not exact.

    Folding is exact when every row has positive weight and every bound is
    finite; otherwise (rows of zero weight, missing or infinite entries,
    no rows) the block is reduced again with :func:`block_bounds`.
    """
    exact = (w is None or bool(np.all(w > 0))) and X.shape[0] > 0
    if exact and np.all(np.isfinite(bounds[0])) and np.all(np.isfinite(bounds[1])):
        return bounds
    return block_bounds(X, w)


def feature_bounds(
    X: Any, w: NDArray[np.float64] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`block_bounds` of a whole data set, in blocks of rows run side by side.

    For the statistics whose own pass cannot take the bounds along (it visits
    the rows in class order, or sorts them); a dense ``X`` is read once more,
    in blocks that stay small, on the threads :func:`in_parallel` grants.
    """
    n, p = X.shape
    if hasattr(X, "tocsc") or n * p <= BLOCK_VALUES:
        return block_bounds(X, w)

    def part(bounds: tuple[int, int]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        lo, hi = bounds
        out = empty_bounds(p)
        step = max(64, (BLOCK_VALUES // 8) // max(p, 1))  # blocks that stay in cache
        for s in range(lo, hi, step):
            e = min(s + step, hi)
            out = union_bounds(out, block_bounds(X[s:e], None if w is None else w[s:e]))
        return out

    work = float(n) * p
    out = empty_bounds(p)
    for b in _parallel.in_parallel(part, row_ranges(n, work), work):
        out = union_bounds(out, b)
    return out


def bounds_close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether two statistics' feature bounds agree (infinities and NaN equal themselves)."""
    return bool(
        np.all(np.isclose(a.lower, b.lower, rtol=rtol, atol=atol, equal_nan=True))
        and np.all(np.isclose(a.upper, b.upper, rtol=rtol, atol=atol, equal_nan=True))
    )


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ClassStatistic:
    """What every per-class statistic shares: the monoid plumbing around its merge rule.

    A subclass is a frozen dataclass whose first fields are ``classes``,
    ``counts`` and ``weights``; it lists in ``_per_class`` the fields indexed
    by class along their first axis (zero for a class not seen), and
    implements ``empty``, ``from_data``, ``n_features``, ``_merge_aligned(other)``
    and ``_subtract_aligned(other)`` for two values over the same classes.
    ``merge`` unites the classes, so statistics of data sets that saw
    different classes merge too; ``subtract`` checks what is removed and
    leaves a class without rows as the empty statistic. The laws every
    subclass obeys are those of :class:`Statistic`.

    Every statistic also holds the range of each feature in its training
    data, ``lower`` and ``upper`` (keyword-only fields, shape
    ``(n_features,)``): the smallest and largest observed (non-NaN) value of
    the rows of positive weight, over all classes. Predictions compare new
    data with them (:class:`bayesrule.OutOfRangeWarning`). ``(+inf, -inf)``
    means no value observed (the empty statistic), ``NaN`` means unknown
    (statistics made without them, such as a model file written before
    bounds were recorded). ``merge`` takes the elementwise ``min``/``max``
    (exact, so the merge laws hold for them exactly; unknown stays unknown).
    ``subtract`` cannot know which rows held the extremes, so it keeps the
    bounds of ``self``: after ``forget`` they are an envelope of the data
    that is left, never narrower than it (only removing every row resets
    them to the empty range).
    """

    _per_class: ClassVar[tuple[str, ...]] = ()
    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: NDArray[np.float64]
    # None (the default) is replaced in __post_init__: the empty range for a
    # statistic without rows, unknown (NaN) for one with rows
    lower: NDArray[np.float64] = dataclasses.field(default=cast(Any, None), kw_only=True)
    upper: NDArray[np.float64] = dataclasses.field(default=cast(Any, None), kw_only=True)

    def __post_init__(self) -> None:
        p = self.n_features
        lo, hi = self.lower, self.upper
        if lo is None and hi is None:
            if np.any(np.asarray(self.counts) > 0):
                lo, hi = np.full(p, np.nan), np.full(p, np.nan)
            else:
                lo, hi = empty_bounds(p)
        elif lo is None or hi is None:
            raise StatisticsError("the feature bounds lower and upper must be given together.")
        else:
            lo = np.asarray(lo, dtype=np.float64)
            hi = np.asarray(hi, dtype=np.float64)
            for name, a in (("lower", lo), ("upper", hi)):
                if a.shape != (p,):
                    raise StatisticsError(
                        f"the feature bounds {name} must have shape ({p},); got {a.shape}."
                    )
            # a feature's range is finite (lower <= upper), empty (+inf, -inf)
            # or unknown (NaN, NaN); nothing else
            with np.errstate(invalid="ignore"):
                valid = (np.isfinite(lo) & np.isfinite(hi) & (lo <= hi)) | (
                    (lo == np.inf) & (hi == -np.inf)
                )
            valid |= np.isnan(lo) & np.isnan(hi)
            if not np.all(valid):
                j = int(np.flatnonzero(~valid)[0])
                raise StatisticsError(
                    f"the range of feature {j} is [{lo[j]:g}, {hi[j]:g}]; a range must be "
                    "finite with lower <= upper, empty [inf, -inf], or unknown [nan, nan]."
                )
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    def with_bounds(self, lower: ArrayLike, upper: ArrayLike) -> Any:
        """The same statistics with other feature bounds ``lower``, ``upper`` (shape (p,)).

        E.g. to compare statistics after ``subtract`` (whose bounds are an
        envelope) with those of the remaining rows, or to declare a range.
        """
        lo = np.asarray(lower, dtype=np.float64)
        hi = np.asarray(upper, dtype=np.float64)
        return dataclasses.replace(self, lower=lo, upper=hi)

    @property
    def n_features(self) -> int:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @property
    def n_classes(self) -> int:
        return int(self.classes.size)

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> Any:
        raise NotImplementedError  # pragma: no cover

    @classmethod
    def from_data(cls, X: Any, y: Any, sample_weight: Any = None, *, classes: Any = None) -> Any:
        raise NotImplementedError  # pragma: no cover

    def update(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Return the statistics of the rows seen so far plus ``(X, y, w)``."""
        shape = getattr(X, "shape", None) or np.shape(X)
        check_features(self.n_features, shape[1] if len(shape) == 2 else -1, "update")
        return self.merge(type(self).from_data(X, y, sample_weight, classes=self.classes))

    def _check_compatible(self, other: Any, action: str) -> None:
        if type(other) is not type(self):
            raise StatisticsError(
                f"can only {action} {type(self).__name__} with {type(self).__name__}, "
                f"not {type(other).__name__}."
            )
        check_features(self.n_features, other.n_features, action)

    def merge(self, other: Any) -> Any:
        """Statistics of the union of the two data sets (classes are united).

        Raises
        ------
        StatisticsError
            If ``other`` is of another type, has another number of features, or
            labels of another kind.
        """
        a, b = self._common_form(other)
        a._check_compatible(b, "merge")
        c = union_classes(a.classes, b.classes)
        out = a._aligned(c)._merge_aligned(b._aligned(c))
        return out.with_bounds(*union_bounds((a.lower, a.upper), (b.lower, b.upper)))

    def _common_form(self, other: Any) -> tuple[Any, Any]:
        """The two values in one type before a merge; the identity here.

        A statistic that extends another (more moments of the same rows)
        overrides this to merge with its base by dropping what the base lacks.
        """
        return self, other

    def subtract(self, other: Any) -> Any:
        """Statistics of these rows without the rows summarised by ``other``.

        ``s(A ∪ B).subtract(s(B)) == s(A)``; the classes are ``self.classes``
        (a class whose rows are all removed stays declared, with zero weight
        and the empty statistic).

        Raises
        ------
        StatisticsError
            If ``other`` is of another type or number of features, holds a
            class these statistics do not, or removes from a class more rows
            or weight (beyond rounding) than it holds; or, in a subclass,
            anything else it does not hold (a value, a category, a clearly
            negative second moment).
        """
        self._check_compatible(other, "subtract")
        union_classes(self.classes, other.classes)  # refuses labels of another kind
        unknown = np.setdiff1d(other.classes, self.classes)
        if unknown.size:
            raise StatisticsError(
                f"cannot forget class {label_repr(unknown[0])}: these statistics hold no such class "
                f"(classes: {self.classes.tolist()[:20]})."
            )
        b = other._aligned(self.classes)
        counts = self.counts - b.counts
        if np.any(counts < 0):
            k = int(np.flatnonzero(counts < 0)[0])
            raise StatisticsError(
                f"cannot remove {int(b.counts[k])} rows from {_label(self.classes, k)}, "
                f"which holds {int(self.counts[k])}."
            )
        weights = check_removal(self.weights, b.weights, self.classes)
        gone = counts == 0
        if np.any(gone & (weights > 0)):
            k = int(np.flatnonzero(gone & (weights > 0))[0])
            raise StatisticsError(
                f"cannot subtract: {_label(self.classes, k)} would keep weight "
                f"{weights[k]:g} with no rows left; the subtracted statistics are not part "
                "of these."
            )
        out = dataclasses.replace(self._subtract_aligned(b), counts=counts, weights=weights)
        out = out._cleared(gone)
        # which rows held the extremes is not known: the bounds stay (an
        # envelope), unless no row is left at all
        if np.any(counts > 0):
            return out.with_bounds(self.lower, self.upper)
        return out.with_bounds(*empty_bounds(self.n_features))

    def _merge_aligned(self, other: Any) -> Any:
        raise NotImplementedError  # pragma: no cover

    def _subtract_aligned(self, other: Any) -> Any:
        """``self`` without ``other`` (same classes); ``counts``/``weights`` are set by the caller."""
        raise NotImplementedError  # pragma: no cover

    def _cleared(self, gone: NDArray[np.bool_]) -> Any:
        """The same statistics with the classes in ``gone`` reset to the empty statistic."""
        if not np.any(gone):
            return self
        changes = {}
        for f in self._per_class:
            a = np.array(getattr(self, f), copy=True)
            a[gone] = 0
            changes[f] = a
        return dataclasses.replace(self, **changes)

    def _aligned(self, classes: NDArray[Any]) -> Any:
        if np.array_equal(classes, self.classes):
            return self
        changes = {f: expand(getattr(self, f), self.classes, classes) for f in self._per_class}
        return dataclasses.replace(self, classes=classes, **changes)

    def allclose(self, other: Any, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether ``other`` is the same statistic to rounding.

        False for another type or other classes or row counts; otherwise every
        array agrees to ``|a - b| <= atol + rtol * scale``, the scale being the
        array's largest entry (see :func:`arrays_close`; subclasses give
        centred moments a floor for rounding noise).
        """
        return (
            type(other) is type(self)
            and np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and bounds_close(self, other, rtol, atol)
            and self._close(other, rtol, atol)
        )

    def _close(self, other: Any, rtol: float, atol: float) -> bool:
        """Every field but ``classes`` and ``counts`` agrees to ``rtol`` on its own scale."""
        for f in dataclasses.fields(self):
            if f.name in ("classes", "counts", "lower", "upper"):
                continue
            a, b = getattr(self, f.name), getattr(other, f.name)
            if not arrays_close(np.asarray(a), np.asarray(b), rtol, atol):
                return False
        return True

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_classes={self.n_classes}, n_features={self.n_features}, "
            f"rows={int(self.counts.sum())}, weight={float(self.weights.sum()):g})"
        )
