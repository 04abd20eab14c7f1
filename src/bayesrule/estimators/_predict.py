"""Bayes' rule, written once: posteriors, densities and their repair far from every class.

:class:`PredictMixin` turns a fitted estimator's class models (``_model``,
with ``log_prob`` and optionally ``relative_log_prob`` and
``log_prob_terms``) and priors into every prediction method. Each method is
:func:`~bayesrule._util.dispatch.routed`, so an engine's collection is
predicted by its registered handler, block by block.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._util.config import get_config
from .._util.dispatch import routed
from .._util.parallel import blas_budget
from .._util.products import forget_finite, note_finite, noted_finite, rows_wanted
from ..models import combine_terms
from ._input import InputMixin
from ._priors import _check_prior_mass, present_log_mass
from ._underived import Underived

__all__ = ["PredictMixin", "all_finite", "log_softmax", "row_argmax", "softmax"]


def _offers_decision_function(est: Any) -> bool:
    return bool(type(est).has_decision_function)


class PredictMixin(InputMixin):
    """Posteriors ``argmax_k log pi_k + log p_k(x)`` from the fitted class models.

    Classes whose statistics hold no weight (declared but not seen) have
    probability zero and no model.
    """

    #: Whether ``predict_joint_log_proba`` leaves out what the family's
    #: ``relative_log_prob`` leaves out (a constant per row, the same for every
    #: class), as the scikit-learn namesake's does (MultinomialNB's: no
    #: multinomial coefficient). ``score_samples`` keeps the full density.
    _joint_is_relative = False

    #: Whether the estimator has ``decision_function``. scikit-learn's naive Bayes
    #: classes have none, and its meta-estimators read the method's presence:
    #: ``CalibratedClassifierCV`` calibrates ``decision_function`` where there is one
    #: (per class, one against the rest), and log posteriors up to a per-row constant
    #: (or saturated log posteriors) calibrate badly where ``predict_proba`` does well.
    has_decision_function: ClassVar[bool] = True

    #: Whether :meth:`predict` may take the joint log likelihood of narrow rows in the
    #: row-major layout their product comes in (:func:`~bayesrule._util.products.rows_wanted`):
    #: for the models whose decision is that product plus a row (the count models,
    #: LDA), whose :func:`row_argmax` then reads it in tiles, without the column-major
    #: copy that the reductions of the other models' decisions need.
    _argmax_of_rows = False

    #: Whether the class models' log densities are new arrays of each call
    #: (the count models' products), so that the priors are added to them and
    #: the posteriors taken from them in place: no (n, K) temporaries.
    _fresh_log_densities = False

    # set by a fit (annotations only: an unfitted estimator has none of them)
    stats_: Any
    classes_: NDArray[Any]
    priors_: Any
    _model: Any

    def _outputs_in_input_dtype(self) -> bool:
        """Whether outputs are given in the fitted data's dtype (as scikit-learn's)."""
        return self.spec.input_dtype_outputs

    def _out(self, values: NDArray[Any]) -> NDArray[Any]:
        """``values`` in the fitted data's dtype where scikit-learn's outputs are."""
        if self._outputs_in_input_dtype() and self._dtype() != np.float64:
            return values.astype(self._dtype())
        return values

    def _model_index(self, k: int) -> int:
        """Position of class ``k`` in ``_model``, which may hold only the classes with data."""
        if len(self._model) == self.classes_.size:
            return k
        return int(np.count_nonzero(self.stats_.weights[:k] > 0))

    def _threads(self, Xv: Any) -> Any:
        """The BLAS threads of one prediction.

        With ``n_threads`` set to a number (:func:`bayesrule.config_context`),
        the products keep within it (:func:`~bayesrule._util.parallel.blas_budget`).
        With the default ``'auto'`` the BLAS keeps its own threads: a
        prediction is mostly single products, which a multi-threaded BLAS
        shares well in the shape :func:`~bayesrule._util.products.rows_dot`
        picks for a busy machine, and the passes that split work among
        threads of ours (QDA's row blocks) take the idle cores themselves.
        """
        if get_config()["n_threads"] == "auto":
            return contextlib.nullcontext()
        n, p = (Xv.shape[0], Xv.shape[1]) if getattr(Xv, "ndim", 0) == 2 else (0, 0)
        return blas_budget(float(n) * p * max(1, self.classes_.size))

    def _class_log_density(self, X: Any) -> NDArray[np.float64]:
        """``log p_k(x)`` per class, (n, n_classes); -inf for classes without data."""
        return self._scatter(self._model.log_prob(X))

    @routed
    def class_log_density(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log density of each row under each class model, ``log p_k(x)``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            ``-inf`` for declared classes without data.
        """
        _check_fitted(self)
        forget_finite()
        Xv = self._input(X, reset=False)
        with self._deferred(), self._threads(Xv):
            out = self._class_log_density(Xv)
        finite = self._after_finite(Xv, self._with_data(out))
        return self._repair(Xv, out, prior=False, relative=False, finite=finite)

    def class_model(self, label: Any) -> Any:
        """The fitted model of one class (from :mod:`bayesrule.models`).

        It offers ``log_prob(X)`` and ``sample(n, rng)``; Gaussian models also
        ``mean`` and ``covariance`` (the model's own, after any shrinkage or
        regularisation).
        """
        _check_fitted(self)
        pos = np.flatnonzero(self.classes_ == label)
        if pos.size == 0:
            raise ValueError(f"{label!r} is not among the classes {self.classes_.tolist()}.")
        k = int(pos[0])
        if self.stats_.weights[k] <= 0:
            raise ValueError(f"class {label!r} has no data, so it has no model.")
        return self._class_model(k)

    def _class_model(self, k: int) -> Any:
        return self._model[self._model_index(k)]

    def model_family(self) -> Any:
        """The fitted family of class models (from :mod:`bayesrule.models`) as one object.

        What an engine that predicts elsewhere reads (the array API backend
        reads a mixture model's components and projection from it);
        :meth:`class_model` gives one class's model.
        """
        _check_fitted(self)
        return self._model

    def _after_finite(self, Xv: Any, result: NDArray[Any]) -> bool:
        """:meth:`_after`; True where it established that every entry of ``result`` is
        finite (then :meth:`_repair` has no row to look for)."""
        self._after(Xv, result)
        return False

    def _log_priors(self) -> NDArray[np.float64]:
        """``log priors_`` on the host (the host copy where the model lives on a device)."""
        host = getattr(self, "_host_array", None)
        priors = host("priors_") if host is not None else self.priors_
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(priors, dtype=np.float64))

    def _with_data(self, values: NDArray[Any]) -> NDArray[Any]:
        """The columns of ``values`` of the classes with data (no copy when all have)."""
        present = self.stats_.weights > 0
        return values if present.all() else values[:, present]

    def _mask_absent(self, jll: NDArray[np.float64]) -> NDArray[np.float64]:
        absent = self.stats_.weights <= 0
        if absent.any():
            forget_finite()  # a note on jll (note_finite) no longer holds
            jll[:, absent] = -np.inf
        return jll

    def _scatter(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """(n, classes with data) values placed into (n, n_classes), -inf for the others."""
        present = self.stats_.weights > 0
        if values.shape[1] == present.size:
            return values
        out = np.full((values.shape[0], present.size), -np.inf)
        out[:, present] = values
        return out

    def _joint(self, Xv: NDArray[Any]) -> NDArray[np.float64]:
        return self._mask_absent(
            _plus_priors(self._class_log_density(Xv), self._log_priors(), self._fresh_log_densities)
        )

    def _relative_joint(self, Xv: NDArray[Any]) -> NDArray[np.float64]:
        """The joint log likelihood up to a constant per row (enough for posteriors).

        The family's ``relative_log_prob`` when it has one (it leaves out a
        part that is the same for every class: a multinomial coefficient, a
        shared quadratic term); subclasses override it when they drop more (LDA).
        """
        relative = getattr(self._model, "relative_log_prob", None)
        if relative is None:
            return self._joint(Xv)
        return self._mask_absent(
            _plus_priors(self._scatter(relative(Xv)), self._log_priors(), self._fresh_log_densities)
        )

    def _terms_of_rows(
        self, Xv: Any, rows: NDArray[np.intp], prior: bool, family_relative: bool = False
    ) -> tuple[Any, Any]:
        """Relative and absolute joint log likelihoods of some rows, from scaled terms.

        See :mod:`bayesrule.models._terms`: the family gives ``log p_k(x)`` as
        a sum of terms kept apart by powers of two, which never overflows.
        ``family_relative``: the family's ``relative_log_prob`` instead (its
        ``relative_log_prob_terms``).
        """
        Xb = Xv[rows]
        if hasattr(Xb, "toarray"):
            Xb = Xb.toarray()
        present = self.stats_.weights > 0
        shape = (rows.size, int(present.sum()))
        with np.errstate(all="ignore"):
            which = "relative_log_prob_terms" if family_relative else "log_prob_terms"
            terms_of = getattr(self._model, which, None)
            if terms_of is not None:
                terms = list(terms_of(Xb))
            else:
                # a family without terms: its values, NaN and +inf made definite
                values = np.nan_to_num(
                    np.asarray(self._model.log_prob(Xb)).reshape(shape),
                    nan=-np.inf,
                    posinf=np.finfo(np.float64).max,
                    neginf=-np.inf,
                )
                terms = [(values, 0)]
            if prior:
                terms.append((self._log_priors()[present][None, :], 0))
            relative, absolute = combine_terms(terms, shape)
        return self._scatter(relative), self._scatter(absolute)

    def _repair(
        self,
        Xv: Any,
        values: NDArray[np.float64],
        *,
        prior: bool = True,
        relative: bool = True,
        family_relative: bool = False,
        finite: bool = False,
    ) -> NDArray[np.float64]:
        """Recompute the rows of ``values`` that Bayes' rule cannot use, from scaled terms.

        A row far from every class (an entry of 1e300) has log densities that
        overflow: NaN, ``+inf`` or ``-inf`` for every class. One reduction of
        the (n, K) results finds those rows; only they are recomputed, with
        :meth:`_terms_of_rows` (relative: the row's best class at 0, the
        others below it, ``-inf`` beyond float64; absolute: ``-inf`` where
        the log density is below -max float). Normal rows cost nothing more.
        """
        if finite or all_finite(values):
            return values  # no row to repair (the common case): known, or one reduction
        with np.errstate(invalid="ignore"):
            top = np.max(self._with_data(values), axis=1) if values.shape[0] else values[:, 0]
        bad = np.flatnonzero(~np.isfinite(top))
        if bad.size:
            rel, absolute = self._terms_of_rows(Xv, bad, prior, family_relative)
            values = np.array(values, dtype=np.float64)
            values[bad] = rel if relative else absolute
        return values

    def _decision(self, X: ArrayLike, *, argmax_only: bool = False) -> NDArray[np.float64]:
        """The relative joint log likelihood of each row and class, repaired.

        With ``argmax_only`` (for :meth:`predict`) it may come shifted by a
        per-row term, where the model offers that form in one product (LDA's
        ``_one_product_decision``: scikit-learn's ``X @ coef_.T + intercept_``,
        without a centred copy of ``X``); the probabilities never take it.
        """
        _check_fitted(self)
        _check_prior_mass(self)
        forget_finite()
        Xv = self._input(X, reset=False)
        shifted = getattr(self, "_one_product_decision", None) if argmax_only else None
        if shifted is not None:
            fast = shifted(Xv)  # None where it does not apply or a value is not finite
            if fast is not None:
                return np.asarray(fast)
        with self._deferred(), self._threads(Xv):
            jll = self._relative_joint(Xv)
        finite = self._after_finite(Xv, self._with_data(jll))
        return self._repair(Xv, jll, finite=finite)

    @routed
    def predict_joint_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``log pi_k + log p_k(x)`` for each row and class, shape (n, n_classes).

        Never NaN for finite input; ``-inf`` for a class without data and
        where the log likelihood is below the most negative float64 (a row
        far from the class: the density underflows).
        """
        with rows_wanted():  # the product is the answer: no reduction reads it
            jll = self._joint_log_proba(X, full=not self._joint_is_relative)
        return self._out(jll)

    def _joint_log_proba(self, X: ArrayLike, *, full: bool) -> NDArray[np.float64]:
        """``log pi_k + log p_k(x)``; without ``full``, the family's relative log density."""
        _check_fitted(self)
        _check_prior_mass(self)
        forget_finite()
        Xv = self._input(X, reset=False)
        relative = not full and hasattr(self._model, "relative_log_prob")
        with self._deferred(), self._threads(Xv):
            jll = self._family_relative_joint(Xv) if relative else self._joint(Xv)
        finite = self._after_finite(Xv, self._with_data(jll))
        return self._repair(Xv, jll, relative=False, family_relative=relative, finite=finite)

    def _family_relative_joint(self, Xv: Any) -> NDArray[np.float64]:
        """``log pi_k`` plus the family's ``relative_log_prob`` (see :attr:`_joint_is_relative`)."""
        return self._mask_absent(
            _plus_priors(
                self._scatter(self._model.relative_log_prob(Xv)),
                self._log_priors(),
                self._fresh_log_densities,
            )
        )

    @routed
    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log posterior ``log P(y = k | x)``, a log-softmax stable for any finite input.

        The largest joint log likelihood of each row is subtracted before the
        sum (so a row whose values are all near -1e300 still sums to 1); a row
        far from every class is decided by the class that dominates in exact
        arithmetic (posterior 1, the others 0), never NaN.
        """
        return self._out(log_softmax(self._decision(X), overwrite=self._fresh_log_densities))

    @routed
    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Posterior probabilities ``P(y = k | x)``, shape (n, n_classes); rows sum to 1."""
        return self._out(softmax(self._decision(X), overwrite=self._fresh_log_densities))

    @routed
    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The class of largest posterior probability for each row."""
        with rows_wanted() if self._argmax_of_rows else contextlib.nullcontext():
            jll = self._decision(X, argmax_only=True)
        return self.classes_[row_argmax(jll)]

    @available_if(_offers_decision_function)
    @routed
    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log posterior up to a per-row constant; for two classes, the log odds.

        Shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes). For a row far from every class the log odds may be
        ``+-inf``. The discriminant analyses have it; naive Bayes has not, as
        scikit-learn's has not (see :attr:`has_decision_function`).
        """
        with rows_wanted():
            jll = self._decision(X)
        if jll.shape[1] == 2:
            with np.errstate(invalid="ignore"):
                return self._out(jll[:, 1] - jll[:, 0])
        return self._out(jll)

    @routed
    def score_samples(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log density of the data under the model, ``log sum_k pi_k p_k(x)``.

        The sum is over the classes with data, their priors renormalised to
        sum to 1 (as the posteriors are): a class declared (``classes=`` of
        ``partial_fit``) but never seen has no model, so a prior given to it
        is left out rather than counted as density nowhere.

        Never NaN or ``+inf`` for finite input. A row so far from every class
        that its log density is below the most negative float64 gets
        ``-inf``: the log of a density that underflows.
        """
        jll = self._out(self._joint_log_proba(X, full=True))
        with np.errstate(divide="ignore"):
            out = np.asarray(logsumexp(jll, axis=1))
        mass = present_log_mass(self)
        if mass != 0.0:
            out = out - mass
        return out


def _check_fitted(est: Any) -> None:
    """scikit-learn's ``check_is_fitted(est)``, without its cost where its answer is known.

    An estimator holding ``classes_`` (set by every fit) is fitted by that
    check's own rule (an attribute ending in an underscore) unless its class
    defines ``__sklearn_is_fitted__``; reading its tags (about 20 microseconds)
    is then skipped. Anything else takes the check, with its errors.
    """
    if "classes_" not in vars(est) or hasattr(type(est), "__sklearn_is_fitted__"):
        check_is_fitted(est)
    waiting = vars(est).get("_model")
    if isinstance(waiting, Underived):  # a model waiting for rows says so before any warning
        raise waiting.error()


def all_finite(values: NDArray[Any]) -> bool:
    """Whether every entry of ``values`` is finite, from one sum (no temporary array).

    NaN or an infinity makes the sum non-finite; so can finite values whose
    sum overflows, for which the answer is then computed entry by entry.
    No pass at all where ``values`` is the array a class model has just
    found finite (:func:`~bayesrule._util.products.note_finite`, used up here).
    """
    if noted_finite(values):
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(values)):
            return True
    return bool(np.all(np.isfinite(values)))


def _plus_priors(
    values: NDArray[np.float64], log_priors: NDArray[np.float64], in_place: bool = False
) -> NDArray[Any]:
    """``values + log_priors`` as a new array, or added into ``values`` with ``in_place``
    (a writeable float64 array of the call's own); ``values`` itself where every log
    prior is 0 (ComplementNB's decision, which has no priors: a pass over the (n, K)
    values saved).

    Values noted finite by their class model (:func:`~bayesrule._util.products.note_finite`)
    give a sum noted finite too where every log prior is finite: adding a number
    of magnitude below ``2**960`` (a log prior is at least about -745) to a finite
    float64 cannot overflow, its rounding error being below half a unit in the
    last place of the largest float64.
    """
    if not np.any(log_priors):
        return np.asarray(values, dtype=np.float64)
    known = noted_finite(values) and bool(np.all(np.abs(log_priors) < 2.0**960))
    out = values if _writeable(values, in_place) else None
    out = add_to_rows(np.asarray(values, dtype=np.float64), log_priors, out)
    if known:
        note_finite(out)
    return out


#: rows of a row-major (n, K) array that :func:`add_to_rows` adds to in one inner loop
TILE_ROWS = 256


def add_to_rows(
    values: NDArray[np.float64], row: NDArray[np.float64], out: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """``values + row`` (``row`` added to each row of the 2-D ``values``), into ``out`` if given.

    NumPy adds a short row to a row-major (n, K) array K values at a time, an
    inner loop per row (200,000 x 5: 1.2 ms); here ``TILE_ROWS`` rows at a time
    are one flat run of ``TILE_ROWS * K`` values plus the row repeated as often
    (0.35 ms). Any other layout, or more than 16 columns, is NumPy's sum.
    """
    if out is None:
        out = np.empty(values.shape, dtype=np.float64)
    n, K = values.shape if values.ndim == 2 else (0, 0)
    if not (
        0 < K <= 16 and n >= 2 * TILE_ROWS and values.flags.c_contiguous and out.flags.c_contiguous
    ):
        return np.add(values, row, out=out)
    main = n // TILE_ROWS * TILE_ROWS
    width = TILE_ROWS * K
    np.add(
        values[:main].reshape(-1, width),
        np.tile(np.asarray(row, dtype=np.float64), TILE_ROWS),
        out=out[:main].reshape(-1, width),
    )
    np.add(values[main:], row, out=out[main:])
    return out


def _writeable(values: Any, overwrite: bool) -> bool:
    """Whether ``values`` may be overwritten: asked to, and a writeable float64 ndarray."""
    return (
        overwrite
        and isinstance(values, np.ndarray)
        and values.dtype == np.float64
        and values.flags.writeable
    )


def log_softmax(jll: NDArray[np.float64], *, overwrite: bool = False) -> NDArray[np.float64]:
    """``jll - log sum_k exp(jll)`` per row, with the row's largest value taken out first.

    scipy's ``logsumexp`` adds the largest value back before the subtraction,
    which loses the small terms next to a value of -1e300 (rows of
    probabilities that sum to 3); here they are differences from it. With
    ``overwrite`` the result is written into ``jll`` (when it is a writeable
    float64 array): one (n, K) temporary fewer.
    """
    d, e = _shifted_exp(jll, overwrite)
    d -= np.log(np.sum(e, axis=1, keepdims=True))
    return d


def softmax(jll: NDArray[np.float64], *, overwrite: bool = False) -> NDArray[np.float64]:
    """``exp(log_softmax(jll))``, from one exponential of the (n, K) values, not two.

    Each row's ``exp(jll - top)`` divided by its sum: equal to the exponential of
    :func:`log_softmax` up to rounding (a few units in the last place). With
    ``overwrite`` the result is written into ``jll`` (as :func:`log_softmax`).
    """
    d, _ = _shifted_exp(jll, overwrite, exp_in_place=True)
    d /= np.sum(d, axis=1, keepdims=True)
    return d


def _shifted_exp(
    jll: NDArray[np.float64], overwrite: bool = False, exp_in_place: bool = False
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``d = jll - top`` (each row's largest value, where it is finite) and ``exp(d)``;
    ``d`` in ``jll`` itself with ``overwrite``, ``exp(d)`` in ``d`` with ``exp_in_place``."""
    top = np.max(jll, axis=1, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    # -1e308 - 1e308 overflows to -inf: that class's probability is 0, which is right
    with np.errstate(invalid="ignore", over="ignore"):
        if _writeable(jll, overwrite):
            d = np.subtract(jll, shift, out=jll)
        else:
            d = np.subtract(jll, shift)
    if exp_in_place:
        return np.exp(d, out=d), d
    return d, np.exp(d)


#: Up to this many columns, :func:`row_argmax` of a column-major array runs over its columns.
ARGMAX_COLUMNS = 32


def row_argmax(values: NDArray[Any]) -> NDArray[np.intp]:
    """``np.argmax(values, axis=1)``, faster for the (n, K) results of few classes.

    NumPy's argmax of a Fortran-ordered array copies it to rows and then
    searches each row of K values in a call of its own (200,000 rows of five
    classes: several times the time of the rows' maximum, whose reduction
    runs over whole columns). With at most :data:`ARGMAX_COLUMNS` columns each
    row's maximum is taken by that reduction, the entries equal to it are
    weighted ``K, K - 1, ..., 1`` by column, and the largest weight of a row
    names its first maximum: the index NumPy gives (the first of equal
    maxima). A row holding NaN (which NumPy answers with its first NaN)
    equals nothing and is left to NumPy. A row-major array of as few columns
    is read :data:`ARGMAX_TILE` rows at a time, each tile copied to columns
    while it is in cache (1,000,000 x 5: 8 ms, against 18 ms for NumPy's
    argmax and 23 ms for a column-major copy of the whole and its argmax).
    """
    values = np.asarray(values)
    n, K = values.shape if values.ndim == 2 else (0, 0)
    if K < 2 or K > ARGMAX_COLUMNS or n == 0:
        return np.argmax(values, axis=1)
    if values.flags.f_contiguous:
        return _columns_argmax(values)
    if n < 2 * ARGMAX_TILE or not values.flags.c_contiguous:
        return np.argmax(values, axis=1)
    idx = np.empty(n, dtype=np.intp)
    tile = np.empty((K, ARGMAX_TILE))
    for s in range(0, n, ARGMAX_TILE):
        part = tile[:, : min(ARGMAX_TILE, n - s)]
        np.copyto(part, values[s : s + part.shape[1]].T)
        idx[s : s + part.shape[1]] = _columns_argmax(part.T)
    return idx


#: Rows of a row-major array that :func:`row_argmax` copies to columns at a time.
ARGMAX_TILE = 8192


def _columns_argmax(values: NDArray[Any]) -> NDArray[np.intp]:
    """:func:`row_argmax` of a column-major (n, K) array of 2 to :data:`ARGMAX_COLUMNS` columns."""
    K = values.shape[1]
    hit = np.equal(values, np.max(values, axis=1, keepdims=True))
    weight = np.max(hit.view(np.uint8) * np.arange(K, 0, -1, dtype=np.uint8), axis=1)
    idx = K - weight.astype(np.intp)
    nan = weight == 0
    if nan.any():
        idx[nan] = np.argmax(values[nan], axis=1)
    return idx
