"""Fitting on Dask collections and predicting lazily: the Dask backend.

Every estimator that is fitted from mergeable statistics accepts Dask arrays
and Dask DataFrames (with a Dask array or Series ``y``) in ``fit``,
``partial_fit``, ``forget`` and ``statistics``. Each row block is summarised
where it lives by a pure task, ``est.statistics(X_block, y_block,
sample_weight=w_block, classes=classes)`` on an unfitted clone of the
estimator, and the statistics are merged in a tree of ``merge`` tasks; only
the merged statistics reach the client, which installs them exactly as
``from_stats`` does. The labels are found first, in one pass over ``y``
alone, unless ``classes`` is given. As the block tasks are pure, a block
lost with a worker is simply summarised again.

The predictions (``predict``, ``predict_proba``, ``predict_log_proba``,
``predict_joint_log_proba``, ``decision_function``, ``score_samples``,
``class_log_density`` and LDA's ``transform``) of a Dask collection are lazy
Dask arrays with one block per row block of the input.

Threads: a task runs with the worker's share of the cores
(:func:`task_threads`): one thread when the worker runs several tasks at once,
the library's ``'auto'`` policy when it runs one. Tasks that run beside
others in one process never change the BLAS's process-wide thread count; a
fit holds one single-threaded BLAS limit from the calling thread while its
tasks run, and restores it (see :func:`_task_settings`).

Nothing here is imported unless a Dask collection is passed, ``sample`` is
asked for Dask arrays, or :func:`client_for` is called; Dask itself is an
optional dependency (``pip install 'bayesrule[dask]'``).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..._util.config import config_context, get_config
from ..._util.dispatch import register_handler
from ..._util.parallel import available_cores

__all__ = ["client_for", "collection_statistics", "lazy_method", "sample", "task_threads"]

#: how many statistics one merge task combines
SPLIT_EVERY = 8

_HINT = "pip install 'bayesrule[dask]'"


def _require(what: str = "this") -> None:
    """ImportError with the install hint when Dask is missing."""
    try:
        import dask.array  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{what} needs Dask, which is not installed: {_HINT}") from exc


# ---------------------------------------------------------------------------------
# connecting
# ---------------------------------------------------------------------------------
@contextlib.contextmanager
def client_for(address: str | None, *, timeout: float = 10.0) -> Iterator[Any]:
    """A ``distributed.Client`` for the block, the default for every Dask computation in it.

    Parameters
    ----------
    address : str or None
        The scheduler's address (``"tcp://scheduler:8786"``); ``"local"``
        starts a ``LocalCluster`` of worker processes on this machine for the
        block; ``None`` yields ``None`` and changes nothing (Dask's local
        scheduler runs the work).
    timeout : float, default=10
        Seconds to wait for the scheduler.

    Raises
    ------
    ImportError
        Dask or distributed is missing (``pip install 'bayesrule[dask]'``).
    OSError
        The scheduler cannot be reached, naming the address.
    """
    if address is None:
        yield None
        return
    if not isinstance(address, str) or not address.strip():
        raise ValueError(
            f"address must be a scheduler address such as 'tcp://host:8786'; got {address!r}."
        )
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise ImportError(
            f"a Dask scheduler needs distributed, which is not installed: {_HINT}"
        ) from exc
    with contextlib.ExitStack() as stack:
        if address.strip() == "local":
            cluster = stack.enter_context(LocalCluster(processes=True))
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = Client(address.strip(), timeout=timeout)
            except (OSError, TimeoutError) as exc:
                raise OSError(
                    f"cannot connect to the Dask scheduler at {address!r} within {timeout:g} s: "
                    f"{exc}"
                ) from None
            stack.enter_context(client)
        yield client


# ---------------------------------------------------------------------------------
# threads inside a task
# ---------------------------------------------------------------------------------
def _worker() -> Any:
    """The distributed worker running the calling task, or None."""
    if "distributed" not in sys.modules:
        return None
    from distributed import get_worker

    try:
        return get_worker()
    except ValueError:
        return None


def _task_share() -> tuple[int | str, bool]:
    """The ``n_threads`` of a task, and whether other tasks run beside it in this process."""
    worker = _worker()
    if worker is not None:
        state = getattr(worker, "state", None)
        n = int(getattr(state, "nthreads", None) or getattr(worker, "nthreads", 1) or 1)
        return (1, True) if n > 1 else ("auto", False)
    if threading.current_thread() is threading.main_thread():
        return "auto", False  # the synchronous scheduler: the task is the only work
    import dask

    pool = int(dask.config.get("num_workers", None) or available_cores())
    return max(1, available_cores() // pool), pool > 1


def task_threads() -> int | str:
    """The cores one task may use: the ``n_threads`` setting a Dask task runs under.

    In a distributed worker that runs several tasks at once (``nthreads >
    1``), one thread per task: the worker's threads are the parallelism. In a
    single-threaded worker, the library's ``'auto'`` policy (the idle cores,
    at most the BLAS's thread count, which Dask's nanny sets to one). In a
    thread of Dask's local threaded scheduler, the cores divided among its
    threads; in the calling thread (the synchronous scheduler), ``'auto'``.
    """
    return _task_share()[0]


@contextlib.contextmanager
def _task_settings(client: dict[str, Any]) -> Iterator[None]:
    """The settings of a task: the worker's share of threads within the client's settings.

    A task that runs beside others in one process never changes the BLAS's
    process-wide thread count (``limit_blas=False``): OpenBLAS does not take
    a count set and reset by different threads reliably (a count lowered by
    one thread and restored by another can stay lowered). The fit holds one
    limit for all its tasks from the calling thread instead
    (:func:`_blas_for_tasks`).
    """
    n, beside_others = _task_share()
    if isinstance(client["n_threads"], int):
        n = client["n_threads"] if n == "auto" else min(int(n), client["n_threads"])
    limit = False if beside_others else client["limit_blas"]
    with config_context(n_threads=n, limit_blas=limit):
        yield


def _blas_for_tasks() -> Any:
    """A one-thread BLAS limit held by the calling thread while tasks run in threads.

    Set and restored by the one thread that waits for the result, under the
    library's rules (``limit_blas``; see :mod:`bayesrule._util.parallel`). Tasks
    that run in threads of this process then use single-threaded BLAS
    products and never change the limit themselves; in worker processes
    (whose nanny makes the BLAS single-threaded) it changes nothing there,
    and the client only waits meanwhile. Nothing is held for the
    synchronous scheduler, whose one task may use every core.
    """
    import dask
    import dask.local

    from ..._util.parallel import _blas_cap

    if dask.base.get_scheduler() is dask.local.get_sync:
        return contextlib.nullcontext()
    return _blas_cap(1)


# ---------------------------------------------------------------------------------
# collections and their row blocks
# ---------------------------------------------------------------------------------
def _is_array(x: Any) -> bool:
    import dask.array as da

    return isinstance(x, da.Array)


def _is_frame(x: Any) -> bool:
    """A Dask DataFrame or Series (only possible once dask.dataframe is imported)."""
    if "dask.dataframe" not in sys.modules:
        return False
    import dask.dataframe as dd

    return isinstance(x, (dd.DataFrame, dd.Series))


def _is_collection(x: Any) -> bool:
    from dask import is_dask_collection

    return is_dask_collection(x)


def _what(x: Any) -> str:
    return f"{type(x).__module__.split('.')[0]}.{type(x).__name__}"


def _rows_of(X: Any, est: Any) -> tuple[list[Any], tuple[float, ...] | None]:
    """X's row blocks (delayed) and their lengths when known."""
    if _is_array(X):
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
    if _is_frame(X):
        if getattr(X, "ndim", 2) != 2:
            raise ValueError(
                "X must be 2-dimensional (n_samples, n_features); got a Dask Series. Use "
                "series.to_frame()."
            )
        return list(X.to_delayed()), None
    raise TypeError(
        f"{type(est).__name__} takes a Dask array or DataFrame X with Dask y; got X of type "
        f"{_what(X)}. Pass X as a Dask collection too (e.g. dask.array.from_array(X, chunks=...))."
    )


def _split_in_memory(v: Any, lengths: Sequence[float], name: str) -> list[Any]:
    arr = np.asarray(v)
    total = int(sum(lengths))
    if arr.shape[:1] != (total,):
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: X has {total} rows, "
            f"{name} has {arr.shape[0] if arr.ndim else 'no'} entries."
        )
    bounds = np.cumsum([0, *[int(n) for n in lengths]])
    return [arr[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _align(
    v: Any, name: str, xs: list[Any], lengths: tuple[float, ...] | None
) -> tuple[list[Any], tuple[float, ...] | None]:
    """``v`` (y or sample_weight) cut into pieces that match X's row blocks."""
    nb = len(xs)
    if v is None:
        return [None] * nb, lengths
    if _is_array(v):
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
    if _is_frame(v):
        if v.npartitions == nb:
            return list(v.to_delayed()), lengths
        if lengths is not None:
            return _align(v.to_dask_array(lengths=True), name, xs, lengths)
        raise ValueError(
            f"X has {nb} partitions and {name} {v.npartitions}; give them the same partitions "
            "(e.g. both columns of one Dask DataFrame)."
        )
    if _is_collection(v):
        raise TypeError(f"{name} must be a Dask array or Series; got {_what(v)}.")
    if lengths is None:  # the block lengths of X: a pass over X, of which only lengths travel
        import dask

        lengths = tuple(float(n) for n in dask.compute(*[dask.delayed(_n_rows)(x) for x in xs]))
    return _split_in_memory(v, lengths, name), lengths


def _n_rows(X: Any) -> int:
    return int(X.shape[0])


def _labels(y: Any) -> Any:
    """The distinct labels of a block of y (checked as ``fit`` checks them)."""
    from ..._util.validation import check_labels

    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    check_labels(arr)
    return np.unique(arr)


# ---------------------------------------------------------------------------------
# fitting: statistics per block, merged in a tree
# ---------------------------------------------------------------------------------
def _block_statistics(
    est: Any, X: Any, y: Any, w: Any, classes: Any, settings: dict[str, Any]
) -> Any:
    """A block's statistics (None for a block without rows): the pure task of a fit."""
    if _n_rows(X) == 0:
        return None
    with _task_settings(settings):
        return est.statistics(X, y, sample_weight=w, classes=classes)


def _summariser_of_block(est: Any, X: Any) -> Any:
    """``est._block_summariser(X)`` (None for a block without rows)."""
    return None if _n_rows(X) == 0 else est._block_summariser(X)


def _first_summariser(est: Any, xs: list[Any]) -> Any:
    """The block summariser made (on a worker) from the first block with rows."""
    import dask

    for xb in xs:
        (light,) = dask.compute(dask.delayed(_summariser_of_block, pure=True)(est, xb))
        if light is not None:
            return light
    return est._block_summariser()


def _merge(*parts: Any) -> Any:
    """The statistics of several blocks merged (None: no block had rows)."""
    present = [p for p in parts if p is not None]
    if not present:
        return None
    return functools.reduce(lambda a, b: a.merge(b), present)


def _tree(parts: list[Any], split_every: int = SPLIT_EVERY) -> Any:
    from dask import delayed

    merge = delayed(_merge, pure=True)
    level = parts
    while len(level) > 1:
        level = [merge(*level[i : i + split_every]) for i in range(0, len(level), split_every)]
    return level[0] if parts else None


def _input_dtype(X: Any) -> np.dtype[Any]:
    """The dtype a validated block takes (float32 kept, everything else float64)."""
    if _is_array(X):
        dtypes = [X.dtype]
    else:
        dtypes = list(getattr(X, "dtypes", [getattr(X, "dtype", np.float64)]))
    try:
        if dtypes and all(np.dtype(d) == np.float32 for d in dtypes):
            return np.dtype(np.float32)
    except TypeError:  # an extension dtype (strings, categories)
        pass
    return np.dtype(np.float64)


def _check_fitted_features(est: Any, X: Any) -> None:
    """The fitted estimator's feature count and names against a Dask collection's."""
    from sklearn.utils.validation import _check_feature_names

    p = int(X.shape[1])
    if p != est.n_features_in_:
        raise ValueError(
            f"X has {p} features, but {type(est).__name__} is expecting {est.n_features_in_} "
            "features as input."
        )
    meta = X._meta if _is_frame(X) else np.empty((0, p))
    _check_feature_names(est, meta, reset=False)


def collection_statistics(
    est: Any, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
) -> tuple[Any, tuple[Any, ...]]:
    """The statistics of Dask collections, and X's schema (feature count, names, dtype).

    The block statistics are computed on the workers and merged in a tree;
    only the merged statistics come back. Called by the estimators' ``fit``,
    ``partial_fit``, ``forget`` and ``statistics`` for Dask input.
    """
    if getattr(est, "_multi_pass", False):  # EM: one dask.compute per pass
        from ..multi_pass import dask_statistics

        return dask_statistics(est, X, y, sample_weight, classes, reset=reset)
    import dask
    from sklearn.base import clone

    name = type(est).__name__
    if not hasattr(type(est), "partial_fit"):
        import inspect

        refused = inspect.getattr_static(type(est), "partial_fit", None)
        why = getattr(refused, "reason", "its statistics cannot be merged from blocks")
        raise TypeError(
            f"{name} cannot be fitted on Dask collections: {why}, and a Dask fit summarises "
            "each block apart and merges the summaries. Fit it in memory (on a sample if the "
            "data are too large); for RegularizedDiscriminantAnalysisCV, fit "
            "RegularizedDiscriminantAnalysis with the chosen alpha_ and gamma_ on the Dask data."
        )
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None.")
    if getattr(est, "covariance_estimator", None) is not None:
        raise TypeError(
            f"{name} with a covariance_estimator needs all rows at once and cannot be fitted "
            "on Dask collections; use shrinkage instead."
        )
    xs, lengths = _rows_of(X, est)
    if not reset:
        _check_fitted_features(est, X)
    ys, lengths = _align(y, "y", xs, lengths)
    ws, lengths = _align(sample_weight, "sample_weight", xs, lengths)
    if classes is None:
        # one pass over y alone; every block then declares the same classes
        from ...stats import as_classes

        found = dask.compute(*[dask.delayed(_labels, pure=True)(yb) for yb in ys])  # no BLAS
        classes = as_classes(np.concatenate([np.asarray(f) for f in found]))
    # parameters only, no fitted state travels; choices made from the data
    # (MixedNB's kinds) come from the first block, on a worker
    base = clone(est) if reset else est  # a new fit forgets what the old one chose
    light = (
        _first_summariser(base, xs) if reset and est._infers_from_data else base._block_summariser()
    )
    light = dask.delayed(light, pure=True)
    settings = get_config()
    task = dask.delayed(_block_statistics, pure=True)
    parts = [
        task(light, xb, yb, wb, classes, settings) for xb, yb, wb in zip(xs, ys, ws, strict=True)
    ]
    with _blas_for_tasks():
        (total,) = dask.compute(_tree(parts))
    if total is None:
        raise ValueError("X has 0 samples; at least one is required.")
    schema = est._schema(X, int(X.shape[1]), _input_dtype(X))
    return total, schema


# ---------------------------------------------------------------------------------
# predicting: one lazy block per row block
# ---------------------------------------------------------------------------------
def _apply_block(
    X: Any,
    est: Any,
    *,
    method: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    settings: dict[str, Any],
    tail: tuple[int, ...],
    dtype: Any,
) -> Any:
    """``est.<method>(X)`` on one block, in the task's thread share."""
    if _n_rows(X) == 0:
        return np.empty((0, *tail), dtype=dtype)
    with _task_settings(settings):
        return getattr(est, method)(X, *args, **kwargs)


def lazy_method(est: Any, method: str, X: Any, *args: Any, **kwargs: Any) -> Any:
    """``est.<method>(X)`` for a Dask collection ``X``: a lazy Dask array.

    One output block per row block of ``X`` (rows of unknown length for a
    DataFrame). The method runs first on one made-up row on the client, which
    checks the features at once and gives the output's dtype and columns.
    The estimator is copied into the graph as it is now: a later
    ``partial_fit`` does not change the result.
    """
    import dask
    import dask.array as da
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    if _is_array(X):
        if X.ndim != 2:
            raise ValueError(
                f"X must be 2-dimensional (n_samples, n_features); got a Dask array of shape "
                f"{X.shape}."
            )
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        dummy: Any = np.zeros((1, X.shape[1]), dtype=X.dtype)
    elif _is_frame(X) and X.ndim == 2:
        dummy = X._meta_nonempty.iloc[:1]
    else:
        raise TypeError(
            f"{type(est).__name__}.{method} takes a Dask array or DataFrame X; got {_what(X)}."
        )
    with warnings.catch_warnings():
        # the made-up row is no data: warnings about it (out of the training range) are noise
        warnings.simplefilter("ignore")
        probe = np.asarray(getattr(est, method)(dummy, *args, **kwargs))
    tail, dtype = tuple(probe.shape[1:]), probe.dtype
    fn = functools.partial(
        _apply_block,
        method=method,
        args=args,
        kwargs=kwargs,
        settings=get_config(),
        tail=tail,
        dtype=dtype,
    )
    frozen = dask.delayed(copy.deepcopy(est), pure=True)
    meta = np.empty((0,) * (1 + len(tail)), dtype=dtype)
    if _is_array(X):
        return X.map_blocks(
            fn,
            frozen,
            dtype=dtype,
            chunks=(X.chunks[0], *((t,) for t in tail)),
            drop_axis=None if tail else 1,
            meta=meta,
            token=f"bayesrule-{method}",
        )
    task = dask.delayed(fn, pure=True)
    blocks = [
        da.from_delayed(task(part, frozen), shape=(np.nan, *tail), dtype=dtype, meta=meta)
        for part in X.to_delayed()
    ]
    return da.concatenate(blocks, axis=0)


# ---------------------------------------------------------------------------------
# sampling block by block
# ---------------------------------------------------------------------------------
def _sample_block(
    est: Any, size: int, y: Any, seed: Any, settings: dict[str, Any]
) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    with _task_settings(settings):
        if y is None:
            return est.sample(size, random_state=rng)
        y_arr = np.asarray(y)
        if y_arr.ndim == 0:
            return est.sample(size, y=y, random_state=rng)
        return est.sample(y=y_arr, random_state=rng)


def _row_chunks(chunks: Any, n: int) -> tuple[int, ...]:
    from dask.array.core import normalize_chunks

    if isinstance(chunks, (list, tuple)) and all(isinstance(c, (int, np.integer)) for c in chunks):
        sizes = tuple(int(c) for c in chunks)
        if sum(sizes) != n or any(c < 0 for c in sizes):
            raise ValueError(
                f"chunks must be block lengths that add up to the {n} rows; got {list(sizes)}."
            )
        return sizes
    try:
        return tuple(int(c) for c in normalize_chunks(chunks, shape=(n,), dtype=np.float64)[0])
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"chunks must be an int (rows per block), 'auto' or a tuple of block lengths; got "
            f"{chunks!r} ({exc})."
        ) from None


def sample(est: Any, n_samples: Any, *, y: Any, random_state: Any, chunks: Any) -> tuple[Any, Any]:
    """``est.sample`` as Dask arrays drawn block by block (see ``GenerativeClassifier.sample``)."""
    _require("sample(chunks=...)")
    import dask
    import dask.array as da

    from ...estimators import as_generator

    if y is not None and _is_array(y):
        if y.ndim != 1:
            raise ValueError(f"y must be 1-dimensional; got a Dask array of shape {y.shape}.")
        if chunks is not None and all(not np.isnan(c) for c in y.chunks[0]):
            y = y.rechunk((_row_chunks(chunks, int(y.shape[0])),))
        pieces: list[Any] = list(y.to_delayed().ravel())
        sizes: list[float] = list(y.chunks[0])
    elif y is None or np.ndim(y) == 0:
        if (
            not isinstance(n_samples, (int, np.integer))
            or isinstance(n_samples, bool)
            or n_samples < 0
        ):
            raise ValueError(f"n_samples must be a non-negative int; got {n_samples!r}.")
        est.sample(1, y=y, random_state=0)  # the label, and that its class has data
        sizes = list(_row_chunks("auto" if chunks is None else chunks, int(n_samples)))
        pieces = [y] * len(sizes)
    else:
        y_arr = np.asarray(y)
        if y_arr.ndim != 1:
            raise ValueError(f"y must be a label or 1-dimensional; got shape {y_arr.shape}.")
        est.sample(y=np.unique(y_arr), random_state=0)  # every label known and with data
        sizes = list(_row_chunks("auto" if chunks is None else chunks, y_arr.shape[0]))
        pieces = _split_in_memory(y_arr, sizes, "y")
    seeds = np.random.SeedSequence(int(as_generator(random_state).integers(2**63))).spawn(
        len(sizes)
    )
    frozen = dask.delayed(copy.deepcopy(est), pure=True)
    task = dask.delayed(_sample_block, pure=True, nout=2)
    settings = get_config()
    p, labels = int(est.n_features_in_), est.classes_.dtype
    xs, ys = [], []
    for size, piece, seed in zip(sizes, pieces, seeds, strict=True):
        xb, yb = task(frozen, size if not np.isnan(size) else 0, piece, seed, settings)
        xs.append(da.from_delayed(xb, shape=(size, p), dtype=np.float64))
        ys.append(da.from_delayed(yb, shape=(size,), dtype=labels))
    if not xs:
        return da.empty((0, p), dtype=np.float64), da.empty((0,), dtype=labels)
    return da.concatenate(xs, axis=0), da.concatenate(ys, axis=0)


class DaskHandler:
    """The Dask engine's :class:`~bayesrule._util.dispatch.CollectionHandler`."""

    name = "Dask"

    def claims(self, *objs: Any) -> bool:
        # a Dask collection can only exist once dask has been imported
        if "dask" not in sys.modules:
            return False
        from dask import is_dask_collection

        return any(is_dask_collection(o) for o in objs)

    def statistics(
        self, estimator: Any, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        return collection_statistics(estimator, X, y, sample_weight, classes, reset=reset)

    def predict(self, estimator: Any, method: str, X: Any, *args: Any, **kwargs: Any) -> Any:
        return lazy_method(estimator, method, X, *args, **kwargs)

    def sample(
        self, estimator: Any, n_samples: Any, *, y: Any, random_state: Any, chunks: Any
    ) -> tuple[Any, Any]:
        return sample(estimator, n_samples, y=y, random_state=random_state, chunks=chunks)


register_handler(DaskHandler())
