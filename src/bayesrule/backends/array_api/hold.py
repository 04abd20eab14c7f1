"""A device model's fitted attributes: arrays of the input's namespace, and a host twin.

After a fit on device arrays, every numeric array among the model's fitted
attributes (``means_``, ``coef_``, ``theta_``, ``feature_log_prob_``, the
private ones too; not ``classes_``, which may hold strings, as in
scikit-learn) is an array of the input's namespace on its device, so that
``model.coef_`` is what a PyTorch user expects and scikit-learn's
``check_array_api_input`` holds. The statistics (``stats_``) and the class
models stay NumPy values on the host: model files, ``merge`` and the NumPy
code the estimators are written in need them there.

The NumPy methods of a device model (the host's repairs of non-finite
rows, ``sample``, the probe check of the prediction terms) run on its
*twin*: a shallow copy with the host attributes, made once per installed
statistics and kept in a module-level cache keyed by the model, never in
the model (its ``__dict__`` and pickle hold only what scikit-learn's
estimators hold). A pickle of a device model keeps its device arrays and
loads as a device model (:func:`adopt`); a model file keeps the host
statistics and loads as a NumPy model.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

import numpy as np

from .arrays import is_device_array, namespace_and_device, to_host

__all__ = ["adopt_home", "held", "hold", "host_view", "release"]

#: fitted attributes that stay NumPy on a device model (labels may be strings)
KEEP_ON_HOST = frozenset({"classes_"})

#: libraries whose arrays may live on a device (one of them imported, or none can exist)
_LIBRARIES = ("torch", "cupy", "array_api_strict", "jax", "dpnp", "ndonnx")
#: values of a model's __dict__ that are never arrays
_PLAIN = frozenset({int, float, bool, str, type(None), np.ndarray})

_HELD: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def held(est: Any) -> dict[str, Any] | None:
    """``{"xp", "dev", "twin"}`` of a model whose attributes live on a device; else None."""
    return _HELD.get(est) if _HELD else None


def host_view(est: Any) -> Any:
    """The model itself, or for a device model its host twin (same statistics, NumPy arrays)."""
    entry = held(est)
    return est if entry is None else entry["twin"]


def _host_state(est: Any) -> dict[str, Any]:
    """The model's attributes as host values: the twin's, if it is still the model's."""
    entry = _HELD.get(est)
    state = est.__dict__
    if entry is not None:
        twin = entry["twin"].__dict__
        if twin.get("stats_") is state.get("stats_"):
            return {k: twin[k] if k in twin and is_device_array(v) else v for k, v in state.items()}
    return {k: to_host(v) for k, v in state.items()}


def _on_device(value: Any, xp: Any, dev: Any, floats: Any) -> Any:
    if value.dtype.kind == "f" and floats is not None and value.dtype == np.float64:
        return xp.asarray(np.ascontiguousarray(value), dtype=floats, device=dev)
    return xp.asarray(np.ascontiguousarray(value), device=dev)


def hold(est: Any, xp: Any, dev: Any) -> None:
    """Move the model's numeric fitted arrays to ``dev`` (``xp``); keep a host twin.

    float64 attributes stay float64 where the device has it (else float32,
    as scikit-learn's ``_max_precision_float_dtype``); integer and boolean
    ones keep their dtype.
    """
    from .fit import _float_dtype

    host = _host_state(est)
    twin = object.__new__(type(est))
    twin.__dict__.update(host)
    best = _float_dtype(xp, dev)
    floats = None if best == xp.float64 else best
    moved = {
        k: _on_device(v, xp, dev, floats)
        for k, v in host.items()
        if isinstance(v, np.ndarray) and v.dtype.kind in "biuf" and k not in KEEP_ON_HOST
    }
    est.__dict__.update(host)
    est.__dict__.update(moved)
    _HELD[est] = {"xp": xp, "dev": dev, "twin": twin}


def release(est: Any) -> None:
    """Make the model's attributes NumPy arrays again (no-op for a host model)."""
    if est in _HELD:
        host = _host_state(est)
        est.__dict__.update(host)
        del _HELD[est]
    elif any(is_device_array(v) for v in est.__dict__.values()):
        est.__dict__.update(_host_state(est))


def adopt_home(est: Any) -> tuple[Any, Any] | None:
    """The namespace and device of the device arrays a model's ``__dict__`` holds (a
    pickle's copy); None when it holds none."""
    if not any(name in sys.modules for name in _LIBRARIES):
        return None  # no array library imported: no device array can exist
    found = [v for v in est.__dict__.values() if type(v) not in _PLAIN and is_device_array(v)]
    if not found:
        return None
    return namespace_and_device(*found)
