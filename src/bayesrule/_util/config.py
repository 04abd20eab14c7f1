"""bayesrule's settings: ``set_config``, ``get_config`` and ``config_context``.

The settings live in a :class:`contextvars.ContextVar`, so they belong to the
thread (or asyncio task) that sets them: a Dask worker running several tasks
side by side can give each its own, and one thread's setting never changes
another's. A new thread starts from the defaults.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_DEFAULTS: dict[str, Any] = {"n_threads": "auto", "limit_blas": True}
_config: ContextVar[dict[str, Any] | None] = ContextVar("bayesrule_config", default=None)


class _Unchanged:
    def __repr__(self) -> str:
        return "<unchanged>"


#: Marks a setting that ``set_config`` / ``config_context`` leave as it is.
UNCHANGED: Any = _Unchanged()


def _check_n_threads(value: Any) -> int | str:
    if value is None or (isinstance(value, str) and value == "auto"):
        return "auto"
    if not isinstance(value, bool):
        try:
            n = operator.index(value)
        except TypeError:
            n = 0
        else:
            if n >= 1:
                return n
    raise ValueError(f"n_threads must be an int >= 1, 'auto' or None; got {value!r}.")


def _check_limit_blas(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"limit_blas must be True or False; got {value!r}.")
    return value


def get_config() -> dict[str, Any]:
    """The settings in effect in the calling thread, as a new dict.

    Returns
    -------
    dict
        ``n_threads`` (an int, or ``'auto'``) and ``limit_blas`` (bool).
    """
    return dict(_config.get() or _DEFAULTS)


def _updated(n_threads: Any, limit_blas: Any) -> dict[str, Any]:
    new = get_config()
    if n_threads is not UNCHANGED:
        new["n_threads"] = _check_n_threads(n_threads)
    if limit_blas is not UNCHANGED:
        new["limit_blas"] = _check_limit_blas(limit_blas)
    return new


def set_config(n_threads: Any = UNCHANGED, limit_blas: Any = UNCHANGED) -> None:
    """Change the settings of the calling thread (or asyncio task).

    Parameters
    ----------
    n_threads : int >= 1, 'auto' or None, optional
        How many cores one bayesrule computation (a statistic's pass, a
        prediction) may keep busy, counting the BLAS's threads. ``'auto'``
        (or ``None``), the default: the cores that are idle when the pass
        starts, at most the BLAS's thread count (so ``OPENBLAS_NUM_THREADS=1``
        or ``threadpoolctl.threadpool_limits(1)`` also means one thread here),
        and one when the machine is busy. See ``docs/parallelism.md``.
    limit_blas : bool, optional
        Whether bayesrule may lower the BLAS's thread count while its own
        products run, when the BLAS has more threads than ``n_threads``
        allows (default ``True``). OpenBLAS keeps a single, process-wide
        count, so other threads' BLAS calls made meanwhile run with the lower
        count too; the count is restored when the last bayesrule product
        ends, also when it raises. With ``False`` bayesrule never changes
        the BLAS: its products run with the BLAS's own threads, and it
        starts threads of its own only when the BLAS is single-threaded.

    Omitted settings keep their value.
    """
    _config.set(_updated(n_threads, limit_blas))


@contextmanager
def config_context(n_threads: Any = UNCHANGED, limit_blas: Any = UNCHANGED) -> Iterator[None]:
    """Change the settings of the calling thread for a ``with`` block.

    Takes the parameters of :func:`set_config`; on leaving the block, the
    thread's previous settings are back, also when the block raises. Blocks
    nest; the innermost setting wins.

    Examples
    --------
    >>> import bayesrule
    >>> with bayesrule.config_context(n_threads=1):
    ...     bayesrule.get_config()["n_threads"]
    1
    """
    token = _config.set(_updated(n_threads, limit_blas))
    try:
        yield
    finally:
        _config.reset(token)
