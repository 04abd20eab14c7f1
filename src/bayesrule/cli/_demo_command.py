"""``bayesrule demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._errors import FlagCommand
from ._feedback import busy
from ._shell import app, out, say


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
        run_demo(output, data_dir, out, say)
