"""What recording and checking each feature's training range costs on MNIST.

Fits (and predicts with) each model twice in alternation, once as shipped and
once with the range bookkeeping switched off (the bound helpers the
statistics call replaced by ones that return the empty range at no cost, the
prediction check by a no-op), and prints the best of several runs of each and
their ratio. Times are CPU seconds of the process (``time.process_time``, all
threads), which a busy machine disturbs less than wall time; run it with
``OPENBLAS_NUM_THREADS=1`` for the cleanest figures. Needs MNIST
(``BAYESRULE_DATA`` or ../shared/datasets/mnist).

Run: ``PYTHONPATH=src python benchmarks/bench_feature_ranges.py [repeats]``
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from bayesrule import GaussianNB, KernelNB, LinearDiscriminantAnalysis, MultinomialNB
from bayesrule.datasets import load_mnist
from bayesrule.estimators import GenerativeClassifier
from bayesrule.stats import (
    _categories,
    _common,
    _counts,
    _diagonal,
    _fourth,
    _pooled,
    _scatter,
    _values,
)

MODULES = (_categories, _counts, _diagonal, _fourth, _pooled, _scatter, _values)


def _nothing(X: Any, w: Any = None) -> tuple[np.ndarray, np.ndarray]:
    return _common.empty_bounds(X.shape[1])


def _no_fold(bounds: Any, chunk: Any) -> None:
    return None


def _settled(bounds: Any, X: Any, w: Any = None) -> tuple[np.ndarray, np.ndarray]:
    return _common.empty_bounds(X.shape[1])


REPLACEMENTS = {
    "block_bounds": _nothing,
    "feature_bounds": _nothing,
    "fold_bounds": _no_fold,
    "settled_bounds": _settled,
}


@contextlib.contextmanager
def ranges_off() -> Iterator[None]:
    """The statistics record no range and predictions check none."""
    saved = [(m, n, getattr(m, n)) for m in MODULES for n in REPLACEMENTS if hasattr(m, n)]
    check = GenerativeClassifier._warn_out_of_range
    try:
        for m, n, _ in saved:
            setattr(m, n, REPLACEMENTS[n])
        GenerativeClassifier._warn_out_of_range = lambda self, Xv: None  # type: ignore[method-assign]
        yield
    finally:
        for m, n, f in saved:
            setattr(m, n, f)
        GenerativeClassifier._warn_out_of_range = check  # type: ignore[method-assign]


def best(fn: Callable[[], Any], off: bool, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        with ranges_off() if off else contextlib.nullcontext():
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
    return min(times)


def main(repeats: int = 5) -> None:
    X, y, Xt, _ = load_mnist()
    Xc, _, Xtc, _ = load_mnist(scale=False)
    Xc, Xtc = Xc.astype(np.float64), Xtc.astype(np.float64)
    cases = {
        "LinearDiscriminantAnalysis": (LinearDiscriminantAnalysis, X, Xt),
        "GaussianNB": (GaussianNB, X, Xt),
        "MultinomialNB (0-255 counts)": (MultinomialNB, Xc, Xtc),
        "KernelNB": (KernelNB, X, Xt),
    }
    print(f"MNIST 60000 x 784, CPU seconds, best of {repeats} (alternating with/without ranges)")
    print(f"{'model':32s} {'step':8s} {'with':>8s} {'without':>8s} {'overhead':>9s}")
    for name, (cls, Xa, Xb) in cases.items():
        model = cls().fit(Xa, y)
        for step, fn in (
            ("fit", lambda cls=cls, Xa=Xa: cls().fit(Xa, y)),
            ("predict", lambda model=model, Xb=Xb: model.predict(Xb)),
        ):
            on, off = [], []
            for _ in range(repeats):  # alternate, so that a busy machine hurts both alike
                on.append(best(fn, False, 1))
                off.append(best(fn, True, 1))
            a, b = min(on), min(off)
            print(f"{name:32s} {step:8s} {a:8.3f} {b:8.3f} {100 * (a / b - 1):+8.1f}%")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
