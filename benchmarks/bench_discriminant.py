"""LDA and QDA on MNIST: bayesrule against scikit-learn, measured in the same run.

Usage: python benchmarks/bench_discriminant.py [--data DIR] [--repeat N]

Prints one table (model, our time, scikit-learn's time, ratio, both
accuracies), LDA's fit against its floor (one BLAS ``syrk`` of the training
matrix, ``n p (p + 1) / 2`` multiply-adds) and the peak memory that LDA's
fit allocates, as a multiple of the float64 training matrix. Times in the
table are the best of ``--repeat`` runs. The floor is noisy on a shared
machine (a multi-threaded syrk loses most when another process takes a
core), so the fit and the syrk are timed in interleaved pairs in this
process (``max(--repeat, 5)`` pairs, the order alternating within pairs):
the ratio reported is the median of the pairs' ratios, beside the ratio of
the medians and of the bests, and the ratio of the median CPU seconds
(this process's, all threads: the work done, which other processes change
far less than the wall time); the load average before and after is
printed. The results are also
written to ``benchmarks/results/bench_discriminant.txt`` (``#`` lines for
the machine and the command, then one line per measurement), from which
``benchmarks/readme_speed.py`` writes the README's Speed section.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import sklearn
from scipy.linalg.blas import dsyrk
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


RESULTS = Path(__file__).resolve().parent / "results"


def fit_against_floor(X, y, repeat):
    """LDA's fit and its floor, ``X' X`` by one BLAS syrk, timed in interleaved pairs.

    Returns the fit times and the syrk times, pair by pair; within a pair
    the order alternates (fit first in even pairs, syrk first in odd ones),
    so that both see the same machine and neither is always the warmer.
    """
    Xf = np.asarray(X, dtype=np.float64)

    def timed(call):
        t0, c0 = time.perf_counter(), time.process_time()
        call()
        return time.perf_counter() - t0, time.process_time() - c0

    def fit():
        return timed(lambda: bayesrule.LinearDiscriminantAnalysis().fit(X, y))

    def syrk():
        return timed(lambda: dsyrk(1.0, Xf.T))

    fit(), syrk()  # warm: the first call of each pays for pages and threads
    fits, syrks = [], []
    for i in range(repeat):
        if i % 2 == 0:
            fits.append(fit())
            syrks.append(syrk())
        else:
            syrks.append(syrk())
            fits.append(fit())
    return np.array(fits), np.array(syrks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="MNIST directory (default: ../shared/datasets/mnist)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--out", help="result file (default: benchmarks/results/...)")
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
    load0 = os.getloadavg()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # MNIST's collinear pixels
        fits, syrks = fit_against_floor(Xtr, ytr, max(args.repeat, 5))
    load1 = os.getloadavg()
    # CPU seconds (this process, all its threads): the work each does, which other
    # processes on the machine change far less than the wall time
    cpu_ratio = float(np.median(fits[:, 1]) / np.median(syrks[:, 1]))
    fits, syrks = fits[:, 0], syrks[:, 0]
    ratio = float(np.median(fits / syrks))
    lda_fit, floor = float(np.median(fits)), float(np.median(syrks))
    best_ratio = float(fits.min() / syrks.min())
    print(
        f"\nLDA fit against its floor, one syrk of X, in {fits.size} interleaved pairs "
        f"(load average {load0[0]:.2f} before, {load1[0]:.2f} after):\n"
        f"  fit   median {lda_fit:.3f} s, best {fits.min():.3f} s\n"
        f"  syrk  median {floor:.3f} s, best {syrks.min():.3f} s\n"
        f"  ratio median of the pairs {ratio:.2f}x, of the medians {lda_fit / floor:.2f}x, "
        f"of the bests {best_ratio:.2f}x (target: within 1.2x)\n"
        f"  CPU seconds, ratio of the medians {cpu_ratio:.2f}x"
    )
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
    out = Path(args.out) if args.out else RESULTS / "bench_discriminant.txt"
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_predict import machine  # the same machine line as the prediction benchmark

    lines = [
        "# bench_discriminant: MNIST 60000 x 784 train, 10000 test",
        "# command: python benchmarks/bench_discriminant.py"
        + "".join(f" {a}" for a in sys.argv[1:]),
        f"# machine: {machine()}",
        f"# versions: bayesrule {bayesrule.__version__}, scikit-learn {sklearn.__version__}",
        f"# best of {args.repeat}; ratio = theirs / ours; floor: medians of interleaved "
        "fit/syrk pairs (ratio: median of the pairs' ratios); written "
        + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "# model phase ours_s theirs_s ratio acc_ours acc_theirs",
    ]
    for name, to, ts, ao, as_ in rows:
        model = name.split()[0]
        phase = name.split()[-1]
        lines.append(f"{model} {phase} {to:.4f} {ts:.4f} {ts / to:.2f} {ao:.4f} {as_:.4f}")
    lines.append(
        f"floor LDA fit syrk_s={floor:.4f} fit_s={lda_fit:.4f} ratio={ratio:.2f} "
        f"best_syrk_s={syrks.min():.4f} best_fit_s={fits.min():.4f} best_ratio={best_ratio:.2f} "
        f"pairs={fits.size} cpu_ratio={cpu_ratio:.2f}"
    )
    lines.append(f"memory LDA fit ours_x={peak / size:.2f} theirs_x={peak_sk / size:.2f}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
