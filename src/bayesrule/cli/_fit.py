"""``bayesrule fit``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from ..estimators.registry import available, short_name
from ..io import ModelFileError, save
from ._cluster import fit_on_cluster
from ._common import (
    fit_with_progress,
    is_table_model,
    names_list,
    no_stream_with_scheduler,
    read,
    source_name,
)
from ._data import Columns, UsageError, split_names
from ._errors import FlagCommand
from ._options import ColumnsOpt, DataArg, DropOpt, Reading, check_choice, parse_sep, reads_data
from ._params import build_estimator, priors_to_labels, with_kinds
from ._scale import should_stream
from ._shell import app, say
from ._sources import data_source
from ._spark import fit_on_spark, no_stream_with_spark, spark_name
from ._streamed import fit_streamed
from ._write import input_files, refuse_overwriting


@app.command(cls=FlagCommand)
@reads_data(without=("incomplete",), split="train")
def fit(
    data: DataArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="Model file to write.")],
    target: Annotated[
        str | None,
        typer.Option("--target", "-t", help="Label column (.npy: column index; .npz: array name)."),
    ] = None,
    model: Annotated[
        str, typer.Option("--model", "-m", help=f"One of: {', '.join(available())}.")
    ] = "lda",
    settings: Annotated[
        list[str] | None, typer.Option("--set", help="A parameter, name=value (repeatable).")
    ] = None,
    features: ColumnsOpt = None,
    drop: DropOpt = None,
    kinds: Annotated[
        list[str] | None,
        typer.Option(
            "--kind",
            help="For --model mixed: a column's model, column=kind (gaussian, kernel, "
            "bernoulli, categorical, poisson); repeatable.",
        ),
    ] = None,
    *,
    reading: Reading,
) -> None:
    """Fit a model to labelled data and write it to a model file."""
    check_choice("--missing-target", reading.missing_target, ("drop", "error"))
    refuse_overwriting(output, input_files(data, "training data"))
    source = None if reading.spark is not None else data_source(data)
    if source is not None:  # the files of a folder or a pattern
        refuse_overwriting(output, input_files(source, "training data"))
    est = build_estimator(model, settings or [])
    if kinds and not is_table_model(est):
        with_kinds(est, kinds, [])  # the error, before the data are read
    if output.is_dir():
        raise UsageError(f"{output}: is a directory; give the model file to write.")
    columns = Columns(
        features=split_names(features) or None,
        drop=split_names(drop) or None,
        numeric=not is_table_model(est),
    )
    t0 = time.perf_counter()
    if reading.spark is not None:
        no_stream_with_spark(reading)
        ds = fit_on_spark(est, data, target, columns, reading, kinds)
    elif reading.scheduler is not None:
        no_stream_with_scheduler(reading.stream, reading.block_rows)
        assert source is not None
        ds = fit_on_cluster(
            est,
            source,
            target,
            columns,
            reading.sep,
            reading.missing_target,
            kinds,
            reading.scheduler,
        )
    elif source is not None and should_stream(source, reading.stream, reading.block_rows):
        ds = fit_streamed(
            est,
            source,
            target,
            columns,
            reading.sep,
            kinds,
            reading.block_rows,
            reading.missing_target,
        )
    else:
        assert source is not None
        ds = read(
            source,
            target,
            split=reading.split,
            need_target=True,
            columns=columns,
            sep=parse_sep(reading.sep),
            missing_target=reading.missing_target,
        )
        with_kinds(est, kinds or [], ds.feature_names or [])
        priors_to_labels(est, ds.y)
        est = fit_with_progress(est, ds)
    elapsed = time.perf_counter() - t0
    n_rows = ds.n_rows if ds.X is not None else int(round(float(np.sum(est.class_count_))))
    extra: dict[str, Any] = {
        "source": source_name(source) if source is not None else spark_name(data),
        "target": ds.target if ds.target is not None else target,
        "n_rows": n_rows,
    }
    if ds.image_shape is not None:
        extra["image_shape"] = list(ds.image_shape)
    try:
        save(est, output, metadata=extra)  # written in full, then renamed into place
    except ModelFileError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:  # name the model file, not save's temporary file
        raise UsageError(
            f"{output}: cannot write the model file ({exc.strerror or exc})."
        ) from None
    say(
        f"{type(est).__name__} ({short_name(type(est))}) fitted on {n_rows:,} rows x "
        f"{est.n_features_in_} features, {est.classes_.size} classes in {elapsed:.2f} s -> {output}"
    )
    if ds.feature_names is not None:
        kinds_ = getattr(est, "kinds_", None)
        if kinds_ is not None and len(kinds_) == len(ds.feature_names):
            described = [f"{c} ({k})" for c, k in zip(ds.feature_names, kinds_, strict=True)]
        else:
            described = list(ds.feature_names)
        say(f"features: {names_list(described)}")
        if kinds_ is not None and hasattr(est, "kinds_line"):
            # the kinds were inferred from the data: say so, and where the reasons are
            say(
                est.kinds_line().replace("describe() says why", f"bayesrule info {output} says why")
            )
