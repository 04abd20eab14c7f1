"""Fits of several passes over the data, out of core.

Most estimators summarise each block of rows once and merge the summaries.
An estimator with ``_multi_pass = True`` (mixture discriminant analysis,
whose EM needs one pass per iteration) instead writes its fit once as
``est._fit_passes(reduce, classes=...)``: it calls ``reduce(task)`` once per
pass, where ``task(X, y, sample_weight)`` summarises one raw block (checking
it as ``fit`` does; ``None`` for a block without rows) into a value with
``merge``, and ``reduce`` returns the merge of every block's summary. This
module gives ``reduce`` for the stream backend, :func:`fit_stream_passes`:
the source is read again for every pass, one block at a time, so it must be
re-readable (files, a list of blocks, or a callable returning a fresh
iterable of blocks). (The Dask backend needs nothing of its own for these
fits: it gives ``est.fit_plan`` its one ``reduce``; see
:mod:`bayesrule.backends.dask.fit`.)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

__all__ = ["fit_stream_passes"]


def _several_passes(name: str) -> str:
    return (
        f"{name} is fitted by EM, which reads the data several times (one pass per "
        "iteration; see its n_passes_)"
    )


def _reopener(source: Any, name: str) -> Callable[[], Any]:
    """A function giving the source afresh for every pass; ValueError for a one-shot iterator."""
    from .stream import _files

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
            f"{_several_passes(name)}, and an iterator can be read only once. Pass files (a "
            "path, list of paths, glob or directory), a list of (X, y) blocks, or a callable "
            "that returns a fresh iterator of blocks each time it is called."
        )
    return lambda: source


def fit_stream_passes(
    estimator: Any,
    source: Any,
    *,
    target: Any,
    features: Any,
    weight: Any,
    block_rows: int | None,
    classes: Any,
    partial: bool,
    dtypes: dict[str, Any] | None,
    progress: bool | None,
    **read: Any,
) -> Any:
    """:func:`bayesrule.fit_stream` for an estimator fitted in several passes.

    Every pass reads the source from the start; the blocks are checked as
    :func:`~bayesrule.fit_stream` checks them (the same features in every
    block) and errors name the file or block and the row. The estimator is
    left unchanged if the fit fails.
    """
    from sklearn.base import clone

    from .stream import (
        _files,
        _install,
        _listing,
        _located,
        _n_rows,
        _open,
        _prefetched,
        _Progress,
        _schema_of,
    )

    name = type(estimator).__name__
    if partial:
        raise ValueError(
            f"partial=True adds a source to a fitted model's statistics, but "
            f"{_several_passes(name)} and the components of two EM fits do not correspond: "
            "call fit_stream without partial=True to refit on all the data."
        )
    if _files(source) is not None and target is None:
        raise ValueError("target must name the label column of the files.")
    opener = _reopener(source, name)
    proto = clone(estimator)
    proto._validate_params()
    schema: tuple[Any, ...] | None = None
    passes = [0]

    def reduce(task: Any) -> Any:
        nonlocal schema
        passes[0] += 1
        reader = _open(
            opener(),
            features=features,
            target=target,
            weight=weight,
            block_rows=block_rows,
            dtypes=dtypes,
            reuse=True,
            **read,  # sep, decimal, na_values
        )
        total: Any = None
        label = f"fitting {name}, pass {passes[0]}"
        with _Progress(reader, progress, label) as bar, warnings.catch_warnings():
            # blocks read from files are arrays; their names are checked here, once
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            for chunk in _prefetched(reader.chunks):
                if chunk.y is None:
                    raise ValueError(f"{chunk.where}: the block has no labels (target).")
                block_schema = _schema_of(chunk.X, chunk.names)
                if schema is None:
                    schema = block_schema
                elif block_schema[0] != schema[0]:
                    raise ValueError(
                        f"{chunk.where}: the block has {block_schema[0]} features, but the "
                        f"first block had {schema[0]}."
                    )
                elif (block_schema[1] is None) != (schema[1] is None) or (
                    schema[1] is not None and list(block_schema[1]) != list(schema[1])
                ):
                    raise ValueError(
                        f"{chunk.where}: the block's columns {_listing(block_schema[1] or [])} "
                        f"differ from the first block's {_listing(schema[1] or [])}."
                    )
                try:
                    part = task(chunk.X, chunk.y, chunk.w)
                except ValueError as exc:
                    raise _located(exc, chunk) from exc
                if part is not None:
                    total = part if total is None else total.merge(part)
                bar.advance(chunk, _n_rows(chunk.X))
        if total is None and passes[0] == 1:
            raise ValueError("the source holds no rows: nothing to fit.")
        return total

    stats = proto._fit_passes(reduce, classes=classes)
    assert schema is not None
    names = None if schema[1] is None else np.asarray(schema[1], dtype=object)
    _install(estimator, stats, (schema[0], names, np.dtype(schema[2])))
    return estimator
