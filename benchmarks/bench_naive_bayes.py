"""Naive Bayes on MNIST: fit and predict times and accuracies, beside scikit-learn's.

Run from the repository root: ``python benchmarks/bench_naive_bayes.py``.
Each timing is the best of ``--repeat`` runs, measured in this process
against scikit-learn on the same data. Predict times cover
``predict_proba`` on the 10000 test images. The table is also written to
``benchmarks/results/bench_naive_bayes.txt`` (``#`` lines for the machine
and the command, then one line per model, ``-`` where scikit-learn has no
namesake), from which ``benchmarks/readme_speed.py`` writes the README's
Speed section.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import sklearn
from sklearn import naive_bayes as sk

import bayesrule as br
from bayesrule.datasets import load_mnist


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", help="result file (default: benchmarks/results/...)")
    args = parser.parse_args()
    saved: list[str] = []
    Xtr, ytr, Xte, yte = load_mnist()
    pairs: list[tuple[str, Any, Any]] = [
        ("GaussianNB", br.GaussianNB(), sk.GaussianNB()),
        ("MultinomialNB", br.MultinomialNB(), sk.MultinomialNB()),
        ("BernoulliNB(binarize=0.5)", br.BernoulliNB(binarize=0.5), sk.BernoulliNB(binarize=0.5)),
        ("ComplementNB", br.ComplementNB(), sk.ComplementNB()),
        ("CategoricalNB(x>0.5)", br.CategoricalNB(), sk.CategoricalNB()),
        ("PoissonNB(255 x)", br.PoissonNB(), None),
        ("DiagonalLDA", br.DiagonalLDA(), None),
        ("KernelNB", br.KernelNB(), None),
    ]
    header = (
        f"{'model':<26}{'fit':>8}{'sk fit':>8}{'ratio':>7}{'predict':>9}{'sk pred':>9}"
        f"{'ratio':>7}{'acc':>8}{'sk acc':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, ours, theirs in pairs:
        A, B = Xtr, Xte
        if name.startswith("Categorical"):
            A, B = (Xtr > 0.5).astype(float), (Xte > 0.5).astype(float)
        if name.startswith("Poisson"):
            A, B = np.round(Xtr * 255), np.round(Xte * 255)
        fit_t, _ = best_time(
            lambda ours=ours, A=A: ours.fit(A, ytr),
            args.repeat if not name.startswith("KernelNB") else 1,
        )
        pred_t, P = best_time(lambda ours=ours, B=B: ours.predict_proba(B), args.repeat)
        acc = float(np.mean(ours.classes_[np.argmax(P, axis=1)] == yte))
        if theirs is None:
            saved.append(f"{name.split('(')[0]} {fit_t:.4f} - - {pred_t:.4f} - - {acc:.4f} -")
            print(
                f"{name:<26}{fit_t:8.2f}{'':>8}{'':>7}{pred_t:9.3f}{'':>9}{'':>7}{acc:8.4f}{'':>8}"
            )
            continue
        sfit_t, _ = best_time(lambda theirs=theirs, A=A: theirs.fit(A, ytr), args.repeat)
        try:
            spred_t, SP = best_time(lambda theirs=theirs, B=B: theirs.predict_proba(B), args.repeat)
        except IndexError:  # scikit-learn's CategoricalNB fails on a category unseen in training
            saved.append(
                f"{name.split('(')[0]} {fit_t:.4f} {sfit_t:.4f} {sfit_t / fit_t:.2f} "
                f"{pred_t:.4f} error - {acc:.4f} error"
            )
            print(
                f"{name:<26}{fit_t:8.2f}{sfit_t:8.2f}{sfit_t / fit_t:7.1f}{pred_t:9.3f}"
                f"{'error':>9}{'':>7}{acc:8.4f}{'error':>8}"
            )
            continue
        sacc = float(np.mean(theirs.classes_[np.argmax(SP, axis=1)] == yte))
        saved.append(
            f"{name.split('(')[0]} {fit_t:.4f} {sfit_t:.4f} {sfit_t / fit_t:.2f} {pred_t:.4f} "
            f"{spred_t:.4f} {spred_t / pred_t:.2f} {acc:.4f} {sacc:.4f}"
        )
        print(
            f"{name:<26}{fit_t:8.2f}{sfit_t:8.2f}{sfit_t / fit_t:7.1f}{pred_t:9.3f}{spred_t:9.3f}"
            f"{spred_t / pred_t:7.1f}{acc:8.4f}{sacc:8.4f}"
        )
    print("ratio = scikit-learn time / bayesrule time (above 1: bayesrule is faster)")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_predict import machine  # the same machine line as the prediction benchmark

    head = [
        "# bench_naive_bayes: MNIST 60000 x 784 train, 10000 test (predict: predict_proba)",
        "# command: python benchmarks/bench_naive_bayes.py"
        + "".join(f" {a}" for a in sys.argv[1:]),
        f"# machine: {machine()}",
        f"# versions: bayesrule {br.__version__}, scikit-learn {sklearn.__version__}",
        f"# best of {args.repeat}; ratio = theirs / ours; written "
        + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "# model fit_s sk_fit_s ratio predict_s sk_predict_s ratio acc sk_acc",
    ]
    out = (
        Path(args.out)
        if args.out
        else Path(__file__).resolve().parent / "results" / "bench_naive_bayes.txt"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(head + saved) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
