"""The ``bayesrule`` command: fit, predict, evaluate, sample, plot and demo.

The command is built with typer and rich (the ``[cli]`` extra); they are
imported only when the command runs, so ``import bayesrule`` never needs
them. See ``docs/cli.md``.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

_HINT = (
    "the bayesrule command needs typer, rich, pandas and matplotlib: pip install 'bayesrule[cli]'"
)


def main(argv: list[str] | None = None) -> None:
    """Run the command line (the ``bayesrule`` console script)."""
    try:
        from ._app import app
    except ImportError as exc:
        print(f"bayesrule: error: {_HINT} ({exc.name or exc} is missing)", file=sys.stderr)
        raise SystemExit(2) from None
    app(args=argv, prog_name="bayesrule")
