"""Opening a source as a stream of blocks; :func:`read_blocks`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...io.formats import na_markers
from .arrays import _iterable_chunks, _npy_chunks
from .blocks import PIPELINE, PREFETCH, _Chunk, _Ring
from .csv_files import _csv_chunks
from .parquet_files import COLUMN_BLOCK_FACTOR, _parquet_chunks, _parquet_rows
from .sources import _csv_options, _files, _Selection, _total_bytes


# ---------------------------------------------------------------------------------
# the reader
# ---------------------------------------------------------------------------------
@dataclass
class _Reader:
    """Blocks of a source, with what a progress bar needs to know of it."""

    chunks: Iterator[_Chunk]
    total: int | None  # in units (rows or bytes), when known
    unit: str  # 'rows' or 'bytes'
    counter: list[int] | None  # bytes read so far (CSV)
    #: at most this many blocks read ahead (None: as the caller chooses); blocks held
    #: as Arrow's columns are COLUMN_BLOCK_FACTOR times larger, so fewer of them
    ahead: int | None = None


def _open(
    source: Any,
    *,
    features: Any = None,
    target: Any = None,
    weight: Any = None,
    keep: Any = None,
    block_rows: int | None = None,
    frame: bool = False,
    dtypes: dict[str, Any] | None = None,
    dtype: Any = None,
    exclude: Sequence[str] = (),
    reuse: bool = False,
    order: str = "C",
    columns: bool = False,
    sep: str | None = None,
    decimal: str | None = None,
    na_values: Any = None,
) -> _Reader:
    if block_rows is not None and (not isinstance(block_rows, (int, np.integer)) or block_rows < 1):
        raise ValueError(f"block_rows must be a positive int or None; got {block_rows!r}.")
    na_markers(na_values)  # checked whatever the source
    files = _files(source)
    if files is None:
        if isinstance(source, np.ndarray) or hasattr(source, "iloc"):
            raise TypeError(
                "source is an array: give a file path, a list of paths, or an iterable of "
                "(X, y) blocks (for data in memory, call the estimator's fit)."
            )
        if not isinstance(source, Iterable):
            raise TypeError(
                "source must be a path (CSV, Parquet, .npy, a directory or a glob), a list of "
                f"paths, or an iterable of (X, y) blocks; got {type(source).__name__}."
            )
        return _Reader(_iterable_chunks(source), None, "rows", None)
    kind = files[0].kind
    if kind != "csv" and (sep is not None or decimal is not None):
        raise ValueError(f"sep and decimal apply to CSV files; the source is {kind}.")
    if kind == "csv":
        _csv_options(files, sep, decimal, na_values)
    # fit_stream reuses a few arrays for the blocks (the statistics keep none of them)
    buffer = _Ring(PREFETCH + 2 + PIPELINE, order) if reuse else None
    if kind == "npy":
        total = sum(int(np.load(f.path, mmap_mode="r").shape[0]) for f in files)
        chunks = _npy_chunks(
            files, features=features, target=target, weight=weight, block_rows=block_rows
        )
        return _Reader(chunks, total, "rows", None)
    for what, col in (("target", target), ("weight", weight)):
        if col is not None and not isinstance(col, str):
            raise TypeError(f"{what} must name a column of the file; got {col!r}.")
    selection = _Selection(features, target, weight, keep, frame, exclude)
    if kind == "parquet":
        # blocks held as columns (a whole Arrow table each, COLUMN_BLOCK_FACTOR times the
        # rows of a laid-out one by default) are read ahead in as many bytes, not blocks
        ahead = max(1, PREFETCH // COLUMN_BLOCK_FACTOR) if columns and not frame else None
        return _Reader(
            _parquet_chunks(files, selection, block_rows, dtype, buffer, columns),
            sum(_parquet_rows(f) for f in files),
            "rows",
            None,
            ahead,
        )
    counter = [0]
    return _Reader(
        _csv_chunks(files, selection, block_rows, dtypes, dtype, counter, buffer),
        _total_bytes(files),
        "bytes",
        counter,
    )


def read_blocks(
    source: Any,
    *,
    target: Any = None,
    features: Any = None,
    weight: Any = None,
    block_rows: int | None = None,
    frame: bool = False,
    dtypes: dict[str, Any] | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    na_values: str | Sequence[str] | None = None,
) -> Iterator[tuple[Any, ...]]:
    """Blocks of rows of a CSV, Parquet or ``.npy`` source, never the whole source at once.

    Parameters
    ----------
    source : path, list of paths, glob or directory
        CSV files (``.csv``, ``.tsv``, optionally compressed: ``.gz``,
        ``.bz2``, ``.xz``, ``.zst``), Parquet files (``.parquet``, ``.pq``;
        a directory means every Parquet file under it) or 2-D ``.npy`` arrays
        (memory-mapped).
    target : str, int, path or array, optional
        The label column (a column name; for ``.npy`` a column index, or a
        1-D ``.npy`` file or array of labels). Without it ``y`` is None.
    features : str or list of str, optional
        Feature columns, as names or glob patterns (``"pixel*"``); for
        ``.npy``, column indices. By default every column but the target and
        the weight.
    weight : str, int, path or array, optional
        A column of sample weights; then blocks are ``(X, y, sample_weight)``.
    block_rows : int, optional
        Rows per block; by default about 32 MiB of float64 values, and at least
        25 rows per feature.
    frame : bool, default=False
        Give ``X`` as a pandas DataFrame with the columns' own dtypes
        (strings, categories: what :class:`~bayesrule.MixedNB` takes) instead
        of a float array (float32 when every feature column of a Parquet
        file is float32, else float64).
    dtypes : dict, optional
        CSV column types (``{"zip": "string", "x": "float64"}``); by default
        those inferred from the first block, kept for the rest of the source.
    sep : str, optional
        The CSV field separator; by default sniffed from the first lines of
        the first file among ``,`` ``;`` tab and ``|`` (a tab for ``.tsv``),
        as the command line does.
    decimal : {'.', ','}, optional
        The CSV decimal mark; by default a comma when a ``;``-separated file
        writes its numbers so (``1,5``), else a point.
    na_values : str or list of str, optional
        CSV cell texts read as missing besides the defaults, an empty cell,
        ``NA``, ``N/A``, ``n/a``, ``NaN``, ``nan``, ``null`` and ``NULL``
        (``None``, ``?`` and ``-`` are values unless given here). A text
        feature holding numbers and one repeated token is warned about.

    Header names are stripped of spaces (``a, b, label``) and two equal
    names are an error; by default the features leave out the columns a
    DataFrame's index was written to (Parquet's ``__index_level_0__`` and
    the index columns its pandas metadata lists, a CSV's unnamed first
    column), which a name in ``features`` still reads.

    Yields
    ------
    tuple
        ``(X, y)``, or ``(X, y, sample_weight)`` with a weight column.

    Raises
    ------
    ValueError
        Naming the file and column (and the row, for CSV) of a missing
        column, a cell that is not a number, files that disagree on their
        columns or types, or a file that cannot be read.
    """
    reader = _open(
        source,
        features=features,
        target=target,
        weight=weight,
        block_rows=block_rows,
        frame=frame,
        dtypes=dtypes,
        sep=sep,
        decimal=decimal,
        na_values=na_values,
    )
    for chunk in reader.chunks:
        if weight is None:
            yield chunk.X, chunk.y
        else:
            yield chunk.X, chunk.y, chunk.w
