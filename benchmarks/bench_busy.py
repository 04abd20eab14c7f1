"""Fit times on MNIST on an idle machine and on one kept busy by other processes.

Run from the repository root: ``python benchmarks/bench_busy.py``. For each
condition (idle; ``--busy`` processes, default one per core, spinning in pure
Python), GaussianNB and LDA are fitted by bayesrule with the default
``n_threads='auto'``, by bayesrule under ``config_context(n_threads=1)``, and
by scikit-learn (LDA: solver='lsqr'), in this process; each time is the best of ``--repeat``.
The ratios compare the default with one thread (above 1: the default is
slower than one thread) and scikit-learn with the default (above 1:
bayesrule is faster). The "BLAS seen" column is the BLAS thread count that
another thread of this process saw during the default fit (min-max).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sknb
from threadpoolctl import threadpool_info

import bayesrule as br
from bayesrule import config_context
from bayesrule.datasets import load_mnist

SPIN = "while True: pass"


def best_time(fn: Callable[[], Any], repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def watched(fn: Callable[[], Any]) -> tuple[float, str]:
    """Time ``fn`` once while another thread polls the BLAS thread count."""
    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
            time.sleep(0.005)

    t = threading.Thread(target=watch)
    t.start()
    t0 = time.perf_counter()
    try:
        fn()
    finally:
        elapsed = time.perf_counter() - t0
        stop.set()
        t.join()
    return elapsed, f"{min(seen, default=0)}-{max(seen, default=0)}"


def measure(label: str, X: Any, y: Any, repeat: int) -> None:
    models: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        ("GaussianNB", br.GaussianNB, sknb.GaussianNB),
        # scikit-learn's default solver (svd) takes minutes here; lsqr is its fastest
        (
            "LDA",
            br.LinearDiscriminantAnalysis,
            lambda: skda.LinearDiscriminantAnalysis(solver="lsqr"),
        ),
    ]
    for name, ours, theirs in models:
        default = best_time(lambda ours=ours: ours().fit(X, y), repeat)
        _, blas_seen = watched(lambda ours=ours: ours().fit(X, y))
        with config_context(n_threads=1):
            single = best_time(lambda ours=ours: ours().fit(X, y), repeat)
        sk = best_time(lambda theirs=theirs: theirs().fit(X, y), repeat)
        print(
            f"{label:<6}{name:<12}{default:9.2f}{single:9.2f}{sk:9.2f}"
            f"{default / single:10.2f}{sk / default:9.2f}{blas_seen:>11}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--busy", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--rows", type=int, default=60000, help="training rows used")
    args = parser.parse_args()
    X, y, _, _ = load_mnist()
    X, y = X[: args.rows], y[: args.rows]
    header = (
        f"{'':<6}{'model':<12}{'default':>9}{'1 thr':>9}{'sklearn':>9}"
        f"{'def/1thr':>10}{'sk/def':>9}{'BLAS seen':>11}"
    )
    print(f"cores {len(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f} before starting")
    print(header)
    print("-" * len(header))
    measure("idle", X, y, args.repeat)
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
    try:
        time.sleep(1.0)
        measure("busy", X, y, args.repeat)
    finally:
        for p in spinners:
            p.kill()
        for p in spinners:
            p.wait()


if __name__ == "__main__":
    main()
