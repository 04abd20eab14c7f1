"""The typer application, its consoles and its global options."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from ._errors import BoundaryGroup, state

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


def say(message: str) -> None:
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
