"""Kernel densities' 'auto' path (exact sums or the FFT grid): predict_proba of 15,000 rows.

The audit's case: ``make_classification(2000, 12, random_state=0)``, on which
``MixedNB()`` infers a few kernel columns. Timed: ``predict_proba`` of 15,000
rows (training rows drawn again, with noise of 0.1) by ``MixedNB()`` (kinds
inferred), ``MixedNB`` with every column declared 'kernel', and
``KernelNB()``; the median of ``--repeats`` runs (5), after one untimed call.
The path each model's kernel densities take is printed beside its time.

``--before`` also times the rule 'auto' had before
(:func:`bayesrule.models.kernel.auto_method`'s second condition alone: exact
while the classes hold at most ``64 * grid_size`` stored values), patched in
for the fit; its exact sums take seconds a run.

    python benchmarks/bench_kernel_method.py [--before] [--repeats 5]

Timings depend on the machine's load.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from sklearn.datasets import make_classification

import bayesrule as br
from bayesrule.models import kernel

ROWS = 15_000


def old_rule(n_classes: int, n_values: int, n_features: int, grid_size: int) -> str:
    """'auto' before: exact while the classes hold at most ``64 * grid_size`` stored values."""
    return "exact" if n_classes * n_values <= 64 * grid_size else "grid"


@contextmanager
def rule(choose: Callable[[int, int, int, int], str]) -> Iterator[None]:
    """Models built inside take their 'auto' path from ``choose``."""
    saved = kernel.auto_method
    kernel.auto_method = choose
    try:
        yield
    finally:
        kernel.auto_method = saved


def methods(est: Any) -> str:
    """The paths of the fitted model's kernel densities (from its private model)."""
    model = est._model
    found = []
    for part in [m for _, m in getattr(model, "parts", [])] or [model]:
        kde = getattr(part, "kde", part)
        if isinstance(kde, kernel.KernelDensity):
            found.append(f"{kde.method} ({kde.bandwidth.shape[1]} columns)")
    return ", ".join(found)


def median_seconds(f: Callable[[], Any], repeats: int) -> float:
    f()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", action="store_true", help="also time the old rule")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    X, y = make_classification(2000, 12, random_state=0)
    rng = np.random.default_rng(0)
    T = X[rng.integers(0, X.shape[0], ROWS)] + rng.normal(0.0, 0.1, (ROWS, X.shape[1]))
    models: list[tuple[str, Callable[[], Any]]] = [
        ("MixedNB() (kinds inferred)", lambda: br.MixedNB()),
        ("MixedNB(columns=['kernel'] * 12)", lambda: br.MixedNB(columns=["kernel"] * 12)),
        ("KernelNB()", lambda: br.KernelNB()),
    ]
    rules = [("after", kernel.auto_method)]
    if args.before:
        rules.insert(0, ("before", old_rule))
    print(f"make_classification(2000, 12, random_state=0); predict_proba of {ROWS} rows,")
    print(f"median of {args.repeats} runs")
    print(f"{'model':34s} {'rule':7s} {'seconds':>8s}  kernel path")
    for name, make in models:
        for label, choose in rules:
            with rule(choose):
                est = make().fit(X, y)
            seconds = median_seconds(lambda est=est: est.predict_proba(T), args.repeats)
            print(f"{name:34s} {label:7s} {seconds:8.3f}  {methods(est)}", flush=True)


if __name__ == "__main__":
    main()
