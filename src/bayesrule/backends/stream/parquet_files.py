"""Parquet files read one row group (or record batch) at a time."""

from __future__ import annotations

import contextlib
import mmap
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...io.formats import clean_names, index_columns
from .blocks import (
    _auto_rows,
    _check_schema,
    _Chunk,
    _rechunk,
    _Ring,
    _table_chunk,
    _warn_lone_tokens,
    as_numbers,
    widened_columns,
)
from .sources import _File, _first_line, _make_plan, _need_pyarrow, _Plan, _Selection


def _parquet_schema(f: _File) -> Any:
    pa = _need_pyarrow()
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(f.path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(
            f"{f.name}: cannot be read as Parquet (truncated or not a Parquet file?): "
            f"{_first_line(exc)}"
        ) from None


def _parquet_rows(f: _File) -> int:
    import pyarrow.parquet as pq

    try:
        return int(pq.read_metadata(f.path).num_rows)
    except Exception:  # the read itself reports the problem with the file
        return 0


#: blocks held as Arrow's columns (``columns=True``) have this many times the rows of
#: laid-out blocks when ``block_rows`` is not given
COLUMN_BLOCK_FACTOR = 2

#: a row group up to this size (uncompressed) is read whole, with its columns
#: decoded on pyarrow's threads (the fastest read); a larger one in batches
_ROW_GROUP_BYTES = 256 << 20

#: a file is read through a memory map held for row groups of about this many
#: bytes (their data, uncompressed), then mapped afresh (see :func:`_parquet_batches`)
_MAPPED_BYTES = 64 << 20


def _open_parquet(path: Any, meta: Any = None) -> Any:
    """``pq.ParquetFile`` of ``path`` (``meta``: its footer, parsed), memory-mapped if it can be."""
    import pyarrow.parquet as pq

    with contextlib.suppress(OSError):  # a file that cannot be mapped is read
        return pq.ParquetFile(path, memory_map=True, metadata=meta, page_checksum_verification=True)
    return pq.ParquetFile(path, metadata=meta, page_checksum_verification=True)


class _Mapped:
    """A Parquet file read through one memory map whose pages are let go as row groups are read.

    ``pq.ParquetFile`` over the bytes of a map of our own (Python's
    ``mmap``), so that the pages of a row group already read can be dropped
    from the resident memory (``madvise(MADV_DONTNEED)``: a page of a file
    read again is read again from the file, never lost) without mapping the
    file afresh: opening a ``ParquetFile`` parses its schema in Python each
    time (a few milliseconds for 257 columns, 5-10 % of a streamed
    GaussianNB fit of 1 GB when it was done every 64 MB).
    """

    def __init__(self, path: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        with open(path, "rb") as fh:
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        self._size = len(self._map)
        self.file = pq.ParquetFile(
            pa.BufferReader(pa.py_buffer(self._map)), page_checksum_verification=True
        )

    def release(self, rg: Any) -> None:
        """Drop the pages of row group ``rg`` (its first and last column chunks' span)."""
        if rg.num_columns < 1:
            return
        ends = []
        for c in (0, rg.num_columns - 1):
            col = rg.column(c)
            start = col.data_page_offset
            if col.has_dictionary_page and col.dictionary_page_offset is not None:
                start = min(start, col.dictionary_page_offset)
            ends += [start, start + col.total_compressed_size]
        lo = max(0, min(ends)) // mmap.PAGESIZE * mmap.PAGESIZE
        hi = min(self._size, -(-max(ends) // mmap.PAGESIZE) * mmap.PAGESIZE)
        if hi > lo:
            with contextlib.suppress(OSError, ValueError):  # only resident memory is at stake
                self._map.madvise(mmap.MADV_DONTNEED, lo, hi - lo)

    def close(self) -> None:
        self.file.close()
        # the map itself goes with the last Arrow buffer that may share it


def _map_parquet(path: Any) -> _Mapped | None:
    """:class:`_Mapped` of ``path``; None where the platform or the file allows no such map."""
    if not hasattr(mmap.mmap, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return None
    try:
        return _Mapped(path)
    except (OSError, ValueError):  # not mappable (a pipe, an empty file): read otherwise
        return None


def _parquet_batches(f: _File, plan: _Plan, batch_rows: int) -> Iterator[Any]:
    """The record batches of the plan's columns of ``f``, row group by row group.

    The file is read through a memory map: the pages of the file are
    decoded where the operating system holds them, with no read into
    buffers of our own first (a plain read copies each column chunk into
    a freshly allocated buffer, whose pages are faulted in, block after
    block: about half of pyarrow's CPU time reading a cached file, most
    of it system time). The pages of each row group are let go once it
    is read (:class:`_Mapped`), so that the file counts in the resident
    memory only while its row groups are read (a map held over a whole
    1 GB file made it all resident). Where the platform cannot let pages
    go, the map is made again every ``_MAPPED_BYTES`` of row groups
    instead; the footer is parsed once.
    """
    pa = _need_pyarrow()

    pf = mapped = None
    try:
        mapped = _map_parquet(f.path)
        pf = mapped.file if mapped is not None else _open_parquet(f.path)
        meta = pf.metadata
        wanted = set(plan.columns)
        # every column read: the row group's own total (no metadata object per column)
        every = wanted >= set(meta.schema.names)
        mapped_bytes = 0
        for i in range(pf.num_row_groups):
            rg = meta.row_group(i)
            if mapped is None and mapped_bytes >= _MAPPED_BYTES:
                pf.close()
                pf = _open_parquet(f.path, meta)
                mapped_bytes = 0
            mapped_bytes += rg.total_byte_size
            size = rg.total_byte_size
            if not every:
                size = sum(
                    rg.column(c).total_uncompressed_size
                    for c in range(rg.num_columns)
                    if rg.column(c).path_in_schema in wanted
                )
            if size <= _ROW_GROUP_BYTES:
                yield from pf.read_row_group(i, columns=plan.columns, use_threads=True).to_batches()
            else:
                yield from pf.iter_batches(
                    batch_size=batch_rows, row_groups=[i], columns=plan.columns, use_threads=True
                )
            if mapped is not None:
                mapped.release(rg)
    except (pa.ArrowInvalid, pa.ArrowException, OSError) as exc:
        raise ValueError(
            f"{f.name}: cannot be read as Parquet (truncated or corrupt?): {_first_line(exc)}"
        ) from None
    finally:
        if mapped is not None:
            mapped.close()
        elif pf is not None:
            pf.close()  # the map goes when the stream ends, or stops early


@contextlib.contextmanager
def _reading_pool() -> Iterator[None]:
    """Arrow's allocations of a streamed read from jemalloc (or the system's malloc), not mimalloc.

    pyarrow's default pool (mimalloc, in its wheels) serves a read that
    frees each table at once (as a plain read does) well, but in a stream
    the tables are freed later and on other threads (the threads that
    summarise them): the memory then goes back to the system and is
    faulted in again, block after block, and the kernel's time (page
    zeroing, measured by ``benchmarks/bench_out_of_core.py`` as system
    CPU time) grew to about that of the statistics themselves. jemalloc
    keeps it. Only a default pool that is mimalloc is replaced, and it is
    restored when the read ends; a buffer is always freed to the pool it
    came from, so the switch is safe for the arrays still held.
    """
    pa = _need_pyarrow()
    current = pa.default_memory_pool()
    if current.backend_name != "mimalloc":
        yield
        return
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a build without jemalloc
        pool = pa.system_memory_pool()
    pa.set_memory_pool(pool)
    try:
        yield
    finally:
        pa.set_memory_pool(current)


def _parquet_chunks(
    files: list[_File],
    selection: _Selection,
    block_rows: int | None,
    dtype: Any,
    buffer: _Ring | None = None,
    columns: bool = False,
) -> Iterator[_Chunk]:
    """The blocks of Parquet files; with ``columns``, held as column views where they can be."""
    with _reading_pool():
        yield from _parquet_file_chunks(files, selection, block_rows, dtype, buffer, columns)


def _parquet_file_chunks(
    files: list[_File],
    selection: _Selection,
    block_rows: int | None,
    dtype: Any,
    buffer: _Ring | None,
    columns: bool,
) -> Iterator[_Chunk]:
    first: dict[str, str] | None = None
    plan: _Plan | None = None
    out_dtype = dtype
    widened: set[str] = set()
    for f in files:
        schema = _parquet_schema(f)
        if plan is None:
            names = list(schema.names)
            clean_names(names, f.name)  # two equal names: an error naming it
            plan = _make_plan(
                names, f.name, selection, hidden=index_columns(names, schema.pandas_metadata)
            )
            if plan.frame and len(files) > 1:  # footers only: integers here, floats there
                widened = widened_columns([schema, *(_parquet_schema(g) for g in files[1:])], plan)
        kinds = _check_schema(f, schema, plan, first)
        if first is None:
            first = kinds
            if out_dtype is None:
                import pyarrow as pa

                f32 = all(schema.field(c).type == pa.float32() for c in plan.features)
                out_dtype = np.float32 if f32 else np.float64
        rows = _auto_rows(block_rows, len(plan.features), np.dtype(out_dtype).itemsize)
        if columns and block_rows is None:
            # blocks summarised from Arrow's columns are never laid out (no copy to
            # bound): twice the rows halve the per-block work, and a row group of the
            # default 64 Ki rows of 256 float32 columns stays whole
            rows *= COLUMN_BLOCK_FACTOR
        row0 = 0
        for table in _rechunk(_parquet_batches(f, plan, rows), rows):
            table = as_numbers(table, f.name, widened)  # decimals (and widened integers)
            if row0 == 0 and f is files[0]:
                _warn_lone_tokens(table, plan, f)
            yield _table_chunk(table, plan, f, row0, out_dtype, buffer, columns)
            row0 += table.num_rows
