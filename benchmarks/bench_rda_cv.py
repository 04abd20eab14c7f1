"""RDA-CV on all of MNIST with its default search, beside LDA and a QDA reg_param grid.

Usage: python benchmarks/bench_rda_cv.py [--data DIR] [--cv 5] [--no-refine] [--target range]
       [--skip-baselines] [--out benchmarks/results/bench_rda_cv.txt]

Prints the wall and CPU time of the cross-validated fit (the grid, the alpha
sweep and the second (gamma, ridge) grid: every split's held-out scores,
then the final model), the chosen ``(alpha, gamma, ridge)``, the test
accuracy, and the test accuracy of LDA and of
``QuadraticDiscriminantAnalysis(reg_param=r)`` for r in 0.01 ... 0.2 (each
fitted on the whole training set: what a user tuning QDA by hand on the
test set would find at best).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import bayesrule
from bayesrule.datasets import load_mnist

REG_PARAMS = (0.01, 0.02, 0.05, 0.1, 0.2)


def timed(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="MNIST directory (default: ../shared/datasets/mnist)")
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--no-refine", action="store_true")
    parser.add_argument("--skip-baselines", action="store_true")
    parser.add_argument("--target", default="range", choices=["range", "pooled", "identity"])
    parser.add_argument("--out", default="benchmarks/results/bench_rda_cv.txt")
    args = parser.parse_args()
    lines: list[str] = []

    def print(line: str) -> None:  # noqa: A001 - every line goes to the screen and the file
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        lines.append(line)
        if args.out:
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            with open(args.out, "w") as fh:
                fh.write("\n".join(lines) + "\n")

    print("# python benchmarks/bench_rda_cv.py " + " ".join(sys.argv[1:]))
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start"
    )
    Xtr, ytr, Xte, yte = load_mnist(args.data)
    cv = bayesrule.RegularizedDiscriminantAnalysisCV(
        cv=args.cv, refine=not args.no_refine, target=args.target
    )
    wall, cpu, _ = timed(lambda: cv.fit(Xtr, ytr))
    acc = float((cv.predict(Xte) == yte).mean())
    print(f"MNIST {Xtr.shape[0]} x {Xtr.shape[1]} train, {Xte.shape[0]} test; {args.cv} folds")
    print(f"{'model':<46} {'wall (s)':>9} {'CPU (s)':>9} {'test acc':>9}")
    name = f"RDA-CV({args.target}) -> a={cv.alpha_:g}, g={cv.gamma_:g}, r={cv.ridge_:g}"
    print(f"{name:<46} {wall:>9.1f} {cpu:>9.1f} {acc:>9.4f}")
    print(f"  {cv.cv_scores_.size} candidates, best held-out accuracy {cv.cv_scores_.max():.4f}")
    print(f"  load average {os.getloadavg()[0]:.1f} at the end of the fit")
    if args.skip_baselines:
        return
    models = {"LDA": bayesrule.LinearDiscriminantAnalysis()}
    for r in REG_PARAMS:
        models[f"QDA reg_param={r:g}"] = bayesrule.QuadraticDiscriminantAnalysis(reg_param=r)
    for label, est in models.items():
        w, c, _ = timed(lambda est=est: est.fit(Xtr, ytr))
        a = float((est.predict(Xte) == yte).mean())
        print(f"{label:<46} {w:>9.1f} {c:>9.1f} {a:>9.4f}")


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
