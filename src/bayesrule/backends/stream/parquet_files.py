"""Parquet files read one row group (or record batch) at a time."""

from __future__ import annotations

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


#: a row group up to this size (uncompressed) is read whole, with its columns
#: decoded on pyarrow's threads (the fastest read); a larger one in batches
_ROW_GROUP_BYTES = 256 << 20


def _parquet_batches(f: _File, plan: _Plan, batch_rows: int) -> Iterator[Any]:
    pa = _need_pyarrow()
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(f.path)
        meta = pf.metadata
        wanted = set(plan.columns)
        for i in range(pf.num_row_groups):
            rg = meta.row_group(i)
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
    except (pa.ArrowInvalid, pa.ArrowException, OSError) as exc:
        raise ValueError(
            f"{f.name}: cannot be read as Parquet (truncated or corrupt?): {_first_line(exc)}"
        ) from None


def _parquet_chunks(
    files: list[_File],
    selection: _Selection,
    block_rows: int | None,
    dtype: Any,
    buffer: _Ring | None = None,
    columns: bool = False,
) -> Iterator[_Chunk]:
    """The blocks of Parquet files; with ``columns``, held as column views where they can be."""
    first: dict[str, str] | None = None
    plan: _Plan | None = None
    out_dtype = dtype
    for f in files:
        schema = _parquet_schema(f)
        if plan is None:
            names = list(schema.names)
            clean_names(names, f.name)  # two equal names: an error naming it
            plan = _make_plan(
                names, f.name, selection, hidden=index_columns(names, schema.pandas_metadata)
            )
        kinds = _check_schema(f, schema, plan, first)
        if first is None:
            first = kinds
            if out_dtype is None:
                import pyarrow as pa

                f32 = all(schema.field(c).type == pa.float32() for c in plan.features)
                out_dtype = np.float32 if f32 else np.float64
        rows = _auto_rows(block_rows, len(plan.features), np.dtype(out_dtype).itemsize)
        row0 = 0
        for table in _rechunk(_parquet_batches(f, plan, rows), rows):
            if row0 == 0 and f is files[0]:
                _warn_lone_tokens(table, plan, f)
            yield _table_chunk(table, plan, f, row0, out_dtype, buffer, columns)
            row0 += table.num_rows
