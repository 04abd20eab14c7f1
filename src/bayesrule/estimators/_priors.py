"""Class priors given by label: ``priors={"Adelie": 0.5, "Gentoo": 0.3, ...}``.

Every ``priors`` (and naive Bayes ``class_prior``) parameter accepts, beside
an array in the order of ``classes_``, a mapping from label to prior (as R's
named vectors), or a pandas Series indexed by label (``y.value_counts(
normalize=True)``). The mapping is turned into the array in the order of the
fitted classes each time the parameters are derived, so it follows the
classes through ``fit``, ``partial_fit``, ``merge`` and a model file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from .._util.validation import check_priors
from ..stats import class_label

__all__ = ["PRIORS_CONSTRAINT", "is_labelled", "present_log_mass", "resolve_priors"]

#: The parameter constraint of ``priors`` / ``class_prior`` (scikit-learn's
#: ``_parameter_constraints``): an array in class order, a mapping by label, or None.
PRIORS_CONSTRAINT: list[Any] = ["array-like", Mapping, None]


def is_labelled(priors: Any) -> bool:
    """Whether ``priors`` names its classes: a mapping, or a Series with a label index.

    A pandas Series with the default index (``0, 1, ...``, a ``RangeIndex``)
    is a plain array in class order, as scikit-learn reads it.
    """
    if isinstance(priors, Mapping):
        return True
    index = getattr(priors, "index", None)
    if index is None or not hasattr(priors, "to_dict"):
        return False
    return type(index).__name__ != "RangeIndex"


def _text(labels: Any) -> str:
    shown = [v.item() if isinstance(v, np.generic) else v for v in list(labels)[:20]]
    return repr(shown) + (" ..." if len(labels) > 20 else "")


def _same(a: Any, b: Any) -> bool:
    """Label equality with no numeric/text crossover (``1 != '1'``; ``True == 1`` as NumPy)."""
    if isinstance(a, (str, bytes)) != isinstance(b, (str, bytes)):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def by_class(priors: Any, classes: NDArray[Any], name: str = "priors") -> NDArray[Any]:
    """The values of a labelled ``priors`` in the order of ``classes``.

    Raises
    ------
    ValueError
        Naming the classes the mapping leaves out and the labels it has that
        are not classes (a typo, a class of another data set), with the
        classes it should name.
    """
    if isinstance(priors, Mapping):
        items = list(priors.items())
    else:  # a Series: its index may repeat a label, which to_dict would hide
        items = list(zip(list(priors.index), list(priors.to_numpy()), strict=True))
    keys = [k for k, _ in items]
    classes = np.asarray(classes)
    labels = classes.tolist()
    found: list[int | None] = []
    for lab in labels:
        hit = [i for i, k in enumerate(keys) if _same(k, lab)]
        if len(hit) > 1:
            raise ValueError(
                f"{name} names class {lab!r} more than once ({_text([keys[i] for i in hit])}); "
                "give each class one prior."
            )
        found.append(hit[0] if hit else None)
    missing = [lab for lab, i in zip(labels, found, strict=True) if i is None]
    used = {i for i in found if i is not None}
    unknown = [k for i, k in enumerate(keys) if i not in used]
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"it has no prior for the classes {_text(missing)}")
        if unknown:
            parts.append(f"it names labels that are not classes: {_text(unknown)}")
        raise ValueError(
            f"{name} given by label must name every class exactly once; "
            f"{' and '.join(parts)}. The classes are {_text(labels)}."
        )
    return np.asarray([items[i][1] for i in found if i is not None], dtype=object)


def resolve_priors(
    priors: Any, classes: NDArray[Any], *, strict: bool = False, name: str = "priors"
) -> NDArray[np.float64]:
    """Validated priors (see :func:`bayesrule._util.validation.check_priors`) in class order.

    ``priors`` is an array in the order of ``classes`` or a labelled mapping
    (see :func:`is_labelled`), which is put in that order first.
    """
    if is_labelled(priors):
        values = by_class(priors, classes, name)
        try:
            priors = values.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must map each class to a number; got {_text(values)}."
            ) from None
    return check_priors(priors, np.asarray(classes).size, strict=strict)


def _check_prior_mass(est: Any) -> None:
    """ValueError where every class with data has prior 0 (all the mass on classes without).

    The posteriors over the classes with data, and the density, are then
    0 / 0: no answer is right, so none is given. A model whose scores carry
    no priors (ComplementNB's) is never refused.
    """
    present = np.asarray(est.stats_.weights) > 0
    if present.all() or not present.any():
        return
    log_priors = est._log_priors()
    if np.any(log_priors) and not np.any(np.isfinite(log_priors[present])):
        labels = [class_label(est.classes_, k) for k in np.flatnonzero(present)]
        empty = [class_label(est.classes_, k) for k in np.flatnonzero(~present)]
        raise ValueError(
            f"priors: every class with data ({', '.join(map(repr, labels))}) has prior 0, and "
            f"all the prior mass is on classes never seen ({', '.join(map(repr, empty))}), "
            "which have no model: give those classes data (partial_fit) or the classes with "
            "data some prior."
        )


def present_log_mass(est: Any) -> float:
    """``log`` of the prior mass of a fitted model's classes with data, where some class has none.

    0 where every class has data, or where the scores carry no priors
    (ComplementNB's, all 0). ``score_samples`` subtracts it (on the host and
    on a device), so that the density of the classes with data integrates
    to 1.
    """
    present = np.asarray(est.stats_.weights) > 0
    if present.all() or not present.any():
        return 0.0
    log_priors = est._log_priors()
    if not np.any(log_priors):
        return 0.0
    with np.errstate(divide="ignore"):
        mass = float(logsumexp(log_priors[present]))
    # no mass on the classes with data: their joint scores are -inf already
    return mass if np.isfinite(mass) else 0.0
