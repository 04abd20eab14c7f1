"""Blocks of rows: Arrow tables to arrays, the reused buffers, and the read-ahead thread."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...io.formats import lone_token
from ...io.table_text import decimals_as_floats, unsupported_message, unsupported_type
from .sources import _File, _listing, _need_pyarrow, _Plan

#: rows of a block when none is given: about this many float64 values (32 MiB),
#: but at least ``_ROWS_PER_FEATURE`` rows per feature, so that the per-block
#: work that does not grow with the rows (a merge of K p x p scatters) stays
#: small beside the block's own products on wide data (784 pixels: 19600 rows)
_BLOCK_VALUES = 1 << 22
_ROWS_PER_FEATURE = 25
#: KernelNB's default bound on the distinct values kept per feature
MAX_VALUES = 2048
#: blocks read ahead of the one being summarised
PREFETCH = 2
#: blocks fit_stream summarises side by side (each on one core)
PIPELINE = 2


# ---------------------------------------------------------------------------------
# Arrow tables to blocks
# ---------------------------------------------------------------------------------
def _is_numeric_type(t: Any) -> bool:
    import pyarrow.types as pt

    return bool(
        pt.is_integer(t)
        or pt.is_floating(t)
        or pt.is_boolean(t)
        or pt.is_null(t)
        or pt.is_decimal(t)
    )


def _temporal(t: Any) -> bool:
    """Timestamps: a table model (MixedNB) takes them declared 'categorical', as in memory."""
    import pyarrow.types as pt

    return bool(pt.is_timestamp(t))


def _type_kind(t: Any) -> str:
    import pyarrow.types as pt

    if pt.is_boolean(t):
        return "bool"
    if pt.is_integer(t):
        return "integer"
    if pt.is_floating(t) or pt.is_decimal(t):  # decimals are read as float64
        return "float"
    if pt.is_dictionary(t) or pt.is_string(t) or pt.is_large_string(t):
        return "string"
    return str(t)


def _check_schema(
    f: _File, schema: Any, plan: _Plan, first: dict[str, str] | None
) -> dict[str, str]:
    """The kind of each column read; checks presence, numbers and agreement with the first file."""
    names = list(schema.names)
    missing = [c for c in plan.columns if c not in names]
    if missing:
        raise ValueError(
            f"{f.name}: has no column {missing[0]!r} (the other files or the request name it); "
            f"its columns are {_listing(names)}."
        )
    kinds = {c: _type_kind(schema.field(c).type) for c in plan.columns}
    for c in plan.features:
        what = unsupported_type(schema.field(c).type)
        if what is not None and not (plan.frame and _temporal(schema.field(c).type)):
            # lists, structs, dates...: no model takes them; timestamps only MixedNB, declared
            # 'categorical' (it names the declaration where they are not)
            raise ValueError(
                unsupported_message(f.name, c, what, leave="give features= without it")
            )
        if not plan.frame and not _is_numeric_type(schema.field(c).type):
            raise ValueError(
                f"{f.name}: column {c!r} holds {kinds[c]} values; this model "
                "needs numbers in its feature columns."
            )
    if first is not None:
        for c in plan.columns:
            a, b = first[c], kinds[c]
            # integers in one file and floats in another are numbers (read as floats, see
            # widened_columns), as pandas and Spark write a column in the parts with a null
            numeric = {"integer", "float"} if plan.frame else {"integer", "float", "bool"}
            if a != b and not (c in plan.features and {a, b} <= numeric):
                raise ValueError(
                    f"{f.name}: column {c!r} holds {b} values, but the first file's holds {a} "
                    "values; the files disagree on the column's type."
                )
    return kinds


def widened_columns(schemas: list[Any], plan: _Plan) -> set[str]:
    """The feature columns that hold integers in some files and floats (or decimals) in others.

    They are read as float64 in every file, so that a table model (MixedNB,
    which tells integers from floats) sees the values a read at once would
    give (pandas joins such parts into a float column).
    """
    import pyarrow.types as pt

    out = set()
    for c in plan.features:
        types = [s.field(c).type for s in schemas if c in s.names]
        floats = any(pt.is_floating(t) or pt.is_decimal(t) for t in types)
        if floats and any(pt.is_integer(t) for t in types):
            out.add(c)
    return out


def as_numbers(table: Any, where: str, widened: set[str] = frozenset()) -> Any:  # type: ignore[assignment]
    """``table`` with its decimal columns, and the ``widened`` integer ones, as float64."""
    pa = _need_pyarrow()
    import pyarrow.types as pt

    table = decimals_as_floats(table, where)
    for c in widened:
        i = table.schema.get_field_index(c)
        if i >= 0 and pt.is_integer(table.schema.types[i]):
            table = table.set_column(
                i, pa.field(c, pa.float64()), table.column(i).cast(pa.float64())
            )
    return table


def _chunked_numpy(col: Any) -> NDArray[Any]:
    """An Arrow (chunked) array as NumPy; nulls become NaN (numbers) or None."""
    pa = _need_pyarrow()
    import pyarrow.types as pt

    if isinstance(col, pa.ChunkedArray):
        if col.num_chunks == 1:
            col = col.chunk(0)
        else:
            col = col.combine_chunks()
    if pt.is_dictionary(col.type):
        col = col.dictionary_decode()
    return np.asarray(col.to_numpy(zero_copy_only=False))


class _Ring:
    """A few arrays used in turn for the blocks of a fit (the statistics keep none of them).

    Fresh arrays for every block would page-fault their memory in each time;
    with ``size`` slots, a block stays untouched while ``size - 1`` newer ones
    are filled (the one being summarised, those read ahead).
    """

    def __init__(self, size: int, order: str = "C") -> None:
        self.slots: list[Any] = [None] * size
        self.next = 0
        self.order = order  # of the blocks: 'C' (rows) or 'F' (columns)

    def get(self, shape: tuple[int, int], dtype: Any) -> NDArray[Any]:
        i = self.next
        self.next = (i + 1) % len(self.slots)
        held = self.slots[i]
        if held is None or held.shape != shape or held.dtype != dtype:
            if self.order == "F":
                held = self.slots[i] = np.empty(shape, dtype=dtype, order="F")
            else:
                held = self.slots[i] = np.empty(shape, dtype=dtype)
        return held


def _fill_matrix(
    table: Any, names: list[str], dtype: Any, ring: _Ring | None = None
) -> NDArray[Any]:
    """The named columns as one (n, p) array, C-ordered unless ``ring.order`` is 'F'.

    C order by default: rows, which most statistics' products run on faster
    than on columns. Laying Arrow's columns out as rows is a transposition,
    though, several times slower than reading the file; the statistics that
    work as fast on columns (``column_major``) get F-ordered blocks, straight
    copies of the columns, into the ring's reused arrays (NumPy's copies
    release the GIL, so that a read-ahead thread overlaps the statistics).
    Row-major blocks Arrow lays out itself (``RecordBatch.to_tensor``, in C++
    without the GIL); columns it cannot take (booleans) are copied one by one.
    """
    pa = _need_pyarrow()
    n = table.num_rows
    shape = (n, len(names))
    rows = ring is None or ring.order != "F"
    batches = table.select(names).to_batches()
    if ring is not None and not rows:
        # column by column into the ring's reused F-ordered array (NumPy's copies
        # release the GIL): the copies of Arrow's to_tensor, without a fresh
        # block-sized allocation per block whose pages fault in again
        out = ring.get(shape, dtype)
        with contextlib.suppress(TypeError, ValueError):  # booleans with nulls: below
            pos = 0
            for batch in batches:
                m = batch.num_rows
                for j, col in enumerate(batch.columns):
                    values = col.to_numpy(zero_copy_only=False)
                    if values.dtype.kind not in "biuf":
                        raise TypeError(f"column {j} is not numeric without nulls")
                    out[pos : pos + m, j] = values
                pos += m
            return out
    if len(batches) == 1:
        # one batch: Arrow's own array is the block (no second copy)
        with contextlib.suppress(pa.ArrowException, TypeError, ValueError):
            whole = np.asarray(batches[0].to_tensor(null_to_nan=True, row_major=rows))
            laid = whole.flags.c_contiguous if rows else whole.flags.f_contiguous
            if whole.dtype == dtype and whole.shape == shape and laid:
                return whole
    out = ring.get(shape, dtype) if ring is not None else np.empty(shape, dtype=dtype)
    pos = 0
    for batch in batches:
        m = batch.num_rows
        if not m:
            continue
        try:
            out[pos : pos + m] = np.asarray(batch.to_tensor(null_to_nan=True, row_major=rows))
        except (pa.ArrowException, TypeError, ValueError):
            for j, col in enumerate(batch.columns):
                out[pos : pos + m, j] = col.to_numpy(zero_copy_only=False)
        pos += m
    return out


def _prefetched(chunks: Iterator[_Chunk], depth: int = PREFETCH) -> Iterator[_Chunk]:
    """The chunks, read ``depth`` ahead on a thread while the caller works on the current one.

    pyarrow and NumPy's copies release the GIL, so reading the next block
    overlaps the statistics of this one. The queue holds at most ``depth``
    blocks, so memory stays bounded by the blocks in flight. An error of the
    reader (any exception, KeyboardInterrupt included) is raised here, in
    order, after the blocks read before it; closing this generator (or an
    error of the caller) stops the reader and waits for its thread to end.
    ``depth=0`` reads in the calling thread, one block at a time.
    """
    import queue
    import threading

    if depth <= 0:
        try:
            yield from chunks
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        return

    q: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for chunk in chunks:
                if not put(("chunk", chunk)):
                    return
            put(("end", None))
        except BaseException as exc:  # handed to the consumer, raised there
            put(("error", exc))

    thread = threading.Thread(target=work, name="bayesrule-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = q.get()
            if kind == "chunk":
                yield value
            elif kind == "end":
                return
            else:
                raise value
    finally:
        stop.set()
        thread.join()
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


def _labels(table: Any, name: str, where: str, row0: int) -> NDArray[Any]:
    y = _chunked_numpy(table.column(name))
    if y.dtype.kind == "O":
        items = y.tolist()
        bad = [i for i, v in enumerate(items) if v is None]
        if bad:
            raise ValueError(
                f"{where}: the target column {name!r} has a missing value at row {row0 + bad[0] + 1}."
            )
        y = np.asarray([str(v) for v in items])
    elif y.dtype.kind == "f" and np.isnan(y).any():
        r = int(np.flatnonzero(np.isnan(y))[0])
        raise ValueError(
            f"{where}: the target column {name!r} has a missing value at row {row0 + r + 1}."
        )
    return y


@dataclass
class _Chunk:
    """A block of rows, with where it comes from.

    ``X`` is the block laid out (an array or a DataFrame). A block read with
    ``columns`` (Parquet, for a task that summarises columns) holds instead
    its feature columns as they were read, ``columns`` (zero-copy NumPy
    views of the Arrow buffers), and is laid out only if ``X`` is asked for
    (by ``layout``, then kept).
    """

    data: Any  # X, or None until a block held as columns is laid out
    y: NDArray[Any] | None
    w: NDArray[Any] | None
    keep: Any  # an Arrow table of the kept columns, or None
    where: str
    row0: int  # rows before this block in its file (or stream)
    nbytes: int
    names: list[str] | None = None  # the feature columns of a file, for array blocks
    columns: list[NDArray[Any]] | None = None  # one 1-D array per feature
    layout: Callable[[], Any] | None = None  # X from the columns' table

    @property
    def X(self) -> Any:
        if self.data is None:
            assert self.layout is not None
            self.data = self.layout()
        return self.data

    @property
    def n_rows(self) -> int:
        if self.data is None and self.columns is not None:
            return int(self.columns[0].shape[0])
        return _n_rows(self.X)

    def schema(self) -> tuple[int, Any, Any]:
        """``(n_features, names, dtype)`` of the block, without laying it out."""
        if self.data is None and self.columns is not None:
            dtype = np.float32 if self.columns[0].dtype == np.float32 else np.float64
            return len(self.columns), self.names, dtype
        return _schema_of(self.X, self.names)


def _column_views(features: Any, dtype: Any) -> list[NDArray[Any]] | None:
    """The columns of ``features`` (an Arrow table) as 1-D NumPy arrays sharing Arrow's buffers.

    None where they cannot: every column must hold ``dtype`` (float32 or
    float64) values and no null (a null's slot holds an arbitrary value,
    where a laid-out block has NaN); a column of several chunks (a block
    across two record batches) is joined into one first (Arrow's copy,
    without the GIL). The columns are taken by position (a lookup by name
    searches the schema, per column and per block).
    """
    pa = _need_pyarrow()
    if np.dtype(dtype) not in (np.float32, np.float64):
        return None
    want = pa.float32() if np.dtype(dtype) == np.float32 else pa.float64()
    if any(t != want for t in features.schema.types):
        return None
    out = []
    for col in features.columns:
        if col.null_count:
            return None
        arr = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
        out.append(arr.to_numpy(zero_copy_only=True))
    return out


def _table_chunk(
    table: Any,
    plan: _Plan,
    f: _File,
    row0: int,
    dtype: Any,
    ring: _Ring | None = None,
    columns: bool = False,
) -> _Chunk:
    """The block of ``table``: ``X`` laid out, or with ``columns`` its column views when it can."""
    n = table.num_rows
    where = f"{f.name}, rows {row0 + 1}-{row0 + n}"
    views = None
    features = table.select(plan.features)
    if plan.frame:
        X = features.to_pandas()
    elif (
        columns
        and n
        and plan.weight is None  # a weighted block is summarised laid out
        and (views := _column_views(features, dtype)) is not None
    ):
        X = None  # laid out (on the summarising thread) only if the task asks for X
    else:
        X = _fill_matrix(table, plan.features, dtype, ring)
    y = _labels(table, plan.target, f.name, row0) if plan.target else None
    w = None
    if plan.weight is not None:
        w = np.asarray(_chunked_numpy(table.column(plan.weight)), dtype=np.float64)
    keep = table.select(plan.keep) if plan.keep else None
    nbytes = int(table.nbytes)
    chunk = _Chunk(X, y, w, keep, where, row0, nbytes, list(plan.features))
    if views is not None:
        chunk.columns = views
        chunk.layout = lambda: _fill_matrix(features, plan.features, dtype)
    return chunk


def _rechunk(batches: Iterable[Any], rows: int) -> Iterator[Any]:
    """Arrow tables of ``rows`` rows (the last one fewer) from record batches."""
    pa = _need_pyarrow()
    held: list[Any] = []
    count = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        held.append(batch)
        count += batch.num_rows
        while count >= rows:
            table = pa.Table.from_batches(held)
            yield table.slice(0, rows)
            rest = table.slice(rows)
            held = rest.to_batches() if rest.num_rows else []
            count = rest.num_rows
    if count:
        yield pa.Table.from_batches(held)


def _auto_rows(block_rows: int | None, p: int, itemsize: int = 8) -> int:
    """The rows of a block: ``block_rows``, or as many as make the default block's bytes.

    float32 blocks get twice the rows of float64 ones: the same memory, and
    half as many blocks, so half the per-block work (the merge of the
    summaries, the class order of the rows) over a source.
    """
    if block_rows:
        return int(block_rows)
    return _default_rows(p, 1024) * max(1, 8 // max(int(itemsize), 1))


def _warn_lone_tokens(table: Any, plan: _Plan, f: _File) -> None:
    """Warn of a text feature holding numbers and one repeated token (``?``), from its first block."""
    import pyarrow.types as pt

    if not plan.frame:
        return  # numbers are required: a token is an error naming its row
    for c in plan.features:
        t = table.schema.field(c).type
        if not (pt.is_string(t) or pt.is_large_string(t)):
            continue
        found = lone_token(table.column(c).to_pandas())
        if found is not None:
            token, count = found
            warnings.warn(
                f"{f.name}: the column {c!r} holds numbers and {count:,} cell"
                f"{'s' if count != 1 else ''} {token!r} in its first {table.num_rows:,} rows, so "
                f"it is read as text; if {token!r} marks a missing value, pass "
                f"na_values=[{token!r}].",
                UserWarning,
                stacklevel=4,
            )


def _default_rows(p: int, least: int) -> int:
    """Rows of a block of ``p`` columns when the caller gave none."""
    return max(least, _BLOCK_VALUES // max(p, 1), _ROWS_PER_FEATURE * p)


def _n_rows(X: Any) -> int:
    return int(X.shape[0]) if hasattr(X, "shape") else len(X)


def _schema_of(X: Any, names: list[str] | None = None) -> tuple[int, Any, Any]:
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        listed = [str(c) for c in X.columns]
        if all(isinstance(c, str) for c in X.columns):
            names = listed
        p = len(listed)
        dtype = np.float64
        if all(str(t) == "float32" for t in X.dtypes):
            dtype = np.float32
    else:
        arr = X if hasattr(X, "ndim") else np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(f"X of a block must be 2-D; got shape {arr.shape}.")
        p = int(arr.shape[1])
        dtype = np.float32 if arr.dtype == np.float32 else np.float64
    return p, names, dtype
