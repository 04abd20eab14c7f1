"""The CLI run in-process, for the CLI tests: typer's runner and the checks of its result.

A module of its own (no matplotlib, no pyarrow), so that a test file that
imports it skips only for what it needs itself.
"""

from __future__ import annotations

from typer.testing import CliRunner

from bayesrule.cli._app import app


def run(*args: object) -> object:
    """``bayesrule ARGS`` in this process; typer's result."""
    return CliRunner().invoke(app, [str(a) for a in args])


def ok(result: object) -> object:
    """``result`` of a command that succeeded (else the output and exception, in the failure)."""
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def error_line(result: object) -> str:
    """The one error line of a refused command (exit 2)."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bayesrule: error: "), lines
    return lines[0]
