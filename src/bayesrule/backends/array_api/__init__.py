"""PyTorch, CuPy and array-api-strict arrays through the array API: the array API backend.

With scikit-learn's array API dispatch on (``sklearn.set_config(array_api_dispatch=True)``
or ``sklearn.config_context``; SciPy needs ``SCIPY_ARRAY_API=1`` in the
environment before it is imported), the estimators give arrays of another
namespace than NumPy's to this backend's :class:`ArrayAPIHandler`, registered
with :func:`bayesrule._util.dispatch.register_handler` as the Dask engine is:

* ``fit``, ``partial_fit``, ``forget`` and ``statistics`` run the estimator's
  ``fit_plan`` with a ``reduce`` that computes the statistics' products on
  the input's device (:mod:`.fit`); the statistics and the class models
  derived from them are NumPy values on the host, so model files and
  ``merge`` work as for any fit.
* once installed, the model's fitted arrays move to the input's device
  (:mod:`.hold`): ``model.coef_`` is a tensor there; its NumPy methods
  run on a host twin.
* the prediction methods and ``sample`` return arrays of the input's
  namespace and device (:mod:`.predict`).
* :func:`move_to` moves a fitted model to another device, or back to NumPy.

KernelNB, CategoricalNB and MixedNB have no array API support (their tag
``array_api_support`` is False) and say so. Without dispatch, such arrays
are converted to NumPy as scikit-learn's ``check_array`` converts them.
Nothing here imports PyTorch or CuPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._util.dispatch import register_handler, unwatch, watch
from .arrays import dispatch_on, is_device_array, namespace_and_device, to_device, to_host, where
from .fit import collection_statistics
from .hold import adopt_home, held, hold, host_view, release
from .predict import cached_terms, device_method, forget_home, home_of, set_home

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
        watch(estimator, self)
        return stats, schema

    def installed(self, estimator: Any) -> None:
        """New statistics are installed: the attributes go to the model's device, or stay."""
        home = home_of(estimator)
        if home is None:
            release(estimator)
            unwatch(estimator)
        else:
            hold(estimator, *home)

    def host_view(self, estimator: Any) -> Any:
        """The model with host (NumPy) attributes: its twin when its arrays live on a device."""
        return host_view(estimator)

    def adopt(self, estimator: Any) -> bool:
        """A pickle's (or deep copy's) copy holding device arrays is a device model again."""
        home = adopt_home(estimator)
        if home is None or not hasattr(estimator, "stats_"):
            return False
        set_home(estimator, *home, estimator.stats_)
        hold(estimator, *home)
        watch(estimator, self)
        return True

    def predict(self, estimator: Any, method: str, X: Any, *args: Any, **kwargs: Any) -> Any:
        _refuse_unsupported(estimator)
        return device_method(estimator, method, X, *args, **kwargs)

    def move(self, estimator: Any, where: Any) -> Any:
        """``bayesrule.move_to(estimator, where)`` (scikit-learn's ``move_estimator_to`` calls it)."""
        return move_to(estimator, where)

    def sample(
        self, estimator: Any, n_samples: Any, *, y: Any, random_state: Any, chunks: Any
    ) -> tuple[Any, Any]:
        """Draws on the host (the class models' generators), returned on the model's device.

        The device is that of a device model, else that of ``y``; labels
        given as ``y`` come back as given, drawn labels in the device's
        namespace (strings stay NumPy).
        """
        _refuse_unsupported(estimator)
        home = home_of(estimator) if held(estimator) is not None else None
        if home is None and not is_device_array(y):  # a host model, after all
            unwatch(estimator)
            return estimator.sample(n_samples, y=y, random_state=random_state)
        xp, dev = home if home is not None else namespace_and_device(y)
        if is_device_array(y) and home is not None:
            xp_y, dev_y = namespace_and_device(y)
            if str(dev_y) != str(dev):
                raise ValueError(
                    f"{type(estimator).__name__} lives on {where(xp, dev)} and cannot sample "
                    f"the labels y on {where(xp_y, dev_y)}; move one of them first."
                )
        twin = host_view(estimator)
        X_new, y_new = twin.sample(n_samples, y=to_host(y), random_state=random_state)
        labels = y if is_device_array(y) else to_device(y_new, xp, dev)
        return _device_floats(X_new, xp, dev), labels


def move_to(est: Any, where: Any, device: Any = None) -> Any:
    """Point a fitted model at another namespace and device: the one-liner.

    ``bayesrule.move_to(model, X)`` makes ``model`` predict on ``X``'s
    namespace and device (an array), ``bayesrule.move_to(model, torch,
    device="cuda")`` on a namespace and device, ``bayesrule.move_to(model,
    numpy)`` makes it a host model again. The model's fitted arrays move
    (its statistics and class models stay on the host); its prediction terms are
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
    from sklearn.externals.array_api_compat import array_namespace
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    if is_device_array(where):
        xp, dev = namespace_and_device(where)
    elif (
        isinstance(where, np.ndarray)
        or where is np
        or str(getattr(where, "__name__", "")).endswith("numpy")
    ):
        release(est)
        forget_home(est)
        unwatch(est)
        return est
    else:
        probe = where.asarray([0.0], device=device) if device is not None else where.asarray([0.0])
        xp, dev = array_namespace(probe), probe.device
    _refuse_unsupported(est)
    set_home(est, xp, dev, est.stats_)
    hold(est, xp, dev)
    watch(est, _HANDLER)
    cached_terms(est, xp, dev)
    return est


def _device_floats(a: Any, xp: Any, dev: Any) -> Any:
    """A NumPy float array on ``dev``: float64 where the device has it, else float32."""
    from .fit import _float_dtype

    dt = xp.float32 if a.dtype == np.float32 else _float_dtype(xp, dev)
    return xp.asarray(np.ascontiguousarray(a), dtype=dt, device=dev)


_HANDLER = ArrayAPIHandler()
register_handler(_HANDLER)
