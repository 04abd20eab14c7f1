"""Mixture discriminant analysis on MNIST, beside scikit-learn's GaussianMixture per class.

Usage: python benchmarks/bench_mda.py [--data DIR] [--quick] [--n-train N]
       python benchmarks/bench_mda.py --small [--no-grid]
       python benchmarks/bench_mda.py --tables
       python benchmarks/bench_mda.py --defaults      # MNIST, the defaults only

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

``--tables``: the defaults on generated tables and two more of scikit-learn's
data sets (:func:`generated_tables`).

``--small``: the defaults on scikit-learn's wine, breast_cancer, iris and
digits, and on a generated table with more features (60) than rows a class
(30: ``make_classification(120, 60, n_informative=10, n_classes=4,
class_sep=1.5, random_state=7)``) (5-fold stratified CV, shuffled with seed 0) beside
LinearDiscriminantAnalysis and the best point of a small grid of MDA's own
parameters (``n_components`` 1-4 times ``reg_covar`` 0.01, 0.03, 0.1, 0.3;
``--no-grid`` leaves it out), with the numbers of components, the ridge
and the covariance structure the defaults chose on all the rows, and the share of predictions that
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
    for name in ("wine", "breast_cancer", "iris", "digits", "wide"):
        if name == "wide":  # more features (60) than rows a class (30)
            X, y = datasets.make_classification(
                120, 60, n_informative=10, n_redundant=0, n_classes=4,
                n_clusters_per_class=1, class_sep=1.5, random_state=7,
            )  # fmt: skip
        else:
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
            f"{full.n_components_.tolist()}, reg_covar {full.reg_covar_}, "
            f"{full.covariance_type_}) LDA {lda:.4f} "
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


def generated_tables():
    """MDA's defaults on the tables of an audit (2026-11-27) no other benchmark names.

    3 shuffles of stratified 5-fold CV; beside them LDA, MDA with
    ``covariance_type='full'`` (one covariance a component, the structure
    before 'auto') and with ``n_components=1``; and the structure, ridge and
    components the defaults choose on all the rows.
    """
    from sklearn import datasets as d
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    rng = np.random.default_rng(0)
    X, y = d.make_classification(
        400, 20, n_informative=6, n_redundant=4, n_classes=4, n_clusters_per_class=2,
        class_sep=1.0, random_state=1,
    )  # fmt: skip
    tables = {
        "400 x 20, 4 classes of 2 clusters, rescaled": (X * 10.0 ** rng.uniform(-2, 2, 20), y)
    }
    tables["make_gaussian_quantiles 400 x 5"] = d.make_gaussian_quantiles(
        n_samples=400, n_features=5, n_classes=3, random_state=2
    )
    X, y = d.make_moons(400, noise=0.25, random_state=3)
    tables["moons + 8 noise columns"] = (np.hstack([X, rng.normal(size=(400, 8))]), y)
    tables["make_hastie_10_2 600"] = d.make_hastie_10_2(600, random_state=4)
    tables["1:20 imbalance, 1050 x 10"] = d.make_classification(
        1050, 10, n_informative=5, n_redundant=0, weights=[20 / 21, 1 / 21], flip_y=0,
        class_sep=1.0, random_state=5,
    )  # fmt: skip
    tables["1250 x 20, 25 classes"] = d.make_classification(
        1250, 20, n_informative=12, n_redundant=0, n_classes=25, n_clusters_per_class=1,
        class_sep=2.0, random_state=6,
    )  # fmt: skip
    tables["120 x 60, 4 classes (p > n a class)"] = d.make_classification(
        120, 60, n_informative=10, n_redundant=0, n_classes=4, n_clusters_per_class=1,
        class_sep=1.5, random_state=7,
    )  # fmt: skip
    X, t = d.load_diabetes(return_X_y=True)
    tables["diabetes in 3 classes"] = (X, np.digitize(t, np.quantile(t, [1 / 3, 2 / 3])))
    X, y = d.load_digits(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(y), 600, replace=False)
    noisy = X[idx] + np.random.default_rng(1).normal(0, 4, (600, 64))
    tables["digits, 600 rows + N(0, 4^2) noise"] = (noisy, y[idx])
    MDA = bayesrule.MixtureDiscriminantAnalysis
    models = {
        "MDA()": MDA,
        "full": lambda: MDA(covariance_type="full"),
        "LDA": bayesrule.LinearDiscriminantAnalysis,
        "n_components=1": lambda: MDA(n_components=1),
    }
    print(
        "3 x stratified 5-fold CV accuracy (%); chosen on all the rows: structure, ridge, components"
    )
    print(f"{'data':<45}" + "".join(f"{m:>16}" for m in models) + "  chosen")
    for name, (X, y) in tables.items():
        accs = []
        for make in models.values():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                accs.append(
                    100 * np.mean(
                        [
                            cross_val_score(
                                make(), X, y, cv=StratifiedKFold(5, shuffle=True, random_state=r)
                            ).mean()
                            for r in range(3)
                        ]
                    )
                )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = MDA().fit(X, y)
        chosen = f"{m.covariance_type_}, {m.reg_covar_}, {sorted(set(m.n_components_.tolist()))}"
        print(f"{name:<45}" + "".join(f"{a:>16.2f}" for a in accs) + f"  {chosen}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="MNIST directory (default: ../shared/datasets/mnist)")
    parser.add_argument("--quick", action="store_true", help="10000 training rows, few settings")
    parser.add_argument("--n-train", type=int, default=None, help="training rows (default all)")
    parser.add_argument("--small", action="store_true", help="scikit-learn's small data sets")
    parser.add_argument("--no-grid", action="store_true", help="with --small: no grid")
    parser.add_argument("--tables", action="store_true", help="generated tables of an audit")
    parser.add_argument("--defaults", action="store_true", help="MNIST: the defaults' row only")
    args = parser.parse_args()
    if args.tables:
        generated_tables()
        return
    if args.small:
        small_sets(grid=not args.no_grid)
        return
    Xtr, ytr, Xte, yte = load_mnist(args.data)
    n = args.n_train or (10_000 if args.quick else Xtr.shape[0])
    Xtr, ytr = Xtr[:n], ytr[:n]
    settings = [{}] if args.defaults else QUICK if args.quick else SETTINGS
    rows = [mda_row(p, Xtr, ytr, Xte, yte) for p in settings]
    for dims, comps in [] if args.defaults else SKLEARN_QUICK if args.quick else SKLEARN:
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
