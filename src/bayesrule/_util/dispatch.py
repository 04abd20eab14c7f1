"""Collections held elsewhere (Dask, ...): a registry the estimators consult, knowing no engine.

An engine that can hold the data an estimator is given (a Dask array or
DataFrame, later a Spark DataFrame) registers a :class:`CollectionHandler`
when its backend module is imported (``bayesrule`` imports every backend).
The estimators ask :func:`handler_for` whether any argument belongs to a
registered engine and, if so, leave the work to its handler: the fit's
statistics (computed where the blocks live) and lazy predictions. The
estimators never import an engine; a handler's ``claims`` must not import one
either (a collection of an engine can only exist once the engine is
imported: check ``sys.modules``).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

__all__ = [
    "CollectionHandler",
    "after_install",
    "after_unpickle",
    "handler_for",
    "handler_named",
    "not_mergeable",
    "register_handler",
    "registered_handlers",
    "routed",
    "unregister_handler",
    "unwatch",
    "watch",
    "watcher",
]

_M = TypeVar("_M", bound=Callable[..., Any])


class CollectionHandler(Protocol):
    """What an engine offers the estimators for its collections."""

    #: the engine's name, for messages ("Dask")
    name: str

    def claims(self, *objs: Any) -> bool:  # pragma: no cover - protocol
        """Whether any of ``objs`` is a collection of this engine (never imports it)."""

    def statistics(
        self, estimator: Any, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:  # pragma: no cover - protocol
        """The merged statistics of the collection's blocks and the data's schema."""

    def predict(
        self, estimator: Any, method: str, X: Any, *args: Any, **kwargs: Any
    ) -> Any:  # pragma: no cover - protocol
        """``estimator.<method>(X)`` over the collection's blocks, lazily."""

    def sample(
        self, estimator: Any, n_samples: Any, *, y: Any, random_state: Any, chunks: Any
    ) -> tuple[Any, Any]:  # pragma: no cover - protocol
        """Draws from a fitted estimator as the engine's collections, block by block."""


_HANDLERS: list[CollectionHandler] = []

#: estimators an engine holds or is fitting (their fitted arrays live there):
#: the engine is told when they install new statistics and answers their
#: prediction methods whatever ``X`` is. Empty unless an engine fitted a model,
#: so that NumPy models pay one truth test per call.
_WATCHED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def watch(estimator: Any, handler: Any) -> None:
    """``handler`` holds (or is fitting) ``estimator``: route its calls there."""
    _WATCHED[estimator] = handler


def unwatch(estimator: Any) -> None:
    _WATCHED.pop(estimator, None)


def watcher(estimator: Any) -> Any:
    """The engine holding ``estimator``, or None (one truth test when none holds any)."""
    return _WATCHED.get(estimator) if _WATCHED else None


def after_install(estimator: Any) -> None:
    """Called by the estimators once new statistics and attributes are installed."""
    handler = watcher(estimator)
    if handler is not None:
        handler.installed(estimator)


def after_unpickle(estimator: Any) -> None:
    """Called by the estimators after ``__setstate__``: an engine may adopt the copy."""
    for handler in _HANDLERS:
        adopt = getattr(handler, "adopt", None)
        if adopt is not None and adopt(estimator):
            return


def register_handler(handler: CollectionHandler) -> None:
    """Add an engine's handler (once; registering the same name again replaces it)."""
    _HANDLERS[:] = [h for h in _HANDLERS if h.name != handler.name]
    _HANDLERS.append(handler)


def unregister_handler(name: str) -> None:
    """Remove the handler of the engine ``name`` (no-op when none is registered)."""
    _HANDLERS[:] = [h for h in _HANDLERS if h.name != name]


def registered_handlers() -> tuple[CollectionHandler, ...]:
    return tuple(_HANDLERS)


def handler_for(*objs: Any) -> CollectionHandler | None:
    """The handler of the engine holding any of ``objs``, or None for in-memory data."""
    for handler in _HANDLERS:
        if handler.claims(*objs):
            return handler
    return None


def handler_named(name: str) -> CollectionHandler:
    """The registered handler of the engine ``name``; ImportError saying how to install it."""
    for handler in _HANDLERS:
        if handler.name == name:
            return handler
    raise ImportError(f"no {name} backend is registered: import bayesrule (which registers it).")


def routed(method: _M) -> _M:
    """Give ``method(self, X, ...)`` to the engine holding ``X``; in memory, run it.

    Applied explicitly to each prediction method of the estimators; with no
    engine's collection among the arguments it costs one check per call.
    """
    name = method.__name__

    @functools.wraps(method)
    def wrapper(self: Any, X: Any, *args: Any, **kwargs: Any) -> Any:
        handler = handler_for(X) if _HANDLERS else None
        if handler is None and _WATCHED:
            handler = _WATCHED.get(self)
        if handler is not None:
            return handler.predict(self, name, X, *args, **kwargs)
        return method(self, X, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def not_mergeable(est: Any, collections: str, piece: str, engine: str) -> str:
    """Why ``est`` cannot be fitted on an engine's ``collections``: its own refusal of
    ``partial_fit``, and what to do instead (``piece``: what the engine summarises apart)."""
    name = type(est).__name__
    try:
        _ = est.partial_fit
        why = f"its statistics cannot be merged from {piece}s"
    except AttributeError as exc:
        why = str(exc).rstrip(".")
    return (
        f"{name} cannot be fitted on {collections} ({why}): a {engine} fit summarises each "
        f"{piece} apart and merges the summaries. Fit it in memory (on a sample if the data are "
        "too large); for RegularizedDiscriminantAnalysisCV, fit "
        f"RegularizedDiscriminantAnalysis with the chosen alpha_ and gamma_ on the {engine} data."
    )
