"""Fitting any estimator from a streamed source: :func:`fit_stream`.

The backend knows the estimators through the public seam only
(:mod:`bayesrule.estimators.seam`): ``input_spec()`` says how the blocks are
read, ``fit_plan(reduce, ...)`` runs the passes (one for most estimators, one
per EM pass for mixture discriminant analysis) with the
:class:`~.passes.StreamReduce` of the source, and ``fit_statistics`` installs
the result.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._util import parallel as _parallel
from ..._util.validation import TooFewRows
from ...estimators.seam import Schema
from .blocks import PIPELINE, PREFETCH, _Chunk
from .passes import StreamReduce, reopener, several_passes
from .reader import _open
from .sources import _files, _listing

__all__ = ["MAX_VALUES", "fit_stream"]

#: KernelNB's default bound on the distinct values kept per feature
MAX_VALUES = 2048


def fit_stream(
    estimator: Any,
    source: Any,
    *,
    target: Any = None,
    features: Any = None,
    weight: Any = None,
    block_rows: int | None = None,
    classes: Any = None,
    partial: bool = False,
    max_values: int | None = MAX_VALUES,
    dtypes: dict[str, Any] | None = None,
    progress: bool | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    na_values: str | Sequence[str] | None = None,
) -> Any:
    """Fit any bayesrule estimator from a source larger than memory, one block at a time.

    Each block is summarised by the estimator's task (``estimator.fit_plan``
    gives it; for most estimators the block's ``statistics``) and the summaries
    are merged (classes are united as they appear); the model is derived once
    at the end. The result equals ``estimator.fit`` on all the rows at once, to
    rounding; memory is bounded by one block and the statistics.

    Parameters
    ----------
    estimator : GenerativeClassifier
        Its hyperparameters are used; it is fitted in place and returned.
    source : path, list of paths, glob, directory, or iterable of blocks
        Files as for :func:`read_blocks`, or any iterable of ``(X, y)`` or
        ``(X, y, sample_weight)`` blocks (arrays or DataFrames).
        :class:`~bayesrule.MixtureDiscriminantAnalysis` reads the source once
        per EM pass (its ``n_passes_``): give it files, a list of blocks, or a
        callable returning a fresh iterable of blocks (a generator is refused).
    target : str, int, path or array
        The label column (required for files).
    features, weight, block_rows, dtypes, sep, decimal, na_values
        As for :func:`read_blocks`. :class:`~bayesrule.MixedNB` reads the
        features as DataFrames with their own dtypes (strings, categories).
    classes : array-like, optional
        Labels to declare (a class may have no row). By default the classes
        are those found in the data, united block by block.
    partial : bool, default=False
        Add the source to an already fitted estimator (as ``partial_fit``
        does) instead of fitting from scratch.
    max_values : int or None, default=2048
        :class:`~bayesrule.KernelNB` only: at most this many distinct values
        are kept per feature. A feature with more is binned onto the grid of
        power-of-two width ``h`` with at most ``max_values`` cells over its
        range, each value moved to its cell's centre (by at most ``h / 2``);
        data with few distinct values (counts, grey levels) stay exact. The
        grid depends on the data only, so the result equals ``fit`` on the
        binned data whatever the order of the blocks. For a fixed bandwidth
        ``b`` every class density moves by at most
        ``h / (2 b^2 sqrt(2 pi e))`` (see ``docs/scale-out.md``). ``None``
        keeps every value (exact, memory growing with the data).
        :class:`~bayesrule.MixedNB` with 'kernel' columns needs ``None``.
    progress : bool or None
        Show a progress bar on stderr (rows, MB/s, time left when the size
        is known); by default when stderr is a terminal and rich is installed.

    Returns
    -------
    estimator
        Fitted. If the fit fails part-way, the estimator is left exactly as
        it was (unfitted, or as fitted before with ``partial=True``).
    """
    from sklearn.base import clone

    if not all(hasattr(estimator, m) for m in ("input_spec", "fit_plan", "fit_statistics")):
        raise TypeError(f"estimator must be a bayesrule estimator; got {type(estimator).__name__}.")
    spec = estimator.input_spec()
    name = type(estimator).__name__
    if spec.multi_pass:  # EM: the source is read once per pass
        if partial:
            raise ValueError(
                f"partial=True adds a source to a fitted model's statistics, but "
                f"{several_passes(name)} and the components of two EM fits do not correspond: "
                "call fit_stream without partial=True to refit on all the data."
            )
    elif max_values is not None and (
        isinstance(max_values, bool)
        or not isinstance(max_values, (int, np.integer))
        or max_values < 2
    ):
        raise ValueError(f"max_values must be an int >= 2 or None; got {max_values!r}.")
    if partial and not hasattr(estimator, "stats_"):
        raise ValueError("partial=True adds data to a fitted estimator; this one is not fitted.")
    if _files(source) is not None and target is None:
        raise ValueError("target must name the label column of the files.")
    opener = reopener(source, name) if spec.multi_pass else (lambda: source)
    proto = estimator if partial else clone(estimator)

    def read() -> Any:
        return _open(
            opener(),
            features=features,
            target=target,
            weight=weight,
            block_rows=block_rows,
            frame=spec.frame,
            dtypes=dtypes,
            sep=sep,
            decimal=decimal,
            na_values=na_values,
            reuse=True,
            order=spec.order,  # blocks laid out as the statistics work fastest on
            # Parquet blocks as Arrow's column buffers, for a task that takes them
            columns=spec.column_blocks and not spec.frame,
        )

    def first_check(schema: tuple[int, Any, Any], chunk: _Chunk) -> None:
        if partial:
            _check_partial_schema(estimator, schema, chunk)

    def refuse_kept_values(total: Any, chunk: _Chunk | None = None) -> None:
        # statistics that keep every distinct value of a column grow with the data
        kinds = getattr(total, "kinds", None)
        if max_values is not None and kinds is not None and "kernel" in list(kinds):
            j = list(kinds).index("kernel")
            names = reducer.schema[1] if reducer.schema is not None else None
            raise ValueError(
                f"{name}'s 'kernel' column {names[j] if names else j!r} keeps every distinct "
                "value, which grows with the data: model it as 'gaussian', fit KernelNB "
                "(whose streaming fit bins values), or pass max_values=None to keep them all."
            )

    budget = stream_threads()
    workers = min(PIPELINE, budget) if _side_by_side(spec, budget) else 1
    reducer = StreamReduce(
        read,
        label=f"fitting {name}",
        numbered=spec.multi_pass,
        progress=progress,
        classes=classes,
        workers=workers,
        start=estimator.stats_ if partial else None,
        first_check=first_check,
        watch=refuse_kept_values,
        prefetch=PREFETCH,
    )
    try:
        with warnings.catch_warnings():
            # blocks read from files are arrays; their names are checked here, once
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            # laid out only for an estimator that infers a choice from it (MixedNB)
            first_block = reducer.first_block(laid_out=spec.infers_from_data)
            stats = proto.fit_plan(
                reducer, first_block=first_block, classes=classes, max_values=max_values
            )
    finally:
        reducer.close()
    refuse_kept_values(stats)
    _check_size(stats, spec, name)
    schema = reducer.schema
    assert schema is not None  # the first block was read
    if partial:
        names = getattr(estimator, "feature_names_in_", None)
        dtype = _fitted_dtype(estimator)
    else:
        names = None if schema[1] is None else np.asarray(schema[1], dtype=object)
        dtype = np.dtype(np.float64 if spec.frame else schema[2])
    try:
        estimator.fit_statistics(stats, schema=Schema(int(schema[0]), names, dtype))
    except ValueError as exc:  # a refusal of the whole data: say which data
        _name_the_source(exc, source)
        raise
    return estimator


def _name_the_source(exc: ValueError, source: Any) -> None:
    """Prefix the message of ``exc`` (a plain ValueError) with the files it is about.

    A refusal made from the statistics of all the blocks (a feature whose
    squared deviations overflow, too few rows) concerns the whole source,
    not a block: it names the file, or the first and the number of files.
    An iterable of blocks has no name, and other types keep their message.
    """
    if type(exc) not in (ValueError, TooFewRows) or not exc.args:
        return
    try:
        files = _files(source)
    except (OSError, ValueError):
        return
    if not files:
        return
    where = str(files[0].path) if len(files) == 1 else f"{files[0].path} and {len(files) - 1} more"
    if not str(exc.args[0]).startswith(where):
        exc.args = (f"{where}: {exc.args[0]}", *exc.args[1:])


def stream_threads() -> int:
    """Threads a streamed fit may summarise its blocks on: the cores, not the idle ones.

    A block's summary never waits for another block (each runs on a thread
    of its own with a single-threaded BLAS, and the blocks are combined in
    order afterwards), so, as for QDA's prediction blocks
    (:func:`~bayesrule._util.parallel.prediction_threads`), a thread that
    waits for a core delays only its own block. Counting the idle cores
    instead (:func:`~bayesrule._util.parallel.thread_count`) would drop a
    whole pass to one thread whenever another process happened to be
    running at the moment the pass began, and leave a core unused by this
    fit once that process is done. ``n_threads`` (an int) and
    ``limit_blas=False`` with a multi-threaded BLAS are obeyed as there.
    """
    return _parallel.prediction_threads(_parallel.PARALLEL_MIN_WORK)


def _side_by_side(spec: Any, threads: int) -> bool:
    """Whether the blocks of a streamed fit are summarised side by side, each on one thread.

    As the estimator's ``input_spec`` says; and, with few threads (at most
    ``PIPELINE``), also for a statistic that would spread each block over
    the threads itself (``block_parallel``, the discriminant analyses'
    scatter): a stream has another block ready while one is summarised,
    and two blocks on a thread each keep both cores busy while the
    read-ahead thread takes its share, where one block split over two
    threads waits at its end for the slower half (the one that shared its
    core with the reading). With more threads, one block at a time spread
    over all of them uses them better. Not for DataFrame blocks (MixedNB:
    one after another, as its spec says) nor for fits that read the
    source several times (EM).
    """
    if spec.side_by_side:
        return True
    statistic = spec.statistic
    return bool(
        getattr(statistic, "block_parallel", False)
        and threads <= PIPELINE
        and not spec.frame
        and not spec.multi_pass
    )


def _check_size(stats: Any, spec: Any, name: str) -> None:
    """The fewest classes and rows the estimator needs (``input_spec``), in the source's words."""
    n_classes = getattr(stats, "n_classes", None)
    if n_classes is not None and n_classes < spec.min_classes:
        raise ValueError(
            f"{name} needs at least {spec.min_classes} classes; the "
            f"source has {n_classes} ({stats.classes.tolist()[:10]})."
        )
    counts = getattr(stats, "counts", None)
    n = 0 if counts is None else int(np.sum(counts))
    if 0 < n < spec.min_samples:
        raise ValueError(f"the source has {n} row(s); {name} needs at least {spec.min_samples}.")


def _fitted_dtype(est: Any) -> np.dtype[Any]:
    """The dtype of the data a fitted estimator was fitted on."""
    return np.dtype(est.fit_schema().dtype)


def _check_partial_schema(est: Any, schema: tuple[Any, ...], chunk: _Chunk) -> None:
    if schema[0] != est.n_features_in_:
        raise ValueError(
            f"{chunk.where}: the source has {schema[0]} features, but the model was fitted with "
            f"{est.n_features_in_}."
        )
    fitted = getattr(est, "feature_names_in_", None)
    if fitted is not None and schema[1] is not None and list(fitted) != list(schema[1]):
        raise ValueError(
            f"{chunk.where}: the source's feature columns {_listing(schema[1])} are not those the "
            f"model was fitted with, {_listing([str(n) for n in fitted])}."
        )
