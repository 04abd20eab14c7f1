"""Out-of-core fitting and prediction: every model from files larger than memory.

A source is read one block of rows at a time (CSV, compressed or not, through
pyarrow's streaming CSV reader; Parquet files, directories, lists and globs,
one record batch at a time; ``.npy`` arrays memory-mapped; or any iterable of
``(X, y)`` / ``(X, y, sample_weight)`` blocks). :func:`fit_stream` turns each
block into its statistics with the public seam ``est.statistics`` and merges
them, so that memory is bounded by the block size and the statistics
(``O(K p^2)`` at most), never by the number of rows; the model is derived once
at the end and equals ``fit`` on all the rows at once (to rounding).
:func:`predict_stream` and :func:`iter_predict` stream predictions the same way.

Kernel naive Bayes keeps every distinct value of each feature, which grows
with continuous data; here its statistics are kept bounded by binning a
feature onto a fixed power-of-two grid once it holds more than ``max_values``
distinct values (see :func:`fit_stream`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import os
import re
import sys
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._util import parallel as _parallel
from ...io.formats import (
    STREAMED_COMPRESSIONS,
    clean_names,
    decimal_for,
    header_names,
    index_columns,
    lone_token,
    na_markers,
    near_name,
    output_format,
    read_head,
    replacing,
    sniff_separator,
    suffix_help,
    table_path,
    write_frames,
)

__all__ = ["fit_stream", "iter_predict", "predict_stream", "read_blocks"]

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

_METHODS = (
    "predict",
    "predict_proba",
    "predict_log_proba",
    "predict_joint_log_proba",
    "decision_function",
    "score_samples",
    "class_log_density",
)


def _need_pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:  # pragma: no cover - pyarrow is installed in the test environment
        raise ImportError(
            "reading CSV and Parquet files block by block needs pyarrow: "
            "pip install 'bayesrule[parquet]'"
        ) from None
    return pyarrow


# ---------------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------------
@dataclass
class _File:
    path: Path
    kind: str  # 'csv', 'parquet', 'npy'
    compression: str | None = None
    # CSV: how the text is read (see _csv_options), and the header's names once read
    sep: str = ","
    decimal: str = "."
    null_values: list[str] = field(default_factory=lambda: na_markers(None))
    names: list[str] | None = None

    @property
    def name(self) -> str:
        return str(self.path)


def _kind_of(path: Path) -> _File:
    if path.suffix.lower() == ".npy":
        return _File(path, "npy")
    found = table_path(path)
    if found is not None and found.name == "Parquet":
        return _File(path, "parquet")
    if found is not None and found.format.is_csv:
        if found.compression not in (None, *STREAMED_COMPRESSIONS):
            raise ValueError(
                f"source {str(path)!r}: a .zip archive cannot be read block by block; "
                "compress it with gzip, bzip2, xz or zstd instead."
            )
        return _File(path, "csv", found.compression, sep=found.format.sep or ",")
    if found is not None:
        raise ValueError(
            f"source {str(path)!r}: {found.name} files are not read block by block; read the "
            "table with pandas and call the estimator's fit, or convert it to CSV or Parquet."
        )
    raise ValueError(
        f"source {str(path)!r}: cannot tell its format from the name; expected a CSV or "
        f"Parquet file ({suffix_help(path)}) or .npy."
    )


def _csv_options(files: list[_File], sep: str | None, decimal: str | None, na_values: Any) -> None:
    """Set how every CSV file is read: the separator and decimal mark of the first, the markers.

    The separator (among , ; tab |) and the decimal mark are sniffed from
    the first lines of the first file unless given, as the command line
    does. A missing-value marker also counts after the space that follows
    a separator (``a, NA, c``).
    """
    markers = na_markers(na_values)
    if sep is not None and (not isinstance(sep, str) or len(sep) != 1):
        raise ValueError(f"sep must be one character; got {sep!r}.")
    if decimal is not None and decimal not in (".", ","):
        raise ValueError(f"decimal must be '.' or ','; got {decimal!r}.")
    first = files[0]
    head = ""
    if sep is None or decimal is None:
        try:
            head = read_head(first.path, first.compression)
        except (OSError, EOFError, ValueError) as exc:
            raise ValueError(f"{first.name}: cannot be read as CSV: {_first_line(exc)}") from None
    sep = sep if sep is not None else sniff_separator(head, default=first.sep)
    decimal = decimal if decimal is not None else decimal_for(head, sep)
    if decimal == sep:
        raise ValueError(f"decimal {decimal!r} is also the separator; give sep=.")
    nulls = list(dict.fromkeys([*markers, *(" " + m for m in markers)]))
    for f in files:
        f.sep, f.decimal, f.null_values = sep, decimal, nulls


def _is_path(source: Any) -> bool:
    return isinstance(source, (str, os.PathLike))


def _files(source: Any) -> list[_File] | None:
    """The files of a path, directory, glob or list of them; None for an iterable of blocks."""
    if _is_path(source):
        items: list[Any] = [source]
    elif isinstance(source, (list, tuple)) and source and all(_is_path(s) for s in source):
        items = list(source)
    else:
        return None
    out: list[_File] = []
    for item in items:
        text = os.fspath(item)
        if any(ch in text for ch in "*?[") and not Path(text).exists():
            found = sorted(glob.glob(text, recursive=True))
            if not found:
                raise ValueError(f"source {text!r}: no file matches this pattern.")
            out.extend(_kind_of(Path(f)) for f in found if Path(f).is_file())
            continue
        path = Path(text)
        if path.is_dir():
            inner: list[_File] = []
            for q in sorted(path.rglob("*")):
                if q.is_file() and not q.name.startswith((".", "_")):
                    with contextlib.suppress(ValueError):
                        inner.append(_kind_of(q))
            if not inner:
                raise ValueError(
                    f"source {text!r}: the directory holds no .parquet, .csv or .npy files."
                )
            out.extend(inner)
        elif not path.exists():
            raise ValueError(f"source {text!r}: no such file or directory.")
        else:
            out.append(_kind_of(path))
    kinds = {f.kind for f in out}
    if len(kinds) > 1:
        raise ValueError(
            f"source mixes file formats ({', '.join(sorted(kinds))}); give files of one format."
        )
    return out


def _total_bytes(files: list[_File]) -> int:
    return sum(f.path.stat().st_size for f in files)


# ---------------------------------------------------------------------------------
# columns
# ---------------------------------------------------------------------------------
@dataclass
class _Plan:
    """Which columns a read takes, by name, and how they are delivered."""

    features: list[str]
    target: str | None
    weight: str | None
    keep: list[str] = field(default_factory=list)
    frame: bool = False  # X as a pandas DataFrame with the original dtypes

    @property
    def columns(self) -> list[str]:
        cols = list(self.features)
        for extra in [self.target, self.weight, *self.keep]:
            if extra is not None and extra not in cols:
                cols.append(extra)
        return cols


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(repr(n) for n in list(names)[:20])
    return "[" + shown + (", ..." if len(names) > 20 else "") + "]"


def _make_plan(
    names: list[str],
    where: str,
    *,
    features: Any,
    target: Any,
    weight: Any,
    keep: Any,
    frame: bool,
    exclude: Sequence[str] = (),
    hidden: Sequence[str] = (),
) -> _Plan:
    """The columns to read; by default every column but the target, weight, kept and ``hidden``.

    ``hidden`` are the columns a DataFrame's index was written to (left out
    unless asked for by name).
    """
    for what, col in (("target", target), ("weight", weight)):
        if col is not None and col not in names:
            near = near_name(str(col), names)
            hint = f" (did you mean {near!r}?)" if near is not None else ""
            raise ValueError(
                f"{where}: the {what} column {col!r} is not in the file{hint}; its columns are "
                f"{_listing(names)}."
            )
    kept = [keep] if isinstance(keep, str) else list(keep or [])
    for col in kept:
        if col not in names:
            raise ValueError(
                f"{where}: the column {col!r} to keep is not in the file; its columns are "
                f"{_listing(names)}."
            )
    taken = {c for c in (target, weight, *exclude) if c is not None}
    if features is None:
        chosen = [n for n in names if n not in taken and n not in kept and n not in hidden]
    else:
        patterns = [features] if isinstance(features, str) else list(features)
        chosen = []
        for pat in patterns:
            pat = str(pat)
            hits = (
                [n for n in names if fnmatch.fnmatchcase(n, pat)]
                if any(ch in pat for ch in "*?[")
                else ([pat] if pat in names else [])
            )
            if not hits:
                near = near_name(pat, names)
                hint = f" (did you mean {near!r}?)" if near is not None else ""
                raise ValueError(
                    f"{where}: no column matches the feature {pat!r}{hint}; the columns are "
                    f"{_listing(names)}."
                )
            chosen.extend(h for h in hits if h not in chosen and h not in taken)
    if not chosen:
        raise ValueError(f"{where}: no feature column is left to read.")
    return _Plan(chosen, target, weight, kept, frame)


# ---------------------------------------------------------------------------------
# reading Arrow batches, file by file
# ---------------------------------------------------------------------------------
class _Counting:
    """A binary file that counts the bytes read from it (progress of a CSV file)."""

    def __init__(self, f: Any, counter: list[int]) -> None:
        self._f = f
        self._counter = counter
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        self._counter[0] += len(data)
        return bytes(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
        self._f.close()


def _csv_stream(f: _File, counter: list[int] | None) -> Any:
    """The decompressed byte stream of a CSV file, its raw bytes counted into ``counter``."""
    pa = _need_pyarrow()
    raw: Any = open(f.path, "rb")  # noqa: SIM115 - closed by the caller through the stream
    if counter is not None:
        raw = _Counting(raw, counter)
    if f.compression == "xz":
        import lzma

        return pa.PythonFile(lzma.LZMAFile(raw), mode="r")
    stream = pa.PythonFile(raw, mode="r")
    if f.compression is not None:
        return pa.CompressedInputStream(stream, f.compression)
    return stream


def _csv_header(f: _File) -> list[str]:
    """The names of the file's columns: stripped of spaces, two equal names refused."""
    if f.names is None:
        try:
            head = read_head(f.path, f.compression)
        except (OSError, EOFError, ValueError) as exc:
            raise ValueError(f"{f.name}: cannot be read as CSV: {_first_line(exc)}") from None
        raw = header_names(head, f.sep)
        if raw is None:
            raise ValueError(f"{f.name}: the file is empty (no header line).")
        f.names = clean_names(raw, f.name)
    return f.names


def _parse_options(f: _File) -> Any:
    import pyarrow.csv as pcsv

    return pcsv.ParseOptions(delimiter=f.sep)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _find_csv_row(f: _File, column: int, value: str, start: int) -> tuple[int, int] | None:
    """(data row from 1, line from 1) of the first row at or after ``start`` whose field is ``value``."""
    import csv
    import io

    stream = _csv_stream(f, None)
    try:
        text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
        reader = csv.reader(text, delimiter=_parse_options(f).delimiter)
        next(reader, None)
        for row_number, row in enumerate(reader, start=1):
            if row_number <= start or column >= len(row):
                continue
            if row[column].strip() == value.strip():
                return row_number, reader.line_num
    finally:
        stream.close()
    return None


_CSV_CONVERSION = re.compile(
    r"In CSV column #(\d+): .*conversion error to (\S+?): invalid value '(.*)'", re.S
)


def _csv_error(f: _File, exc: BaseException, names: list[str], rows_done: int) -> ValueError:
    """A ValueError naming the file, column and row of a CSV parse or conversion error."""
    msg = str(exc)
    m = _CSV_CONVERSION.search(msg)
    if m:
        j, to, value = int(m.group(1)), m.group(2), m.group(3)
        col = names[j] if j < len(names) else f"#{j}"
        found = _find_csv_row(f, j, value, rows_done)
        at = f" at data row {found[0]} (line {found[1]})" if found else ""
        kind = "a number" if to in ("double", "float", "int64") else to
        return ValueError(
            f"{f.name}: column {col!r}{at} holds {value!r}, which is not {kind} as the column's "
            "other values are (fix the cell, declare the column's type with dtypes=, or, if "
            f"{value.strip()!r} marks a missing value, pass na_values=[{value.strip()!r}])."
        )
    return ValueError(f"{f.name}: cannot be read as CSV after row {rows_done}: {_first_line(exc)}")


def _csv_batches(
    f: _File,
    plan: _Plan,
    types: dict[str, Any],
    block_bytes: int,
    counter: list[int] | None,
) -> Iterator[Any]:
    pa = _need_pyarrow()
    import pyarrow.csv as pcsv

    names = _csv_header(f)
    missing = [c for c in plan.columns if c not in names]
    if missing:
        raise ValueError(
            f"{f.name}: has no column {missing[0]!r} (the other files or the request name it); "
            f"its columns are {_listing(names)}."
        )
    stream = _csv_stream(f, counter)
    done = 0
    try:
        try:
            reader = pcsv.open_csv(
                stream,
                read_options=pcsv.ReadOptions(
                    block_size=block_bytes, use_threads=True, column_names=names, skip_rows=1
                ),
                parse_options=_parse_options(f),
                convert_options=pcsv.ConvertOptions(
                    include_columns=plan.columns,
                    column_types={k: v for k, v in types.items() if k in plan.columns},
                    # an empty cell of a text column is missing, as pandas reads it (not "")
                    strings_can_be_null=True,
                    null_values=f.null_values,
                    decimal_point=f.decimal,
                ),
            )
        except (pa.ArrowInvalid, OSError) as exc:
            raise _csv_error(f, exc, names, done) from None
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except (pa.ArrowInvalid, OSError) as exc:
                raise _csv_error(f, exc, names, done) from None
            done += batch.num_rows
            yield _left_trimmed(batch)
    finally:
        stream.close()


def _left_trimmed(batch: Any) -> Any:
    """The batch with the spaces after a separator taken off its text (``a, b``), as pandas does."""
    import pyarrow.compute as pc
    import pyarrow.types as pt

    columns = list(batch.columns)
    changed = False
    for j, col in enumerate(columns):
        if pt.is_string(col.type) or pt.is_large_string(col.type):
            columns[j] = pc.utf8_ltrim_whitespace(col)
            changed = True
    if not changed:
        return batch
    return type(batch).from_arrays(columns, names=batch.schema.names)


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


# ---------------------------------------------------------------------------------
# Arrow tables to blocks
# ---------------------------------------------------------------------------------
def _is_numeric_type(t: Any) -> bool:
    import pyarrow.types as pt

    return bool(pt.is_integer(t) or pt.is_floating(t) or pt.is_boolean(t) or pt.is_null(t))


def _type_kind(t: Any) -> str:
    import pyarrow.types as pt

    if pt.is_boolean(t):
        return "bool"
    if pt.is_integer(t):
        return "integer"
    if pt.is_floating(t):
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
    if not plan.frame:
        for c in plan.features:
            if not _is_numeric_type(schema.field(c).type):
                raise ValueError(
                    f"{f.name}: column {c!r} holds {kinds[c]} values; this model "
                    "needs numbers in its feature columns."
                )
    if first is not None:
        for c in plan.columns:
            a, b = first[c], kinds[c]
            numeric = {"integer", "float", "bool"}
            if a != b and not (not plan.frame and c in plan.features and {a, b} <= numeric):
                raise ValueError(
                    f"{f.name}: column {c!r} holds {b} values, but the first file's holds {a} "
                    "values; the files disagree on the column's type."
                )
    return kinds


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
    copies of the columns. Arrow lays them out itself
    (``RecordBatch.to_tensor``, in C++ without the GIL, so that a read-ahead
    thread overlaps the statistics); columns it cannot take (booleans) are
    copied one by one.
    """
    pa = _need_pyarrow()
    n = table.num_rows
    shape = (n, len(names))
    rows = ring is None or ring.order != "F"
    batches = table.select(names).to_batches()
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
    overlaps the statistics of this one. An error of the reader is raised
    here, in order; closing this generator stops the reader.
    """
    import queue
    import threading

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
    X: Any
    y: NDArray[Any] | None
    w: NDArray[Any] | None
    keep: Any  # an Arrow table of the kept columns, or None
    where: str
    row0: int  # rows before this block in its file (or stream)
    nbytes: int
    names: list[str] | None = None  # the feature columns of a file, for array blocks


def _table_chunk(
    table: Any, plan: _Plan, f: _File, row0: int, dtype: Any, ring: _Ring | None = None
) -> _Chunk:
    n = table.num_rows
    where = f"{f.name}, rows {row0 + 1}-{row0 + n}"
    if plan.frame:
        X = table.select(plan.features).to_pandas()
    else:
        X = _fill_matrix(table, plan.features, dtype, ring)
    y = _labels(table, plan.target, f.name, row0) if plan.target else None
    w = None
    if plan.weight is not None:
        w = np.asarray(_chunked_numpy(table.column(plan.weight)), dtype=np.float64)
    keep = table.select(plan.keep) if plan.keep else None
    nbytes = int(table.nbytes)
    return _Chunk(X, y, w, keep, where, row0, nbytes, list(plan.features))


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


# ---------------------------------------------------------------------------------
# npy and iterables
# ---------------------------------------------------------------------------------
def _side_array(value: Any, what: str, n: int) -> Any:
    if value is None or isinstance(value, (int, np.integer)):
        return value
    arr = np.load(value, mmap_mode="r") if _is_path(value) else np.asarray(value)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(
            f"the {what} must be a 1-D array (or .npy file) of {n} entries, one per row; "
            f"got shape {arr.shape}."
        )
    return arr


def _npy_chunks(
    files: list[_File], *, features: Any, target: Any, weight: Any, block_rows: int | None
) -> Iterator[_Chunk]:
    for f in files:
        try:
            A = np.load(f.path, mmap_mode="r")
        except (ValueError, OSError, EOFError) as exc:
            raise ValueError(f"{f.name}: cannot be read as .npy: {_first_line(exc)}") from None
        if A.ndim != 2:
            raise ValueError(
                f"{f.name}: expected a 2-D array (rows, columns); got shape {A.shape}."
            )
        n, p = A.shape
        y_src = _side_array(target, "target", n)
        w_src = _side_array(weight, "weight", n)
        taken = {c for c in (target, weight) if isinstance(c, (int, np.integer))}
        if features is None:
            cols = [j for j in range(p) if j not in taken]
        else:
            cols = [int(j) for j in np.atleast_1d(features)]
            bad = [j for j in cols if not -p <= j < p]
            if bad:
                raise ValueError(
                    f"{f.name}: feature column {bad[0]} is out of range for {p} columns."
                )
        rows = block_rows or _default_rows(len(cols), 256)
        whole = cols == list(range(p))
        dtype = np.float32 if A.dtype == np.float32 else np.float64
        for s in range(0, n, rows):
            e = min(n, s + rows)
            X = np.array(A[s:e] if whole else A[s:e][:, cols], dtype=dtype)
            y = None
            if isinstance(y_src, (int, np.integer)):
                y = np.array(A[s:e, int(y_src)])
            elif y_src is not None:
                y = np.array(y_src[s:e])
            w = None
            if isinstance(w_src, (int, np.integer)):
                w = np.array(A[s:e, int(w_src)], dtype=np.float64)
            elif w_src is not None:
                w = np.array(w_src[s:e], dtype=np.float64)
            yield _Chunk(X, y, w, None, f"{f.name}, rows {s + 1}-{e}", s, int(X.nbytes))


def _iterable_chunks(blocks: Iterable[Any]) -> Iterator[_Chunk]:
    row0 = 0
    for i, block in enumerate(blocks):
        if hasattr(block, "shape") and len(block.shape) == 2:
            block = (block, None)  # features alone (prediction)
        if not isinstance(block, (tuple, list)) or len(block) not in (2, 3):
            raise ValueError(
                f"block {i} of the source: expected a tuple (X, y) or (X, y, sample_weight); "
                f"got {type(block).__name__}."
            )
        X, y = block[0], block[1]
        w = block[2] if len(block) == 3 else None
        n = int(X.shape[0]) if hasattr(X, "shape") else len(X)
        nbytes = int(getattr(X, "nbytes", 0) or 0)
        yield _Chunk(X, y, w, None, f"block {i} (rows {row0 + 1}-{row0 + n})", row0, nbytes)
        row0 += n


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
    if kind == "parquet":
        return _Reader(
            _parquet_chunks(
                files, features, target, weight, keep, block_rows, frame, dtype, exclude, buffer
            ),
            sum(_parquet_rows(f) for f in files),
            "rows",
            None,
        )
    counter = [0]
    return _Reader(
        _csv_chunks(
            files,
            features,
            target,
            weight,
            keep,
            block_rows,
            frame,
            dtypes,
            dtype,
            exclude,
            counter,
            buffer,
        ),
        _total_bytes(files),
        "bytes",
        counter,
    )


def _auto_rows(block_rows: int | None, p: int) -> int:
    return int(block_rows) if block_rows else _default_rows(p, 1024)


def _parquet_chunks(
    files: list[_File],
    features: Any,
    target: Any,
    weight: Any,
    keep: Any,
    block_rows: int | None,
    frame: bool,
    dtype: Any,
    exclude: Sequence[str],
    buffer: _Ring | None = None,
) -> Iterator[_Chunk]:
    first: dict[str, str] | None = None
    plan: _Plan | None = None
    out_dtype = dtype
    for f in files:
        schema = _parquet_schema(f)
        if plan is None:
            names = list(schema.names)
            clean_names(names, f.name)  # two equal names: an error naming it
            plan = _make_plan(
                names,
                f.name,
                features=features,
                target=target,
                weight=weight,
                keep=keep,
                frame=frame,
                exclude=exclude,
                hidden=index_columns(names, schema.pandas_metadata),
            )
        kinds = _check_schema(f, schema, plan, first)
        if first is None:
            first = kinds
            if out_dtype is None:
                import pyarrow as pa

                f32 = all(schema.field(c).type == pa.float32() for c in plan.features)
                out_dtype = np.float32 if f32 else np.float64
        rows = _auto_rows(block_rows, len(plan.features))
        row0 = 0
        for table in _rechunk(_parquet_batches(f, plan, rows), rows):
            if row0 == 0 and f is files[0]:
                _warn_lone_tokens(table, plan, f)
            yield _table_chunk(table, plan, f, row0, out_dtype, buffer)
            row0 += table.num_rows


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


def _arrow_type(spec: Any) -> Any:
    pa = _need_pyarrow()
    if isinstance(spec, pa.DataType):
        return spec
    name = str(np.dtype(spec)) if not isinstance(spec, str) else spec
    aliases = {"str": "string", "object": "string", "category": "string", "bool": "bool_"}
    name = aliases.get(name, name)
    try:
        return pa.type_for_alias(name)
    except (ValueError, KeyError):
        fn = getattr(pa, name, None)
        if callable(fn):
            return fn()
        raise ValueError(f"dtypes: unknown column type {spec!r}.") from None


def _csv_chunks(
    files: list[_File],
    features: Any,
    target: Any,
    weight: Any,
    keep: Any,
    block_rows: int | None,
    frame: bool,
    dtypes: dict[str, Any] | None,
    dtype: Any,
    exclude: Sequence[str],
    counter: list[int],
    buffer: _Ring | None = None,
) -> Iterator[_Chunk]:
    pa = _need_pyarrow()
    plan: _Plan | None = None
    types: dict[str, Any] = {k: _arrow_type(v) for k, v in (dtypes or {}).items()}
    fixed = False
    out_dtype = dtype or np.float64
    for f in files:
        if plan is None:
            names = _csv_header(f)
            plan = _make_plan(
                names,
                f.name,
                features=features,
                target=target,
                weight=weight,
                keep=keep,
                frame=frame,
                exclude=exclude,
                hidden=index_columns(names),
            )
            if not frame:
                # numbers, whatever the first rows look like: a column inferred as
                # integers from the first block would refuse a later 2.5
                for c in plan.features:
                    types.setdefault(c, pa.float64())
            if plan.weight is not None:
                types.setdefault(plan.weight, pa.float64())
        rows = _auto_rows(block_rows, len(plan.features))
        block_bytes = int(min(max(rows * len(plan.columns) * 12, 1 << 20), 64 << 20))
        row0 = 0
        for table in _rechunk(_csv_batches(f, plan, types, block_bytes, counter), rows):
            if not fixed:
                # every later block and file is read with the types of the first block
                for c in plan.columns:
                    types.setdefault(c, table.schema.field(c).type)
                fixed = True
                _warn_lone_tokens(table, plan, f)
            yield _table_chunk(table, plan, f, row0, out_dtype, buffer)
            row0 += table.num_rows


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


# ---------------------------------------------------------------------------------
# progress
# ---------------------------------------------------------------------------------
class _Progress:
    """Rows done, MB/s and the time left, on stderr when it is a terminal (rich)."""

    def __init__(self, reader: _Reader, enabled: bool | None, label: str) -> None:
        self.reader = reader
        self.rows = 0
        self.nbytes = 0
        self.start = time.perf_counter()
        self._bar: Any = None
        self._task: Any = None
        show = enabled
        if show is None:
            show = bool(getattr(sys.stderr, "isatty", lambda: False)())
        if not show:
            return
        try:
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )
        except ImportError:
            if enabled:
                raise ImportError(
                    "progress=True needs rich: pip install 'bayesrule[cli]'"
                ) from None
            return
        from rich.console import Console

        columns: list[Any] = [TextColumn(label)]
        if reader.total:
            columns += [BarColumn(), TaskProgressColumn(), TimeRemainingColumn()]
        columns += [TextColumn("{task.fields[rows]:,} rows"), TextColumn("{task.fields[rate]}")]
        self._bar = Progress(*columns, console=Console(stderr=True), transient=False)
        self._task = self._bar.add_task(label, total=reader.total or None, rows=0, rate="")

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, chunk: _Chunk, rows: int) -> None:
        self.rows += rows
        self.nbytes += chunk.nbytes
        if self._bar is None:
            return
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        done = (
            self.reader.counter[0]
            if self.reader.unit == "bytes" and self.reader.counter
            else self.rows
        )
        self._bar.update(
            self._task,
            completed=done,
            rows=self.rows,
            rate=f"{self.nbytes / elapsed / 1e6:,.0f} MB/s",
        )


# ---------------------------------------------------------------------------------
# fitting
# ---------------------------------------------------------------------------------
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


_ROW = re.compile(r"\bat row (\d+)")
_COLUMN = re.compile(r"\bcolumn (\d+)\b")


def _located(exc: BaseException, chunk: _Chunk) -> ValueError:
    """The error of a block, with the file (or block) and the row within the source."""
    msg = str(exc)

    def absolute(m: re.Match[str]) -> str:
        r = int(m.group(1))
        return f"at row {chunk.row0 + r + 1} (row {r} of the block)"

    def named(m: re.Match[str]) -> str:
        j = int(m.group(1))
        names = chunk.names
        return f"column {names[j]!r}" if names is not None and j < len(names) else m.group(0)

    return ValueError(f"{chunk.where}: {_COLUMN.sub(named, _ROW.sub(absolute, msg))}")


def _kernel_steps(stats: Any, steps: NDArray[np.float64], max_values: int) -> NDArray[np.float64]:
    """Power-of-two cell widths keeping each feature to at most ``max_values`` values.

    A feature is binned once it holds more than ``max_values`` distinct
    values; from then on its width is the smallest power of two for which
    its range spans at most ``max_values`` cells. Both the number of
    distinct values and the range only grow with the data, so the final
    grid depends on the data alone, not on the order of the blocks.
    """
    counts = np.diff(stats.indptr)
    # a binned feature follows its range (its values may be few and far apart)
    need = np.flatnonzero((counts > max_values) | ((steps > 0) & (counts > 0)))
    if need.size == 0:
        return steps
    lo = stats.values[stats.indptr[need]]
    hi = stats.values[stats.indptr[need + 1] - 1]
    new = steps.copy()
    h = np.exp2(np.ceil(np.log2(np.maximum((hi - lo) / max_values, np.finfo(float).tiny))))
    h = np.maximum(h, steps[need])
    while True:
        cells = np.floor(hi / h) - np.floor(lo / h) + 1
        over = cells > max_values
        if not over.any():
            break
        h = np.where(over, 2 * h, h)
    new[need] = h
    return new


def _bin_columns(X: NDArray[Any], steps: NDArray[np.float64]) -> NDArray[np.float64]:
    """``X`` with each value moved to the centre of its cell (as ``ValueCountStats.binned``)."""
    on = np.flatnonzero(steps > 0)
    out = np.array(X, dtype=np.float64)
    if on.size:
        h = steps[on]
        out[:, on] = (np.floor(out[:, on] / h) + 0.5) * h
    return out


def _install(est: Any, stats: Any, schema: tuple[Any, ...]) -> None:
    """Derive every fitted attribute of ``est`` from ``stats``; unchanged if that fails.

    The estimator layer's own installation (what ``fit`` ends with); a
    public hook for it on ``GenerativeClassifier`` would let this module do
    without the private name.
    """
    saved = dict(est.__dict__)
    try:
        est._install(stats, schema=schema)
    except BaseException:
        est.__dict__.clear()
        est.__dict__.update(saved)
        raise


def _default_rows(p: int, least: int) -> int:
    """Rows of a block of ``p`` columns when the caller gave none."""
    return max(least, _BLOCK_VALUES // max(p, 1), _ROWS_PER_FEATURE * p)


def fit_stream(
    estimator: Any,
    source: Any,
    *,
    target: Any = None,
    features: Any = None,
    weight: Any = None,
    block_rows: int | None = None,
    classes: Any = None,
    partial: bool = False,
    max_values: int | None = MAX_VALUES,
    dtypes: dict[str, Any] | None = None,
    progress: bool | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    na_values: str | Sequence[str] | None = None,
) -> Any:
    """Fit any bayesrule estimator from a source larger than memory, one block at a time.

    Each block's statistics come from ``estimator.statistics`` and are merged
    (classes are united as they appear); the model is derived once at the
    end. The result equals ``estimator.fit`` on all the rows at once, to
    rounding; memory is bounded by one block and the statistics.

    Parameters
    ----------
    estimator : GenerativeClassifier
        Its hyperparameters are used; it is fitted in place and returned.
    source : path, list of paths, glob, directory, or iterable of blocks
        Files as for :func:`read_blocks`, or any iterable of ``(X, y)`` or
        ``(X, y, sample_weight)`` blocks (arrays or DataFrames).
        :class:`~bayesrule.MixtureDiscriminantAnalysis` reads the source once
        per EM pass (its ``n_passes_``): give it files, a list of blocks, or a
        callable returning a fresh iterable of blocks (a generator is refused).
    target : str, int, path or array
        The label column (required for files).
    features, weight, block_rows, dtypes, sep, decimal, na_values
        As for :func:`read_blocks`. :class:`~bayesrule.MixedNB` reads the
        features as DataFrames with their own dtypes (strings, categories).
    classes : array-like, optional
        Labels to declare (a class may have no row). By default the classes
        are those found in the data, united block by block.
    partial : bool, default=False
        Add the source to an already fitted estimator (as ``partial_fit``
        does) instead of fitting from scratch.
    max_values : int or None, default=2048
        :class:`~bayesrule.KernelNB` only: at most this many distinct values
        are kept per feature. A feature with more is binned onto the grid of
        power-of-two width ``h`` with at most ``max_values`` cells over its
        range, each value moved to its cell's centre (by at most ``h / 2``);
        data with few distinct values (counts, grey levels) stay exact. The
        grid depends on the data only, so the result equals ``fit`` on the
        binned data whatever the order of the blocks. For a fixed bandwidth
        ``b`` every class density moves by at most
        ``h / (2 b^2 sqrt(2 pi e))`` (see ``docs/scale-out.md``). ``None``
        keeps every value (exact, memory growing with the data).
        :class:`~bayesrule.MixedNB` with 'kernel' columns needs ``None``.
    progress : bool or None
        Show a progress bar on stderr (rows, MB/s, time left when the size
        is known); by default when stderr is a terminal and rich is installed.

    Returns
    -------
    estimator
        Fitted. If the fit fails part-way, the estimator is left exactly as
        it was (unfitted, or as fitted before with ``partial=True``).
    """
    from sklearn.base import clone

    from ...estimators import KernelNB, MixedNB

    if not hasattr(estimator, "statistics") or not hasattr(estimator, "_install"):
        raise TypeError(f"estimator must be a bayesrule estimator; got {type(estimator).__name__}.")
    if getattr(estimator, "_multi_pass", False):  # EM: the source is read once per pass
        from ..multi_pass import fit_stream_passes

        return fit_stream_passes(
            estimator,
            source,
            target=target,
            features=features,
            weight=weight,
            block_rows=block_rows,
            classes=classes,
            partial=partial,
            dtypes=dtypes,
            progress=progress,
            sep=sep,
            decimal=decimal,
            na_values=na_values,
        )
    if max_values is not None and (not isinstance(max_values, (int, np.integer)) or max_values < 2):
        raise ValueError(f"max_values must be an int >= 2 or None; got {max_values!r}.")
    fitted = hasattr(estimator, "stats_")
    if partial and not fitted:
        raise ValueError("partial=True adds data to a fitted estimator; this one is not fitted.")
    proto = estimator if partial else clone(estimator)
    if _files(source) is not None and target is None:
        raise ValueError("target must name the label column of the files.")
    frame = isinstance(estimator, MixedNB)
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
        reuse=True,
        # blocks laid out as the statistics work fastest on (see _fill_matrix)
        order="F" if getattr(getattr(proto, "_stats_type", None), "column_major", False) else "C",
    )
    kernel = isinstance(estimator, KernelNB) and max_values is not None
    total: Any = estimator.stats_ if partial else None
    schema: tuple[Any, ...] | None = None
    steps: NDArray[np.float64] | None = None
    label = f"fitting {type(estimator).__name__}"
    # blocks are summarised side by side on the idle cores, unless the statistic
    # spreads one block over the threads itself (or the blocks must be taken in turn)
    stats_type = getattr(proto, "_stats_type", None)
    side_by_side = 1
    if not (kernel or frame or getattr(stats_type, "block_parallel", False)):
        side_by_side = min(PIPELINE, _parallel.thread_count(_parallel.PARALLEL_MIN_WORK))
    state: dict[str, Any] = {"proto": proto, "schema": None}

    def checked(chunks: Iterator[_Chunk]) -> Iterator[_Chunk]:
        """The chunks, each checked against the first (whose summariser is then chosen)."""
        for chunk in chunks:
            if chunk.y is None:
                raise ValueError(f"{chunk.where}: the block has no labels (target).")
            block_schema = _schema_of(chunk.X, chunk.names)
            first = state["schema"]
            if first is None:
                state["schema"] = block_schema
                if partial:
                    _check_partial_schema(estimator, block_schema, chunk)
                # every block is summarised as the first (or the fitted model) decides
                state["proto"] = (estimator if partial else clone(estimator))._block_summariser(
                    chunk.X
                )
            elif block_schema[0] != first[0]:
                raise ValueError(
                    f"{chunk.where}: the block has {block_schema[0]} features, but the first "
                    f"block had {first[0]}."
                )
            elif (block_schema[1] is None) != (first[1] is None) or (
                first[1] is not None and list(block_schema[1]) != list(first[1])
            ):
                raise ValueError(
                    f"{chunk.where}: the block's columns {_listing(block_schema[1] or [])} differ "
                    f"from the first block's {_listing(first[1] or [])}."
                )
            yield chunk

    def summary(chunk: _Chunk) -> Any:
        if kernel:
            return None  # binned in order, below
        try:
            return state["proto"].statistics(chunk.X, chunk.y, chunk.w, classes=classes)
        except ValueError as exc:
            raise _located(exc, chunk) from exc

    with _Progress(reader, progress, label) as bar, warnings.catch_warnings():
        # blocks read from files are arrays; their names are checked here, once
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        blocks = _parallel.ordered_map(summary, checked(_prefetched(reader.chunks)), side_by_side)
        for chunk, stats in blocks:
            try:
                if kernel and max_values is not None:
                    total, steps = _kernel_block(
                        state["proto"], chunk, classes, total, steps, max_values
                    )
                else:
                    total = stats if total is None else total.merge(stats)
            except ValueError as exc:
                raise _located(exc, chunk) from exc
            if frame and max_values is not None and "kernel" in getattr(total, "kinds", ()):
                j = list(total.kinds).index("kernel")
                names_ = state["schema"][1] or [j]
                raise ValueError(
                    f"MixedNB's 'kernel' column {names_[j]!r} keeps every distinct "
                    "value, which grows with the data: model it as 'gaussian', fit KernelNB "
                    "(whose streaming fit bins values), or pass max_values=None to keep them all."
                )
            bar.advance(chunk, _n_rows(chunk.X))
    schema = state["schema"]
    if schema is None or total is None:
        raise ValueError("the source holds no rows: nothing to fit.")
    if total.n_classes < estimator._min_classes:
        raise ValueError(
            f"{type(estimator).__name__} needs at least {estimator._min_classes} classes; the "
            f"source has {total.n_classes} ({total.classes.tolist()[:10]})."
        )
    n = int(total.counts.sum())
    if 0 < n < estimator._min_samples:
        raise ValueError(
            f"the source has {n} row(s); {type(estimator).__name__} needs at least "
            f"{estimator._min_samples}."
        )
    names = None if schema[1] is None else np.asarray(schema[1], dtype=object)
    if partial:
        names = getattr(estimator, "feature_names_in_", None)
        dtype = estimator._dtype()
    else:
        dtype = np.float64 if frame else schema[2]
    _install(estimator, total, (schema[0], names, np.dtype(dtype)))
    return estimator


def _check_partial_schema(est: Any, schema: tuple[Any, ...], chunk: _Chunk) -> None:
    if schema[0] != est.n_features_in_:
        raise ValueError(
            f"{chunk.where}: the source has {schema[0]} features, but the model was fitted with "
            f"{est.n_features_in_}."
        )
    fitted = getattr(est, "feature_names_in_", None)
    if fitted is not None and schema[1] is not None and list(fitted) != list(schema[1]):
        raise ValueError(
            f"{chunk.where}: the source's feature columns {_listing(schema[1])} are not those the "
            f"model was fitted with, {_listing([str(n) for n in fitted])}."
        )


#: rows per statistics call of KernelNB: its raw per-block statistics hold up
#: to (rows x features) distinct values per class before they are binned
_KERNEL_VALUES = 1 << 21


def _kernel_block(
    proto: Any,
    chunk: _Chunk,
    classes: Any,
    total: Any,
    steps: NDArray[np.float64] | None,
    max_values: int,
) -> tuple[Any, NDArray[np.float64]]:
    X = np.asarray(chunk.X)
    n, p = X.shape
    if steps is None:
        steps = np.zeros(p)
        if total is not None:  # partial: the fitted statistics are binned like the rest
            steps = _kernel_steps(total, steps, max_values)
            total = total.binned(steps)
    y = np.asarray(chunk.y)
    w = None if chunk.w is None else np.asarray(chunk.w)
    rows = max(256, _KERNEL_VALUES // max(p, 1))
    for s in range(0, n, rows):
        sl = slice(s, min(n, s + rows))
        Xb = _bin_columns(X[sl], steps)
        stats = proto.statistics(Xb, y[sl], None if w is None else w[sl], classes=classes)
        total = stats if total is None else total.merge(stats)
        new = _kernel_steps(total, steps, max_values)
        if not np.array_equal(new, steps):
            steps = new
            total = total.binned(steps)
    return total, steps


# ---------------------------------------------------------------------------------
# prediction
# ---------------------------------------------------------------------------------
def _method_list(est: Any, method: Any) -> list[str]:
    methods = [method] if isinstance(method, str) else list(method)
    for m in methods:
        if m not in _METHODS:
            raise ValueError(f"method must be one of {list(_METHODS)}; got {m!r}.")
    return methods


def _result_columns(est: Any, method: str, values: NDArray[Any]) -> list[tuple[str, Any]]:
    classes = [str(c) for c in est.classes_]
    if method == "predict":
        return [("prediction", values)]
    if method == "score_samples":
        return [("score_samples", values)]
    if method == "decision_function" and values.ndim == 1:
        return [("decision", values)]
    prefix = {
        "predict_proba": "proba",
        "predict_log_proba": "log_proba",
        "predict_joint_log_proba": "joint_log_proba",
        "decision_function": "decision",
        "class_log_density": "log_density",
    }[method]
    return [(f"{prefix}_{c}", values[:, k]) for k, c in enumerate(classes)]


def _predict_tables(
    estimator: Any,
    source: Any,
    *,
    method: Any,
    keep: Any,
    features: Any,
    target: Any,
    block_rows: int | None,
    dtypes: dict[str, Any] | None,
    progress: bool | None,
    read: dict[str, Any],
) -> Iterator[Any]:
    from sklearn.utils.validation import check_is_fitted

    from ...estimators import MixedNB

    pa = _need_pyarrow()
    check_is_fitted(estimator)
    methods = _method_list(estimator, method)
    names = getattr(estimator, "feature_names_in_", None)
    if features is None and names is not None and _files(source) is not None:
        features = [str(n) for n in names]
    reader = _open(
        source,
        features=features,
        target=target,
        keep=keep,
        block_rows=block_rows,
        frame=isinstance(estimator, MixedNB),
        dtypes=dtypes,
        exclude=[target] if isinstance(target, str) else [],
        **read,
    )
    label = f"predicting with {type(estimator).__name__}"
    with _Progress(reader, progress, label) as bar, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        for chunk in _prefetched(reader.chunks):
            p = _schema_of(chunk.X, chunk.names)[0]
            if p != estimator.n_features_in_:
                raise ValueError(
                    f"{chunk.where}: the block has {p} features, but the model was fitted with "
                    f"{estimator.n_features_in_}."
                )
            arrays: list[Any] = []
            fields: list[str] = []
            if chunk.keep is not None:
                for name in chunk.keep.column_names:
                    fields.append(name)
                    arrays.append(chunk.keep.column(name))
            for m in methods:
                try:
                    values = np.asarray(getattr(estimator, m)(chunk.X))
                except ValueError as exc:
                    raise _located(exc, chunk) from exc
                for name, col in _result_columns(estimator, m, values):
                    if name in fields:
                        name = f"{name}_{m}"
                    fields.append(name)
                    arrays.append(pa.array(col))
            yield pa.Table.from_arrays(arrays, names=fields)
            bar.advance(chunk, _n_rows(chunk.X))


def iter_predict(
    estimator: Any,
    source: Any,
    *,
    method: str | Sequence[str] = "predict",
    keep: Any = None,
    features: Any = None,
    target: str | None = None,
    block_rows: int | None = None,
    dtypes: dict[str, Any] | None = None,
    progress: bool | None = False,
    sep: str | None = None,
    decimal: str | None = None,
    na_values: str | Sequence[str] | None = None,
) -> Iterator[Any]:
    """Predictions over a source, one pandas DataFrame per block of rows.

    Parameters
    ----------
    estimator : fitted GenerativeClassifier
    source : as for :func:`read_blocks`, or an iterable of ``X`` blocks wrapped as ``(X, None)``
    method : str or list of str, default='predict'
        Any of 'predict' (column ``prediction``), 'predict_proba'
        (``proba_<class>``), 'predict_log_proba' (``log_proba_<class>``),
        'predict_joint_log_proba', 'decision_function' (``decision`` for two
        classes), 'score_samples' and 'class_log_density'.
    keep : str or list of str, optional
        Columns of the source copied into the output before the results (an id).
    features : optional
        By default the columns the model was fitted on (``feature_names_in_``).
    target : str, optional
        A label column of the source, left out of the default features.
    block_rows, dtypes, sep, decimal, na_values
        As for :func:`read_blocks`.
    progress : bool or None, default=False
        A progress bar on stderr (None: when stderr is a terminal).

    Yields
    ------
    pandas.DataFrame
        The kept columns, then the results, for each block in order.
    """
    for table in _predict_tables(
        estimator,
        source,
        method=method,
        keep=keep,
        features=features,
        target=target,
        block_rows=block_rows,
        dtypes=dtypes,
        progress=progress,
        read={"sep": sep, "decimal": decimal, "na_values": na_values},
    ):
        yield table.to_pandas()


def predict_stream(
    estimator: Any,
    source: Any,
    output: str | os.PathLike[str],
    *,
    method: str | Sequence[str] = "predict",
    keep: Any = None,
    features: Any = None,
    target: str | None = None,
    block_rows: int | None = None,
    dtypes: dict[str, Any] | None = None,
    progress: bool | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    na_values: str | Sequence[str] | None = None,
) -> Path:
    """Write predictions over a source to a table file, block by block.

    The format follows ``output``'s suffixes, as for every table bayesrule
    reads: CSV (``.csv``, ``.txt``), TSV (``.tsv``, ``.tab``), each also
    compressed (``.gz``, ``.bz2``, ``.xz``, ``.zst``, ``.zip``), Parquet
    (``.parquet``, ``.pq``), JSON lines (``.jsonl``, also compressed) and
    Excel (``.xlsx``, written whole). The file is written under a temporary
    name in the same directory and renamed when complete, so a failure
    part-way leaves no partial file (and an existing file untouched); a
    path that is not a regular file (``/dev/null``, a named pipe) is
    written directly. The other arguments are those of :func:`iter_predict`.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    _need_pyarrow()
    out = Path(output)
    kind = output_format(out)  # a ValueError naming the suffixes for another name
    if not out.parent.exists():
        raise ValueError(f"output {str(out)!r}: the directory {str(out.parent)!r} does not exist.")
    tables = _predict_tables(
        estimator,
        source,
        method=method,
        keep=keep,
        features=features,
        target=target,
        block_rows=block_rows,
        dtypes=dtypes,
        progress=progress,
        read={"sep": sep, "decimal": decimal, "na_values": na_values},
    )
    written = [0]

    def counted() -> Iterator[Any]:
        for table in tables:
            written[0] += 1
            yield table

    with replacing(out) as tmp:
        write_frames(counted(), tmp, kind, name=out.name.removesuffix(".zip"))
        if written[0] == 0:
            raise ValueError("the source holds no rows: nothing to predict.")
    return out
