"""Fit and predict with any bayesrule estimator on Spark DataFrames.

``bayesrule.spark.fit(est, df, "label")`` summarises every partition on the
executors (``DataFrame.mapInArrow``), sends only the statistics to the
driver and installs them: the model equals an in-memory fit on the same
rows, whatever the partitioning. ``bayesrule.spark.predict(est, df)``
returns ``df`` with prediction columns appended, computed lazily on the
executors. Needs ``pip install 'bayesrule[spark]'`` (pyspark, pyarrow,
pandas) and, for Spark 4, Java 17 or newer. See docs/spark.md.
"""

from __future__ import annotations

from typing import Any

from .backends.spark import check_java, session
from .backends.spark import fit as _fit
from .backends.spark import predict_frame as _predict

__all__ = ["check_java", "fit", "predict", "session"]


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
    return _fit(
        estimator, df, target, features, weight, classes=classes, partial=partial, direct=direct
    )


def predict(
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
    return _predict(estimator, df, method, features=features, prefix=prefix)
