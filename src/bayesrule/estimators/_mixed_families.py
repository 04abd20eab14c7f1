"""The class models of MixedNB's columns, one family per kind, from the kinds' statistics.

``PerKind`` composes the families (their log densities add up, the columns
being independent given the class); ``parameters_text`` describes a
column's class parameters for ``describe``.

Two choices differ from the single-kind estimators, both so that MixedNB
does not depend on the units of its columns, nor break on a class that
never observes a column:

* a 'gaussian' column's variances are raised by ``var_smoothing`` times
  that column's own variance (GaussianNB, after scikit-learn, uses the
  largest variance of all its features, which ties every feature to the
  units of the widest one);
* a class that never observes a column (missing in each of its rows) is
  given the column's distribution over all classes: the column then
  carries no evidence for or against that class, whatever its units, and
  a warning names the class and the column.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..models import check_class_variances, feature_name
from ..models.diagonal import DiagonalGaussian, total_variance
from ..stats import (
    CategoryStats,
    CountStats,
    DiagonalStats,
    ValueCountStats,
    Vocabulary,
    label_repr,
)
from ._mixed_columns import _fmt

__all__ = [
    "Coded",
    "PerKind",
    "column_rows",
    "describe_text",
    "gaussian_family",
    "kind_parts",
    "kinds_text",
    "parameters_text",
    "pooled_where_unobserved",
    "training_form",
]

_F = NDArray[np.float64]


def _unobserved(part: Any) -> NDArray[np.bool_]:
    """(n_classes, n_features): a class with data that never observes the feature."""
    return np.asarray((part.feature_weights <= 0) & (part.weights > 0)[:, None])


def pooled_where_unobserved(kind: str, part: Any, names: list[Any]) -> Any:
    """``part`` with each class's unobserved features given the feature's pooled statistics.

    ``part`` is the statistic of the columns of one ``kind`` (see
    :data:`bayesrule.stats._mixed.KIND_STATS`); ``names`` names its columns.
    The statistics themselves are unchanged (this is a derivation step, so
    that merging and forgetting keep their laws). Warns once per class and
    column; raises a ValueError for a column observed in no row at all.
    """
    gone = _unobserved(part)
    if not gone.any():
        return part
    V = part.feature_weights
    empty = ~(V > 0).any(axis=0)
    if empty.any():
        j = int(np.flatnonzero(empty)[0])
        raise ValueError(
            f"column {names[j]!r} is missing (NaN) in every row; MixedNB cannot model it. "
            "Drop the column."
        )
    for k in np.flatnonzero(gone.any(axis=1)):
        cols = [repr(names[int(j)]) for j in np.flatnonzero(gone[k])]
        which = f"column {cols[0]} is" if len(cols) == 1 else f"columns {', '.join(cols)} are"
        it = "it carries" if len(cols) == 1 else "they carry"
        warnings.warn(
            f"{which} missing in every row of class {label_repr(part.classes[int(k)])}: {it} "
            "no evidence for that class (the class is given the column's distribution over "
            "all classes).",
            UserWarning,
            stacklevel=6,
        )
    if kind == "gaussian":
        Vt = V.sum(axis=0)
        mean = (V * part.means).sum(axis=0) / Vt
        m2 = part.m2.sum(axis=0) + (V * (part.means - mean) ** 2).sum(axis=0)
        return dataclasses.replace(
            part,
            feature_weights=np.where(gone, Vt, V),
            means=np.where(gone, mean, part.means),
            m2=np.where(gone, m2, part.m2),
        )
    if kind in ("bernoulli", "poisson"):
        return dataclasses.replace(
            part,
            feature_weights=np.where(gone, V.sum(axis=0), V),
            sums=np.where(gone, part.sums.sum(axis=0), part.sums),
        )
    if kind == "categorical":
        cc = part.category_counts
        filled = np.where(gone[:, :, None], cc.sum(axis=0)[None], cc)
        return dataclasses.replace(part, category_counts=filled)
    # kernel: the weights of the feature's stored values, over all classes
    W = part.value_weights
    fill = gone[:, part.value_features]  # (K, U)
    return dataclasses.replace(part, value_weights=np.where(fill, W.sum(axis=0)[None], W))


def gaussian_family(part: Any, var_smoothing: float, names: list[Any]) -> DiagonalGaussian:
    """The normal model of each class with data, each column smoothed by its own variance.

    ``var_kj = M2_kj / V_kj + var_smoothing * Var(x_j)``, with ``Var(x_j)``
    the (biased) variance of column ``j`` over all classes: rescaling a
    column rescales its variances and leaves every prediction as it was. A
    column constant in all the training data (to 1e-12 of its value, the
    rounding of its class means) gets variance 1 in every class: its term
    is then the same for every class and has no say.
    """
    present = np.asarray(part.weights > 0)
    total = total_variance(part.feature_weights, part.means, part.m2)
    eps = float(var_smoothing) * total
    means = part.means[present]
    with np.errstate(over="ignore", invalid="ignore"):
        var = part.variances(ddof=0)[present] + eps
    # constant up to the rounding of the class means: no variance to be relative to
    V_all = part.feature_weights
    center_all = (V_all * part.means).sum(axis=0) / np.maximum(V_all.sum(axis=0), 1e-300)
    var[:, total <= (1e-12 * np.abs(center_all)) ** 2] = 1.0
    check_class_variances(
        means, var, part.classes[present], var_smoothing=var_smoothing, names=names, noun="column"
    )
    V = part.feature_weights[present]
    center = (V * means).sum(axis=0) / V.sum(axis=0)
    return DiagonalGaussian(means, var, center=center)


class PerKind:
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

    def relative_log_prob(self, X: NDArray[Any]) -> _F:
        """``log_prob`` less a term the same for every class, (n, n_classes).

        The sum of each family's ``relative_log_prob`` where it has one (the
        diagonal Gaussians leave out their shared quadratic terms, the
        Poisson counts their reference rates' part: :class:`~bayesrule.models.Poisson`,
        whose scores for large counts lose their digits without it), its
        ``log_prob`` where not.
        """
        n = np.shape(X)[0]
        out = np.zeros((n, self.n_classes))
        for cols, model in self.parts:
            of = getattr(model, "relative_log_prob", model.log_prob)
            out += np.reshape(np.asarray(of(X[:, cols]), dtype=np.float64), (n, -1))
        return out

    def log_prob_terms(self, X: NDArray[Any]) -> list[tuple[_F, Any]]:
        """The families' scaled terms together (see :mod:`bayesrule.models._terms`)."""
        terms: list[tuple[_F, Any]] = []
        for cols, model in self.parts:
            terms.extend(model.log_prob_terms(X[:, cols]))
        return terms

    def __len__(self) -> int:
        return self.n_classes

    def __getitem__(self, k: int) -> PerKind:
        return PerKind([(cols, model[k]) for cols, model in self.parts], self.n_features, 1)

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows from a single-class model (codes in the categorical columns)."""
        out = np.empty((n, self.n_features))
        for cols, model in self.parts:
            out[:, cols] = model.sample(n, rng)
        return out

    def __repr__(self) -> str:
        kinds = ", ".join(type(m).__name__ for _, m in self.parts)
        return f"PerKind({kinds})"


class Coded:
    """A family of discrete class models read through the coding of a column's raw values.

    A column whose kind was chosen from the data ('auto') reaches the model
    as its numbers; a 'categorical' one is coded by its distinct training
    values (``vocabs``; a value not among them gets the code of an unseen
    category), a 'bernoulli' one as ``x > 0``, and 'poisson' counts are
    checked to be non-negative. ``sample`` gives the values back.
    """

    def __init__(self, model: Any, kind: str, vocabs: list[Any], names: list[Any]) -> None:
        self.model = model
        self.kind = kind
        self.vocabs = vocabs
        self.names = names

    def codes(self, X: NDArray[Any]) -> _F:
        """The columns as the model reads them (NaN stays missing)."""
        X = np.asarray(X, dtype=np.float64)
        if self.kind == "bernoulli":
            return np.where(np.isnan(X), np.nan, (X > 0).astype(float))
        if self.kind == "poisson":
            with np.errstate(invalid="ignore"):
                bad = X < 0
            if bad.any():
                r, c = (int(t[0]) for t in np.nonzero(bad))
                raise ValueError(
                    f"column {self.names[c]!r} was fitted as 'poisson' counts and must be "
                    f"non-negative; got {float(X[r, c])!r} at row {r}."
                )
            return X
        out = np.full(X.shape, np.nan)
        for i, vocab in enumerate(self.vocabs):
            x = X[:, i]
            seen = ~np.isnan(x)
            pos = np.minimum(np.searchsorted(vocab, x[seen]), vocab.size - 1)
            out[seen, i] = np.where(vocab[pos] == x[seen], pos, vocab.size)
        return out

    def log_prob(self, X: NDArray[Any]) -> _F:
        return np.asarray(self.model.log_prob(self.codes(X)), dtype=np.float64)

    def relative_log_prob(self, X: NDArray[Any]) -> _F:
        """The model's ``relative_log_prob`` where it has one, else its ``log_prob``."""
        of = getattr(self.model, "relative_log_prob", self.model.log_prob)
        return np.asarray(of(self.codes(X)), dtype=np.float64)

    def log_prob_terms(self, X: NDArray[Any]) -> Any:
        return self.model.log_prob_terms(self.codes(X))

    def __len__(self) -> int:
        return len(self.model)

    def __getitem__(self, k: int) -> Coded:
        return Coded(self.model[k], self.kind, self.vocabs, self.names)

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        drawn = np.asarray(self.model.sample(n, rng), dtype=np.float64)
        if self.kind != "categorical":
            return drawn
        return np.column_stack(
            [vocab[drawn[:, i].astype(np.intp)] for i, vocab in enumerate(self.vocabs)]
        )

    def __repr__(self) -> str:
        return f"Coded({self.kind}, {type(self.model).__name__})"


def parameters_text(
    kind: str, part: Any, i: int, present: NDArray[np.bool_], vocab: Vocabulary
) -> str:
    """A short text of the class parameters of column ``i`` of a kind's statistics."""

    def by_class(values: Any) -> str:
        return " / ".join(f"{v:.4g}" for v in np.asarray(values)[present])

    if kind == "gaussian":
        return f"mean {by_class(part.means[:, i])}"
    if kind in ("bernoulli", "poisson"):
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = part.sums[:, i] / part.feature_weights[:, i]
        return f"{'P(1)' if kind == 'bernoulli' else 'rate'} {by_class(rate)}"
    if kind == "categorical":
        if vocab is None:
            n = int(np.count_nonzero(part.category_counts[:, i, :].sum(axis=0)))
            return f"{n} category codes"
        shown = [str(v) if vocab.dtype.kind == "U" else _fmt(v) for v in vocab[:6]]
        more = ", ..." if vocab.size > 6 else ""
        return f"{vocab.size} categories: {', '.join(shown)}{more}"
    return "kernel density of the class's values"


def column_rows(
    stats: Any, kinds: list[str], names: Any, chosen: dict[int, tuple[str, str]] | None = None
) -> list[dict[str, Any]]:
    """MixedNB's ``column_summary`` from its statistics, kinds and feature names.

    ``chosen`` gives, for each column whose kind was chosen from the data,
    ``(why, parameters)``.
    """
    p = stats.n_features
    dtypes = stats.dtypes or ("",) * p
    reasons = list(stats.reasons or ("",) * p)
    present = stats.weights > 0
    params: dict[int, str] = {}
    for kind, part in stats.parts.items():
        if kind == "auto":
            continue
        for i, j in enumerate(stats.columns(kind)):
            params[int(j)] = parameters_text(kind, part, i, present, stats.vocabularies[int(j)])
    for j, (why, text) in (chosen or {}).items():
        reasons[j], params[j] = why, text
    return [
        {
            "column": feature_name(names, j),
            "kind": kinds[j],
            "dtype": dtypes[j],
            "why": reasons[j],
            "parameters": params[j],
        }
        for j in range(p)
    ]


def kinds_text(rows: list[dict[str, Any]], kinds: list[str], max_columns: int) -> str:
    """MixedNB's ``kinds_line`` from its ``column_summary`` rows."""
    inferred = sum(r["why"].startswith("inferred") for r in rows)
    declared = sum(r["why"] == "declared in columns" for r in rows)
    if len(rows) <= max_columns:
        body = ", ".join(f"{r['column']} {r['kind']}" for r in rows)
    else:
        counts = {k: list(kinds).count(k) for k in dict.fromkeys(kinds)}
        body = ", ".join(f"{n} {k}" for k, n in counts.items()) + f" ({len(rows)} columns)"
    return f"kinds: {body} (inferred: {inferred}, declared: {declared}; describe() says why)"


def describe_text(rows: list[dict[str, Any]], classes: NDArray[Any]) -> str:
    """MixedNB's ``describe`` table from its ``column_summary`` rows and the classes with data."""
    shown = ", ".join(str(c) for c in classes)
    head = ["column", "kind", "dtype", "why", f"parameters (classes {shown})"]
    table = [[str(r["column"]), r["kind"], r["dtype"], r["why"], r["parameters"]] for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(head[:-1])]
    lines = ["  ".join([*(h.ljust(w) for h, w in zip(head, widths, strict=False)), head[-1]])]
    for t in table:
        cells = [c.ljust(w) for c, w in zip(t, widths, strict=False)]
        lines.append("  ".join([*cells, t[-1]]).rstrip())
    return "\n".join(lines)


def _as_dtype(values: NDArray[Any], dtype: str, vocab: Vocabulary) -> Any:
    """Drawn values of a column in its training dtype (as they are if that cannot be)."""
    import pandas as pd

    series = pd.Series(values)
    if dtype == "category":
        categories = vocab if vocab is not None else None
        return pd.Categorical(values, categories=categories)
    if not dtype or dtype == "object":
        return series
    try:
        target = pd.api.types.pandas_dtype(dtype)
    except TypeError:
        return series
    if series.dtype.kind == "f" and target.kind in "iub":
        series = series.round()  # a gaussian or kernel column of integers
    try:
        return series.astype(target)
    except (TypeError, ValueError):
        return series


def training_form(codes: _F, stats: Any, kinds: list[str], names: Any) -> Any:
    """Drawn rows (category codes) in the form of the training data.

    A DataFrame with the training columns' names and dtypes when ``names``
    is given; else a float array, or an object array if a column held strings.
    """
    columns = []
    for j in range(codes.shape[1]):
        vocab = stats.vocabularies[j]
        if vocab is None or kinds[j] != "categorical":
            columns.append(codes[:, j])
        else:
            columns.append(vocab[codes[:, j].astype(np.intp)])
    if names is not None:
        import pandas as pd

        dtypes = stats.dtypes or ("",) * len(columns)
        data = {
            name: _as_dtype(col, dtype, stats.vocabularies[j])
            for j, (name, col, dtype) in enumerate(zip(names, columns, dtypes, strict=True))
        }
        return pd.DataFrame(data)
    if any(col.dtype.kind != "f" for col in columns):
        X = np.empty(codes.shape, dtype=object)
        for j, col in enumerate(columns):
            X[:, j] = col
        return X
    return np.column_stack(columns) if columns else codes


def kind_parts(
    part: ValueCountStats, kinds: list[str]
) -> dict[str, tuple[NDArray[np.intp], Any, list[Any]]]:
    """The statistics of the kind chosen for each column, derived from ``part``.

    Returns ``{kind: (columns of part, statistics, vocabularies)}``: for
    'gaussian' a :class:`DiagonalStats`, 'kernel' a :class:`ValueCountStats`,
    'poisson' and 'bernoulli' a :class:`CountStats`, 'categorical' a
    :class:`CategoryStats` whose codes index each column's distinct values
    (``vocabularies``, one per column; None for other kinds).
    """
    arr = np.asarray(kinds, dtype=object)
    out: dict[str, tuple[NDArray[np.intp], Any, list[Any]]] = {}
    base = dict(classes=part.classes, counts=part.counts, weights=part.weights)
    for kind in ("gaussian", "kernel", "bernoulli", "poisson", "categorical"):
        cols = np.flatnonzero(arr == kind)
        if not cols.size:
            continue
        sub = _value_columns(part, cols)
        vocabs: list[Any] = [None] * cols.size
        if kind == "gaussian":
            V, mean, m2 = sub.moments()
            stats: Any = DiagonalStats(**base, feature_weights=V, means=mean, m2=m2)
        elif kind == "kernel":
            stats = sub
        elif kind in ("poisson", "bernoulli"):
            x = sub.values if kind == "poisson" else (sub.values > 0).astype(float)
            F = sub._feature_matrix()
            stats = CountStats(
                **base,
                feature_weights=np.asarray(sub.value_weights @ F),
                sums=np.asarray((sub.value_weights * x) @ F),
            )
        else:
            sizes = np.diff(sub.indptr)
            C = int(sizes.max(initial=1))
            cc = np.zeros((part.n_classes, cols.size, C))
            for i in range(cols.size):
                a, b = int(sub.indptr[i]), int(sub.indptr[i + 1])
                cc[:, i, : b - a] = sub.value_weights[:, a:b]
                vocabs[i] = sub.values[a:b].copy()
            stats = CategoryStats(**base, category_counts=cc)
        out[kind] = (cols, stats, vocabs)
    return out


def _value_columns(part: ValueCountStats, cols: NDArray[np.intp]) -> ValueCountStats:
    """The statistics of some columns of ``part``, in the order of ``cols``."""
    starts, ends = part.indptr[cols], part.indptr[cols + 1]
    sizes = ends - starts
    indptr = np.zeros(cols.size + 1, np.intp)
    indptr[1:] = np.cumsum(sizes)
    # entry i of column c sits at starts[c] + (i - indptr[c])
    idx = np.repeat(starts - indptr[:-1], sizes) + np.arange(int(indptr[-1]), dtype=np.intp)
    return ValueCountStats(
        part.classes,
        part.counts,
        part.weights,
        indptr,
        part.values[idx],
        part.value_weights[:, idx],
    )
