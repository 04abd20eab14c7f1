"""Short names for the estimators, for the command line and the model files.

The table maps a short name to the *name* of a class in the ``bayesrule``
namespace, and each class is looked up with ``getattr`` when asked for. A
name whose class is not (yet) part of the package is simply left out, so the
registry grows as estimators land without any change here. Model files are
only ever rebuilt from a class found through this table: no name read from a
file is ever imported.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SHORT_NAMES", "available", "get_estimator", "short_name"]

#: short name -> class name in the ``bayesrule`` package, in display order
SHORT_NAMES: dict[str, str] = {
    "lda": "LinearDiscriminantAnalysis",
    "qda": "QuadraticDiscriminantAnalysis",
    "rda": "RegularizedDiscriminantAnalysis",
    "rdacv": "RegularizedDiscriminantAnalysisCV",
    "mda": "MixtureDiscriminantAnalysis",
    "gnb": "GaussianNB",
    "dlda": "DiagonalLDA",
    "bnb": "BernoulliNB",
    "mnb": "MultinomialNB",
    "cnb": "ComplementNB",
    "catnb": "CategoricalNB",
    "pnb": "PoissonNB",
    "knb": "KernelNB",
    "mixed": "MixedNB",
}


def available() -> dict[str, type[Any]]:
    """The estimators this installation provides, as ``{short name: class}``."""
    import bayesrule  # at call time: this module is imported by the package itself

    found: dict[str, type[Any]] = {}
    for short, cls_name in SHORT_NAMES.items():
        cls = getattr(bayesrule, cls_name, None)
        if isinstance(cls, type) and hasattr(cls, "from_stats"):
            found[short] = cls
    return found


def get_estimator(name: str) -> type[Any]:
    """The estimator class for a short name (``"lda"``) or a class name.

    Raises
    ------
    ValueError
        Naming the unknown model and listing the known short names.
    """
    models = available()
    key = name.strip()
    if key.lower() in models:
        return models[key.lower()]
    for cls in models.values():
        if cls.__name__ == key:
            return cls
    raise ValueError(f"unknown model {name!r}; choose one of: {', '.join(models)}.")


def short_name(cls: type[Any]) -> str:
    """The short name of an estimator class (its class name when it has none)."""
    for short, cls_name in SHORT_NAMES.items():
        if cls.__name__ == cls_name:
            return short
    return cls.__name__
