"""Arrays of the array API (PyTorch, CuPy, array-api-strict): what they are, where they live.

Nothing here imports PyTorch or CuPy: an array of theirs can only exist once
its library is imported, and scikit-learn's vendored ``array_api_compat``
tells them apart by looking in ``sys.modules``. scikit-learn's own helpers
(:func:`sklearn.utils._array_api.get_namespace`, ``device``, ``move_to``)
give the namespace, the device and the transfers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "dispatch_on",
    "is_device_array",
    "namespace_and_device",
    "to_device",
    "to_host",
    "where",
]


#: libraries whose arrays array_api_compat recognises without ``__array_namespace__``
_ARRAY_LIBRARIES = frozenset({"torch", "cupy", "jax", "jaxlib", "sparse", "dask", "ndonnx"})


def _compat() -> Any:
    from sklearn.externals import array_api_compat

    return array_api_compat


def dispatch_on() -> bool:
    """Whether scikit-learn's ``array_api_dispatch`` is on (``sklearn.set_config``)."""
    from sklearn._config import get_config

    return bool(get_config().get("array_api_dispatch", False))


def is_device_array(obj: Any) -> bool:
    """An array of the array API that is not NumPy's (nor a Dask collection's)."""
    if obj is None or isinstance(obj, (np.ndarray, np.generic, list, tuple, str, bytes)):
        return False
    # a cheap refusal of everything else that cannot be one (numbers, the
    # statistics, class models: what a model's __dict__ holds), before
    # array_api_compat's test, which asks every library it knows in turn
    if type(obj).__module__.partition(".")[0] not in _ARRAY_LIBRARIES and not hasattr(
        obj, "__array_namespace__"
    ):
        return False
    compat = _compat()
    if compat.is_numpy_array(obj) or compat.is_dask_array(obj):
        return False
    return bool(compat.is_array_api_obj(obj))


def _library(xp: Any) -> str:
    """The namespace's library name ("torch", "cupy", "array_api_strict")."""
    name = getattr(xp, "__name__", str(xp))
    for known in ("torch", "cupy", "array_api_strict", "jax", "dpnp"):
        if known in name:
            return known
    return name


def where(xp: Any, dev: Any) -> str:
    """``namespace on device``, for messages."""
    return f"{_library(xp)} on device {dev}"


def namespace_and_device(*arrays: Any) -> tuple[Any, Any]:
    """The one namespace and device of the device arrays among ``arrays``.

    NumPy arrays and None are left out (a NumPy ``y`` with a PyTorch ``X`` is
    fine, as in scikit-learn). Arrays of two namespaces or on two devices
    raise a ValueError naming both.
    """
    compat = _compat()
    found = [a for a in arrays if is_device_array(a)]
    first_xp = compat.array_namespace(found[0])
    first_dev = compat.device(found[0])
    for other in found[1:]:
        xp = compat.array_namespace(other)
        dev = compat.device(other)
        if _library(xp) != _library(first_xp) or dev != first_dev:
            raise ValueError(
                f"X, y and sample_weight must live in one namespace on one device; got arrays of "
                f"{where(first_xp, first_dev)} and of {where(xp, dev)}. Move them to one "
                "device first (NumPy arrays may be mixed with either)."
            )
    return first_xp, first_dev


def to_host(a: Any) -> Any:
    """A device array as a NumPy array (a copy to host memory); anything else unchanged."""
    if not is_device_array(a):
        return a
    from sklearn.utils._array_api import _convert_to_numpy

    xp = _compat().array_namespace(a)
    return np.asarray(_convert_to_numpy(a, xp))


def to_device(a: Any, xp: Any, dev: Any) -> Any:
    """A NumPy array (numbers) on ``dev`` in ``xp``; strings and objects stay NumPy."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        return arr
    return xp.asarray(np.ascontiguousarray(arr), device=dev)
