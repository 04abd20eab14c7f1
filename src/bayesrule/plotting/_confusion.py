""":class:`ConfusionMatrixDisplay`: the row-normalised confusion matrix."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._base import (
    _axes,
)


class ConfusionMatrixDisplay:
    """The row-normalised confusion matrix as a heatmap.

    Row ``i`` holds the share of the samples of true class ``labels[i]``
    predicted as each class, so each row sums to 1 and the diagonal is the
    per-class recall.

    Attributes
    ----------
    matrix : ndarray of shape (n_classes, n_classes)
        Row-normalised (rows of classes absent from ``y_true`` are zero).
    counts : ndarray of shape (n_classes, n_classes)
        The raw counts.
    labels : ndarray of shape (n_classes,)
    accuracy : float
    """

    def __init__(
        self, *, counts: NDArray[Any], labels: NDArray[Any], title: str = "Confusion matrix"
    ) -> None:
        self.counts = np.asarray(counts)
        self.labels = np.asarray(labels)
        rows = self.counts.sum(axis=1, keepdims=True)
        self.matrix = self.counts / np.where(rows > 0, rows, 1)
        total = self.counts.sum()
        self.accuracy = float(np.trace(self.counts) / total) if total else float("nan")
        self.title = title

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_pred: ArrayLike,
        *,
        labels: ArrayLike | None = None,
        title: str = "Confusion matrix",
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> ConfusionMatrixDisplay:
        """Compute the matrix from true and predicted labels and draw it."""
        from sklearn.metrics import confusion_matrix

        yt, yp = np.asarray(y_true), np.asarray(y_pred)
        lab = np.unique(np.concatenate([yt, yp])) if labels is None else np.asarray(labels)
        disp = cls(counts=confusion_matrix(yt, yp, labels=lab), labels=lab, title=title)
        return disp.plot(ax=ax, **plot_kwargs)

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: ArrayLike, y: ArrayLike, *, ax: Any = None, **plot_kwargs: Any
    ) -> ConfusionMatrixDisplay:
        """Predict ``X`` with a fitted estimator and draw the confusion matrix against ``y``."""
        title = plot_kwargs.pop("title", f"Confusion matrix of {type(estimator).__name__}")
        return cls.from_predictions(
            y, estimator.predict(X), labels=estimator.classes_, title=title, ax=ax, **plot_kwargs
        )

    def plot(
        self, ax: Any = None, *, cmap: str = "Blues", annotate: bool | None = None
    ) -> ConfusionMatrixDisplay:
        """Draw the heatmap with a colour bar; cells are annotated up to 20 classes.

        Each cell shows the share of the true class and, up to 10 classes, the
        count in parentheses.
        """
        ax = _axes(ax, (6.4, 5.6))
        K = self.labels.size
        im = ax.imshow(self.matrix, cmap=cmap, vmin=0.0, vmax=1.0)
        if ax.figure.get_layout_engine() is not None:
            # a layout engine places the bar itself; fraction/pad would push the
            # y-label out of the figure
            cbar = ax.figure.colorbar(im, ax=ax, shrink=0.85)
        else:
            cbar = ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        cbar.set_label("share of the true class")
        if annotate is None:
            annotate = K <= 20
        if annotate:
            size = "small" if K <= 10 else "x-small"
            for i in range(K):
                for j in range(K):
                    v, n = self.matrix[i, j], int(self.counts[i, j])
                    ax.text(
                        j,
                        i,
                        (f"{v:.2f}\n({n:,})" if K <= 10 else f"{v:.2f}") if n else "0",
                        ha="center",
                        va="center",
                        fontsize=size,
                        color="white" if v > 0.55 else "black",
                    )
        ticks = np.arange(K)
        ax.set_xticks(ticks, [str(c) for c in self.labels], rotation=45 if K > 10 else 0)
        ax.set_yticks(ticks, [str(c) for c in self.labels])
        ax.set_xlabel("predicted class")
        ax.set_ylabel("true class")
        ax.set_title(
            f"{self.title}\naccuracy {self.accuracy:.2%}, rows normalised", fontsize="medium"
        )
        self.ax_, self.figure_, self.im_ = ax, ax.figure, im
        return self
