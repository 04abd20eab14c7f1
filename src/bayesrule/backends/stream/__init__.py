"""Out-of-core fitting and prediction: every model from files larger than memory.

A source is read one block of rows at a time (CSV, compressed or not, through
pyarrow's streaming CSV reader; Parquet files, directories, lists and globs,
one record batch at a time; ``.npy`` arrays memory-mapped; or any iterable of
``(X, y)`` / ``(X, y, sample_weight)`` blocks). :func:`fit_stream` fits an
estimator through its public seam (:mod:`bayesrule.estimators.seam`): each
block is summarised by the estimator's task and the summaries are combined,
so that memory is bounded by the block size and the statistics (``O(K p^2)``
at most), never by the number of rows; the model is derived once at the end
and equals ``fit`` on all the rows at once (to rounding).
:func:`predict_stream` and :func:`iter_predict` stream predictions the same way.

Kernel naive Bayes keeps every distinct value of each feature, which grows
with continuous data; its task keeps them bounded by binning a feature onto a
power-of-two grid once it holds more than ``max_values`` distinct values
(see :func:`fit_stream`).

Modules: :mod:`.sources` (files and columns), :mod:`.csv_files`,
:mod:`.parquet_files`, :mod:`.arrays` (``.npy`` and iterables of blocks),
:mod:`.blocks` (Arrow tables to arrays, buffers, read-ahead), :mod:`.reader`
(:func:`read_blocks`), :mod:`.progress`, :mod:`.passes` (the ``reduce`` of a
fit), :mod:`.fit` and :mod:`.predict`.
"""

from __future__ import annotations

from .fit import MAX_VALUES, fit_stream  # noqa: F401 - KernelNB's default bound
from .predict import iter_predict, predict_stream
from .reader import read_blocks

__all__ = ["fit_stream", "iter_predict", "predict_stream", "read_blocks"]
