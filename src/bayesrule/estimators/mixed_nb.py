"""Naive Bayes with a class model per column (mixed data)."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._validation import check_table
from ..models.bernoulli import Bernoulli
from ..models.categorical import Categorical
from ..models.diagonal import DiagonalGaussian
from ..models.kernel import KernelDensity
from ..models.poisson import Poisson
from ..stats import MixedStats, check_categories
from ..stats._categories import MAX_CATEGORIES
from ..stats._common import as_classes
from ..stats._mixed import Vocabulary
from ._base import GenerativeClassifier
from ._nb import _F, KINDS, _BaseNB, _name
from .kernel_nb import _BANDWIDTH


# ---------------------------------------------------------------------------------
# input: kinds and codes of the columns of a table
# ---------------------------------------------------------------------------------
def _infer_kind(series: Any) -> str:
    import pandas as pd

    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bernoulli"
    if pd.api.types.is_integer_dtype(dtype):
        return "poisson"
    if pd.api.types.is_float_dtype(dtype):
        return "gaussian"
    if dtype.kind in "mM" or isinstance(dtype, (pd.PeriodDtype, pd.DatetimeTZDtype)):
        return "time"  # refused unless ``columns`` declares a kind
    return "categorical"


def _is_dataframe(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _is_text(series: Any) -> bool:
    """Whether a column holds other values than numbers and booleans (nullable ones included)."""
    return series.dtype.kind not in "biuf"


def _strings(series: Any) -> tuple[NDArray[np.str_], NDArray[np.bool_]]:
    """The observed values of a column as strings, and where values are missing."""
    import pandas as pd

    values = series.astype(object).to_numpy()
    missing = np.asarray(pd.isna(values), dtype=bool)
    return np.asarray(values[~missing], dtype=str), missing


@dataclass(frozen=True)
class _Encoded:
    """A block as MixedStats takes it: numeric codes, the column kinds and vocabularies."""

    values: _F
    kinds: tuple[str, ...]
    vocabularies: tuple[Vocabulary, ...]


class _PerKind:
    """A family of class models made of one family per kind of column.

    The columns are independent given the class, so the log densities of
    the families add up, and a draw fills each family's columns.
    """

    def __init__(
        self, parts: list[tuple[NDArray[np.intp], Any]], n_features: int, n_classes: int
    ) -> None:
        self.parts = parts
        self.n_features = n_features
        self.n_classes = n_classes

    def log_prob(self, X: NDArray[Any]) -> _F:
        """Log density of each row, (n, n_classes) (or (n,) for one class)."""
        out: Any = 0.0
        for cols, model in self.parts:
            out = out + model.log_prob(X[:, cols])
        return np.asarray(out, dtype=np.float64)

    def log_prob_terms(self, X: NDArray[Any]) -> list[tuple[_F, Any]]:
        """The families' scaled terms together (see :mod:`bayesrule.models._terms`)."""
        terms: list[tuple[_F, Any]] = []
        for cols, model in self.parts:
            terms.extend(model.log_prob_terms(X[:, cols]))
        return terms

    def __len__(self) -> int:
        return self.n_classes

    def __getitem__(self, k: int) -> _PerKind:
        return _PerKind([(cols, model[k]) for cols, model in self.parts], self.n_features, 1)

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows from a single-class model (codes in the categorical columns)."""
        out = np.empty((n, self.n_features))
        for cols, model in self.parts:
            out[:, cols] = model.sample(n, rng)
        return out

    def __repr__(self) -> str:
        kinds = ", ".join(type(m).__name__ for _, m in self.parts)
        return f"PerKind({kinds})"


class MixedNB(_BaseNB):
    r"""Naive Bayes with a class model chosen per column.

    Each column is modelled by one of 'gaussian', 'kernel', 'bernoulli',
    'categorical' or 'poisson', given in ``columns`` or inferred: for a
    pandas DataFrame from the dtype (float: gaussian, integer: poisson,
    boolean: bernoulli, string / object / category: categorical), for an
    array as 'gaussian'. The values of a string column are coded by its
    vocabulary, the sorted strings seen in training; the vocabularies are
    part of the statistics (:class:`~bayesrule.stats.MixedStats`), so they are
    united by ``partial_fit`` and ``merge``, shrink with ``forget``, and are
    kept in model files. A string not seen in training gets the smoothed
    probability of an unseen category. Missing values (NaN, None, ``pd.NA``)
    are marginalised out.

    Each kind of column is modelled by the family of the single-kind
    estimator (``DiagonalGaussian``, ``KernelDensity``, ``Bernoulli``,
    ``Categorical``, ``Poisson`` from :mod:`bayesrule.models`), derived by its
    ``from_stats`` with the parameters below.

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
    bandwidth_floor : float, default=0.1
        For the kernel columns (see :class:`KernelNB`).
    max_categories : int, default=65536
        Bound on the categorical columns: an integer-coded column's codes must
        be integers in ``[0, max_categories)`` (as for :class:`CategoricalNB`),
        and a string column may hold at most ``max_categories`` distinct
        strings in a block.

    A date, time or duration column is refused unless ``columns`` declares
    it 'categorical' (each distinct value a category): convert it to numbers
    first.

    Attributes
    ----------
    kinds_ : list of str
        The model of each column.
    categories_ : dict of int to ndarray of str
        The vocabulary of each string column (index: code).
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    stats_ : MixedStats

    References
    ----------
    T. Hastie, R. Tibshirani and J. Friedman, The Elements of Statistical
    Learning, 2nd ed., section 6.6.3.
    """

    _stats_type = MixedStats
    _inf_reaches_results = False

    _parameter_constraints: dict = {
        "columns": [dict, list, None],
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "bandwidth": _BANDWIDTH,
        "bandwidth_floor": [Interval(Real, 0, None, closed="left")],
        "max_categories": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        columns: Any = None,
        priors: ArrayLike | None = None,
        var_smoothing: float = 1e-9,
        alpha: float = 1.0,
        bandwidth: Any = "scott",
        bandwidth_floor: float = 0.1,
        max_categories: int = MAX_CATEGORIES,
    ) -> None:
        self.columns = columns
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.alpha = alpha
        self.bandwidth = bandwidth
        self.bandwidth_floor = bandwidth_floor
        self.max_categories = max_categories

    # ------------------------------------------------------------------ input
    def _resolve_kinds(self, inferred: list[str], names: list[Any]) -> tuple[str, ...]:
        kinds = list(inferred)
        spec = self.columns
        if spec is None:
            return tuple(kinds)
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
        return tuple(kinds)

    def _encode(self, X: Any, *, fitted: bool, own: bool) -> _Encoded:
        """A block as numeric codes with its column kinds and vocabularies.

        ``fitted``: validate against the fitted features and use the fitted
        kinds (else infer them from ``columns`` and the dtypes, recording
        nothing). ``own``: code each string column by the block's own sorted
        vocabulary (statistics, which merge vocabularies); else by the fitted
        vocabulary, an unknown string getting the code of an unseen category
        (predictions). The estimator is never changed.
        """
        if not _is_dataframe(X):
            Xv = _BaseNB._validate_X(self, X, reset=not fitted)
            p = Xv.shape[1]
            if fitted:
                kinds = tuple(self.kinds_)
                if self.categories_:
                    raise ValueError(
                        "this MixedNB was fitted on a DataFrame with string columns; pass a "
                        "DataFrame with the same columns."
                    )
            else:
                kinds = self._resolve_kinds(["gaussian"] * p, list(range(p)))
            names = self._feature_names() if fitted else None
            return _Encoded(self._checked(Xv, kinds, names), kinds, (None,) * p)

        check_table(X, numeric=False)
        names = list(X.columns)
        if fitted:
            from sklearn.utils.validation import _check_feature_names, _check_n_features

            _check_feature_names(self, X, reset=False)
            _check_n_features(self, X, reset=False)
            kinds = tuple(self.kinds_)
            fitted_vocabs: tuple[Vocabulary, ...] = self.stats_.vocabularies
        else:
            kinds = self._resolve_kinds(
                [_infer_kind(X.iloc[:, j]) for j in range(X.shape[1])], names
            )
            fitted_vocabs = (None,) * len(kinds)
            if "time" in kinds:
                j = kinds.index("time")
                raise ValueError(
                    f"column {names[j]!r} holds {X.dtypes.iloc[j]} values, which MixedNB "
                    "cannot model: convert it to numbers first (e.g. to seconds), or declare "
                    f"columns={{{names[j]!r}: 'categorical'}} if its values are categories."
                )
        out = np.empty(X.shape, dtype=np.float64)
        vocabs: list[Vocabulary] = []
        for j in range(X.shape[1]):
            col, fv = X.iloc[:, j], fitted_vocabs[j]
            text = _is_text(col)
            if text and kinds[j] != "categorical":
                raise ValueError(
                    f"column {names[j]!r} holds {col.dtype} values, which only the "
                    f"'categorical' kind accepts; it is {kinds[j]!r}."
                )
            if text and fitted and fv is None and not own:
                raise ValueError(
                    f"column {names[j]!r} holds {col.dtype} values, but the model was fitted "
                    "on integer category codes in it."
                )
            if kinds[j] == "categorical" and (text or fv is not None):
                strings, missing = _strings(col)
                codes = np.full(len(col), np.nan)
                if own:
                    vocab, codes[~missing] = np.unique(strings, return_inverse=True)
                    if vocab.size > self.max_categories:
                        raise ValueError(
                            f"column {names[j]!r} holds {vocab.size} distinct values; a "
                            f"categorical column may hold at most max_categories="
                            f"{self.max_categories} (is it an identifier? drop it, or raise "
                            "max_categories)."
                        )
                    vocabs.append(vocab.astype(str))
                else:
                    assert fv is not None  # refused above
                    pos = np.minimum(np.searchsorted(fv, strings), max(fv.size - 1, 0))
                    known = fv[pos] == strings if fv.size else np.zeros(strings.size, bool)
                    codes[~missing] = np.where(known, pos, fv.size)
                    vocabs.append(fv)
                out[:, j] = codes
            else:
                out[:, j] = col.to_numpy(dtype=np.float64, na_value=np.nan)
                vocabs.append(None)
        if np.isinf(out).any():
            r, c = (int(t[0]) for t in np.nonzero(np.isinf(out)))
            raise ValueError(
                f"Input X contains infinity in column {names[c]!r} at row {r}; only finite "
                "values or NaN are accepted."
            )
        return _Encoded(self._checked(out, kinds, names), kinds, tuple(vocabs))

    def _checked(self, X: _F, kinds: tuple[str, ...], names: Any) -> _F:
        """Check the values of each kind (codes, counts) and binarize the bernoulli columns."""
        arr = np.asarray(kinds, dtype=object)
        cat = np.flatnonzero(arr == "categorical")
        if cat.size:
            check_categories(
                X[:, cat],
                cat if names is None else np.asarray(names, dtype=object)[cat],
                self.max_categories,
            )
        counts = np.flatnonzero(arr == "poisson")
        if counts.size:
            sub = X[:, counts]
            with np.errstate(invalid="ignore"):
                if np.any(sub < 0):
                    r, c = (int(t[0]) for t in np.nonzero(sub < 0))
                    raise ValueError(
                        f"column {_name(names, int(counts[c]))!r} is modelled as 'poisson' counts "
                        f"and must be non-negative; got {sub[r, c]!r} at row {r}."
                    )
        binary = np.flatnonzero(arr == "bernoulli")
        if binary.size:
            sub = X[:, binary]
            X = X.copy()
            X[:, binary] = np.where(np.isnan(sub), np.nan, (sub > 0).astype(float))
        return X

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        if isinstance(X, _Encoded):  # a block already encoded by _block
            return X.values
        return self._encode(X, fitted=not reset, own=False).values

    def _block(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, tuple[int, NDArray[Any] | None]]:
        """Statistics of a block, its string columns coded by the block's own vocabularies."""
        block = self._encode(X, fitted=not reset, own=True)
        Xv, y_arr, w = self._validate_fit_input(block, y, sample_weight, reset=reset)
        c = as_classes(y_arr if classes is None else classes)
        stats = MixedStats.from_data(
            Xv,
            y_arr,
            w,
            kinds=block.kinds,
            vocabularies=block.vocabularies,
            classes=c,
            max_categories=self.max_categories,
        )
        return stats, self._schema(X, Xv.shape[1])

    # ----------------------------------------------------------------- merge
    def merge(self, other: GenerativeClassifier) -> Any:
        """A new model equal to one fitted on the training data of both (vocabularies united).

        Raises ``ValueError`` when the models' columns are of different kinds,
        naming the column.
        """
        check_is_fitted(self)
        if (
            isinstance(other, MixedNB)
            and hasattr(other, "stats_")
            and len(other.kinds_) == len(self.kinds_)
        ):
            names = self._feature_names()
            for j, (a, b) in enumerate(zip(self.kinds_, other.kinds_, strict=True)):
                if a != b:
                    raise ValueError(
                        f"cannot merge models whose columns are of different kinds: column "
                        f"{_name(names, j)!r} is {a!r} in one and {b!r} in the other."
                    )
        return super().merge(other)

    # ---------------------------------------------------------------- derive
    def _install(
        self, stats: Any, *, schema: tuple[int, NDArray[Any] | None] | None = None, **extra: Any
    ) -> None:
        # the derivation names columns in its errors: those of the data being
        # installed, which are recorded only once it succeeds
        names = schema[1] if schema is not None else self._feature_names()
        super()._install(stats, schema=schema, feature_names=names, **extra)

    def _derive(
        self, stats: MixedStats, priors: _F, feature_names: Any = None, **extra: Any
    ) -> dict[str, Any]:
        families = []
        for kind, part in stats.parts.items():
            cols = stats.columns(kind)
            names = [_name(feature_names, int(j)) for j in cols]
            families.append((cols, self._family(kind, part, names)))
        return {
            "_model": _PerKind(families, stats.n_features, int(np.sum(stats.weights > 0))),
            "kinds_": list(stats.kinds),
            "categories_": {j: v for j, v in enumerate(stats.vocabularies) if v is not None},
        }

    def _family(self, kind: str, part: Any, names: list[Any]) -> Any:
        """The family of class models of the columns of one kind, from their statistics."""
        if kind == "gaussian":
            return DiagonalGaussian.from_stats(
                part, var_smoothing=self.var_smoothing, feature_names=names
            )
        if kind == "kernel":
            return KernelDensity.from_stats(
                part,
                bandwidth=self.bandwidth,
                bandwidth_floor=self.bandwidth_floor,
                feature_names=names,
            )
        if kind == "bernoulli":
            return Bernoulli.from_stats(part, alpha=self.alpha, feature_names=names)
        if kind == "poisson":
            return Poisson.from_stats(part, alpha=self.alpha, feature_names=names)
        return Categorical.from_stats(part, alpha=self.alpha, feature_names=names)
