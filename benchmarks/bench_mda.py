"""Mixture discriminant analysis on MNIST, beside scikit-learn's GaussianMixture per class.

Usage: python benchmarks/bench_mda.py [--data DIR] [--quick] [--n-train N]
       python benchmarks/bench_mda.py --small [--no-grid]

Each MixtureDiscriminantAnalysis setting (the default first) is fitted on the
MNIST training rows (pixels / 255, no deskewing or augmentation) and scored
on the 10000 test rows: accuracy, fit and predict wall time, EM iterations and
passes over the data (``n_passes_``). In the same
run, scikit-learn's GaussianMixture is fitted per class on the same
principal components (PCA fitted on the training rows, its time included),
and a row goes to the class of largest ``log prior + score_samples``.
``--quick`` uses 10000 training rows and fewer settings (about a minute). The
"fit cpu" column is the process's CPU time over all threads: on a busy
machine it is the steadier figure.
Timings on a shared machine are noisy: compare rows of one run.

``--small``: the defaults on scikit-learn's wine, breast_cancer, iris and
digits (5-fold stratified CV, shuffled with seed 0) beside
LinearDiscriminantAnalysis and the best point of a small grid of MDA's own
parameters (``n_components`` 1-4 times ``reg_covar`` 0.01, 0.03, 0.1, 0.3;
``--no-grid`` leaves it out), with the numbers of components and the ridge
the defaults chose on all the rows, and the share of predictions that
change when every feature is multiplied by a random factor in [1e-3, 1e3].
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import bayesrule
from bayesrule.datasets import load_mnist

SETTINGS: list[dict] = [
    {},  # the defaults
    {"n_components": 12, "reg_covar": 0.1},  # the defaults before they came from the data
    {"tol": 1e-3},
    {"n_components": 8, "n_dims": 50},
    {"covariance_type": "ppca", "n_dims": 100, "rank": 20},
    {"covariance_type": "diag"},
    {"covariance_type": "shared", "n_components": 16},
    {"covariance_type": "shared", "n_components": 16, "dimension": 9},
    {"projection": "fisher", "n_components": 4},
]
QUICK = [{}, {"n_components": 4}, {"covariance_type": "ppca", "n_dims": 100, "rank": 20}]
#: scikit-learn GaussianMixture per class: (PCA dims, components); modest, it is slow
SKLEARN = [(50, 4), (50, 8)]
SKLEARN_QUICK = [(50, 4)]


def mda_row(params, Xtr, ytr, Xte, yte):
    est = bayesrule.MixtureDiscriminantAnalysis(**params)
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xtr, ytr)
    fit, cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    acc = float((est.predict(Xte) == yte).mean())
    pred = time.perf_counter() - t0
    label = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "defaults"
    return ("bayesrule MDA", label, acc, fit, cpu, pred, est.n_iter_, est.n_passes_)


def sklearn_row(dims, components, Xtr, ytr, Xte, yte):
    from sklearn.decomposition import PCA
    from sklearn.mixture import GaussianMixture

    t0, c0 = time.perf_counter(), time.process_time()
    pca = PCA(dims, random_state=0).fit(Xtr)
    Z = pca.transform(Xtr)
    classes = np.unique(ytr)
    models = [
        GaussianMixture(components, covariance_type="full", random_state=0).fit(Z[ytr == k])
        for k in classes
    ]
    priors = np.log(np.bincount(ytr) / ytr.size)
    fit, cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    Zt = pca.transform(Xte)
    joint = np.column_stack([m.score_samples(Zt) for m in models]) + priors
    acc = float((classes[np.argmax(joint, axis=1)] == yte).mean())
    pred = time.perf_counter() - t0
    label = f"PCA {dims}, {components} full components"
    iters = max(m.n_iter_ for m in models)
    return ("sklearn GaussianMixture", label, acc, fit, cpu, pred, iters, None)


def small_sets(grid=True):
    import itertools

    from sklearn import datasets
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    cv = StratifiedKFold(5, shuffle=True, random_state=0)

    def predict(est, X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cross_val_predict(est, X, y, cv=cv)

    print("5-fold CV accuracy; rescaled: share of predictions changed by random feature scales")
    for name in ("wine", "breast_cancer", "iris", "digits"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        pred = predict(bayesrule.MixtureDiscriminantAnalysis(), X, y)
        lda = np.mean(predict(bayesrule.LinearDiscriminantAnalysis(), X, y) == y)
        factors = 10.0 ** np.random.default_rng(1).uniform(-3, 3, X.shape[1])
        moved = np.mean(predict(bayesrule.MixtureDiscriminantAnalysis(), X * factors, y) != pred)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = bayesrule.MixtureDiscriminantAnalysis().fit(X, y)
        line = (
            f"{name:<14} defaults {np.mean(pred == y):.4f} (components "
            f"{full.n_components_.tolist()}, reg_covar {full.reg_covar_}) LDA {lda:.4f} "
            f"rescaled {moved:.4f}"
        )
        if grid:
            best = max(
                (
                    np.mean(
                        predict(
                            bayesrule.MixtureDiscriminantAnalysis(n_components=C, reg_covar=r),
                            X,
                            y,
                        )
                        == y
                    ),
                    C,
                    r,
                )
                for C, r in itertools.product([1, 2, 3, 4], [0.01, 0.03, 0.1, 0.3])
            )
            line += f" grid best {best[0]:.4f} (n_components={best[1]}, reg_covar={best[2]})"
        print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="MNIST directory (default: ../shared/datasets/mnist)")
    parser.add_argument("--quick", action="store_true", help="10000 training rows, few settings")
    parser.add_argument("--n-train", type=int, default=None, help="training rows (default all)")
    parser.add_argument("--small", action="store_true", help="scikit-learn's small data sets")
    parser.add_argument("--no-grid", action="store_true", help="with --small: no grid")
    args = parser.parse_args()
    if args.small:
        small_sets(grid=not args.no_grid)
        return
    Xtr, ytr, Xte, yte = load_mnist(args.data)
    n = args.n_train or (10_000 if args.quick else Xtr.shape[0])
    Xtr, ytr = Xtr[:n], ytr[:n]
    rows = [mda_row(p, Xtr, ytr, Xte, yte) for p in (QUICK if args.quick else SETTINGS)]
    for dims, comps in SKLEARN_QUICK if args.quick else SKLEARN:
        rows.append(sklearn_row(dims, comps, Xtr, ytr, Xte, yte))
    print(f"MNIST: {n} training rows, {Xte.shape[0]} test rows (seconds; cpu = all threads)")
    head = (
        f"{'model':<24} {'setting':<52} {'accuracy':>8} {'fit s':>7} {'fit cpu':>8} "
        f"{'pred s':>7} {'iter':>5} {'passes':>6}"
    )
    print(head)
    print("-" * len(head))
    for model, label, acc, fit, cpu, pred, iters, passes in rows:
        print(
            f"{model:<24} {label:<52} {acc:>8.4f} {fit:>7.1f} {cpu:>8.1f} {pred:>7.2f} {iters:>5} "
            f"{'-' if passes is None else passes:>6}"
        )


if __name__ == "__main__":
    main()
