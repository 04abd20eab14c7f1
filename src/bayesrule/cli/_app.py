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
from rich.console import Console
from rich.table import Table

from .._registry import available, get_estimator, short_name
from ..io import ModelFileError, load, read_metadata, save
from ._data import Content, Dataset, UsageError, read_data, table_writer, write_files, write_table
from ._errors import BoundaryGroup, clean, state

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
    state["quiet"] = quiet
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


def _load_model(path: Path) -> Any:
    if not path.exists():
        raise UsageError(f"{path}: no such model file.")
    return load(path)


def _features_for(
    model: Any, data: Path, target: str | None, split: str, need_target: bool
) -> Dataset:
    names = getattr(model, "feature_names_in_", None)
    ds = read_data(
        data,
        target,
        split=split,
        need_target=need_target,
        features=None if names is None else [str(n) for n in names],
    )
    if ds.n_features != model.n_features_in_:
        raise UsageError(
            f"{data}: the data have {ds.n_features} feature columns, but the model was fitted "
            f"with {model.n_features_in_}."
        )
    return ds


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
        fig.savefig(buffer, format=path.suffix.lower().lstrip(".") or "png", dpi=110)
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
    """Fit at once, with a progress bar (pulsing, with the time elapsed) on big data.

    The fit is one call to ``fit``, not a loop of ``partial_fit``: the model is
    then exactly the one the Python API gives, and each ``partial_fit`` would
    derive the parameters again (an eigendecomposition), which costs more than
    the pass over the data.
    """
    if ds.n_rows * ds.n_features <= _BIG_FIT_VALUES or state["quiet"]:
        return est.fit(ds.X, ds.y)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(f"fitting {type(est).__name__} on {ds.n_rows:,} rows"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        bar.add_task("fit", total=None)
        return est.fit(ds.X, ds.y)


# ------------------------------------------------------------------ commands
DataArg = Annotated[
    Path,
    typer.Argument(help="CSV, Parquet, .npy, .npz, or a directory (or images file) of IDX data."),
]
ModelArg = Annotated[Path, typer.Argument(help="A model file written by `bayesrule fit`.")]
SplitOpt = Annotated[str, typer.Option(help="For an IDX directory: 'train' or 'test' files.")]


@app.command()
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
    split: SplitOpt = "train",
) -> None:
    """Fit a model to labelled data and write it to a model file."""
    est = _build_estimator(model, settings or [])
    ds = read_data(data, target, split=split, need_target=True)
    t0 = time.perf_counter()
    est = _fit_with_progress(est, ds)
    elapsed = time.perf_counter() - t0
    extra: dict[str, Any] = {"source": Path(ds.source).name, "target": target}
    if ds.image_shape is not None:
        extra["image_shape"] = list(ds.image_shape)
    if output.is_dir():
        raise UsageError(f"{output}: is a directory; give the model file to write.")
    try:
        save(est, output, metadata=extra)  # written in full, then renamed into place
    except ModelFileError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:  # name the model file, not save's temporary file
        raise UsageError(
            f"{output}: cannot write the model file ({exc.strerror or exc})."
        ) from None
    _say(
        f"{type(est).__name__} ({short_name(type(est))}) fitted on {ds.n_rows:,} rows x "
        f"{ds.n_features} features, {est.classes_.size} classes in {elapsed:.2f} s -> {output}"
    )


@app.command()
def predict(
    model: ModelArg,
    data: DataArg,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="CSV or Parquet file, by its suffix.")
    ],
    proba: Annotated[
        bool, typer.Option("--proba", help="Add a probability column per class.")
    ] = False,
    target: Annotated[
        str | None, typer.Option("--target", "-t", help="A label column to leave out.")
    ] = None,
    split: SplitOpt = "test",
) -> None:
    """Predict the class of every row: one output row per input row."""
    import pandas as pd

    est = _load_model(model)
    ds = _features_for(est, data, target, split, need_target=False)
    table = pd.DataFrame({"prediction": est.predict(ds.X)})
    if proba:
        P = est.predict_proba(ds.X)
        for k, c in enumerate(est.classes_):
            table[f"proba_{c}"] = P[:, k]
    write_table(table, output)
    _say(f"{ds.n_rows:,} predictions -> {output}")


@app.command()
def evaluate(
    model: ModelArg,
    data: DataArg,
    target: Annotated[str | None, typer.Option("--target", "-t", help="Label column.")] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Report folder: metrics.json, CSV and PNG."),
    ] = None,
    split: SplitOpt = "test",
) -> None:
    """Accuracy, per-class precision and recall, and the confusion matrix."""
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    est = _load_model(model)
    ds = _features_for(est, data, target, split, need_target=True)
    assert ds.y is not None
    pred = est.predict(ds.X)
    try:
        labels = np.union1d(est.classes_, ds.y)
    except TypeError:
        raise UsageError(
            f"{data}: the labels {np.unique(ds.y)[:5].tolist()} are not of the same kind as the "
            f"model's classes {est.classes_[:5].tolist()}."
        ) from None
    counts = confusion_matrix(ds.y, pred, labels=labels)
    precision, recall, _, support = precision_recall_fscore_support(
        ds.y, pred, labels=labels, zero_division=0
    )
    accuracy = float(np.mean(pred == ds.y))
    rows = counts.sum(axis=1, keepdims=True)
    normalised = counts / np.where(rows > 0, rows, 1)

    summary = Table(
        title=f"{type(est).__name__} on {Path(ds.source).name}: accuracy {accuracy:.2%} ({ds.n_rows:,} rows)"
    )
    for col in ("class", "precision", "recall", "support"):
        summary.add_column(col, justify="right")
    for k, c in enumerate(labels):
        summary.add_row(str(c), f"{precision[k]:.3f}", f"{recall[k]:.3f}", f"{int(support[k]):,}")
    out.print(summary)
    cm = Table(title="Confusion matrix (rows: true class, normalised; columns: predicted)")
    cm.add_column("true \\ pred", justify="right")
    for c in labels:
        cm.add_column(str(c), justify="right")
    for i, c in enumerate(labels):
        cells = []
        for j in range(labels.size):
            v = normalised[i, j]
            text = f"{v:.2f}" if v else "."
            cells.append(f"[bold]{text}[/bold]" if i == j else text)
        cm.add_row(str(c), *cells)
    out.print(cm)

    if output is not None:
        _write_report(
            output, model, est, ds, labels, counts, normalised, accuracy, precision, recall, support
        )
        _say(f"report -> {output}/ (metrics.json, confusion_matrix.csv, confusion_matrix.png)")


def _write_report(
    output: Path,
    model: Path,
    est: Any,
    ds: Dataset,
    labels: Any,
    counts: Any,
    normalised: Any,
    accuracy: float,
    precision: Any,
    recall: Any,
    support: Any,
) -> None:
    """``evaluate -o DIR``: the three files, all rendered before any is written."""
    import pandas as pd

    from ..plotting import ConfusionMatrixDisplay

    if output.exists() and not output.is_dir():
        raise UsageError(f"{output}: exists and is not a directory; -o takes a report folder.")
    metrics = {
        "model": str(model),
        "estimator": type(est).__name__,
        "data": ds.source,
        "n_samples": ds.n_rows,
        "accuracy": accuracy,
        "per_class": [
            {
                "class": c.item() if hasattr(c, "item") else c,
                "precision": float(precision[k]),
                "recall": float(recall[k]),
                "support": int(support[k]),
            }
            for k, c in enumerate(labels)
        ],
    }
    table = (
        pd.DataFrame(normalised, index=[str(c) for c in labels], columns=[str(c) for c in labels])
        .rename_axis("true \\ predicted")
        .to_csv()
    )
    fig = _figure((6.4, 5.6))
    disp = ConfusionMatrixDisplay(
        counts=counts, labels=labels, title=f"Confusion matrix of {type(est).__name__}"
    )
    disp.plot(ax=fig.subplots())
    picture = _figure_bytes(fig, output / "confusion_matrix.png")
    with _new_folder(output):
        write_files(
            {
                output / "metrics.json": (json.dumps(metrics, indent=2) + "\n").encode(),
                output / "confusion_matrix.csv": table.encode(),
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


@app.command()
def sample(
    model: ModelArg,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="CSV (or Parquet) file of samples.")
    ],
    n: Annotated[int, typer.Option("-n", "--n-samples", min=1, help="Samples per class.")] = 10,
    class_: Annotated[str | None, typer.Option("--class", help="Only this class.")] = None,
    seed: Annotated[int, typer.Option(min=0, help="Random seed.")] = 0,
    png: Annotated[
        Path | None,
        typer.Option(help="Image grid to write (default: OUT with .png, for image data)."),
    ] = None,
) -> None:
    """Draw new rows from the fitted generative model: N per class."""
    import pandas as pd

    from ..plotting import SampleGridDisplay, grey_scale

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
    y = np.repeat(chosen, n)
    X, y = est.sample(y.size, y=y, random_state=seed)
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
        disp = SampleGridDisplay(
            images=X.reshape(chosen.size, n, *shape),
            labels=chosen,
            vmin=vmin,
            vmax=vmax,
            title=f"{n} generated samples per class ({type(est).__name__})",
        )
        fig = _figure((max(4.0, 0.75 * n + 1.5), max(3.0, 0.75 * chosen.size + 1.0)))
        disp.plot(ax=fig.subplots())
        files[target] = _figure_bytes(fig, target)
    write_files(files)
    _say(f"{y.size:,} samples ({n} per class) -> {output}")
    if target is not None:
        _say(f"image grid -> {target}")


@app.command()
def plot(
    model: ModelArg,
    data: DataArg,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Picture to write (.png, .svg, .pdf).")
    ],
    target: Annotated[str | None, typer.Option("--target", "-t", help="Label column.")] = None,
    projection: Annotated[
        str, typer.Option(help="For more than 2 features: 'auto', 'fisher' or 'features'.")
    ] = "auto",
    split: SplitOpt = "test",
) -> None:
    """Decision regions and each class's own density (ellipse or contour) in a plane."""
    from ..plotting import DecisionRegionsDisplay

    est = _load_model(model)
    ds = _features_for(est, data, target, split, need_target=True)
    assert ds.y is not None  # need_target=True
    fig = _figure((7.0, 5.8))
    X = np.asarray(ds.X, dtype=float)
    DecisionRegionsDisplay.from_estimator(
        est,
        X if X.shape[1] > 2 else ds.X,
        ds.y,
        projection=projection,
        feature_names=ds.feature_names,
        ax=fig.subplots(),
    )
    write_files({output: _figure_bytes(fig, output)})
    _say(f"decision regions -> {output}")


@app.command()
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
    """Reproduce the lecture notes' results: every model on MNIST and wine, with pictures."""
    from ._demo import run_demo

    run_demo(output, data_dir, out, _say)
