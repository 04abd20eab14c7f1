"""Leave-one-out posteriors: ``loo_predict_proba`` against n explicit refits.

Usage: python benchmarks/bench_loo.py [--repeat R] [--max-refits M]

For iris, wine and a larger synthetic set, and for LDA, QDA and
QDA(reg_param=0.1), prints the wall time of ``est.loo_predict_proba(X, y)``
(best of ``--repeat``), the time of the explicit refits it replaces
(``clone(est).fit(X without row i, ...)`` then ``predict_proba(row i)`` for
every row), the ratio, and the largest difference between the two. With more
than ``--max-refits`` rows the refits are run on that many rows, spread
evenly, and their time is scaled to all ``n`` rows (marked ``~``); the
difference is then over those rows. scikit-learn's refits
(``cross_val_predict(..., cv=LeaveOneOut(), method='predict_proba')``) are
timed in the same run for reference, scaled the same way.

The timings are wall-clock on whatever else the machine runs: repeat on an
idle machine for figures to quote.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn import discriminant_analysis as skda
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine

import bayesrule


def synthetic(n=5000, p=30, K=6, seed=0):
    """Gaussian classes with a shared, well-conditioned correlated covariance.

    (A covariance whose correlation matrix has eigenvalue ratios below LDA's
    ``tol`` would make LDA drop directions, and its leave-one-out would fall
    back to refitting every row.)
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=n)
    mix = np.eye(p) + 0.3 * rng.normal(size=(p, p)) / np.sqrt(p)
    X = rng.normal(size=(K, p))[y] + rng.normal(size=(n, p)) @ mix
    return X, y


def refit_rows(est, X, y, rows):
    out = np.zeros((rows.size, np.unique(y).size))
    classes = np.unique(y)
    for j, i in enumerate(rows.tolist()):
        keep = np.ones(y.size, dtype=bool)
        keep[i] = False
        m = clone(est).fit(X[keep], y[keep])
        out[j, np.searchsorted(classes, m.classes_)] = m.predict_proba(X[i : i + 1])[0]
    return out


def best_of(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-refits", type=int, default=300)
    args = parser.parse_args()
    datasets = {
        "iris": load_iris(return_X_y=True),
        "wine": load_wine(return_X_y=True),
        "synthetic": synthetic(),
    }
    models = {
        "LDA": (
            bayesrule.LinearDiscriminantAnalysis(),
            skda.LinearDiscriminantAnalysis(),
        ),
        "QDA": (
            bayesrule.QuadraticDiscriminantAnalysis(),
            skda.QuadraticDiscriminantAnalysis(),
        ),
        "QDA(reg_param=0.1)": (
            bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.1),
            skda.QuadraticDiscriminantAnalysis(reg_param=0.1),
        ),
    }
    header = (
        f"{'data':<10} {'n x p':>10} {'model':<19} {'loo (s)':>9} {'refits (s)':>11} "
        f"{'ratio':>8} {'sklearn refits (s)':>19} {'ratio':>8} {'max |diff|':>11}"
    )
    print(header)
    print("-" * len(header))
    for dname, (X, y) in datasets.items():
        n, p = X.shape
        rows = np.arange(n)
        if n > args.max_refits:
            rows = np.linspace(0, n - 1, args.max_refits).astype(int)
        scale = n / rows.size
        mark = "~" if scale > 1 else " "
        for mname, (est, sk) in models.items():
            t_loo, P = best_of(lambda est=est, X=X, y=y: est.loo_predict_proba(X, y), args.repeat)
            t0 = time.perf_counter()
            R = refit_rows(est, X, y, rows)
            t_ref = (time.perf_counter() - t0) * scale
            t0 = time.perf_counter()
            refit_rows(sk, X, y, rows)
            t_sk = (time.perf_counter() - t0) * scale
            diff = float(np.abs(P[rows] - R).max())
            print(
                f"{dname:<10} {f'{n}x{p}':>10} {mname:<19} {t_loo:>9.4f} {mark}{t_ref:>10.3f} "
                f"{t_ref / t_loo:>7.0f}x {mark}{t_sk:>18.3f} {t_sk / t_loo:>7.0f}x {diff:>11.1e}"
            )


if __name__ == "__main__":
    main()
