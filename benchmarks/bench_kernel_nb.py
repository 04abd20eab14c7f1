"""KernelNB: MNIST accuracy and fit + predict time beside scikit-learn's GaussianNB, and 5-fold CV.

Run from the repository root: ``python benchmarks/bench_kernel_nb.py``.
Timings are one run each (fit on the 60000 training images, ``predict`` on
the 10000 test images) and depend on the machine's load; the accuracies do
not. The second table is the mean 5-fold stratified CV accuracy (shuffled,
``random_state=0``) on scikit-learn's small data sets.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from sklearn import naive_bayes as sk
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.model_selection import StratifiedKFold, cross_val_score

import bayesrule as br
from bayesrule.datasets import load_mnist


def fit_predict(est: Any, Xtr: Any, ytr: Any, Xte: Any, yte: Any) -> tuple[float, float]:
    t0 = time.perf_counter()
    acc = float((est.fit(Xtr, ytr).predict(Xte) == yte).mean())
    return acc, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-mnist", action="store_true")
    args = parser.parse_args()
    models: list[tuple[str, Any]] = [
        ("bayesrule KernelNB()", lambda: br.KernelNB()),
        (
            "bayesrule KernelNB(point_mass=2, alpha=0)",
            lambda: br.KernelNB(point_mass=2.0, alpha=0.0),
        ),
        ("sklearn GaussianNB()", lambda: sk.GaussianNB()),
    ]
    if not args.skip_mnist:
        Xtr, ytr, Xte, yte = load_mnist()
        print(f"{'MNIST':45s} {'accuracy':>9s} {'fit+predict s':>14s}")
        for name, make in models:
            acc, t = fit_predict(make(), Xtr, ytr, Xte, yte)
            print(f"{name:45s} {acc:9.4f} {t:14.1f}", flush=True)
        print()
    sets = {"wine": load_wine, "breast_cancer": load_breast_cancer, "digits": load_digits}
    print(f"{'5-fold CV':45s} " + " ".join(f"{s:>13s}" for s in sets))
    data = {s: load(return_X_y=True) for s, load in sets.items()}
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for name, make in models:
        scores = [cross_val_score(make(), X, y, cv=cv).mean() for X, y in data.values()]
        print(f"{name:45s} " + " ".join(f"{s:13.4f}" for s in scores), flush=True)


if __name__ == "__main__":
    main()
