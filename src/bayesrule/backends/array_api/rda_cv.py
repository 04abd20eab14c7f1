"""RDA-CV's search on device arrays: the folds' statistics and the held-out products there.

:meth:`RegularizedDiscriminantAnalysisCV.cross_validated` reads its rows
through a :class:`~bayesrule.estimators._cv_stats.Rows`; this module's
:class:`DeviceRows` keeps them on their device. Each fold's
:class:`~bayesrule.stats.ScatterStats` is computed there by
:func:`~.fit.device_statistics` (one-hot class sums and a GEMM per class and
block, as for a plain fit), merged and subtracted on the host as for NumPy
rows; the held-out rows of a split are gathered once on the device (in
float64 where it has it) and every candidate's distances, the joint log
likelihoods, their log-sum-exp and the arg max run there
(:mod:`bayesrule.estimators._rda_search`). Only the ``p x p``
eigendecompositions and Cholesky factors (host, float64, LAPACK) and the
candidates' ``(2, C)`` scores cross.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...estimators._cv_stats import CrossValidatedStats, Rows
from ...stats import ScatterStats

__all__ = ["DeviceRows", "is_search", "search"]


def is_search(est: Any) -> bool:
    """Whether ``est`` (a one-pass task's estimator) is a cross-validated search."""
    spec = getattr(est, "spec", None)
    return spec is not None and spec.statistic is CrossValidatedStats


class DeviceRows(Rows):
    """The rows of a fit on a device, as RDA-CV's search reads them (see the module)."""

    def __init__(self, X: Any, y: Any, w: Any, classes: Any, xp: Any, acc: Any) -> None:
        self.X, self.y, self.w, self.classes, self.xp, self.acc = X, y, w, classes, xp, acc
        self.n = int(X.shape[0])
        self.split_X = X  # what scikit-learn's splitters are given under the dispatch
        dev = X.device
        self.codes = xp.asarray(np.searchsorted(classes, y).astype(np.int64), device=dev)
        self.wd = xp.asarray(np.asarray(w, dtype=np.float64), dtype=acc, device=dev)

    def _index(self, idx: Any) -> Any:
        return self.xp.asarray(np.asarray(idx, dtype=np.int64), device=self.X.device)

    def statistics(self, idx: Any) -> ScatterStats:
        from .fit import device_statistics

        xp = self.xp
        if idx is None:
            return device_statistics(ScatterStats, self.X, self.codes, self.wd, self.classes, xp)
        i = self._index(idx)
        return device_statistics(
            ScatterStats,
            xp.take(self.X, i, axis=0),
            xp.take(self.codes, i),
            xp.take(self.wd, i),
            self.classes,
            xp,
        )

    def held_out(self, idx: Any) -> Any:
        return self.xp.astype(self.xp.take(self.X, self._index(idx), axis=0), self.acc)


def search(est: Any, X: Any, y: Any, w: Any, classes: Any, xp: Any, acc: Any) -> Any:
    """The estimator's :class:`CrossValidatedStats` from device rows (checked finite)."""
    from sklearn.utils.multiclass import check_classification_targets

    est._validate_params()
    if int(X.shape[0]) == 0:
        raise ValueError("X has 0 samples; at least one is required.")
    check_classification_targets(y)
    return est.cross_validated(DeviceRows(X, y, w, classes, xp, acc), y, w, classes)
