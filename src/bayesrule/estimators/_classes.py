"""Warnings about the classes a fit found in ``y``: what a real table's labels get wrong.

Three signs that the labels are not what the user meant, each a
:class:`ClassWarning` naming the classes concerned (the fit goes on):

* a single class (a naive Bayes model then predicts it for every row);
* classes with fewer rows than the model needs (:data:`MIN_CLASS_ROWS`, or
  the estimator's ``_class_rows_needed``): a stray label (``?``, a typo)
  makes a class of one row;
* labels that differ from another only by case or by spaces around or
  inside them (``'Adelie'``, ``'adelie '``), which are surely one class.
"""

from __future__ import annotations

import sys
import warnings
from collections import defaultdict
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["MIN_CLASS_ROWS", "ClassWarning", "warn_about_classes", "warn_about_labels"]

#: A class needs at least this many rows (of positive weight): one row gives no
#: estimate of a class's spread (a Gaussian's variance, a kernel's bandwidth),
#: and a class of one row is most often a stray label.
MIN_CLASS_ROWS = 2
#: classes named in a message
_NAMED = 10


class ClassWarning(UserWarning):
    """The classes found in ``y`` look unintended.

    Warned by ``fit`` (and by ``partial_fit`` for the declared ``classes``)
    when ``y`` has a single class, when a class has fewer rows than the
    model needs (fewer than :data:`MIN_CLASS_ROWS` = 2 rows of positive
    weight), or when two labels differ only by case or by spaces
    (``'Adelie'`` and ``'adelie '``). Fix the labels (``y.str.strip()``,
    drop the rows of a missing-value marker such as ``'?'``), or silence it::

        warnings.filterwarnings("ignore", category=bayesrule.ClassWarning)
    """


def _plain(label: Any) -> Any:
    return label.item() if isinstance(label, np.generic) else label


def _shown(labels: list[Any]) -> str:
    more = f" and {len(labels) - _NAMED} more" if len(labels) > _NAMED else ""
    return ", ".join(repr(_plain(v)) for v in labels[:_NAMED]) + more


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _folded(label: Any) -> str | None:
    """The label with case and spacing folded away, or None for a label that is not text."""
    if isinstance(label, bytes):
        label = label.decode("utf-8", "replace")
    if not isinstance(label, str):
        return None
    return " ".join(label.split()).casefold()


def near_duplicates(classes: NDArray[Any]) -> list[list[Any]]:
    """Groups of two or more labels equal up to case and spaces (text labels only)."""
    if classes.dtype.kind not in "OUS":
        return []
    groups: dict[str, list[Any]] = defaultdict(list)
    for label in classes.tolist():
        key = _folded(label)
        if key is not None:
            groups[key].append(label)
    return [g for g in groups.values() if len(g) > 1]


def _warn(message: str) -> None:
    """Warn, pointing at the first frame outside bayesrule and scikit-learn (the user's call)."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        ("bayesrule.", "sklearn.")
    ):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, ClassWarning, stacklevel=level)


def warn_about_labels(est: Any, classes: NDArray[Any]) -> None:
    """Warn about a single class and about near-duplicate labels among ``classes``."""
    name = type(est).__name__
    if classes.size == 1:
        _warn(
            f"y has a single class ({_shown(classes.tolist())}): {name} will predict it for "
            "every row. Check that the target column is the one meant and that the rows of "
            "the other classes were not filtered out."
        )
    groups = near_duplicates(classes)
    if groups:
        shown = "; ".join(_shown(g) for g in groups[:_NAMED])
        _warn(
            f"some labels differ only by case or spaces, so {name} fits them as separate "
            f"classes: {shown}. Clean the labels first (e.g. y.str.strip(), or "
            "y.str.strip().str.lower() with pandas)."
        )


def warn_about_classes(est: Any, stats: Any) -> None:
    """Warn about the classes of a fit: single, too small, or near-duplicate labels."""
    classes = np.asarray(stats.classes)
    warn_about_labels(est, classes)
    need = int(getattr(est, "_class_rows_needed", MIN_CLASS_ROWS))
    counts = np.asarray(stats.counts)
    small = np.flatnonzero((counts > 0) & (counts < need))
    if small.size == 0 or classes.size < 2:
        return
    listed = ", ".join(
        f"{_plain(classes[k : k + 1].tolist()[0])!r} ({_rows(int(counts[k]))})"
        for k in small[:_NAMED]
    )
    more = f" and {small.size - _NAMED} more" if small.size > _NAMED else ""
    _warn(
        f"{'a class' if small.size == 1 else f'{small.size} classes'} of y "
        f"{'has' if small.size == 1 else 'have'} fewer than {need} rows: {listed}{more}. "
        f"{type(est).__name__} cannot estimate the spread of such a class from its own rows "
        "(it falls back on smoothing, a pooled or a regularised estimate), and a class of one "
        "row is most often a stray label (a typo, a missing-value marker such as '?'): drop "
        "or relabel those rows."
    )
