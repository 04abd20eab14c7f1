"""Data larger than memory on the command line: streaming blocks, or a Dask cluster.

Both paths choose the columns exactly as the in-memory path does: the first
rows of the table go through :func:`~bayesrule.cli._data.select` (features
and ``--drop`` globs, a written-out index column left out, the target, the
numeric check), and the names it picks are handed to
:func:`bayesrule.fit_stream` / :func:`bayesrule.iter_predict`, or used to
cut the Dask DataFrame. The model is therefore the one the in-memory fit
gives on the same file, to rounding.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.formats import compression_of, last_cells_missing, open_input, wrong_field_count
from ._data import STDIN, Columns, Dataset, UsageError, na_values_for, read_frame, select
from ._dataset import _table_kind
from ._read_table import (
    _decimal_commas,
    _fields_message,
    _head_text,
    _sniff_separator,
    _table_sep,
    parquet_frame,
    parquet_names,
)
from ._select import missing_target_error, missing_target_note
from ._sources import Data, FileSet

__all__ = [
    "STREAM_BYTES",
    "HEAD_ROWS",
    "dask_table",
    "on_cluster",
    "plan_columns",
    "should_stream",
]

#: files larger than this are streamed unless ``--no-stream`` is given (1 GiB)
STREAM_BYTES = 1 << 30
#: rows read up front to choose the columns (and tell an index column)
HEAD_ROWS = 1000
_DASK_HINT = "pip install 'bayesrule[dask]'"
#: seconds to wait for a scheduler
CONNECT_TIMEOUT = 10.0


def should_stream(data: Data, stream: bool | None, block_rows: int | None) -> bool:
    """Whether to read ``data`` block by block: ``--stream``, or by default above the size.

    By default a CSV or Parquet file (or a set of them) is streamed when it
    is larger than :data:`STREAM_BYTES` (a set: all its files together) or
    ``--block-rows`` is given; ``--no-stream`` reads
    it at once. A source that cannot be streamed (standard input, a ``.zip``
    archive, NumPy files, IDX folders) is an error with ``--stream`` and is
    read at once otherwise.
    """
    if stream is False:
        if block_rows is not None:
            raise UsageError("--block-rows sets the rows of a streamed block; drop --no-stream.")
        return False
    reason = _not_streamable(data)
    if stream is True or block_rows is not None:
        if reason is not None:
            option = "--stream" if stream else "--block-rows"
            raise UsageError(f"{option}: {data}: {reason}; read it without {option}.")
        return True
    if reason is not None:
        return False
    size = data.size if isinstance(data, FileSet) else data.stat().st_size
    return size > STREAM_BYTES


def _not_streamable(data: Data) -> str | None:
    if isinstance(data, FileSet):
        zipped = [p for p in data.paths if compression_of(p) == "zip"]
        if zipped:
            return f"{zipped[0]}: a .zip archive cannot be streamed (use .gz, .bz2, .xz or .zst)"
        return None
    if data == STDIN:
        return "standard input cannot be streamed (give a file)"
    if not data.exists():
        raise UsageError(f"{data}: no such file or directory.")
    if data.is_dir() or _table_kind(data) not in ("CSV", "Parquet"):
        return "only CSV and Parquet files are streamed"
    if compression_of(data) == "zip":
        return "a .zip archive cannot be streamed (use .gz, .bz2, .xz or .zst)"
    return None


def head_frame(data: Data, sep: str | None, rows: int = HEAD_ROWS) -> Any:
    """The first ``rows`` rows of a CSV or Parquet file as a DataFrame (column names as text).

    A CSV file must use the separator the block reader uses (a comma; a tab
    for ``.tsv`` and ``.tab``): another one is an error that says to read it at once.
    Of a set of files, the head is that of the first file that has rows.
    """

    if isinstance(data, FileSet):
        for path in data.paths:
            try:
                return head_frame(path, sep, rows)
            except UsageError as exc:
                if "has no rows" not in str(exc):
                    raise
        raise UsageError(f"{data}: the {data.describe()} have no rows.")

    if _table_kind(data) == "Parquet":
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(data)
        except Exception as exc:  # pyarrow raises several types for a foreign file
            raise UsageError(f"{data}: not a readable Parquet file ({exc}).") from None
        parquet_names(parquet, str(data))  # two equal names: refused as in memory
        try:
            batch = next(parquet.iter_batches(batch_size=rows), None)
        except Exception as exc:  # pyarrow raises several types for a foreign file
            raise UsageError(f"{data}: not a readable Parquet file ({exc}).") from None
        if batch is None:
            raise UsageError(f"{data}: the file has no rows.")
        df = parquet_frame(batch, str(data))
    else:
        compression = compression_of(data)
        expected = _table_sep(data)  # what the block reader takes: a tab for .tsv and .tab
        head = _head_text(data, compression)
        found = sep or _sniff_separator(head, default=expected)
        if found != expected or (found == ";" and _decimal_commas(head)):
            shown = {"\t": "tab", ",": "comma"}.get(found, repr(found))
            raise UsageError(
                f"{data}: streamed CSV files are separated by "
                f"{'tabs (.tsv)' if expected == chr(9) else 'commas'}, this one by {shown}; "
                "read it at once with --no-stream."
            )
        df = read_frame(data, sep=found, nrows=rows)  # the markers and names as in memory
    df.columns = [str(c) for c in df.columns]
    if df.shape[0] == 0:
        raise UsageError(f"{data}: the file has no rows.")
    return df


def plan_columns(
    head: Any, source: str, target: str | None, need_target: bool, columns: Columns
) -> Dataset:
    """The columns the in-memory path would choose, from the first rows of the table.

    Rows of the head whose label is missing are set aside, as ``select`` does;
    the streamed readers refuse such rows with the row number (the notes of
    the head are not repeated).
    """
    ds = select(head, source, target, need_target, columns, missing_target="drop")
    ds.notes = [n for n in ds.notes if not n.startswith("left out") or "index" in n]
    return ds


# ------------------------------------------------------------------ Dask
def _dask_dataframe() -> Any:
    try:
        import dask.dataframe as dd
    except ImportError:
        raise UsageError(f"--scheduler needs Dask, which is not installed: {_DASK_HINT}") from None
    return dd


def dask_table(data: Data, sep: str | None) -> tuple[Any, CsvReading | None]:
    """A CSV or Parquet file, or a set of them, as a Dask DataFrame (column names as text),
    and for CSV how it was split (:class:`CsvReading`, for :func:`dask_select`'s check).

    The partitions of a set come in the order of its files, as in memory and
    streamed (``read_parquet`` would sort the files by their numbers).
    """
    if isinstance(data, FileSet):
        paths, kind = list(data.paths), data.kind
    elif data == STDIN or _table_kind(data) not in ("CSV", "Parquet"):
        raise UsageError(f"--scheduler: {data}: only CSV and Parquet files are read on a cluster.")
    elif not data.exists():
        raise UsageError(f"{data}: no such file or directory.")
    else:
        paths, kind = [data], str(_table_kind(data))
    files = [str(p) for p in paths] if isinstance(data, FileSet) else str(data)
    dd = _dask_dataframe()
    reading = None
    try:
        if kind == "Parquet":
            df = _dask_parquet(dd, files)
        else:
            compressions = {compression_of(p) for p in paths}
            if len(compressions) > 1:
                raise UsageError(
                    f"--scheduler: {data}: the files are compressed in different ways; "
                    "a cluster reads files of one compression."
                )
            (compression,) = compressions
            head = _head_text(paths[0], compression)
            sep = sep or _sniff_separator(head, default=_table_sep(paths[0]))
            decimal = "," if sep == ";" and _decimal_commas(head) else "."
            reading = CsvReading([Path(p) for p in paths], sep, compression)
            df = dd.read_csv(
                files,
                sep=sep,
                decimal=decimal,
                compression=compression,
                na_values=na_values_for(),
                keep_default_na=False,
                # a compressed file cannot be cut into byte ranges
                blocksize=None if compression else "64MB",
            )
    except ImportError as exc:
        raise UsageError(f"--scheduler needs {exc.name}: {_DASK_HINT}") from None
    except UsageError:
        raise
    except Exception as exc:  # dask, pandas and pyarrow raise many types for a foreign file
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"{data}: not a readable table ({first_line}).") from None
    return df.rename(columns={c: str(c) for c in df.columns}), reading


def _dask_parquet(dd: Any, files: str | list[str]) -> Any:
    """``read_parquet`` of one file; of several, one partition per file, in the order given.

    ``read_parquet`` would sort the files by their numbers (``part.2`` before
    ``part.10``), read the values of hive-style folder names (``year=2024``)
    as columns, and join small files into partitions as the columns asked
    for allow (then the features and the labels would not share partitions).
    """
    if isinstance(files, str):
        return dd.read_parquet(files)
    import pyarrow.parquet as pq

    meta = pq.read_schema(files[0]).empty_table().to_pandas()
    return dd.from_map(read_parquet_part, files, meta=meta, label="read-parquet-part")


def read_parquet_part(path: str, columns: list[str] | None = None) -> Any:
    """One Parquet file of a set as a DataFrame (on a worker); only ``columns`` if given."""
    import pandas as pd

    try:
        return pd.read_parquet(path, columns=columns)
    except Exception as exc:  # pyarrow's messages do not name the file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: {first}") from None


def dask_head(df: Any, source: str) -> Any:
    """The first rows of a Dask DataFrame, which the columns are chosen from (:func:`plan_columns`).

    They come from the first partition that has rows: a head over every
    partition would read them all, and a set of files may begin with an empty part.
    """
    for i in range(df.npartitions):
        head = df.partitions[i].compute().iloc[:HEAD_ROWS]
        if head.shape[0]:
            return head
    raise UsageError(f"{source}: the file has no rows.")


@dataclass(frozen=True)
class CsvReading:
    """How :func:`dask_table` splits CSV files: their paths, separator and compression."""

    paths: list[Path]
    sep: str
    compression: str | None

    def refuse_short_rows(self, fields: int, names: list[str]) -> None:
        """UsageError for the first row of a file with fewer fields than ``fields``.

        Dask's partitions are read by pandas, which fills a short row with
        missing values as if its last cells were empty. The files are split
        again by pyarrow (a fraction of pandas' time), and only where pyarrow
        finds another number of fields does the ``csv`` module, pandas' rules,
        look for a short row and its line (pyarrow does not skip spaces after
        a separator as pandas does). Called only when the last column has
        missing values: a short row has one there.
        """
        na = na_values_for()
        for path in self.paths:
            with contextlib.closing(open_input(str(path), self.compression)) as stream:
                if last_cells_missing(stream, self.sep, fields, na) is not None:
                    continue
            with contextlib.closing(open_input(str(path), self.compression)) as stream:
                found = wrong_field_count(stream, self.sep, fields, fewer=True)
            if found is not None:
                raise UsageError(
                    _fields_message(str(path), found.line, found.fields, fields, names)
                )


def dask_select(
    df: Any,
    plan: Dataset,
    numeric: bool,
    missing_target: str = "drop",
    csv: CsvReading | None = None,
) -> tuple[Any, Any]:
    """``(X, y)``: the Dask features and labels of the columns ``plan`` chose (``y`` None
    without a target); rows without a label are left out (a note) or refused.

    With ``csv`` (the second value of :func:`dask_table`), a row with fewer fields than the header
    is refused (:meth:`CsvReading.refuse_short_rows`), as the in-memory read
    refuses it: the missing last cells are counted in the same pass as the
    missing labels.
    """
    import dask

    y = None
    target = plan.target
    names = [str(c) for c in df.columns]
    last = names[-1] if csv is not None and len(names) >= 2 else None
    lazy = [df[c].isnull().sum() for c in (target, last) if c is not None]
    counts = [int(v) for v in dask.compute(*lazy)] if lazy else []
    if last is not None and counts[-1] > 0:
        assert csv is not None
        csv.refuse_short_rows(len(names), names)
    if target is not None:
        missing = counts[0]
        if missing:
            if missing_target == "error":
                raise missing_target_error(plan.source, target, f"{missing:,} rows")
            df = df[df[target].notnull()]
            plan.notes.append(missing_target_note(missing, target))
        y = df[target]
    cols = plan.feature_names or []
    X = df[cols].astype(float) if numeric else df[cols]
    return X, y


@contextlib.contextmanager
def on_cluster(address: str) -> Iterator[Any]:
    """``client_for(address)``, its failures as one-line usage errors."""
    from ..backends.dask import client_for

    try:
        with _quiet_workers(address), client_for(address, timeout=CONNECT_TIMEOUT) as client:
            yield client
    except ImportError as exc:
        raise UsageError(f"--scheduler: {exc}") from None


@contextlib.contextmanager
def _quiet_workers(address: str) -> Iterator[None]:
    """Keep a local cluster's log lines (a failed task's traceback) off the terminal.

    The worker processes of ``--scheduler local`` print Dask's own log on
    this terminal; a task that fails logs its traceback there before the
    command's one-line error. Their logging level is set through Dask's
    environment configuration, which the processes started here read; the
    failure itself still reaches the command's error boundary.
    """
    import os

    key = "DASK_LOGGING__DISTRIBUTED"
    if address != "local" or key in os.environ:
        yield
        return
    os.environ[key] = "critical"
    try:
        yield
    finally:
        os.environ.pop(key, None)


def connect(address: str) -> contextlib.ExitStack:
    """Enter :func:`on_cluster`; an unreachable scheduler is a usage error naming it."""
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(on_cluster(address))
    except UsageError:
        stack.close()
        raise
    except OSError as exc:
        stack.close()
        raise UsageError(f"--scheduler {address}: {exc}") from None
    except Exception as exc:  # something answered that is not a Dask scheduler
        stack.close()
        raise UsageError(
            f"--scheduler {address}: no Dask scheduler answered there "
            f"({type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''})."
        ) from None
    return stack
