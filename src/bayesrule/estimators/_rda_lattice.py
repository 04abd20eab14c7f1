"""RDA-CV's default alphas: a coarse grid, refined on the lattice around the choice.

``alphas='auto'`` up to 100 features scores the lattice of alphas in steps
of ``ALPHA_STEP`` (0.02), but not all of it: first the coarse alphas (steps
of ``COARSE_STEP``, 0.1) at every ``(gamma, ridge)``, then, as long as the
rule that chooses the model (:func:`choice_order`) chooses an alpha whose
lattice neighbours within ``WINDOW`` (0.06) are not all scored, those
neighbours, at every ``(gamma, ridge)``. Each round scores at least one
new alpha of the 51, so the refinement ends; typically 11 coarse alphas and
6 to 8 of the lattice are scored instead of 51. The choice is then made
among the candidates scored, by the same rule, whenever the model is
derived (:meth:`RegularizedDiscriminantAnalysisCV._derive`).

The score of a candidate depends on nothing but its own ``(alpha, gamma,
ridge)`` and the folds, so a candidate scored in a refinement has the score
the exhaustive lattice (``refine=False``) gives it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._cv_stats import ALPHA_STEP, neighbourhood_means, ranked

_F = NDArray[np.float64]

#: up to this many features ``alphas='auto'`` is the lattice (see :func:`._cv_stats.auto_alphas`)
LATTICE_FEATURES = 100
#: the folds of ``cv='auto'`` up to ``AUTO_ROWS`` rows and ``LATTICE_FEATURES`` features (else 5)
AUTO_FOLDS = 10
AUTO_ROWS = 1000
#: the first alphas of the refined search
COARSE_STEP = 0.1
#: the lattice alphas scored around a chosen alpha: those within this distance
WINDOW = 0.06


def auto_folds(cv: Any, n_rows: int, n_features: int) -> Any:
    """``cv``, with ``'auto'`` made ``AUTO_FOLDS`` on a small table, else 5.

    Small: at most ``AUTO_ROWS`` rows and ``LATTICE_FEATURES`` features,
    where a fifth fewer training rows moves the best regularisation most
    and the search costs least.
    """
    if isinstance(cv, str) and cv == "auto":
        return AUTO_FOLDS if n_rows <= AUTO_ROWS and n_features <= LATTICE_FEATURES else 5
    return cv


def searches_lattice(alphas: Any, n_features: int) -> bool:
    """Whether the grid's ``alphas`` are the lattice searched from coarse alphas ('auto', few features)."""
    return isinstance(alphas, str) and alphas == "auto" and n_features <= LATTICE_FEATURES


def lattice_grid() -> _F:
    """Every alpha in steps of ``ALPHA_STEP`` from 0 to 1."""
    return np.round(np.linspace(0.0, 1.0, int(round(1.0 / ALPHA_STEP)) + 1), 12)


def coarse_alphas() -> _F:
    """The alphas of the first round: 0 to 1 in steps of ``COARSE_STEP``."""
    return np.round(np.linspace(0.0, 1.0, int(round(1.0 / COARSE_STEP)) + 1), 12)


def window(alpha: float, scored: _F) -> _F:
    """The lattice alphas within ``WINDOW`` of ``alpha`` that are not in ``scored``."""
    near = lattice_grid()
    near = near[np.abs(near - alpha) <= WINDOW + 1e-9]
    return np.setdiff1d(near, np.round(np.asarray(scored, dtype=float), 12))


def choice_order(
    points: _F,
    scores: _F,
    log_liks: _F | None,
    band: Any,
    neighbourhood: bool,
) -> list[tuple[float, float, float]]:
    """The candidates in the order RDA-CV's rule prefers them, best first.

    ``neighbourhood``: the near-tie rule of :func:`ranked` (``band``) on each
    candidate's score and log-likelihood averaged with its neighbours'
    (:func:`neighbourhood_means`); otherwise on the candidates' own values.
    """
    keys, key_lls = scores, log_liks
    if neighbourhood and log_liks is not None:
        keys = neighbourhood_means(points, scores)
        key_lls = neighbourhood_means(points, log_liks)
    return ranked(points, keys, key_lls, band)


def refine_alphas(
    choose: Callable[[], float],
    score: Callable[[_F], None],
    scored: _F,
) -> None:
    """Score lattice windows around the chosen alpha until its window is scored.

    ``choose()`` is the alpha the rule chooses among the candidates scored so
    far; ``score(alphas)`` scores those alphas at every ``(gamma, ridge)``;
    ``scored`` the alphas scored so far.
    """
    done = np.round(np.asarray(scored, dtype=float), 12)
    while True:
        todo = window(choose(), done)
        if not todo.size:
            return
        score(todo)
        done = np.union1d(done, todo)


def staged_search(
    table: Any,
    grid: tuple[_F, _F, _F],
    grid_scores: Callable[[_F], _F],
    sweep_scores: Callable[[_F, float, float], _F],
    choose: Callable[[], float],
    *,
    lattice: bool,
    refine: bool,
) -> None:
    """RDA-CV's search: fill ``table`` (a ``_Table``) with the candidates' scores.

    ``grid`` holds the alphas, gammas and ridges; ``grid_scores(alphas)`` the
    scores (2, A, G * R) of those alphas at every ``(gamma, ridge)``;
    ``sweep_scores(alphas, gamma, ridge)`` those (2, S) of many alphas at one
    ``(gamma, ridge)``; ``choose()`` the alpha the rule chooses in ``table``.
    ``lattice``: the coarse alphas, then the lattice windows around the
    choice (:func:`refine_alphas`). Otherwise the grid, then with ``refine``
    the sweep of the lattice's alphas at the grid's best ``(gamma, ridge)``
    and the grid's ``(gamma, ridge)`` at the alpha found; these two stages
    steer by the score alone (exact ties to the more regularised candidate),
    the rule choosing among the candidates when the model is derived.
    """
    alphas, gammas, ridges = grid

    def score(a: _F) -> None:
        table.add_grid(a, gammas, ridges, *grid_scores(a))

    first = coarse_alphas() if lattice else alphas
    score(first)
    if lattice:
        refine_alphas(choose, score, first)
        return
    if not refine:
        return
    _, g0, r0 = table.best()
    sweep = np.setdiff1d(lattice_grid(), alphas)
    if sweep.size:
        column = np.full_like(sweep, 1.0)
        table.add(np.column_stack([sweep, g0 * column, r0 * column]), *sweep_scores(sweep, g0, r0))
    a1 = table.best()[0]
    if a1 not in alphas:
        score(np.array([a1]))
