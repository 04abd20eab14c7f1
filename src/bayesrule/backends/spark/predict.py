"""Predicting on a Spark DataFrame: the DataFrame with prediction columns appended, lazily.

The fitted estimator travels to the executors once (a broadcast variable on
classic Spark; inside the plan on Spark Connect, which has none) and scores
each Arrow batch where it lives (:func:`~.arrow.predict_partition`). The
result is an ordinary lazy DataFrame: nothing runs until it is written,
collected or counted.

Column layout (``prefix`` before each name):

============================  ==============================================
method                        columns
============================  ==============================================
``predict``                   ``prediction``: the label, typed as the classes
                              (strings stay strings, integers long, ...)
``predict_proba``             ``proba_<class>``: one double per class
``predict_log_proba``         ``log_proba_<class>``
``predict_joint_log_proba``   ``joint_log_proba_<class>``
``class_log_density``         ``class_log_density_<class>``
``decision_function``         ``decision`` (two classes) or ``decision_<class>``
``score_samples``             ``score_samples``: the log density of the row
``transform``                 ``transform_0``, ``transform_1``, ...
============================  ==============================================
"""

from __future__ import annotations

import copy
import functools
import warnings
from typing import Any

import numpy as np

from .arrow import Columns, predict_partition
from .summaries import NUMERIC, UNREADABLE, quoted, type_names

__all__ = ["METHODS", "output_names", "predict", "release"]

#: each method's column stem, and whether it gives one column per class
METHODS: dict[str, tuple[str, bool]] = {
    "predict": ("prediction", False),
    "predict_proba": ("proba", True),
    "predict_log_proba": ("log_proba", True),
    "predict_joint_log_proba": ("joint_log_proba", True),
    "class_log_density": ("class_log_density", True),
    "decision_function": ("decision", True),
    "score_samples": ("score_samples", False),
    "transform": ("transform", False),
}


def output_names(est: Any, method: str, width: int, prefix: str) -> list[str]:
    """The columns ``method`` appends (``width`` 0: a single column for a 1-D output)."""
    stem, per_class = METHODS[method]
    if width == 0:
        return [prefix + stem]
    classes = [str(c) for c in est.classes_]
    if per_class and width == len(classes):
        return [f"{prefix}{stem}_{c}" for c in classes]
    return [f"{prefix}{stem}_{i}" for i in range(width)]


def _label_type(classes: Any) -> Any:
    import pyarrow as pa

    arr = np.asarray(classes)
    if arr.dtype.kind in "OUS":
        return pa.string()
    return pa.from_numpy_dtype(arr.dtype)


def _probe(est: Any, cols: Columns, arrow_schema: Any) -> Any:
    """One made-up row in the form of a batch's features: zeros, or all missing for a frame."""
    if cols.frame:
        import pyarrow as pa

        row = {f: [None] for f in cols.features}
        return pa.Table.from_pydict(row, schema=arrow_schema).to_pandas()
    return np.zeros((1, len(cols.features)), dtype=np.dtype(cols.dtype))


def _broadcast_value(variable: Any) -> Any:
    return variable.value


def _held(est: Any) -> Any:
    return est


#: the attribute of a predicting DataFrame that holds its model's broadcast variable
_BROADCAST = "_bayesrule_broadcast"


def _loader(df: Any, est: Any) -> tuple[Any, Any]:
    """How an executor gets the model: a broadcast variable (classic Spark) or the plan (Connect).

    Returns the loader and the broadcast variable (None on Connect).
    """
    frozen = copy.deepcopy(est)
    try:
        context = df.sparkSession.sparkContext
    except Exception:  # Spark Connect: no SparkContext, no broadcast variables
        return functools.partial(_held, frozen), None
    variable = context.broadcast(frozen)
    return functools.partial(_broadcast_value, variable), variable


def release(scored: Any) -> bool:
    """Destroy the model's broadcast variable of a DataFrame :func:`predict` returned.

    For a program that is done with the predictions (written, counted): the
    executors' and the driver's copies of the model are freed at once instead
    of when the session ends. The DataFrame (and any derived from it) can no
    longer run afterwards. Returns whether there was a variable to destroy.
    """
    variable = getattr(scored, _BROADCAST, None)
    if variable is None:
        return False
    setattr(scored, _BROADCAST, None)
    variable.destroy()
    return True


def predict(
    est: Any,
    df: Any,
    method: str | tuple[str, ...] | list[str] = ("predict", "predict_proba"),
    *,
    features: Any = None,
    prefix: str = "",
) -> Any:
    """``df`` with the columns of ``est``'s prediction methods appended (a lazy DataFrame).

    See :func:`bayesrule.spark.predict`.
    """
    from pyspark.sql.pandas.types import from_arrow_type, to_arrow_schema
    from pyspark.sql.types import DoubleType, StructField, StructType
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    name = type(est).__name__
    methods = (method,) if isinstance(method, str) else tuple(method)
    if not methods:
        raise ValueError("method must name at least one prediction method.")
    for m in methods:
        if m not in METHODS:
            raise ValueError(
                f"method {m!r} is not a prediction method; choose from {list(METHODS)}."
            )
        try:
            getattr(est, m)
        except AttributeError as exc:
            raise ValueError(f"{name} has no {m!r}: {exc}") from exc
    if len(set(methods)) != len(methods):
        raise ValueError(f"method names a method twice: {list(methods)}.")
    types = type_names(df)
    fitted = getattr(est, "feature_names_in_", None)
    fitted_names = None if fitted is None else [str(n) for n in fitted]
    if features is None:
        if fitted_names is None:
            raise ValueError(
                f"{name} was fitted without feature names: give features=[...], the "
                f"{est.n_features_in_} columns in the order it was fitted on."
            )
        chosen = fitted_names
    else:
        chosen = [features] if isinstance(features, str) else list(features)
        if fitted_names is not None and chosen != fitted_names:
            raise ValueError(
                f"features {chosen[:20]} differ from the columns {name} was fitted on, "
                f"{fitted_names[:20]}."
            )
        if len(chosen) != est.n_features_in_:
            raise ValueError(
                f"{len(chosen)} feature columns given, but {name} is expecting "
                f"{est.n_features_in_} features as input."
            )
    missing = [f for f in chosen if f not in types]
    if missing:
        extra = [c for c in types if c not in chosen]
        raise ValueError(
            f"the DataFrame lacks the feature column(s) {missing[:20]} that {name} was fitted "
            f"on; it has {extra[:20]} besides."
        )
    frame = bool(est.input_spec().frame)
    for f in chosen:
        t = types[f]
        if (frame and t in UNREADABLE) or (not frame and t not in NUMERIC):
            raise ValueError(
                f"feature column {f!r} has Spark type {t}, which {name} cannot read"
                + ("." if frame else "; it needs numeric columns.")
            )
    dtype = "float32" if all(types[f] == "float" for f in chosen) else "float64"
    cols = Columns(tuple(chosen), "", None, frame, dtype, est.input_spec().order)
    arrow_schema = to_arrow_schema(df.select(*[quoted(f) for f in chosen]).schema)
    probe = _probe(est, cols, arrow_schema)
    widths = []
    with warnings.catch_warnings():
        # the made-up row is no data: warnings about it (out of the training range) are noise
        warnings.simplefilter("ignore")
        for m in methods:
            out = np.asarray(getattr(est, m)(probe))
            widths.append(0 if out.ndim == 1 else int(out.shape[1]))
    label_type = _label_type(est.classes_)
    fields = list(df.schema.fields)
    added: list[str] = []
    for m, width in zip(methods, widths, strict=True):
        new = output_names(est, m, width, prefix)
        spark_type = from_arrow_type(label_type) if m == "predict" else DoubleType()
        fields.extend(StructField(n, spark_type, True) for n in new)
        added.extend(new)
    clash = sorted({n for n in added if n in types or added.count(n) > 1})
    if clash:
        raise ValueError(
            f"the prediction columns {clash[:10]} are already in the DataFrame (or repeated); "
            "give a prefix= to tell them apart."
        )
    names = tuple(f.name for f in fields)
    load, variable = _loader(df, est)
    fn = predict_partition(load, methods, cols, tuple(widths), names, label_type)
    scored = df.mapInArrow(fn, StructType(fields))
    if variable is not None:
        setattr(scored, _BROADCAST, variable)
    return scored
