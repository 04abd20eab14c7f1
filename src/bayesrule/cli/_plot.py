"""``bayesrule sample`` and ``bayesrule plot``: drawing from a model, and its picture."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from numpy.typing import NDArray

from ._common import (
    figure,
    figure_bytes,
    image_shape,
    labelled_features,
    load_model,
    model_and_data,
)
from ._data import Content, UsageError, table_writer, write_files
from ._errors import FlagCommand, clean
from ._options import DataArg, ModelArg, Reading, TargetOpt, check_choice, reads_data
from ._shell import app, say


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
    est = load_model(model)
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
    asked = ("--total", total) if total is not None else ("--per-class", per_class or 10)
    drawn = asked[1] if total is not None and class_ is None else asked[1] * chosen.size
    _check_sample_size(asked, drawn, int(est.n_features_in_))
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
    shape = image_shape(model, X.shape[1])
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
        fig = figure((max(4.0, 0.75 * per_row + 1.5), max(3.0, 0.75 * chosen.size + 1.0)))
        disp.plot(ax=fig.subplots())
        files[target] = figure_bytes(fig, target)
    write_files(files)
    say(f"{said} -> {output}")
    if target is not None:
        say(f"image grid -> {target}")


def _physical_memory() -> int | None:
    """Bytes of memory this machine has, where the system says (Linux, macOS); else None."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


def _check_sample_size(option: tuple[str, int], rows: int, p: int) -> None:
    """UsageError, before any draw, for more rows than this machine can hold.

    The draws are held in memory as float64 (and written at the end), about
    ``8 (p + 1)`` bytes a row and more for the table written; a count beyond
    the machine's memory would otherwise fail deep in NumPy (an overflow of
    its integers, or an allocation of terabytes) naming no option.
    """
    name, value = option
    need = rows * 8 * (p + 1) * 2  # the draws and the table made of them
    memory = _physical_memory()
    if memory is not None and need > memory:
        raise UsageError(
            f"{name} {value}: {rows:,} rows of {p} features take about {need / 1e9:,.3g} GB "
            f"of memory to draw and write; this machine has {memory / 1e9:,.3g} GB. Draw "
            "fewer rows (runs with other --seed values draw more, and their files can be "
            "joined)."
        )


def _grid(X: Any, y: Any, classes: Any, shape: tuple[int, int]) -> NDArray[np.float64]:
    """The samples as a (class, column, height, width) grid; a short row is padded with NaN."""
    counts = [int(np.sum(y == c)) for c in classes]
    width = max(counts)
    images = np.full((len(classes), width, *shape), np.nan)
    for k, c in enumerate(classes):
        images[k, : counts[k]] = np.asarray(X[y == c], dtype=float).reshape(-1, *shape)
    return images


@app.command(cls=FlagCommand)
@reads_data(without=("stream", "block_rows", "scheduler", "spark", "incomplete"))
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
    *,
    reading: Reading,
) -> None:
    """Decision regions and each class's density of the saved model, in a plane."""
    from ..plotting import DecisionRegionsDisplay

    check_choice("--projection", projection, ("auto", "fisher", "features"))
    check_choice("--missing-target", reading.missing_target, ("drop", "error"))
    if (x is None) != (y is None):
        raise UsageError("--x and --y go together: give both features of the plane.")
    est, source, target = model_and_data(model, data, target)
    ds = labelled_features(est, source, target, reading.split, reading.sep, reading.missing_target)
    assert ds.y is not None  # need_target=True
    names = ds.feature_names or [f"x{j}" for j in range(ds.n_features)]
    pair = None
    if x is not None and y is not None:
        pair = tuple(_feature_key(v, names, opt) for v, opt in ((x, "--x"), (y, "--y")))
        if projection == "auto":
            projection = "features"
    fig = figure((7.6, 6.2))
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
    write_files({output: figure_bytes(fig, output)})
    say(f"decision regions -> {output}")


def _feature_key(value: str, names: list[str], option: str) -> Any:
    """A feature by name, or by index for data without column names."""
    if value in names:
        return value
    if value.lstrip("-").isdigit() and names[0] == "x0":
        return int(value)
    raise UsageError(
        f"{option} {value}: not a feature of the model; features are {', '.join(names[:30])}."
    )
