"""The passes of a streamed fit: the ``reduce`` that :meth:`fit_plan` calls, over a source.

``est.fit_plan(reduce, first_block=..., classes=...)`` calls ``reduce(task)``
once per pass over the data: once for most estimators, once per EM pass for
mixture discriminant analysis (``input_spec().multi_pass``). Here a pass
reads the source from its start, one block at a time (the first pass's
first block is read before ``fit_plan`` is called, to be its
``first_block``), checks every block against the first block of the first
pass, summarises the blocks with ``task.statistics`` (side by side on a few
threads when the estimator allows it), combines the summaries in the
order of the blocks and returns ``task.finish`` of the total. A source read
more than once must be re-readable: files, a list of blocks, or a callable
giving a fresh iterable of blocks (see :func:`reopener`).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from ..._util import parallel as _parallel
from ...stats import scratch_space
from .blocks import PREFETCH, _Chunk, _prefetched
from .progress import _Progress
from .reader import _Reader
from .sources import _files, _listing

__all__ = ["StreamReduce", "reopener", "several_passes"]

_ROW = re.compile(r"\bat row (\d+)")
_COLUMN = re.compile(r"\bcolumn (\d+)\b")


def _located(exc: BaseException, chunk: _Chunk) -> ValueError:
    """The error of a block, with the file (or block) and the row within the source."""
    msg = str(exc)

    def absolute(m: re.Match[str]) -> str:
        r = int(m.group(1))
        return f"at row {chunk.row0 + r + 1} (row {r} of the block)"

    def named(m: re.Match[str]) -> str:
        j = int(m.group(1))
        names = chunk.names
        return f"column {names[j]!r}" if names is not None and j < len(names) else m.group(0)

    return ValueError(f"{chunk.where}: {_COLUMN.sub(named, _ROW.sub(absolute, msg))}")


def several_passes(name: str) -> str:
    """Why an estimator fitted by EM needs a source it can read again."""
    return (
        f"{name} is fitted by EM, which reads the data several times (one pass per "
        "iteration; see its n_passes_)"
    )


def reopener(source: Any, name: str) -> Callable[[], Any]:
    """A function giving the source afresh for every pass; ValueError for a one-shot iterator."""
    if _files(source) is not None:
        return lambda: source
    if callable(source) and not isinstance(source, Iterable):

        def fresh() -> Any:
            blocks = source()
            if not isinstance(blocks, Iterable):
                raise TypeError(
                    "source: a callable source must return an iterable of (X, y) or "
                    f"(X, y, sample_weight) blocks; it returned {type(blocks).__name__}."
                )
            return blocks

        return fresh
    if isinstance(source, Iterator):
        raise ValueError(
            f"source is a one-shot iterator (such as a generator of blocks), but "
            f"{several_passes(name)}, and an iterator can be read only once. Pass files (a "
            "path, list of paths, glob or directory), a list of (X, y) blocks, or a callable "
            "that returns a fresh iterator of blocks each time it is called."
        )
    return lambda: source


_huge_lock = threading.Lock()
_huge_state: dict[str, Any] = {"depth": 0, "before": None}


def _huge_after_fork() -> None:
    """A child forked during a pass has none of its threads: a fresh lock, and the huge-page
    setting found before the pass put back, so that the child's own passes restore it."""
    global _huge_lock
    _huge_lock = threading.Lock()
    if _huge_state["depth"]:
        toggle = _madvise_toggle()
        if toggle is not None:
            toggle(bool(_huge_state["before"]))
    _huge_state.update(depth=0, before=None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_huge_after_fork)


def _madvise_toggle() -> Callable[[bool], bool] | None:
    """NumPy's switch of huge pages for its large arrays (private API), or None where it has none."""
    import numpy as np

    for module in ("_core", "core"):  # NumPy 2, NumPy 1
        toggle = getattr(
            getattr(getattr(np, module, None), "multiarray", None), "_set_madvise_hugepage", None
        )
        if callable(toggle):
            return toggle
    return None


@contextlib.contextmanager
def _small_pages() -> Iterator[None]:
    """NumPy's arrays of 4 MiB and more on ordinary pages while a pass runs, as before after.

    NumPy asks the kernel for transparent huge pages for its large arrays
    (``madvise``). A streamed pass makes several such arrays per block and
    drops them soon after (each block's per-class scatter and every merge's
    result: ``K p^2`` float64, 5 MiB for 10 classes of 256 features), and
    where the kernel compacts memory to fault a huge page in
    (``transparent_hugepage/defrag`` set to ``madvise``) the system time
    grew by about 0.6 CPU s per GB streamed (LDA, 1 GB, paired runs on the
    shared 2-core machine: median 1.7 s against 1.1 s). The switch is
    process-wide: passes running at once share it, and the setting found
    before the first of them is restored when the last one ends.
    """
    toggle = _madvise_toggle()
    if toggle is None:
        yield
        return
    with _huge_lock:
        if _huge_state["depth"] == 0:
            _huge_state["before"] = toggle(False)
        _huge_state["depth"] += 1
    try:
        yield
    finally:
        with _huge_lock:
            _huge_state["depth"] -= 1
            if _huge_state["depth"] == 0:
                toggle(bool(_huge_state["before"]))


def _prepend(first: _Chunk, rest: Generator[_Chunk, None, None]) -> Generator[_Chunk, None, None]:
    try:
        yield first
        yield from rest
    finally:
        rest.close()


def _close(items: Any) -> None:
    close = getattr(items, "close", None)
    if close is not None:
        close()


class StreamReduce:
    """``reduce(task)`` of a fit over a streamed source: one read of it per call.

    Parameters
    ----------
    open_reader : callable
        A fresh reader of the source, from its start (called once per pass).
    label : str
        The progress bar's text; with ``numbered``, followed by the pass.
    progress : bool or None
        As for :func:`~bayesrule.fit_stream`.
    classes : array-like or None
        Given to ``task.statistics`` with every block.
    workers : int
        Blocks summarised side by side (1: in the calling thread).
    start : optional
        Statistics every pass starts from (a fitted model's, for
        ``partial=True``): the pass's total is ``task.combine`` of them and
        of the blocks.
    first_check : callable, optional
        ``first_check(schema, chunk)`` for the first block of the source,
        ``schema`` its ``(n_features, names, dtype)``.
    watch : callable, optional
        ``watch(total, chunk)`` after each block is combined in.
    prefetch : int
        Blocks read ahead on a thread of their own while the current ones
        are summarised (0: read in the calling thread, in turn).

    Attributes
    ----------
    schema : tuple or None
        ``(n_features, names, dtype)`` of the first block read; every later
        block of every pass must have the same features.
    passes : int
        The passes begun.
    """

    def __init__(
        self,
        open_reader: Callable[[], _Reader],
        *,
        label: str,
        progress: bool | None,
        classes: Any = None,
        workers: int = 1,
        numbered: bool = False,
        start: Any = None,
        first_check: Callable[[tuple[int, Any, Any], _Chunk], None] | None = None,
        watch: Callable[[Any, _Chunk], None] | None = None,
        prefetch: int = PREFETCH,
    ) -> None:
        self.open_reader = open_reader
        self.label = label
        self.progress = progress
        self.classes = classes
        self.workers = workers
        self.numbered = numbered
        self.start = start
        self.first_check = first_check
        self.watch = watch
        self.prefetch = prefetch
        self.schema: tuple[int, Any, Any] | None = None
        self.passes = 0
        self._held: tuple[_Progress, _Chunk, Generator[_Chunk, None, None]] | None = None

    # ------------------------------------------------------------ reading
    def _begin(self) -> tuple[_Progress, Generator[_Chunk, None, None]]:
        """A new pass: the source opened again, its bar started and its checked blocks."""
        self.passes += 1
        reader = self.open_reader()
        label = f"{self.label}, pass {self.passes}" if self.numbered else self.label
        bar = _Progress(reader, self.progress, label)
        bar.__enter__()
        depth = self.prefetch if reader.ahead is None else min(self.prefetch, reader.ahead)
        return bar, self._checked(_prefetched(reader.chunks, depth))

    def _checked(self, chunks: Iterator[_Chunk]) -> Generator[_Chunk, None, None]:
        """The blocks, each with labels and the first block's features."""
        try:
            for chunk in chunks:
                if chunk.y is None:
                    raise ValueError(f"{chunk.where}: the block has no labels (target).")
                schema = chunk.schema()
                first = self.schema
                if first is None:
                    self.schema = schema
                    if self.first_check is not None:
                        self.first_check(schema, chunk)
                elif schema[0] != first[0]:
                    raise ValueError(
                        f"{chunk.where}: the block has {schema[0]} features, but the first "
                        f"block had {first[0]}."
                    )
                elif (schema[1] is None) != (first[1] is None) or (
                    first[1] is not None and list(schema[1]) != list(first[1])
                ):
                    raise ValueError(
                        f"{chunk.where}: the block's columns {_listing(schema[1] or [])} differ "
                        f"from the first block's {_listing(first[1] or [])}."
                    )
                yield chunk
        finally:
            _close(chunks)

    def first_block(self, laid_out: bool = True) -> Any:
        """Begin the first pass and read its first block: the ``first_block`` of ``fit_plan``.

        With ``laid_out=False`` the block is read (for the schema checks) but
        None is returned: a block held as Arrow's columns is then not laid
        out for an estimator that makes no choice from its first block
        (``input_spec().infers_from_data`` false), whose blocks are all
        summarised from their columns.
        """
        bar, chunks = self._begin()
        try:
            first = next(chunks, None)
            if first is None:
                raise ValueError("the source holds no rows: nothing to fit.")
        except BaseException:
            chunks.close()
            bar.__exit__(None, None, None)
            raise
        self._held = (bar, first, chunks)
        return first.X if laid_out else None

    def close(self) -> None:
        """End a pass begun by :meth:`first_block` that no ``reduce`` took up (a failed plan)."""
        if self._held is not None:
            bar, _, chunks = self._held
            self._held = None
            chunks.close()
            bar.__exit__(None, None, None)

    # ------------------------------------------------------------ reducing
    def __call__(self, task: Any) -> Any:
        """``task.finish`` of the combined summaries of every block, read anew."""
        if self._held is not None:
            bar, first, rest = self._held
            self._held = None
            chunks = _prepend(first, rest)
        else:
            bar, chunks = self._begin()
        classes = self.classes
        # a task that summarises a block held as columns (Arrow's buffers) is given them
        by_columns = getattr(task, "column_statistics", None)

        # each thread's working arrays, reused from one block to the next, dropped with the pass
        scratch: dict[int, dict[str, Any]] = {}

        def summary(chunk: _Chunk) -> tuple[Any, int]:
            """The block's summary and rows; a block held as columns lets go of them after."""
            try:
                with scratch_space(scratch.setdefault(threading.get_ident(), {})):
                    if by_columns is not None and chunk.columns is not None:
                        rows = chunk.n_rows
                        part = by_columns(chunk.columns, chunk.y, chunk.w, classes)
                        if part is not None:
                            # Arrow's buffers go now, not once the blocks before this one
                            # are combined: a block held as columns is its whole table
                            chunk.columns = chunk.layout = None
                            return part, rows
                    return task.statistics(chunk.X, chunk.y, chunk.w, classes=classes), chunk.n_rows
            except ValueError as exc:
                raise _located(exc, chunk) from exc

        blocks: Any = None
        pages = _small_pages()
        pages.__enter__()
        try:
            total = None if self.start is None else task.combine(None, self.start)
            blocks = _parallel.ordered_map(summary, chunks, self.workers)
            for chunk, (part, rows) in blocks:
                try:
                    total = task.combine(total, part)
                except ValueError as exc:
                    raise _located(exc, chunk) from exc
                if self.watch is not None:
                    self.watch(total, chunk)
                bar.advance(chunk, rows)
                del chunk, part  # not held while the next block is awaited
        finally:
            _close(blocks)  # the summaries under way end before the blocks' reader
            chunks.close()
            bar.__exit__(None, None, None)
            for arrays in scratch.values():
                arrays.clear()  # the working arrays go with the pass
            scratch.clear()
            pages.__exit__(None, None, None)
        if total is None and self.passes == 1:
            raise ValueError("the source holds no rows: nothing to fit.")
        return task.finish(total)
