"""The progress bar of a streamed fit or prediction."""

from __future__ import annotations

import sys
import time
from typing import Any

from .blocks import _Chunk
from .reader import _Reader


# ---------------------------------------------------------------------------------
# progress
# ---------------------------------------------------------------------------------
class _Progress:
    """Rows done, MB/s and the time left, on stderr when it is a terminal (rich)."""

    def __init__(self, reader: _Reader, enabled: bool | None, label: str) -> None:
        self.reader = reader
        self.rows = 0
        self.nbytes = 0
        self.start = time.perf_counter()
        self._bar: Any = None
        self._task: Any = None
        show = enabled
        if show is None:
            show = bool(getattr(sys.stderr, "isatty", lambda: False)())
        if not show:
            return
        try:
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )
        except ImportError:
            if enabled:
                raise ImportError(
                    "progress=True needs rich: pip install 'bayesrule[cli]'"
                ) from None
            return
        from rich.console import Console

        columns: list[Any] = [TextColumn(label)]
        if reader.total:
            columns += [BarColumn(), TaskProgressColumn(), TimeRemainingColumn()]
        columns += [TextColumn("{task.fields[rows]:,} rows"), TextColumn("{task.fields[rate]}")]
        self._bar = Progress(*columns, console=Console(stderr=True), transient=False)
        self._task = self._bar.add_task(label, total=reader.total or None, rows=0, rate="")

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, chunk: _Chunk, rows: int) -> None:
        self.rows += rows
        self.nbytes += chunk.nbytes
        if self._bar is None:
            return
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        done = (
            self.reader.counter[0]
            if self.reader.unit == "bytes" and self.reader.counter
            else self.rows
        )
        self._bar.update(
            self._task,
            completed=done,
            rows=self.rows,
            rate=f"{self.nbytes / elapsed / 1e6:,.0f} MB/s",
        )
