"""Dask collections as row blocks: X's blocks, y and weights cut to match, labels, schema.

A fit summarises each row block of ``X`` with the matching pieces of ``y``
and ``sample_weight``; these helpers find the blocks (as delayed objects),
align the other arguments to them, find the labels in one pass over ``y``,
and read the features' schema (count, names, dtype) from the collection's
metadata without computing it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...estimators.seam import Schema

__all__ = [
    "align",
    "check_fitted_features",
    "find_classes",
    "frame_parts",
    "first_block",
    "is_array",
    "is_collection",
    "is_frame",
    "n_rows",
    "rows_of",
    "schema_of",
    "split_in_memory",
    "what",
]


def is_array(x: Any) -> bool:
    import dask.array as da

    return isinstance(x, da.Array)


def is_frame(x: Any) -> bool:
    """A Dask DataFrame or Series (only possible once dask.dataframe is imported)."""
    if "dask.dataframe" not in sys.modules:
        return False
    import dask.dataframe as dd

    return isinstance(x, (dd.DataFrame, dd.Series))


def is_collection(x: Any) -> bool:
    from dask import is_dask_collection

    return is_dask_collection(x)


def what(x: Any) -> str:
    """``module.Type`` of ``x``, for messages."""
    return f"{type(x).__module__.split('.')[0]}.{type(x).__name__}"


def n_rows(X: Any) -> int:
    return int(X.shape[0])


def rows_of(X: Any, est: Any) -> tuple[list[Any], tuple[float, ...] | None]:
    """X's row blocks (delayed) and their lengths when known."""
    if is_array(X):
        if X.ndim != 2:
            raise ValueError(
                f"X must be 2-dimensional (n_samples, n_features); got a Dask array of shape "
                f"{X.shape}."
            )
        if len(X.chunks[1]) > 1:  # a block holds every feature of its rows
            X = X.rechunk({1: -1})
        lengths = X.chunks[0]
        known = all(not np.isnan(n) for n in lengths)
        return list(X.to_delayed().ravel()), (lengths if known else None)
    if is_frame(X):
        if getattr(X, "ndim", 2) != 2:
            raise ValueError(
                "X must be 2-dimensional (n_samples, n_features); got a Dask Series. Use "
                "series.to_frame()."
            )
        return frame_parts(X), None
    raise TypeError(
        f"{type(est).__name__} takes a Dask array or DataFrame X with Dask y; got X of type "
        f"{what(X)}. Pass X as a Dask collection too (e.g. dask.array.from_array(X, chunks=...))."
    )


def frame_parts(df: Any) -> list[Any]:
    """A Dask DataFrame's or Series' partitions as declared (``npartitions`` of them).

    The optimised graph may fuse partitions, and differently for different
    column selections of one Parquet read (X's features and y's one column),
    so that the pieces of X and y would no longer hold the same rows.
    """
    return list(df.to_delayed(optimize_graph=False))


def split_in_memory(v: Any, lengths: Sequence[float], name: str) -> list[Any]:
    """An in-memory ``v`` cut into pieces of ``lengths`` rows."""
    arr = np.asarray(v)
    total = int(sum(lengths))
    if arr.shape[:1] != (total,):
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: X has {total} rows, "
            f"{name} has {arr.shape[0] if arr.ndim else 'no'} entries."
        )
    bounds = np.cumsum([0, *[int(n) for n in lengths]])
    return [arr[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def align(
    v: Any, name: str, xs: list[Any], lengths: tuple[float, ...] | None
) -> tuple[list[Any], tuple[float, ...] | None]:
    """``v`` (y or sample_weight) cut into pieces that match X's row blocks."""
    nb = len(xs)
    if v is None:
        return [None] * nb, lengths
    if is_array(v):
        if v.ndim not in (1, 2):
            raise ValueError(f"{name} must be 1-dimensional; got a Dask array of shape {v.shape}.")
        v_known = all(not np.isnan(n) for n in v.chunks[0])
        if lengths is not None and v_known:
            if int(sum(v.chunks[0])) != int(sum(lengths)):
                raise ValueError(
                    f"Found input variables with inconsistent numbers of samples: X has "
                    f"{int(sum(lengths))} rows, {name} has {int(sum(v.chunks[0]))} entries."
                )
            v = v.rechunk((lengths,) + ((-1,) if v.ndim == 2 else ()))
        elif v.numblocks[0] != nb:
            raise ValueError(
                f"X and {name} have unknown block lengths and different numbers of blocks "
                f"({nb} and {v.numblocks[0]}); give them the same row blocks (e.g. both from "
                "one DataFrame) or call compute_chunk_sizes() on the arrays."
            )
        return list(v.to_delayed().ravel()), lengths
    if is_frame(v):
        if v.npartitions == nb:
            return frame_parts(v), lengths
        if lengths is not None:
            return align(v.to_dask_array(lengths=True), name, xs, lengths)
        raise ValueError(
            f"X has {nb} partitions and {name} {v.npartitions}; give them the same partitions "
            "(e.g. both columns of one Dask DataFrame)."
        )
    if is_collection(v):
        raise TypeError(f"{name} must be a Dask array or Series; got {what(v)}.")
    if lengths is None:  # the block lengths of X: a pass over X, of which only lengths travel
        import dask

        lengths = tuple(float(n) for n in dask.compute(*[dask.delayed(n_rows)(x) for x in xs]))
    return split_in_memory(v, lengths, name), lengths


def _labels(y: Any) -> Any:
    """The distinct labels of a block of y (checked as ``fit`` checks them)."""
    from ..._util.validation import check_labels

    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    check_labels(arr)
    return np.unique(arr)


def find_classes(ys: list[Any]) -> Any:
    """The labels of every piece of y: one pass over y alone (no BLAS), the union on the client."""
    import dask

    from ...stats import as_classes

    found = dask.compute(*[dask.delayed(_labels, pure=True)(yb) for yb in ys])
    return as_classes(np.concatenate([np.asarray(f) for f in found]))


def first_block(X: Any, xs: list[Any], *, compute: bool) -> Any:
    """What a fit's ``first_block`` is: the first block with rows, or X's metadata.

    With ``compute``, the blocks are computed in turn until one has rows (that
    block's rows come to the client; None when every block is empty).
    Otherwise an empty block of X's columns and dtypes, made from the
    collection's metadata without computing anything.
    """
    if compute:
        import dask

        for xb in xs:
            (block,) = dask.compute(xb)
            if n_rows(block) > 0:
                return block
        return None
    if is_frame(X):
        return X._meta
    return np.empty((0, int(X.shape[1])), dtype=X.dtype)


def _input_dtype(X: Any) -> np.dtype[Any]:
    """The dtype a validated block takes (float32 kept, everything else float64)."""
    if is_array(X):
        dtypes = [X.dtype]
    else:
        dtypes = list(getattr(X, "dtypes", [getattr(X, "dtype", np.float64)]))
    try:
        if dtypes and all(np.dtype(d) == np.float32 for d in dtypes):
            return np.dtype(np.float32)
    except TypeError:  # an extension dtype (strings, categories)
        pass
    return np.dtype(np.float64)


def schema_of(X: Any) -> Schema:
    """The features of a Dask collection: count, names (a table's string columns), dtype."""
    names = None
    columns = getattr(X, "columns", None)
    if columns is not None and hasattr(X, "dtypes"):
        listed = np.asarray(list(columns), dtype=object)
        if listed.size and all(isinstance(n, str) for n in listed):
            names = listed
    return Schema(int(X.shape[1]), names, _input_dtype(X))


def check_fitted_features(est: Any, X: Any) -> None:
    """The fitted estimator's feature count and names against a Dask collection's.

    Checked on the client from the collection's metadata, as scikit-learn
    checks an in-memory block (``n_features_in_``, ``feature_names_in_``).
    """
    from sklearn.utils.validation import validate_data

    p = int(X.shape[1])
    if p != est.n_features_in_:
        raise ValueError(
            f"X has {p} features, but {type(est).__name__} is expecting {est.n_features_in_} "
            "features as input."
        )
    meta = X._meta if is_frame(X) else np.empty((0, p))
    validate_data(est, meta, reset=False, skip_check_array=True)
