"""Checking the data an estimator is given, as its :class:`~.seam.InputSpec` declares.

:class:`InputMixin` holds the validation every estimator shares: ``X`` as a
float array (or a CSR matrix), the feature schema, the finite check (at
once, or deferred to the results), and the fit's checks of ``y`` and the
sample weights. It reads the estimator's declared ``spec`` and never changes
the estimator: the schema is recorded only once a fit succeeds.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from .._util.dispatch import handler_for
from .._util.validation import (
    check_finite,
    check_labels,
    check_lengths,
    check_sample_weight,
    check_table,
    explain_X_error,
)
from ._ranges import warn_out_of_range
from .seam import InputSpec, Schema, schema_of

__all__ = ["InputMixin", "refuse_collections"]


class InputMixin:
    """Validation of ``X``, ``y`` and weights, steered by the class's ``spec``."""

    spec: ClassVar[InputSpec] = InputSpec()

    def _numeric_X(self, X: Any, *, reset: bool) -> Any:
        """X as a float array (or CSR matrix); no value checks.

        With ``reset=False`` the feature count and names are checked against
        the fitted ones; with ``reset=True`` nothing is checked or recorded
        (the schema is recorded once a fit succeeds), so that
        :meth:`statistics` never changes the estimator.
        """
        kwargs: dict[str, Any] = {
            "accept_sparse": "csr" if self.spec.sparse else False,
            "dtype": [np.float64, np.float32],
            "ensure_all_finite": False,
        }
        refuse_collections(self, X)
        check_table(X)
        try:
            if reset:
                return check_array(X, input_name="X", estimator=self, **kwargs)
            return validate_data(self, X, reset=False, **kwargs)
        except (TypeError, ValueError) as exc:
            err = explain_X_error(X, exc)
            if err is exc:
                raise
            raise err from None

    def _validate_X(self, X: Any, *, reset: bool, fitting: bool = False) -> NDArray[Any]:
        """X checked as the model needs; ``fitting`` when the statistics' pass follows."""
        Xv = self._numeric_X(X, reset=reset)
        if not self.spec.deferred_finite_check:
            check_finite(Xv, "X", allow_nan=self.spec.allow_nan)
        return Xv

    def _prepare_X(self, Xv: Any) -> Any:
        """Transform a validated block as the statistics and the model see it.

        The identity here; BernoulliNB binarizes. It must not change the
        estimator: :meth:`statistics` and the predictions both call it.
        """
        return Xv

    def _input(self, X: Any, *, reset: bool) -> Any:
        """A block validated and prepared for the statistics or the model.

        With ``reset=False`` (data to predict), warns with
        :class:`~._ranges.OutOfRangeWarning` when it lies far outside the
        training range.
        """
        Xv = self._prepare_X(self._validate_X(X, reset=reset))
        if not reset:
            self._warn_out_of_range(Xv)
        return Xv

    def _warn_out_of_range(self, Xv: Any) -> None:
        """Warn if ``Xv`` lies far outside the training range (see :func:`~._ranges.warn_out_of_range`)."""
        warn_out_of_range(self, Xv)

    @staticmethod
    def _schema(X: Any, n_features: int, dtype: Any = None) -> Any:
        """The :class:`~.seam.Schema` of ``X`` (see :func:`~.seam.schema_of`)."""
        return schema_of(X, n_features, dtype)

    def _record_schema(self, schema: tuple[Any, ...]) -> None:
        self._fit_dtype = np.dtype(schema[2]) if len(schema) > 2 else np.dtype(np.float64)
        self.n_features_in_ = int(schema[0])
        if schema[1] is None:
            self.__dict__.pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = schema[1]

    def _dtype(self) -> np.dtype[Any]:
        """The floating dtype of the data fitted (float64 when built from statistics)."""
        return self.__dict__.get("_fit_dtype", np.dtype(np.float64))

    def fit_schema(self) -> Schema:
        """The :class:`~.seam.Schema` of the data the model was fitted on.

        Its feature count (``n_features_in_``), names (``feature_names_in_``,
        None when the data had none) and floating dtype (float64 for a model
        built from statistics alone). Raises ``NotFittedError`` before a fit.
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        names = getattr(self, "feature_names_in_", None)
        return Schema(int(self.n_features_in_), names, self._dtype())

    def _after(self, Xv: NDArray[Any], result: NDArray[Any]) -> None:
        """With a deferred check: raise the row-naming error if ``result`` is not finite."""
        if self.spec.deferred_finite_check and not np.all(np.isfinite(result)):
            check_finite(Xv, "X", allow_nan=self.spec.allow_nan)

    def _deferred(self) -> Any:
        """Quiet NumPy's invalid/overflow warnings where :meth:`_after` raises on them anyway.

        With a deferred check, a NaN or infinity in ``X`` flows into the
        results and is then reported by row and column; the RuntimeWarnings
        it raised on the way would only be noise before that error.
        """
        if self.spec.deferred_finite_check:
            return np.errstate(invalid="ignore", over="ignore")
        return contextlib.nullcontext()

    def _validate_fit_input(
        self, X: Any, y: Any, sample_weight: Any, *, reset: bool
    ) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]]:
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        refuse_collections(self, X, y, sample_weight)
        # no range check: training data
        Xv = self._prepare_X(self._validate_X(X, reset=reset, fitting=True))
        n = Xv.shape[0]
        y_arr = np.asarray(y)
        if y_arr.ndim == 2 and y_arr.shape[1] == 1:
            from sklearn.exceptions import DataConversionWarning

            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; ravelling it.",
                DataConversionWarning,
                stacklevel=3,
            )
            y_arr = y_arr.ravel()
        if y_arr.ndim != 1:
            raise ValueError(f"y must be 1-dimensional; got shape {y_arr.shape}.")
        check_lengths(n, y=y_arr)
        w = check_sample_weight(sample_weight, n)
        if n == 0:
            raise ValueError("X has 0 samples; at least one is required.")
        check_labels(y_arr)
        check_classification_targets(y_arr)
        return Xv, y_arr, w


def refuse_collections(est: Any, X: Any, y: Any = None, sample_weight: Any = None) -> None:
    """TypeError where a path would silently gather an engine's collection into memory."""
    handler = handler_for(X, y, sample_weight)
    if handler is not None:
        raise TypeError(
            f"{type(est).__name__} cannot take {handler.name} collections here: this operation needs "
            "the data in memory (e.g. a covariance_estimator). Compute them first "
            "(X.compute()), or use a model fitted from statistics."
        )
