"""The one seam every backend uses: how an estimator is fitted from blocks summarised apart.

A backend (in memory, a stream of files, Dask, ...) fits an estimator
``est`` with three public calls and nothing else:

1. ``spec = est.input_spec()``: what the blocks must look like
   (:class:`InputSpec`: a DataFrame or an array, C or F order, whether blocks
   may be summarised side by side, the fewest classes and rows a fit needs).
2. ``stats = est.fit_plan(reduce, first_block=X0, classes=...)``: runs the
   passes the fit needs. Each pass calls ``reduce(task)`` once; ``task`` is a
   pure, picklable :class:`Summariser` and ``reduce`` (the backend's) returns
   ``task.finish(total)`` where ``total`` is the ``task.combine`` of
   ``task.statistics(X, y, sample_weight, classes)`` over every block of the
   data. Most estimators make one pass; mixture discriminant analysis one per
   EM iteration.
3. ``est.fit_statistics(stats, schema=Schema(...))``: derives every fitted
   attribute from the statistics (or leaves ``est`` unchanged when that fails),
   the dtype and feature names of the data included.

:func:`summarise` is the reduction of an in-memory list of blocks, the
reference every backend's ``reduce`` must equal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["InputSpec", "Schema", "Summariser", "summarise"]


class Schema(NamedTuple):
    """The features of the data a model is fitted on.

    Attributes
    ----------
    n_features : int
    feature_names : ndarray of str or None
        The column names when the data was a table with string column names.
    dtype : numpy.dtype
        The floating dtype of the data (fitted attributes listed by the
        estimator and its outputs follow it; float64 for statistics alone).
    """

    n_features: int
    feature_names: NDArray[Any] | None = None
    dtype: np.dtype[Any] = np.dtype(np.float64)


@dataclass(frozen=True)
class InputSpec:
    """What an estimator's blocks must look like: its input, declared once.

    Attributes
    ----------
    frame : bool
        The statistics read DataFrames with their own column dtypes (MixedNB);
        otherwise numeric arrays.
    order : {'C', 'F'}
        The memory layout the statistics are fastest on.
    side_by_side : bool
        Blocks may be summarised at the same time on several threads (False
        when one block's statistics already spread over the threads, or when
        blocks must be combined in turn).
    min_classes, min_samples : int
        The fewest classes and rows a fit needs.
    allow_nan : bool
        NaN in ``X`` means a missing value (otherwise an error).
    sparse : bool
        SciPy sparse matrices are accepted.
    multi_pass : bool
        The fit reads the data more than once (``fit_plan`` calls ``reduce``
        several times), so a backend must be able to read it again.
    """

    frame: bool = False
    order: str = "C"
    side_by_side: bool = True
    min_classes: int = 2
    min_samples: int = 1
    allow_nan: bool = False
    sparse: bool = False
    multi_pass: bool = False


class Summariser(Protocol):
    """A pure, picklable task that summarises blocks of one pass of a fit."""

    def statistics(
        self, X: Any, y: Any, sample_weight: Any = None, classes: Any = None
    ) -> Any:  # pragma: no cover - protocol
        """The summary of one block (validated as ``fit`` validates its data)."""

    def combine(self, total: Any, block: Any) -> Any:  # pragma: no cover - protocol
        """``total`` with one more block's summary merged in (``total`` None: the first)."""

    def finish(self, total: Any) -> Any:  # pragma: no cover - protocol
        """The pass's result from the combined summaries of every block."""


def summarise(
    task: Summariser,
    blocks: Iterable[tuple[Any, ...]],
    classes: Any = None,
    on_block: Callable[[int, Exception], Exception] | None = None,
) -> Any:
    """Reduce ``blocks`` (``(X, y)`` or ``(X, y, sample_weight)``) with ``task``, in order.

    ``on_block(i, exc)`` may turn an error of block ``i`` into one that names it.
    """
    total = None
    for i, block in enumerate(blocks):
        X, y, *rest = block
        w = rest[0] if rest else None
        try:
            total = task.combine(total, task.statistics(X, y, w, classes))
        except ValueError as exc:
            if on_block is None:
                raise
            raise on_block(i, exc) from exc
    if total is None:
        raise ValueError("no block to summarise: the data holds no rows.")
    return task.finish(total)
