"""The typer application behind the ``bayesrule`` command."""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from numpy.typing import NDArray
from rich.console import Console
from rich.table import Table

from ..estimators.registry import available, get_estimator, short_name
from ..io import ModelFileError, load, read_metadata, save
from ._data import (
    STDIN,
    Columns,
    Content,
    Dataset,
    UsageError,
    block_writer,
    match_columns,
    na_values_for,
    read_data,
    split_names,
    table_writer,
    use_read_options,
    write_files,
    write_table,
)
from ._errors import BoundaryGroup, FlagCommand, clean, notes, state
from ._feedback import busy, interactive
from ._incomplete import CHOICES as INCOMPLETE
from ._incomplete import describe as describe_cells
from ._incomplete import gapped, scorable, unscored
from ._metrics import Tally, metrics, plain
from ._scale import connect, dask_select, dask_table, head_frame, plan_columns, should_stream
from ._sources import Data, FileSet, data_source, is_tabular, read_dataset, stream_source

app = typer.Typer(
    name="bayesrule",
    # every subcommand runs inside one error boundary (see _errors.py)
    cls=BoundaryGroup,
    help="Generative classifiers fitted from mergeable sufficient statistics.",
    no_args_is_help=True,
    add_completion=False,
    # --debug shows plain Python tracebacks; rich's boxed ones hide the frames.
    pretty_exceptions_enable=False,
)
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

#: rows x features above which ``fit`` shows a progress bar
_BIG_FIT_VALUES = 4_000_000


def _say(message: str) -> None:
    if not state["quiet"]:
        err.print(message, soft_wrap=True)


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        out.print(f"bayesrule {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            help="Show the full traceback of an error (also after the command, or BAYESRULE_DEBUG=1).",
        ),
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bars or messages.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Fit, apply and inspect bayesrule models from the command line."""
    state["quiet"] = state["quiet"] or quiet  # -q after the command is read by BoundaryGroup
    if debug:  # BoundaryGroup.main has already read it; this option is here for --help
        state["debug"] = True


# ------------------------------------------------------------------ helpers
def _parse_value(text: str) -> Any:
    """A --set value: JSON (numbers, true/false/null, lists), Python's True/False/None, or a string."""
    python = {"True": True, "False": False, "None": None}
    if text in python:
        return python[text]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _build_estimator(model: str, settings: list[str]) -> Any:
    try:
        cls = get_estimator(model)
    except ValueError as exc:
        raise UsageError(f"--model: {exc}") from None
    est = cls()
    known = est.get_params(deep=False)
    params: dict[str, Any] = {}
    for item in settings:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--set {item!r}: expected name=value.")
        if name not in known:
            raise UsageError(
                f"--set {name}: {cls.__name__} has no parameter {name!r}; its parameters are "
                f"{', '.join(sorted(known))}."
            )
        params[name] = _parse_value(value)
    est.set_params(**params)
    try:
        est._validate_params()
    except ValueError as exc:
        raise UsageError(f"--set: {clean(str(exc))}") from None
    return est


def _priors_to_labels(est: Any, y: Any) -> None:
    """``--set 'priors={"1": 0.3, ...}'`` on numeric labels: JSON keys are text, so each
    key is matched to the label it spells. A key that spells no label is left for the
    estimator to refuse, naming it."""
    for name in ("priors", "class_prior"):
        value = est.get_params(deep=False).get(name)
        if not isinstance(value, dict) or y is None:
            continue
        labels = {str(v): v for v in np.unique(np.asarray(y)).tolist()}
        if all(isinstance(v, str) for v in labels.values()):
            continue
        est.set_params(**{name: {labels.get(str(k), k): p for k, p in value.items()}})


def _load_model(path: Path) -> Any:
    if not path.exists():
        raise UsageError(f"{path}: no such model file.")
    return load(path)


def _is_table_model(est: Any) -> bool:
    """Whether the estimator takes a table as it is (MixedNB: text, categories, booleans)."""
    return "columns" in est.get_params(deep=False)


def _model_features(est: Any) -> list[str] | None:
    names = getattr(est, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]


def _stored_target(model_path: Path) -> str | None:
    """The label column the model was fitted with, as `bayesrule fit` keeps it in the file."""
    target = read_metadata(model_path).get("extra", {}).get("target")
    return target if isinstance(target, str) and target else None


def _source_name(data: Data) -> str:
    return "standard input" if data == STDIN else data.name


def _read(data: Data, target: str | None, **kwargs: Any) -> Dataset:
    """Read the data with a spinner on a terminal, and say what the reader decided."""
    if isinstance(data, FileSet):
        with busy(f"reading {data.name} ({data.describe()})"):
            ds = read_dataset(data, target, **kwargs)
    else:
        with busy(f"reading {_source_name(data)}"):
            ds = read_data(data, target, **kwargs)
    notes.extend(ds.notes)  # said once the command has succeeded
    return ds


def _features_for(
    model: Any,
    data: Data,
    target: str | None,
    split: str,
    need_target: bool,
    sep: str | None = None,
    missing_target: str = "drop",
) -> Dataset:
    """The model's features (by name, in the model's order) and, if asked, labels of the data."""
    names = _model_features(model)
    columns = Columns(model=names, numeric=not _is_table_model(model))
    ds = _read(
        data,
        target,
        split=split,
        need_target=need_target,
        columns=columns,
        sep=sep,
        missing_target=missing_target,
    )
    if ds.n_features != model.n_features_in_:
        raise UsageError(
            f"{data}: the data have {ds.n_features} feature columns, but the model was fitted "
            f"with {model.n_features_in_}."
        )
    return ds


def _display_name(source: str) -> str:
    return source if source == "standard input" else Path(source).name


def _names_list(names: list[str], n: int = 12) -> str:
    shown = ", ".join(names[:n])
    return shown + (f", ... ({len(names) - n} more)" if len(names) > n else "")


def _figure(figsize: tuple[float, float]) -> Any:
    from ..plotting import require_matplotlib

    require_matplotlib()
    # A Figure with its own canvas needs no GUI backend and no global pyplot state.
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def _figure_bytes(fig: Any, path: Path) -> bytes:
    """The picture in the format of ``path``'s suffix, rendered in memory (written on success)."""
    buffer = io.BytesIO()
    try:
        # a tight box keeps every label inside the picture, whatever their length
        fig.savefig(
            buffer,
            format=path.suffix.lower().lstrip(".") or "png",
            dpi=110,
            bbox_inches="tight",
            pad_inches=0.15,
        )
    except ValueError as exc:  # an image format matplotlib does not know
        raise UsageError(f"{path}: {clean(str(exc))}") from None
    return buffer.getvalue()


def _image_shape(model_path: Path, n_features: int) -> tuple[int, int] | None:
    from ..plotting import image_shape_for

    shape = read_metadata(model_path).get("extra", {}).get("image_shape")
    if isinstance(shape, list) and len(shape) == 2 and shape[0] * shape[1] == n_features:
        return (int(shape[0]), int(shape[1]))
    return image_shape_for(n_features)


def _fit_with_progress(est: Any, ds: Dataset) -> Any:
    """Fit at once, with a spinner and the time elapsed on a terminal.

    The fit is one call to ``fit``, not a loop of ``partial_fit``: the model is
    then exactly the one the Python API gives, and each ``partial_fit`` would
    derive the parameters again (an eigendecomposition), which costs more than
    the pass over the data.
    """
    with busy(f"fitting {type(est).__name__} on {ds.n_rows:,} rows"), _named_values(ds, est):
        return est.fit(ds.X, ds.y)


def _no_stream_with_scheduler(stream: bool | None, block_rows: int | None) -> None:
    if stream or block_rows is not None:
        raise UsageError(
            "--scheduler runs the work on a Dask cluster; --stream and --block-rows read "
            "blocks on this machine: give one or the other."
        )


def _streamable_model(est: Any) -> None:
    from ..discriminant_analysis import RegularizedDiscriminantAnalysisCV

    if isinstance(est, RegularizedDiscriminantAnalysisCV):
        raise UsageError(
            "--model rdacv cannot be fitted block by block or on a cluster (its held-out "
            "scores need every row of a split at once); choose alpha and gamma on a sample "
            "and fit --model rda, or read the data at once with --no-stream."
        )


def _fit_streamed(
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

    _streamable_model(est)
    with busy(f"reading the head of {_source_name(data)}"):
        plan = plan_columns(head_frame(data, _parse_sep(sep)), str(data), target, True, columns)
    notes.extend(plan.notes)
    cols = plan.feature_names or []
    _with_kinds(est, kinds or [], cols)
    # MixedNB's kernel columns keep every value, as in memory (fit_stream refuses to bin them)
    max_values = None if _is_table_model(est) else 2048
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
        source: Any = blocks if getattr(est, "_multi_pass", False) else blocks()
        fit_stream(est, source, max_values=max_values, progress=interactive())
        k = dropped[0]
        notes.append(
            f"left out {k:,} row{'s' if k != 1 else ''} whose target {target!r} is missing."
        )
    plan.X = plan.frame = None  # the rows were never all in memory
    return plan


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
    from ._data import _labels

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


def _fit_on_cluster(
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
    _streamable_model(est)
    with connect(scheduler):
        df = dask_table(data, _parse_sep(sep))
        X, y, plan = dask_select(df, str(data), target, True, columns, missing_target)
        notes.extend(plan.notes)
        _with_kinds(est, kinds or [], plan.feature_names or [])
        with busy(f"fitting {type(est).__name__} on the cluster at {scheduler}"):
            est.fit(X, y)
    plan.X = plan.frame = None
    return plan


@contextlib.contextmanager
def _named_values(ds: Dataset, est: Any, when: str = "fit") -> Iterator[None]:
    """A model's refusal of NaN or infinite cells, said with the columns' names.

    The remedies offered fit the model and the step: a model that already
    treats NaN as missing is never told to use one that does, and only the
    cells it cannot take (infinite ones) are named.
    """
    try:
        yield
    except ValueError as exc:
        text = str(exc)
        about_values = any(w in text for w in ("NaN", "nan", "finite", "infinit"))
        rows = scorable(est, ds.X) if about_values and hasattr(ds.X, "columns") else None
        if rows is None or rows.all():
            raise  # not about the cells, or not a table: the library's own message
        raise UsageError(_cells_message(ds, est, when)) from exc


def _cells_message(ds: Dataset, est: Any, when: str) -> str:
    """What is wrong with the cells (columns, counts, first row) and what can be done."""
    from ._errors import models_taking_nan

    name = type(est).__name__
    remedies = ["drop or impute them", "leave the columns out with --drop"]
    if not getattr(est, "_allow_nan", False):
        others = models_taking_nan(exclude=type(est))
        if others:
            remedies.append(
                f"use a model that treats NaN as missing ({', '.join(others)}), though "
                "infinite values are refused by every model"
            )
    if when == "predict":
        remedies = [
            "without --incomplete error such rows get empty prediction cells",
            "drop or impute them",
        ]
    elif when == "evaluate":
        remedies = [
            "without --incomplete error such rows are left out of the figures",
            "drop or impute them",
        ]
    return (
        f"{ds.source}: {describe_cells(est, ds.X)}: {name} cannot take them; "
        f"{', or '.join(remedies)}."
    )


def _with_kinds(est: Any, kinds: list[str], features: list[str]) -> None:
    """``--kind col=kind`` (names or globs, ``a,b=kind`` for several) added to MixedNB's ``columns``."""
    if not kinds:
        return
    if not _is_table_model(est):
        raise UsageError(
            f"--kind sets the model of a column for --model mixed; {type(est).__name__} "
            "models every column alike."
        )
    current = est.get_params(deep=False)["columns"]
    if isinstance(current, list):
        raise UsageError("--kind cannot be combined with --set columns=[...] (a list of kinds).")
    spec: dict[str, Any] = dict(current or {})
    for item in kinds:
        name, sep, kind = item.partition("=")
        if not sep or not name.strip() or not kind.strip():
            raise UsageError(
                f"--kind {item!r}: expected column=kind, e.g. --kind year=categorical."
            )
        for col in match_columns(split_names([name]), features, "--kind"):
            spec[col] = kind.strip()
    est.set_params(columns=spec)


# ------------------------------------------------------------------ commands
DataArg = Annotated[
    list[Path],
    typer.Argument(
        help="A table (CSV/TSV, also .gz/.bz2/.xz/.zip; Parquet; '-' for standard input), "
        ".npy, .npz, or a directory (or images file) of IDX data; or a table in several "
        "files: a directory of Parquet files (read recursively), a quoted glob "
        "('data/part-*.parquet'), or several CSV or Parquet files, read in that order.",
        show_default=False,
    ),
]
ModelArg = Annotated[Path, typer.Argument(help="A model file written by `bayesrule fit`.")]
SplitOpt = Annotated[str, typer.Option(help="For an IDX directory: 'train' or 'test' files.")]


ColumnsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--features",
        "-f",
        help="Feature columns: names or globs, comma-separated or repeated (default: all).",
    ),
]
DropOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--drop", help="Columns to leave out: names or globs, comma-separated or repeated."
    ),
]
SepOpt = Annotated[
    str | None,
    typer.Option("--sep", help="CSV field separator (default: sniffed; ',' ';' tab '|')."),
]
NaOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--na-values",
        help="Cell texts that mark a missing value besides empty, NA, N/A, n/a, NaN, nan, null, "
        "NULL (e.g. '?'): comma-separated or repeated.",
    ),
]
SheetOpt = Annotated[
    str | None, typer.Option("--sheet", help="The sheet of an Excel file (default: the first).")
]
StreamOpt = Annotated[
    bool | None,
    typer.Option(
        "--stream/--no-stream",
        help="Read CSV/Parquet files block by block, in bounded memory (default: for data "
        "over 1 GiB, or with --block-rows).",
        show_default=False,
    ),
]
BlockRowsOpt = Annotated[
    int | None,
    typer.Option(
        "--block-rows", min=1, help="Rows per streamed block (implies --stream; default: ~32 MiB)."
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="Run on a Dask cluster: its scheduler's address (tcp://host:8786), or 'local' "
        "for a cluster of processes on this machine.",
    ),
]
IncompleteOpt = Annotated[
    str,
    typer.Option(
        "--incomplete",
        help="Rows with cells the model cannot take (NaN for LDA/QDA/RDA/MDA, infinity for "
        "any): 'empty' (empty prediction cells, or left out of evaluate, with a note) or "
        "'error'.",
    ),
]
MissingOpt = Annotated[
    str,
    typer.Option(
        "--missing-target",
        help="Rows whose label is missing: 'drop' (with a note) or 'error'.",
    ),
]


def _check_choice(option: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise UsageError(f"{option} {value}: expected one of {', '.join(choices)}.")
    return value


def _parse_sep(sep: str | None) -> str | None:
    if sep is None:
        return None
    named = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " "}
    sep = named.get(sep.lower(), sep)
    if len(sep) != 1:
        raise UsageError(f"--sep {sep!r}: expected one character (or tab, comma, semicolon).")
    return sep


@app.command(cls=FlagCommand)
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
    sep: SepOpt = None,
    na_values: NaOpt = None,
    sheet: SheetOpt = None,
    missing_target: MissingOpt = "drop",
    split: SplitOpt = "train",
    stream: StreamOpt = None,
    block_rows: BlockRowsOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Fit a model to labelled data and write it to a model file."""
    use_read_options(na_values, sheet)
    _check_choice("--missing-target", missing_target, ("drop", "error"))
    source = data_source(data)
    est = _build_estimator(model, settings or [])
    if kinds and not _is_table_model(est):
        _with_kinds(est, kinds, [])  # the error, before the data are read
    if output.is_dir():
        raise UsageError(f"{output}: is a directory; give the model file to write.")
    columns = Columns(
        features=split_names(features) or None,
        drop=split_names(drop) or None,
        numeric=not _is_table_model(est),
    )
    t0 = time.perf_counter()
    if scheduler is not None:
        _no_stream_with_scheduler(stream, block_rows)
        ds = _fit_on_cluster(est, source, target, columns, sep, missing_target, kinds, scheduler)
    elif should_stream(source, stream, block_rows):
        ds = _fit_streamed(est, source, target, columns, sep, kinds, block_rows, missing_target)
    else:
        ds = _read(
            source,
            target,
            split=split,
            need_target=True,
            columns=columns,
            sep=_parse_sep(sep),
            missing_target=missing_target,
        )
        _with_kinds(est, kinds or [], ds.feature_names or [])
        _priors_to_labels(est, ds.y)
        est = _fit_with_progress(est, ds)
    elapsed = time.perf_counter() - t0
    n_rows = ds.n_rows if ds.X is not None else int(round(float(np.sum(est.class_count_))))
    extra: dict[str, Any] = {
        "source": _source_name(source),
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
    _say(
        f"{type(est).__name__} ({short_name(type(est))}) fitted on {n_rows:,} rows x "
        f"{est.n_features_in_} features, {est.classes_.size} classes in {elapsed:.2f} s -> {output}"
    )
    if ds.feature_names is not None:
        kinds_ = getattr(est, "kinds_", None)
        if kinds_ is not None and len(kinds_) == len(ds.feature_names):
            described = [f"{c} ({k})" for c, k in zip(ds.feature_names, kinds_, strict=True)]
        else:
            described = list(ds.feature_names)
        _say(f"features: {_names_list(described)}")
        if kinds_ is not None and hasattr(est, "kinds_line"):
            # the kinds were inferred from the data: say so, and where the reasons are
            _say(
                est.kinds_line().replace("describe() says why", f"bayesrule info {output} says why")
            )


@app.command(cls=FlagCommand)
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
    sep: SepOpt = None,
    na_values: NaOpt = None,
    sheet: SheetOpt = None,
    split: SplitOpt = "test",
    stream: StreamOpt = None,
    block_rows: BlockRowsOpt = None,
    scheduler: SchedulerOpt = None,
    incomplete: IncompleteOpt = "empty",
) -> None:
    """Predict the class of every row: one output row per input row."""
    use_read_options(na_values, sheet)
    import pandas as pd

    _check_choice("--incomplete", incomplete, INCOMPLETE)
    est = _load_model(model)
    source = data_source(data)
    kept = split_names(keep)
    if kept and not is_tabular(source):
        raise UsageError(f"--keep copies columns of a table (CSV or Parquet); {source} has none.")
    # a model with column names takes its own columns; the label is not needed
    label = target if _model_features(est) is None else None
    if scheduler is not None:
        _no_stream_with_scheduler(stream, block_rows)
        _predict_on_cluster(est, source, output, proba, kept, label, sep, scheduler, incomplete)
        return
    if should_stream(source, stream, block_rows):
        _predict_streamed(est, source, output, proba, kept, label, sep, block_rows, incomplete)
        return
    ds = _features_for(est, source, label, split, need_target=False, sep=_parse_sep(sep))
    table = pd.DataFrame(index=pd.RangeIndex(ds.n_rows))
    if kept:
        for col in match_columns(kept, [str(c) for c in ds.frame.columns], "--keep"):
            table[col] = ds.frame[col].to_numpy()
    clash = [c for c in ("prediction",) if c in table.columns]
    if clash:
        raise UsageError("--keep prediction: the output has its own 'prediction' column.")
    scorer = est if incomplete == "error" else gapped(est)
    with busy(f"predicting {ds.n_rows:,} rows"), _named_values(ds, est, "predict"):
        table["prediction"] = _label_column(scorer.predict(ds.X), est.classes_)
        if proba:
            P = scorer.predict_proba(ds.X)
            for k, c in enumerate(est.classes_):
                table[f"proba_{c}"] = P[:, k]
    if incomplete == "empty":
        _note_unscored(est, ds, "their prediction cells are empty")
    write_table(table, output)
    if output != STDIN:
        _say(f"{ds.n_rows:,} predictions -> {output}")


def _label_column(values: Any, classes: Any) -> Any:
    """Predicted labels with empty cells (None) in the classes' own type (integers stay integers)."""
    import pandas as pd

    values = np.asarray(values)
    if values.dtype.kind != "O" or classes.dtype.kind == "O":
        return values
    nullable = {"i": "Int64", "u": "UInt64", "b": "boolean"}.get(classes.dtype.kind)
    if nullable is not None:
        return pd.array(values, dtype=nullable)
    return pd.array(values, dtype="string") if classes.dtype.kind == "U" else values


def _note_unscored(est: Any, ds: Dataset, what: str) -> None:
    rows = scorable(est, ds.X)
    k = int(rows.size - rows.sum())
    if k:
        notes.append(
            f"{k:,} of {rows.size:,} rows hold {describe_cells(est, ds.X)}, which "
            f"{type(est).__name__} cannot take: {what} (--incomplete error refuses them)."
        )


def _methods(proba: bool) -> list[str]:
    return ["predict", "predict_proba"] if proba else ["predict"]


def _stream_plan(
    est: Any, data: Data, target: str | None, sep: str | None
) -> tuple[Any, list[str]]:
    """The first rows of a streamed table, and the model's feature columns in it."""
    head = head_frame(data, _parse_sep(sep))
    names = _model_features(est)
    columns = Columns(model=names, numeric=not _is_table_model(est))
    plan = plan_columns(head, str(data), target, False, columns)
    cols = plan.feature_names or []
    if len(cols) != est.n_features_in_:
        raise UsageError(
            f"{data}: the data have {len(cols)} feature columns, but the model was fitted "
            f"with {est.n_features_in_}."
        )
    return head, cols


def _predict_streamed(
    est: Any,
    data: Data,
    output: Path,
    proba: bool,
    kept: list[str],
    label: str | None,
    sep: str | None,
    block_rows: int | None,
    incomplete: str = "empty",
) -> None:
    """``predict --stream``: blocks from ``iter_predict`` written one after the other."""
    from ..backends.stream import iter_predict

    head, cols = _stream_plan(est, data, label, sep)
    keep = match_columns(kept, [str(c) for c in head.columns], "--keep") if kept else None
    if keep and "prediction" in keep:
        raise UsageError("--keep prediction: the output has its own 'prediction' column.")
    blocks = iter_predict(
        est if incomplete == "error" else gapped(est),
        stream_source(data),
        method=_methods(proba),
        keep=keep,
        features=cols,
        target=label,
        block_rows=block_rows,
        progress=interactive(),
        na_values=na_values_for(),
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
        _say(f"{n[0]:,} predictions -> {output}")
    if n[1]:
        notes.append(
            f"{n[1]:,} of {n[0]:,} rows hold missing or infinite cells that "
            f"{type(est).__name__} cannot take: their prediction cells are empty "
            "(--incomplete error refuses them)."
        )


def _compute(*collections: Any) -> tuple[Any, ...]:
    """Dask collections computed in one pass over the data (a frame's columns with arrays)."""
    import warnings

    import dask

    with warnings.catch_warnings():
        # a DataFrame column and the arrays of predictions are different kinds of graphs;
        # computing them together is what is wanted (one read of the file)
        warnings.filterwarnings("ignore", message="Computing mixed collections")
        return tuple(dask.compute(*collections))


def _predict_on_cluster(
    est: Any,
    data: Data,
    output: Path,
    proba: bool,
    kept: list[str],
    label: str | None,
    sep: str | None,
    scheduler: str,
    incomplete: str = "empty",
) -> None:
    """``predict --scheduler``: lazy predictions computed on the cluster, written here."""
    import pandas as pd

    names = _model_features(est)
    columns = Columns(model=names, numeric=not _is_table_model(est))
    with connect(scheduler):
        df = dask_table(data, _parse_sep(sep))
        X, _, plan = dask_select(df, str(data), label, False, columns)
        if plan.n_features != est.n_features_in_:
            raise UsageError(
                f"{data}: the data have {plan.n_features} feature columns, but the model was "
                f"fitted with {est.n_features_in_}."
            )
        keep = match_columns(kept, [str(c) for c in df.columns], "--keep") if kept else []
        if "prediction" in keep:
            raise UsageError("--keep prediction: the output has its own 'prediction' column.")
        lazy = _lazy_results(est, X, _methods(proba), incomplete)
        with busy(f"predicting on the cluster at {scheduler}"):
            kept_frame, *results = _compute(df[keep], *lazy)
    table = pd.DataFrame(index=pd.RangeIndex(len(results[0])))
    for col in keep:
        table[col] = kept_frame[col].to_numpy()
    results = [np.asarray(r) for r in results]
    table["prediction"] = _label_column(results[0], est.classes_)
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
        _say(f"{len(table):,} predictions -> {output}")


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


TargetOpt = Annotated[
    str | None,
    typer.Option("--target", "-t", help="Label column (default: the one the model was fitted on)."),
]


def _target_for(model: Path, target: str | None, data: Data) -> str | None:
    """``--target``, else the label column stored in the model file (tables only)."""
    if target is not None or not is_tabular(data):
        return target
    stored = _stored_target(model)
    if stored is None:
        raise UsageError(
            f"{model}: the model file does not name its label column; give it with --target."
        )
    return stored


@app.command(cls=FlagCommand)
def evaluate(
    model: ModelArg,
    data: DataArg,
    target: TargetOpt = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Report folder: metrics.json, CSV and PNG."),
    ] = None,
    sep: SepOpt = None,
    na_values: NaOpt = None,
    sheet: SheetOpt = None,
    missing_target: MissingOpt = "drop",
    split: SplitOpt = "test",
    stream: StreamOpt = None,
    block_rows: BlockRowsOpt = None,
    scheduler: SchedulerOpt = None,
    incomplete: IncompleteOpt = "empty",
) -> None:
    """Accuracy, log-loss, per-class precision, recall and F1, and the confusion matrix."""
    use_read_options(na_values, sheet)
    _check_choice("--missing-target", missing_target, ("drop", "error"))
    _check_choice("--incomplete", incomplete, INCOMPLETE)
    est = _load_model(model)
    source = data_source(data)
    target = _target_for(model, target, source)
    ds: Any
    if scheduler is not None:
        _no_stream_with_scheduler(stream, block_rows)
        ds, report = _evaluate_on_cluster(
            est, source, target, sep, missing_target, scheduler, incomplete
        )
    elif should_stream(source, stream, block_rows):
        ds, report = _evaluate_streamed(
            est, source, target, sep, missing_target, block_rows, incomplete
        )
    else:
        ds = _features_for(
            est,
            source,
            target,
            split,
            need_target=True,
            sep=_parse_sep(sep),
            missing_target=missing_target,
        )
        assert ds.y is not None
        scorer = est if incomplete == "error" else gapped(est)
        with busy(f"predicting {ds.n_rows:,} rows"), _named_values(ds, est, "evaluate"):
            log_proba = scorer.predict_log_proba(ds.X)
        report = metrics(est, ds.y, log_proba, source)
        if report["unscored"]:
            _note_unscored(est, ds, "they are left out of every figure")
    _print_report(est, ds, report)
    if output is not None:
        _write_report(output, model, est, ds, report)
        _say(
            f"report -> {output}/ (metrics.json, per_class.csv, confusion_matrix.csv, "
            "confusion_counts.csv, confusion_matrix.png)"
        )


def _evaluate_streamed(
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
    from ._data import _labels

    assert target is not None  # tables always have one (_target_for)
    _, cols = _stream_plan(est, data, target, sep)
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
        block_rows=block_rows,
        progress=interactive(),
        na_values=na_values_for(),
    )
    for block in blocks:
        missing = block[target].isna().to_numpy()
        if missing.any():
            if missing_target == "error":
                raise UsageError(
                    f"{data}: the target column {target!r} is missing in data row "
                    f"{tally.rows + tally.unscored + dropped + int(np.flatnonzero(missing)[0]) + 1}; "
                    "--missing-target drop leaves such rows out."
                )
            dropped += int(missing.sum())
            block = block.loc[~missing]
        if len(block):
            y = _labels(block[target].to_numpy(), f"{data}: the target column {target!r}")
            tally.add(y, block[names].to_numpy())
    if dropped:
        notes.append(f"left out {dropped:,} rows whose target {target!r} is missing.")
    if tally.unscored:
        notes.append(
            f"{tally.unscored:,} rows hold missing or infinite cells that {type(est).__name__} "
            "cannot take: they are left out of every figure (--incomplete error refuses them)."
        )
    if tally.rows == 0 and tally.unscored == 0:
        raise UsageError(f"{data}: no row with a label to evaluate.")
    info = SimpleNamespace(source=str(data), n_rows=tally.rows + tally.unscored, target=target)
    return info, tally.metrics()


def _evaluate_on_cluster(
    est: Any,
    data: Data,
    target: str | None,
    sep: str | None,
    missing_target: str,
    scheduler: str,
    incomplete: str = "empty",
) -> tuple[Any, dict[str, Any]]:
    """``evaluate --scheduler``: log-probabilities computed on the cluster, the counts here."""
    from ._data import _labels

    columns = Columns(model=_model_features(est), numeric=not _is_table_model(est))
    with connect(scheduler):
        df = dask_table(data, _parse_sep(sep))
        X, y, plan = dask_select(df, str(data), target, True, columns, missing_target)
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


def _print_report(est: Any, ds: Any, m: dict[str, Any]) -> None:
    labels = m["labels"]
    loss = "n/a" if m["log_loss"] is None else f"{m['log_loss']:.4f}"
    rows = f"{ds.n_rows:,} rows"
    if m["unscored"]:
        rows = f"{m['rows']:,} of {ds.n_rows:,} rows; {m['unscored']:,} incomplete left out"
    out.print(
        f"{type(est).__name__} on {_display_name(ds.source)}: accuracy {m['accuracy']:.2%}, "
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

    fig = _figure((6.4, 5.6))
    disp = ConfusionMatrixDisplay(
        counts=m["counts"], labels=labels, title=f"Confusion matrix of {type(est).__name__}"
    )
    disp.plot(ax=fig.subplots())
    picture = _figure_bytes(fig, output / "confusion_matrix.png")
    with _new_folder(output):
        write_files(
            {
                output / "metrics.json": (json.dumps(metrics, indent=2) + "\n").encode(),
                output / "per_class.csv": pd.DataFrame(per_class).to_csv(index=False).encode(),
                output / "confusion_matrix.csv": square(m["normalised"]),
                output / "confusion_counts.csv": square(m["counts"]),
                output / "confusion_matrix.png": picture,
            }
        )


@contextlib.contextmanager
def _new_folder(path: Path) -> Iterator[None]:
    """Create ``path`` (and missing parents) for the block; remove what was created if it fails."""
    created = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        for p in created:  # innermost first; rmdir removes only what is still empty
            with contextlib.suppress(OSError):
                p.rmdir()
        raise


@app.command(cls=FlagCommand)
def info(
    model: ModelArg,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON instead of a table.")
    ] = False,
) -> None:
    """What a model file holds: estimator, parameters, classes, features, training data."""
    est = _load_model(model)
    summary = _summary(model, est)
    if as_json:
        out.print_json(json.dumps(summary), highlight=False)
        return
    table = Table(
        show_header=False, box=None, pad_edge=False, title=f"{model}", title_justify="left"
    )
    table.add_column(style="bold", justify="right")
    table.add_column(overflow="fold")
    table.add_row("estimator", f"{summary['estimator']} ({summary['short_name']})")
    params = summary["params"]
    table.add_row(
        "parameters", ", ".join(f"{k}={json.dumps(v)}" for k, v in params.items()) or "none"
    )
    if summary["chosen"]:
        table.add_row(
            "chosen", ", ".join(f"{k}={json.dumps(v)}" for k, v in summary["chosen"].items())
        )
    table.add_row("target", str(summary["target"] or "not recorded"))
    table.add_row(
        "classes",
        ", ".join(f"{c['class']} ({c['weight']:g})" for c in summary["classes"]),
    )
    rows = summary["training_rows"]
    table.add_row(
        "training",
        (f"{rows:,} rows" if rows is not None else "rows not recorded")
        + f", total weight {summary['training_weight']:g}"
        + (f", from {summary['source']}" if summary["source"] else ""),
    )
    feats = summary["features"]
    kinds = summary["kinds"]
    if kinds is not None:
        described = [f"{f} ({k})" for f, k in zip(feats, kinds, strict=True)]
    else:
        described = list(feats)
    table.add_row("features", f"{summary['n_features']}: {_names_list(described, 40)}")
    table.add_row(
        "file",
        f"format version {summary['format_version']}, written by bayesrule "
        f"{summary['bayesrule_version']}",
    )
    out.print(table)
    if summary.get("columns") is not None:  # MixedNB: what it made of each column
        out.print()
        out.print(est.describe(), soft_wrap=True, markup=False)


def _summary(path: Path, est: Any) -> dict[str, Any]:
    """The facts ``info`` shows, as plain JSON values."""
    meta = read_metadata(path)
    extra = meta.get("extra", {})
    names = _model_features(est)
    kinds = getattr(est, "kinds_", None)
    params = {k: _jsonable(v) for k, v in est.get_params(deep=False).items()}
    counts = np.asarray(est.class_count_, dtype=float)
    n_rows = extra.get("n_rows")
    return {
        "file": str(path),
        "estimator": type(est).__name__,
        "short_name": short_name(type(est)),
        "params": params,
        "chosen": {
            k: _jsonable(getattr(est, k))
            for k in _CHOSEN
            if isinstance(getattr(est, k, None), (int, float, np.number, str))
        },
        "target": extra.get("target") if isinstance(extra.get("target"), str) else None,
        "classes": [
            {"class": plain(c), "weight": float(w)}
            for c, w in zip(est.classes_, counts, strict=True)
        ],
        "training_rows": int(n_rows) if isinstance(n_rows, int) else None,
        "training_weight": float(counts.sum()),
        "source": extra.get("source"),
        "n_features": int(est.n_features_in_),
        "features": names if names is not None else [f"x{j}" for j in range(est.n_features_in_)],
        "kinds": None if kinds is None else [str(k) for k in kinds],
        "columns": (
            [{k: _jsonable(v) for k, v in row.items()} for row in est.column_summary()]
            if callable(getattr(est, "column_summary", None))
            else None
        ),
        "format_version": meta.get("format_version"),
        "bayesrule_version": meta.get("bayesrule_version"),
    }


#: fitted attributes that are a choice made by the fit (cross-validation, shrinkage)
_CHOSEN = ("alpha_", "gamma_", "ridge_", "reg_param_", "shrinkage_", "bandwidth_")


def _jsonable(value: Any) -> Any:
    """A parameter value as JSON: arrays as lists, NumPy scalars as numbers, others as text."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


@app.command(cls=FlagCommand)
def sample(
    model: ModelArg,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="CSV (or Parquet) file of samples.")
    ],
    per_class: Annotated[
        int | None,
        typer.Option(
            "--per-class", min=1, help="Rows drawn from each class (default 10; an image grid)."
        ),
    ] = None,
    total: Annotated[
        int | None,
        typer.Option(
            "--total",
            min=1,
            help="Rows drawn in all, each class drawn with the model's priors, as Python's "
            "sample(n).",
        ),
    ] = None,
    n: Annotated[
        int | None,
        typer.Option(
            "-n", "--n-samples", min=1, help="Old spelling of --per-class (rows per class)."
        ),
    ] = None,
    class_: Annotated[str | None, typer.Option("--class", help="Only this class.")] = None,
    seed: Annotated[int, typer.Option(min=0, help="Random seed.")] = 0,
    png: Annotated[
        Path | None,
        typer.Option(help="Image grid to write (default: OUT with .png, for image data)."),
    ] = None,
) -> None:
    """Draw new rows from the fitted generative model: --per-class N, or --total N."""
    import warnings

    import pandas as pd

    from ..plotting import SampleGridDisplay, grey_scale

    if n is not None:
        if per_class is not None:
            raise UsageError("-n is the old spelling of --per-class: give one of them.")
        warnings.warn(
            "-n draws N rows from each class; it is spelled --per-class N now (--total N "
            "draws N rows in all, as Python's sample(n)).",
            FutureWarning,
            stacklevel=2,
        )
        per_class = n
    if per_class is not None and total is not None:
        raise UsageError(
            "--per-class and --total are two ways to say how many rows: give one of them."
        )
    est = _load_model(model)
    present = est.classes_[np.asarray(est.class_count_) > 0]
    if class_ is None:
        chosen = present
    else:
        match = [c for c in est.classes_ if str(c) == class_]
        if not match:
            raise UsageError(
                f"--class {class_}: not a class of the model; classes are "
                f"{', '.join(str(c) for c in est.classes_)}."
            )
        chosen = np.asarray(match)
    if total is not None and class_ is None:
        X, y = est.sample(total, random_state=seed)  # the classes drawn from the priors
        order = np.argsort(np.searchsorted(est.classes_, y), kind="stable")
        X, y = X[order], y[order]  # grouped by class, as --per-class writes them
        chosen = present[np.isin(present, y)]
        said = f"{y.size:,} samples, classes drawn with the priors"
    else:
        k = total if total is not None else (per_class or 10)
        X, y = est.sample(k * chosen.size, y=np.repeat(chosen, k), random_state=seed)
        said = f"{y.size:,} samples ({k} per class)"
    names = getattr(est, "feature_names_in_", None)
    cols = (
        [str(c) for c in names] if names is not None else [f"x{j + 1}" for j in range(X.shape[1])]
    )
    table = pd.DataFrame(X, columns=cols)
    table["class"] = y
    files: dict[Path, Content] = {output: table_writer(table, output)}
    shape = _image_shape(model, X.shape[1])
    target = None
    if png is not None or shape is not None:
        if shape is None:
            raise UsageError(
                f"--png: {X.shape[1]} features are not a square image; an image grid needs "
                "a square number of features or a model fitted on IDX data."
            )
        target = png or output.with_suffix(".png")
        vmin, vmax = grey_scale(est, chosen, X)
        images = _grid(X, y, chosen, shape)
        per_row = images.shape[1]
        title = (
            f"{per_row} generated samples per class ({type(est).__name__})"
            if total is None or class_ is not None
            else f"{y.size} generated samples, classes by the priors ({type(est).__name__})"
        )
        disp = SampleGridDisplay(images=images, labels=chosen, vmin=vmin, vmax=vmax, title=title)
        fig = _figure((max(4.0, 0.75 * per_row + 1.5), max(3.0, 0.75 * chosen.size + 1.0)))
        disp.plot(ax=fig.subplots())
        files[target] = _figure_bytes(fig, target)
    write_files(files)
    _say(f"{said} -> {output}")
    if target is not None:
        _say(f"image grid -> {target}")


def _grid(X: Any, y: Any, classes: Any, shape: tuple[int, int]) -> NDArray[np.float64]:
    """The samples as a (class, column, height, width) grid; a short row is padded with NaN."""
    counts = [int(np.sum(y == c)) for c in classes]
    width = max(counts)
    images = np.full((len(classes), width, *shape), np.nan)
    for k, c in enumerate(classes):
        images[k, : counts[k]] = np.asarray(X[y == c], dtype=float).reshape(-1, *shape)
    return images


@app.command(cls=FlagCommand)
def plot(
    model: ModelArg,
    data: DataArg,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Picture to write (.png, .svg, .pdf).")
    ],
    target: TargetOpt = None,
    x: Annotated[
        str | None, typer.Option("--x", help="Feature on the horizontal axis (with --y).")
    ] = None,
    y: Annotated[str | None, typer.Option("--y", help="Feature on the vertical axis.")] = None,
    projection: Annotated[
        str,
        typer.Option(
            help="For more than 2 features: 'auto' (the Fisher plane, for every model; two "
            "features for a table with text columns), 'fisher' or 'features' (the first two, "
            "or --x/--y, the others at their means)."
        ),
    ] = "auto",
    sep: SepOpt = None,
    na_values: NaOpt = None,
    sheet: SheetOpt = None,
    missing_target: MissingOpt = "drop",
    split: SplitOpt = "test",
) -> None:
    """Decision regions and each class's density of the saved model, in a plane."""
    use_read_options(na_values, sheet)
    from ..plotting import DecisionRegionsDisplay

    _check_choice("--projection", projection, ("auto", "fisher", "features"))
    _check_choice("--missing-target", missing_target, ("drop", "error"))
    if (x is None) != (y is None):
        raise UsageError("--x and --y go together: give both features of the plane.")
    est = _load_model(model)
    source = data_source(data)
    target = _target_for(model, target, source)
    ds = _features_for(
        est,
        source,
        target,
        split,
        need_target=True,
        sep=_parse_sep(sep),
        missing_target=missing_target,
    )
    assert ds.y is not None  # need_target=True
    names = ds.feature_names or [f"x{j}" for j in range(ds.n_features)]
    pair = None
    if x is not None and y is not None:
        pair = tuple(_feature_key(v, names, opt) for v, opt in ((x, "--x"), (y, "--y")))
        if projection == "auto":
            projection = "features"
    fig = _figure((7.6, 6.2))
    try:
        DecisionRegionsDisplay.from_estimator(
            est,
            ds.X,
            ds.y,
            projection=projection,
            features=pair,
            feature_names=names,
            ax=fig.subplots(),
        )
    except ValueError as exc:
        raise UsageError(f"plot: {clean(str(exc))}") from None
    write_files({output: _figure_bytes(fig, output)})
    _say(f"decision regions -> {output}")


def _feature_key(value: str, names: list[str], option: str) -> Any:
    """A feature by name, or by index for data without column names."""
    if value in names:
        return value
    if value.lstrip("-").isdigit() and names[0] == "x0":
        return int(value)
    raise UsageError(
        f"{option} {value}: not a feature of the model; features are {', '.join(names[:30])}."
    )


@app.command(cls=FlagCommand)
def demo(
    output: Annotated[Path, typer.Option("--output", "-o", help="Report folder.")] = Path("report"),
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="MNIST IDX folder (default: $BAYESRULE_DATA or ../shared/datasets/mnist).",
        ),
    ] = None,
) -> None:
    """Every model on MNIST and wine: accuracy, timings and pictures in a report folder."""
    from ._demo import run_demo

    with busy("running every model on MNIST and wine"):
        run_demo(output, data_dir, out, _say)
