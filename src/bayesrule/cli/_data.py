"""Reading data sets and writing tables for the command line.

Every problem a user can cause — a missing file, an unknown column, a file
of another format — raises :class:`UsageError` with one line that names the
file or column; the command turns it into exit code 2.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Content",
    "Dataset",
    "UsageError",
    "read_data",
    "table_writer",
    "write_files",
    "write_table",
]

TABLE_SUFFIXES = {".csv": "CSV", ".parquet": "Parquet", ".pq": "Parquet"}
ARRAY_SUFFIXES = {".npy", ".npz"}
_IDX_IMAGES = re.compile(r"^(?P<prefix>.*)-images[-.]idx3-ubyte(\.gz)?$")


class UsageError(Exception):
    """A problem with the user's input: reported on one line, exit code 2."""


@dataclass
class Dataset:
    """Features, optional labels, and what is known about their layout.

    ``X`` is a pandas DataFrame for CSV and Parquet (so that column names reach
    the model) and a float array otherwise.
    """

    X: Any
    y: NDArray[Any] | None
    feature_names: list[str] | None
    image_shape: tuple[int, int] | None
    source: str

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def rows(self, sl: slice) -> Any:
        """A block of rows of ``X`` (for fitting in chunks)."""
        return self.X.iloc[sl] if hasattr(self.X, "iloc") else self.X[sl]


def _labels(values: Any, what: str) -> NDArray[Any]:
    """Labels as a plain NumPy array: strings as unicode, never ``object``."""
    y = np.asarray(values)
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


def read_data(
    path: Path,
    target: str | None = None,
    *,
    split: str = "train",
    need_target: bool = False,
    features: list[str] | None = None,
) -> Dataset:
    """Read CSV, Parquet, .npy, .npz, or MNIST-style IDX files.

    Parameters
    ----------
    path : Path
        A file, or a directory of IDX files (``<split>-images-idx3-ubyte[.gz]``
        and the matching labels; ``split`` "test" reads the ``t10k`` files).
    target : str, optional
        The label column (CSV/Parquet), column index (.npy) or array name (.npz).
        Ignored for IDX data, whose labels come from the labels file.
    need_target : bool
        Whether labels are required.
    features : list of str, optional
        Column names the model was fitted with; they are selected in that order.
    """
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory.")
    if path.is_dir() or _IDX_IMAGES.match(path.name):
        return _read_idx(path, split, need_target)
    suffix = path.suffix.lower()
    if suffix in TABLE_SUFFIXES:
        return _read_table(path, suffix, target, need_target, features)
    if suffix in ARRAY_SUFFIXES:
        return _read_array(path, suffix, target, need_target)
    raise UsageError(
        f"{path}: unsupported data format {suffix or '(no suffix)'!r}; expected .csv, .parquet, "
        ".npy, .npz or a directory of IDX files."
    )


def _read_table(
    path: Path, suffix: str, target: str | None, need_target: bool, features: list[str] | None
) -> Dataset:
    import pandas as pd

    kind = TABLE_SUFFIXES[suffix]
    try:
        if kind == "CSV":
            df = pd.read_csv(path)
        else:
            df = pd.read_parquet(path)
    except ImportError as exc:
        raise UsageError(f"reading {kind} needs {exc.name}: pip install 'bayesrule[cli]'") from None
    except Exception as exc:  # pandas and pyarrow raise many types for a foreign file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"{path}: not a readable {kind} file ({first}).") from None
    df.columns = [str(c) for c in df.columns]
    if df.shape[0] == 0:
        raise UsageError(f"{path}: the file has no rows.")
    y = None
    if target is not None:
        if target not in df.columns:
            raise UsageError(
                f"{path}: no column {target!r} for --target; columns are: {', '.join(df.columns[:30])}."
            )
        y = _labels(df[target].to_numpy(), f"{path}: the target column {target!r}")
    elif need_target:
        raise UsageError(f"{path}: give the label column with --target.")
    if features is not None:
        missing = [c for c in features if c not in df.columns]
        if missing:
            raise UsageError(
                f"{path}: the model needs the column(s) {', '.join(missing[:10])}, which the file lacks."
            )
        cols = list(features)
    else:
        cols = [c for c in df.columns if c != target]
    bad = [c for c in cols if not pd.api.types.is_numeric_dtype(df[c])]
    if bad:
        raise UsageError(
            f"{path}: column(s) {', '.join(repr(c) for c in bad[:10])} are not numeric; "
            "bayesrule models take numeric features (encode categories as integers)."
        )
    if not cols:
        raise UsageError(f"{path}: no feature columns besides the target {target!r}.")
    X = df[cols].astype(float)
    return Dataset(X=X, y=y, feature_names=cols, image_shape=None, source=str(path))


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


def table_writer(df: Any, path: Path) -> Callable[[Path], None]:
    """A function writing ``df`` as CSV or Parquet (by the suffix of ``path``) to a given file."""
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise UsageError(f"{path}: cannot write {suffix or '(no suffix)'!r}; use .csv or .parquet.")
    if TABLE_SUFFIXES[suffix] == "CSV":
        return lambda tmp: df.to_csv(tmp, index=False)

    def to_parquet(tmp: Path) -> None:
        try:
            df.to_parquet(tmp, index=False)
        except ImportError as exc:
            raise UsageError(
                f"writing Parquet needs {exc.name}: pip install 'bayesrule[cli]'"
            ) from None

    return to_parquet


def write_table(df: Any, path: Path) -> None:
    """Write a DataFrame as CSV or Parquet, chosen by the suffix of ``path``; all or nothing."""
    write_files({path: table_writer(df, path)})


Content: TypeAlias = bytes | Callable[[Path], None]


def write_files(files: Mapping[Path, Content]) -> None:
    """Write every file in full, or none of them.

    Each file is first written to a temporary file next to it; only when all
    are written are they renamed over their paths. A failure (a full disk, a
    directory that cannot be written, an interrupt) removes the temporary
    files and leaves the paths as they were. A path that is not a regular
    file (``/dev/null``, a named pipe) is written directly, never replaced.

    Parameters
    ----------
    files : mapping of Path to bytes or callable
        The content of each file, or a function that writes it to the path
        it is given.
    """
    for path in files:
        if not path.parent.is_dir():
            raise UsageError(f"{path}: the directory {path.parent} does not exist.")
        if path.is_dir():
            raise UsageError(f"{path}: is a directory.")
    staged: list[tuple[Path, Path]] = []
    direct: list[tuple[Path, Content]] = []
    try:
        for path, content in files.items():
            if path.exists() and not path.is_file():
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
    if isinstance(content, bytes):
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
