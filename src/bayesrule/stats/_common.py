"""What the statistics share: their error, and helpers.

Label encoding, class alignment, blocking of rows, and the Chan-Golub-LeVeque
downdate that subtraction uses. The protocol and base class are in ``_base``,
the feature bounds in ``_bounds``, the field declarations in ``schema``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._util import parallel as _parallel

#: float64 arrays, the type of almost every statistic's fields
Floats = NDArray[np.float64]

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


class Rows(NamedTuple):
    """One data set ready to summarise: what every ``from_data`` starts from.

    ``X`` is 2-D (a dense array, or a scipy.sparse matrix passed through),
    ``classes`` the sorted labels, ``codes`` each row's index into them,
    ``weights`` the sample weights (ones by default), and ``unit`` whether
    every weight is 1.
    """

    X: Any
    classes: NDArray[Any]
    codes: NDArray[np.intp]
    weights: NDArray[np.float64]
    unit: bool

    def columns(self, cols: NDArray[np.intp]) -> Rows:
        """The same rows with only the columns ``cols`` of ``X``."""
        return self._replace(X=self.X[:, cols])


def prepare(
    X: Any,
    y: ArrayLike,
    sample_weight: ArrayLike | None,
    classes: ArrayLike | None,
    dtype: Any = None,
) -> Rows:
    """The common start of every ``from_data``: ``(X, classes, codes, weights, unit)``.

    ``X`` is checked to be 2-D (dense arrays are not copied unless ``dtype``
    asks for another dtype; without ``dtype`` sparse matrices are passed
    through), the classes default to the labels of ``y``, labels are encoded
    against them, and ``unit`` says whether every weight is 1.
    """
    if dtype is not None or not hasattr(X, "tocsr"):
        X = np.asarray(X, dtype=dtype)
    if len(X.shape) != 2:
        raise ValueError(f"X must be 2-dimensional; got shape {X.shape}.")
    y = np.asarray(y)
    c = as_classes(y if classes is None else classes)
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    unit = sample_weight is None or bool(np.all(w == 1.0))
    return Rows(X, c, encode(y, c), w, unit)


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


def downdate_scatter(C: Any, B: Any) -> tuple[Floats, Floats, Floats]:
    """:func:`downdate_moments` in the outer form for statistics with ``scatter``.

    ``C`` and ``B`` hold ``weights``, ``means`` and ``scatter`` (per class, or
    pooled over the classes) over the same classes; the classes name errors.
    """
    return downdate_moments(
        C.weights,
        C.means,
        C.scatter,
        B.weights,
        B.means,
        B.scatter,
        outer=True,
        classes=C.classes,
    )


# ---------------------------------------------------------------------------------
# scratch arrays reused from one block to the next (a streamed pass)
# ---------------------------------------------------------------------------------
_scratch = threading.local()


@contextmanager
def scratch_space(arrays: dict[str, NDArray[Any]]) -> Iterator[None]:
    """Within this context, :func:`scratch_array` of the calling thread reuses ``arrays``.

    A streamed pass summarises many blocks of one shape in turn: a fresh
    working array of tens of MB for every block is a fresh mapping whose
    pages fault in one by one as it is first written (about as long as the
    gather that fills it). The pass keeps one dict per thread for its
    duration and passes it here around each block's statistics; the arrays
    go when the pass drops the dict. Outside such a context (``fit`` in
    memory) every :func:`scratch_array` is a new array. The statistics
    never keep a scratch array.
    """
    before = getattr(_scratch, "arrays", None)
    _scratch.arrays = arrays
    try:
        yield
    finally:
        _scratch.arrays = before


def scratch_array(key: str, shape: tuple[int, ...], dtype: Any) -> NDArray[Any]:
    """An uninitialised array of ``shape`` and ``dtype``: the thread's reused one under :func:`scratch_space`."""
    arrays = getattr(_scratch, "arrays", None)
    if arrays is None:
        return np.empty(shape, dtype=dtype)
    size = int(np.prod(shape))
    held = arrays.get(key)
    if held is None or held.dtype != np.dtype(dtype) or held.size < size:
        held = arrays[key] = np.empty(size, dtype=dtype)
    return held[:size].reshape(shape)
