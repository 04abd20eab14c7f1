"""Fitting on Dask collections and predicting lazily: the Dask backend.

Every estimator that is fitted from mergeable statistics accepts Dask arrays
and Dask DataFrames (with a Dask array or Series ``y``) in ``fit``,
``partial_fit``, ``forget`` and ``statistics``, and mixture discriminant
analysis in ``fit`` and ``statistics``. The backend knows the estimators only
through their public seam (:mod:`bayesrule.estimators.seam`): it asks
``est.input_spec()`` what the blocks must look like and lets
``est.fit_plan(reduce, first_block=..., classes=...)`` run the fit's passes,
giving it a ``reduce`` that summarises every row block where it lives with
the pass's task and combines the summaries in a tree of tasks; only the
combined summary reaches the client (:mod:`.fit`). The labels are found
first, in one pass over ``y`` alone, unless ``classes`` is given. As the
block tasks are pure, a block lost with a worker is simply summarised again.

The predictions (``predict``, ``predict_proba``, ``predict_log_proba``,
``predict_joint_log_proba``, ``decision_function``, ``score_samples``,
``class_log_density`` and LDA's ``transform``) of a Dask collection are lazy
Dask arrays with one block per row block of the input (:mod:`.predict`);
``sample(..., chunks=...)`` draws Dask arrays block by block
(:mod:`.sampling`).

Threads: a task runs with the worker's share of the cores
(:func:`task_threads`): one thread when the worker runs several tasks at once,
the library's ``'auto'`` policy when it runs one. Tasks that run beside
others in one process never change the BLAS's process-wide thread count; a
fit holds one single-threaded BLAS limit from the calling thread while its
tasks run, and restores it (see :mod:`.cluster`).

The estimators reach this backend only through the :class:`DaskHandler`
registered with :func:`bayesrule._util.dispatch.register_handler`. Nothing
here imports Dask unless a Dask collection is passed, ``sample`` is asked for
Dask arrays, or :func:`client_for` is called; Dask itself is an optional
dependency (``pip install 'bayesrule[dask]'``).
"""

from __future__ import annotations

import sys
from typing import Any

from ..._util.dispatch import register_handler
from .cluster import client_for, task_threads
from .fit import collection_statistics
from .predict import lazy_method
from .sampling import sample

__all__ = [
    "DaskHandler",
    "client_for",
    "collection_statistics",
    "lazy_method",
    "sample",
    "task_threads",
]


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
