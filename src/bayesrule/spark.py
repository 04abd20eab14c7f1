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

from .backends.spark import check_java, fit, session
from .backends.spark import predict_frame as predict

__all__ = ["check_java", "fit", "predict", "session"]
