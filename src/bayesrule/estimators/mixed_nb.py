"""Naive Bayes with a class model per column (mixed data)."""

from __future__ import annotations

import dataclasses
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._util.validation import check_table
from ..models import bandwidths
from ..models.bernoulli import Bernoulli
from ..models.categorical import Categorical
from ..models.kernel import KernelDensity
from ..models.poisson import Poisson
from ..stats import MAX_CATEGORIES, MixedStats, Vocabulary, as_classes
from ._base import EstimatorSummariser, GenerativeClassifier
from ._mixed_choice import choose_kinds
from ._mixed_columns import (
    _Column,
    _Encoded,
    _frame_columns,
    _is_dataframe,
    _object_column,
    check_squares,
    checked_values,
    encode_columns,
    resolve_kinds,
)
from ._mixed_families import (
    Coded,
    PerKind,
    column_rows,
    describe_text,
    gaussian_family,
    kind_parts,
    kinds_text,
    parameters_text,
    pooled_where_unobserved,
    training_form,
)
from ._nb import _F, _BaseNB, _name
from ._priors import PRIORS_CONSTRAINT
from .kernel_nb import _BANDWIDTH
from .registry import register
from .seam import InputSpec


@register("mixed")
class MixedNB(_BaseNB):
    r"""Naive Bayes with a class model chosen per column.

    Each column is modelled by one of 'gaussian', 'kernel', 'bernoulli',
    'categorical' or 'poisson', given in ``columns`` or inferred:

    * from its type, for text (strings, pandas ``category``, ``string``,
      objects holding strings): 'categorical'; and booleans: 'bernoulli';
    * from the data, for every other numeric column (floats and integers):
      its statistics keep the per-class weights of its distinct values
      (kind ``'auto'`` in :class:`~bayesrule.stats.MixedStats`), and when the
      model is derived each candidate model of the column is scored by its
      leave-one-out log likelihood, computed from those statistics: every
      row is predicted by its class's model fitted without it. 'gaussian' is
      the default; 'kernel' replaces it, and then 'categorical' or 'poisson'
      replaces the continuous choice, only when its mean held-out gain per
      row exceeds one standard error of the per-row gains (the
      one-standard-error rule of cross-validated model choice): in doubt a
      column is Gaussian, except counts from zero (non-negative integers
      whose least value is 0) that pass the dispersion test below, which in
      doubt are 'poisson', the simpler model (one parameter a class against
      the normal's two). Categories and counts compete only for
      values on a lattice (integers, or numbers recorded to a fixed
      precision), scored by the probability of each value's cell; counts
      only for non-negative integers that pass Fisher's index of dispersion
      test (two-sided, level 0.01: a variance far from the mean is no
      Poisson count). Values 0 and 1 only are 'bernoulli',
      two other values 'categorical'.

    So an overdispersed count (horsepower: variance 20 times its mean) is
    not Poisson, because a Poisson model predicts its held-out rows worse
    than a normal one; a numeric column with many distinct decimals is not
    categorical, because each held-out value is one its categories never
    saw; counts whose classes have different rates are 'poisson'; codes,
    years and ratings with class signal are 'categorical'; a measurement
    with two peaks or a pile of zeros is 'kernel'.

    The choice is a function of the statistics of all the training data,
    so a fit at once, ``partial_fit`` over any blocks, and ``merge`` of
    models fitted apart give the same kinds (``forget`` chooses again from
    what is left). It is unit-free for continuous columns: rescaling a
    column rescales its values, lattice step, moments and kernel bandwidths
    together and changes no score difference between 'gaussian', 'kernel'
    and 'categorical', so the kind and the predictions are unchanged.
    Poisson alone is tied to the unit: a count column rescaled by a
    non-integer factor is no longer counts and takes the best of the other
    kinds. The kinds, with the reason and the scores of each, are listed by
    :meth:`describe` and :meth:`column_summary` (and ``bayesrule info``),
    and in one line by :meth:`kinds_line` (printed by ``bayesrule fit``).

    A class in which a column is missing in every row gets the column's
    model over all classes (the column carries no evidence for that
    class), with a warning naming the class and the column.

    Arrays are read the same way, column by column: a numeric array's
    columns are all chosen from the data (declare ``columns=['gaussian'] *
    p`` for :class:`GaussianNB`'s model up to the smoothing of the
    variances, see ``var_smoothing``), and an object array (a
    ``ColumnTransformer``'s output) per column from its values: strings are
    categories, numbers numbers.

    ``columns`` may declare 'auto' for a column, and pinned kinds
    (``columns=list(est.stats_.kinds)``, or ``est.infer_columns(first_block)``)
    are what statistics of blocks computed apart (with :meth:`statistics` on
    many machines) must share to merge; 'auto' columns merge whatever their
    data.

    The values of a categorical column are coded by its vocabulary, the
    sorted values seen in training (strings, or numbers such as years); the
    vocabularies are part of the statistics
    (:class:`~bayesrule.stats.MixedStats`), so they are united by
    ``partial_fit`` and ``merge``, shrink with ``forget``, and are kept in
    model files. A value not seen in training gets the smoothed probability
    of an unseen category. Missing values (NaN, None, ``pd.NA``) are
    marginalised out. :meth:`sample` gives data in the form of the training
    data: a DataFrame with its column names, dtypes and categories.

    Each kind of column is modelled by the family of the single-kind
    estimator (``DiagonalGaussian``, ``KernelDensity``, ``Bernoulli``,
    ``Categorical``, ``Poisson`` from :mod:`bayesrule.models`), derived by its
    ``from_stats`` with the parameters below.

    Parameters
    ----------
    columns : dict or list of str, default=None
        ``{column name or position: kind}`` for some columns (the rest are
        inferred) or a list with one kind per column (such as a fitted
        model's ``kinds_``). A table's columns are named, an array's numbered
        from 0.
    priors : array-like of shape (n_classes,), default=None
    var_smoothing : float, default=1e-9
        For the gaussian columns: each class's variance of a column is raised
        by ``var_smoothing`` times the column's variance over all classes.
        Unlike :class:`GaussianNB`, which keeps scikit-learn's rule (the
        largest variance of all features, a rule tied to the units of the
        widest feature), this makes no prediction depend on the units of a
        column; with one gaussian column the two rules agree.
    alpha : float, default=1.0
        Smoothing of the bernoulli, categorical and poisson columns.
    bandwidth : {'scott', 'silverman', 'cv'} or float, default='scott'
        For the kernel columns (see :class:`KernelNB`).
    bandwidth_floor : float, default=0.1
        For the kernel columns (see :class:`KernelNB`).
    max_categories : int, default=65536
        Bound on the categorical columns: one may hold at most
        ``max_categories`` distinct values in a block (statistics built
        directly on integer codes, without a vocabulary, bound the codes to
        ``[0, max_categories)`` as :class:`CategoricalNB` does).

    A date, time or duration column is refused unless ``columns`` declares
    it 'categorical' (each distinct value a category): convert it to numbers
    first.

    Attributes
    ----------
    kinds_ : list of str
        The model of each column.
    categories_ : dict of str (column name) or int (position) to ndarray
        The vocabulary of each categorical column (index: code): strings, or
        float64 numbers for a numeric column. Keyed by name when fitted on
        a DataFrame with string column names, by position otherwise.
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    stats_ : MixedStats

    References
    ----------
    T. Hastie, R. Tibshirani and J. Friedman, The Elements of Statistical
    Learning, 2nd ed., section 6.6.3.

    D. R. Cox and P. A. W. Lewis, The Statistical Analysis of Series of
    Events, 1966 (the index of dispersion, variance over mean, of counts).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from bayesrule import MixedNB
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 300)
    >>> year = np.where(y == 1, rng.choice(3, 300, p=[.1, .3, .6]), rng.choice(3, 300, p=[.6, .3, .1]))
    >>> df = pd.DataFrame({"year": 2007 + year,
    ...                    "chicks": rng.poisson(1 + 2 * y),
    ...                    "bill": rng.normal(40 + 4 * y, 3).round(1)})
    >>> model = MixedNB().fit(df, y)
    >>> model.kinds_
    ['categorical', 'poisson', 'gaussian']
    >>> model.sample(2, random_state=0)[0].dtypes.tolist()
    [dtype('int64'), dtype('int64'), dtype('float64')]
    >>> print(model.kinds_line())
    kinds: year categorical, chicks poisson, bill gaussian (inferred: 3, declared: 0; ...)
    >>> model.predict_proba(df).shape
    (300, 2)
    """

    #: DataFrames with their own column dtypes, one block at a time; the
    #: numeric columns' kinds are chosen from the statistics when the model is derived
    spec = _BaseNB.spec.replace(
        statistic=MixedStats,
        inf_reaches_results=False,
        frame=True,
        side_by_side=False,
        infers_from_data=True,
    )

    _parameter_constraints: dict = {
        "columns": [dict, list, None],
        "priors": PRIORS_CONSTRAINT,
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
    def _columns(self, X: Any, *, fitted: bool) -> tuple[list[_Column], list[Any], bool]:
        """The columns of a block, their names (indices for an array), and whether it is a table."""
        if _is_dataframe(X):
            check_table(X, numeric=False)
            if fitted:
                from sklearn.utils.validation import _check_feature_names, _check_n_features

                _check_feature_names(self, X, reset=False)
                _check_n_features(self, X, reset=False)
            return _frame_columns(X), list(X.columns), True
        arr = X if isinstance(X, np.ndarray) else None
        if arr is None and X is not None and not sp.issparse(X):
            try:  # lists, and objects with __array__: their dtype says what the columns are
                arr = np.asarray(X)
            except (TypeError, ValueError):
                arr = None  # ragged: the validation below says so
        if arr is not None and arr.dtype.kind in "OUS" and arr.ndim == 2 and arr.size:
            # an object array (a ColumnTransformer's output): strings and numbers per column
            if fitted:
                from sklearn.utils.validation import _check_n_features

                _check_n_features(self, arr, reset=False)
            obj = arr.astype(object)
            return [_object_column(obj[:, j], j) for j in range(obj.shape[1])], [], False
        Xv = _BaseNB._validate_X(self, X, reset=not fitted)
        dt = arr.dtype if arr is not None else np.dtype(np.float64)
        integral = dt.kind in "biu"
        cols = [
            _Column(
                np.asarray(Xv[:, j], dtype=np.float64), False, str(dt), integral, dt.kind == "b"
            )
            for j in range(Xv.shape[1])
        ]
        return cols, [], False

    def _encode(self, X: Any, *, fitted: bool, own: bool) -> _Encoded:
        """A block as numeric codes with its column kinds and vocabularies.

        ``fitted``: validate against the fitted features and use the fitted
        kinds (else infer them from ``columns`` and the data, recording
        nothing). ``own``: code each categorical column by the block's own
        sorted vocabulary (statistics, which merge vocabularies); else by the
        fitted vocabulary, an unknown value getting the code of an unseen
        category (predictions). The estimator is never changed.
        """
        cols, names, table = self._columns(X, fitted=fitted)
        shown = names if table else list(range(len(cols)))
        if fitted:
            # the statistics' kinds: a column chosen from the data ('auto') is
            # read as numbers, and its family codes them as its kind needs
            kinds = tuple(self.stats_.kinds)
            reasons: tuple[str, ...] = self.stats_.reasons  # the kinds' own
            fitted_vocabs: tuple[Vocabulary, ...] | None = self.stats_.vocabularies
        else:
            kinds, reasons = resolve_kinds(self.columns, cols, shown)
            fitted_vocabs = None
        out, vocabs = encode_columns(
            cols, shown, kinds, fitted_vocabs, own=own, max_categories=self.max_categories
        )
        dtypes = tuple(col.dtype for col in cols)
        values = checked_values(out, kinds, names if table else None, self.max_categories)
        return _Encoded(values, kinds, vocabs, dtypes, reasons)

    def _validate_X(self, X: Any, *, reset: bool, fitting: bool = False) -> Any:
        if isinstance(X, _Encoded):  # a block already encoded by _block
            return X.values
        return self._encode(X, fitted=not reset, own=False).values

    def _block(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, tuple[int, NDArray[Any] | None]]:
        """Statistics of a block, its string columns coded by the block's own vocabularies."""
        block = self._encode(X, fitted=not reset, own=True)
        Xv, y_arr, w = self._validate_fit_input(block, y, sample_weight, reset=reset)
        check_squares(Xv, block.kinds, list(X.columns) if _is_dataframe(X) else None)
        c = as_classes(y_arr if classes is None else classes)
        stats = MixedStats.from_data(
            Xv,
            y_arr,
            w,
            kinds=block.kinds,
            vocabularies=block.vocabularies,
            classes=c,
            max_categories=self.max_categories,
            dtypes=block.dtypes,
            reasons=block.reasons,
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
            # the statistics' kinds: columns left to the data ('auto') merge
            # whatever each side chose, and the merged model chooses again
            names = self._feature_names()
            mine, theirs = self.stats_.kinds, other.stats_.kinds
            for j, (a, b) in enumerate(zip(mine, theirs, strict=True)):
                if a != b:
                    raise ValueError(
                        f"cannot merge models whose columns are of different kinds: column "
                        f"{_name(names, j)!r} is {a!r} in one and {b!r} in the other."
                    )
        return super().merge(other)

    # ------------------------------------------------------------- sampling
    def sample(self, n_samples: int = 1, **options: Any) -> tuple[Any, Any]:
        """Draw new data from the fitted model, in the form of the training data.

        Fitted on a pandas DataFrame, ``X`` is a DataFrame with its column
        names and dtypes: the strings of a text column, the values of a
        numeric categorical column (years), booleans for a boolean column,
        integers for an integer one. Fitted on an array, ``X`` is a float
        array with the values of the categorical columns (an object array if
        a column held strings).

        Parameters
        ----------
        n_samples : int, default=1
        y, random_state : keyword-only, as for :meth:`GaussianNB.sample`
        chunks : None
            Dask chunks are not offered for this model (a ValueError otherwise).

        Returns
        -------
        X : DataFrame or ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
        """
        chunks = options.get("chunks")
        if chunks is not None:
            raise ValueError(
                "MixedNB.sample draws rows in the form of the training table, in memory: "
                f"chunks must be None (got {chunks!r}); draw several in-memory samples instead."
            )
        codes, labels = super().sample(n_samples, **options)
        return training_form(codes, self.stats_, self.kinds_, self._feature_names()), labels

    # ---------------------------------------------------------- description
    def column_summary(self) -> list[dict[str, Any]]:
        """One row per column: what MixedNB made of it.

        Returns
        -------
        list of dict
            With keys ``column`` (name or index), ``kind``, ``dtype`` (in the
            training data), ``why`` (``'inferred: 3 distinct integers (2007 to
            2009)'`` or ``'declared in columns'``) and ``parameters`` (a short
            text: the class means, rates, probabilities or categories).
        """
        check_is_fitted(self)
        return column_rows(self.stats_, self.kinds_, self._feature_names(), self._chosen_)

    def kinds_line(self, max_columns: int = 8) -> str:
        """One line saying the kind of each column and whether it was inferred (for a log).

        ``'kinds: island categorical, bill gaussian, chicks poisson (inferred: 3,
        declared: 0; describe() says why)'``; beyond ``max_columns`` columns,
        the number of columns of each kind instead.
        """
        return kinds_text(self.column_summary(), self.kinds_, max_columns)

    def describe(self) -> str:
        """A table of the columns: name, kind, dtype, why that kind, parameters by class.

        The text of :meth:`column_summary`, one line per column, e.g.::

            column  kind         dtype  why                                          parameters
            year    categorical  int64  inferred: 3 distinct integers (2007 to 2009)  3 categories: ...
        """
        rows = self.column_summary()
        return describe_text(rows, self.classes_[self.stats_.weights > 0])

    def input_spec(self) -> InputSpec:
        """MixedNB reads DataFrames with their own column dtypes, one block at a time."""
        return dataclasses.replace(super().input_spec(), frame=True, side_by_side=False)

    def summariser(self, first_block: Any = None, **options: Any) -> EstimatorSummariser:
        """A pure, picklable task summarising blocks with the kinds of the columns pinned.

        The kinds are the fitted model's, or else those ``columns`` and
        ``first_block`` give (:meth:`infer_columns`), so that the summaries
        of blocks computed apart merge. ``options`` (the backend's) are not used.
        """
        light = clone(self)
        if "stats_" in self.__dict__:
            light.set_params(columns=list(self.stats_.kinds))
        elif first_block is not None:
            light.set_params(columns=self.infer_columns(first_block))
        return EstimatorSummariser(light)

    def _block_summariser(self, first_block: Any = None) -> Any:
        # the base's hook (the unfitted copy a summariser wraps), as summariser pins it
        return self.summariser(first_block).estimator

    def infer_columns(self, X: Any) -> dict[Any, str]:
        """The kinds of the statistics ``fit`` would gather for the columns of ``X``.

        Declared kinds, 'categorical' for text, 'bernoulli' for booleans, and
        'auto' for the other numeric columns, whose kind is chosen when the
        model is derived (``kinds_``). These depend on the columns' types
        only, so blocks agree; statistics of blocks computed apart
        (``est.statistics(block, y)`` on many machines) may still pin them:
        ``est.set_params(columns=est.infer_columns(first_block))``.

        Returns
        -------
        dict of column name (index for an array) to kind
        """
        cols, names, table = self._columns(X, fitted=False)
        shown = names if table else list(range(len(cols)))
        kinds, _ = resolve_kinds(self.columns, cols, shown)
        return dict(zip(shown, kinds, strict=True))

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
        families: list[tuple[NDArray[np.intp], Any]] = []
        chosen_vocabs: dict[int, Any] = {}
        kinds = list(stats.kinds)
        chosen: dict[int, tuple[str, str]] = {}
        for kind, part in stats.parts.items():
            cols = stats.columns(kind)
            names = [_name(feature_names, int(j)) for j in cols]
            if kind == "auto":
                families.extend(
                    self._chosen_families(part, cols, names, kinds, chosen, chosen_vocabs)
                )
            else:
                families.append((cols, self._family(kind, part, names)))
        vocabs = dict(enumerate(stats.vocabularies))
        vocabs.update(chosen_vocabs)
        return {
            "_model": PerKind(families, stats.n_features, int(np.sum(stats.weights > 0))),
            "kinds_": kinds,
            "_chosen_": chosen,
            "categories_": {
                _key(feature_names, j): vocabs[j]
                for j in range(stats.n_features)
                if vocabs[j] is not None
            },
        }

    def _chosen_families(
        self,
        part: Any,
        cols: NDArray[np.intp],
        names: list[Any],
        kinds: list[str],
        chosen: dict[int, tuple[str, str]],
        chosen_vocabs: dict[int, Any],
    ) -> list[tuple[NDArray[np.intp], Any]]:
        """The families of the columns whose kinds the data choose (see ``_mixed_choice``).

        Fills ``kinds``, ``chosen`` (why and parameters text) and
        ``chosen_vocabs`` (the values of a categorical one) for those columns.
        """
        observed = np.asarray(part.moments()[0]) > 0
        part = pooled_where_unobserved("kernel", part, names)
        b = self.bandwidth
        if not isinstance(b, str) and np.ndim(b) == 1:
            b = np.asarray(b, dtype=np.float64)[cols]
        h, _, _, lower = bandwidths(
            part.moments(),
            b if isinstance(b, str) else np.asarray(b, float),
            float(self.bandwidth_floor),
        )
        picks = choose_kinds(
            part,
            h,
            var_smoothing=self.var_smoothing,
            alpha=self.alpha,
            observed=observed,
            # a rule's bandwidth is that of the rows kept when one is held out
            h_lower=np.asarray(lower) if isinstance(b, str) else None,
        )
        present = np.asarray(part.weights > 0)
        out = []
        for kind, (sub, sub_stats, vocabs) in kind_parts(part, [c.kind for c in picks]).items():
            sub_names = [names[int(i)] for i in sub]
            family = self._family(kind, sub_stats, sub_names)
            if kind in ("categorical", "bernoulli", "poisson"):
                family = Coded(family, kind, vocabs, sub_names)
            out.append((cols[sub], family))
            for i, col in enumerate(sub):
                j = int(cols[col])
                kinds[j] = kind
                text = parameters_text(kind, sub_stats, i, present, vocabs[i])
                chosen[j] = (f"inferred: {picks[int(col)].why}", text)
                if kind == "categorical":
                    chosen_vocabs[j] = vocabs[i]
        return out

    def _family(self, kind: str, part: Any, names: list[Any]) -> Any:
        """The family of class models of the columns of one kind, from their statistics."""
        part = pooled_where_unobserved(kind, part, names)
        if kind == "gaussian":
            return gaussian_family(part, self.var_smoothing, names)
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


def _key(names: Any, j: int) -> Any:
    """Column ``j``'s key in ``categories_``: its name (a table) or its index (an array)."""
    return j if names is None else str(names[j])
