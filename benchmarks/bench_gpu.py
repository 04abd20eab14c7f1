"""bayesrule on a GPU (PyTorch tensors through the array API) against scikit-learn and the CPU.

Run from the repository root:
``SCIPY_ARRAY_API=1 python benchmarks/bench_gpu.py [--device cuda] [--rows-factor 10] [--quick | --small]``
(the script sets ``SCIPY_ARRAY_API=1`` itself when SciPy is not imported yet).

``--quick`` (a few minutes on a data-centre GPU: the run to make when a GPU
is lent for a short while) keeps MNIST x 10 but times only LDA, QDA,
GaussianNB and MDA (3 EM iterations), scikit-learn's array API LDA (svd)
and GaussianNB, and the GEMM throughput. ``--small`` runs everything on
6 000 rows: it checks the script (``--device cpu --small`` on PyTorch CPU
tensors), not a device's speed.

The data are MNIST's 60 000 training images (pixels / 255, float32)
repeated ``--rows-factor`` times (default 10: 600 000 rows x 784 features),
moved to the device once (not timed). In one run, for LDA, LDA with
Ledoit-Wolf shrinkage (``solver='eigen', shrinkage='auto'``: the fourth
moments on the device), QDA (``reg_param=0.05``), GaussianNB, MDA
(``n_components=4, n_dims=50, max_iter=10`` on the first copy only, as in
bench_spark.py: its seeding and E-step passes on the device) and RDA-CV
(``alphas=(0, 0.5, 1), gammas=(0, 0.1), cv=3`` on the first copy only: its
folds' statistics and held-out scoring on the device, see docs/gpu.md):

* ``device``: bayesrule's fit and predict_proba of the test images on the
  device, with ``sklearn.config_context(array_api_dispatch=True)``;
* ``sklearn``: scikit-learn's own array API LinearDiscriminantAnalysis
  (``solver='svd'``, its only solver with array API support) and GaussianNB
  on the same device;
* ``cpu``: bayesrule on the same rows as a NumPy array, the library's default threads.

Then the statistics pass alone (QDA's per-class scatter: ``n p^2`` multiply-adds)
as a throughput, next to a measured GEMM of the same shape (``X' X`` of one
class's rows, in the data's dtype) on the device. Each figure is one run
after a small warm-up; the accuracy is on MNIST's 10 000 test images, and
``max|dp|`` is the largest difference of the device model's probabilities from
the CPU model's. Without a CUDA device (or without PyTorch, or MNIST),
``--device cuda`` says so and exits 0 having measured nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any

if "scipy" not in sys.modules:
    os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
import sklearn  # noqa: E402

import bayesrule as br  # noqa: E402
from bayesrule.datasets import load_mnist  # noqa: E402


def _sync(torch: Any, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(torch: Any, device: str, fn: Any, *args: Any) -> tuple[float, Any]:
    """Seconds of ``fn(*args)`` (the device's queue drained before and after) and its result."""
    _sync(torch, device)
    t = time.perf_counter()
    out = fn(*args)
    _sync(torch, device)
    return time.perf_counter() - t, out


def _host(a: Any) -> np.ndarray[Any, Any]:
    return a.detach().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rows-factor", type=int, default=10)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--quick",
        action="store_true",
        help="MNIST x rows-factor; LDA, QDA, GaussianNB, MDA (3 iterations), scikit-learn, GEMM",
    )
    mode.add_argument("--small", action="store_true", help="6 000 rows: checks the script")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("no PyTorch: pip install torch==2.13.0 (CPU) or a CUDA build")
        return 0
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"no CUDA device: torch {torch.__version__} sees none; nothing measured.")
        return 0
    try:
        with sklearn.config_context(array_api_dispatch=True):
            pass
    except RuntimeError as exc:
        print(f"array API dispatch unavailable: {exc}")
        return 1
    warnings.simplefilter("ignore")
    dev = args.device
    try:
        Xtr, ytr, Xte, yte = load_mnist()
    except FileNotFoundError as exc:
        print(f"no MNIST: {exc}; nothing measured.")
        return 0
    Xtr, Xte = Xtr.astype(np.float32), Xte.astype(np.float32)
    if args.small:
        X, y, factor = Xtr[:6000], ytr[:6000], 0
    else:
        factor = args.rows_factor
        X, y = np.tile(Xtr, (factor, 1)), np.tile(ytr, factor)
    Xd, Xted = torch.asarray(X, device=dev), torch.asarray(Xte, device=dev)
    yd = torch.asarray(y, device=dev)
    name = torch.cuda.get_device_name() if dev.startswith("cuda") else "PyTorch CPU tensors"
    print(f"device: {dev} ({name}); rows {X.shape[0]} x {X.shape[1]} float32")
    print(f"{'model':<34}{'where':<10}{'fit s':>9}{'predict s':>11}{'accuracy':>10}{'max|dp|':>10}")
    mda_iter = 3 if args.quick or args.small else 10
    models = {
        "LDA": lambda: br.LinearDiscriminantAnalysis(),
        "LDA(eigen, shrinkage='auto')": lambda: br.LinearDiscriminantAnalysis(
            solver="eigen", shrinkage="auto"
        ),
        "QDA(reg_param=0.05)": lambda: br.QuadraticDiscriminantAnalysis(reg_param=0.05),
        "GaussianNB": lambda: br.GaussianNB(),
        "MDA": lambda: br.MixtureDiscriminantAnalysis(
            n_components=4, n_dims=50, max_iter=mda_iter, random_state=0
        ),
        "RDA-CV": lambda: br.RegularizedDiscriminantAnalysisCV(
            alphas=(0.0, 0.5, 1.0), gammas=(0.0, 0.1), cv=3
        ),
    }
    if args.quick:  # the models the targets name
        for label in ("LDA(eigen, shrinkage='auto')", "RDA-CV"):
            del models[label]
    if args.small:  # a token run of the multi-pass models
        models["MDA"] = lambda: br.MixtureDiscriminantAnalysis(
            n_components=2, n_dims=20, max_iter=mda_iter, random_state=0
        )
    first_copy = ("MDA", "RDA-CV")
    with sklearn.config_context(array_api_dispatch=True):  # warm-up (kernels, caches)
        br.GaussianNB().fit(Xd[:2000], y[:2000]).predict_proba(Xted[:10])
    for label, make in models.items():
        rows = slice(0, 60000 if label in first_copy else None)
        t_cpu, cpu = _timed(torch, "cpu", make().fit, X[rows], y[rows])
        tp_cpu, p_cpu = _timed(torch, "cpu", cpu.predict_proba, Xte)
        with sklearn.config_context(array_api_dispatch=True):
            t_dev, model = _timed(torch, dev, make().fit, Xd[rows], yd[rows])
            model.predict_proba(Xted[:10])  # the terms move to the device once
            tp_dev, p_dev = _timed(torch, dev, model.predict_proba, Xted)
        p_dev = _host(p_dev)
        for where, t, tp, p in (("device", t_dev, tp_dev, p_dev), ("cpu", t_cpu, tp_cpu, p_cpu)):
            acc = float(np.mean(np.argmax(p, axis=1) == yte))
            dp = float(np.max(np.abs(p - p_cpu)))
            print(f"{label:<34}{where:<10}{t:>9.3f}{tp:>11.3f}{acc:>10.4f}{dp:>10.1e}")
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
    from sklearn.naive_bayes import GaussianNB as SkGNB

    for label, make in (
        ("sklearn LDA(svd)", lambda: SkLDA(solver="svd")),
        ("sklearn GaussianNB", SkGNB),
    ):
        with sklearn.config_context(array_api_dispatch=True):
            try:
                t, sk = _timed(torch, dev, make().fit, Xd, yd)
                tp, p = _timed(torch, dev, sk.predict_proba, Xted)
            except Exception as exc:  # scikit-learn's own refusals, reported as such
                print(f"{label:<34}{'device':<10} failed: {type(exc).__name__}: {exc}"[:160])
                continue
        p = _host(p)
        acc = float(np.mean(np.argmax(p, axis=1) == yte))
        print(f"{label:<34}{'device':<10}{t:>9.3f}{tp:>11.3f}{acc:>10.4f}{'':>10}")
    _throughput(torch, dev, Xd, y)
    return 0


def _throughput(torch: Any, dev: str, Xd: Any, y: np.ndarray[Any, Any]) -> None:
    """QDA's statistics pass as multiply-adds per second, next to a GEMM of one class's rows."""
    from bayesrule.backends.array_api import fit as device_fit
    from bayesrule.backends.array_api.arrays import namespace_and_device
    from bayesrule.stats import ScatterStats

    n, p = Xd.shape
    classes = np.unique(y)
    with sklearn.config_context(array_api_dispatch=True):
        xp, where = namespace_and_device(Xd)
        codes = xp.asarray(np.searchsorted(classes, y), device=where)
        w = xp.ones(n, dtype=xp.float64, device=where)
        args = (ScatterStats, Xd, codes, w, classes, xp)
        t, _ = _timed(torch, dev, device_fit.device_statistics, *args)
    stats_rate = n * p * p / t
    print(
        f"statistics pass (ScatterStats, {n} x {p} float32 data, float64 products): {t:.3f} s, "
        f"{stats_rate / 1e9:.1f} G multiply-adds/s"
    )
    reps = 5
    for dtype in (torch.float32, torch.float64):
        A = Xd[: n // classes.size].to(dtype)
        A.T @ A
        tg, _ = _timed(torch, dev, lambda: [A.T @ A for _ in range(reps)])  # noqa: B023
        gemm_rate = reps * A.shape[0] * p * p / tg
        print(
            f"  GEMM X'X of {A.shape[0]} x {p} {dtype}: {gemm_rate / 1e9:.1f} G/s; "
            f"statistics pass / GEMM {stats_rate / gemm_rate:.2f}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
