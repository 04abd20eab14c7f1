"""Fitting on a Dask cluster against fitting in memory: MNIST replicated (600 000 rows).

Run from the repository root: ``python benchmarks/bench_dask.py``. The data
are MNIST's 60 000 training images repeated ``--replicas`` times. In memory:
one float64 array of all the rows, fitted in this process (the library's
default threads). On Dask: a ``LocalCluster`` of ``--workers``
single-threaded worker processes; each worker reads MNIST itself and its
blocks are the replicas, so no row is shipped from the client, and only the
statistics come back. Each time is the best of ``--repeat`` fits, after one
warm-up; the data's creation is not timed (a warm-up loads MNIST in every
worker). Out of core: the same rows written once as Parquet (one row group
per replica, in a temporary folder, not timed) and fitted with
``bayesrule.fit_stream``. The pixels are float32 in all three, so the three
models are checked to agree (statistics to 1e-10).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import bayesrule as br
from bayesrule.datasets import load_mnist

MODELS: dict[str, Callable[[], Any]] = {
    "lda": lambda: br.LinearDiscriminantAnalysis(),
    "qda": lambda: br.QuadraticDiscriminantAnalysis(reg_param=0.05),
    "gnb": lambda: br.GaussianNB(),
}


def _mnist_on_worker(worker: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """MNIST's training set, read once per worker process and kept on the worker."""
    from distributed import get_worker

    worker = worker if worker is not None else get_worker()
    cached = getattr(worker, "_bench_mnist", None)
    if cached is None:
        X, y, _, _ = load_mnist()
        cached = (np.ascontiguousarray(X, dtype=np.float32), y)
        worker._bench_mnist = cached
    return cached


def _replica_X(i: int) -> np.ndarray:
    return _mnist_on_worker()[0]


def _replica_y(i: int) -> np.ndarray:
    return _mnist_on_worker()[1]


def _warm(dask_worker: Any) -> int:
    import bayesrule  # noqa: F401  (what a fit loads)

    return int(_mnist_on_worker(dask_worker)[0].shape[0])


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    out = fn()  # warm-up
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicas", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--models", default="lda,qda,gnb")
    args = parser.parse_args()
    names = [m.strip() for m in args.models.split(",")]

    Xtr, ytr, _, _ = load_mnist()
    Xtr = np.ascontiguousarray(Xtr, dtype=np.float32)
    n, p = Xtr.shape
    rows = n * args.replicas
    X = np.tile(Xtr, (args.replicas, 1))
    y = np.tile(ytr, args.replicas)

    with (
        LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(_warm)
        Xd = da.concatenate(
            [
                da.from_delayed(dask.delayed(_replica_X, pure=True)(i), (n, p), np.float32)
                for i in range(args.replicas)
            ]
        )
        yd = da.concatenate(
            [
                da.from_delayed(dask.delayed(_replica_y, pure=True)(i), (n,), ytr.dtype)
                for i in range(args.replicas)
            ]
        )
        folder = Path(tempfile.mkdtemp(prefix="bench_dask_"))
        source = _write_parquet(Xtr, ytr, args.replicas, folder)
        print(
            f"MNIST x {args.replicas}: {rows} rows x {p} float32 features; Dask: {args.workers} "
            f"single-threaded worker processes; best of {args.repeat}"
        )
        header = (
            f"{'model':<6}{'memory s':>10}{'rows/s':>11}{'dask s':>9}{'rows/s':>11}"
            f"{'dask/mem':>10}{'parquet s':>11}{'rows/s':>11}{'pq/mem':>8}{'same model':>12}"
        )
        print(header)
        print("-" * len(header))
        for name in names:
            t_mem, ref = best_time(lambda name=name: MODELS[name]().fit(X, y), args.repeat)
            t_dask, got = best_time(lambda name=name: MODELS[name]().fit(Xd, yd), args.repeat)
            t_pq, streamed = best_time(
                lambda name=name: br.fit_stream(MODELS[name](), source, target="label"),
                args.repeat,
            )
            same = ref.stats_.allclose(got.stats_, rtol=1e-10) and ref.stats_.allclose(
                streamed.stats_, rtol=1e-10
            )
            print(
                f"{name:<6}{t_mem:>10.2f}{rows / t_mem:>11.0f}{t_dask:>9.2f}{rows / t_dask:>11.0f}"
                f"{t_dask / t_mem:>10.2f}{t_pq:>11.2f}{rows / t_pq:>11.0f}{t_pq / t_mem:>8.2f}"
                f"{str(same):>12}"
            )
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()


def _write_parquet(X: np.ndarray, y: np.ndarray, replicas: int, folder: Path) -> Path:
    """The rows of ``replicas`` copies of ``(X, y)`` as one Parquet file, a row group per copy."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {f"p{j}": X[:, j] for j in range(X.shape[1])}
    columns["label"] = y
    table = pa.table(columns)
    path = folder / "mnist.parquet"
    with pq.ParquetWriter(path, table.schema) as writer:
        for _ in range(replicas):
            writer.write_table(table, row_group_size=X.shape[0])
    return path


if __name__ == "__main__":
    main()
