"""``bayesrule evaluate``: the figures, printed and written as a report folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ._cluster import evaluate_on_cluster
from ._common import (
    display_name,
    figure,
    figure_bytes,
    labelled_features,
    load_model,
    model_and_data,
    named_values,
    new_folder,
    no_stream_with_scheduler,
    note_unscored,
)
from ._data import UsageError, write_files
from ._errors import FlagCommand
from ._feedback import busy
from ._incomplete import CHOICES as INCOMPLETE
from ._incomplete import gapped
from ._metrics import metrics, plain
from ._options import DataArg, ModelArg, Reading, TargetOpt, check_choice, reads_data
from ._scale import should_stream
from ._shell import app, out, say
from ._spark import evaluate_on_spark, no_stream_with_spark, spark_target
from ._streamed import evaluate_streamed


@app.command(cls=FlagCommand)
@reads_data()
def evaluate(
    model: ModelArg,
    data: DataArg,
    target: TargetOpt = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Report folder: metrics.json, CSV and PNG."),
    ] = None,
    *,
    reading: Reading,
) -> None:
    """Accuracy, log-loss, per-class precision, recall and F1, and the confusion matrix."""
    check_choice("--missing-target", reading.missing_target, ("drop", "error"))
    check_choice("--incomplete", reading.incomplete, INCOMPLETE)
    ds: Any
    if reading.spark is not None:
        no_stream_with_spark(reading)
        est = load_model(model)
        ds, report = evaluate_on_spark(est, data, spark_target(model, target), reading)
    else:
        est, source, target = model_and_data(model, data, target)
        ds, report = _evaluate_here(est, source, target, reading)
    _print_report(est, ds, report)
    if output is not None:
        _write_report(output, model, est, ds, report)
        say(
            f"report -> {output}/ (metrics.json, per_class.csv, confusion_matrix.csv, "
            "confusion_counts.csv, confusion_matrix.png)"
        )


def _evaluate_here(
    est: Any, source: Any, target: str | None, reading: Reading
) -> tuple[Any, dict[str, Any]]:
    """The report of ``evaluate`` on a Dask cluster, streamed, or read at once."""
    ds: Any
    if reading.scheduler is not None:
        no_stream_with_scheduler(reading.stream, reading.block_rows)
        ds, report = evaluate_on_cluster(
            est,
            source,
            target,
            reading.sep,
            reading.missing_target,
            reading.scheduler,
            reading.incomplete,
        )
    elif should_stream(source, reading.stream, reading.block_rows):
        ds, report = evaluate_streamed(
            est,
            source,
            target,
            reading.sep,
            reading.missing_target,
            reading.block_rows,
            reading.incomplete,
        )
    else:
        ds = labelled_features(
            est, source, target, reading.split, reading.sep, reading.missing_target
        )
        assert ds.y is not None
        scorer = est if reading.incomplete == "error" else gapped(est)
        with busy(f"predicting {ds.n_rows:,} rows"), named_values(ds, est, "evaluate"):
            log_proba = scorer.predict_log_proba(ds.X)
        report = metrics(est, ds.y, log_proba, source)
        if report["unscored"]:
            note_unscored(est, ds, "they are left out of every figure")
    return ds, report


def _print_report(est: Any, ds: Any, m: dict[str, Any]) -> None:
    labels = m["labels"]
    loss = "n/a" if m["log_loss"] is None else f"{m['log_loss']:.4f}"
    rows = f"{ds.n_rows:,} rows"
    if m["unscored"]:
        rows = f"{m['rows']:,} of {ds.n_rows:,} rows; {m['unscored']:,} incomplete left out"
    out.print(
        f"{type(est).__name__} on {display_name(ds.source)}: accuracy {m['accuracy']:.2%}, "
        f"log-loss {loss} ({rows})",
        soft_wrap=True,
    )
    summary = Table(title="Per class")
    for col in ("class", "precision", "recall", "F1", "support"):
        summary.add_column(col, justify="right")
    for k, c in enumerate(labels):
        summary.add_row(
            str(c),
            f"{m['precision'][k]:.3f}",
            f"{m['recall'][k]:.3f}",
            f"{m['f1'][k]:.3f}",
            f"{int(m['support'][k]):,}",
        )
    total = f"{int(m['support'].sum()):,}"
    summary.add_section()
    summary.add_row("macro avg", *(f"{v:.3f}" for v in m["macro"]), total)
    summary.add_row("weighted avg", *(f"{v:.3f}" for v in m["weighted"]), total)
    out.print(summary)
    cm = Table(title="Confusion matrix: count (share of the true class)")
    cm.add_column("true \\ pred", justify="right")
    for c in labels:
        cm.add_column(str(c), justify="right")
    for i, c in enumerate(labels):
        cells = []
        for j in range(labels.size):
            n, v = int(m["counts"][i, j]), m["normalised"][i, j]
            text = f"{n:,} ({v:.2f})" if n else "."
            cells.append(f"[bold]{text}[/bold]" if i == j else text)
        cm.add_row(str(c), *cells)
    out.print(cm)


def _write_report(output: Path, model: Path, est: Any, ds: Any, m: dict[str, Any]) -> None:
    """``evaluate -o DIR``: the files, all rendered before any is written."""
    import pandas as pd

    from ..plotting import ConfusionMatrixDisplay

    if output.exists() and not output.is_dir():
        raise UsageError(f"{output}: exists and is not a directory; -o takes a report folder.")
    labels = m["labels"]
    per_class = [
        {
            "class": plain(c),
            "precision": float(m["precision"][k]),
            "recall": float(m["recall"][k]),
            "f1": float(m["f1"][k]),
            "support": int(m["support"][k]),
        }
        for k, c in enumerate(labels)
    ]
    metrics = {
        "model": str(model),
        "estimator": type(est).__name__,
        "data": ds.source,
        "target": ds.target,
        "n_samples": ds.n_rows,
        "n_samples_scored": m["rows"],
        "n_samples_not_scored": m["unscored"],
        "accuracy": m["accuracy"],
        "log_loss": m["log_loss"],
        "log_loss_unclipped": m["log_loss_unclipped"],
        "log_loss_rows": m["log_loss_rows"],
        "macro_avg": dict(zip(("precision", "recall", "f1"), m["macro"], strict=True)),
        "weighted_avg": dict(zip(("precision", "recall", "f1"), m["weighted"], strict=True)),
        "per_class": per_class,
        "labels_not_in_model": m["unseen"],
        "confusion_matrix": {
            "labels": [plain(c) for c in labels],
            "counts": m["counts"].tolist(),
            "normalised": m["normalised"].tolist(),
        },
    }
    names = [str(c) for c in labels]

    def square(values: Any) -> bytes:
        frame = pd.DataFrame(values, index=names, columns=names)
        return frame.rename_axis("true \\ predicted").to_csv().encode()

    fig = figure((6.4, 5.6))
    disp = ConfusionMatrixDisplay(
        counts=m["counts"], labels=labels, title=f"Confusion matrix of {type(est).__name__}"
    )
    disp.plot(ax=fig.subplots())
    picture = figure_bytes(fig, output / "confusion_matrix.png")
    with new_folder(output):
        write_files(
            {
                output / "metrics.json": (json.dumps(metrics, indent=2) + "\n").encode(),
                output / "per_class.csv": pd.DataFrame(per_class).to_csv(index=False).encode(),
                output / "confusion_matrix.csv": square(m["normalised"]),
                output / "confusion_counts.csv": square(m["counts"]),
                output / "confusion_matrix.png": picture,
            }
        )
