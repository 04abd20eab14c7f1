"""What the commands share: models, reading the data, figures, messages."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..io import load, read_metadata
from ._data import (
    STDIN,
    Columns,
    Dataset,
    UsageError,
    read_data,
)
from ._errors import clean, notes
from ._feedback import busy
from ._incomplete import describe as describe_cells
from ._incomplete import scorable
from ._options import parse_sep
from ._sources import Data, FileSet, data_source, is_tabular, read_dataset


def load_model(path: Path) -> Any:
    if not path.exists():
        raise UsageError(f"{path}: no such model file.")
    return load(path)


def is_table_model(est: Any) -> bool:
    """Whether the estimator takes a table as it is (MixedNB: text, categories, booleans)."""
    return "columns" in est.get_params(deep=False)


def model_features(est: Any) -> list[str] | None:
    names = getattr(est, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]


def stored_target(model_path: Path) -> str | None:
    """The label column the model was fitted with, as `bayesrule fit` keeps it in the file."""
    target = read_metadata(model_path).get("extra", {}).get("target")
    return target if isinstance(target, str) and target else None


def source_name(data: Data) -> str:
    return "standard input" if data == STDIN else data.name


def read(data: Data, target: str | None, **kwargs: Any) -> Dataset:
    """Read the data with a spinner on a terminal, and say what the reader decided."""
    if isinstance(data, FileSet):
        with busy(f"reading {data.name} ({data.describe()})"):
            ds = read_dataset(data, target, **kwargs)
    else:
        with busy(f"reading {source_name(data)}"):
            ds = read_data(data, target, **kwargs)
    notes.extend(ds.notes)  # said once the command has succeeded
    return ds


def features_for(
    model: Any,
    data: Data,
    target: str | None,
    split: str,
    need_target: bool,
    sep: str | None = None,
    missing_target: str = "drop",
) -> Dataset:
    """The model's features (by name, in the model's order) and, if asked, labels of the data."""
    names = model_features(model)
    columns = Columns(model=names, numeric=not is_table_model(model))
    ds = read(
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


def display_name(source: str) -> str:
    return source if source == "standard input" else Path(source).name


def names_list(names: list[str], n: int = 12) -> str:
    shown = ", ".join(names[:n])
    return shown + (f", ... ({len(names) - n} more)" if len(names) > n else "")


def figure(figsize: tuple[float, float]) -> Any:
    from ..plotting import require_matplotlib

    require_matplotlib()
    # A Figure with its own canvas needs no GUI backend and no global pyplot state.
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def figure_bytes(fig: Any, path: Path) -> bytes:
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


def image_shape(model_path: Path, n_features: int) -> tuple[int, int] | None:
    from ..plotting import image_shape_for

    shape = read_metadata(model_path).get("extra", {}).get("image_shape")
    if isinstance(shape, list) and len(shape) == 2 and shape[0] * shape[1] == n_features:
        return (int(shape[0]), int(shape[1]))
    return image_shape_for(n_features)


def fit_with_progress(est: Any, ds: Dataset) -> Any:
    """Fit at once, with a spinner and the time elapsed on a terminal.

    The fit is one call to ``fit``, not a loop of ``partial_fit``: the model is
    then exactly the one the Python API gives, and each ``partial_fit`` would
    derive the parameters again (an eigendecomposition), which costs more than
    the pass over the data.
    """
    with busy(f"fitting {type(est).__name__} on {ds.n_rows:,} rows"), named_values(ds, est):
        return est.fit(ds.X, ds.y)


def no_stream_with_scheduler(stream: bool | None, block_rows: int | None) -> None:
    if stream or block_rows is not None:
        raise UsageError(
            "--scheduler runs the work on a Dask cluster; --stream and --block-rows read "
            "blocks on this machine: give one or the other."
        )


def streamable_model(est: Any) -> None:
    from ..estimators import RegularizedDiscriminantAnalysisCV

    if isinstance(est, RegularizedDiscriminantAnalysisCV):
        raise UsageError(
            "--model rdacv cannot be fitted block by block or on a cluster (its held-out "
            "scores need every row of a split at once); choose alpha and gamma on a sample "
            "and fit --model rda, or read the data at once with --no-stream."
        )


@contextlib.contextmanager
def named_values(ds: Dataset, est: Any, when: str = "fit") -> Iterator[None]:
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
        raise UsageError(cells_message(ds, est, when)) from exc


def cells_message(ds: Dataset, est: Any, when: str) -> str:
    """What is wrong with the cells (columns, counts, first row) and what can be done."""
    from ._errors import models_taking_nan

    name = type(est).__name__
    remedies = ["drop or impute them", "leave the columns out with --drop"]
    if not est.input_spec().allow_nan:
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


def label_column(values: Any, classes: Any) -> Any:
    """Predicted labels with empty cells (None) in the classes' own type (integers stay integers)."""
    import pandas as pd

    values = np.asarray(values)
    if values.dtype.kind != "O" or classes.dtype.kind == "O":
        return values
    nullable = {"i": "Int64", "u": "UInt64", "b": "boolean"}.get(classes.dtype.kind)
    if nullable is not None:
        return pd.array(values, dtype=nullable)
    return pd.array(values, dtype="string") if classes.dtype.kind == "U" else values


def note_unscored(est: Any, ds: Dataset, what: str) -> None:
    rows = scorable(est, ds.X)
    k = int(rows.size - rows.sum())
    if k:
        notes.append(
            f"{k:,} of {rows.size:,} rows hold {describe_cells(est, ds.X)}, which "
            f"{type(est).__name__} cannot take: {what} (--incomplete error refuses them)."
        )


def method_names(proba: bool) -> list[str]:
    return ["predict", "predict_proba"] if proba else ["predict"]


def target_for(model: Path, target: str | None, data: Data) -> str | None:
    """``--target``, else the label column stored in the model file (tables only)."""
    if target is not None or not is_tabular(data):
        return target
    stored = stored_target(model)
    if stored is None:
        raise UsageError(
            f"{model}: the model file does not name its label column; give it with --target."
        )
    return stored


@contextlib.contextmanager
def new_folder(path: Path) -> Iterator[None]:
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


def model_and_data(
    model: Path, data: list[Path], target: str | None
) -> tuple[Any, Data, str | None]:
    """The model of ``model``, the data to score and their label column (evaluate, plot)."""
    est = load_model(model)
    source = data_source(data)
    return est, source, target_for(model, target, source)


def labelled_features(
    est: Any, data: Data, target: str | None, split: str, sep: str | None, missing_target: str
) -> Dataset:
    """The model's features and the labels of the data (evaluate, plot)."""
    return features_for(
        est,
        data,
        target,
        split,
        need_target=True,
        sep=parse_sep(sep),
        missing_target=missing_target,
    )


@dataclass
class PredictJob:
    """What ``predict`` was asked: the model, the data, the output and what goes in it."""

    est: Any
    data: Data
    output: Path
    proba: bool
    kept: list[str]
    label: str | None
    sep: str | None
    incomplete: str = "empty"
