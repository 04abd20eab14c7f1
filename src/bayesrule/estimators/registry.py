"""The estimators, registered where they are defined: short names, exports and model files follow.

Each public estimator class carries ``@register("lda")``. The package
(:mod:`bayesrule.estimators`) imports every public module it holds
(:func:`discover`), so a new estimator file is registered, exported from
``bayesrule.estimators`` and ``bayesrule``, listed by the command line and
tested by the contract tests with no other edit. Model files are only ever
rebuilt from a class found here: no name read from a file is ever imported.

This module imports nothing of bayesrule: the estimator modules import it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, TypeVar

__all__ = [
    "SHORT_NAMES",
    "available",
    "discover",
    "get_estimator",
    "register",
    "short_name",
    "unregister",
]

_C = TypeVar("_C", bound=type)

#: short name -> class, in the order of the short names
_REGISTRY: dict[str, type[Any]] = {}

#: short name -> class name, kept in step with the registry (read-only for users)
SHORT_NAMES: dict[str, str] = {}


def register(short: str) -> Callable[[_C], _C]:
    """Class decorator: register an estimator under the short name ``short``.

    Raises
    ------
    ValueError
        When ``short`` is not a lower-case identifier, or already names
        another class (registering the same class again, as a module reload
        does, replaces it).
    """
    if not (isinstance(short, str) and short.isidentifier() and short == short.lower()):
        raise ValueError(f"a short name must be a lower-case identifier; got {short!r}.")

    def decorate(cls: _C) -> _C:
        held = _REGISTRY.get(short)
        if held is not None and _key(held) != _key(cls):
            raise ValueError(
                f"the short name {short!r} is taken by {held.__module__}.{held.__qualname__}; "
                f"choose another for {cls.__module__}.{cls.__qualname__}."
            )
        for other, c in list(_REGISTRY.items()):
            if other != short and _key(c) == _key(cls):
                raise ValueError(f"{cls.__qualname__} is registered already, as {other!r}.")
        _REGISTRY[short] = cls
        _reorder()
        return cls

    return decorate


def unregister(short: str) -> None:
    """Remove the estimator registered as ``short`` (for tests and plug-ins); no-op when absent."""
    _REGISTRY.pop(short, None)
    _reorder()


def _key(cls: type[Any]) -> tuple[str, str]:
    return cls.__module__, cls.__qualname__


def _reorder() -> None:
    ordered = sorted(_REGISTRY.items())
    _REGISTRY.clear()
    _REGISTRY.update(ordered)
    SHORT_NAMES.clear()
    SHORT_NAMES.update((short, cls.__name__) for short, cls in ordered)


def discover(package: str, path: Iterable[str]) -> list[ModuleType]:
    """Import every public module (no leading underscore) of ``package`` found on ``path``.

    ``path`` is the package's ``__path__``; importing a module runs its
    ``@register`` decorators. Returns the modules imported, in name order.
    """
    names = sorted(
        info.name
        for info in pkgutil.iter_modules(list(path))
        if not info.name.startswith("_") and not info.ispkg
    )
    return [importlib.import_module(f"{package}.{name}") for name in names]


def available() -> dict[str, type[Any]]:
    """The estimators this installation provides, as ``{short name: class}``."""
    return dict(_REGISTRY)


def get_estimator(name: str) -> type[Any]:
    """The estimator class for a short name (``"lda"``) or a class name.

    Raises
    ------
    ValueError
        Naming the unknown model and listing the known short names.
    """
    key = name.strip()
    if key.lower() in _REGISTRY:
        return _REGISTRY[key.lower()]
    for cls in _REGISTRY.values():
        if cls.__name__ == key:
            return cls
    raise ValueError(f"unknown model {name!r}; choose one of: {', '.join(_REGISTRY)}.")


def short_name(cls: type[Any]) -> str:
    """The short name of an estimator class (its class name when it has none)."""
    for short, held in _REGISTRY.items():
        if held is cls:
            return short
    for short, held in _REGISTRY.items():
        if held.__name__ == cls.__name__:
            return short
    return cls.__name__
