"""RDA-CV's search on device arrays: the folds' statistics and the held-out products there.

:meth:`RegularizedDiscriminantAnalysisCV.cross_validated` reads its rows
through a :class:`~bayesrule.estimators.SearchRows`; this module's
:class:`DeviceRows` keeps them on their device. Each fold's
:class:`~bayesrule.stats.ScatterStats` is computed there by the function
the fit hands in (:mod:`.fit`'s ``device_statistics``: one-hot class sums
and a GEMM per class and block, as for a plain fit), merged and subtracted on the host as for NumPy
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

from ...estimators import CrossValidatedStats, SearchRows
from ...stats import ScatterStats

__all__ = ["DeviceRows", "is_search", "search"]


def is_search(est: Any) -> bool:
    """Whether ``est`` (a one-pass task's estimator) is a cross-validated search."""
    spec = getattr(est, "spec", None)
    return spec is not None and spec.statistic is CrossValidatedStats


class DeviceRows(SearchRows):
    """The rows of a fit on a device, as RDA-CV's search reads them (see the module)."""

    def __init__(
        self, X: Any, y: Any, w: Any, classes: Any, xp: Any, acc: Any, summarise: Any
    ) -> None:
        self.X, self.y, self.w, self.classes, self.xp, self.acc = X, y, w, classes, xp, acc
        self.summarise = summarise  # (statistic, X, codes, w, classes, xp) -> statistic
        self.n = int(X.shape[0])
        self.split_X = X  # what scikit-learn's splitters are given under the dispatch
        dev = X.device
        self.codes = xp.asarray(np.searchsorted(classes, y).astype(np.int64), device=dev)
        self.wd = xp.asarray(np.asarray(w, dtype=np.float64), dtype=acc, device=dev)

    def _index(self, idx: Any) -> Any:
        return self.xp.asarray(np.asarray(idx, dtype=np.int64), device=self.X.device)

    def statistics(self, idx: Any) -> ScatterStats:
        xp = self.xp
        if idx is None:
            return self.summarise(ScatterStats, self.X, self.codes, self.wd, self.classes, xp)
        i = self._index(idx)
        return self.summarise(
            ScatterStats,
            xp.take(self.X, i, axis=0),
            xp.take(self.codes, i),
            xp.take(self.wd, i),
            self.classes,
            xp,
        )

    def held_out(self, idx: Any) -> Any:
        return self.xp.astype(self.xp.take(self.X, self._index(idx), axis=0), self.acc)


def search(
    est: Any, X: Any, y: Any, w: Any, classes: Any, xp: Any, acc: Any, summarise: Any
) -> Any:
    """The estimator's :class:`CrossValidatedStats` from device rows (checked finite).

    ``summarise`` computes a statistic of device rows (the fit's
    ``device_statistics``); the estimator validates its parameters itself.
    """
    from sklearn.utils.multiclass import check_classification_targets

    if int(X.shape[0]) == 0:
        raise ValueError("X has 0 samples; at least one is required.")
    check_classification_targets(y)
    rows = DeviceRows(X, y, w, classes, xp, acc, summarise)
    return est.cross_validated(rows, y, w, classes)
