"""Predictions over a source, block by block: :func:`iter_predict` and :func:`predict_stream`."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...io.formats import output_format, replacing, strip_compression, write_frames
from .blocks import _n_rows, _prefetched, _schema_of
from .passes import _located
from .progress import _Progress
from .reader import _open
from .sources import _files, _need_pyarrow

_METHODS = (
    "predict",
    "predict_proba",
    "predict_log_proba",
    "predict_joint_log_proba",
    "decision_function",
    "score_samples",
    "class_log_density",
)


# ---------------------------------------------------------------------------------
# prediction
# ---------------------------------------------------------------------------------
def _method_list(est: Any, method: Any) -> list[str]:
    methods = [method] if isinstance(method, str) else list(method)
    for m in methods:
        if m not in _METHODS:
            raise ValueError(f"method must be one of {list(_METHODS)}; got {m!r}.")
    return methods


def _result_columns(est: Any, method: str, values: NDArray[Any]) -> list[tuple[str, Any]]:
    classes = [str(c) for c in est.classes_]
    if method == "predict":
        return [("prediction", values)]
    if method == "score_samples":
        return [("score_samples", values)]
    if method == "decision_function" and values.ndim == 1:
        return [("decision", values)]
    prefix = {
        "predict_proba": "proba",
        "predict_log_proba": "log_proba",
        "predict_joint_log_proba": "joint_log_proba",
        "decision_function": "decision",
        "class_log_density": "log_density",
    }[method]
    return [(f"{prefix}_{c}", values[:, k]) for k, c in enumerate(classes)]


#: the options of a read that :func:`iter_predict` and :func:`predict_stream` pass on
_READ_OPTIONS = ("block_rows", "dtypes", "sep", "decimal", "na_values")


def _predict_tables(
    estimator: Any,
    source: Any,
    progress: bool | None,
    *,
    method: str | Sequence[str] = "predict",
    keep: Any = None,
    features: Any = None,
    target: str | None = None,
    **read: Any,
) -> Iterator[Any]:
    """Predictions over a source as pyarrow Tables, one per block; ``read`` as for :func:`iter_predict`."""
    from sklearn.utils.validation import check_is_fitted

    unknown = [k for k in read if k not in _READ_OPTIONS]
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}.")

    pa = _need_pyarrow()
    check_is_fitted(estimator)
    methods = _method_list(estimator, method)
    names = getattr(estimator, "feature_names_in_", None)
    if features is None and names is not None and _files(source) is not None:
        features = [str(n) for n in names]
    # DataFrames with their own dtypes for an estimator that reads them (MixedNB)
    spec = getattr(estimator, "input_spec", None)
    reader = _open(
        source,
        features=features,
        target=target,
        keep=keep,
        frame=bool(spec is not None and spec().frame),
        exclude=[target] if isinstance(target, str) else [],
        **read,
    )
    label = f"predicting with {type(estimator).__name__}"
    with _Progress(reader, progress, label) as bar, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        for chunk in _prefetched(reader.chunks):
            p = _schema_of(chunk.X, chunk.names)[0]
            if p != estimator.n_features_in_:
                raise ValueError(
                    f"{chunk.where}: the block has {p} features, but the model was fitted with "
                    f"{estimator.n_features_in_}."
                )
            arrays: list[Any] = []
            fields: list[str] = []
            if chunk.keep is not None:
                for name in chunk.keep.column_names:
                    fields.append(name)
                    arrays.append(chunk.keep.column(name))
            for m in methods:
                try:
                    values = np.asarray(getattr(estimator, m)(chunk.X))
                except ValueError as exc:
                    raise _located(exc, chunk) from exc
                for name, col in _result_columns(estimator, m, values):
                    if name in fields:
                        name = f"{name}_{m}"
                    fields.append(name)
                    arrays.append(pa.array(col))
            yield pa.Table.from_arrays(arrays, names=fields)
            bar.advance(chunk, _n_rows(chunk.X))


def iter_predict(
    estimator: Any,
    source: Any,
    *,
    method: str | Sequence[str] = "predict",
    keep: Any = None,
    features: Any = None,
    target: str | None = None,
    block_rows: int | None = None,
    dtypes: dict[str, Any] | None = None,
    progress: bool | None = False,
    sep: str | None = None,
    decimal: str | None = None,
    na_values: str | Sequence[str] | None = None,
) -> Iterator[Any]:
    """Predictions over a source, one pandas DataFrame per block of rows.

    Parameters
    ----------
    estimator : fitted GenerativeClassifier
    source : as for :func:`read_blocks`, or an iterable of ``X`` blocks wrapped as ``(X, None)``
    method : str or list of str, default='predict'
        Any of 'predict' (column ``prediction``), 'predict_proba'
        (``proba_<class>``), 'predict_log_proba' (``log_proba_<class>``),
        'predict_joint_log_proba', 'decision_function' (``decision`` for two
        classes), 'score_samples' and 'class_log_density'.
    keep : str or list of str, optional
        Columns of the source copied into the output before the results (an id).
    features : optional
        By default the columns the model was fitted on (``feature_names_in_``).
    target : str, optional
        A label column of the source, left out of the default features.
    block_rows, dtypes, sep, decimal, na_values
        As for :func:`read_blocks`.
    progress : bool or None, default=False
        A progress bar on stderr (None: when stderr is a terminal).

    Yields
    ------
    pandas.DataFrame
        The kept columns, then the results, for each block in order.
    """
    read = {
        "block_rows": block_rows,
        "dtypes": dtypes,
        "sep": sep,
        "decimal": decimal,
        "na_values": na_values,
    }
    for table in _predict_tables(
        estimator,
        source,
        progress,
        method=method,
        keep=keep,
        features=features,
        target=target,
        **read,
    ):
        yield table.to_pandas()


def predict_stream(
    estimator: Any,
    source: Any,
    output: str | os.PathLike[str],
    *,
    progress: bool | None = None,
    **options: Any,
) -> Path:
    """Write predictions over a source to a table file, block by block.

    The format follows ``output``'s suffixes, as for every table bayesrule
    reads: CSV (``.csv``, ``.txt``), TSV (``.tsv``, ``.tab``), each also
    compressed (``.gz``, ``.bz2``, ``.xz``, ``.zst``, ``.zip``), Parquet
    (``.parquet``, ``.pq``), JSON lines (``.jsonl``, also compressed) and
    Excel (``.xlsx``, written whole). The file is written under a temporary
    name in the same directory and renamed when complete, so a failure
    part-way leaves no partial file (and an existing file untouched); a
    path that is not a regular file (``/dev/null``, a named pipe) is
    written directly. The other arguments are those of :func:`iter_predict`
    (``method``, ``keep``, ``features``, ``target``, ``block_rows``,
    ``dtypes``, ``sep``, ``decimal``, ``na_values``), with the same defaults;
    ``progress`` shows a bar by default when stderr is a terminal.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    _need_pyarrow()
    out = Path(output)
    kind = output_format(out)  # a ValueError naming the suffixes for another name
    if not out.parent.exists():
        raise ValueError(f"output {str(out)!r}: the directory {str(out.parent)!r} does not exist.")
    tables = _predict_tables(estimator, source, progress, **options)
    written = [0]

    def counted() -> Iterator[Any]:
        for table in tables:
            written[0] += 1
            yield table

    with replacing(out) as tmp:
        write_frames(counted(), tmp, kind, name=strip_compression(out.name))
        if written[0] == 0:
            raise ValueError("the source holds no rows: nothing to predict.")
    return out
