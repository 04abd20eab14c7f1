"""A fitted attribute that waits for more data: the model of an update whose classes are too small.

``partial_fit``, ``merge``, ``forget`` and ``from_stats`` keep the statistics
of every row even when the model cannot be derived from them yet (a class with
fewer rows than its covariance needs, as in a stream sorted by class). The
attributes the derivation would set are then :class:`Underived`: any use of
one (a prediction, a draw, a class model) raises the derivation's error, so
the model never predicts without a class, nor NaN. The next update that gives
the class enough rows derives the model as ``fit`` would.
"""

from __future__ import annotations

from typing import Any, NoReturn

from .._util.validation import TooFewRows

__all__ = ["Underived", "waiting_attrs", "waiting_reason"]


def _rebuilt(kind: type[BaseException], message: str, state: dict[str, Any]) -> BaseException:
    """A fresh exception of type ``kind`` with ``message`` and attributes ``state``.

    Built without the class's ``__init__`` (``SingularCovarianceError`` takes
    more arguments than its message), so that every use raises its own copy
    and a pickled model keeps its error.
    """
    error = BaseException.__new__(kind, message)
    error.args = (message,)
    error.__dict__.update(state)
    return error


class Underived:
    """Stands for a fitted attribute whose derivation failed for want of rows.

    Every use (an attribute, ``len``, indexing, iteration, conversion to an
    array or a number, arithmetic, an order comparison, a call) raises a copy
    of ``error``; ``==``, ``hash`` and ``bool`` stay the object's own, for
    the code that handles fitted attributes generically.
    """

    __slots__ = ("_kind", "_message", "_state")

    def __init__(self, error: BaseException) -> None:
        self._kind = type(error)
        self._message = str(error)
        self._state = dict(getattr(error, "__dict__", {}))

    def error(self) -> BaseException:
        """A fresh copy of the derivation's error."""
        return _rebuilt(self._kind, self._message, self._state)

    def _raise(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise self.error()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and NumPy's protocols: absent, not an error
            raise AttributeError(name)
        self._raise()

    __len__ = __getitem__ = __iter__ = __array__ = __call__ = _raise
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _raise
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = __pow__ = __rpow__ = _raise
    __neg__ = __pos__ = __abs__ = __float__ = __int__ = __index__ = _raise
    __lt__ = __le__ = __gt__ = __ge__ = _raise

    def __reduce__(self) -> tuple[Any, ...]:
        return (_underived, (self._kind, self._message, self._state))

    def __repr__(self) -> str:
        return f"<underived: {self._message}>"


def _underived(kind: type, message: str, state: dict[str, Any]) -> Underived:
    return Underived(_rebuilt(kind, message, state))


def waiting_reason(est: Any, exc: BaseException) -> str | None:
    """Why the derivation's error ``exc`` waits for more rows, or None if it does not.

    An update (``partial_fit``, ``merge``, ``forget``, ``from_stats``)
    whose derivation fails for want of rows keeps its statistics; the
    returned sentence is added to the error that every use of the model
    then raises. An estimator that ``waits_for_rows`` waits on
    :class:`~bayesrule._util.validation.TooFewRows` (a first block of one
    row streamed into GaussianNB or LDA, as online learning sends them);
    otherwise the update fails and is rolled back.
    """
    if getattr(est, "waits_for_rows", False) and isinstance(exc, TooFewRows):
        return (
            "This model holds the statistics of every row it was given (partial_fit, "
            "merge, forget or from_stats), but it cannot predict until later rows mend "
            "that; it then equals fit on all the rows."
        )
    return None


def waiting_attrs(est: Any, exc: BaseException) -> dict[str, Any]:
    """The fitted attributes of a model that cannot be derived yet (see :func:`waiting_reason`).

    ``_model`` and every attribute the last derivation set (``_derived_names``)
    are :class:`Underived`, which raise ``exc`` on use: none keeps a value
    of rows since forgotten or merged. An estimator may give those known
    without the derivation their values.
    """
    waiting = Underived(exc)
    names = est.__dict__.get("_derived_names", ())
    return {name: waiting for name in ("_model", *names)} | {"_derived_names": names}
