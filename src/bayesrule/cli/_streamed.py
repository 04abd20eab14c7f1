"""``--stream``: fit, predict and evaluate block by block in bounded memory."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._common import (
    PredictJob,
    is_table_model,
    method_names,
    model_features,
    source_name,
    streamable_model,
)
from ._data import (
    STDIN,
    Columns,
    Dataset,
    UsageError,
    block_writer,
    match_columns,
    na_values_for,
    write_files,
)
from ._dataset import _labels
from ._errors import notes
from ._feedback import busy, interactive
from ._incomplete import gapped
from ._metrics import Tally
from ._options import parse_sep
from ._params import with_kinds
from ._scale import head_frame, plan_columns
from ._select import missing_target_error, missing_target_note
from ._shell import say
from ._sources import Data, stream_source


def _reading(block_rows: int | None) -> dict[str, Any]:
    """How every streamed command reads its blocks: their size, a progress bar, the NA markers."""
    return {"block_rows": block_rows, "progress": interactive(), "na_values": na_values_for()}


def fit_streamed(
    est: Any,
    data: Data,
    target: str | None,
    columns: Columns,
    sep: str | None,
    kinds: list[str] | None,
    block_rows: int | None,
    missing_target: str,
) -> Dataset:
    """``fit --stream``: the columns chosen on the first rows, the fit by ``fit_stream``."""
    from ..backends.stream import fit_stream

    streamable_model(est)
    with busy(f"reading the head of {source_name(data)}"):
        plan = plan_columns(head_frame(data, parse_sep(sep)), str(data), target, True, columns)
    notes.extend(plan.notes)
    cols = plan.feature_names or []
    with_kinds(est, kinds or [], cols)
    # MixedNB's kernel columns keep every value, as in memory (fit_stream refuses to bin them)
    max_values = None if is_table_model(est) else 2048
    try:
        fit_stream(
            est,
            stream_source(data),
            target=target,
            features=cols,
            block_rows=block_rows,
            max_values=max_values,
            progress=interactive(),
            na_values=na_values_for(),
        )
    except ValueError as exc:
        cells = _cells_refusal(str(exc), est)
        if cells is not None:
            raise UsageError(cells) from None
        if missing_target != "drop" or f"target column {target!r} has a missing value" not in str(
            exc
        ):
            raise
        # rows without a label: read again, leaving them out as the in-memory path does
        dropped = [0]

        def blocks() -> Iterator[tuple[Any, Any]]:
            dropped[0] = 0
            return _labelled_blocks(data, target, cols, block_rows, columns.numeric, dropped)

        # EM (mda) reads the rows once per pass: it takes a function giving them afresh
        source: Any = blocks if est.input_spec().multi_pass else blocks()
        fit_stream(est, source, max_values=max_values, progress=interactive())
        k = dropped[0]
        notes.append(missing_target_note(k, target))
    plan.X = plan.frame = None  # the rows were never all in memory
    return plan


#: a block's refusal of a NaN or infinite cell, as the stream reader locates it
_CELL = re.compile(
    r"^(?P<file>.*?), rows \d+-\d+: Input X contains (?P<kind>NaN|infinity) at row (?P<row>\d+) "
    r"\(row \d+ of the block\), column (?P<column>'.*?'|\d+); this model needs finite values"
)


def _cells_refusal(text: str, est: Any) -> str | None:
    """A streamed fit's refusal of a missing or infinite cell, said as the in-memory fit says it.

    The reader names the block's first such cell (the whole file is not
    counted); the remedies are those of the in-memory message.
    """
    from ._errors import models_taking_nan

    found = _CELL.match(text)
    if found is None:
        return None
    name = type(est).__name__
    what = "missing" if found["kind"] == "NaN" else "infinite"
    remedies = ["drop or impute them", "leave the columns out with --drop"]
    others = models_taking_nan(exclude=type(est)) if found["kind"] == "NaN" else []
    if others:
        remedies.append(f"use a model that treats NaN as missing ({', '.join(others)})")
    return (
        f"{found['file']}: {what} cells in {found['column']} (first in data row "
        f"{int(found['row']):,}): {name} cannot take them; {', or '.join(remedies)}."
    )


def _labelled_blocks(
    data: Data,
    target: str | None,
    cols: list[str],
    block_rows: int | None,
    numeric: bool,
    dropped: list[int],
) -> Iterator[tuple[Any, Any]]:
    """``(X, y)`` blocks of the rows that have a label; ``dropped[0]`` counts the others."""
    from ..backends.stream import read_blocks

    assert target is not None
    for block in read_blocks(
        stream_source(data),
        features=[*cols, target],
        block_rows=block_rows,
        frame=True,
        na_values=na_values_for(),
    ):
        frame = block[0]
        missing = frame[target].isna().to_numpy()
        dropped[0] += int(missing.sum())
        frame = frame.loc[~missing]
        if len(frame):
            X = frame[cols].astype(float) if numeric else frame[cols]
            yield X, _labels(frame[target].to_numpy(), f"{data}: the target column {target!r}")


def stream_plan(est: Any, data: Data, target: str | None, sep: str | None) -> tuple[Any, list[str]]:
    """The first rows of a streamed table, and the model's feature columns in it."""
    head = head_frame(data, parse_sep(sep))
    names = model_features(est)
    columns = Columns(model=names, numeric=not is_table_model(est))
    plan = plan_columns(head, str(data), target, False, columns)
    cols = plan.feature_names or []
    if len(cols) != est.n_features_in_:
        raise UsageError(
            f"{data}: the data have {len(cols)} feature columns, but the model was fitted "
            f"with {est.n_features_in_}."
        )
    return head, cols


def predict_streamed(job: PredictJob, block_rows: int | None) -> None:
    """``predict --stream``: blocks from ``iter_predict`` written one after the other."""
    est, data, output, proba = job.est, job.data, job.output, job.proba
    kept, label, sep, incomplete = job.kept, job.label, job.sep, job.incomplete
    from ..backends.stream import iter_predict

    head, cols = stream_plan(est, data, label, sep)
    keep = match_columns(kept, [str(c) for c in head.columns], "--keep") if kept else None
    if keep and "prediction" in keep:
        raise UsageError("--keep prediction: the output has its own 'prediction' column.")
    blocks = iter_predict(
        est if incomplete == "error" else gapped(est),
        stream_source(data),
        method=method_names(proba),
        keep=keep,
        features=cols,
        target=label,
        **_reading(block_rows),
    )
    n = [0, 0]  # rows, rows left empty

    def counted() -> Iterator[Any]:
        for block in blocks:
            n[0] += len(block)
            n[1] += int(block["prediction"].isna().sum())
            yield block

    if output == STDIN:
        import sys

        for i, block in enumerate(counted()):
            block.to_csv(sys.stdout, index=False, header=i == 0)
        sys.stdout.flush()
    else:
        write_files({output: block_writer(counted(), output)})
        say(f"{n[0]:,} predictions -> {output}")
    if n[1]:
        notes.append(
            f"{n[1]:,} of {n[0]:,} rows hold missing or infinite cells that "
            f"{type(est).__name__} cannot take: their prediction cells are empty "
            "(--incomplete error refuses them)."
        )


def evaluate_streamed(
    est: Any,
    data: Data,
    target: str | None,
    sep: str | None,
    missing_target: str,
    block_rows: int | None,
    incomplete: str = "empty",
) -> tuple[Any, dict[str, Any]]:
    """``evaluate --stream``: the counts and the log-loss summed block by block."""
    from types import SimpleNamespace

    from ..backends.stream import iter_predict

    assert target is not None  # tables always have one (target_for)
    _, cols = stream_plan(est, data, target, sep)
    tally = Tally(est, data)
    names = [f"log_proba_{c}" for c in est.classes_]
    dropped = 0
    blocks = iter_predict(
        est if incomplete == "error" else gapped(est),
        stream_source(data),
        method="predict_log_proba",
        keep=[target],
        features=cols,
        target=None,
        **_reading(block_rows),
    )
    for block in blocks:
        missing = block[target].isna().to_numpy()
        if missing.any():
            if missing_target == "error":
                row = tally.rows + tally.unscored + dropped + int(np.flatnonzero(missing)[0]) + 1
                raise missing_target_error(str(data), target, f"data row {row}", "such rows")
            dropped += int(missing.sum())
            block = block.loc[~missing]
        if len(block):
            y = _labels(block[target].to_numpy(), f"{data}: the target column {target!r}")
            tally.add(y, block[names].to_numpy())
    if dropped:
        notes.append(missing_target_note(dropped, target))
    if tally.unscored:
        notes.append(
            f"{tally.unscored:,} rows hold missing or infinite cells that {type(est).__name__} "
            "cannot take: they are left out of every figure (--incomplete error refuses them)."
        )
    if tally.rows == 0 and tally.unscored == 0:
        raise UsageError(f"{data}: no row with a label to evaluate.")
    info = SimpleNamespace(source=str(data), n_rows=tally.rows + tally.unscored, target=target)
    return info, tally.metrics()
