"""RDA-CV's choice on small tables: near ties decided by log-likelihood or by regularisation.

Usage: python benchmarks/bench_rda_cv_small.py [--sets iris wine breast_cancer gen1 gen2 gen3 gen4]

5-fold stratified outer accuracy (the folds of bench_defaults.py); RDA-CV's
own search runs on the 4 outer training folds. ``genS`` is a generated
table: 3 Gaussian classes of 40 rows in 10 features, class covariances
shared (even S) or a shared one plus a perturbation of each class's own (odd
S), each feature scaled by ``e**U(-3, 3)``, class means ``0.35 N(0, I)``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn import datasets as skdata
from sklearn.model_selection import StratifiedKFold

from bayesrule import RegularizedDiscriminantAnalysisCV

SETS = {
    "iris": skdata.load_iris,
    "wine": skdata.load_wine,
    "breast_cancer": skdata.load_breast_cancer,
}


def generated(seed: int, n_per: int = 40, p: int = 10, K: int = 3):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(p, p))
    Xs, ys = [], []
    for k in range(K):
        A = base + (0.7 * rng.normal(size=(p, p)) if seed % 2 else 0)
        cov = A @ A.T / p + 0.1 * np.eye(p)
        scale = np.exp(rng.uniform(-3, 3, size=p))
        mu = rng.normal(size=p) * 0.35
        Xs.append(rng.multivariate_normal(mu, cov, size=n_per) * scale)
        ys.append(np.full(n_per, k))
    return np.vstack(Xs), np.concatenate(ys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=[*SETS, "gen1", "gen2", "gen3", "gen4"])
    args = parser.parse_args()
    print(f"{'set':<14} {'tie_break':<16} {'accuracy %':>10} {'wall (s)':>9}")
    for name in args.sets:
        X, y = generated(int(name[3:])) if name.startswith("gen") else SETS[name](return_X_y=True)
        folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
        for tie_break in ("regularisation", "log_likelihood"):
            t0 = time.perf_counter()
            pred = np.empty_like(y)
            for train, test in folds:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = RegularizedDiscriminantAnalysisCV(tie_break=tie_break)
                    pred[test] = m.fit(X[train], y[train]).predict(X[test])
            acc = 100 * float(np.mean(pred == y))
            print(f"{name:<14} {tie_break:<16} {acc:>10.2f} {time.perf_counter() - t0:>9.1f}")


if __name__ == "__main__":
    main()
