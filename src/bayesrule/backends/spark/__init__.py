"""Fitting and predicting on Spark DataFrames: the Spark backend.

:func:`fit` fits any bayesrule estimator that is fitted from mergeable
statistics (and mixture discriminant analysis, one Spark job per EM pass)
on a ``pyspark.sql.DataFrame``, through the estimators' public seam
(:mod:`bayesrule.estimators.seam`): each partition is summarised on the
executors by ``mapInArrow`` and only the statistics reach the driver
(:mod:`.fit`). :func:`predict` appends prediction columns to a DataFrame,
lazily (:mod:`.predict`). :mod:`.env` checks Java and starts sessions.

The module registers a :class:`SparkHandler`, so ``est.fit(df, "label")``
(``y`` the label column's name) and ``est.predict(df)`` work on Spark
DataFrames too. pyspark is imported only when a Spark DataFrame is met;
it is an optional dependency (``pip install 'bayesrule[spark]'``).
"""

from __future__ import annotations

import sys
from typing import Any

from ..._util.dispatch import register_handler
from .env import INSTALL, check_java, require_pyspark, session
from .fit import SparkRows, check_columns, spark_statistics
from .predict import METHODS, predict

__all__ = [
    "INSTALL",
    "METHODS",
    "SparkHandler",
    "check_java",
    "fit",
    "is_spark_frame",
    "predict",
    "predict_frame",
    "require_pyspark",
    "session",
]


def is_spark_frame(obj: Any) -> bool:
    """A pyspark DataFrame (classic or Connect); never imports pyspark."""
    if "pyspark.sql" not in sys.modules:
        return False
    from pyspark.sql import DataFrame

    return isinstance(obj, DataFrame)


def _check_frame(df: Any, what: str) -> None:
    require_pyspark()
    if not is_spark_frame(df):
        raise TypeError(
            f"{what} takes a pyspark.sql.DataFrame; got {type(df).__module__}.{type(df).__name__}."
        )


def fit(
    estimator: Any,
    df: Any,
    target: str,
    features: Any = None,
    weight: str | None = None,
    *,
    classes: Any = None,
    partial: bool = False,
    direct: bool | None = None,
) -> Any:
    """Fit ``estimator`` on the rows of a Spark DataFrame; see :func:`bayesrule.spark.fit`."""
    _check_frame(df, "bayesrule.spark.fit")
    if direct not in (None, True, False):
        raise ValueError(f"direct must be None, True or False; got {direct!r}.")
    cols = check_columns(estimator, df, target, features, weight)
    rows = SparkRows(df, cols, classes, direct)
    if partial and "stats_" in estimator.__dict__:
        try:
            update = estimator.partial_fit
        except AttributeError as exc:
            raise TypeError(
                f"{type(estimator).__name__} cannot continue a fit (partial=True): {exc}"
            ) from exc
        return update(rows, target, classes=classes)
    if partial and classes is not None and hasattr(type(estimator), "partial_fit"):
        return estimator.partial_fit(rows, target, classes=classes)
    return estimator.fit(rows, target)


def predict_frame(
    estimator: Any,
    df: Any,
    method: Any = ("predict", "predict_proba"),
    *,
    features: Any = None,
    prefix: str = "",
) -> Any:
    """``df`` with prediction columns appended; see :func:`bayesrule.spark.predict`."""
    _check_frame(df, "bayesrule.spark.predict")
    return predict(estimator, df, method, features=features, prefix=prefix)


class SparkHandler:
    """The Spark engine's :class:`~bayesrule._util.dispatch.CollectionHandler`."""

    name = "Spark"

    def claims(self, *objs: Any) -> bool:
        return any(isinstance(o, SparkRows) or is_spark_frame(o) for o in objs)

    def statistics(
        self, estimator: Any, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        if not isinstance(X, SparkRows):
            if not is_spark_frame(X) or not isinstance(y, str):
                raise TypeError(
                    f"{type(estimator).__name__} fits a Spark DataFrame X with y the name of its "
                    "label column (est.fit(df, 'label')), or use bayesrule.spark.fit(est, df, "
                    f"'label'); got X {type(X).__name__}, y {type(y).__name__}."
                )
            if sample_weight is not None and not isinstance(sample_weight, str):
                raise TypeError(
                    "with a Spark DataFrame, sample_weight must be the name of its weight column."
                )
            X = SparkRows(X, check_columns(estimator, X, y, None, sample_weight))
        return spark_statistics(estimator, X, classes, reset=reset)

    def predict(self, estimator: Any, method: str, X: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or method not in METHODS:
            raise TypeError(
                f"{type(estimator).__name__}.{method} on a Spark DataFrame takes no other "
                "argument; use bayesrule.spark.predict(est, df, method=...)."
            )
        return predict(estimator, X, method)

    def sample(
        self, estimator: Any, n_samples: Any, *, y: Any, random_state: Any, chunks: Any
    ) -> tuple[Any, Any]:
        raise TypeError("the Spark backend does not sample; sample in memory.")


register_handler(SparkHandler())
