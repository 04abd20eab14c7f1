"""Generated data shared by several test modules (each module keeps its own seeds)."""

from __future__ import annotations

import numpy as np


def class_rows(
    n: int,
    p: int,
    k: int,
    dtype: object = np.float64,
    offset: float = 0.0,
    seed: int = 0,
    *,
    sort: bool = False,
    dead: float = 0.0,
    sparse: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of ``p`` normal features of unequal scales about ``offset``, ``k`` classes.

    The classes differ in the first feature. ``sort`` puts the rows in class
    order; ``dead`` is the share of features that are zero in every row, and
    ``sparse`` the share each class leaves at zero in its own rows.
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    if sort:
        y = np.sort(y)
    X = rng.standard_normal((n, p)) * rng.uniform(0.5, 3.0, p) + offset
    X[:, 0] += y
    if sparse:
        for c in range(k):
            X[np.ix_(y == c, rng.random(p) < sparse)] = 0.0
    if dead:
        X[:, rng.random(p) < dead] = 0.0
    return X.astype(dtype), y


def poisson_counts(seed: int, n: int, p: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Poisson counts of ``k`` classes with their own rates, every class present (``n >= k``)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rates = rng.uniform(0.2, 6.0, size=(k, p))
    return rng.poisson(rates[y]).astype(np.float64), y


def runs_of(n: int, step: int, run: int):
    """A sample of runs (``bayesrule._util.row_sample``) that fits ``n`` rows: runs of up to
    ``run`` consecutive rows every ``step`` rows (``X[::step]`` for ``run=1``); None for
    ``step=0`` (no sample)."""
    if step == 0:
        return None
    rows = max(1, min(run, step, n))
    return (n - rows) // step + 1, rows, step
