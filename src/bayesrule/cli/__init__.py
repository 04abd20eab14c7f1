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
    """Run the command line (the ``bayesrule`` console script).

    Errors inside a subcommand are reported by the command's own boundary
    (``_errors.BoundaryGroup``); this is the last resort for what happens
    around it, such as an interrupt while the libraries are imported.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        from ._app import app
    except ImportError as exc:
        print(f"bayesrule: error: {_HINT} ({exc.name or exc} is missing)", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print("bayesrule: error: interrupted.", file=sys.stderr)
        raise SystemExit(130) from None
    from ._errors import debug_requested, is_closed_pipe, quiet_closed_pipe, report

    try:
        app(args=args, prog_name="bayesrule")
    except KeyboardInterrupt as exc:
        if debug_requested(args):
            raise
        report(exc)
        raise SystemExit(130) from None
    except Exception as exc:
        if is_closed_pipe(exc):  # the reader of a pipe has gone: what was written was read
            quiet_closed_pipe()
            raise SystemExit(0) from None
        if debug_requested(args):
            raise
        report(exc)
        raise SystemExit(2) from None
