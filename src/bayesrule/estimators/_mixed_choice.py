"""The kind of a numeric MixedNB column left to the data ('auto'), chosen from its statistics.

An inferred numeric column keeps the per-class weights of its distinct values
(:class:`~bayesrule.stats.ValueCountStats`), the statistic every kind can be
derived from: the moments of a normal model, the sums of a Poisson one, the
counts of categories, the values of a kernel density. Its kind is chosen when
the model is derived, by the leave-one-out log likelihood of each candidate:
every stored row is predicted by its class's model fitted without it (one
unit of its weight removed), in closed form from the statistics. The choice
is therefore a function of mergeable statistics: a fit at once, in any
chunking, or merged from parts gives the same kinds.

Candidates (see :func:`choose_kinds`):

* 'gaussian' and 'kernel' for every column (densities);
* on a lattice (every value ``v0 + i * step``: integers, or measurements
  recorded to 0.1), the continuous candidates are scored by the probability
  of the value's cell (width ``step``), so that they compare with
  'categorical' (a candidate there when the classes hold on average at least
  one row per distinct value) and 'poisson' (for non-negative integers of
  step 1). A value seen once in all the data is, once held out, a category
  never seen: the categorical model's unseen probability is shared among the
  lattice's empty cells, as a density spreads its mass over them.

'gaussian' is the default; another candidate replaces the kind chosen so
far (the best discrete kind for Gaussian, then the kernel for whichever was
kept) only when its mean held-out gain per row exceeds ``Z_DOUBT`` (one)
standard error of the per-row gains: the one-standard-error rule of
cross-validated model choice (Breiman et al.; Hastie et al., section 7.10),
the errors paired over the rows as in Vuong's test for non-nested models.
For counts from zero (non-negative integers of step 1 whose least value is
0) that pass the index-of-dispersion test, Poisson takes the place of the
Gaussian as the default: one parameter a class against the normal's two,
the simpler model the one-standard-error rule keeps in a tie, and the normal
must beat it beyond one standard error. With 6 to 9 rows a class the
Poisson model's gain over the normal on Poisson counts is mostly within one
standard error, and the counts stayed Gaussian on a quarter of the draws
(on the tests' generated tables of 30 to 90 rows, the drawn kinds' lead
fell from 0.66 to 0.48 points on average, from 1.42 to 0.50 at 30 rows of
4 classes). Counts whose least value is above 0 keep the Gaussian default:
a measurement recorded in whole units far from zero (a car's length in
centimetres) can have a variance near its mean by chance, and taking
Poisson as its default cost the car tables 0.5 to 1 point.
Two standard errors, a significance test, kept columns Gaussian where a
kernel or categories predicted the held-out rows, and the classes, better
(on generated mixed tables of 50 to 1,000 rows, 2 to 8 classes). The kernel,
the most flexible candidate (a parameter a row), comes last: it must beat
the discrete kind as well as the Gaussian, so a count or code whose discrete
kind is within doubt of the kernel keeps the discrete kind.

The normal model is scored by what it predicts of a held-out row, Student's
t from the rows kept (see :func:`_gaussian_loo`), not by the plug-in normal:
with 8 rows a class the plug-in variance is too small by a factor near 1.8
on average, and a kernel density, wider by its bandwidth, won the likelihood
on columns drawn normal (57 % of the folds of 45-row tables of 4 classes)
while it classified worse. The t tends to the plug-in normal as the rows
grow, so the choice on large tables is as before: the correction is sized by
each class's number of rows, not by a tuned threshold.

The likelihood of the values is not the aim; the classes are. Two rules use
the held-out log probability of each row's class given its value (its own
class's model without it, the other classes' whole models, the classes'
weights as priors), from the same statistics:

* a discrete kind whose likelihood gain over the continuous choice is
  positive but within one standard error is chosen when it predicts the
  held-out rows' classes better by more than one standard error of the
  per-row differences (a near tie decided by the score that matters, as
  RDA-CV breaks its near ties by log likelihood; without that margin,
  integer car measurements became Poisson on a hair and lost 5 points, and
  a count with no class signal became categorical on noise);
* categories with fewer than ``MIN_ROWS_PER_VALUE`` rows a value in some
  class (each class's frequencies then partly smoothing) are refused when
  they predict the classes worse than the continuous choice (Gaussian, or
  the kernel where it beats the Gaussian beyond one standard error); a
  margin of one standard error let an overdispersed count of 30 values in
  130 rows a class become categorical and lose a point. With at least ``MIN_ROWS_PER_VALUE`` rows a value in
  every class they need only the likelihood.

So nominal codes and ratings of 5 values are categorical in tables of 10 to
25 rows a class (under the earlier rule of five rows a value they could not
be), while an overdispersed count of 30 values in 125 rows a class, whose
categories predict the classes worse, stays continuous. The standard error is that of the gains
clipped to ``CLIP`` nats, so that a few catastrophic misses, such as a class
whose values are all equal meeting another value, count as evidence and not
as doubt. In doubt, a column stays Gaussian. A class in which the column is
missing in every row is given the column's pooled values when the model is
derived; those are not its rows, and are not scored. A column in which a class holds a single value (with
two rows or more) is not Gaussian: that class's normal model would have no
variance, a failure no held-out row of the class can show: the kernel is
then the default, and a lattice's categories replace it unless it beats them
beyond one standard error (a code of 3 values of which a class of 9 rows
holds one). Sample weights
count as rows: one unit of weight is held out.

Rescaling a column by ``c`` rescales the values, the lattice step, the
moments and the kernel bandwidths together: the normal and kernel scores
change by the same ``-log c`` per row (densities) or not at all (cell
probabilities), and the categorical score not at all, so the choice among
them is the same at every scale. Poisson exists only for integers: a
rescaled count column is no longer counts and takes the best of the others.

References
----------
L. Breiman, J. Friedman, R. Olshen and C. Stone, Classification and
Regression Trees, 1984, section 3.4.3 (the one-standard-error rule).
T. Hastie, R. Tibshirani and J. Friedman, The Elements of Statistical
Learning, 2nd ed., 2009, section 7.10. Q. H. Vuong, "Likelihood ratio tests for model selection and non-nested
hypotheses", Econometrica 57(2), 1989. M. Stone, "Cross-validatory choice and
assessment of statistical predictions", JRSS B 36(2), 1974.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special, stats

from ..models.diagonal import total_variance
from ..stats import ValueCountStats
from ._mixed_loo import _gaussian_loo, _kernel_loo, _log, _normal

__all__ = ["Choice", "choose_kinds"]

_F = NDArray[np.float64]

#: A candidate replaces the simpler model only when its mean held-out gain
#: exceeds this many standard errors of the per-row gains (the
#: one-standard-error rule); in doubt a column stays Gaussian.
Z_DOUBT = 1.0
#: Largest gain or loss of one row (nats) in that test.
CLIP = 3.0
#: Categories need only the likelihood when every class has this many rows per
#: distinct value (Cochran's rule of five expected counts a cell): with fewer,
#: each class's frequencies are partly smoothing (MNIST's 256 grey levels in
#: 80 rows a class; 30 values of an overdispersed count in 100 rows a class,
#: whose categories can win the held-out likelihood by a few hundredths of a
#: nat a row and lose accuracy), and they must also predict the classes.
MIN_ROWS_PER_VALUE = 5
#: With fewer rows per value than ``MIN_ROWS_PER_VALUE`` (but at least this
#: many in the average class), categories are a candidate only if they also
#: predict the held-out rows' classes no worse than the continuous choice. The
#: average, not the smallest class: with the smallest, a code of 6 values in a
#: table of 6 classes of about 6 rows was never categorical once one class of a
#: training split held 5 (on the tests' generated tables of 45 rows and 6
#: classes the drawn kinds scored 3.8 points above the inferred ones, 0.2 with
#: the average); a column of distinct values seen once each (12 in 12 rows)
#: stays no candidate.
MIN_ROWS_PER_VALUE_SPARSE = 1
#: A discrete kind within doubt on the likelihood is chosen when it predicts
#: the held-out rows' classes better by more than this many standard errors.
Z_TIE = 1.0
#: Such categories are refused when their held-out class log probability is
#: below the continuous choice's by more than this many standard errors.
Z_SPARSE = 0.0
#: Two-sided level of the index-of-dispersion test a column must pass to be a
#: Poisson candidate (see ``_dispersed_as_poisson``).
DISPERSION_LEVEL = 0.01
#: Relative tolerance of a value's distance to its lattice point.
_LATTICE_TOL = 1e-6


@dataclasses.dataclass(frozen=True)
class Choice:
    """The kind chosen for one column, why, and the scores of the candidates (nats per row)."""

    kind: str
    why: str
    scores: dict[str, float]


def _lattice(v: _F) -> float:
    """The step of the lattice the sorted distinct values lie on, or 0 if they do not."""
    if v.size < 2:
        return 0.0
    step = float(np.min(np.diff(v)))
    if step <= 0 or not np.isfinite(step):
        return 0.0
    r = (v - v[0]) / step
    if r[-1] > 1e6:  # a lattice finer than a millionth of the range is no lattice
        return 0.0
    return (
        step if bool(np.all(np.abs(r - np.round(r)) <= _LATTICE_TOL * np.maximum(r, 1.0))) else 0.0
    )


def _categorical_loo(W: _F, total: _F, alpha: float, cells: float) -> _F:
    """Per class and value, log of the leave-one-out probability of its category.

    ``total`` (U,) is each value's weight over all classes. A value held
    once in all the data leaves the vocabulary with its row, and is then an
    unseen category: the model's unseen probability shared among the
    ``cells`` of the lattice's range that no kept value occupies (a
    categorical model knows nothing of the values it never saw, and must
    spread that probability over all of them to compete with a density).
    """
    V = W.sum(axis=1, keepdims=True)
    d = W.shape[1]
    seen = (W - 1.0 + alpha) / np.maximum(V - 1.0 + alpha * d, 1e-300)
    free = max(cells - (d - 1), 1.0)
    unseen = alpha / np.maximum(V - 1.0 + alpha * (d - 1), 1e-300) / free
    alone = (total <= 1.0 + 1e-9)[None, :]
    return _log(np.where(alone, unseen, seen))


def _full(kind: str, v: _F, W: _F, *, eps: float, h: _F, step: float, alpha: float) -> _F:
    """Per class and value, log density (or cell probability) of the class's whole model."""
    V = W.sum(axis=1, keepdims=True)
    if kind == "categorical":
        return _log((W + alpha) / np.maximum(V + alpha * W.shape[1], 1e-300))
    if kind == "kernel":
        return _kernel_loo(v, W, h, step, loo=False)
    if kind == "poisson":
        # the rate of the whole class, (S + alpha) / V, as the Poisson kind is fitted
        rate = np.maximum(((W @ v)[:, None] + alpha) / np.maximum(V, 1e-300), 1e-300)
        return v[None, :] * np.log(rate) - rate - special.gammaln(v + 1.0)[None, :]
    mean = (W @ v)[:, None] / np.maximum(V, 1e-300)
    M2 = (W * (v[None, :] - mean) ** 2).sum(axis=1, keepdims=True)
    return _normal(v, mean, np.maximum(M2 / np.maximum(V, 1e-300) + eps, 1e-300), step)


def _class_log_loss(own: _F, full: _F, W: _F) -> _F:
    """Per class and value, held-out log probability of the row's class given its value.

    ``own`` (K, U) is each class's leave-one-out log likelihood of the value
    (the row held out of its own class), ``full`` the other classes' whole
    models; the classes' priors are their weights.
    """
    V = W.sum(axis=1, keepdims=True)
    logprior = np.log(np.maximum(V / V.sum(), 1e-300))
    A = logprior + full  # every class's joint at each value, the row in no class
    B = logprior + own  # the row's own class, with the row held out
    K = A.shape[0]
    others = np.where(np.eye(K, dtype=bool)[:, :, None], -np.inf, A[None, :, :])  # (K, K, U)
    rest = special.logsumexp(others, axis=1)  # the other classes, for a row of each class
    return np.where(W > 0, B - np.logaddexp(rest, B), 0.0)


def _poisson_loo(v: _F, W: _F, alpha: float) -> _F:
    """Per class and value, log of the leave-one-out Poisson probability (rate ``(S + alpha) / V``)."""
    V = W.sum(axis=1, keepdims=True)
    S = (W @ v)[:, None]
    rate = np.maximum((S - v[None, :] + alpha) / np.maximum(V - 1.0, 1e-300), 1e-300)
    return v[None, :] * np.log(rate) - rate - special.gammaln(v + 1.0)[None, :]


def _dispersed_as_poisson(v: _F, W: _F) -> bool:
    """Whether counts are as dispersed as Poisson counts: Fisher's index of dispersion test.

    Within each class, ``sum (x - mean)**2 / mean`` over the rows is, for
    Poisson counts, about chi-squared with ``rows - 1`` degrees of freedom;
    summed over the classes, with ``rows - classes``. The column is refused as
    Poisson when the sum lies in either tail beyond ``DISPERSION_LEVEL / 2``:
    variance far above the mean (horsepower) or far below it (a rating of 1
    to 5, a measurement near 60 with a spread of 4). The test's acceptance
    band is sized by the rows: with 8 rows a class only a variance under
    about a third of the mean (or over twice) is refused, with 500 a
    variance 15 % off the mean.
    """
    V = W.sum(axis=1)
    mean = (W @ v) / np.maximum(V, 1e-300)
    M2 = (W * (v[None, :] - mean[:, None]) ** 2).sum(axis=1)
    counted = mean > 0  # a class of zeros only is Poisson of rate 0 (no spread to test)
    dof = float(np.sum(V[counted] - 1.0))
    if dof < 1.0:
        return True
    index = float(np.sum(M2[counted] / mean[counted]))
    tail = min(float(stats.chi2.cdf(index, dof)), float(stats.chi2.sf(index, dof)))
    return tail >= DISPERSION_LEVEL / 2.0


def _held_bandwidths(v: _F, W: _F, h: _F, lower: _F | None) -> _F | None:
    """Per class and value, the rule's bandwidth of the class without one row at the value.

    Scott's and Silverman's bandwidths are ``sd * V ** (-1/5)`` times a
    constant: without the row, ``h * (sd' / sd) * ((V - 1) / V) ** (-1/5)``
    (``sd'`` from the downdated moments), no lower than ``lower``. A class
    whose bandwidth is its floor, or of under three rows, keeps ``h``.
    """
    if lower is None:
        return None
    V = W.sum(axis=1, keepdims=True)
    mean = (W @ v)[:, None] / np.maximum(V, 1e-300)
    M2 = (W * (v[None, :] - mean) ** 2).sum(axis=1, keepdims=True)
    M2_1 = np.maximum(M2 - (v[None, :] - mean) ** 2 * V / np.maximum(V - 1.0, 1e-300), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.sqrt(M2_1 / (V - 2.0) / (M2 / (V - 1.0))) * ((V - 1.0) / V) ** -0.2
    ok = (V > 2.0) & (h[:, None] > lower[:, None] * (1 + 1e-9)) & np.isfinite(ratio)
    return np.where(
        ok, np.maximum(h[:, None] * np.where(ok, ratio, 1.0), lower[:, None]), h[:, None]
    )


def _choose_column(
    v: _F,
    W: _F,
    h: _F,
    *,
    var_smoothing: float,
    alpha: float,
    observed: Any = None,
    h_lower: _F | None = None,
) -> Choice:
    """The kind of one column from its distinct values ``v`` (U,) and class weights ``W`` (K, U)."""
    d = v.size
    if d <= 2 and v.size and v[0] >= 0 and v[-1] <= 1 and np.all((v == 0) | (v == 1)):
        return Choice("bernoulli", "values 0 and 1", {})
    if d == 2:
        return Choice("categorical", f"2 distinct values ({_fmt(v[0])}, {_fmt(v[-1])})", {})
    Vk = W.sum(axis=1)
    V = Vk[:, None]
    m = (W @ v)[:, None] / np.maximum(V, 1e-300)
    M2 = (W * (v[None, :] - m) ** 2).sum(axis=1)
    total = float(total_variance(Vk[:, None], m, M2[:, None])[0])
    if d < 2 or total <= 0:
        return Choice("gaussian", "one value: no evidence for any class", {})
    use = Vk > 1.0  # a class of one row cannot hold one out
    if observed is not None:  # a class given the pooled values has no rows of its own
        use &= np.asarray(observed, dtype=bool)
    Wu = W[use]
    n = float(Wu.sum())
    if n <= 0:
        return Choice("gaussian", "too few rows per class to compare models", {})
    step = _lattice(v)
    scores: dict[str, float] = {}

    def entries(logp: _F) -> _F:
        return np.where(Wu > 0, logp, 0.0)

    terms = {"gaussian": entries(_gaussian_loo(v, Wu, var_smoothing * total, step))}
    terms["kernel"] = entries(
        _kernel_loo(
            v,
            Wu,
            h[use],
            step,
            h_rows=_held_bandwidths(v, Wu, h[use], None if h_lower is None else h_lower[use]),
        )
    )
    discrete = step > 0
    counts = False
    fewest = float(Vk[use].min())
    # categories with under five rows a value (down to one in the average
    # class) must also predict the rows' classes no worse than the continuous
    # choice (see the module)
    sparse = d * MIN_ROWS_PER_VALUE > fewest
    if discrete and d * MIN_ROWS_PER_VALUE_SPARSE <= float(Vk[use].mean()):
        cells = float(np.round((v[-1] - v[0]) / step)) + 1.0
        terms["categorical"] = entries(_categorical_loo(Wu, Wu.sum(axis=0), alpha, cells))
    if discrete:
        integers = bool(np.all(v == np.round(v)))
        counts = v[0] >= 0 and integers and step == 1.0
        if counts and _dispersed_as_poisson(v, Wu):
            terms["poisson"] = entries(_poisson_loo(v, Wu, alpha))
    scores = {k: float(np.sum(Wu * t)) / n for k, t in terms.items()}

    def gain(d: _F) -> tuple[float, float]:
        """Mean of per-row gains ``d`` and the standard error of the gains clipped to CLIP."""
        # the mean counts every row; its doubt (standard error) is that of the
        # gains clipped to +-CLIP nats, so that a model's catastrophic miss on a
        # few rows is evidence against it, not doubt
        mean = float(np.sum(Wu * d)) / n
        dc = np.clip(d, -CLIP, CLIP)
        mc = float(np.sum(Wu * dc)) / n
        return mean, float(np.sqrt(float(np.sum(Wu * (dc - mc) ** 2)) / n / n))

    # the classes are predicted by the models as they classify: each class's
    # kernel of its own bandwidth (the held-out bandwidths are for the values'
    # likelihood; with them, an overdispersed count of 30 values in 130 rows a
    # class passed the class check as categories and cost a point)
    class_terms = {"kernel": entries(_kernel_loo(v, Wu, h[use], step))}

    def class_gain(a: str, b: str) -> tuple[float, float]:
        """Mean gain of ``a`` over ``b`` in the held-out log probability of the rows' classes,
        and its standard error."""
        eps = var_smoothing * total
        la, lb = (
            _class_log_loss(
                class_terms.get(k, terms[k]),
                _full(k, v, Wu, eps=eps, h=h[use], step=step, alpha=alpha),
                Wu,
            )
            for k in (a, b)
        )
        return gain(la - lb)

    def better(a: str, b: str, *, classes: bool = False, z: float = Z_DOUBT) -> bool:
        """Whether ``a`` predicts the held-out rows' values (with ``classes``, their
        classes) better than ``b`` by more than ``z`` standard errors of the per-row gains."""
        mean, err = class_gain(a, b) if classes else gain(terms[a] - terms[b])
        return mean > 0 and mean > z * err

    # a class whose rows all hold one value, in a column that varies, would get
    # a normal of no variance (any other value: a density of 0 for that class)
    # that no held-out row of its own can reveal: such a column is a kernel's,
    # whose width is relative to the whole column
    flat = bool(np.any((M2[use] <= 1e-12 * total * Vk[use]) & (Vk[use] >= 2)))
    # counts from zero that pass the dispersion test: Poisson is their default
    from_zero = "poisson" in terms and v[0] == 0
    if flat:
        best = "kernel"
    elif from_zero and not better("gaussian", "poisson"):
        # counts from zero that pass the dispersion test: the Poisson model, one
        # parameter a class against the normal's two, is the simpler of the two
        # and is kept unless the normal beats it beyond doubt (see the module)
        best = "poisson"
    else:
        best = "gaussian"  # the kernel, the most flexible candidate, comes last
    # the continuous choice sparse categories must predict the classes as well as
    cont = "kernel" if flat or better("kernel", "gaussian") else "gaussian"

    tie = ""
    for kind in sorted(
        (k for k in ("poisson", "categorical") if k in terms), key=lambda k: -scores[k]
    ):
        if scores[kind] <= scores[best]:
            continue
        if better(kind, best):
            # sparse categories: refused where the continuous choice predicts the classes better
            if kind == "categorical" and sparse:
                if better(cont, kind, classes=True, z=Z_SPARSE):
                    tie = (
                        f"; categories (under {MIN_ROWS_PER_VALUE} rows a value) predict "
                        f"the classes worse than {cont}"
                    )
                    continue
            best = kind
            break
        # within doubt: the kind that predicts the held-out rows' classes better
        if better(kind, best, classes=True, z=Z_TIE):
            tie = f"; {kind}'s gain within one standard error, and it predicts the classes better"
            best = kind
            break
    # the kernel replaces the kind chosen so far only when it beats it beyond
    # one standard error; where a class holds a single value (no gaussian),
    # the categories of a lattice are kept unless the kernel beats them so
    if flat and best == "kernel" and "categorical" in terms and not better("kernel", "categorical"):
        best = "categorical"
        tie += "; categories within one standard error of the kernel"
    elif not flat and best != "kernel" and better("kernel", best):
        best = "kernel"
    shown = ", ".join(f"{k} {s:.3g}" for k, s in sorted(scores.items(), key=lambda t: -t[1]))
    if bool(np.all(v == np.round(v))) and abs(v[-1]) < 2**53 and abs(v[0]) < 2**53:
        what = f"{d} distinct integers ({_fmt(v[0])} to {_fmt(v[-1])})"
    else:
        what = f"{d} distinct values" + (f" on a grid of {_fmt(step)}" if discrete else "")
    notes = [what] + (["a class holds a single value: not gaussian"] if flat else [])
    pooled_mean = float(W.sum(axis=0) @ v) / float(W.sum())
    if discrete and counts and pooled_mean > 0:
        refused = "" if "poisson" in scores else " (not poisson: the index of dispersion test)"
        notes.append(f"variance {total / pooled_mean:.3g} times the mean{refused}")
    if from_zero and not flat:
        notes.append("counts from zero: poisson the default in doubt (the simpler model)")
    top = max(scores, key=lambda k: scores[k])
    doubt = "" if top == best or flat else f" ({top}'s gain within one standard error)"
    why = f"{'; '.join(notes)}; held-out log likelihood per row: {shown}{doubt}{tie}"
    return Choice(best, why, scores)


def choose_kinds(
    part: ValueCountStats,
    h: _F,
    *,
    var_smoothing: float,
    alpha: float,
    observed: Any = None,
    h_lower: _F | None = None,
) -> list[Choice]:
    """The kind of each column of ``part`` by leave-one-out likelihood (see the module).

    Parameters
    ----------
    part : ValueCountStats
        The statistics of the columns left to the data, every class with
        rows observing every column (as MixedNB's derivation fills them).
    h : ndarray of shape (n_classes, n_features)
        The kernel bandwidth each class would get (``bandwidths`` of the
        estimator's rule).
    var_smoothing, alpha : float
        The estimator's smoothing of its gaussian and discrete columns.
    """
    present = np.asarray(part.weights > 0)
    W = part.value_weights[present]
    hp = h[present]
    out = []
    for j in range(part.n_features):
        a, b = int(part.indptr[j]), int(part.indptr[j + 1])
        v = part.values[a:b]
        Wj = W[:, a:b]
        keep = Wj.sum(axis=0) > 0
        out.append(
            _choose_column(
                v[keep],
                Wj[:, keep],
                hp[:, j],
                var_smoothing=var_smoothing,
                alpha=alpha,
                observed=None if observed is None else observed[present, j],
                h_lower=None if h_lower is None else h_lower[present, j],
            )
        )
    return out


def _fmt(x: Any) -> str:
    f = float(x)
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else f"{f:.6g}"
