"""Fitting and predicting on Spark DataFrames: the Spark backend.

:func:`fit` fits any bayesrule estimator that is fitted from mergeable
statistics (and mixture discriminant analysis, one Spark job per EM pass)
on a ``pyspark.sql.DataFrame``, through the estimators' public seam
(:mod:`bayesrule.estimators.seam`): each partition is summarised on the
executors by ``mapInArrow`` and only the statistics reach the driver
(:mod:`.summaries`). :func:`predict_frame` appends prediction columns to a
DataFrame, lazily (:mod:`.predict`). :mod:`.env` checks Java and starts
sessions. :mod:`bayesrule.spark` makes ``fit`` and ``predict_frame``
public, as ``fit`` and ``predict``.

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
from .predict import METHODS
from .predict import predict as predict_columns
from .summaries import SparkRows, check_columns, spark_statistics

__all__ = [
    "INSTALL",
    "METHODS",
    "SparkHandler",
    "check_java",
    "fit",
    "is_spark_frame",
    "predict_columns",
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
    """Fit ``estimator`` on the rows of a Spark DataFrame; returns the same estimator, fitted.

    Each partition's statistics are computed on the executors
    (``mapInArrow``), and only they reach the driver, where they are merged
    in a balanced tree and installed: the model equals ``estimator.fit`` on
    the same rows in memory (to rounding), however the rows are
    partitioned. Mixture discriminant analysis runs one Spark job per EM
    pass (cache the DataFrame first). A fit that fails leaves the estimator
    as it was.

    Parameters
    ----------
    estimator : bayesrule estimator
        Any estimator fitted from mergeable statistics, and
        MixtureDiscriminantAnalysis (not RegularizedDiscriminantAnalysisCV).
    df : pyspark.sql.DataFrame
    target : str
        The label column (numbers, strings or booleans). Rows whose label is
        null are left out, with a warning saying how many.
    features : list of str, optional
        The feature columns, in order; by default every column but the
        target and the weight. Numeric for the numeric models; MixedNB
        reads strings as categories and infers each column's kind as
        ``fit`` would from the same rows.
    weight : str, optional
        A column of non-negative sample weights.
    classes : array-like, optional
        Every label to declare (a class may have no row); by default the
        labels found in the data, in the same pass.
    partial : bool, default=False
        Add these rows to the estimator's fit (as ``partial_fit``) instead
        of starting afresh. On an unfitted estimator this is ``fit``
        (``partial_fit`` with ``classes`` when given).
    direct : bool or None, default=None
        How the executors read a DataFrame that is a plain Parquet scan
        (``spark.read.parquet(...)``, its columns at most selected or
        renamed): None reads its files directly with pyarrow where that is
        sure to read what Spark would, else through Spark; False always
        through Spark (Spark converts the rows to Arrow); True directly or
        a ``ValueError`` saying why not. The model is the same either way.
        See docs/spark.md, "The fast path".

    Returns
    -------
    estimator

    Raises
    ------
    ValueError
        A missing target, feature or weight column, a column of a type the
        model cannot read (named), a DataFrame without rows, or any error
        the estimator's own validation raises on a partition's rows.
    TypeError
        An estimator that cannot be fitted from partitions (RDA-CV), or
        ``partial=True`` for one that cannot continue a fit (MDA).
    FileNotFoundError
        A file of a Parquet scan read directly is gone (deleted or moved
        since the DataFrame was read), naming it.
    ImportError
        pyspark is not installed.

    Examples
    --------
    >>> import bayesrule, bayesrule.spark  # doctest: +SKIP
    >>> lda = bayesrule.spark.fit(bayesrule.LinearDiscriminantAnalysis(), df, "label")  # doctest: +SKIP
    """
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
    method: str | tuple[str, ...] | list[str] = ("predict", "predict_proba"),
    *,
    features: Any = None,
    prefix: str = "",
) -> Any:
    """``df`` with prediction columns appended: a lazy DataFrame scored on the executors.

    The model is sent to the executors once (a broadcast variable), and
    each Arrow batch is scored where it lives.

    Parameters
    ----------
    estimator : fitted bayesrule estimator
    df : pyspark.sql.DataFrame
        Holds the feature columns the estimator was fitted on (by name);
        other columns are kept as they are.
    method : str or sequence of str, default=("predict", "predict_proba")
        Any of ``predict`` (column ``prediction``, typed as the classes:
        string labels stay strings), ``predict_proba`` (``proba_<class>``,
        one double column per class), ``predict_log_proba``
        (``log_proba_<class>``), ``predict_joint_log_proba``,
        ``class_log_density``, ``decision_function`` (``decision`` or
        ``decision_<class>``), ``score_samples`` (``score_samples``),
        ``transform`` (``transform_0``, ...).
    features : list of str, optional
        The feature columns; by default the names the model was fitted on
        (required for a model fitted without names).
    prefix : str, default=""
        Put before every new column's name.

    Returns
    -------
    pyspark.sql.DataFrame

    Raises
    ------
    ValueError
        The DataFrame lacks a feature column of the model (named), a column
        the model cannot read, or a new column's name is already taken.
    """
    _check_frame(df, "bayesrule.spark.predict")
    return predict_columns(estimator, df, method, features=features, prefix=prefix)


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
        return predict_columns(estimator, X, method)

    def sample(
        self, estimator: Any, n_samples: Any, *, y: Any, random_state: Any, chunks: Any
    ) -> tuple[Any, Any]:
        raise TypeError("the Spark backend does not sample; sample in memory.")


register_handler(SparkHandler())
