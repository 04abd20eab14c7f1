"""Every prediction method of every model beside scikit-learn's namesake, idle or busy.

Usage (from the repository root)::

    python benchmarks/bench_predict.py [--quick] [--busy N] [--repeat R] [--data DIR]

Two data sets: MNIST (60000 training rows, the 10000 test rows predicted;
``bayesrule.datasets.load_mnist``) and a generated narrow table (1,000,000
rows x 20 features, five classes; ``--quick`` uses 200,000 rows). Each
model is fitted by both libraries on the same rows, then each prediction
method that scikit-learn's namesake has (``predict``, ``predict_proba``,
``predict_log_proba``, ``decision_function``, ``predict_joint_log_proba``,
``score_samples``) is timed with interleaved repetitions (ours, theirs,
theirs, ours, ...) after one warm-up call of each, so that both see the
same machine; the table holds the medians and ``ratio = theirs / ours``
(above 1: bayesrule is faster).

``--order apart`` times each library's calls back to back instead (ours R
times, a pause of 0.3 s, theirs R times), each after a warm-up call: then
no call follows the other library's. After a multi-threaded product,
OpenBLAS's worker threads spin for up to a tenth of a second waiting for
the next one; interleaved, the call that follows takes a core from a
library that runs threads of its own rather than the BLAS's (the count
models' blocked products of narrow rows), and apart it does not. The two
orders bound what a user sees: a prediction called in a loop, or after
other work's matrix products.

``--busy N`` starts N processes spinning in pure Python for the whole run
(stopped at the end, also on an error), the condition of a machine whose
cores are taken by other work.

The QDA rows are followed by the floor of QDA's prediction: the
multiply-adds per row of a triangular factor per class
(``K p (p + 1) / 2``), at the rate of a plain GEMM of the same data
measured in the same run.

The table is printed and written to ``benchmarks/results/bench_predict_idle.txt``
(or ``bench_predict_busy.txt``), one line per measurement::

    model method dataset ours_ms theirs_ms ratio

after ``#`` lines naming the machine, the command and the versions.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
METHODS = (
    "predict",
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "predict_joint_log_proba",
    "score_samples",
)
SPIN = "while True: pass"


def machine() -> str:
    """One line naming the CPU and its cores."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return f"{name}, {cores} cores, {platform.system()}"


@contextmanager
def spinning(n: int) -> Iterator[None]:
    """``n`` processes spinning in pure Python while the block runs."""
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n)]
    try:
        if procs:
            time.sleep(0.5)  # let them reach the scheduler
        yield
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()


def interleaved(
    ours: Callable[[], Any], theirs: Callable[[], Any], repeat: int
) -> tuple[float, float]:
    """Median seconds of ``ours`` and ``theirs``, called alternately after a warm-up each.

    The pairs alternate which goes first (ours, theirs; theirs, ours; ...), so that
    each library's calls follow the other's as often as its own: a call made just
    after a multi-threaded BLAS product shares the cores with that product's worker
    threads, which spin for up to a tenth of a second waiting for the next one
    (OpenBLAS), and a fixed order would charge them to one library only.
    """
    ours()
    theirs()
    times: dict[Callable[[], Any], list[float]] = {ours: [], theirs: []}
    for i in range(repeat):
        for fn in (ours, theirs) if i % 2 == 0 else (theirs, ours):
            t0 = time.perf_counter()
            fn()
            times[fn].append(time.perf_counter() - t0)
    return statistics.median(times[ours]), statistics.median(times[theirs])


def apart(ours: Callable[[], Any], theirs: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median seconds of ``ours`` and ``theirs``, each called ``repeat`` times in a row after a
    warm-up call and a pause of 0.3 s (the worker threads of an earlier product asleep)."""
    medians = []
    for fn in (ours, theirs):
        time.sleep(0.3)
        fn()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        medians.append(statistics.median(times))
    return medians[0], medians[1]


def narrow_table(n: int, p: int = 20, k: int = 5, seed: int = 0) -> dict[str, Any]:
    """Generated rows: Gaussian, count and category features of five classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    shift = rng.normal(0.0, 1.0, size=(k, p))
    scale = rng.uniform(0.5, 2.0, size=(k, p))
    gauss = rng.standard_normal((n, p)) * scale[y] + shift[y]
    lam = rng.uniform(0.5, 5.0, size=(k, p))
    counts = rng.poisson(lam[y]).astype(np.float64)
    cats = np.minimum(counts, 4.0)
    return {"gauss": gauss, "counts": counts, "cats": cats, "y": y}


def cases(data: dict[str, Any], name: str) -> list[tuple[str, Any, Any, str]]:
    """(model, ours, theirs, which features) for one data set."""
    from sklearn import discriminant_analysis as skda
    from sklearn import naive_bayes as sknb

    import bayesrule as br

    reg = 0.05 if name == "mnist" else 0.0
    cats = int(np.max(data["cats"])) + 1
    return [
        (
            "LDA",
            br.LinearDiscriminantAnalysis(),
            # the fastest fit; predictions use the same coef_ and intercept_ as 'svd'
            skda.LinearDiscriminantAnalysis(solver="lsqr"),
            "gauss",
        ),
        (
            "QDA",
            br.QuadraticDiscriminantAnalysis(reg_param=reg),
            skda.QuadraticDiscriminantAnalysis(reg_param=reg),
            "gauss",
        ),
        ("GaussianNB", br.GaussianNB(), sknb.GaussianNB(), "gauss"),
        ("MultinomialNB", br.MultinomialNB(), sknb.MultinomialNB(), "counts"),
        ("ComplementNB", br.ComplementNB(), sknb.ComplementNB(), "counts"),
        ("BernoulliNB", br.BernoulliNB(), sknb.BernoulliNB(), "counts"),
        (
            # every code declared: scikit-learn fails on a code unseen in training
            "CategoricalNB",
            br.CategoricalNB(min_categories=cats),
            sknb.CategoricalNB(min_categories=cats),
            "cats",
        ),
    ]


def datasets(
    args: argparse.Namespace, names: set[str]
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, training data, data to predict) for MNIST and the narrow table."""
    from bayesrule.datasets import load_mnist

    if "mnist" in names:
        Xtr, ytr, Xte, _ = load_mnist(args.data)
        # pixels in [0, 1] are Gaussian features and (fractional) counts alike;
        # CategoricalNB gets them as four grey levels
        yield (
            "mnist",
            {"gauss": Xtr, "counts": Xtr, "cats": np.floor(Xtr * 3.999), "y": ytr},
            {"gauss": Xte, "counts": Xte, "cats": np.floor(Xte * 3.999)},
        )
    if "narrow" in names:
        n = 200_000 if args.quick else 1_000_000
        table = narrow_table(n)
        yield f"narrow{n // 1000}k", table, table


def gemm_rate(X: np.ndarray, repeat: int) -> float:
    """Multiply-adds per second of ``X @ B`` for a square ``B`` (median of ``repeat``)."""
    p = X.shape[1]
    B = np.random.default_rng(1).standard_normal((p, p))
    X @ B
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        X @ B
        times.append(time.perf_counter() - t0)
    return X.shape[0] * p * p / statistics.median(times)


def qda_floor(dataset: str, X: np.ndarray, n_classes: int, ours_s: float, repeat: int) -> str:
    """The floor of QDA's prediction on ``X``, and how close ``ours_s`` is to it."""
    n, p = X.shape
    rate = gemm_rate(X, repeat)
    madds = n * n_classes * p * (p + 1) / 2
    floor = madds / rate
    return (
        f"# floor QDA {dataset}: {n_classes} x p(p+1)/2 = {madds / n:.0f} multiply-adds per row, "
        f"GEMM rate {rate / 1e9:.2f} G multiply-adds/s -> {floor * 1e3:.1f} ms; "
        f"QDA predict {ours_s * 1e3:.1f} ms = {floor / ours_s:.2f} of the floor's speed"
    )


def run(args: argparse.Namespace, save: Callable[[list[str]], None]) -> list[str]:
    """Every measurement's line; ``save`` is given the lines so far after each one."""
    import warnings

    lines: list[str] = []
    only = set(args.models.split(",")) if args.models else None
    sets = set(args.datasets.split(",")) if args.datasets else {"mnist", "narrow"}
    for dataset, train, test in datasets(args, sets):
        for model, ours, theirs, kind in cases(train, dataset):
            if only is not None and model not in only:
                continue
            ours.fit(train[kind], train["y"])
            theirs.fit(train[kind], train["y"])
            X = test[kind]
            for method in METHODS:
                if not hasattr(theirs, method):
                    continue
                fo, ft = getattr(ours, method), getattr(theirs, method)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    timing = apart if args.order == "apart" else interleaved
                    t_o, t_t = timing(
                        lambda fo=fo, X=X: fo(X), lambda ft=ft, X=X: ft(X), args.repeat
                    )
                line = f"{model} {method} {dataset} {t_o * 1e3:.2f} {t_t * 1e3:.2f} {t_t / t_o:.2f}"
                print(line, flush=True)
                lines.append(line)
                if model == "QDA" and method == "predict":
                    note = qda_floor(dataset, X, len(ours.classes_), t_o, args.repeat)
                    print(note, flush=True)
                    lines.append(note)
                save(lines)
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, 200k rows")
    parser.add_argument("--busy", type=int, default=0, help="spinning processes beside the run")
    parser.add_argument("--repeat", type=int, default=None, help="timed calls of each")
    parser.add_argument("--data", help="MNIST directory (default: ../shared/datasets/mnist)")
    parser.add_argument("--out", help="result file (default: benchmarks/results/...)")
    parser.add_argument("--models", help="comma-separated models to run (default: all)")
    parser.add_argument("--datasets", help="comma-separated: mnist,narrow (default: both)")
    parser.add_argument(
        "--order",
        choices=("interleaved", "apart"),
        default="interleaved",
        help="the libraries' calls alternated (default) or each library's back to back",
    )
    args = parser.parse_args(argv)
    if args.repeat is None:
        args.repeat = 3 if args.quick else 7
    import sklearn

    import bayesrule

    condition = f"busy ({args.busy} spinning processes)" if args.busy else "idle"
    command = "python benchmarks/bench_predict.py" + "".join(
        f" {a}" for a in (sys.argv[1:] if argv is None else argv)
    )
    # a SIGTERM (a killed run) still stops the spinning processes
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    out = (
        Path(args.out)
        if args.out
        else RESULTS / f"bench_predict_{'busy' if args.busy else 'idle'}.txt"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    load_before = os.getloadavg()[0]

    def save(lines: list[str], done: bool = False) -> None:
        """The file as it stands: written after each measurement, so a cut run leaves its part."""
        elapsed = time.perf_counter() - t0
        state = f"run took {elapsed:.0f} s" if done else f"INCOMPLETE after {elapsed:.0f} s"
        head = [
            f"# bench_predict: {condition}",
            f"# command: {command}",
            f"# machine: {machine()}",
            f"# versions: bayesrule {bayesrule.__version__}, scikit-learn "
            f"{sklearn.__version__}, numpy {np.__version__}",
            f"# run: medians of {args.repeat} {args.order} calls, ratio = theirs / ours (above 1: "
            f"bayesrule faster); {state}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            f"# load: 1-minute load average {load_before:.1f} before, "
            f"{os.getloadavg()[0]:.1f} {'after' if done else 'now'} (spinning processes included)",
            "# model method dataset ours_ms theirs_ms ratio",
        ]
        out.write_text("\n".join(head + lines) + "\n")

    with spinning(args.busy):
        lines = run(args, save)
    save(lines, done=True)
    elapsed = time.perf_counter() - t0
    print(f"written to {out} ({elapsed:.0f} s)")


if __name__ == "__main__":
    main()
