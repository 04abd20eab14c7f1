"""Reading data sets and writing tables for the command line.

Every problem a user can cause — a missing file, an unknown column, a file
of another format — raises :class:`UsageError` with one line that names the
file or column; the command turns it into exit code 2.
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from ..io.formats import (
    COMPRESSIONS,
    CSV,
    EXCEL,
    NA_VALUES,
    TablePath,
    clean_names,
    decimal_commas,
    decimal_for,
    header_names,
    index_columns,
    lone_token,
    na_markers,
    near_name,
    open_input,
    output_format,
    read_head,
    sniff_separator,
    suffix_help,
    table_path,
    write_frames,
)

__all__ = [
    "STDIN",
    "Columns",
    "Content",
    "Dataset",
    "index_column",
    "match_columns",
    "read_frame",
    "select",
    "split_names",
    "UsageError",
    "block_writer",
    "read_data",
    "table_writer",
    "write_files",
    "write_table",
]

__all__ += ["COMPRESSIONS", "ReadOptions", "read_options", "use_read_options"]

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


def read_data(
    path: Path,
    target: str | None = None,
    *,
    split: str = "train",
    need_target: bool = False,
    features: list[str] | None = None,
    columns: Columns | None = None,
    sep: str | None = None,
    missing_target: str = "drop",
    na_values: list[str] | None = None,
    sheet: str | None = None,
) -> Dataset:
    """Read a table (CSV, TSV, compressed, Parquet, JSON lines, Excel, stdin), .npy, .npz, or IDX files.

    Parameters
    ----------
    path : Path
        A file, ``-`` for standard input, or a directory of IDX files
        (``<split>-images-idx3-ubyte[.gz]`` and the matching labels; ``split``
        "test" reads the ``t10k`` files).
    target : str, optional
        The label column (tables), column index (.npy) or array name (.npz).
        Ignored for IDX data, whose labels come from the labels file.
    need_target : bool
        Whether labels are required.
    features : list of str, optional
        Column names the model was fitted with; they are selected in that order
        (a shorthand for ``columns=Columns(model=features)``).
    columns : Columns, optional
        How to choose the feature columns of a table.
    sep : str, optional
        The CSV field separator; sniffed from the first lines by default.
    missing_target : {"drop", "error"}
        What to do with rows whose label is missing: leave them out (with a
        note) or refuse the file.
    na_values : list of str, optional
        Cell texts read as missing besides :data:`bayesrule.io.formats.NA_VALUES`
        (and the command's ``--na-values``).
    sheet : str, optional
        The sheet of an Excel file (default: the first; also ``--sheet``).
    """
    columns = columns or Columns()
    if features is not None:
        columns.model = list(features)
    if path != STDIN and not path.exists():
        raise UsageError(f"{path}: no such file or directory.")
    if path != STDIN and (path.is_dir() or _IDX_IMAGES.match(path.name)):
        _no_column_options(path, columns)
        return _read_idx(path, split, need_target)
    if is_table(path):
        df = read_frame(path, sep=sep, na_values=na_values, sheet=sheet)
        return select(df, str(path), target, need_target, columns, missing_target=missing_target)
    suffix = path.suffix.lower()
    if suffix in ARRAY_SUFFIXES:
        _no_column_options(path, columns)
        return _read_array(path, suffix, target, need_target)
    raise UsageError(
        f"{path}: unsupported data format {suffix or '(no suffix)'!r}; expected a table "
        f"({suffix_help(path)}), .npy, .npz, '-' for standard input, or a directory of IDX files."
    )


def _no_column_options(path: Path, columns: Columns) -> None:
    if columns.features or columns.drop:
        raise UsageError(
            f"{path}: --features and --drop choose columns of a table (CSV or Parquet); "
            "this file has no column names."
        )


# ------------------------------------------------------------------ reading a table
def read_frame(
    path: Path,
    *,
    sep: str | None = None,
    na_values: list[str] | None = None,
    sheet: str | None = None,
    decimal: str | None = None,
    nrows: int | None = None,
) -> Any:
    """The whole table in ``path`` (or standard input for ``-``) as a DataFrame.

    The format follows the suffixes (:func:`bayesrule.io.formats.table_path`;
    on standard input, the content). CSV-like files may be compressed; their
    separator and decimal mark are sniffed from the first lines unless
    given. A cell is missing when its text is one of
    :data:`bayesrule.io.formats.NA_VALUES` or ``na_values`` (or the command's
    ``--na-values``). Header names are stripped of spaces; two equal names
    are an error; the columns pandas writes for an index in Parquet
    (``__index_level_0__``) are left out. This is the one place a table is
    read at once; ``nrows`` reads the first rows of a CSV file only.
    """

    sheet = sheet if sheet is not None else read_options.sheet
    na = na_values_for(na_values)
    kind: TablePath
    if path == STDIN:
        data = sys.stdin.buffer.read()
        if not data:
            raise UsageError("-: standard input is empty.")
        kind = _sniff_content(data)
        source: Any = io.BytesIO(data)
        name = "standard input"
    else:
        kind = table_path(path) or TablePath(CSV)
        source, name = path, str(path)
    if sheet is not None and kind.format is not EXCEL:
        raise UsageError(f"--sheet {sheet}: {name} is a {kind.name} file; sheets are Excel's.")
    try:
        if kind.name == "Parquet":
            df = _read_parquet(source)
        elif kind.name == "Excel":
            df = _read_excel(source, name, sheet, na)
        elif kind.name == "JSON lines":
            df = _read_json_lines(source, kind.compression, na, nrows)
        else:
            df = _read_csv(source, name, kind, sep, decimal, na, nrows)
    except ImportError as exc:
        extra = "excel" if kind.name == "Excel" else "cli"
        raise UsageError(
            f"reading {kind.name} needs {exc.name}: pip install 'bayesrule[{extra}]'"
        ) from None
    except (UsageError, UnicodeDecodeError):
        raise
    except ValueError as exc:
        if exc.__class__.__name__ == "DuplicateColumnError":
            raise UsageError(str(exc)) from None
        raise UsageError(f"{name}: not a readable {kind.name} file ({_first(exc)}).") from None
    except Exception as exc:  # pandas and pyarrow raise many types for a foreign file
        raise UsageError(f"{name}: not a readable {kind.name} file ({_first(exc)}).") from None
    if df.shape[0] == 0:
        raise UsageError(f"{name}: the file has no rows.")
    return df


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _sniff_content(data: bytes) -> TablePath:
    """The format of a table on standard input, from its first bytes."""
    from ..io.formats import EXCEL, JSON_LINES, PARQUET

    if data[:4] == b"PAR1":
        return TablePath(PARQUET)
    if data.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                if "xl/workbook.xml" in zf.namelist():
                    return TablePath(EXCEL)
        except zipfile.BadZipFile:
            pass
        return TablePath(CSV, "zip")
    for magic, compression in ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ", "xz")):
        if data.startswith(magic):
            return TablePath(CSV, compression)
    if data.startswith(b"\x28\xb5\x2f\xfd"):
        return TablePath(CSV, "zstd")
    if data.lstrip()[:1] == b"{":
        return TablePath(JSON_LINES)
    return TablePath(CSV)


def _read_csv(
    source: Any,
    name: str,
    kind: TablePath,
    sep: str | None,
    decimal: str | None,
    na: list[str],
    nrows: int | None,
) -> Any:
    import pandas as pd

    head = read_head(source, kind.compression)
    if sep is None:
        sep = sniff_separator(head, default=kind.format.sep or ",")
    if decimal is None:
        decimal = decimal_for(head, sep)
    raw = header_names(head, sep)
    names = clean_names(raw, name) if raw is not None else None
    fh = open_input(source, kind.compression)
    try:
        with warnings.catch_warnings():
            # pandas 3 deprecates float_precision, yet with na_values its default parser is
            # off in the last digit; round_trip reads every digit as written
            warnings.filterwarnings("ignore", message=".*float_precision")
            df = pd.read_csv(
                fh,
                sep=sep,
                decimal=decimal,
                na_values=na,
                keep_default_na=False,
                # "a, b, label": the space after a separator is not part of the value
                skipinitialspace=True,
                float_precision="round_trip",
                header=0,
                names=names,
                nrows=nrows,
            )
    finally:
        if fh is not source:
            fh.close()
    df.columns = clean_names(df.columns, name) if names is None else df.columns
    return df


def _read_parquet(source: Any) -> Any:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(source)
    names = list(parquet.schema_arrow.names)
    clean_names(names, str(getattr(source, "name", source)))  # two equal names: an error
    table = parquet.read()
    drop = [
        n for n in index_columns(names, table.schema.pandas_metadata) if n not in ("", "Unnamed: 0")
    ]  # select() says it leaves them out
    if drop:
        table = table.drop_columns(drop)
    # the pandas metadata would make the index columns (now gone) an index again
    df = table.to_pandas(ignore_metadata=True)
    df.columns = [str(c) for c in df.columns]
    return df


def _read_excel(source: Any, name: str, sheet: str | None, na: list[str]) -> Any:
    import pandas as pd

    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise ImportError("openpyxl", name="openpyxl") from None
    with pd.ExcelFile(source, engine="openpyxl") as book:
        sheets = list(book.sheet_names)
        if sheet is not None and sheet not in sheets:
            shown = ", ".join(repr(s) for s in sheets)
            raise UsageError(f"{name}: no sheet {sheet!r}; its sheets are {shown}.")
        chosen = sheet if sheet is not None else sheets[0]
        # the header is read as a row, so that pandas neither renames nor drops a repeated name
        raw = pd.read_excel(
            book, sheet_name=chosen, header=None, na_values=na, keep_default_na=False
        )
    if raw.shape[0] == 0:
        return raw
    header = ["" if pd.isna(v) else v for v in raw.iloc[0].tolist()]
    body = raw.iloc[1:].reset_index(drop=True)
    body.columns = clean_names(header, f"{name}, sheet {chosen!r}")
    return body.infer_objects()


def _read_json_lines(source: Any, compression: str | None, na: list[str], nrows: int | None) -> Any:
    import pandas as pd

    fh = open_input(source, compression)
    try:
        df = pd.read_json(fh, lines=True, nrows=nrows, dtype=False, precise_float=True)
    finally:
        if fh is not source:
            fh.close()
    df.columns = clean_names(df.columns, str(getattr(source, "name", source)))
    # a JSON string that is a missing-value marker asked for (--na-values) is missing too
    extra = [v for v in na if v not in NA_VALUES]
    for col in df.columns:
        if df[col].dtype.kind in "OU" or str(df[col].dtype) in ("str", "string"):
            df[col] = df[col].mask(df[col].isin(extra))
    return df.infer_objects()


def _is_tsv(path: Path) -> bool:
    found = table_path(path)
    return found is not None and found.format.sep == "\t"


# the names other modules of the command line use
_head_text = read_head
_sniff_separator = sniff_separator
_decimal_commas = decimal_commas


# ------------------------------------------------------------------ choosing the columns
def index_column(df: Any) -> str | None:
    """The first column when it is a written-out row index, else None.

    An unnamed first column (pandas writes its index so, R its row names) is
    one; so is a first column named ``index`` that counts the rows from 0 or 1
    (``DataFrame.reset_index``).
    """
    import pandas as pd

    first = str(df.columns[0])
    if first in _INDEX_NAMES or re.fullmatch(r"Unnamed: 0(\.\d+)?", first):
        return first
    if first.lower() == "index" and pd.api.types.is_integer_dtype(df[first]):
        values = df[first].to_numpy()
        n = values.size
        if np.array_equal(values, np.arange(n)) or np.array_equal(values, np.arange(1, n + 1)):
            return first
    return None


def select(
    df: Any,
    source: str,
    target: str | None,
    need_target: bool,
    columns: Columns,
    *,
    missing_target: str = "drop",
) -> Dataset:
    """The features and labels of a table: the one place columns are chosen.

    Rows whose label is missing are dropped (a note says how many) or refused
    (``missing_target="error"``). Without a model's feature list, the
    features are ``columns.features`` (default: every column) less the
    target, ``columns.drop`` and a written-out index column (with a note).
    Models that need numbers get the features as floats; a non-numeric
    column is an error naming it.
    """
    import pandas as pd

    notes: list[str] = []
    names = [str(c) for c in df.columns]
    idx = index_column(df) if columns.model is None else None  # before rows are dropped
    y = None
    if target is not None:
        if target not in names:
            raise UsageError(
                f"{source}: no column {target!r} for --target{_did_you_mean(target, names)}; "
                f"columns are: {_some(names)}."
            )
        missing = df[target].isna().to_numpy()
        if missing.any():
            if missing_target == "error":
                raise UsageError(
                    f"{source}: the target column {target!r} is missing in {int(missing.sum()):,} "
                    f"rows (first: row {int(np.flatnonzero(missing)[0]) + 1}); "
                    "--missing-target drop leaves them out."
                )
            df = df.loc[~missing]  # the index keeps the rows' numbers in the file
            k = int(missing.sum())
            notes.append(
                f"left out {k:,} row{'s' if k != 1 else ''} whose target {target!r} is missing "
                f"({df.shape[0]:,} remain)."
            )
            if df.shape[0] == 0:
                raise UsageError(f"{source}: every row's target {target!r} is missing.")
        y = _labels(df[target].to_numpy(), f"{source}: the target column {target!r}")
    elif need_target:
        raise UsageError(f"{source}: give the label column with --target.")

    if columns.model is not None:
        lacking = [c for c in columns.model if c not in names]
        if lacking:
            raise UsageError(
                f"{source}: the model needs the column(s) {', '.join(lacking[:10])}, which the "
                f"data lack{_did_you_mean(lacking[0], names)}."
            )
        cols = list(columns.model)
    else:
        candidates = [c for c in names if c != target]
        if columns.features:
            cols = match_columns(columns.features, candidates, "--features")
        else:
            cols = candidates
            if idx is not None and idx in cols:
                cols.remove(idx)
                notes.append(
                    f"left out the column {idx!r}: it is a written-out row index "
                    "(give --features to choose the columns)."
                )
        if columns.drop:
            dropped = match_columns(columns.drop, names, "--drop")
            cols = [c for c in cols if c not in dropped]
    if not cols:
        raise UsageError(
            f"{source}: no feature columns left"
            + (f" besides the target {target!r}" if target else "")
            + "."
        )
    tokens = {c: t for c in cols if (t := lone_token(df[c])) is not None}
    if columns.numeric:
        bad = [c for c in cols if not pd.api.types.is_numeric_dtype(df[c])]
        spoilt = [c for c in bad if c in tokens]
        if spoilt:
            c = spoilt[0]
            raise UsageError(f"{source}: {_token_message(c, *tokens[c])}")
        if bad:
            hint = (
                "the model was fitted on numbers"
                if columns.model is not None
                else f"leave them out (--drop {','.join(bad[:10])}) or use --model mixed, "
                "which takes text, categories and booleans"
            )
            raise UsageError(
                f"{source}: the column(s) {', '.join(repr(c) for c in bad[:10])} are not "
                f"numeric; {hint}."
            )
        X = df[cols].astype(float)
    else:
        for c, (token, count) in tokens.items():
            warnings.warn(f"{source}: {_token_message(c, token, count)}", stacklevel=2)
        X = df[cols]
    return Dataset(
        X=X,
        y=y,
        feature_names=cols,
        image_shape=None,
        source=source,
        frame=df,
        notes=notes,
        target=target,
    )


def _token_message(column: str, token: str, count: int) -> str:
    return (
        f"the column {column!r} holds numbers and {count:,} cell{'s' if count != 1 else ''} "
        f"{token!r}, so it is read as text; if {token!r} marks a missing value, give "
        f"--na-values {_quoted(token)}."
    )


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _read_array(path: Path, suffix: str, target: str | None, need_target: bool) -> Dataset:
    try:
        loaded = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise UsageError(f"{path}: not a readable {suffix} file ({exc}).") from None
    y = None
    if suffix == ".npz":
        with loaded as npz:
            arrays = {k: npz[k] for k in npz.files}
        label_key = target if target is not None else ("y" if "y" in arrays else None)
        if target is not None and target not in arrays:
            raise UsageError(
                f"{path}: no array {target!r} for --target; arrays are: {', '.join(arrays)}."
            )
        rest = [k for k in arrays if k != label_key]
        x_key = "X" if "X" in arrays else (rest[0] if len(rest) == 1 else None)
        if x_key is None:
            raise UsageError(
                f"{path}: cannot tell the features apart; name them 'X' (arrays: {', '.join(arrays)})."
            )
        X = arrays[x_key]
        if label_key is not None:
            y = _labels(arrays[label_key], f"{path}: the array {label_key!r}")
    else:
        X = loaded
        if X.ndim != 2:
            raise UsageError(f"{path}: expected a 2-D array, got shape {X.shape}.")
        if target is not None:
            try:
                col = int(target)
                col = range(X.shape[1])[col]
            except (ValueError, IndexError):
                raise UsageError(
                    f"{path}: --target must be a column index from 0 to {X.shape[1] - 1} "
                    f"(or negative) for a .npy file; got {target!r}."
                ) from None
            y = _labels(X[:, col], f"{path}: column {col}")
            X = np.delete(X, col, axis=1)
    if need_target and y is None:
        raise UsageError(f"{path}: give the labels with --target.")
    if X.ndim == 3:  # a stack of images
        shape = (int(X.shape[1]), int(X.shape[2]))
        X = X.reshape(X.shape[0], -1)
    else:
        shape = None
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise UsageError(
            f"{path}: features must be a numeric 2-D array; got {X.dtype} of shape {X.shape}."
        )
    if y is not None and y.shape[0] != X.shape[0]:
        raise UsageError(f"{path}: {X.shape[0]} rows of features but {y.shape[0]} labels.")
    return Dataset(X=X.astype(float), y=y, feature_names=None, image_shape=shape, source=str(path))


def _read_idx(path: Path, split: str, need_target: bool) -> Dataset:
    from ..datasets import read_idx

    if path.is_dir():
        prefix = {"train": "train", "test": "t10k"}.get(split, split)
        found = sorted(p for p in path.iterdir() if _IDX_IMAGES.match(p.name))
        chosen = [p for p in found if _IDX_IMAGES.match(p.name).group("prefix") == prefix]  # type: ignore[union-attr]
        if not chosen and len(found) == 1:
            chosen = found
        if not chosen:
            raise UsageError(
                f"{path}: no IDX images file for split {split!r} "
                f"(expected {prefix}-images-idx3-ubyte[.gz]); found: {', '.join(p.name for p in found) or 'none'}."
            )
        images_path = chosen[0]
    else:
        images_path = path
    try:
        images = read_idx(images_path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if images.ndim != 3:
        raise UsageError(
            f"{images_path}: expected an IDX file of images (3 dimensions), got {images.ndim}."
        )
    labels_path = images_path.with_name(
        re.sub(r"images([-.])idx3", r"labels\1idx1", images_path.name)
    )
    y = None
    if labels_path.is_file():
        try:
            y = read_idx(labels_path).astype(np.int64)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if y.shape[0] != images.shape[0]:
            raise UsageError(f"{labels_path}: {y.shape[0]} labels for {images.shape[0]} images.")
    elif need_target:
        raise UsageError(f"{images_path}: no labels file {labels_path.name} next to it.")
    # Pixels scaled to [0, 1], as bayesrule.datasets.load_mnist does.
    X = images.reshape(images.shape[0], -1) / 255.0
    return Dataset(
        X=X,
        y=y,
        feature_names=None,
        image_shape=(int(images.shape[1]), int(images.shape[2])),
        source=str(images_path),
    )


def _output_kind(path: Path) -> TablePath:
    try:
        return output_format(path)
    except ValueError as exc:
        raise UsageError(f"{exc} ('-' writes CSV to standard output.)") from None


def _writing(kind: TablePath, write: Callable[[], Any]) -> None:
    try:
        write()
    except ImportError as exc:
        extra = "excel" if kind.name == "Excel" else "cli"
        raise UsageError(
            f"writing {kind.name} needs {exc.name}: pip install 'bayesrule[{extra}]'"
        ) from None


def table_writer(df: Any, path: Path) -> Callable[[Path], None]:
    """A function writing ``df`` in the format of ``path``'s suffixes (for :func:`write_files`).

    Every format a table is read from can be written: CSV and TSV (compressed
    by suffix: ``.csv.gz``, ``.tsv.xz``, ...), Parquet, JSON lines and
    Excel; ``-`` (and a device such as ``/dev/null``) takes CSV.
    """
    return block_writer([df], path)


def block_writer(blocks: Any, path: Path) -> Callable[[Path], None]:
    """A function writing an iterable of DataFrames, one after the other, as one table.

    The format follows the suffixes of ``path``, as for :func:`table_writer`;
    the blocks are written as they come, so memory holds one block (an Excel
    file is written whole).
    """
    kind = _output_kind(path)

    def write(target: Path) -> None:
        _writing(kind, lambda: write_frames(blocks, target, kind, name=_member_name(path)))

    return write


def _member_name(path: Path) -> str:
    """The name of the file inside a ``.zip`` archive: the archive's name without ``.zip``."""
    return path.name[: -len(".zip")] if path.name.lower().endswith(".zip") else path.name


def write_table(df: Any, path: Path) -> None:
    """Write a DataFrame in the format of ``path``'s suffixes; all or nothing.

    ``-`` writes CSV to standard output.
    """
    write_files({path: table_writer(df, path)})


Content: TypeAlias = bytes | Callable[[Path], None]


def write_files(files: Mapping[Path, Content]) -> None:
    """Write every file in full, or none of them.

    Each file is first written to a temporary file next to it; only when all
    are written are they renamed over their paths. A failure (a full disk, a
    directory that cannot be written, an interrupt) removes the temporary
    files and leaves the paths as they were. A path that is not a regular
    file (``/dev/null``, a named pipe) is written directly, never replaced;
    ``-`` is standard output.

    Parameters
    ----------
    files : mapping of Path to bytes or callable
        The content of each file, or a function that writes it to the path
        it is given.
    """
    for path in files:
        if path == STDIN:
            continue
        if not path.parent.is_dir():
            raise UsageError(f"{path}: the directory {path.parent} does not exist.")
        if path.is_dir():
            raise UsageError(f"{path}: is a directory.")
    staged: list[tuple[Path, Path]] = []
    direct: list[tuple[Path, Content]] = []
    try:
        for path, content in files.items():
            if path == STDIN or (path.exists() and not path.is_file()):
                direct.append((path, content))
                continue
            try:
                fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            except OSError as exc:
                raise UsageError(f"{path}: cannot write there ({exc.strerror}).") from None
            os.close(fd)
            tmp = Path(name)
            staged.append((tmp, path))
            _write(tmp, content)
            _chmod_like_new_file(tmp, path)
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for path, content in direct:
        _write(path, content)


def _write(path: Path, content: Content) -> None:
    if isinstance(content, bytes) and path == STDIN:
        sys.stdout.flush()
        sys.stdout.buffer.write(content)
        sys.stdout.buffer.flush()
    elif isinstance(content, bytes):
        with open(path, "wb") as fh:
            fh.write(content)
    else:
        content(path)


def _chmod_like_new_file(tmp: Path, path: Path) -> None:
    """mkstemp makes files readable by their owner only; give the usual permissions."""
    if path.is_file():
        mode = path.stat().st_mode & 0o7777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)
