"""The passes behind ScatterStats and FourthMomentStats: pilot centres and moments.

Per-class scatter, third and fourth moments about provisional class centres,
accumulated in one pass over the rows in class order, and the exact
re-centring (Chan-Golub-LeVeque) of the higher moments by a shift ``d``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._util.parallel import in_parallel
from .._util.validation import TooFewRows
from ._common import (
    BLOCK_VALUES,
    PROBE_ROWS,
    class_matrix,
    class_totals,
    one_hot_classes,
    row_ranges,
    scratch_array,
    syrk_add,
)
from ._common import (
    Floats as _F,
)


def shift_higher(
    W: _F, tr: _F, Sd: _F, M3: _F, M4: _F, d: _F, s1: _F | None = None
) -> tuple[_F, _F]:
    """Re-centre ``M3`` and ``M4`` from residuals ``r`` to ``r - d``, from ``tr(S)`` and ``S d``.

    ``s1 = sum w r`` is zero when ``r`` is centred at the weighted mean (the
    default). With ``c = |d|^2``:
    ``M3' = M3 - tr(S) d - 2 S d + 2 (d.s1) d + c s1 - c W d`` and
    ``M4' = M4 - 4 d.M3 + 4 d'Sd + 2 c tr(S) + c^2 W - 4 c (d.s1)``; the
    scatter itself becomes ``S - d s1' - s1 d' + W d d'``.

    Third and fourth powers overflow first: for deviations of about ``1e77``
    and more they are ``inf`` (or NaN), without a warning; no model reads
    them but those that ask for fourth moments, which check them.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        c = np.einsum("kp,kp->k", d, d)
        M3_new = M3 - (tr + c * W)[:, None] * d - 2.0 * Sd
        M4_new = (
            M4
            - 4.0 * np.einsum("kp,kp->k", d, M3)
            + 4.0 * np.einsum("kp,kp->k", d, Sd)
            + 2.0 * c * tr
            + c * c * W
        )
        if s1 is not None:
            ds1 = np.einsum("kp,kp->k", d, s1)
            M3_new += 2.0 * ds1[:, None] * d + c[:, None] * s1
            M4_new -= 4.0 * c * ds1
    return M3_new, M4_new


def matvec(S: _F, d: _F) -> _F:
    """``S_k d_k`` for every class, shape (k, p).

    einsum, not a batched ``matmul``: stacked matrix-vector products go to
    the BLAS one gemv at a time, and a multi-threaded gemv of this size is
    about ten times slower than einsum's loop (threads wake for little work).
    """
    return np.einsum("kpq,kq->kp", S, d)


def add_outer(S: _F, f: _F, a: _F, b: _F, out: _F | None = None) -> _F:
    """``S_k + f_k a_k b_k'`` for every class.

    With many features, one class at a time (no ``k p^2`` temporary besides
    the result); ``out=S`` updates in place.
    """
    if out is None:
        out = S.copy()
    if a.shape[1] < 64:
        out += f[:, None, None] * a[:, :, None] * b[:, None, :]
        return out
    for k in np.flatnonzero(f * np.any(a != 0, axis=1) * np.any(b != 0, axis=1)).tolist():
        out[k] += np.outer(f[k] * a[k], b[k])
    return out


def zero_columns(X: NDArray[Any], yi: NDArray[np.intp], w: _F, k: int) -> NDArray[np.bool_]:
    """Per class, the columns that are exactly zero in every row of positive weight.

    Such a column has no residual in that class (its mean is exactly 0), so
    the class's products can leave it out: never-lit pixels, absent words
    and one-hot codes often make a class's products much smaller. A strided
    sample first shows whether any class could have such columns; most dense
    data have none, and then no pass is spent. The answer is exact:
    ``sum w |x| == 0`` holds only for zeros (NaN and infinity count as
    non-zero).
    """
    n, p = X.shape
    if not maybe_zero_columns(X, yi, w):
        return np.zeros((k, p), dtype=bool)

    def part(bounds: tuple[int, int]) -> _F:
        lo, hi = bounds
        total = np.zeros((k, p))
        step = max(64, BLOCK_VALUES // max(p, 1))
        buf = np.empty((min(step, hi - lo), p))
        for s in range(lo, hi, step):
            e = min(s + step, hi)
            A = np.abs(X[s:e], out=buf[: e - s])
            total += class_matrix(yi[s:e], w[s:e], k) @ A
        return total

    work = float(n) * p * k
    with np.errstate(invalid="ignore", over="ignore"):
        total = sum(in_parallel(part, row_ranges(n, work), work))
    return np.asarray(total == 0.0)


#: Rows of each class (evenly strided among its rows) averaged for its pilot centre.
PILOT_PER_CLASS = 256


def class_codes(yi: NDArray[np.intp], k: int) -> NDArray[Any]:
    """The class codes ``yi`` (all in ``[0, k)``) in the smallest unsigned type that holds them.

    A stable sort of 8- or 16-bit integers is a radix sort in NumPy, about
    twenty times faster than the merge sort of ``intp`` codes; a stable sort
    has one answer, so the order is the same.
    """
    if k <= 1 << 8:
        return yi.astype(np.uint8)
    if k <= 1 << 16:
        return yi.astype(np.uint16)
    return yi


def gather_column(
    col: NDArray[Any], order: NDArray[np.intp], out: NDArray[Any]
) -> tuple[float, float]:
    """``out[:] = col[order]`` for a 1-D column and a permutation ``order`` of its rows;
    returns the column's least and largest values (``(inf, -inf)`` for no rows; NaN if
    it holds one).

    The range is read first, from end to end: a column taken from a block read
    from a file is rarely in cache, and the gather's reads in class order jump
    about it, each a miss the hardware's prefetcher cannot foresee, while the
    range's sequential read brings the column into cache for the gather (a
    65,536-row block of 256 float32 columns: 39.5 ms for GaussianNB's
    statistics, 30.5 with the range first). ``mode="wrap"`` (every index of a
    permutation is in range, so wrapping never moves one) is NumPy's fastest
    gather into ``out``: 35 us against 62 for ``"clip"`` on 65,536 float32 values
    in cache, and neither buffers ``out`` as ``"raise"`` does.
    """
    lo, hi = np.inf, -np.inf
    if col.size:
        lo, hi = float(np.minimum.reduce(col)), float(np.maximum.reduce(col))
    np.take(col, order, out=out, mode="wrap")
    return lo, hi


def class_order(
    yi: NDArray[np.intp], w: _F, k: int, unit: bool
) -> tuple[NDArray[np.intp], list[int]]:
    """The rows of positive weight in class order (stable), and where each class starts.

    ``order`` equals ``np.argsort(yi, kind="stable")`` less the rows whose
    weight is not positive (all are kept when ``unit``); class ``j``'s rows
    are ``order[bounds[j]:bounds[j + 1]]``. Computed once per block and shared
    by the pilot centres and the moment pass.
    """
    order = np.argsort(class_codes(yi, k), kind="stable")
    if unit:
        return order, class_bounds(yi, k)
    order = order[w[order] > 0]
    return order, class_bounds(yi[w > 0], k)


def class_bounds(yi: NDArray[np.intp], k: int) -> list[int]:
    """Where each class starts among rows of classes ``yi`` in class order, and the end."""
    sizes = np.bincount(yi, minlength=k)
    bounds: list[int] = np.concatenate(([0], np.cumsum(sizes[:k]))).tolist()
    return bounds


def gather_columns(X: NDArray[Any], rows: NDArray[np.intp]) -> NDArray[Any]:
    """``X[rows].T`` of a feature-major ``X`` (any order of ``rows``), C-ordered ``(p, m)``.

    Gathered in file order (one forward sweep of each column, ``rows``
    sorted) and then put in the given order within the small result: on a
    column-ordered block this is several times faster than gathering
    ``rows`` as given. Indices are in range, so the takes are clipped (no
    bounds check and no extra copy).
    """
    at = np.sort(rows)
    XsT = np.take(X.T, at, axis=1, mode="clip")
    if rows.size > 1 and bool(np.any(rows[1:] < rows[:-1])):
        XsT = np.take(XsT, np.searchsorted(at, rows), axis=1, mode="clip")
    return XsT


def pilot_sample(
    yi: NDArray[np.intp], k: int, ordered: tuple[NDArray[np.intp], list[int]]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The rows of each class's pilot sample: positions in the class order, and their classes.

    At most about ``PILOT_PER_CLASS`` rows of each class, evenly strided
    among its rows of positive weight; ``ordered`` is :func:`class_order`
    of the rows. The positions index ``order`` (the rows are ``order[at]``)
    and are increasing, so the classes ``ys`` come in blocks.
    """
    order, bounds_list = ordered
    sorted_y = yi[order]
    bounds = np.asarray(bounds_list)
    step = np.maximum(1, np.diff(bounds) // PILOT_PER_CLASS)
    pos = np.arange(order.size) - bounds[sorted_y]
    at = np.flatnonzero(pos % step[sorted_y] == 0)
    return at, sorted_y[at]


def sample_centres(XsT: NDArray[Any], ys: NDArray[np.intp], ws: _F, k: int, unit: bool) -> _F:
    """Per class, the weighted mean of a class-ordered sample ``XsT`` (features by rows); 0 where none.

    ``ys`` are the sample's classes (in blocks, as :func:`pilot_sample`
    gives them) and ``ws`` its weights.
    """
    centres = np.zeros((k, XsT.shape[0]))
    if ys.size == 0:
        return centres
    sw = np.bincount(ys, weights=ws, minlength=k)
    S = XsT.astype(np.float64)
    if not unit:
        S *= ws
    starts = np.flatnonzero(np.concatenate(([True], ys[1:] != ys[:-1])))
    centres[ys[starts]] = np.add.reduceat(S, starts, axis=1).T / sw[ys[starts], None]
    return centres


def pilot_centres(
    X: NDArray[Any],
    yi: NDArray[np.intp],
    w: _F,
    k: int,
    unit: bool,
    ordered: tuple[NDArray[np.intp], list[int]] | None = None,
) -> tuple[NDArray[np.int64], _F, _F]:
    """Rows with positive weight, weight sums, and provisional class centres.

    Like :func:`~bayesrule.stats._common.pilot_means`, but each class's centre
    is the weighted mean of at most ``PILOT_PER_CLASS`` of its own rows of
    positive weight (evenly strided, :func:`pilot_sample`), so that every
    class present has a centre of its own, however rare, and the cost does
    not grow with the rows: the moments are corrected exactly to the class
    means afterwards. A class without such rows gets 0 (its statistics are
    empty). ``ordered`` is :func:`class_order` of the block, when already known.
    """
    n, p = X.shape
    counts, weights = class_totals(yi, w, k)
    ordered = class_order(yi, w, k, unit) if ordered is None else ordered
    order = ordered[0]
    if order.size == 0:
        return counts, weights, np.zeros((k, p))
    at, ys = pilot_sample(yi, k, ordered)
    rows = order[at]
    ws = w[rows]
    if feature_major(X):
        # feature-major: the sample's columns in class order, summed class by class
        return counts, weights, sample_centres(gather_columns(X, rows), ys, ws, k, unit)
    centres = np.zeros((k, p))
    sw = np.bincount(ys, weights=ws, minlength=k)
    present = sw > 0
    sums = np.asarray(one_hot_classes(ys, ws, k) @ np.asarray(X[rows], dtype=np.float64))
    centres[present] = sums[present] / sw[present, None]
    return counts, weights, centres


def maybe_zero_columns(X: NDArray[Any], yi: NDArray[np.intp], w: _F) -> bool:
    """Whether, in a strided sample of rows of positive weight, a class has an all-zero column.

    Every column that is zero in all of a class's rows is zero in the sample
    too, so False means no class has one. Comparisons and a segmented OR over
    the sample's rows in class order: no BLAS product, whose threads cost far
    more than so small a product on a busy machine. A feature-major ``X`` is
    sampled column by column (a strided view of its rows would be read
    across the columns).
    """
    n = X.shape[0]
    stride = max(1, n // PROBE_ROWS)
    idx = np.arange(0, n, stride)
    ys, ws = yi[::stride], w[::stride]
    if not bool(np.all(ws > 0)):
        keep = ws > 0
        ys, idx = ys[keep], idx[keep]
    if ys.size == 0:
        return False
    order = np.argsort(class_codes(ys, int(ys.max()) + 1), kind="stable")
    ys = ys[order]
    starts = np.flatnonzero(np.concatenate(([True], ys[1:] != ys[:-1])))
    # NaN and infinity are non-zero here, as in the exact pass
    if feature_major(X):
        nz = np.take(X.T, idx, axis=1, mode="clip") != 0  # (p, m), file order
        lit = np.logical_or.reduceat(np.take(nz, order, axis=1, mode="clip"), starts, axis=1)
    else:
        lit = np.logical_or.reduceat(np.asarray(X[idx[order]]) != 0, starts, axis=0)
    return not bool(lit.all())


def moments_about(
    X: NDArray[Any],
    yi: NDArray[np.intp],
    w: _F,
    centres: _F,
    unit: bool,
    dead: NDArray[np.bool_] | None = None,
    fourth: bool = False,
    ordered: tuple[NDArray[np.intp], list[int]] | None = None,
) -> tuple[_F, _F, _F, _F, _F | None, _F | None]:
    """Per-class scatter, M3, M4, residual sums, and (``fourth``) T and Q about the class centres.

    Rows are put in class order (one stable argsort) and visited in blocks of
    bounded size. Each block of residuals ``R`` is written into a reused
    buffer as ``[R, 1, |R|^2]`` (rows scaled by ``sqrt(w)``), so that one
    symmetric product (BLAS syrk) yields ``R'R``, the residual sums ``R'1``,
    ``M3 = R'|R|^2`` and ``M4 = |R|^2' |R|^2`` together. A class's columns
    marked ``dead`` (zero in all its rows, see :func:`zero_columns`) are left
    out of its blocks; their centres must be 0. Large passes are split into contiguous
    ranges of the class-ordered rows, one per thread: equal rows whatever the
    class sizes; a class cut by a range boundary is summed from its parts in
    range order.

    With ``fourth``, the block is ``[R, 1, R o R]`` instead (``o`` the
    entrywise product), and the same product also yields
    ``T = (R o R)' R`` and ``Q = (R o R)' (R o R)`` (see
    :class:`~bayesrule.stats.FourthMomentStats`); ``M3`` and ``M4`` are
    their sums. ``ordered`` is :func:`class_order` of the block, when known.

    A feature-major ``X`` (F order: Arrow's columns side by side, as
    streamed from Parquet) takes the same products in the same order: each
    range's rows are gathered once in class order as a ``(p, rows)`` array
    and each block of residuals is built transposed, ``[R, 1, |R|^2]'``.
    The buffer of the blocks and that gather are
    :func:`~._common.scratch_array`: within a streamed pass
    (:func:`~._common.scratch_space`) the thread's own from the block before.
    """
    k, p = centres.shape
    scatter = np.zeros((k, p, p))
    m3 = np.zeros((k, p))
    m4 = np.zeros(k)
    s1 = np.zeros((k, p))
    t = np.zeros((k, p, p)) if fourth else None
    q = np.zeros((k, p, p)) if fourth else None
    order, bounds = class_order(yi, w, k, unit) if ordered is None else ordered
    if dead is None:
        dead = np.zeros((k, p), dtype=bool)
    cols: list[NDArray[np.intp] | None] = [
        np.flatnonzero(~dead[j]) if dead[j].any() else None for j in range(k)
    ]
    width = [p if c is None else c.size for c in cols]

    def extra(m: int) -> int:  # columns after R: [1, |R|^2] or [1, R o R]
        return m + 1 if fourth else 2

    step = max(64, BLOCK_VALUES // (p + extra(p)))

    def store(j: int, acc: _F, whole: bool) -> None:
        m, c = width[j], cols[j]
        at = (slice(None), slice(None)) if c is None else np.ix_(c, c)
        if whole:  # the first and only part: assigning is cheaper than adding
            scatter[j][at] = acc[:m, :m]
        else:
            scatter[j][at] += acc[:m, :m]
        at1 = slice(None) if c is None else c
        s1[j, at1] += acc[m, :m]
        if t is None or q is None:
            m3[j, at1] += acc[m + 1, :m]
            m4[j] += acc[m + 1, m + 1]
            return
        T, Q = acc[m + 1 :, :m], acc[m + 1 :, m + 1 :]
        t[j][at] += T
        q[j][at] += Q
        m3[j, at1] += T.sum(axis=0)
        m4[j] += Q.sum()

    # feature-major X (F order, as read from Parquet columns): the range's rows
    # are put in class order once, as a (p, rows) array, and each block of
    # residuals is built transposed, [R, 1, |R|^2]' (same product, no
    # transposition of X)
    columns = feature_major(X) and p > 1
    # rows already in class order (a block gathered so by ScatterStats.from_columns, or
    # sorted labels): the range's columns are read where they are, not gathered again
    in_place = columns and in_order(order, X.shape[0])

    def part(lohi: tuple[int, int]) -> list[tuple[int, _F]]:
        lo, hi = lohi
        shared = []
        # the working arrays: within a streamed pass (scratch_space) the thread's own
        # from the block before, written without faulting fresh pages in
        flat = scratch_array("flat", (min(step, hi - lo) * (p + extra(p)),), np.float64)
        XsT = None
        if in_place:
            XsT = X.T[:, lo:hi]
        elif columns:
            # the indices are in range: a clipped take into the given array skips the
            # bounds check (a checked take into a given array copies it once more)
            XsT = scratch_array("gathered", (p, hi - lo), X.dtype)
            np.take(X.T, order[lo:hi], axis=1, out=XsT, mode="clip")
        for j in range(k):
            a, b = max(bounds[j], lo), min(bounds[j + 1], hi)
            if a >= b:
                continue
            m, c = width[j], cols[j]
            n_col = m + extra(m)
            acc = np.zeros((n_col, n_col))
            blocks = -(-(b - a) // step)
            edges = np.linspace(a, b, blocks + 1).astype(int).tolist()
            for s, e in zip(edges[:-1], edges[1:], strict=True):
                rows = order[s:e]
                if XsT is not None:
                    BT = flat[: (e - s) * n_col].reshape(n_col, e - s)  # contiguous: syrk
                    RT = BT[:m]
                    if c is None:
                        np.subtract(XsT[:, s - lo : e - lo], centres[j][:, None], out=RT)
                    else:
                        np.subtract(XsT[c, s - lo : e - lo], centres[j, c][:, None], out=RT)
                    BT[m] = 1.0
                    if fourth:
                        np.multiply(RT, RT, out=BT[m + 1 :])
                    else:
                        np.einsum("ij,ij->j", RT, RT, out=BT[m + 1])
                    if not unit:
                        BT *= np.sqrt(w[rows])[None, :]
                    if e > s:
                        acc += np.dot(BT, BT.T)
                    continue
                B = flat[: (e - s) * n_col].reshape(e - s, n_col)  # contiguous: syrk
                R = B[:, :m]
                if c is None:
                    np.subtract(X[rows], centres[j], out=R)
                else:
                    # rows, then columns: two clipped takes (indices in range) copy about
                    # twice as fast as one fancy index X[np.ix_(rows, c)]
                    Xr = np.take(X, rows, axis=0, mode="clip")
                    np.subtract(np.take(Xr, c, axis=1, mode="clip"), centres[j, c], out=R)
                B[:, m] = 1.0
                if fourth:
                    np.multiply(R, R, out=B[:, m + 1 :])
                else:
                    np.einsum("ij,ij->i", R, R, out=B[:, m + 1])
                if not unit:
                    B *= np.sqrt(w[rows])[:, None]
                syrk_add(B, acc)
            if a == bounds[j] and b == bounds[j + 1]:
                store(j, acc, True)  # the whole class is in this range: nobody else writes it
            else:
                shared.append((j, acc))
        return shared

    n = order.size
    work = (
        float(
            sum((bounds[j + 1] - bounds[j]) * (width[j] + extra(width[j])) ** 2 for j in range(k))
        )
        / 2
    )
    for shared in in_parallel(part, row_ranges(n, work), work):
        for j, acc in shared:
            store(j, acc, False)
    return scatter, m3, m4, s1, t, q


def in_order(order: NDArray[np.intp], n: int) -> bool:
    """Whether ``order`` (a class order of ``n`` rows, see :func:`class_order`) is ``0, 1, ..., n - 1``.

    A class order lists each row at most once, so all ``n`` rows in
    increasing order can only be the identity.
    """
    return bool(order.size == n and (n < 2 or bool(np.all(order[1:] > order[:-1]))))


def feature_major(X: Any) -> bool:
    """Whether ``X`` is a NumPy array laid out column by column (F order, not also C)."""
    flags = getattr(X, "flags", None)
    return bool(flags is not None and flags.f_contiguous and not flags.c_contiguous)


def pooled_covariance(scatter: _F, weights: _F, ddof: float) -> _F:
    """The pooled within-class ``scatter`` over ``W - ddof * K`` (K: classes with weight).

    ``ddof=1`` gives the unbiased ``1 / (n - K)`` estimate and ``ddof=0`` the
    maximum-likelihood ``1 / n`` one; a ValueError when that weight is not positive.
    """
    k = int(np.count_nonzero(weights > 0))
    denom = weights.sum() - ddof * k
    if denom <= 0:
        raise TooFewRows(
            f"the pooled covariance needs more weight than classes: total weight "
            f"{weights.sum():g} with {k} classes (the unbiased estimate divides by weight - classes); give rows more weight (sample_weight) or use bias=True."
        )
    return scatter / denom
