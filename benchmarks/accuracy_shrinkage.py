"""Cross-validated accuracy of every shrinkage option, beside scikit-learn's.

5-fold stratified cross-validation (shuffled, random_state=0) of
``LinearDiscriminantAnalysis`` and ``QuadraticDiscriminantAnalysis`` with
each ``shrinkage`` on wine, breast_cancer and digits; scikit-learn's
``solver='lsqr'`` ('auto' and a float) and its ``covariance_estimator=OAS()``
(its only OAS) stand beside them. Also times LDA's default fit and its
fit with fourth moments on a digits-sized and an MNIST-sized problem.

Run: ``PYTHONPATH=src python benchmarks/accuracy_shrinkage.py``
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn import discriminant_analysis as skda
from sklearn.covariance import OAS
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.model_selection import StratifiedKFold, cross_val_score

from bayesrule import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

DATASETS = {"wine": load_wine, "breast_cancer": load_breast_cancer, "digits": load_digits}
CV = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)

MODELS = {
    "LDA 'auto'": lambda: LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto"),
    "LDA 'ledoit-wolf'": lambda: LinearDiscriminantAnalysis(
        solver="eigen", shrinkage="ledoit-wolf"
    ),
    "LDA 'oas'": lambda: LinearDiscriminantAnalysis(solver="eigen", shrinkage="oas"),
    "LDA 0.1": lambda: LinearDiscriminantAnalysis(solver="eigen", shrinkage=0.1),
    "LDA 'auto' bias=True": lambda: LinearDiscriminantAnalysis(
        solver="eigen", shrinkage="auto", bias=True
    ),
    "sklearn LDA 'auto'": lambda: skda.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
    "sklearn LDA OAS()": lambda: skda.LinearDiscriminantAnalysis(
        solver="lsqr", covariance_estimator=OAS()
    ),
    "sklearn LDA 0.1": lambda: skda.LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.1),
    "QDA 'auto' reg=0.01": lambda: QuadraticDiscriminantAnalysis(
        solver="eigen", shrinkage="auto", reg_param=0.01
    ),
    "QDA 'oas' reg=0.01": lambda: QuadraticDiscriminantAnalysis(
        solver="eigen", shrinkage="oas", reg_param=0.01
    ),
    "sklearn QDA 'auto'": lambda: skda.QuadraticDiscriminantAnalysis(
        solver="eigen", shrinkage="auto"
    ),
}


def _accuracy(make, X, y) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f"{cross_val_score(make(), X, y, cv=CV, error_score='raise').mean():.3f}"
    except Exception as exc:  # noqa: BLE001 - a failing model is a table entry, not a crash
        return type(exc).__name__


def accuracy_table() -> None:
    data = {name: load(return_X_y=True) for name, load in DATASETS.items()}
    width = max(map(len, MODELS))
    print(f"{'model':<{width}}  " + "  ".join(f"{n:>13}" for n in data))
    for label, make in MODELS.items():
        cells = [_accuracy(make, X, y) for X, y in data.values()]
        print(f"{label:<{width}}  " + "  ".join(f"{c:>13}" for c in cells))


def _best_of(fn, repeat=3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def timings() -> None:
    rng = np.random.default_rng(0)
    for n, p, k in [(1797, 64, 10), (60000, 784, 10)]:
        y = rng.integers(0, k, n)
        X = rng.normal(size=(n, p)) + y[:, None]
        plain = _best_of(lambda X=X, y=y: LinearDiscriminantAnalysis().fit(X, y))
        fourth = _best_of(
            lambda X=X, y=y: LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto").fit(X, y),
            1,
        )
        print(f"LDA fit n={n} p={p}: default {plain:.3f} s, shrinkage='auto' {fourth:.3f} s")


if __name__ == "__main__":
    accuracy_table()
    timings()
