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

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["InputSpec", "Schema", "Summariser", "schema_of", "summarise"]


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
    """What an estimator's input must look like and how it is checked: declared once.

    Each estimator class declares one, ``spec = InputSpec(...)`` (a subclass:
    ``spec = Parent.spec.replace(...)``), and
    ``est.input_spec()`` returns it with the layout fields (``order``,
    ``side_by_side``, ``statistic``) settled by the statistic the fit uses.

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
    column_blocks : bool
        The one-pass task (``summariser()``) also summarises a block held
        column by column, ``task.column_statistics(columns, y, sample_weight,
        classes)`` (one 1-D float array per feature; None: give it laid out
        to ``statistics``), so that a backend reading columnar data (Parquet)
        need not lay its blocks out.
    min_classes, min_samples : int
        The fewest classes and rows a fit needs.
    allow_nan : bool
        NaN in ``X`` means a missing value (otherwise an error).
    sparse : bool
        SciPy sparse (CSR) matrices are accepted, and kept sparse.
    multi_pass : bool
        The fit reads the data more than once (``fit_plan`` calls ``reduce``
        several times), so a backend must be able to read it again.
    infers_from_data : bool
        The statistics of a block depend on choices made from the data
        themselves (MixedNB's column kinds): give ``summariser`` the first
        block, so that every block's summary is made with the same choices.
    statistic : type or None
        The statistics class a block is summarised by (see
        :mod:`bayesrule.stats`); for ``input_spec()``, the one of this fit
        (the discriminant analyses' ``moments`` may choose an extension).
    positive : bool
        Negative values are refused (counts, category codes).
    values : str
        What the values are, in the message refusing a negative one.
    strict_priors : bool
        Priors that do not sum to 1 are refused instead of renormalised
        (scikit-learn's GaussianNB refuses; its discriminant analyses renormalise).
    deferred_finite_check : bool
        NaN and infinity are looked for in the results (statistics, scores)
        instead of in ``X`` first, and ``X`` is searched for the offending row
        only when a result is not finite (non-finite input always reaches
        these models' results; this saves a pass over the data).
    sign_from_stats : bool
        For ``positive`` models whose statistic records each feature's least
        value in its own pass: the fit reads the sign from it, not from ``X``.
    inf_reaches_results : bool
        +inf in ``X`` always makes the log likelihood non-finite, so the
        deferred check catches it (not so after binarising, or far in a
        kernel density's tail, where ``X`` is checked at once).
    input_dtype_attrs : tuple of str
        Fitted attributes given in the input's dtype (float32 input, float32
        attributes) where scikit-learn's namesake does so; the statistics and
        the derivation stay float64.
    input_dtype_outputs : bool
        ``predict_proba`` and its kin are given in the input's dtype.
    poor_score : bool
        scikit-learn's estimator-checks tag: on the checks' Gaussian blobs the
        model is not expected to score well (count and binary models).
    """

    frame: bool = False
    order: str = "C"
    side_by_side: bool = True
    column_blocks: bool = False
    min_classes: int = 2
    min_samples: int = 1
    allow_nan: bool = False
    sparse: bool = False
    multi_pass: bool = False
    infers_from_data: bool = False
    statistic: Any = None
    positive: bool = False
    values: str = "counts"
    strict_priors: bool = False
    deferred_finite_check: bool = False
    sign_from_stats: bool = False
    inf_reaches_results: bool = True
    input_dtype_attrs: tuple[str, ...] = ()
    input_dtype_outputs: bool = False
    poor_score: bool = False

    def replace(self, **changes: Any) -> InputSpec:
        """This specification with some fields changed (a subclass's: ``Parent.spec.replace(...)``)."""
        return dataclasses.replace(self, **changes)


def schema_of(X: Any, n_features: int | None = None, dtype: Any = None) -> Schema:
    """The :class:`Schema` of a block of data ``X`` (its feature names when it has string column names).

    ``n_features`` defaults to ``X.shape[1]``; ``dtype`` (the floating dtype
    the data were validated to) to float64.
    """
    columns = getattr(X, "columns", None)
    names = None
    if columns is not None and hasattr(X, "dtypes"):
        listed = np.asarray(list(columns), dtype=object)
        if listed.size and all(isinstance(n, str) for n in listed):
            names = listed
    n = int(X.shape[1]) if n_features is None else int(n_features)
    return Schema(n, names, np.dtype(np.float64 if dtype is None else dtype))


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
