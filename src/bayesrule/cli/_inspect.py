"""``bayesrule info``: what a model file holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from ..estimators.registry import short_name
from ..io import read_metadata
from ._common import load_model, model_features, names_list
from ._errors import FlagCommand
from ._metrics import plain
from ._options import ModelArg
from ._shell import app, out


@app.command(cls=FlagCommand)
def info(
    model: ModelArg,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON instead of a table.")
    ] = False,
) -> None:
    """What a model file holds: estimator, parameters, classes, features, training data."""
    est = load_model(model)
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
    table.add_row("features", f"{summary['n_features']}: {names_list(described, 40)}")
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
    names = model_features(est)
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
            k: _jsonable(getattr(est, k)) for k in _CHOSEN if _shown(k, getattr(est, k, None))
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


#: fitted attributes that are a choice made by the fit (cross-validation, shrinkage,
#: MDA's held-out choices)
_CHOSEN = (
    "alpha_",
    "gamma_",
    "ridge_",
    "reg_param_",
    "shrinkage_",
    "bandwidth_",
    "n_components_",
    "reg_covar_",
    "covariance_type_",
)


def _shown(name: str, value: Any) -> bool:
    """Whether a chosen value is shown: a number, a word, or MDA's components per class."""
    if isinstance(value, np.ndarray):
        return name == "n_components_" and value.size <= 64
    return isinstance(value, (int, float, np.number, str))


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
