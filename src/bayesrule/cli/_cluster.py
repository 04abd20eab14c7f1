"""``--scheduler``: fit, predict and evaluate on a Dask cluster."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import (
    PredictJob,
    is_table_model,
    label_column,
    method_names,
    model_features,
    streamable_model,
)
from ._data import (
    STDIN,
    Columns,
    Dataset,
    UsageError,
    match_columns,
    write_table,
)
from ._dataset import _labels
from ._errors import notes
from ._feedback import busy
from ._incomplete import gapped, unscored
from ._metrics import metrics
from ._options import parse_sep
from ._params import with_kinds
from ._scale import connect, dask_head, dask_select, dask_table, plan_columns
from ._shell import say
from ._sources import Data


def fit_on_cluster(
    est: Any,
    data: Data,
    target: str | None,
    columns: Columns,
    sep: str | None,
    missing_target: str,
    kinds: list[str] | None,
    scheduler: str,
) -> Dataset:
    """``fit --scheduler``: a Dask DataFrame, the statistics summed on the cluster."""
    streamable_model(est)
    with connect(scheduler):
        df, csv = dask_table(data, parse_sep(sep))
        plan = plan_columns(dask_head(df, str(data)), str(data), target, True, columns)
        X, y = dask_select(df, plan, columns.numeric, missing_target, csv)
        notes.extend(plan.notes)
        with_kinds(est, kinds or [], plan.feature_names or [])
        with busy(f"fitting {type(est).__name__} on the cluster at {scheduler}"):
            est.fit(X, y)
    plan.X = plan.frame = None
    return plan


def _compute(*collections: Any) -> tuple[Any, ...]:
    """Dask collections computed in one pass over the data (a frame's columns with arrays)."""
    import warnings

    import dask

    with warnings.catch_warnings():
        # a DataFrame column and the arrays of predictions are different kinds of graphs;
        # computing them together is what is wanted (one read of the file)
        warnings.filterwarnings("ignore", message="Computing mixed collections")
        return tuple(dask.compute(*collections))


def predict_on_cluster(job: PredictJob, scheduler: str) -> None:
    """``predict --scheduler``: lazy predictions computed on the cluster, written here."""
    est, data, output, proba = job.est, job.data, job.output, job.proba
    kept, label, sep, incomplete = job.kept, job.label, job.sep, job.incomplete
    import pandas as pd

    names = model_features(est)
    columns = Columns(model=names, numeric=not is_table_model(est))
    with connect(scheduler):
        df, csv = dask_table(data, parse_sep(sep))
        plan = plan_columns(dask_head(df, str(data)), str(data), label, False, columns)
        X, _ = dask_select(df, plan, columns.numeric, csv=csv)
        if plan.n_features != est.n_features_in_:
            raise UsageError(
                f"{data}: the data have {plan.n_features} feature columns, but the model was "
                f"fitted with {est.n_features_in_}."
            )
        keep = match_columns(kept, [str(c) for c in df.columns], "--keep") if kept else []
        if "prediction" in keep:
            raise UsageError("--keep prediction: the output has its own 'prediction' column.")
        lazy = _lazy_results(est, X, method_names(proba), incomplete)
        with busy(f"predicting on the cluster at {scheduler}"):
            kept_frame, *results = _compute(df[keep], *lazy)
    table = pd.DataFrame(index=pd.RangeIndex(len(results[0])))
    for col in keep:
        table[col] = kept_frame[col].to_numpy()
    results = [np.asarray(r) for r in results]
    table["prediction"] = label_column(results[0], est.classes_)
    if proba:
        for k, c in enumerate(est.classes_):
            table[f"proba_{c}"] = results[1][:, k]
    empty = int(unscored(results[0]).sum())
    if empty:
        notes.append(
            f"{empty:,} of {len(table):,} rows hold missing or infinite cells that "
            f"{type(est).__name__} cannot take: their prediction cells are empty "
            "(--incomplete error refuses them)."
        )
    write_table(table, output)
    if output != STDIN:
        say(f"{len(table):,} predictions -> {output}")


def _lazy_results(est: Any, X: Any, methods: list[str], incomplete: str) -> list[Any]:
    """Lazy results of ``est``'s methods on a Dask DataFrame, unscorable rows left empty."""
    if incomplete == "error":
        return [getattr(est, m)(X) for m in methods]
    import pandas as pd

    twin = gapped(est)
    lazy = []
    for m in methods:
        if m == "predict":
            meta: Any = pd.Series([], dtype=object)
        else:
            meta = pd.DataFrame(
                {str(k): pd.Series([], dtype=float) for k in range(len(est.classes_))}
            )
        lazy.append(X.map_partitions(_partition_result, twin, m, meta=meta))
    return lazy


def _partition_result(part: Any, twin: Any, method: str) -> Any:
    """One partition's results of a gapped model, as pandas (a Dask task)."""
    import pandas as pd

    values = getattr(twin, method)(part)
    if values.ndim == 1:
        return pd.Series(values, index=part.index, dtype=object)
    return pd.DataFrame(values, index=part.index, columns=[str(k) for k in range(values.shape[1])])


def evaluate_on_cluster(
    est: Any,
    data: Data,
    target: str | None,
    sep: str | None,
    missing_target: str,
    scheduler: str,
    incomplete: str = "empty",
) -> tuple[Any, dict[str, Any]]:
    """``evaluate --scheduler``: log-probabilities computed on the cluster, the counts here."""

    columns = Columns(model=model_features(est), numeric=not is_table_model(est))
    with connect(scheduler):
        df, csv = dask_table(data, parse_sep(sep))
        plan = plan_columns(dask_head(df, str(data)), str(data), target, True, columns)
        X, y = dask_select(df, plan, columns.numeric, missing_target, csv)
        notes.extend(plan.notes)
        if plan.n_features != est.n_features_in_:
            raise UsageError(
                f"{data}: the data have {plan.n_features} feature columns, but the model was "
                f"fitted with {est.n_features_in_}."
            )
        with busy(f"predicting on the cluster at {scheduler}"):
            (lazy,) = _lazy_results(est, X, ["predict_log_proba"], incomplete)
            labels, log_proba = _compute(y, lazy)
    from types import SimpleNamespace

    y_ = _labels(np.asarray(labels), f"{data}: the target column {target!r}")
    info = SimpleNamespace(source=str(data), n_rows=int(y_.size), target=target)
    report = metrics(est, y_, np.asarray(log_proba, dtype=float), data)
    if report["unscored"]:
        notes.append(
            f"{report['unscored']:,} rows hold missing or infinite cells that "
            f"{type(est).__name__} cannot take: they are left out of every figure "
            "(--incomplete error refuses them)."
        )
    return info, report
