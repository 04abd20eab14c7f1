"""Feedback while the command works: a spinner with the time elapsed, on stderr.

Shown only when stderr is a terminal and ``-q`` was not given, so pipes,
logs and tests see nothing but the command's messages. The spinner is
transient: it disappears when the step ends.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from ._errors import state

__all__ = ["busy", "interactive"]


def interactive(stream: Any = None) -> bool:
    """Whether to show a spinner: stderr (or ``stream``) is a terminal and not ``-q``."""
    stream = sys.stderr if stream is None else stream
    if state["quiet"]:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


@contextlib.contextmanager
def busy(message: str, stream: Any = None) -> Iterator[None]:
    """Show ``message`` with a spinner and the time elapsed while the block runs."""
    stream = sys.stderr if stream is None else stream
    if not interactive(stream):
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(file=stream, force_terminal=True, highlight=False)
    with Progress(
        SpinnerColumn(),
        TextColumn(message),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        bar.add_task(message, total=None)
        yield
