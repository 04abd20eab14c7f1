"""The figures of ``bayesrule evaluate``, from counts added up over blocks of rows."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._data import UsageError
from ._incomplete import unscored
from ._sources import Data

__all__ = ["Tally", "metrics", "plain"]


class Tally:
    """Confusion counts and the log-loss, accumulated over blocks of rows (memory: K x K).

    The log-loss is scikit-learn's ``log_loss``: each row's probability of its
    true class clipped to ``[eps, 1 - eps]`` (``eps`` of the probabilities'
    float type) before the logarithm, so that one row the model calls
    impossible costs at most ``-log(eps)`` (36.04 in float64) rather than
    hundreds or infinity, and the figure equals scikit-learn's on the same
    probabilities. The mean of the unclipped ``-log p`` is kept as
    ``log_loss_unclipped``.
    """

    def __init__(self, est: Any, data: Data) -> None:
        self.classes = est.classes_
        self.data = data
        k = self.classes.size
        self.counts = np.zeros((k, k), dtype=np.int64)  # true (a class) x predicted
        self.unseen: dict[Any, NDArray[np.int64]] = {}  # a label the model never saw
        self.loss = 0.0
        self.unclipped = 0.0
        self.seen_rows = 0
        self.rows = 0
        self.unscored = 0  # rows the model could not score (empty: --incomplete empty)

    def add(self, y: Any, log_proba: Any) -> None:
        classes, k = self.classes, self.classes.size
        empty = unscored(log_proba)
        if empty.any():
            self.unscored += int(empty.sum())
            y, log_proba = y[~empty], np.asarray(log_proba)[~empty]
        pred = np.argmax(log_proba, axis=1)
        try:
            seen = np.isin(y, classes)
            np.union1d(classes, y[:1])
        except TypeError:
            raise UsageError(
                f"{self.data}: the labels {np.unique(y.astype(str))[:5].tolist()} are not of the "
                f"same kind as the model's classes {[str(c) for c in classes[:5]]}."
            ) from None
        true = np.searchsorted(classes, y[seen])
        self.counts += np.bincount(true * k + pred[seen], minlength=k * k).reshape(k, k)
        nll = -np.asarray(log_proba[np.flatnonzero(seen), true])
        kind = nll.dtype if nll.dtype.kind == "f" else np.dtype(np.float64)
        eps = float(np.finfo(kind).eps)
        # scikit-learn's clipping of p to [eps, 1 - eps], on -log p
        self.loss += float(np.sum(np.clip(nll, -np.log1p(-eps), -np.log(eps))))
        self.unclipped += float(np.sum(nll))
        for label in np.unique(y[~seen]):
            row = np.bincount(pred[~seen][y[~seen] == label], minlength=k)
            self.unseen[label] = self.unseen.get(label, 0) + row
        self.seen_rows += int(seen.sum())
        self.rows += int(y.size)

    def metrics(self) -> dict[str, Any]:
        """Every figure of ``evaluate``, from the counts."""
        import warnings

        if self.rows == 0 and self.unscored:
            raise UsageError(
                f"{self.data}: none of the {self.unscored:,} rows can be scored: each holds "
                "cells the model cannot take (missing or infinite values)."
            )

        classes = self.classes
        unseen = np.array(sorted(self.unseen, key=str)) if self.unseen else classes[:0]
        labels = np.union1d(classes, unseen) if unseen.size else classes
        at = np.searchsorted(labels, classes)
        counts = np.zeros((labels.size, labels.size), dtype=np.int64)
        counts[np.ix_(at, at)] = self.counts
        for label, row in self.unseen.items():
            counts[np.searchsorted(labels, label), at] = row
        if unseen.size:
            n = sum(int(r.sum()) for r in self.unseen.values())
            warnings.warn(
                f"the data hold label(s) the model has never seen: "
                f"{', '.join(str(c) for c in unseen[:10])} ({n:,} rows); they "
                "count as errors, and the log-loss is over the other rows.",
                UserWarning,
                stacklevel=3,
            )
        hits = np.diag(counts).astype(float)
        support = counts.sum(axis=1)
        predicted = counts.sum(axis=0)
        precision = np.divide(hits, predicted, out=np.zeros_like(hits), where=predicted > 0)
        recall = np.divide(hits, support, out=np.zeros_like(hits), where=support > 0)
        both = precision + recall
        f1 = np.divide(2 * precision * recall, both, out=np.zeros_like(hits), where=both > 0)
        rows = counts.sum(axis=1, keepdims=True)
        normalised = counts / np.where(rows > 0, rows, 1)
        weights = support / max(int(support.sum()), 1)
        return {
            "labels": labels,
            "counts": counts,
            "normalised": normalised,
            "accuracy": float(hits.sum() / max(self.rows, 1)),
            "log_loss": self.loss / self.seen_rows if self.seen_rows else None,
            "log_loss_unclipped": self.unclipped / self.seen_rows if self.seen_rows else None,
            "log_loss_rows": self.seen_rows,
            "rows": self.rows,
            "unscored": self.unscored,
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": support,
            "macro": [float(np.mean(v)) for v in (precision, recall, f1)],
            "weighted": [float(np.sum(weights * v)) for v in (precision, recall, f1)],
            "unseen": [plain(c) for c in unseen],
        }


def metrics(est: Any, y: Any, log_proba: Any, data: Data) -> dict[str, Any]:
    """Every figure of ``evaluate``, from the true labels and the model's log-probabilities."""
    tally = Tally(est, data)
    tally.add(y, log_proba)
    return tally.metrics()


def plain(value: Any) -> Any:
    """A NumPy scalar as the Python value (for JSON and messages)."""
    return value.item() if hasattr(value, "item") else value
