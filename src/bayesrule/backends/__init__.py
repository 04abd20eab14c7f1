"""Engines that fit and predict with the estimators over data held elsewhere.

:mod:`bayesrule.backends.stream` reads files larger than memory block by
block; :mod:`bayesrule.backends.dask` works on Dask collections. Each is a
``reduce`` over the estimators' public seam (:mod:`bayesrule.estimators.seam`)
and a map of the prediction methods over partitions. An engine that holds
collections the estimators are given (as Dask does) registers a
:class:`CollectionHandler` with :func:`register_handler`; an engine written
outside bayesrule does the same with these names.
"""

from .._util.dispatch import (
    CollectionHandler,
    handler_for,
    register_handler,
    registered_handlers,
    unregister_handler,
)

__all__ = [
    "CollectionHandler",
    "handler_for",
    "register_handler",
    "registered_handlers",
    "unregister_handler",
]
