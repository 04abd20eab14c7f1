"""Naive Bayes with a class model per column (mixed data)."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ..models.bernoulli import Bernoulli
from ..models.categorical import Categorical
from ..models.diagonal import DiagonalGaussian
from ..models.kernel import KernelDensity
from ..models.poisson import Poisson
from ..stats import CategoryStats, MixedStats, check_categories
from ._base import GenerativeClassifier
from ._nb import (
    _F,
    KINDS,
    _BaseNB,
    _name,
    _scatter_classes,
    bernoulli_log_p,
    categorical_tables,
    check_observed,
    cv_bandwidths,
    gaussian_variances,
    kernel_bandwidths,
    poisson_rates,
)
from .kernel_nb import _BANDWIDTH


# ---------------------------------------------------------------------------------
# mixed columns
# ---------------------------------------------------------------------------------
class _MixedStatsFactory:
    """``from_data`` / ``empty`` of :class:`MixedStats` for fixed column kinds."""

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.kinds = kinds

    def empty(self, classes: ArrayLike, n_features: int) -> MixedStats:
        return MixedStats.empty(classes, self.kinds)

    def from_data(
        self, X: Any, y: Any, sample_weight: Any = None, *, classes: Any = None
    ) -> MixedStats:
        return MixedStats.from_data(X, y, sample_weight, kinds=self.kinds, classes=classes)


def _infer_kind(series: Any) -> str:
    import pandas as pd

    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bernoulli"
    if pd.api.types.is_integer_dtype(dtype):
        return "poisson"
    if pd.api.types.is_float_dtype(dtype):
        return "gaussian"
    return "categorical"


def _is_dataframe(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


class MixedNB(_BaseNB):
    r"""Naive Bayes with a class model chosen per column.

    Each column is modelled by one of 'gaussian', 'kernel', 'bernoulli',
    'categorical' or 'poisson', given in ``columns`` or inferred: for a
    pandas DataFrame from the dtype (float: gaussian, integer: poisson,
    boolean: bernoulli, string / object / category: categorical), for an
    array as 'gaussian'. Strings are coded by a vocabulary that grows with
    ``partial_fit`` and is united by ``merge``; a string not seen in training
    gets the smoothed probability of an unseen category. Missing values
    (NaN, None, ``pd.NA``) are marginalised out.

    Parameters
    ----------
    columns : dict or list of str, default=None
        ``{column name or index: kind}`` for some columns (the rest are
        inferred) or a list with one kind per column.
    priors : array-like of shape (n_classes,), default=None
    var_smoothing : float, default=1e-9
        For the gaussian columns (see :class:`GaussianNB`).
    alpha : float, default=1.0
        Smoothing of the bernoulli, categorical and poisson columns.
    bandwidth : {'scott', 'silverman', 'cv'} or float, default='scott'
        For the kernel columns (see :class:`KernelNB`).

    Attributes
    ----------
    kinds_ : list of str
        The model of each column.
    categories_ : dict of int to ndarray
        The vocabulary of each string column (index: code).
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    stats_ : MixedStats

    References
    ----------
    T. Hastie, R. Tibshirani and J. Friedman, The Elements of Statistical
    Learning, 2nd ed., section 6.6.3.
    """

    _inf_reaches_results = False

    _parameter_constraints: dict = {
        "columns": [dict, list, None],
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "bandwidth": _BANDWIDTH,
    }

    def __init__(
        self,
        *,
        columns: Any = None,
        priors: ArrayLike | None = None,
        var_smoothing: float = 1e-9,
        alpha: float = 1.0,
        bandwidth: Any = "scott",
    ) -> None:
        self.columns = columns
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.alpha = alpha
        self.bandwidth = bandwidth

    @property
    def _stats_type(self) -> Any:  # the statistics depend on the fitted column kinds
        return _MixedStatsFactory(tuple(self.kinds_))

    # ------------------------------------------------------------------ input
    def _resolve_kinds(self, inferred: list[str], names: list[Any]) -> list[str]:
        kinds = list(inferred)
        spec = self.columns
        if spec is None:
            return kinds
        if isinstance(spec, list):
            if len(spec) != len(kinds):
                raise ValueError(
                    f"columns must give one kind per column ({len(kinds)}); got {len(spec)}."
                )
            items = list(enumerate(spec))
        else:
            items = []
            for key, kind in spec.items():
                if key in names:
                    items.append((names.index(key), kind))
                elif isinstance(key, (int, np.integer)) and 0 <= key < len(kinds):
                    items.append((int(key), kind))
                else:
                    raise ValueError(
                        f"columns names an unknown column {key!r}; the columns are {names[:20]}."
                    )
        for j, kind in items:
            if kind not in KINDS:
                raise ValueError(
                    f"columns gives column {names[j]!r} the kind {kind!r}; expected one of "
                    f"{list(KINDS)}."
                )
            kinds[j] = kind
        return kinds

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        first = reset or not hasattr(self, "kinds_")
        if not _is_dataframe(X):
            Xv = super()._validate_X(X, reset=reset)
            if first:
                self.kinds_ = self._resolve_kinds(
                    ["gaussian"] * Xv.shape[1], list(range(Xv.shape[1]))
                )
                self.categories_: dict[int, Any] = {}
            elif getattr(self, "categories_", {}):
                raise ValueError(
                    "this MixedNB was fitted on a DataFrame with string columns; pass a "
                    "DataFrame with the same columns."
                )
            return self._check_kinds(Xv)
        from sklearn.utils.validation import _check_feature_names, _check_n_features

        _check_feature_names(self, X, reset=reset)
        _check_n_features(self, X, reset=reset)
        names = list(X.columns)
        if first:
            inferred = [_infer_kind(X.iloc[:, j]) for j in range(X.shape[1])]
            self.kinds_ = self._resolve_kinds(inferred, names)
            self.categories_ = {}
        out = np.empty(X.shape, dtype=np.float64)
        vocab = dict(self.categories_)
        for j in range(X.shape[1]):
            col = X.iloc[:, j]
            is_text = not (
                col.dtype.kind in "biuf"
                or str(col.dtype) in ("boolean",)
                or str(col.dtype).startswith(("Int", "UInt", "Float"))
            )
            if is_text:
                if self.kinds_[j] != "categorical":
                    raise ValueError(
                        f"column {names[j]!r} holds {col.dtype} values, which only the "
                        f"'categorical' kind accepts; got {self.kinds_[j]!r}."
                    )
                out[:, j] = self._encode(col, j, vocab, grow=reset or first)
            else:
                out[:, j] = col.astype("float64").to_numpy(na_value=np.nan)
        if np.isinf(out).any():
            raise ValueError("Input X contains infinity; only finite values or NaN are accepted.")
        self.categories_ = vocab
        return self._check_kinds(out)

    def _encode(self, col: Any, j: int, vocab: dict[int, Any], *, grow: bool) -> _F:
        import pandas as pd

        values = col.astype(object).to_numpy()
        missing = pd.isna(values)
        known = list(vocab.get(j, []))
        if grow:
            new = sorted({str(v) for v in values[~missing]} - set(known))
            known = known + new
            vocab[j] = np.asarray(known, dtype=object)
        index = {v: i for i, v in enumerate(known)}
        unseen = len(known)
        codes = np.array(
            [
                np.nan if m else index.get(str(v), unseen)
                for v, m in zip(values, missing, strict=True)
            ],
            dtype=np.float64,
        )
        return codes

    def _check_kinds(self, X: _F) -> _F:
        kinds = np.asarray(self.kinds_, dtype=object)
        names = self._feature_names()
        cat = np.flatnonzero(kinds == "categorical")
        if cat.size:
            check_categories(X[:, cat], cat if names is None else np.asarray(names)[cat])
        counts = np.flatnonzero(kinds == "poisson")
        if counts.size:
            sub = X[:, counts]
            with np.errstate(invalid="ignore"):
                if np.any(sub < 0):
                    r, c = (int(t[0]) for t in np.nonzero(sub < 0))
                    raise ValueError(
                        f"column {_name(names, int(counts[c]))!r} is modelled as 'poisson' counts "
                        f"and must be non-negative; got {sub[r, c]!r} at row {r}."
                    )
        binary = np.flatnonzero(kinds == "bernoulli")
        if binary.size:
            sub = X[:, binary]
            X = X.copy()
            X[:, binary] = np.where(np.isnan(sub), np.nan, (sub > 0).astype(float))
        return X

    # ----------------------------------------------------------------- merge
    def merge(self, other: GenerativeClassifier) -> Any:
        """A new model equal to one fitted on the training data of both (vocabularies united)."""
        check_is_fitted(self)
        if isinstance(other, MixedNB) and (self.categories_ or other.categories_):
            other = other._recoded(self.categories_)
            new = super().merge(other)
            new.kinds_, new.categories_ = list(self.kinds_), dict(other.categories_)
            return new
        new = super().merge(other)
        new.kinds_, new.categories_ = list(self.kinds_), dict(self.categories_)
        return new

    def _recoded(self, vocab: dict[int, Any]) -> MixedNB:
        """A copy whose string codes follow ``vocab`` (extended by this model's new strings)."""
        from copy import copy

        out = copy(self)
        united = dict(vocab)
        part = self.stats_.parts.get("categorical")
        if part is None:
            return out
        cat_cols = list(self.stats_.columns("categorical"))
        cc = part.category_counts
        new_cc_list = []
        for i, j in enumerate(cat_cols):
            mine = list(self.categories_.get(j, []))
            theirs = list(united.get(j, []))
            theirs = theirs + [v for v in mine if v not in set(theirs)]
            united[j] = np.asarray(theirs, dtype=object)
            pos = {v: t for t, v in enumerate(theirs)}
            perm = np.array([pos[v] for v in mine], dtype=np.intp)
            row = np.zeros((cc.shape[0], max(len(theirs), cc.shape[2])))
            if mine:
                row[:, perm] = cc[:, i, : len(mine)]
            else:
                row[:, : cc.shape[2]] = cc[:, i, :]
            new_cc_list.append(row)
        C = max(r.shape[1] for r in new_cc_list)
        new_cc = np.stack([np.pad(r, ((0, 0), (0, C - r.shape[1]))) for r in new_cc_list], axis=1)
        parts = dict(self.stats_.parts)
        parts["categorical"] = CategoryStats(part.classes, part.counts, part.weights, new_cc)
        out.stats_ = MixedStats(
            self.stats_.kinds, self.stats_.classes, self.stats_.counts, self.stats_.weights, parts
        )
        out.categories_ = united
        return out

    # ---------------------------------------------------------------- derive
    def _derive(self, stats: MixedStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        names = self._feature_names()
        models: dict[str, Any] = {}
        for kind, part in stats.parts.items():
            cols = stats.columns(kind)
            sub_names = cols if names is None else np.asarray(names)[cols]
            if kind == "kernel":
                h, V, h_scott = kernel_bandwidths(part, self.bandwidth, 0.1, sub_names)
                check_observed(V, present, stats.classes, sub_names)
                if isinstance(self.bandwidth, str) and self.bandwidth == "cv":
                    h = cv_bandwidths(part, present, h_scott, np.minimum(h, h_scott))
                models[kind] = KernelDensity(
                    part.indptr, part.values, part.value_weights[present], h[present]
                )
                continue
            check_observed(part.feature_weights, present, stats.classes, sub_names)
            if kind == "gaussian":
                var = part.variances(ddof=0.0)
                _, eps = gaussian_variances(part, self.var_smoothing)
                var = np.where(np.isnan(var), 1.0, var) + eps
                if np.any(~(var[present] > 0)):
                    raise ValueError(
                        "a gaussian column has zero variance in a class; set var_smoothing > 0."
                    )
                models[kind] = DiagonalGaussian(part.means[present], var[present])
            elif kind == "bernoulli":
                models[kind] = Bernoulli(bernoulli_log_p(part, self.alpha)[present])
            elif kind == "poisson":
                models[kind] = Poisson(poisson_rates(part, self.alpha)[present])
            else:
                _, log_probs, log_unseen = categorical_tables(part, self.alpha)
                models[kind] = Categorical(log_probs[present], log_unseen[present])
        return {"_models": models}

    def _class_log_density(self, X: NDArray[Any]) -> _F:
        present = self._present()
        out = np.zeros((X.shape[0], int(present.sum())))
        for kind, model in self._models.items():
            out += model.log_prob(X[:, self.stats_.columns(kind)])
        return _scatter_classes(out, present)

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        index = int(np.cumsum(self._present())[k]) - 1
        out = np.empty((n, self.n_features_in_))
        for kind, model in self._models.items():
            out[:, self.stats_.columns(kind)] = model[index].sample(n, rng)
        return out
