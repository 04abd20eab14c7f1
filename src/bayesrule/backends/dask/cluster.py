"""Where Dask tasks run and with how many threads: clients, task settings, BLAS limits.

:func:`client_for` connects to a scheduler (or starts a local cluster) for a
block of code. :func:`task_threads` is the share of the cores one task may
use; :func:`task_settings` runs a task under that share within the client's
:func:`bayesrule.config_context` settings, and :func:`blas_for_tasks` is the
one BLAS limit the calling thread holds while tasks run beside each other in
its process.

Nothing here imports Dask before it is called.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

from ..._util.config import config_context
from ..._util.parallel import available_cores, blas_cap

__all__ = ["HINT", "blas_for_tasks", "client_for", "require", "task_settings", "task_threads"]

#: how to install what the Dask backend needs
HINT = "pip install 'bayesrule[dask]'"


def require(what: str = "this") -> None:
    """ImportError with the install hint when Dask is missing."""
    try:
        import dask.array  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{what} needs Dask, which is not installed: {HINT}") from exc


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
            f"a Dask scheduler needs distributed, which is not installed: {HINT}"
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
def task_settings(client: dict[str, Any]) -> Iterator[None]:
    """The settings of a task: the worker's share of threads within the client's settings.

    ``client`` is the calling thread's :func:`bayesrule.get_config` when the
    graph was built. A task that runs beside others in one process never
    changes the BLAS's process-wide thread count (``limit_blas=False``):
    OpenBLAS does not take a count set and reset by different threads
    reliably (a count lowered by one thread and restored by another can stay
    lowered). The fit holds one limit for all its tasks from the calling
    thread instead (:func:`blas_for_tasks`).
    """
    n, beside_others = _task_share()
    if isinstance(client["n_threads"], int):
        n = client["n_threads"] if n == "auto" else min(int(n), client["n_threads"])
    limit = False if beside_others else client["limit_blas"]
    with config_context(n_threads=n, limit_blas=limit):
        yield


def blas_for_tasks() -> Any:
    """A one-thread BLAS limit held by the calling thread while tasks run in threads.

    Set and restored by the one thread that waits for the result, under the
    library's rules (``limit_blas``; see :mod:`bayesrule._util.parallel`).
    Tasks that run in threads of this process then use single-threaded BLAS
    products and never change the limit themselves; in worker processes
    (whose nanny makes the BLAS single-threaded) it changes nothing there,
    and the client only waits meanwhile. Nothing is held for the
    synchronous scheduler, whose one task may use every core.
    """
    import dask
    import dask.local

    if dask.base.get_scheduler() is dask.local.get_sync:
        return contextlib.nullcontext()
    return blas_cap(1)
