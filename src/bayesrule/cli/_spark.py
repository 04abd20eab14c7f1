"""``--spark``: fit, predict and evaluate on Apache Spark.

Spark reads DATA (:func:`bayesrule.backends.spark.reading.read_table`); the
columns are chosen from its first rows exactly as in memory
(:func:`~bayesrule.cli._scale.plan_columns`: ``--features``, ``--drop``, a
written-out index column, the target, the numeric check); the features of
a numeric model are cast to double on the executors, as the in-memory path
reads them as floats. The fit is :func:`bayesrule.spark.fit` (only the
statistics reach this process), so the model file is the one an in-memory
fit of the same file writes, to rounding. ``predict`` writes with Spark's
own writer, a folder of part files (standard output: the rows are streamed
here partition by partition); ``evaluate`` adds up its counts on the
executors, and only the confusion counts and log-loss sums come back.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np

from ._common import (
    PredictJob,
    is_table_model,
    method_names,
    model_features,
    stored_target,
    streamable_model,
)
from ._data import STDIN, Columns, Dataset, UsageError, match_columns
from ._dataset import _labels, read_options
from ._errors import notes, state
from ._feedback import busy
from ._incomplete import gapped
from ._metrics import Tally
from ._options import Reading, parse_sep
from ._params import with_kinds
from ._read_table import _decimal_commas, _head_text, _sniff_separator
from ._scale import HEAD_ROWS, plan_columns
from ._select import missing_target_error, missing_target_note
from ._shell import say

__all__ = [
    "evaluate_on_spark",
    "fit_on_spark",
    "no_stream_with_spark",
    "predict_on_spark",
    "spark_name",
    "spark_target",
]

_HINT = "pip install 'bayesrule[spark]'"
#: the warning of bayesrule.spark.fit about rows without a label
#: a Spark error class and its message: [MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] ...
_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z0-9_]+(?:\.[A-Z0-9_]+)*\].*$")
_NULL_LABELS = re.compile(r"left out (\d+) row\(s\) whose label")
#: output suffixes and Spark's writer for them
_WRITERS = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".jsonl": "json", ".json": "json"}
_OUT_CODECS = {".gz": "gzip", ".bz2": "bzip2"}


# ------------------------------------------------------------------ options and sessions
def no_stream_with_spark(reading: Reading) -> None:
    """``--spark`` reads with Spark: the options of the other readers do not combine with it."""
    clashes = [
        name
        for name, given in (
            ("--scheduler", reading.scheduler is not None),
            ("--stream", bool(reading.stream)),
            ("--block-rows", reading.block_rows is not None),
            ("--sheet", reading.sheet is not None),
        )
        if given
    ]
    if clashes:
        raise UsageError(
            f"--spark reads and runs everything on Spark; {', '.join(clashes)} "
            f"belong{'s' if len(clashes) == 1 else ''} to another reader: give one or the other."
        )


def _first_line(exc: BaseException) -> str:
    """The line of a Spark error a reader needs.

    A Python worker's own exception (``ValueError: ...``) if there is one;
    else the deepest Spark error with an error class (``[MALFORMED_...]
    ...``), from its class on; else the first line.
    """
    text = str(exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    raised = [
        line
        for line in lines
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Warning)\b.*:", line)
        and not line.startswith(("org.", "java.", "scala.", "py4j", "Py4J"))
    ]
    classed = [m.group(0) for line in lines if (m := _ERROR_CLASS.search(line))]
    if raised:
        line = raised[-1]
    elif classed:
        line = classed[-1]
    else:
        line = lines[0] if lines else type(exc).__name__
    return re.sub(r"\s*SQLSTATE: \w+\.?$", "", line)


def _is_spark_error(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return module.startswith(("pyspark", "py4j"))


@contextlib.contextmanager
def _quiet_pyspark() -> Iterator[None]:
    """pyspark's own warnings (the pandas version it was tested with, pandas' deprecations
    it triggers) are not the user's affair: they are not shown."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"pyspark(\.|$)")
        warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support")
        warnings.filterwarnings("ignore", message=".*copy keyword is deprecated")
        yield


@contextlib.contextmanager
def on_spark(master: str) -> Iterator[Any]:
    """The Spark session of the command on ``master``; its failures as one-line usage errors."""
    with _quiet_pyspark(), _session(master) as spark:
        yield spark


@contextlib.contextmanager
def _session(master: str) -> Iterator[Any]:
    from ..backends.spark import reading as spark_reading

    try:
        spark_reading.master_kind(master)  # a typo is refused even where a session runs
        context = spark_reading.spark_session(master, quiet=not state["debug"])
        start = context.__enter__()
    except ImportError as exc:
        text = str(exc)
        raise UsageError(
            f"--spark: {text}" if "pip install" in text else f"--spark needs pyspark: {_HINT}"
        ) from None
    except (ValueError, ConnectionError) as exc:
        raise UsageError(f"--spark {master}: {exc}") from None
    except RuntimeError as exc:
        raise UsageError(f"--spark {master}: {_first_line(exc)}") from None
    failure: BaseException | None = None
    try:
        yield start.spark
    except BaseException as exc:
        failure = exc
        if _is_spark_error(exc) and not state["debug"]:
            where = f" (Spark's log: {start.log})" if start.log else ""
            raise UsageError(f"Spark: {_first_line(exc)}{where}") from None
        raise
    finally:
        if failure is None:
            context.__exit__(None, None, None)
        else:
            context.__exit__(type(failure), failure, failure.__traceback__)


# ------------------------------------------------------------------ reading
def spark_name(data: list[Path]) -> str:
    """DATA's short name, as the model file keeps it (a file's or folder's name)."""
    paths = _paths(data)
    first = os.path.basename(paths[0].rstrip("/")) or paths[0]
    more = len(paths) - 1
    return first if not more else f"{first} and {more} more path{'s' if more > 1 else ''}"


def spark_target(model: Path, target: str | None) -> str:
    """``--target``, else the label column the model file names."""
    found = target or stored_target(model)
    if found is None:
        raise UsageError(
            f"{model}: the model file does not name its label column; give it with --target."
        )
    return found


def _paths(data: list[Path]) -> list[str]:
    from ..backends.spark.reading import location

    if not data or STDIN in data:
        raise UsageError("--spark: Spark cannot read standard input; give files.")
    return [location(p) for p in data]


def _separator(path: str, fmt: Any, sep: str | None) -> str | None:
    """``--sep``, or the separator sniffed from a local CSV file's first lines (as in memory)."""
    from ..backends.spark.reading import data_files

    if sep is not None or fmt.format != "csv" or "://" in path or path.startswith("file:"):
        return sep
    local = Path(path)
    if local.is_dir():
        local = Path(next(iter(data_files(path)), path))
    if not local.is_file():
        return fmt.sep
    from ..io.formats import compression_of

    head = _head_text(local, compression_of(local))
    found = _sniff_separator(head, default=fmt.sep or ",")
    if found == ";" and _decimal_commas(head):
        raise UsageError(
            f"{path}: the numbers have decimal commas, which Spark does not read; "
            "read the file without --spark."
        )
    return found


def spark_table(spark: Any, data: list[Path], sep: str | None) -> tuple[Any, str]:
    """DATA read by Spark, and its name for messages."""
    from ..backends.spark.reading import read_table, table_format

    paths = _paths(data)
    try:
        fmt = table_format(paths[0])
        for p in paths[1:]:
            table_format(p)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    na = read_options.na_values
    if len(na) > 1:
        raise UsageError(
            f"--na-values: Spark reads one missing-value marker besides empty cells; "
            f"got {len(na)} ({', '.join(na)})."
        )
    found = _separator(paths[0], fmt, parse_sep(sep))
    try:
        df = read_table(spark, paths, sep=found, null_value=na[0] if na else None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    name = paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more"
    return df, name


def _head(df: Any, source: str) -> Any:
    """The first rows, which the columns are chosen from (column names as text)."""
    head = df.limit(HEAD_ROWS).toPandas()
    head.columns = [str(c) for c in head.columns]
    if head.shape[0] == 0:
        raise UsageError(f"{source}: the data have no rows.")
    return head


def _plan(df: Any, source: str, target: str | None, need: bool, columns: Columns) -> Dataset:
    plan = plan_columns(_head(df, source), source, target, need, columns)
    if target is None and need:
        raise UsageError(f"{source}: give the label column with --target.")
    return plan


def _as_double(df: Any, names: list[str], numeric: bool) -> Any:
    """The feature columns cast to double for a numeric model (the in-memory path reads floats)."""
    if not numeric:
        return df
    from pyspark.sql import functions as F

    wanted = set(names)
    return df.select(
        *[
            F.col(f"`{c}`").cast("double").alias(c) if c in wanted else F.col(f"`{c}`")
            for c in df.columns
        ]
    )


def _check_width(plan: Dataset, est: Any, source: str) -> None:
    if plan.n_features != est.n_features_in_:
        raise UsageError(
            f"{source}: the data have {plan.n_features} feature columns, but the model was "
            f"fitted with {est.n_features_in_}."
        )


# ------------------------------------------------------------------ fit
def fit_on_spark(
    est: Any,
    data: list[Path],
    target: str | None,
    columns: Columns,
    reading: Reading,
    kinds: list[str] | None,
) -> Dataset:
    """``fit --spark``: the statistics of every partition summed on Spark, the model here."""
    from .. import spark as bayesrule_spark

    streamable_model(est)
    master = str(reading.spark)
    with on_spark(master) as spark:
        df, source = spark_table(spark, data, reading.sep)
        plan = _plan(df, source, target, True, columns)
        notes.extend(plan.notes)
        names = list(plan.feature_names or [])
        with_kinds(est, kinds or [], names)
        df = _as_double(df, names, columns.numeric)
        with (
            busy(f"fitting {type(est).__name__} on Spark ({master})"),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            est = bayesrule_spark.fit(est, df, str(plan.target), features=names)
    _null_labels(caught, source, str(plan.target), reading.missing_target)
    plan.X = plan.frame = None
    return plan


def _null_labels(caught: list[Any], source: str, target: str, missing_target: str) -> None:
    """The fit's warning about rows without a label as the command says it (or the error)."""
    for w in caught:
        found = _NULL_LABELS.search(str(w.message))
        if found is None:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            continue
        k = int(found.group(1))
        if missing_target == "error":
            raise missing_target_error(source, target, f"{k:,} rows")
        notes.append(missing_target_note(k, target))


# ------------------------------------------------------------------ predict
def _writer_of(output: Path) -> tuple[str, str | None]:
    """Spark's format and compression for ``-o``'s suffixes."""
    name = output.name.lower()
    codec = None
    for suffix, c in _OUT_CODECS.items():
        if name.endswith(suffix):
            codec, name = c, name[: -len(suffix)]
    for suffix, fmt in _WRITERS.items():
        if name.endswith(suffix) and (codec is None or fmt != "parquet"):
            return fmt, codec
    raise UsageError(
        f"{output}: --spark writes a folder of CSV (.csv, .csv.gz), Parquet (.parquet) or "
        "JSON lines (.jsonl) files, by the suffix of -o; or CSV to standard output (-o -)."
    )


def _check_output(output: Path) -> None:
    """A folder Spark wrote before is replaced; another folder or a missing parent is refused."""
    if output == STDIN:
        return
    if not output.parent.is_dir():
        raise UsageError(f"{output}: the directory {output.parent} does not exist.")
    if output.is_dir() and any(output.iterdir()) and not (output / "_SUCCESS").exists():
        raise UsageError(
            f"{output}: is a folder that Spark did not write (no _SUCCESS file); "
            "give a new name, or remove it."
        )


def _write(result: Any, output: Path, fmt: str, codec: str | None, sep: str) -> None:
    """Spark writes the folder beside ``output``; it replaces ``output`` when complete."""
    staged = output.with_name(f".{output.name}.bayesrule-{os.getpid()}")
    writer = result.write.mode("overwrite")
    if fmt == "csv":
        writer = writer.option("header", "true").option("sep", sep)
    if codec is not None:
        writer = writer.option("compression", codec)
    try:
        writer.format(fmt).save(str(staged.resolve()))
        if output.is_dir():
            shutil.rmtree(output)
        elif output.exists():
            output.unlink()
        staged.rename(output)
    finally:
        if staged.exists():
            shutil.rmtree(staged, ignore_errors=True)


def _to_stdout(result: Any) -> None:
    """The rows as CSV on standard output, partition by partition (they pass through here)."""
    import sys

    import pandas as pd

    names = result.columns
    rows: list[Any] = []
    header = True
    for row in result.toLocalIterator():
        rows.append(tuple(row))
        if len(rows) == 10_000:
            pd.DataFrame(rows, columns=names).to_csv(sys.stdout, index=False, header=header)
            rows, header = [], False
    if rows or header:
        pd.DataFrame(rows, columns=names).to_csv(sys.stdout, index=False, header=header)
    sys.stdout.flush()


def predict_on_spark(job: PredictJob, data: list[Path], reading: Reading) -> None:
    """``predict --spark``: the predictions written by Spark's writer, rows never collected here."""
    from pyspark.sql import functions as F

    from .. import spark as bayesrule_spark
    from ..backends.spark.predict import release

    est, output = job.est, job.output
    fmt, codec = _writer_of(output) if output != STDIN else ("csv", None)
    _check_output(output)
    master = str(reading.spark)
    numeric = not is_table_model(est)
    columns = Columns(model=model_features(est), numeric=numeric)
    with on_spark(master) as spark:
        df, source = spark_table(spark, data, reading.sep)
        plan = _plan(df, source, job.label, False, columns)
        _check_width(plan, est, source)
        notes.extend(plan.notes)
        names = list(plan.feature_names or [])
        keep = match_columns(job.kept, [str(c) for c in df.columns], "--keep") if job.kept else []
        if "prediction" in keep:
            raise UsageError("--keep prediction: the output has its own 'prediction' column.")
        scorer = est if job.incomplete == "error" else gapped(est)
        cut = _as_double(
            df.select(*[f"`{c}`" for c in dict.fromkeys([*keep, *names])]), names, numeric
        )
        scored = bayesrule_spark.predict(scorer, cut, method_names(job.proba), features=names)
        wanted = [F.col(f"`{c}`") for c in keep] + [F.col("prediction")]
        if job.proba:
            for c in est.classes_:
                p = F.col(f"`proba_{c}`")
                wanted.append(F.when(F.isnan(p), None).otherwise(p).alias(f"proba_{c}"))
        result = scored.select(*wanted)
        if output == STDIN:
            with busy(f"predicting on Spark ({master})"):
                _to_stdout(result)
            release(scored)
            return
        from pyspark.sql import Observation

        seen = Observation("bayesrule")
        counted = result.observe(
            seen,
            F.count(F.lit(1)).alias("rows"),
            F.sum(F.col("prediction").isNull().cast("long")).alias("empty"),
        )
        bare = re.sub(r"\.(gz|bz2)$", "", output.name.lower())
        sep = "\t" if bare.endswith(".tsv") else ","
        with busy(f"predicting on Spark ({master})"):
            _write(counted, output, fmt, codec, sep)
        got = seen.get
        release(scored)
    n, empty = int(got.get("rows") or 0), int(got.get("empty") or 0)
    if empty:
        notes.append(
            f"{empty:,} of {n:,} rows hold missing or infinite cells that "
            f"{type(est).__name__} cannot take: their prediction cells are empty "
            "(--incomplete error refuses them)."
        )
    say(f"{n:,} predictions -> {output}/ (a folder of {fmt} part files written by Spark)")


# ------------------------------------------------------------------ evaluate
def _tally_partition(est: Any, target: str, names: tuple[str, ...], source: str) -> Any:
    """The ``mapInArrow`` function of ``evaluate``: one pickled tally per partition."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pickle

        import pyarrow as pa
        import pyarrow.compute as pc

        tally, nulls, error = Tally(est, cast(Any, source)), 0, None
        for batch in batches:
            labels = batch.column(batch.schema.get_field_index(target))
            if labels.null_count:
                nulls += labels.null_count
                batch = batch.filter(pc.is_valid(labels))
                labels = batch.column(batch.schema.get_field_index(target))
            if batch.num_rows == 0:
                continue
            log_proba = np.column_stack(
                [
                    batch.column(batch.schema.get_field_index(n)).to_numpy(zero_copy_only=False)
                    for n in names
                ]
            ).astype(np.float64)
            try:
                y = _labels(labels.to_numpy(zero_copy_only=False), f"{source}: {target!r}")
                tally.add(y, log_proba)
            except (UsageError, ValueError, TypeError) as exc:
                error = str(exc)
                break
        blob = pickle.dumps((tally, nulls, error), protocol=pickle.HIGHEST_PROTOCOL)
        yield pa.RecordBatch.from_arrays([pa.array([blob], pa.binary())], ["tally"])

    return run


def _merged(est: Any, source: str, parts: list[Tally]) -> Tally:
    """One tally of several partitions' tallies (the sums of their counts and log-losses)."""
    total = Tally(est, cast(Any, source))
    for part in parts:
        total.counts += part.counts
        for label, row in part.unseen.items():
            total.unseen[label] = total.unseen.get(label, 0) + row
        total.loss += part.loss
        total.unclipped += part.unclipped
        total.seen_rows += part.seen_rows
        total.rows += part.rows
        total.unscored += part.unscored
    return total


def evaluate_on_spark(
    est: Any,
    data: list[Path],
    target: str | None,
    reading: Reading,
) -> tuple[Any, dict[str, Any]]:
    """``evaluate --spark``: each partition's confusion counts and log-loss, added up here."""
    import pickle
    from types import SimpleNamespace

    from .. import spark as bayesrule_spark
    from ..backends.spark.predict import release

    master = str(reading.spark)
    numeric = not is_table_model(est)
    columns = Columns(model=model_features(est), numeric=numeric)
    with on_spark(master) as spark:
        df, source = spark_table(spark, data, reading.sep)
        plan = _plan(df, source, target, True, columns)
        _check_width(plan, est, source)
        notes.extend(plan.notes)
        names = list(plan.feature_names or [])
        label = str(plan.target)
        scorer = est if reading.incomplete == "error" else gapped(est)
        cut = _as_double(
            df.select(*[f"`{c}`" for c in dict.fromkeys([label, *names])]), names, numeric
        )
        scored = bayesrule_spark.predict(scorer, cut, "predict_log_proba", features=names)
        logs = tuple(f"log_proba_{c}" for c in est.classes_)
        # the tasks need the classes only: the model itself reaches them once, in predict
        part = _tally_partition(SimpleNamespace(classes_=est.classes_), label, logs, source)
        with busy(f"evaluating on Spark ({master})"):
            rows = (
                scored.select(label, *[f"`{n}`" for n in logs])
                .mapInArrow(part, "tally binary")
                .collect()
            )
        release(scored)
    parts = [pickle.loads(bytes(r[0])) for r in rows]
    errors = [e for _, _, e in parts if e is not None]
    if errors:
        raise UsageError(errors[0])
    nulls = sum(n for _, n, _ in parts)
    if nulls and reading.missing_target == "error":
        raise missing_target_error(source, label, f"{nulls:,} rows")
    if nulls:
        notes.append(missing_target_note(nulls, label))
    tally = _merged(est, source, [t for t, _, _ in parts])
    if tally.unscored:
        notes.append(
            f"{tally.unscored:,} rows hold missing or infinite cells that {type(est).__name__} "
            "cannot take: they are left out of every figure (--incomplete error refuses them)."
        )
    if tally.rows == 0 and tally.unscored == 0:
        raise UsageError(f"{source}: no row with a label to evaluate.")
    info = SimpleNamespace(source=source, n_rows=tally.rows + tally.unscored, target=label)
    return info, tally.metrics()
