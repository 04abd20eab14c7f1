"""Fitting from a Spark DataFrame: each pass one Spark job, and only statistics reach the driver.

The estimator drives its own fit through the public seam
(:mod:`bayesrule.estimators.seam`): ``est.fit_plan(reduce, first_block=...,
classes=...)`` calls ``reduce(task)`` once per pass (once for most models,
once per EM pass for mixture discriminant analysis). Spark's ``reduce`` is
one job: ``DataFrame.mapInArrow`` summarises every partition on the
executors, batch by batch (:func:`~.arrow.summarise_partition`), and
returns one row per partition holding its pickled statistics; the driver
collects those rows (never the data's) and combines them in a balanced
tree (:func:`~.arrow.combine_outcomes`), then calls ``task.finish``.

Classes: each partition declares the labels it holds and the statistics,
merged, unite them (their ``merge`` aligns the classes), so the labels are
found in the same pass; ``classes=`` declares them beforehand (a class may
then have no row). Everything the schema can tell (missing columns, a
column of the wrong type) is checked on the driver before any job runs.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np

from ..._util.dispatch import not_mergeable
from ...estimators.seam import Schema
from .arrow import (
    SUMMARY,
    Columns,
    combine_outcomes,
    decode,
    summarise_partition,
    value_counts_partition,
)
from .files import Unsupported, cores, direct_scan, plan_splits, run_direct, summarise_splits

#: where the backend says which way a fit reads the data (DEBUG)
LOG = logging.getLogger("bayesrule.spark")

__all__ = [
    "INTEGRAL",
    "NUMERIC",
    "SparkRows",
    "check_columns",
    "frame_kinds",
    "quoted",
    "reducer",
    "spark_statistics",
    "type_names",
]

#: Spark types (``DataType.typeName()``) a numeric model reads as numbers
NUMERIC = frozenset({"byte", "short", "integer", "long", "float", "double", "decimal", "boolean"})
#: the integer types, whose kind MixedNB infers from their values
INTEGRAL = frozenset({"byte", "short", "integer", "long"})
#: Spark types a label column may have
LABELS = NUMERIC | {"string", "varchar", "char"}
#: Spark types no model reads
UNREADABLE = frozenset({"array", "map", "struct", "binary", "udt", "variant", "null"})


def type_names(df: Any) -> dict[str, str]:
    """Each column's Spark type, as ``DataType.typeName()`` names it (``'double'``, ``'string'``)."""
    return {f.name: f.dataType.typeName() for f in df.schema.fields}


def quoted(name: str) -> str:
    """A column name as ``select`` reads it literally (dots and spaces included)."""
    return "`" + name.replace("`", "``") + "`"


def _listed(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names[:20]) + (" ..." if len(names) > 20 else "")


def check_columns(
    est: Any, df: Any, target: Any, features: Any = None, weight: Any = None
) -> Columns:
    """The columns a fit reads, checked against the DataFrame's schema (no job runs).

    Raises
    ------
    ValueError
        A target, feature or weight column the DataFrame lacks (named), a
        column named twice, no feature left, a label or weight column of a
        type that cannot hold labels or weights, or a non-numeric feature
        for a numeric model (named, with its type).
    """
    types = type_names(df)
    names = list(types)
    if not isinstance(target, str):
        raise TypeError(f"target must be the name of the label column (a str); got {target!r}.")
    if target not in types:
        raise ValueError(
            f"the target column {target!r} is not in the DataFrame; its columns are "
            f"{_listed(names)}."
        )
    if weight is not None:
        if not isinstance(weight, str):
            raise TypeError(f"weight must be the name of a column (a str); got {weight!r}.")
        if weight not in types:
            raise ValueError(
                f"the weight column {weight!r} is not in the DataFrame; its columns are "
                f"{_listed(names)}."
            )
        if weight == target:
            raise ValueError(f"the weight column {weight!r} is also the target column.")
    if features is None:
        chosen = [n for n in names if n not in (target, weight)]
    else:
        if isinstance(features, str):
            features = [features]
        chosen = list(features)
        bad = [f for f in chosen if not isinstance(f, str)]
        if bad:
            raise TypeError(f"features must be column names (str); got {bad[:5]!r}.")
        missing = [f for f in chosen if f not in types]
        if missing:
            raise ValueError(
                f"feature column(s) {_listed(missing)} not in the DataFrame; its columns are "
                f"{_listed(names)}."
            )
        twice = sorted({f for f in chosen if chosen.count(f) > 1})
        if twice:
            raise ValueError(f"feature column(s) {_listed(twice)} named more than once.")
        for role, col in (("target", target), ("weight", weight)):
            if col is not None and col in chosen:
                raise ValueError(f"the {role} column {col!r} is also listed among the features.")
    if not chosen:
        raise ValueError("no feature column: the DataFrame holds only the target (and weight).")
    name = type(est).__name__
    if types[target] not in LABELS:
        raise ValueError(
            f"the target column {target!r} has Spark type {types[target]}; labels must be "
            "numbers, strings or booleans."
        )
    if weight is not None and (types[weight] not in NUMERIC or types[weight] == "boolean"):
        raise ValueError(
            f"the weight column {weight!r} has Spark type {types[weight]}; weights must be numbers."
        )
    spec = est.input_spec()
    for f in chosen:
        t = types[f]
        if spec.frame:
            if t in UNREADABLE:
                raise ValueError(
                    f"feature column {f!r} has Spark type {t}, which {name} cannot read: "
                    "give it numbers, strings or booleans."
                )
        elif t not in NUMERIC:
            raise ValueError(
                f"feature column {f!r} has Spark type {t}; {name} needs numeric columns "
                "(cast it, or fit MixedNB, which reads strings as categories)."
            )
    dtype = "float32" if all(types[f] == "float" for f in chosen) else "float64"
    return Columns(tuple(chosen), target, weight, spec.frame, dtype, spec.order)


class SparkRows:
    """The rows of a Spark DataFrame as a fit reads them: which columns, and the declared classes.

    What :func:`bayesrule.spark.fit` hands the estimator's own ``fit`` and
    ``partial_fit`` (as ``X``); the Spark handler claims it.
    """

    def __init__(
        self, df: Any, cols: Columns, classes: Any = None, direct: bool | None = None
    ) -> None:
        self.df = df
        self.cols = cols
        self.classes = classes
        self.direct = direct

    def selected(self) -> Any:
        """The DataFrame cut to the columns the fit reads."""
        c = self.cols
        wanted = [*c.features, c.target] + ([c.weight] if c.weight is not None else [])
        return self.df.select(*[quoted(n) for n in wanted])


def _direct_plan(rows: SparkRows) -> tuple[Any, list[Any], Any] | None:
    """The scan, tasks and session of the fast path (:mod:`.files`), or None for the general one."""
    if rows.direct is False:
        LOG.debug("fit reads the DataFrame through Spark: direct=False")
        return None
    scan, reason = direct_scan(rows.df, rows.cols)
    splits: list[Any] = []
    spark = None
    if scan is not None:
        spark = rows.df.sparkSession
        try:
            splits = plan_splits(scan.files, cores(spark))
        except FileNotFoundError:
            raise
        except Exception as exc:
            scan, reason = None, f"the files' footers could not be read ({exc})"
    if scan is None:
        if rows.direct:
            raise ValueError(
                f"direct=True, but the DataFrame's files cannot be read directly: {reason}."
            )
        LOG.debug("fit reads the DataFrame through Spark: %s", reason)
        return None
    LOG.debug("fit reads %d Parquet file(s) directly, in %d task(s)", len(scan.files), len(splits))
    return scan, splits, spark


def reducer(rows: SparkRows, classes: Any, notes: dict[str, Any]) -> Any:
    """The ``reduce(task)`` of a fit: one Spark job per call; ``notes`` gets the null labels left out.

    A plain Parquet scan is read by the tasks themselves (:mod:`.files`);
    should a task meet a file it cannot read as Spark would, the pass (and
    every later one) runs on the general path, which converts the rows to
    Arrow in Spark (``mapInArrow`` over the DataFrame).
    """
    cols = rows.cols
    direct = _direct_plan(rows)
    # the general path's DataFrame, made when first needed: selecting hundreds of
    # columns is a JVM call per column and an analysis (seconds), which the fast path skips
    selected: Any = None

    def reduce(task: Any) -> Any:
        nonlocal direct, selected
        outcomes = None
        if direct is not None:
            scan, splits, spark = direct
            fn = summarise_splits(task, cols, classes, scan, splits)
            outcomes = run_direct(spark, len(splits), fn)
            odd = next((o.error for o in outcomes if isinstance(o.error, Unsupported)), None)
            if odd is not None:
                if rows.direct:
                    raise ValueError(f"direct=True, but a file cannot be read directly: {odd}.")
                LOG.debug("fit reads the DataFrame through Spark from now on: %s", odd)
                direct, outcomes = None, None
            else:
                notes["direct"] = notes.get("direct", 0) + 1
        if outcomes is None:
            if selected is None:
                selected = rows.selected()
            fn = summarise_partition(task, cols, classes)
            got = selected.mapInArrow(fn, f"{SUMMARY} binary").collect()
            outcomes = [decode(r[0]) for r in got]
        outcome = combine_outcomes(task, outcomes)
        if outcome.error is not None:
            raise outcome.error
        notes.setdefault("null_labels", outcome.null_labels)
        if outcome.summary is None:
            left = (
                f" ({outcome.null_labels} row(s) with a null label in column {cols.target!r} "
                "left out)"
                if outcome.null_labels
                else ""
            )
            raise ValueError(f"the DataFrame holds no row to fit on{left}.")
        return task.finish(outcome.summary)

    return reduce


def frame_kinds(est: Any, rows: SparkRows) -> list[str]:
    """MixedNB's column kinds, as an in-memory fit on the same rows would infer them.

    The schema settles every column but the integer ones (text: categories,
    floating point: Gaussian, booleans: Bernoulli); an integer column's kind
    depends on its values, so one Spark job counts each integer column's
    distinct values (only those counts travel) and the kind is inferred
    from them.
    """
    import pandas as pd
    from pyarrow import Table
    from sklearn.base import clone

    cols = rows.cols
    selected = rows.selected()
    empty = Table.from_batches([], schema=_arrow_schema(selected, cols.features)).to_pandas()
    kinds = est.infer_columns(empty)  # checks ``columns``; declared kinds kept
    declared = est.get_params().get("columns")
    if isinstance(declared, list):
        return [kinds[f] for f in cols.features]
    declared = declared or {}
    types = type_names(selected)
    ints = tuple(
        f
        for j, f in enumerate(cols.features)
        if types[f] in INTEGRAL and f not in declared and j not in declared
    )
    if ints:
        keep = [quoted(n) for n in (*ints, cols.target)]
        fn = value_counts_partition(ints, cols.target)
        counts: dict[str, dict[Any, int]] = {f: {} for f in ints}
        nulls = dict.fromkeys(ints, 0)
        for r in selected.select(*keep).mapInArrow(fn, f"{SUMMARY} binary").collect():
            part_counts, part_nulls = decode(r[0]).summary
            for f in ints:
                nulls[f] += part_nulls[f]
                for v, c in part_counts[f].items():
                    counts[f][v] = counts[f].get(v, 0) + c
        probe = clone(est).set_params(columns=None)
        for f in ints:
            levels = np.array(sorted(counts[f]), dtype=np.int64)
            values = np.repeat(levels, [counts[f][v] for v in levels.tolist()])
            if nulls[f]:  # as in pandas: integers with missing values are floating point
                values = np.concatenate([values.astype(np.float64), np.full(nulls[f], np.nan)])
            kinds[f] = probe.infer_columns(pd.DataFrame({f: values}))[f]
    return [kinds[f] for f in cols.features]


def _arrow_schema(df: Any, names: tuple[str, ...]) -> Any:
    """The Arrow schema of some columns of a Spark DataFrame (from its schema: no job runs)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.select(*[quoted(n) for n in names]).schema)


def _refusal(est: Any) -> str:
    return not_mergeable(est, "a Spark DataFrame", "partition", "Spark")


def _check_fitted_features(est: Any, cols: Columns) -> None:
    fitted = getattr(est, "feature_names_in_", None)
    if fitted is not None:
        fitted = [str(n) for n in fitted]
        if fitted != list(cols.features):
            raise ValueError(
                f"the feature columns {_listed(list(cols.features))} differ from those "
                f"{type(est).__name__} was fitted on, {_listed(fitted)}."
            )
    elif len(cols.features) != est.n_features_in_:
        raise ValueError(
            f"{len(cols.features)} feature columns, but {type(est).__name__} is expecting "
            f"{est.n_features_in_} features as input."
        )


def spark_statistics(est: Any, rows: SparkRows, classes: Any, *, reset: bool) -> tuple[Any, Any]:
    """The fitted statistics of a DataFrame's rows and its schema: the Spark handler's ``statistics``.

    ``reset``: a new fit (the estimator's fitted choices forgotten) or rows
    added to a fitted model (its choices kept, its features checked).
    """
    from sklearn.base import clone

    spec = est.input_spec()
    if not spec.multi_pass and not hasattr(type(est), "partial_fit"):
        raise TypeError(_refusal(est))
    if getattr(est, "covariance_estimator", None) is not None:
        raise TypeError(
            f"{type(est).__name__} with a covariance_estimator needs all rows at once and cannot "
            "be fitted on a Spark DataFrame; use shrinkage instead."
        )
    cols = rows.cols
    if not reset:
        _check_fitted_features(est, cols)
    if classes is None:
        classes = rows.classes
    planner = clone(est) if reset else est
    first: Any = None
    if spec.frame and reset:
        planner.set_params(columns=frame_kinds(est, rows))
    elif not spec.frame:
        first = np.empty((0, len(cols.features)), dtype=np.dtype(cols.dtype))
    notes: dict[str, Any] = {}
    # pooled_scatter: every task's statistics cross the JVM, so a model that needs no
    # class's own scatter (LDA without an estimated shrinkage) collects one pooled
    # scatter (K times less to move); other estimators ignore the option
    stats = planner.fit_plan(
        reducer(rows, classes, notes), first_block=first, classes=classes, pooled_scatter=True
    )
    if notes.get("null_labels"):
        warnings.warn(
            f"left out {notes['null_labels']} row(s) whose label (column {cols.target!r}) is null.",
            UserWarning,
            stacklevel=4,
        )
    names = np.asarray(list(cols.features), dtype=object)
    return stats, Schema(len(cols.features), names, np.dtype(cols.dtype))
