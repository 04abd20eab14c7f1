"""The fast path of a fit: a plain Parquet scan's files read by the executors themselves.

Where a DataFrame is nothing but a Parquet scan (``spark.read.parquet(...)``,
at most a selection or renaming of its columns), each pass of a fit does not
push its rows through Spark's JVM (which converts every row to Arrow, column
by column: most of the time of a wide table's fit). The driver lists the
files (``DataFrame.inputFiles()``, the listing Spark itself would read) and
shares them out into one task per core (:func:`plan_splits`): runs of whole
files, or, when the files do not share out evenly, runs of their row groups
of about equal rows. A DataFrame of one row per task (``spark.range``) is
then mapped with ``mapInArrow``, so the work is still scheduled, retried and
placed by Spark (Spark Connect included); each task opens its files with
pyarrow (a ``pyarrow.fs`` file system from the path's URI, else fsspec's),
reads only the columns the fit needs,
converts them to the Arrow types Spark would have handed over (so the
statistics see exactly the same values) and summarises the batches as the
general path does (:func:`~.arrow.summarise_block`, the estimator's own
``task.statistics``), merging them in the task. What comes back is the same
:class:`~.arrow.Outcome` per task, tree-merged on the driver: one per core,
however many files.

The path is taken only when the driver can prove it reads what Spark would
(:func:`direct_scan`, conservative: anything else is the general path,
with the reason logged at DEBUG on the ``bayesrule.spark`` logger). A file
whose columns or types differ from the DataFrame's schema is found by the
task reading it, which reports :class:`Unsupported` instead of statistics:
the driver then runs the pass on the general path.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from .arrow import (
    Columns,
    Outcome,
    Scratch,
    _one,
    _threads,
    block_rows,
    reused_memory,
    summarise_block,
)

__all__ = [
    "LOG",
    "Scan",
    "Unsupported",
    "direct_scan",
    "filesystem_of",
    "cores",
    "plan_splits",
    "run_direct",
    "summarise_splits",
]

LOG = logging.getLogger("bayesrule.spark")

_PARQUET = "org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat"
_LISTING = "org.apache.spark.sql.execution.datasources.InMemoryFileIndex"
#: Spark settings under which Spark reads something else than every row of every file
_SKIPPING = ("spark.sql.files.ignoreMissingFiles", "spark.sql.files.ignoreCorruptFiles")
#: files per core from which a pass reads whole files without looking at their footers
#: (fewer, and not a multiple of the cores: the driver balances their row groups)
FOOTERS_BELOW = 8


class Unsupported(Exception):  # noqa: N818  (a reason, carried as a value; never raised to users)
    """A task met a file the fast path cannot read as Spark would: the pass goes the general way."""


@dataclass(frozen=True)
class Scan:
    """What the tasks of the fast path read.

    ``files``: the URIs Spark lists; ``sources``: for each of the fit's
    columns (``names``), its name in the files; ``schema``: the Arrow schema
    (with ``names``) Spark's ``mapInArrow`` would hand over for those columns.
    """

    files: tuple[str, ...]
    names: tuple[str, ...]
    sources: tuple[str, ...]
    schema: Any


def _wanted(cols: Columns) -> tuple[str, ...]:
    return (*cols.features, cols.target) + ((cols.weight,) if cols.weight is not None else ())


#: a column as Catalyst prints it: ``name#id``, ``L`` after a long
_ATTRIBUTE = re.compile(r"^(?P<name>.*)#(?P<id>\d+)L?$", re.S)
#: a column cast to floating point (the command line casts numeric features to double)
_CAST = re.compile(r"^cast\((?P<inner>.*) as (?:double|float)\)$", re.S)
_SEP = "\u0001"


def _items(seq: Any) -> list[str] | None:
    """The items of a Catalyst sequence as printed, read from one string (a JVM call per
    item costs seconds for hundreds of columns); None where an item holds the separator."""
    size = int(seq.size())
    items = str(seq.mkString(_SEP)).split(_SEP) if size else []
    return items if len(items) == size else None


def _class(obj: Any) -> str:
    return str(obj.getClass().getName())


def _sources(plan: Any) -> tuple[Any, list[tuple[str, str]]] | str:
    """The scan under ``plan``'s projections and each output column's ``(name, name in the files)``.

    A reason (str) where a projection computes a column (anything but a
    column of the scan, as it is, renamed, ``name#1 AS other#2``, or cast
    to floating point, ``cast(name#1 as double) AS name#3``; whether the
    file's type converts exactly is for the task to check, :func:`_readable`).
    """
    projections = []
    while _class(plan).endswith(".Project"):
        projections.append(plan.projectList())
        plan = plan.child()
    items = _items(plan.output())
    if items is None:
        return "the files' columns could not be read from the plan"
    held: dict[int, tuple[str, str]] = {}
    out = []
    for item in items:
        found = _ATTRIBUTE.match(item)
        if found is None:
            return "the files' columns could not be read from the plan"
        held[int(found["id"])] = (found["name"], found["name"])
        out.append((found["name"], found["name"]))
    for projection in reversed(projections):
        items = _items(projection)
        if items is None:
            return "a column's name could not be read from the plan"
        below, held, out = held, {}, []
        for item in items:
            head, tail = item.rsplit(" AS ", 1) if " AS " in item else (item, item)
            cast = _CAST.match(head)
            if cast is not None:  # the tasks convert to Spark's type of the column anyway
                head = cast["inner"]
            ref, alias = _ATTRIBUTE.match(head), _ATTRIBUTE.match(tail)
            if ref is None or alias is None:
                return f"a column is computed ({item[:80]})"
            child = below.get(int(ref["id"]))
            if child is None or child[0] != ref["name"]:
                return f"a column is computed ({item[:80]})"
            held[int(alias["id"])] = (alias["name"], child[1])
            out.append((alias["name"], child[1]))
    return plan, out


def direct_scan(df: Any, cols: Columns) -> tuple[Scan | None, str]:
    """The files of ``df`` and how to read the fit's columns from them, or None and why not.

    Taken only for a classic (JVM) DataFrame whose analysed plan (cached
    parts substituted) is a Parquet ``LogicalRelation`` over a plain file
    listing, under at most projections of its columns, each as it is or
    renamed (no cast, no expression, no filter, limit, sample, join, union,
    cached DataFrame), none of the fit's columns a partition column, and
    neither missing nor corrupt files to be skipped
    (``spark.sql.files.ignore*Files``).
    """
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        return None, "not a classic DataFrame (Spark Connect: the plan is not inspected)"
    try:
        conf = df.sparkSession.conf
        for key in _SKIPPING:
            if str(conf.get(key, "false")).lower() == "true":
                return None, f"{key} is set"
        # the analysed plan, cached parts substituted: the optimiser's plan costs seconds
        top = jdf.queryExecution().withCachedData()
        if top.isStreaming():
            return None, "a streaming DataFrame"
        walked = _sources(top)
        if isinstance(walked, str):
            return None, walked
        plan, out = walked
        if not _class(plan).endswith(".LogicalRelation"):
            return None, f"the plan reads {plan.nodeName()}, not a Parquet file scan"
        relation = plan.relation()
        if not _class(relation).endswith(".HadoopFsRelation"):
            return None, f"the relation is a {relation.getClass().getSimpleName()}"
        if _class(relation.fileFormat()) != _PARQUET:
            return None, f"the files are read as {relation.fileFormat().getClass().getSimpleName()}"
        if _class(relation.location()) != _LISTING:
            return None, f"the files are listed by {relation.location().getClass().getSimpleName()}"
        if [name for name, _ in out] != list(df.columns):
            return None, "the plan's columns are not the DataFrame's"
        partitions = set(relation.partitionSchema().fieldNames())
        names = _wanted(cols)
        found: dict[str, list[str]] = {}
        for name, source in out:
            found.setdefault(name, []).append(source)
        picked = []
        for name in names:
            sources = found.get(name, [])
            if len(sources) != 1:
                return None, f"column {name!r} is not one column of the files"
            if sources[0] in partitions:
                return None, f"column {name!r} is a partition column"
            picked.append(sources[0])
        files = tuple(str(f) for f in df.inputFiles())
    except Exception as exc:  # a plan of another shape or version: the general path reads it
        return None, f"the plan could not be read ({type(exc).__name__}: {exc})"
    if not files:
        return None, "the scan lists no file"
    for scheme in sorted({_scheme(f) for f in files}):
        try:
            filesystem_of(next(f for f in files if _scheme(f) == scheme))
        except Exception as exc:
            return None, f"no pyarrow or fsspec file system reads {scheme}:// ({exc})"
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    fields = {f.name: f for f in df.schema.fields}
    schema = to_arrow_schema(StructType([fields[n] for n in names]))
    return Scan(files, names, tuple(picked), schema), ""


def _scheme(uri: str) -> str:
    parsed = urlparse(uri)
    return parsed.scheme.lower() if len(parsed.scheme) > 1 else "file"


def filesystem_of(uri: str) -> tuple[Any, str]:
    """A ``pyarrow.fs`` file system that reads ``uri`` and the path to give it.

    ``file:`` URIs and plain paths: the local file system (percent escapes
    decoded, as Spark writes them); Hadoop's ``s3a://`` and ``s3n://``:
    ``s3://``; anything else: ``pyarrow.fs.FileSystem.from_uri`` (HDFS, S3,
    GCS, Azure where pyarrow was built with them), else fsspec's file system
    for the URI's scheme (``gcsfs``, ``adlfs``, ...) wrapped for pyarrow.

    Raises
    ------
    Exception
        Whatever pyarrow and fsspec raise when neither reads the scheme.
    """
    import pyarrow.fs as pafs

    scheme = _scheme(uri)
    if scheme == "file":
        path = unquote(urlparse(uri).path) if uri.lower().startswith("file:") else uri
        return pafs.LocalFileSystem(), path
    if scheme in ("s3a", "s3n"):
        uri = "s3" + uri[len(scheme) :]
    try:
        return pafs.FileSystem.from_uri(uri)
    except Exception as first:
        try:
            import fsspec
        except ImportError:
            raise first from None
        fs, path = fsspec.core.url_to_fs(uri)
        return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path


#: a piece of a task: ``(file index, row groups or None for the whole file)``
Piece = tuple[int, tuple[int, ...] | None]


def plan_splits(files: tuple[str, ...], cores: int) -> list[tuple[Piece, ...]]:
    """The tasks of a pass, one per core: each the pieces of files it reads, in order.

    One task per core (at most one per row group), so that each core's
    statistics are merged in its task and only ``cores`` of them travel to
    the driver: a full-covariance model's statistics are ``K p²`` doubles a
    task (49 MB for MNIST), and every task more costs a job's worth of
    start-up and a result's transfer through the JVM. Where the files share
    out evenly among the cores (a multiple of them), or there are at least
    ``FOOTERS_BELOW`` per core, each task reads whole files, consecutive
    ones (no file is opened here). Otherwise the driver reads the footers
    and cuts the row groups, in file order, into runs of about equal rows.
    """
    n = max(1, cores)
    if len(files) % n == 0 or len(files) >= FOOTERS_BELOW * n:
        tasks = min(n, len(files))
        bounds = [len(files) * t // tasks for t in range(tasks + 1)]
        return [tuple((i, None) for i in range(bounds[t], bounds[t + 1])) for t in range(tasks)]
    import pyarrow.parquet as pq

    counts = []
    for uri in files:
        fs, path = filesystem_of(uri)
        try:
            meta = pq.ParquetFile(path, filesystem=fs).metadata
        except FileNotFoundError as exc:
            raise FileNotFoundError(gone(uri)) from exc
        counts.append([meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
    total = sum(sum(c) for c in counts)
    # a row group goes to the task its middle row falls in: runs of about total / n rows
    owner: dict[int, dict[int, list[int]]] = {}
    seen = 0
    for i, groups in enumerate(counts):
        if not groups:  # a file without rows: read for its schema
            owner.setdefault(min(n - 1, seen * n // max(1, total)), {}).setdefault(i, [])
        for g, rows in enumerate(groups):
            t = min(n - 1, int((seen + rows / 2) * n // max(1, total)))
            owner.setdefault(t, {}).setdefault(i, []).append(g)
            seen += rows
    return [tuple((i, tuple(groups)) for i, groups in owner[t].items()) for t in sorted(owner)]


def _readable(file_type: Any, want: Any) -> bool:
    """Whether a file's column type converts to Spark's type of it without changing a value."""
    import pyarrow as pa

    if file_type == want:
        return True
    text = (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view)
    if any(t(file_type) for t in text) and any(t(want) for t in text):
        return True
    if pa.types.is_integer(file_type) and pa.types.is_signed_integer(want):
        extra = 1 if pa.types.is_unsigned_integer(file_type) else 0
        return bool(file_type.bit_width + extra <= want.bit_width)
    if pa.types.is_floating(want):
        # Spark's casts to floating point: exact, or (64-bit integers) rounded to nearest
        # as Arrow's unchecked cast rounds them; decimals are left to Spark
        if pa.types.is_floating(file_type):
            return bool(file_type.bit_width <= want.bit_width)
        return bool(pa.types.is_integer(file_type) or pa.types.is_boolean(file_type))
    return False


def _piece_batches(scan: Scan, piece: Piece, rows: int, threads: int) -> Iterator[Any]:
    """The Arrow batches of one piece of a file, as Spark would hand them over (``scan.names``).

    Raises :class:`_Gone` for a file that is not there and :class:`Unsupported`
    for one whose columns or types are not the DataFrame's.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    index, groups = piece
    uri = scan.files[index]
    fs, path = filesystem_of(uri)
    try:
        handle = pq.ParquetFile(path, filesystem=fs)
    except FileNotFoundError as exc:
        raise _Gone(uri) from exc
    held = handle.schema_arrow
    wanted = [scan.schema.field(name).type for name in scan.names]
    for source, want in zip(scan.sources, wanted, strict=True):
        j = held.get_field_index(source)
        if j < 0:
            raise Unsupported(f"{uri} has no column {source!r}")
        if not _readable(held.field(j).type, want):
            raise Unsupported(
                f"{uri}: column {source!r} is {held.field(j).type}, Spark reads it as {want}"
            )
    parts = handle.iter_batches(
        batch_size=rows,
        row_groups=groups,
        columns=list(dict.fromkeys(scan.sources)),
        use_threads=threads > 1,
    )
    for part in parts:
        arrays = []
        for source, want in zip(scan.sources, wanted, strict=True):
            column = part.column(part.schema.get_field_index(source))
            if column.type != want:  # checked by _readable: no value changes
                column = column.cast(want, safe=False)
            arrays.append(column)
        yield pa.RecordBatch.from_arrays(arrays, names=list(scan.names))


@contextmanager
def _system_pool() -> Iterator[None]:
    """Arrow's allocations made with the C library's ``malloc`` for the while (the default
    pool restored after).

    Arrow's default pool (mimalloc) hands the memory of a decoded block back
    to the system soon after it is freed, so that every block of a task
    page-faults its hundreds of MB in anew; ``malloc`` keeps it for the next
    block. Measured on MNIST's 784 float columns: half the system time of
    reading a file.
    """
    import pyarrow as pa

    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def summarise_splits(
    task: Any,
    cols: Columns,
    classes: Any,
    scan: Scan,
    splits: list[tuple[Piece, ...]],
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function over the tasks' ids: each task's statistics, one row per task.

    ``splits``: the pieces each task reads (:func:`plan_splits`). The task
    reads its pieces with pyarrow (only the fit's columns), each batch cast
    to the types Spark would hand over, and summarises them as
    :func:`~.arrow.summarise_partition` does, merging everything it read
    into one summary. A file that is gone is a ``FileNotFoundError`` carried
    to the driver; a file whose columns or types are not the DataFrame's,
    an :class:`Unsupported` outcome.
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        from ..._util.config import config_context

        total, rows, nulls = None, 0, 0
        threads = _threads()
        size = block_rows(cols)
        scratch = Scratch()
        try:
            with config_context(n_threads=threads), _system_pool(), reused_memory():
                for batch in batches:
                    for sid in batch.column(0).to_pylist():
                        for piece in splits[sid]:
                            for block in _piece_batches(scan, piece, size, threads):
                                part, n, dropped = summarise_block(
                                    task, block, cols, classes, scratch
                                )
                                nulls += dropped
                                if part is not None:
                                    rows += n
                                    total = task.combine(total, part)
        except _Gone as gone:
            yield _one(Outcome(None, rows, nulls, FileNotFoundError(str(gone))))
            return
        except Unsupported as exc:
            yield _one(Outcome(None, rows, nulls, exc))
            return
        except (ValueError, TypeError) as exc:  # the data's fault: the driver raises it
            yield _one(Outcome(None, rows, nulls, exc))
            return
        yield _one(Outcome(total, rows, nulls))

    return run


def gone(uri: str) -> str:
    """The message of a file Spark listed that is no longer there."""
    return (
        f"{uri}: the file is gone (deleted or moved since the DataFrame was read); "
        "read the data again (spark.read...) before fitting."
    )


class _Gone(Exception):
    def __init__(self, uri: str) -> None:
        super().__init__(gone(uri))


def run_direct(
    spark: Any, n_splits: int, fn: Callable[[Iterator[Any]], Iterator[Any]]
) -> list[Any]:
    """One pass on the fast path: the decoded outcomes of its ``n_splits`` tasks.

    ``fn``: :func:`summarise_splits` of the pass. One task per partition of
    ``spark.range``, so Spark places and retries each task.
    """
    from .arrow import SUMMARY, decode

    ids = spark.range(0, n_splits, 1, numPartitions=n_splits)
    summaries = ids.mapInArrow(fn, f"{SUMMARY} binary")
    to_arrow = getattr(summaries, "toArrow", None)
    if to_arrow is None:  # pyspark 3.5: rows pickled by the JVM
        return [decode(r[0]) for r in summaries.collect()]
    # as Arrow: a full-covariance model's statistics are tens of MB a task, which the
    # JVM's row pickler copies slowly (and can run out of heap on)
    return [decode(v) for v in to_arrow().column(0).to_pylist()]


def cores(spark: Any) -> int:
    """The cores Spark runs tasks on (``defaultParallelism``; a setting or the CPUs on Connect)."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect: no SparkContext
        try:
            return int(spark.conf.get("spark.default.parallelism", str(os.cpu_count() or 2)))
        except Exception:
            return os.cpu_count() or 2
