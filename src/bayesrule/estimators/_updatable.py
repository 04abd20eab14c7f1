"""Updating a fitted model: ``partial_fit``, ``forget`` and ``merge``, for the estimators that can.

Every estimator whose fit is one pass of mergeable, subtractable statistics
inherits :class:`UpdatableMixin`. One that cannot (cross-validation scores,
EM's components) does not, so ``hasattr(est, "partial_fit")`` is False; it
names the reason in its class's ``refusals``, which
:meth:`GenerativeClassifier.__getattr__` gives as the AttributeError.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .._util.validation import check_labels
from ..stats import as_classes
from ._base import GenerativeClassifier, is_fitted
from ._classes import warn_about_labels

__all__ = ["UpdatableMixin"]


class UpdatableMixin(GenerativeClassifier):
    """A generative classifier that takes more data, forgets some, and merges with another."""

    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> Any:
        """Update the model with one more block of data.

        The result equals ``fit`` on all the blocks seen so far (to rounding).
        ``classes`` lists every label the stream will contain; it must be
        given on the first call (as scikit-learn requires). A block with a
        label outside the known classes raises ``ValueError``. A call that
        fails leaves the model exactly as it was.

        Every block is accepted whatever the rows so far, as in a stream
        sorted by class or one row at a time (online learning). While the
        rows are too few for the model (QDA: a covariance of ``p`` features
        needs ``p + 1`` rows of the class; GaussianNB and DiagonalLDA: a
        feature that varies; LDA and RDA: more rows than classes), the model
        keeps the statistics but cannot predict: every prediction, draw or
        class model raises the ``ValueError`` that ``fit`` on those rows
        raises, with what is missing. No warning is given per block (the
        state is expected mid-stream); once later blocks mend it, the model
        equals ``fit`` on all the rows. ``merge`` and ``forget`` do the same.
        """
        with self._atomic():
            return self._partial_fit(X, y, classes, sample_weight)

    def _partial_fit(self, X: Any, y: Any, classes: Any, sample_weight: Any) -> Any:
        if not is_fitted(self):
            self._validate_params()
            if classes is None:
                raise ValueError(
                    "classes must be passed on the first call to partial_fit. It lists every "
                    "label the stream will contain (a later block may hold labels this one "
                    "does not); e.g. classes=np.unique(y_all)."
                )
            check_labels(np.asarray(classes), "classes")
            declared = as_classes(classes)
            if declared.size < self.spec.min_classes:
                raise ValueError(
                    f"classes must list at least {self.spec.min_classes} labels; "
                    f"got {declared.tolist()}."
                )
            stats, schema = self._stats_of(X, y, sample_weight, classes, reset=True)
            warn_about_labels(self, declared)
            self._install(stats, schema=schema, defer=True)
            return self
        if classes is not None and not np.array_equal(as_classes(classes), self.classes_):
            raise ValueError(
                f"`classes={classes!r}` is not the same as on last call to partial_fit, was: "
                f"{self.classes_!r}. classes={as_classes(classes).tolist()} is not the same "
                f"as the classes of the first call to partial_fit, {self.classes_.tolist()}."
            )
        block, _ = self._stats_of(X, y, sample_weight, self.classes_, reset=False)
        self._install(self.stats_.merge(block), defer=True)
        return self

    def forget(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Any:
        """Remove rows the model was fitted on, exactly.

        The result equals a fit on the training data without these rows (to
        rounding): the statistics of the block are subtracted from the
        model's (Chan's update run backwards). Use it for deletion requests,
        sliding windows, or cross-validation from one pass (a fold's model is
        the full model minus the fold). A class whose every row is forgotten
        stays declared with no data (probability zero).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows that were part of the training data.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            The weights the rows were fitted with.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A label the model does not have, more weight than a class holds,
            or forgetting every row; the model is then left unchanged.
        """
        check_is_fitted(self)
        with self._atomic():
            block, _ = self._stats_of(X, y, sample_weight, None, reset=False)
            unknown = np.setdiff1d(block.classes, self.classes_)
            if unknown.size:
                raise ValueError(
                    f"cannot forget rows of class {unknown.tolist()[:10]}: the model has no "
                    f"such class (classes: {self.classes_.tolist()[:20]})."
                )
            remaining = self.stats_.subtract(block)
            if not np.any(remaining.weights > 0):
                raise ValueError(
                    "forget would remove every row the model was fitted on; nothing would "
                    "be left to fit."
                )
            self._install(remaining, defer=True)
        return self

    def merge(self, other: Any) -> Any:
        """A new model equal to one fitted on the training data of both.

        ``other`` must be a fitted estimator of the same type with the same
        features (count and names); its parameters are ignored (``self``'s
        are kept). Classes are united.
        """
        check_is_fitted(self)
        if type(other) is not type(self):
            raise ValueError(f"cannot merge a {type(self).__name__} with a {type(other).__name__}.")
        check_is_fitted(other)
        if other.n_features_in_ != self.n_features_in_:
            raise ValueError(
                f"cannot merge models with different numbers of features: expected "
                f"{self.n_features_in_} features, got {other.n_features_in_}."
            )
        mine = getattr(self, "feature_names_in_", None)
        theirs = getattr(other, "feature_names_in_", None)
        if (mine is None) != (theirs is None) or (
            mine is not None and theirs is not None and not np.array_equal(mine, theirs)
        ):
            raise ValueError(
                "cannot merge models fitted on different feature names: "
                f"{_names_text(mine)} and {_names_text(theirs)}."
            )
        merged = self.stats_.merge(other.stats_)
        new = clone(self)
        new._install(merged, schema=(self.n_features_in_, mine, self._dtype()), defer=True)
        return new


def _names_text(names: Any) -> str:
    if names is None:
        return "no names"
    shown = [str(n) for n in list(names)[:8]]
    return "[" + ", ".join(shown) + (", ..." if len(names) > 8 else "") + "]"
