"""PyTorch, CuPy and array-api-strict arrays through the array API: the array API backend.

With scikit-learn's array API dispatch on (``sklearn.set_config(array_api_dispatch=True)``
or ``sklearn.config_context``; SciPy needs ``SCIPY_ARRAY_API=1`` in the
environment before it is imported), the estimators give arrays of another
namespace than NumPy's to this backend's :class:`ArrayAPIHandler`, registered
with :func:`bayesrule._util.dispatch.register_handler` as the Dask engine is:

* ``fit``, ``partial_fit``, ``forget`` and ``statistics`` run the estimator's
  ``fit_plan`` with a ``reduce`` that computes the statistics' products on
  the input's device (:mod:`.fit`); the statistics and the model derived
  from them are NumPy values on the host, so model files, ``merge`` and
  NumPy predictions work as for any fit.
* the prediction methods return arrays of the input's namespace and device
  (:mod:`.predict`).
* :func:`move_to` points a fitted model at another device.

KernelNB, CategoricalNB and MixedNB have no array API support (their tag
``array_api_support`` is False) and say so. Without dispatch, such arrays
are converted to NumPy as scikit-learn's ``check_array`` converts them.
Nothing here imports PyTorch or CuPy.
"""

from __future__ import annotations

from typing import Any

from ..._util.dispatch import register_handler
from .arrays import dispatch_on, is_device_array, namespace_and_device, to_host
from .fit import collection_statistics
from .predict import cached_terms, device_method, forget_home, set_home

__all__ = ["ArrayAPIHandler", "move_to"]


def _refuse_unsupported(est: Any) -> None:
    if not est.__sklearn_tags__().array_api_support:
        raise TypeError(
            f"{type(est).__name__} does not support array API inputs: with scikit-learn's "
            "array_api_dispatch on it takes NumPy arrays only. Convert X to NumPy "
            "(e.g. X.cpu().numpy()) or turn the dispatch off."
        )


class ArrayAPIHandler:
    """The array API engine's :class:`~bayesrule._util.dispatch.CollectionHandler`."""

    name = "array API"

    def claims(self, *objs: Any) -> bool:
        if not any(is_device_array(o) for o in objs):
            return False
        return dispatch_on()

    def statistics(
        self, estimator: Any, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        _refuse_unsupported(estimator)
        if not is_device_array(X):
            xp, dev = namespace_and_device(y, sample_weight)
            raise TypeError(
                f"{type(estimator).__name__} takes X in the namespace of y and sample_weight "
                f"({getattr(xp, '__name__', xp)} on {dev}) or NumPy X with NumPy y; got X of "
                f"type {type(X).__name__}."
            )
        xp, dev = namespace_and_device(X, y, sample_weight)
        stats, schema = collection_statistics(estimator, X, y, sample_weight, classes, reset=reset)
        set_home(estimator, xp, dev, stats if reset else None)
        return stats, schema

    def predict(self, estimator: Any, method: str, X: Any, *args: Any, **kwargs: Any) -> Any:
        _refuse_unsupported(estimator)
        return device_method(estimator, method, X, *args, **kwargs)

    def move(self, estimator: Any, where: Any) -> Any:
        """``bayesrule.move_to(estimator, where)`` (scikit-learn's ``move_estimator_to`` calls it)."""
        return move_to(estimator, where)

    def sample(
        self, estimator: Any, n_samples: Any, *, y: Any, random_state: Any, chunks: Any
    ) -> tuple[Any, Any]:
        _refuse_unsupported(estimator)
        xp, dev = namespace_and_device(y)
        X_new, y_new = estimator.sample(n_samples, y=to_host(y), random_state=random_state)
        return xp.asarray(X_new, device=dev), y


def move_to(est: Any, where: Any, device: Any = None) -> Any:
    """Point a fitted model at another namespace and device: the one-liner.

    ``bayesrule.move_to(model, X)`` makes ``model`` predict on ``X``'s
    namespace and device (an array), ``bayesrule.move_to(model, torch,
    device="cuda")`` on a namespace and device, ``bayesrule.move_to(model,
    numpy)`` makes it a host model again. The model's statistics and fitted
    attributes are NumPy values and are not copied; its prediction terms are
    moved to the device now (once), so that the first prediction there costs
    no transfer. Returns ``est``, as scikit-learn's ``move_estimator_to``
    returns the moved estimator.

    Parameters
    ----------
    est : fitted bayesrule estimator
    where : array or array namespace
        An array of the target namespace and device, or the namespace
        (``torch``, ``cupy``, ``array_api_strict``, ``numpy``).
    device : optional
        The device, with a namespace (``"cuda"``, ``"cpu"``, ...).

    Returns
    -------
    est
    """
    import numpy as np
    from sklearn.externals.array_api_compat import array_namespace
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    if is_device_array(where):
        xp, dev = namespace_and_device(where)
    elif where is np or str(getattr(where, "__name__", "")).endswith("numpy"):
        forget_home(est)
        return est
    else:
        probe = where.asarray([0.0], device=device) if device is not None else where.asarray([0.0])
        xp, dev = array_namespace(probe), probe.device
    _refuse_unsupported(est)
    set_home(est, xp, dev, est.stats_)
    cached_terms(est, xp, dev)
    return est


register_handler(ArrayAPIHandler())
