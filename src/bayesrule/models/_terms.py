"""Log densities as sums of scaled terms, for rows far from every class.

A row far from every class (an entry of 1e300, say) has log densities whose
plain evaluation overflows: ``-(x - m)^2 / (2 v)`` is ``-inf`` for every
class, or ``inf - inf = NaN`` on the way. Bayes' rule only needs the
*differences* of the joint log likelihoods, and those are finite or at least
have a definite sign. So every family can also give its log densities as a
short sum of terms,

``log p_k(x_i) = sum_t T_t[i, k] * 2 ** e_t[i, k]``,

each ``T_t`` finite (or ``-inf`` for a probability that is exactly 0), with
the large powers of two kept apart in the integer exponents ``e_t``: for a
Gaussian, the row is scaled by ``2 ** -E`` and the quadratic, linear and
constant parts of ``-(x - m)' P (x - m) / 2`` are three terms with
exponents ``2E``, ``E`` and ``0``. A part that is the same for every class
(a shared variance) is given with bitwise equal columns, so that it cancels
exactly and the next, smaller part decides.

:func:`combine_terms` turns such terms into log posteriors without overflow:
the differences from one class are rescaled by one power of two per row, so
the class that dominates in exact arithmetic wins (its posterior is 1 and
the others' 0 when the differences are beyond float64), and every posterior
is finite and sums to 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._types import Floats as _F

__all__ = ["Terms", "combine_terms", "matrix_exponent", "row_exponent", "scale_rows", "term_sum"]

_I = NDArray[np.int64]
#: a list of ``(T, e)``: ``T`` of shape (n, K), ``e`` integers broadcastable to it
Terms = list[tuple[_F, Any]]
#: the exponent given to a zero difference (smaller than any float's)
_ZERO = -(1 << 20)
_MAX = float(np.finfo(np.float64).max)


def row_exponent(X: Any) -> _I:
    """Per row, ``E`` with every finite entry below ``2 ** E`` in magnitude, shape (n, 1).

    NaN entries are ignored; a row of zeros gets 0. Dividing the row by
    ``2 ** E`` is exact (unless entries fall into the subnormals, which lose
    digits that do not matter next to the row's largest entry).
    """
    A = np.abs(np.nan_to_num(np.asarray(X, dtype=np.float64), nan=0.0))
    big = A.max(axis=1, initial=0.0) if A.ndim == 2 and A.shape[1] else np.zeros(A.shape[0])
    _, e = np.frexp(big)
    return np.asarray(e, dtype=np.int64)[:, None]


def _scaled(X: Any, e: _I) -> _F:
    """``X * 2 ** -e`` row by row."""
    with np.errstate(under="ignore"):
        return np.ldexp(np.asarray(X, dtype=np.float64), -e)


def _broadcast(terms: Terms, shape: tuple[int, int]) -> list[tuple[_F, _I]]:
    out = []
    for T, e in terms:
        out.append(
            (
                np.broadcast_to(np.asarray(T, dtype=np.float64), shape),
                np.broadcast_to(np.asarray(e, dtype=np.int64), shape),
            )
        )
    return out


def term_sum(terms: Terms, shape: tuple[int, int]) -> _F:
    """``sum_t T_t * 2 ** e_t`` per entry, shape ``shape``: ``-inf`` where it is below -max float.

    A sum above the largest float is given as the largest float.

    The terms are added at a common scale (the largest term's) and the sum
    is scaled back once, so that no partial sum overflows.
    """
    parts = _broadcast(terms, shape)
    dead = np.zeros(shape, dtype=bool)
    mags = []
    for T, e in parts:
        dead |= T == -np.inf
        m, x = np.frexp(np.where(np.isfinite(T), T, 0.0))
        mags.append(np.where(m != 0, x + e, _ZERO))
    M = np.max(mags, axis=0) if mags else np.zeros(shape, dtype=np.int64)
    M = np.where(M == _ZERO, 0, M)
    total = np.zeros(shape)
    with np.errstate(under="ignore", over="ignore"):
        for T, e in parts:
            total += np.ldexp(np.where(np.isfinite(T), T, 0.0), e - M)
        out = np.ldexp(total, M)
    out[dead] = -np.inf
    # a sum above the float64 range (complement naive Bayes' scores, which are
    # not log densities, get there) is given as the largest float: never +inf
    return np.asarray(np.minimum(out, _MAX))


def combine_terms(terms: Terms, shape: tuple[int, int]) -> tuple[_F, _F]:
    """Relative joint log likelihoods and the absolute ones, from scaled terms.

    Parameters
    ----------
    terms : list of (T, e)
        ``log pi_k + log p_k(x_i) = sum_t T_t[i, k] 2 ** e_t[i, k]``; ``T_t``
        finite, or ``-inf`` for a zero probability.
    shape : (n, K)

    Returns
    -------
    relative : ndarray of shape (n, K)
        The joint log likelihood minus the row's largest: 0 for the class
        that dominates in exact arithmetic, negative (``-inf`` when the
        difference is beyond float64) for the others. A class with more
        zero-probability factors than another always loses; when every class
        has one, the classes with the fewest are compared on the rest, so
        the result is defined for every finite row.
    absolute : ndarray of shape (n, K)
        The joint log likelihoods themselves, ``-inf`` where below -max float.
    """
    parts = _broadcast(terms, shape)
    n, K = shape
    ninf = np.zeros(shape, dtype=np.int64)
    for T, _ in parts:
        ninf += T == -np.inf
    alive = ninf == ninf.min(axis=1, keepdims=True)
    ref = np.argmax(alive, axis=1)
    rows = np.arange(n)
    # differences from a reference class, halved first so that they cannot
    # overflow; a part equal in every class cancels exactly here
    diffs = []
    mags = []
    for T, e in parts:
        # one exponent per row, so that the classes' values can be subtracted
        e_row = e.max(axis=1, keepdims=True)
        with np.errstate(under="ignore"):
            H = np.ldexp(np.where(np.isfinite(T), T, 0.0), e - e_row - 1)
        e = np.broadcast_to(e_row, shape)
        D = H - H[rows, ref][:, None]
        m, x = np.frexp(D)
        diffs.append((D, e + 1))
        mags.append(np.where((m != 0) & alive, x + e + 1, _ZERO))
    M = np.max(np.max(mags, axis=0), axis=1, keepdims=True) if mags else np.zeros((n, 1), int)
    M = np.where(M == _ZERO, 0, M)
    S = np.zeros(shape)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        for D, e in diffs:
            S += np.ldexp(D, e - M)
        S = np.where(alive, S, -np.inf)
        S -= S.max(axis=1, keepdims=True)
        relative = np.ldexp(S, M)
    relative = np.where(alive, relative, -np.inf)
    return np.asarray(relative), term_sum(terms, shape)


def scale_rows(X: Any) -> tuple[_F, _I]:
    """``(X * 2 ** -E, E)`` with :func:`row_exponent`'s ``E``: every entry below 1 in magnitude."""
    E = row_exponent(X)
    return _scaled(X, E), E


def matrix_exponent(A: Any) -> int:
    """``E`` with every finite entry of ``A`` below ``2 ** E`` in magnitude (0 for zeros)."""
    A = np.abs(np.asarray(A, dtype=np.float64))
    big = float(np.max(A[np.isfinite(A)], initial=0.0))
    return int(np.frexp(big)[1])
