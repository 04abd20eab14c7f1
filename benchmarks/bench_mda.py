"""Mixture discriminant analysis on MNIST, beside scikit-learn's GaussianMixture per class.

Usage: python benchmarks/bench_mda.py [--data DIR] [--quick] [--n-train N]

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="MNIST directory (default: ../shared/datasets/mnist)")
    parser.add_argument("--quick", action="store_true", help="10000 training rows, few settings")
    parser.add_argument("--n-train", type=int, default=None, help="training rows (default all)")
    args = parser.parse_args()
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
