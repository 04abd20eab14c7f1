"""Reading .npy and .npz arrays and IDX image files."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ._dataset import _IDX_IMAGES, Dataset, UsageError, _labels


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
