"""Drawing new data from a fitted generative classifier."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_is_fitted

from .._util.dispatch import handler_for, handler_named, watcher
from ..stats import class_label
from ._predict import PredictMixin

__all__ = ["SampleMixin", "as_generator"]


def as_generator(random_state: Any) -> np.random.Generator:
    """A ``numpy.random.Generator`` from None, an int, a Generator or a RandomState."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32 - 1, dtype=np.uint64))
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    raise ValueError(
        f"random_state must be None, an int, a numpy Generator or RandomState; got {random_state!r}."
    )


class SampleMixin(PredictMixin):
    """``sample``: labels from the priors (or given), rows from each class's model."""

    n_features_in_: int

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> Any:
        return self._model[self._model_index(k)].sample(n, rng)

    def sample(
        self,
        n_samples: int = 1,
        *,
        y: ArrayLike | None = None,
        random_state: Any = None,
        chunks: Any = None,
    ) -> tuple[Any, Any]:
        """Draw new data from the fitted generative model.

        Parameters
        ----------
        n_samples : int
            Number of rows (ignored when ``y`` is an array).
        y : label or array-like of labels, optional
            Draw from these classes; by default labels are drawn from ``priors_``.
        random_state : None, int, Generator or RandomState
        chunks : int or tuple of int, optional
            Return Dask arrays drawn block by block where they are computed
            (rows per block, as Dask's ``chunks``), for more rows than fit in
            memory; each block draws from its own stream spawned from
            ``random_state``, so the draw is reproducible for a given
            ``random_state`` and ``chunks`` (it differs from the draw without
            ``chunks``). Needs ``pip install 'bayesrule[dask]'``. A Dask
            array ``y`` gives Dask arrays with its chunks.

        Returns
        -------
        X : ndarray (or Dask array) of shape (n_samples, n_features)
            For a model fitted on device arrays (or ``y`` on a device), an
            array of that namespace on that device, drawn on the host.
        y : ndarray (or Dask array) of shape (n_samples,)
        """
        check_is_fitted(self)
        handler = handler_for(y)
        if handler is None and chunks is None:
            handler = watcher(self)  # a model whose arrays live on a device
        if chunks is not None or handler is not None:
            handler = handler or handler_named("Dask")
            return handler.sample(self, n_samples, y=y, random_state=random_state, chunks=chunks)
        rng = as_generator(random_state)
        counted = y is None or np.ndim(y) == 0  # else n_samples is ignored: y holds the labels
        if counted and (
            isinstance(n_samples, (bool, np.bool_))
            or not isinstance(n_samples, (int, np.integer))
            or n_samples < 0
        ):
            raise ValueError(f"n_samples must be a non-negative int; got {n_samples!r}.")
        rows = int(n_samples) if counted else int(np.size(np.asarray(y)))
        try:
            return self._draw(rows, y, rng)
        except MemoryError:
            gib = rows * (self.n_features_in_ + 2) * 8 / 2**30
            raise MemoryError(
                f"sample: {rows} rows of {self.n_features_in_} features need about {gib:.3g} "
                "GiB, more than can be allocated here; draw fewer rows at a time (or block "
                "by block with Dask, chunks=, where the model offers it)."
            ) from None

    def _sampling_priors(self) -> NDArray[np.float64]:
        """The priors labels are drawn from: ``priors_`` over the classes with data, renormalised.

        A class declared but never seen has no model to draw from; a prior
        given to it is left out, as :meth:`score_samples` and the posteriors
        leave it out. Where no class with data has prior mass, ``priors_``
        as given (the draw then names the class without data).
        """
        p = np.asarray(self.priors_, dtype=np.float64)
        kept = np.where(np.asarray(self.stats_.weights) > 0, p, 0.0)
        if kept.sum() > 0:
            p = kept
        return p / p.sum()

    def _draw(self, n_samples: int, y: Any, rng: np.random.Generator) -> tuple[Any, Any]:
        """:meth:`sample` in memory: ``n_samples`` rows, checked (ignored for an array ``y``)."""
        if y is None:
            idx = rng.choice(self.classes_.size, size=n_samples, p=self._sampling_priors())
        else:
            y_arr = np.asarray(y)
            if y_arr.ndim == 0:
                y_arr = np.full(n_samples, y_arr)
            pos = np.searchsorted(self.classes_, y_arr)
            pos = np.clip(pos, 0, self.classes_.size - 1)
            bad = self.classes_[pos] != y_arr
            if np.any(bad):
                raise ValueError(
                    f"y contains labels {np.unique(y_arr[bad]).tolist()} that are not among "
                    f"the classes {self.classes_.tolist()}."
                )
            idx = pos
        empty = self.stats_.weights[idx] <= 0
        if np.any(empty):
            raise ValueError(
                f"cannot sample class {class_label(self.classes_, idx[empty][0])!r}: no data has been seen for it."
            )
        X = np.empty((idx.size, self.n_features_in_))
        for k in np.unique(idx):
            rows = idx == k
            X[rows] = self._sample_class(int(k), int(rows.sum()), rng)
        return X, self.classes_[idx]
