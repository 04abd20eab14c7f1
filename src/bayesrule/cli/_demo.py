"""``bayesrule demo``: the results table from :mod:`bayesrule.demo` plus its pictures.

The table itself (every model's MNIST test accuracy and timings, the wine
test errors) is computed by ``bayesrule.demo.run(data_dir=..., report_dir=...)``
(``data_dir`` and ``report_dir`` as str or None). Of its result this module
reads, each only when present (as an attribute, or a key of a dict):

* ``rows`` (or ``table``) — a list of row dicts, printed as a table when
  ``bayesrule.demo.format_report(result)`` is not there to print it;
* ``models`` — fitted models keyed by ``(dataset, name)``; ``("mnist", "LDA")``
  is reused for the pictures instead of being fitted again;
* ``mnist_dir`` — where MNIST was read from (None: not found).

It then adds the pictures to the report folder: LDA's row-normalised
confusion matrix on the MNIST test set and ten generated samples per digit;
when MNIST is not found, the confusion matrix and decision regions of LDA on
the wine test split, saying so.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .._util.atomic import staged
from ._data import UsageError

__all__ = ["run_demo"]


def _demo_run() -> Callable[..., Any]:
    try:
        from .. import demo as demo_module
    except ImportError as exc:
        raise UsageError(f"bayesrule.demo is not available in this installation ({exc}).") from None
    run = getattr(demo_module, "run", None)
    if not callable(run):
        raise UsageError("bayesrule.demo has no run(data_dir=..., report_dir=...) function.")
    return run


def _field(result: Any, name: str, default: Any = None) -> Any:
    if isinstance(result, Mapping):
        return result.get(name, default)
    return getattr(result, name, default)


def _print_table(rows: Any, console: Any) -> None:
    from rich.table import Table

    if not isinstance(rows, list) or not rows or not all(isinstance(r, Mapping) for r in rows):
        return
    table = Table(title="bayesrule demo")
    columns = list(rows[0])
    for col in columns:
        table.add_column(str(col), justify="right")
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in columns))
    console.print(table)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def run_demo(
    output: Path, data_dir: Path | None, console: Any, say: Callable[[str], None]
) -> list[Path]:
    """Run the demo into ``output`` and write its pictures; returns the pictures written.

    The demo writes its files into a temporary folder next to ``output``; they
    and the pictures (rendered in memory) are written into ``output`` together
    through :func:`bayesrule._util.atomic.staged` only when the demo has
    finished, so a failed or interrupted demo leaves ``output`` as it was.
    """
    run = _demo_run()
    if output.exists() and not output.is_dir():
        raise UsageError(f"{output}: exists and is not a directory; -o takes a report folder.")
    created = [p for p in (output, *output.parents) if not p.exists()]
    output.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent))
    try:
        notes = _run_into(work, run, data_dir, console)
        written = {output / item.name: item for item in sorted(work.iterdir())}
        files = {path: item.read_bytes() for path, item in written.items() if item.is_file()}
        files.update((output / name, picture) for name, picture in notes.pictures.items())
        output.mkdir(exist_ok=True)
        with staged(files) as targets:
            for path, content in files.items():
                targets[path].write_bytes(content)
        for path, item in written.items():  # a folder the demo wrote, moved whole
            if not item.is_file():
                os.replace(item, path)
    except BaseException:
        for p in created:  # the folders made for the report, if still empty (innermost first)
            with contextlib.suppress(OSError):
                p.rmdir()
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    pictures = [output / name for name in notes.pictures]
    for line in notes.lines:
        say(line)
    say(f"report -> {output}/ ({', '.join(p.name for p in pictures)} added)")
    return pictures


class _Notes:
    def __init__(self) -> None:
        self.lines: list[str] = []  # said once the demo has succeeded
        self.pictures: dict[str, bytes] = {}  # PNG files by name, written with the report


def _run_into(folder: Path, run: Callable[..., Any], data_dir: Path | None, console: Any) -> _Notes:
    from matplotlib.figure import Figure

    from ..datasets import find_mnist, load_mnist, wine_split
    from ..estimators import LinearDiscriminantAnalysis
    from ..plotting import ConfusionMatrixDisplay, DecisionRegionsDisplay, SampleGridDisplay

    notes = _Notes()
    result = run(data_dir=None if data_dir is None else str(data_dir), report_dir=str(folder))
    formatter = getattr(sys.modules.get("bayesrule.demo"), "format_report", None)
    if callable(formatter):
        console.print(formatter(result), markup=False, highlight=False, soft_wrap=True)
    else:
        _print_table(_field(result, "rows", _field(result, "table")), console)

    def draw(name: str, size: tuple[float, float], display: Any, *args: Any, **kw: Any) -> None:
        """``display.from_estimator(*args, **kw)`` drawn on a new figure, kept as PNG ``name``."""
        fig = Figure(figsize=size, layout="constrained")
        display.from_estimator(*args, ax=fig.subplots(), **kw)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110)
        notes.pictures[name] = buffer.getvalue()

    found = _field(result, "mnist_dir", "unknown")
    mnist = find_mnist(data_dir) if found == "unknown" else (None if found is None else Path(found))
    models = _field(result, "models", {}) if mnist is not None else {}
    models = models if isinstance(models, Mapping) else {}
    if mnist is not None:
        X_train, y_train, X_test, y_test = load_mnist(mnist)
        size, title = (6.6, 5.8), "LDA on the MNIST test set"
    else:
        notes.lines.append(
            "MNIST not found (give --data-dir or set BAYESRULE_DATA); "
            "the pictures use the wine data alone."
        )
        X_train, y_train, X_test, y_test = wine_split()
        size, title = (6.0, 5.2), "LDA on the wine test split (60 wines)"
    lda = models.get(("mnist", "LDA"))
    if not isinstance(lda, LinearDiscriminantAnalysis):
        lda = LinearDiscriminantAnalysis().fit(X_train, y_train)
    draw("lda_confusion_matrix.png", size, ConfusionMatrixDisplay, lda, X_test, y_test, title=title)
    if mnist is None:
        draw("lda_wine_regions.png", (7.0, 5.8), DecisionRegionsDisplay, lda, X_test, y_test)
        return notes
    samples = {"n_per_class": 10, "random_state": 0}
    draw("lda_samples.png", (9.0, 8.6), SampleGridDisplay, lda, **samples)
    mda = models.get(("mnist", "MDA"))
    if mda is not None:
        draw("mda_samples.png", (9.0, 8.6), SampleGridDisplay, mda, **samples)
    return notes
