"""Fitting from Dask collections: the estimator's passes, each one ``dask.compute``.

The estimator drives its own fit through the public seam
(:mod:`bayesrule.estimators.seam`): ``est.fit_plan(reduce, first_block=...,
classes=...)`` calls ``reduce(task)`` once per pass over the data — once for
most models, once per EM pass for mixture discriminant analysis — and this
module's ``reduce`` is the Dask one: the pass's task (a small, picklable
object: the estimator's parameters, and for an EM pass its current model)
enters the graph once, every row block is summarised where it lives by
``task.statistics``, the summaries are combined in a tree of
``task.combine`` tasks on the workers, and only the combined summary comes
back to the client, which calls ``task.finish``. The block tasks are pure: a
block lost with a worker is summarised again.
"""

from __future__ import annotations

from typing import Any

from ..._util.config import get_config
from ..._util.dispatch import not_mergeable
from .blocks import (
    align,
    check_fitted_features,
    find_classes,
    first_block,
    n_rows,
    rows_of,
    schema_of,
)
from .cluster import blas_for_tasks, task_settings

__all__ = ["SPLIT_EVERY", "collection_statistics", "reducer"]

#: how many summaries one combine task takes
SPLIT_EVERY = 8


def _summarise_block(
    task: Any, X: Any, y: Any, w: Any, classes: Any, settings: dict[str, Any]
) -> Any:
    """A block's summary (None for a block without rows): the pure task of a pass."""
    if n_rows(X) == 0:
        return None
    with task_settings(settings):
        return task.statistics(X, y, sample_weight=w, classes=classes)


def _combine(task: Any, *parts: Any) -> Any:
    """``task.combine`` of the summaries present (None: no block had rows)."""
    total = None
    for part in parts:
        if part is not None:
            total = task.combine(total, part)
    return total


def _tree(task: Any, parts: list[Any], split_every: int = SPLIT_EVERY) -> Any:
    """The combine of ``parts`` as a tree of tasks, ``split_every`` at a time.

    The summaries of blocks and the combined summaries of groups of blocks
    are alike (a mergeable statistic), so a group's total combines into the
    next level as a block's summary does; every part passes through
    ``task.combine`` at least once.
    """
    from dask import delayed

    combine = delayed(_combine, pure=True)
    level = [combine(task, *parts[i : i + split_every]) for i in range(0, len(parts), split_every)]
    while len(level) > 1:
        level = [
            combine(task, *level[i : i + split_every]) for i in range(0, len(level), split_every)
        ]
    return level[0] if level else None


def reducer(
    xs: list[Any], ys: list[Any], ws: list[Any], classes: Any, settings: dict[str, Any]
) -> Any:
    """The ``reduce(task)`` of a fit over row blocks (delayed ``X``, ``y``, weight pieces).

    Each call is one ``dask.compute``; the calling thread holds the one BLAS
    limit of tasks run in its own threads (:func:`~.cluster.blas_for_tasks`).
    """
    import dask

    summarise = dask.delayed(_summarise_block, pure=True)

    def reduce(task: Any) -> Any:
        # the task once in the graph, not traversed: a small object of parameters
        # (and for an EM pass, the pass's model)
        shared = dask.delayed(task, pure=False, traverse=False)
        parts = [
            summarise(shared, xb, yb, wb, classes, settings)
            for xb, yb, wb in zip(xs, ys, ws, strict=True)
        ]
        with blas_for_tasks():
            (total,) = dask.compute(_tree(shared, parts))
        if total is None:
            raise ValueError("X has 0 samples; at least one is required.")
        return task.finish(total)

    return reduce


def _refusal(est: Any) -> str:
    return not_mergeable(est, "Dask collections", "block", "Dask")


def collection_statistics(
    est: Any, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
) -> tuple[Any, Any]:
    """The fitted statistics of Dask collections, and X's schema (feature count, names, dtype).

    Called (through the Dask handler) by the estimators' ``fit``,
    ``partial_fit``, ``forget`` and ``statistics`` for Dask input; ``reset``
    is True for a new fit (the estimator's fitted choices are forgotten) and
    False for a block added to or removed from a fitted model (its choices
    kept, its features checked). The labels are found first, in one pass over
    ``y``, unless ``classes`` are given.
    """
    from sklearn.base import clone

    name = type(est).__name__
    spec = est.input_spec()
    if not spec.multi_pass and not hasattr(type(est), "partial_fit"):
        raise TypeError(_refusal(est))
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None.")
    if getattr(est, "covariance_estimator", None) is not None:
        raise TypeError(
            f"{name} with a covariance_estimator needs all rows at once and cannot be fitted "
            "on Dask collections; use shrinkage instead."
        )
    xs, lengths = rows_of(X, est)
    if not reset:
        check_fitted_features(est, X)
    ys, lengths = align(y, "y", xs, lengths)
    ws, lengths = align(sample_weight, "sample_weight", xs, lengths)
    if classes is None:  # every block then declares the same classes
        classes = find_classes(ys)
    # a new fit forgets what a former one chose; a fitted model's choices are kept
    planner = clone(est) if reset else est
    # choices made from the data themselves (MixedNB's column kinds, read from a
    # DataFrame's values) need the first block's rows; the others its metadata
    first = first_block(X, xs, compute=reset and spec.frame)
    reduce = reducer(xs, ys, ws, classes, get_config())
    stats = planner.fit_plan(reduce, first_block=first, classes=classes)
    return stats, schema_of(X)
