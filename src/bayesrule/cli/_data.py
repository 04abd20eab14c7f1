"""Reading data sets and writing tables for the command line.

Every problem a user can cause — a missing file, an unknown column, a file
of another format — raises :class:`UsageError` with one line that names the
file or column; the command turns it into exit code 2.
"""

from __future__ import annotations

from pathlib import Path

from ..io.formats import (
    COMPRESSIONS,
    suffix_help,
)

__all__ = [
    "ARRAY_SUFFIXES",
    "ReadOptions",
    "is_table",
    "na_values_for",
    "read_options",
    "use_read_options",
    "COMPRESSIONS",
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


from ._arrays import _read_array, _read_idx
from ._dataset import (
    _IDX_IMAGES,
    ARRAY_SUFFIXES,
    STDIN,
    Columns,
    Dataset,
    ReadOptions,
    UsageError,
    is_table,
    match_columns,
    na_values_for,
    read_options,
    split_names,
    use_read_options,
)
from ._read_table import read_frame
from ._select import index_column, select
from ._write import Content, block_writer, table_writer, write_files, write_table


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
