"""What every reader of the command line shares: the dataset, the column choice, the options of a read, :class:`UsageError`."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..io.formats import (
    na_markers,
    near_name,
    table_path,
)

ARRAY_SUFFIXES = {".npy", ".npz"}
_IDX_IMAGES = re.compile(r"^(?P<prefix>.*)-images[-.]idx3-ubyte(\.gz)?$")
#: names pandas and pyarrow give a column written from a DataFrame's index
_INDEX_NAMES = ("", "Unnamed: 0", "__index_level_0__")
STDIN = Path("-")


class UsageError(Exception):
    """A problem with the user's input: reported on one line, exit code 2."""


@dataclass
class Dataset:
    """Features, optional labels, and what is known about their layout.

    ``X`` is a pandas DataFrame for CSV and Parquet (so that column names, and
    for a table model the dtypes, reach the model) and a float array otherwise.
    ``frame`` is the whole table (rows aligned with ``X``) for pass-through
    columns; ``notes`` are what the reader decided for the user (an index
    column left out, rows dropped), to be said once.
    """

    X: Any
    y: NDArray[Any] | None
    feature_names: list[str] | None
    image_shape: tuple[int, int] | None
    source: str
    frame: Any = None
    notes: list[str] = field(default_factory=list)
    target: str | None = None

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def rows(self, sl: slice) -> Any:
        """A block of rows of ``X`` (for fitting in chunks)."""
        return self.X.iloc[sl] if hasattr(self.X, "iloc") else self.X[sl]


@dataclass
class Columns:
    """How the feature columns of a table are chosen.

    ``features`` and ``drop`` are column names or shell-style globs
    (``bill_*``); ``model`` is the ordered list of a fitted model's features
    (then ``features``/``drop`` do not apply and other columns are ignored);
    ``numeric`` says whether the model needs numbers (every model but the
    table models, such as MixedNB, which take the columns as they are).
    """

    features: list[str] | None = None
    drop: list[str] | None = None
    model: list[str] | None = None
    numeric: bool = True


def split_names(values: list[str] | None) -> list[str]:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``: options that are comma-separated and repeatable."""
    out: list[str] = []
    for v in values or []:
        out += [p.strip() for p in v.split(",") if p.strip()]
    return out


def match_columns(patterns: list[str], columns: list[str], option: str) -> list[str]:
    """The columns matched by names or globs, in the order asked; an unmatched one is an error."""
    chosen: list[str] = []
    for p in patterns:
        if p in columns:
            hits = [p]
        elif any(ch in p for ch in "*?["):
            hits = [c for c in columns if fnmatch.fnmatchcase(c, p)]
        else:
            hits = []
        if not hits:
            raise UsageError(
                f"{option} {p}: no such column{_did_you_mean(p, columns)}; columns are: {_some(columns)}."
            )
        chosen += [h for h in hits if h not in chosen]
    return chosen


def _did_you_mean(name: str, names: list[str]) -> str:
    """`` (did you mean 'species'?)`` when a column's name is near ``name``, else nothing."""
    near = near_name(name, names)
    return "" if near is None else f" (did you mean {near!r}?)"


def _some(names: list[str], n: int = 30) -> str:
    shown = ", ".join(names[:n])
    return shown + (f", ... ({len(names) - n} more)" if len(names) > n else "")


def _labels(values: Any, what: str) -> NDArray[Any]:
    """Labels as a plain NumPy array: strings as unicode, never ``object``."""
    y = np.asarray(values)
    if y.dtype.kind == "b":
        return y
    if y.dtype.kind == "O":
        items = y.tolist()
        if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in items):
            raise UsageError(f"{what} has missing values.")
        y = (
            np.array([str(v) for v in items])
            if any(isinstance(v, str) for v in items)
            else np.array(items)
        )
    elif y.dtype.kind == "f":
        if np.isnan(y).any():
            raise UsageError(f"{what} has {int(np.isnan(y).sum())} missing values.")
        if np.all(y == np.round(y)):  # 0.0, 1.0, ... read from a CSV column with gaps filled
            y = y.astype(np.int64)
    return y


@dataclass
class ReadOptions:
    """How the command's tables are read: ``--na-values`` and ``--sheet``.

    A command sets them once (:func:`use_read_options`); every table it
    reads then takes them, whichever path reads it (at once, streamed, a
    file set).
    """

    na_values: list[str] = field(default_factory=list)
    sheet: str | None = None


#: the options of the command being run
read_options = ReadOptions()


def use_read_options(na_values: list[str] | None = None, sheet: str | None = None) -> None:
    """Set ``--na-values`` (comma-separated, repeatable) and ``--sheet`` for the command's reads."""
    read_options.na_values = split_names(na_values) if na_values else []
    read_options.sheet = sheet


def na_values_for(extra: list[str] | None = None) -> list[str]:
    """The missing-value markers of a read: the defaults, the command's and ``extra``."""
    return na_markers([*read_options.na_values, *(extra or [])])


def is_table(path: Path) -> bool:
    """Whether ``path`` is read as a table (CSV, Parquet, JSON lines, Excel; or stdin)."""
    return path == STDIN or _table_kind(path) is not None


def _table_kind(path: Path) -> str | None:
    """The table format of ``path`` by its suffixes: "CSV", "Parquet", "JSON lines", "Excel"."""
    found = table_path(path)
    return None if found is None else found.name
