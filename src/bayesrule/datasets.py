"""Readers for the data sets the demo, tests and benchmarks use.

bayesrule ships no data. MNIST is read from IDX files (gzip-compressed or
not) in a directory given by the caller, the ``BAYESRULE_DATA`` environment
variable, or ``../shared/datasets/mnist``; nothing is downloaded.
"""

from __future__ import annotations

import lzma
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["find_mnist", "load_mnist", "read_idx", "wine_split"]

_MNIST_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}


def read_idx(path: str | os.PathLike[str]) -> NDArray[np.uint8]:
    """Read an IDX file of unsigned bytes (images: magic 2051, labels: 2049).

    The file may be compressed; its last suffix says how, as for a table
    (:func:`bayesrule.io.formats.compression_of`: ``.gz``, ``.bz2``, ...).

    Raises ValueError naming the file when the header or the length is wrong.
    """
    from .io.formats import compression_of, open_input

    path = Path(path)
    try:
        # compressed by its suffix (.gz, .GZ, .bz2, ...), as every table is read
        with open_input(path, compression_of(path)) as fh:
            data = fh.read()
    except (OSError, EOFError, ValueError, lzma.LZMAError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: cannot read IDX file ({exc}).") from None
    if len(data) < 8:
        raise ValueError(f"{path}: too short to be an IDX file ({len(data)} bytes).")
    zero, dtype_code, ndim = data[0:2], data[2], data[3]
    if zero != b"\x00\x00" or dtype_code != 0x08 or ndim not in (1, 3):
        raise ValueError(
            f"{path}: not an IDX file of unsigned bytes (magic {int.from_bytes(data[:4], 'big')}; "
            "expected 2049 for labels or 2051 for images)."
        )
    dims = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    offset = 4 + 4 * ndim
    expected = int(np.prod(dims))
    if len(data) - offset != expected:
        raise ValueError(
            f"{path}: header announces {expected} bytes of data for shape {dims}, "
            f"but the file holds {len(data) - offset}."
        )
    return np.frombuffer(data, dtype=np.uint8, offset=offset).reshape(dims)


def find_mnist(path: str | os.PathLike[str] | None = None) -> Path | None:
    """The first directory holding the four MNIST files, or None.

    A ``path`` given is the only place looked at (itself or its ``mnist``
    subfolder): a wrong path is never silently replaced by another copy.
    Without one, looks at ``$BAYESRULE_DATA`` (itself or its ``mnist``
    subfolder), then ``../shared/datasets/mnist`` from the working directory
    and from the source checkout.
    """
    candidates: list[Path] = []
    if path is not None:
        candidates += [Path(path), Path(path) / "mnist"]
    else:
        env = os.environ.get("BAYESRULE_DATA")
        if env:
            candidates += [Path(env), Path(env) / "mnist"]
        candidates.append(Path.cwd().parent / "shared" / "datasets" / "mnist")
        candidates.append(Path(__file__).resolve().parents[3] / "shared" / "datasets" / "mnist")
    for c in candidates:
        if all(_locate(c, name) is not None for name in _MNIST_FILES.values()):
            return c
    return None


def _locate(folder: Path, stem: str) -> Path | None:
    for name in (stem + ".gz", stem):
        if (folder / name).is_file():
            return folder / name
    return None


def load_mnist(
    path: str | os.PathLike[str] | None = None, *, scale: bool = True
) -> tuple[NDArray[Any], NDArray[np.int64], NDArray[Any], NDArray[np.int64]]:
    """MNIST as ``(X_train, y_train, X_test, y_test)``: 60000 / 10000 rows of 784 pixels.

    Parameters
    ----------
    path : directory, optional
        Where the IDX files are (itself or its ``mnist`` subfolder); when
        given, nowhere else is looked at. Default: see :func:`find_mnist`.

    Raises
    ------
    FileNotFoundError
        Naming the directory when the four files are not there.
    scale : bool, default=True
        Pixels as float64 in [0, 1]; otherwise the raw uint8 values.
    """
    folder = find_mnist(path)
    if folder is None:
        if path is not None:
            where = str(path) if Path(path).is_dir() else f"{path} (no such directory)"
        else:
            where = os.environ.get("BAYESRULE_DATA") or "../shared/datasets/mnist"
        raise FileNotFoundError(
            f"MNIST not found in {where}: expected the four IDX files "
            f"({', '.join(v + '[.gz]' for v in _MNIST_FILES.values())}). Give the directory "
            "or set BAYESRULE_DATA; bayesrule does not download data."
        )
    arrays = {k: read_idx(_locate(folder, v)) for k, v in _MNIST_FILES.items()}  # type: ignore[arg-type]

    def images(a: NDArray[np.uint8]) -> NDArray[Any]:
        flat = a.reshape(a.shape[0], -1)
        return flat / 255.0 if scale else flat

    return (
        images(arrays["train_images"]),
        arrays["train_labels"].astype(np.int64),
        images(arrays["test_images"]),
        arrays["test_labels"].astype(np.int64),
    )


def wine_split(
    random_state: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """scikit-learn's wine data split 118 train / 60 test, stratified, seeded."""
    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split

    X, y = load_wine(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=60, stratify=y, random_state=random_state)
    return Xtr, ytr, Xte, yte
