"""``bayesrule predict``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, cast

import typer

from ._cluster import predict_on_cluster
from ._common import (
    PredictJob,
    features_for,
    label_column,
    load_model,
    model_features,
    named_values,
    no_stream_with_scheduler,
    note_unscored,
)
from ._data import STDIN, UsageError, match_columns, split_names, write_table
from ._errors import FlagCommand
from ._feedback import busy
from ._incomplete import CHOICES as INCOMPLETE
from ._incomplete import gapped
from ._options import DataArg, ModelArg, Reading, check_choice, parse_sep, reads_data
from ._scale import should_stream
from ._shell import app, say
from ._sources import data_source, is_tabular
from ._spark import no_stream_with_spark, predict_on_spark
from ._streamed import predict_streamed
from ._write import check_rows_fit, input_files, refuse_overwriting


@app.command(cls=FlagCommand)
@reads_data(without=("missing_target",))
def predict(
    model: ModelArg,
    data: DataArg,
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="CSV, Parquet or JSON lines (.jsonl) by suffix; '-': stdout."
        ),
    ] = STDIN,
    proba: Annotated[
        bool, typer.Option("--proba", help="Add a probability column per class.")
    ] = False,
    keep: Annotated[
        list[str] | None,
        typer.Option(
            "--keep",
            "-k",
            help="Columns of the data to copy to the output (an id, the true label): "
            "names or globs, comma-separated or repeated.",
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option("--target", "-t", help="A label column to leave out (.npy: its index)."),
    ] = None,
    *,
    reading: Reading,
) -> None:
    """Predict the class of every row: one output row per input row."""
    import pandas as pd

    check_choice("--incomplete", reading.incomplete, INCOMPLETE)
    refuse_overwriting(output, {Path(model): "model file", **input_files(data, "input data")})
    est = load_model(model)
    kept = split_names(keep)
    if reading.spark is not None:
        no_stream_with_spark(reading)
        label = target if model_features(est) is None else None
        job = PredictJob(
            est, cast(Any, data), output, proba, kept, label, reading.sep, reading.incomplete
        )
        predict_on_spark(job, data, reading)
        return
    source = data_source(data)
    refuse_overwriting(output, input_files(source, "input data"))  # a folder's, a pattern's
    if kept and not is_tabular(source):
        raise UsageError(f"--keep copies columns of a table (CSV or Parquet); {source} has none.")
    # a model with column names takes its own columns; the label is not needed
    label = target if model_features(est) is None else None
    job = PredictJob(est, source, output, proba, kept, label, reading.sep, reading.incomplete)
    if reading.scheduler is not None:
        no_stream_with_scheduler(reading.stream, reading.block_rows)
        predict_on_cluster(job, reading.scheduler)
        return
    if should_stream(source, reading.stream, reading.block_rows):
        predict_streamed(job, reading.block_rows)
        return
    ds = features_for(
        est, source, label, reading.split, need_target=False, sep=parse_sep(reading.sep)
    )
    check_rows_fit(output, ds.n_rows)  # an Excel sheet's limit, before predicting
    table = pd.DataFrame(index=pd.RangeIndex(ds.n_rows))
    if kept:
        for col in match_columns(kept, [str(c) for c in ds.frame.columns], "--keep"):
            table[col] = ds.frame[col].to_numpy()
    clash = [c for c in ("prediction",) if c in table.columns]
    if clash:
        raise UsageError("--keep prediction: the output has its own 'prediction' column.")
    scorer = est if reading.incomplete == "error" else gapped(est)
    with busy(f"predicting {ds.n_rows:,} rows"), named_values(ds, est, "predict"):
        table["prediction"] = label_column(scorer.predict(ds.X), est.classes_)
        if proba:
            P = scorer.predict_proba(ds.X)
            for k, c in enumerate(est.classes_):
                table[f"proba_{c}"] = P[:, k]
    if reading.incomplete == "empty":
        note_unscored(est, ds, "their prediction cells are empty")
    write_table(table, output)
    if output != STDIN:
        say(f"{ds.n_rows:,} predictions -> {output}")
