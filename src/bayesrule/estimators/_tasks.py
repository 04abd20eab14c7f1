"""The one-pass tasks a backend runs on its blocks (``estimator.summariser()``).

:class:`EstimatorSummariser` summarises a laid-out block by the estimator's
own :meth:`~bayesrule.estimators.GenerativeClassifier.statistics`.
:class:`ColumnSummariser` also takes a block held column by column (Arrow's
record batches from Parquet or Spark), for any estimator whose statistic has
a column pass (``from_columns``): the estimator's ``_column_pass()`` says
which, so a new statistic with ``from_columns`` needs no task of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from .._util.validation import check_labels


class EstimatorSummariser:
    """The one-pass task: an unfitted copy of the estimator with its data choices pinned.

    ``statistics`` is the copy's :meth:`GenerativeClassifier.statistics`;
    blocks combine by ``merge``.
    """

    def __init__(self, estimator: Any) -> None:  # a GenerativeClassifier
        self.estimator = estimator

    def statistics(self, X: Any, y: Any, sample_weight: Any = None, classes: Any = None) -> Any:
        return self.estimator.statistics(X, y, sample_weight, classes=classes)

    def combine(self, total: Any, block: Any) -> Any:
        return block if total is None else total.merge(block)

    def finish(self, total: Any) -> Any:
        return total


class ColumnSummariser(EstimatorSummariser):
    """The one-pass task of an estimator whose statistic also summarises a block by its columns.

    A backend whose blocks hold their features column by column calls
    :meth:`column_statistics` with the columns as they are, and lays the
    block out for :meth:`statistics` only when it answers None.
    """

    def column_statistics(
        self, columns: Sequence[Any], y: Any, sample_weight: Any = None, classes: Any = None
    ) -> Any:
        """``statistics(X, y, sample_weight, classes)`` of ``X`` the ``columns`` side by side, or None.

        ``columns`` are 1-D float arrays (float32 or float64, one dtype), one
        per feature, of one length. The result is the statistic's
        ``from_columns`` on them (e.g.
        :meth:`bayesrule.stats.DiagonalStats.from_columns`,
        :meth:`bayesrule.stats.ScatterStats.from_columns`). None where
        :meth:`statistics` would raise or warn (labels it refuses, a NaN or
        an infinity), where the block has sample weights or no row, or where
        the estimator's blocks have no column pass (a statistic without
        ``from_columns``, or one wrapped as RDA-CV's search wraps it): the
        caller then gives :meth:`statistics` the block laid out, and its
        error, naming the row and column, is the one raised.
        """
        est = self.estimator
        from_columns = est._column_pass()
        if from_columns is None or sample_weight is not None or not len(columns):
            return None
        dtypes = {np.asarray(col).dtype for col in columns}
        if len(dtypes) != 1 or next(iter(dtypes)) not in (np.float32, np.float64):
            return None
        y_arr = np.asarray(y)
        n = len(columns[0])
        if y_arr.ndim != 1 or y_arr.shape[0] != n or n == 0:
            return None
        try:
            est._validate_params()
            check_labels(y_arr)
            if y_arr.dtype.kind not in "biu":
                # 1-D integer labels are always a classification target (binary or
                # multiclass); scikit-learn's check costs milliseconds a block
                check_classification_targets(y_arr)
            if classes is not None:
                check_labels(np.asarray(classes), "classes")
            with np.errstate(invalid="ignore", over="ignore"):  # a NaN or infinity: None below
                stats = from_columns(columns, y_arr, classes=classes)
        except (ValueError, TypeError):
            return None
        # a NaN or infinity of X reaches the means (and the squares' sums where they are
        # kept apart): the block laid out names its row and column
        carriers = [stats.means, getattr(stats, "m2", None)]
        return stats if all(c is None or np.isfinite(c).all() for c in carriers) else None
