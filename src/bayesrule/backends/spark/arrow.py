"""The executors' side of the Spark backend: Arrow batches in, statistics or predictions out.

Every function here runs inside ``DataFrame.mapInArrow`` on an executor (or
is a plain helper of those that do) and imports no pyspark: a partition
arrives as an iterator of ``pyarrow.RecordBatch``, and what leaves it is one
small batch holding a pickled summary (:func:`summarise_partition`,
:func:`value_counts_partition`) or the input
batches with prediction columns appended (:func:`predict_partition`).

A summary is an :class:`Outcome`: the partition's statistics (None for a
partition without rows), the number of rows it summarised and of rows left
out for a null label, and the first error of the data (a ``ValueError`` or
``TypeError`` the estimator's validation raised), carried back to the driver
as a value so that the driver raises it as it was, instead of Spark
retrying a task that can only fail again.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "SUMMARY",
    "Columns",
    "Outcome",
    "Scratch",
    "block_of",
    "column_views",
    "combine_outcomes",
    "decode",
    "encode",
    "predict_partition",
    "reused_memory",
    "summarise_block",
    "summarise_partition",
    "value_counts_partition",
]

#: the one column of a summary DataFrame: a pickled :class:`Outcome` per row
SUMMARY = "bayesrule_summary"


def encode(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def decode(data: Any) -> Any:
    return pickle.loads(bytes(data))


@dataclass(frozen=True)
class Columns:
    """Which columns of a batch are the features, the labels and the weights, and how to read them.

    ``frame``: the features go to the estimator as a pandas DataFrame with
    their own dtypes (MixedNB); otherwise as one numeric array of ``dtype``
    in ``order``.
    """

    features: tuple[str, ...]
    target: str
    weight: str | None = None
    frame: bool = False
    dtype: str = "float64"
    order: str = "C"


@dataclass(frozen=True)
class Outcome:
    """What one partition (or a group of them) reports to the driver."""

    summary: Any = None
    rows: int = 0
    null_labels: int = 0
    error: BaseException | None = None


def _threads() -> int:
    """The cores a task may use: Spark sets ``OMP_NUM_THREADS`` to ``spark.task.cpus``."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "1")))
    except ValueError:
        return 1


class Scratch:
    """One array reused for the blocks of a task (the statistics keep none of them).

    A fresh array for every block would page-fault its memory in each time
    (hundreds of MB a block for a wide table: system time rivalling the
    statistics' own); a task lays each block out into the same memory.
    """

    def __init__(self) -> None:
        self.flat: Any = None

    def get(self, n: int, p: int, dtype: Any, order: str) -> Any:
        """An ``(n, p)`` array of ``dtype`` in ``order`` ('C' or 'F'), over the held memory."""
        size = n * p
        if self.flat is None or self.flat.dtype != dtype or self.flat.size < size:
            self.flat = None  # the old memory goes before the new is taken
            self.flat = np.empty(size, dtype=dtype)
        return self.flat[:size].reshape((n, p), order="F" if order == "F" else "C")


@contextmanager
def reused_memory() -> Iterator[None]:
    """The statistics' working arrays reused from one block of a task to the next.

    Within it, :func:`bayesrule.stats.scratch_space` hands each block's
    statistics the arrays of the block before (a column pass's class-ordered
    copy of the block is hundreds of MB for a wide table: a fresh one would
    page-fault all of it in again); they go when the task ends.
    """
    from ...stats import scratch_space

    with scratch_space({}):
        yield


def features_of(batch: Any, cols: Columns, scratch: Scratch | None = None) -> Any:
    """The feature columns of a batch, as the estimator takes them (array or pandas DataFrame).

    ``scratch``: the memory to lay the array out in (overwritten by the next
    block's), else a new array.
    """
    import pyarrow as pa

    if cols.frame:
        table = pa.Table.from_batches([batch]).select(list(cols.features))
        return table.to_pandas()
    n = batch.num_rows
    dtype = np.dtype(cols.dtype)
    if scratch is not None:
        X = scratch.get(n, len(cols.features), dtype, cols.order)
    else:
        X = np.empty((n, len(cols.features)), dtype=dtype, order="F" if cols.order == "F" else "C")
    target_type = pa.float32() if dtype == np.float32 else pa.float64()
    for j, name in enumerate(cols.features):
        column = batch.column(batch.schema.get_field_index(name))
        # a cast to floating point: nulls become NaN, booleans and integers numbers
        X[:, j] = column.cast(target_type).to_numpy(zero_copy_only=False)
    return X


def labels_of(batch: Any, cols: Columns) -> tuple[Any, Any, Any, int]:
    """``(batch, y, sample_weight, null_labels)``: the batch without its rows of null label."""
    import pyarrow.compute as pc

    labels = batch.column(batch.schema.get_field_index(cols.target))
    nulls = labels.null_count
    if nulls:
        batch = batch.filter(pc.is_valid(labels))
        labels = batch.column(batch.schema.get_field_index(cols.target))
    y = labels.to_numpy(zero_copy_only=False)
    w = None
    if cols.weight is not None:
        import pyarrow as pa

        w = (
            batch.column(batch.schema.get_field_index(cols.weight))
            .cast(pa.float64())
            .to_numpy(zero_copy_only=False)
        )
    return batch, y, w, int(nulls)


def block_of(
    batch: Any, cols: Columns, scratch: Scratch | None = None
) -> tuple[Any, Any, Any, int]:
    """``(X, y, sample_weight, null_labels)`` of one batch, its rows of null label left out."""
    batch, y, w, nulls = labels_of(batch, cols)
    return features_of(batch, cols, scratch), y, w, nulls


def column_views(batch: Any, cols: Columns) -> list[Any] | None:
    """The feature columns as 1-D NumPy views of Arrow's buffers, or None where they cannot be.

    For a task that summarises columns (``column_statistics``): every
    column must be of the block's float type (float32 or float64) and hold
    no null (a null's slot holds an arbitrary value where a laid-out block
    has NaN).
    """
    import pyarrow as pa

    if cols.frame or cols.dtype not in ("float32", "float64"):
        return None
    want = pa.float32() if cols.dtype == "float32" else pa.float64()
    out = []
    for name in cols.features:
        column = batch.column(batch.schema.get_field_index(name))
        if column.type != want or column.null_count:
            return None
        out.append(column.to_numpy(zero_copy_only=True))
    return out


def summarise_block(
    task: Any, batch: Any, cols: Columns, classes: Any, scratch: Scratch | None = None
) -> tuple[Any, int, int]:
    """``(statistics or None, rows, null labels)`` of one batch.

    A task that summarises columns (``column_statistics``, GaussianNB) is
    given the batch's columns as they are, without laying them out; where
    it answers None (weights, an infinity, labels it refuses...), the block
    laid out goes to ``task.statistics``, whose error names the row.
    """
    batch, y, w, nulls = labels_of(batch, cols)
    if len(y) == 0:
        return None, 0, nulls
    by_columns = getattr(task, "column_statistics", None)
    if by_columns is not None:
        views = column_views(batch, cols)
        if views is not None:
            part = by_columns(views, y, w, classes)
            if part is not None:
                return part, len(y), nulls
    X = features_of(batch, cols, scratch)
    return task.statistics(X, y, w, classes), len(y), nulls


#: the bytes of features a task summarises at once: the statistics' cost per block is
#: several matrix products' worth, so blocks of Spark's 10,000-row batches are joined
BLOCK_BYTES = 1 << 27


def block_rows(cols: Columns) -> int:
    """Rows per block: about ``BLOCK_BYTES`` of features, at least 1024 rows."""
    width = np.dtype(cols.dtype).itemsize * max(1, len(cols.features))
    return max(1024, BLOCK_BYTES // width)


def joined(batches: Iterator[Any], rows: int) -> Iterator[Any]:
    """Consecutive Arrow batches joined into batches of at least ``rows`` rows (the last: fewer)."""
    import pyarrow as pa

    pending: list[Any] = []
    held = 0
    for batch in batches:
        pending.append(batch)
        held += batch.num_rows
        if held >= rows:
            yield _concat(pa, pending)
            pending, held = [], 0
    if pending:
        yield _concat(pa, pending)


def _concat(pa: Any, batches: list[Any]) -> Any:
    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


def _one(outcome: Outcome) -> Any:
    import pyarrow as pa

    return pa.RecordBatch.from_arrays([pa.array([encode(outcome)], pa.binary())], [SUMMARY])


def summarise_partition(
    task: Any, cols: Columns, classes: Any
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function of a pass: each partition's statistics, one row per partition."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        from ..._util.config import config_context

        total, rows, nulls = None, 0, 0
        scratch = Scratch()
        try:
            with config_context(n_threads=_threads()), reused_memory():
                for batch in joined(batches, block_rows(cols)):
                    part, n, dropped = summarise_block(task, batch, cols, classes, scratch)
                    nulls += dropped
                    if part is not None:
                        rows += n
                        total = task.combine(total, part)
        except (ValueError, TypeError) as exc:  # the data's fault: the driver raises it
            yield _one(Outcome(None, rows, nulls, exc))
            return
        yield _one(Outcome(total, rows, nulls))

    return run


def combine_outcomes(task: Any, outcomes: list[Outcome]) -> Outcome:
    """The outcomes of several partitions as one, combined in a balanced tree."""
    for o in outcomes:
        if o.error is not None:
            return o
    level = list(outcomes)
    if not level:
        return Outcome()
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            a, b = level[i], level[i + 1]
            if a.summary is None:
                summary = b.summary
            elif b.summary is None:
                summary = a.summary
            else:
                summary = task.combine(task.combine(None, a.summary), b.summary)
            nxt.append(Outcome(summary, a.rows + b.rows, a.null_labels + b.null_labels))
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def value_counts_partition(
    names: tuple[str, ...], target: str
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """Each integer column's distinct values, their counts and its nulls (rows with a label)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow.compute as pc

        counts: dict[str, dict[int, int]] = {n: {} for n in names}
        nulls = dict.fromkeys(names, 0)
        for batch in batches:
            labels = batch.column(batch.schema.get_field_index(target))
            if labels.null_count:
                batch = batch.filter(pc.is_valid(labels))
            for name in names:
                column = batch.column(batch.schema.get_field_index(name))
                nulls[name] += column.null_count
                found = pc.value_counts(column.drop_null())
                held = counts[name]
                for v, c in zip(
                    found.field("values").to_pylist(),
                    found.field("counts").to_pylist(),
                    strict=True,
                ):
                    held[v] = held.get(v, 0) + c
        yield _one(Outcome((counts, nulls)))

    return run


def predict_partition(
    load: Callable[[], Any],
    methods: tuple[str, ...],
    cols: Columns,
    widths: tuple[int, ...],
    names: tuple[str, ...],
    label_type: Any,
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function of a prediction: each batch with the methods' columns appended.

    ``load()`` gives the estimator (read from a Spark broadcast variable
    where there is one); ``widths`` is the number of columns of each
    method's output (0: one column for a 1-D output); ``names`` every
    column of the result; ``label_type`` the Arrow type of ``predict``'s column.
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import warnings

        import pyarrow as pa

        from ..._util.config import config_context

        est = load()
        for batch in batches:
            arrays = list(batch.columns)
            n = batch.num_rows
            with config_context(n_threads=_threads()), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # nobody reads an executor's warnings
                X = features_of(batch, cols) if n else None
                for method, width in zip(methods, widths, strict=True):
                    if n:
                        out = np.asarray(getattr(est, method)(X))
                    else:  # a batch without rows: its columns without rows
                        out = np.empty((0, width) if width else (0,))
                    if method == "predict":
                        arrays.append(pa.array(out if n else [], type=label_type))
                    elif width == 0:
                        arrays.append(pa.array(out.astype(np.float64).reshape(-1), pa.float64()))
                    else:
                        block = out.astype(np.float64)
                        arrays.extend(pa.array(block[:, k], pa.float64()) for k in range(width))
            yield pa.RecordBatch.from_arrays(arrays, names=list(names))

    return run
