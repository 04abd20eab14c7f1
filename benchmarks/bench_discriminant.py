"""LDA and QDA on MNIST: bayesrule against scikit-learn, measured in the same run.

Usage: python benchmarks/bench_discriminant.py [--data DIR] [--repeat N]

Prints one table (model, our time, scikit-learn's time, ratio, both
accuracies) and the peak memory that LDA's fit allocates, as a multiple of
the float64 training matrix. Times are the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from sklearn import discriminant_analysis as skda

import bayesrule
from bayesrule.datasets import load_mnist


def best_time(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def compare(name, ours, theirs, data, repeat, rows):
    Xtr, ytr, Xte, yte = data
    t_fit_o, m_o = best_time(lambda: ours().fit(Xtr, ytr), repeat)
    t_fit_s, m_s = best_time(lambda: theirs().fit(Xtr, ytr), repeat)
    # predictions are short: more repeats steady the figure
    t_pred_o, p_o = best_time(lambda: m_o.predict(Xte), max(repeat, 10))
    t_pred_s, p_s = best_time(lambda: m_s.predict(Xte), max(repeat, 10))
    acc_o, acc_s = (p_o == yte).mean(), (p_s == yte).mean()
    rows.append((f"{name} fit", t_fit_o, t_fit_s, acc_o, acc_s))
    rows.append((f"{name} predict", t_pred_o, t_pred_s, acc_o, acc_s))


def peak_fit_memory(make, X, y):
    tracemalloc.start()
    tracemalloc.reset_peak()
    make().fit(X, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="MNIST directory (default: ../shared/datasets/mnist)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    data = load_mnist(args.data)
    Xtr, ytr = data[0], data[1]
    rows = []
    compare(
        "LDA (sklearn svd)",
        lambda: bayesrule.LinearDiscriminantAnalysis(),
        lambda: skda.LinearDiscriminantAnalysis(solver="svd"),
        data,
        args.repeat,
        rows,
    )
    compare(
        "QDA reg_param=0.05",
        lambda: bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.05),
        lambda: skda.QuadraticDiscriminantAnalysis(reg_param=0.05),
        data,
        args.repeat,
        rows,
    )
    print(
        f"MNIST {Xtr.shape[0]} x {Xtr.shape[1]} train, {data[2].shape[0]} test; best of {args.repeat}"
    )
    head = f"{'model':<30} {'bayesrule (s)':>13} {'sklearn (s)':>12} {'speed-up':>9} {'acc ours':>9} {'acc sklearn':>12}"
    print(head)
    print("-" * len(head))
    for name, to, ts, ao, as_ in rows:
        print(f"{name:<30} {to:>13.3f} {ts:>12.3f} {ts / to:>8.1f}x {ao:>9.4f} {as_:>12.4f}")
    peak = peak_fit_memory(bayesrule.LinearDiscriminantAnalysis, Xtr, ytr)
    peak_sk = peak_fit_memory(skda.LinearDiscriminantAnalysis, Xtr, ytr)
    size = Xtr.astype(np.float64).nbytes
    # one basis for both: what the fit allocates beyond the X it is given
    # (tracemalloc's peak), and the same plus X for the total held while fitting
    print(
        f"\nLDA fit peak allocation beyond X (tracemalloc; X is {size / 2**20:.0f} MiB float64): "
        f"bayesrule {peak / 2**20:.0f} MiB = {peak / size:.2f}x X, "
        f"scikit-learn svd {peak_sk / 2**20:.0f} MiB = {peak_sk / size:.2f}x X. "
        f"Counting X itself: bayesrule {(peak + size) / size:.2f}x, "
        f"scikit-learn {(peak_sk + size) / size:.2f}x."
    )


if __name__ == "__main__":
    main()
