"""Fitting on Spark against fitting in memory and on Dask: MNIST replicated (600 000 rows).

Run from the repository root: ``python benchmarks/bench_spark.py [--rows-factor N] [--quick]``.

The data are MNIST's 60 000 training images (pixels / 255, float32) repeated
``--rows-factor`` times (default 10: 600 000 rows x 784 features), written
once as Parquet, one file per copy, in a folder of the temporary directory
that later runs reuse (not timed). In the same run, for LDA, QDA
(``reg_param=0.05``), GaussianNB and MDA:

* in memory: one float32 array of all the rows (already in memory, not
  timed), fitted in this process with the library's default threads;
* Dask: a ``LocalCluster`` of 2 single-threaded worker processes, fitting a
  Dask DataFrame read from the Parquet folder (reading included);
* Spark: ``local[2]``, :func:`bayesrule.spark.fit` on the DataFrame read
  from the Parquet folder (reading included, as for Dask). That DataFrame
  is a plain Parquet scan, so its tasks read the files themselves with
  pyarrow (the fast path of docs/spark.md); each model's line says which
  way the fit read the data (MDA's cached DataFrame goes through Spark);
* Spark MLlib's own ``NaiveBayes(modelType="gaussian")`` on the same
  DataFrame: the 784 columns are put in one vector column by a
  ``VectorAssembler``; the assembly is lazy, so it runs inside the timed
  ``fit`` (the pass that reads the Parquet files assembles the rows).

MDA runs one pass over the data per EM iteration, so it gets a quick
setting on the first copy only (60 000 rows): ``n_components=4, n_dims=50,
max_iter=10`` (``--quick``: 3), the DataFrame cached in Spark and persisted
in Dask first (not timed; one fit). Each other figure is the median of
``--repeat`` fits (default 3; the in-memory, Dask and Spark fits of a model
taken in turn, so that a change of load falls on all three alike, and
nothing else running during a fit), after a warm-up of Spark's and Dask's
workers on a small fit; the accuracy is on MNIST's 10 000 test
images (the model fitted on Spark or Dask predicts in memory). The
statistics of the three backends are checked to agree (``same``: to 1e-8).
Timings on a shared machine are noisy: compare the rows of one run.
The output is also written to ``benchmarks/results/bench_spark.txt``.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import bayesrule as br
from bayesrule.datasets import load_mnist

RESULTS = Path(__file__).resolve().parent / "results" / "bench_spark.txt"

MODELS: dict[str, Callable[[], Any]] = {
    "lda": lambda: br.LinearDiscriminantAnalysis(),
    "qda": lambda: br.QuadraticDiscriminantAnalysis(reg_param=0.05),
    "gnb": lambda: br.GaussianNB(),
}


def mda(quick: bool) -> Any:
    return br.MixtureDiscriminantAnalysis(n_components=4, n_dims=50, max_iter=3 if quick else 10)


class PathSeen(logging.Handler):
    """The last thing the Spark backend said about how a fit read the data (its DEBUG log)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.last = record.getMessage()

    def way(self) -> str:
        if "directly" in self.last and "through Spark" not in self.last:
            return "the Parquet files read by the tasks (fast path)"
        return f"through Spark's rows ({self.last.split(': ', 1)[-1]})"


class Report:
    """Lines printed and kept for the results file."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)


def write_parquet(X: np.ndarray, y: np.ndarray, copies: int, folder: Path) -> Path:
    """``copies`` copies of ``(X, y)`` as Parquet files ``part-000.parquet``...; reused when there."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    done = folder / "_COMPLETE"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.table({**{f"p{j}": X[:, j] for j in range(X.shape[1])}, "label": y})
    for i in range(copies):
        pq.write_table(table, folder / f"part-{i:03d}.parquet", row_group_size=20_000)
    done.write_text("")
    return folder


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        out = fn()
        return time.perf_counter() - t0, out


def accuracy(est: Any, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(est.predict(X) == y))


def same(a: Any, b: Any) -> bool:
    """The statistics agree to 1e-8 (LDA on Spark holds their pooled form: compared as such)."""
    try:
        sa, sb = a.stats_, b.stats_
        if isinstance(sb, br.PooledScatterStats) and not isinstance(sa, br.PooledScatterStats):
            sa = br.PooledScatterStats.from_scatter(sa)
        return bool(sa.allclose(sb, rtol=1e-8))
    except Exception:
        return False


def spark_session(memory: str) -> Any:
    from bayesrule.spark import session

    return session(
        "local[2]",
        app_name="bench_spark",
        **{
            "spark.driver.memory": memory,
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
        },
    )


def mllib_naive_bayes(spark: Any, df: Any, features: list[str], Xte: Any, yte: Any) -> tuple:
    """MLlib's Gaussian NaiveBayes: fit time (assembly inside it) and test accuracy.

    The test rows are scored here with the fitted model's own parameters
    (``theta``: means, ``sigma``: variances, ``pi``: log priors) by MLlib's
    rule, the class of largest ``pi + sum log N(x | theta, sigma)``: a Spark
    ``transform`` of 785-column rows spends minutes planning on a busy machine.
    """
    from pyspark.ml.classification import NaiveBayes
    from pyspark.ml.feature import VectorAssembler
    from pyspark.sql import functions as F

    assembler = VectorAssembler(inputCols=features, outputCol="features")
    train = assembler.transform(df).select("features", F.col("label").cast("double").alias("label"))
    nb = NaiveBayes(modelType="gaussian", featuresCol="features", labelCol="label")
    t, model = timed(lambda: nb.fit(train))
    theta, sigma = model.theta.toArray(), model.sigma.toArray()
    log_prior = model.pi.toArray()
    X = np.asarray(Xte, dtype=np.float64)
    joint = (
        log_prior
        - 0.5 * np.sum(np.log(2 * np.pi * sigma), axis=1)
        - 0.5
        * ((X**2) @ (1 / sigma).T - 2 * X @ (theta / sigma).T + np.sum(theta**2 / sigma, axis=1))
    )
    return t, float(np.mean(np.argmax(joint, axis=1) == yte))


def summary(
    say: Report, results: dict[str, Any], mllib: Any, rows: int, n: int, args: Any, final: bool
) -> None:
    """The table of the figures so far, written to the results file (and printed at the end)."""
    progress = say
    say = Report() if final else _Quiet()
    say()
    header = (
        f"{'model':<6}{'rows':>9}{'memory s':>10}{'rows/s':>10}{'dask s':>9}{'rows/s':>10}"
        f"{'spark s':>9}{'rows/s':>10}{'spark/mem':>11}{'spark/dask':>11}"
        f"{'acc mem':>9}{'acc dask':>9}{'acc spark':>10}{'same':>6}"
    )
    say(header)
    say("-" * len(header))
    for name, r in results.items():
        say(
            f"{name:<6}{r['rows']:>9,}{r['mem']:>10.2f}{r['rows'] / r['mem']:>10.0f}"
            f"{r['dask']:>9.2f}{r['rows'] / r['dask']:>10.0f}{r['spark']:>9.2f}"
            f"{r['rows'] / r['spark']:>10.0f}{r['spark'] / r['mem']:>11.2f}"
            f"{r['spark'] / r['dask']:>11.2f}"
            + "".join(f"{a:>9.4f}" for a in r["acc"][:2])
            + f"{r['acc'][2]:>10.4f}{('yes' if r['same'] else 'NO'):>6}"
        )
    if mllib is not None:
        t_ml, acc_ml = mllib
        say(
            f"MLlib NaiveBayes(modelType='gaussian') on the same Spark DataFrame: {t_ml:.2f} s "
            f"({rows / t_ml:,.0f} rows/s; VectorAssembler inside the fit), accuracy {acc_ml:.4f}"
        )
        if "gnb" in results:
            t_gnb = results["gnb"]["spark"]
            say(
                f"bayesrule GaussianNB on Spark vs MLlib's: {t_ml / t_gnb:.2f}x faster "
                f"({t_gnb:.2f} s vs {t_ml:.2f} s)"
            )
    say()
    say("targets: spark/mem <= 2 for LDA and GaussianNB; bayesrule GaussianNB faster than MLlib's")
    for name in ("lda", "gnb"):
        if name in results:
            ratio = results[name]["spark"] / results[name]["mem"]
            say(f"  {name}: spark/mem = {ratio:.2f} ({'met' if ratio <= 2 else 'NOT met'})")
    if mllib is not None and "gnb" in results:
        met = results["gnb"]["spark"] < mllib[0]
        say(f"  gnb vs MLlib: {'met' if met else 'NOT met'}")
    if "mda" in results:
        say(
            f"MDA: n_components=4, n_dims=50, max_iter={3 if args.quick else 10}, on the first "
            f"copy only ({n:,} rows), cached in Spark / persisted in Dask before the fit"
        )
    if final:
        progress.lines.extend(say.lines)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = [" ".join(["$ python", *sys.argv]), *progress.lines]
    if not final:
        text.extend(say.lines)
        text.append("(incomplete: the run is still going or was stopped)")
    out.write_text("\n".join(text) + "\n")


class _Quiet(Report):
    """A report that keeps its lines without printing them."""

    def __call__(self, line: str = "") -> None:
        self.lines.append(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows-factor", type=int, default=None, help="copies of MNIST (10)")
    parser.add_argument("--quick", action="store_true", help="2 copies, MDA 3 EM iterations")
    parser.add_argument(
        "--repeat", type=int, default=3, help="fits per figure, the median reported (3)"
    )
    parser.add_argument("--models", default="lda,qda,gnb,mda,mllib")
    parser.add_argument("--spark-memory", default="3g", help="the driver JVM's heap (local mode)")
    parser.add_argument("--data", default=None, help="MNIST's folder (default: as load_mnist)")
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args()
    factor = args.rows_factor or (2 if args.quick else 10)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    say = Report()

    Xtr, ytr, Xte, yte = load_mnist(args.data)
    Xtr = np.ascontiguousarray(Xtr, dtype=np.float32)
    Xte = np.ascontiguousarray(Xte, dtype=np.float32)
    n, p = Xtr.shape
    rows = n * factor
    folder = Path(tempfile.gettempdir()) / f"bayesrule_bench_spark_mnist_x{factor}"
    t_write, _ = timed(lambda: write_parquet(Xtr, ytr, factor, folder))
    features = [f"p{j}" for j in range(p)]
    X = np.tile(Xtr, (factor, 1))
    y = np.tile(ytr, factor)

    import dask
    import dask.dataframe as dd
    import pyspark
    from distributed import Client, LocalCluster

    import bayesrule.spark as bs

    say(
        f"bench_spark: MNIST x {factor} = {rows:,} rows x {p} float32 features, Parquet in "
        f"{folder} ({len(list(folder.glob('*.parquet')))} files; written or checked in "
        f"{t_write:.1f} s)"
    )
    say(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start "
        f"(shared: timings are noisy); Python {platform.python_version()}, "
        f"pyspark {pyspark.__version__}, dask {dask.__version__}, bayesrule {br.__version__}"
    )
    say(
        "memory: fit on the array in RAM; dask: LocalCluster of 2 single-threaded workers "
        "reading the Parquet folder; spark: local[2] reading the Parquet folder "
        f"(bayesrule.spark.fit); each figure the median of {args.repeat} fits, after a "
        "warm-up, the three backends' fits taken in turn (nothing else runs during a fit)"
    )
    seen = PathSeen()
    logger = logging.getLogger("bayesrule.spark")
    logger.addHandler(seen)
    logger.setLevel(logging.DEBUG)
    spark = spark_session(args.spark_memory)
    sdf = spark.read.parquet(str(folder))
    results: dict[str, dict[str, Any]] = {}
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster),
    ):
        ddf = dd.read_parquet(str(folder))
        # warm-up: Spark's Python workers, Dask's workers, bayesrule imported in each
        first = spark.read.parquet(str(folder / "part-000.parquet"))
        timed(lambda: bs.fit(br.GaussianNB(), first.limit(2000), "label"))  # through Spark
        timed(lambda: bs.fit(br.GaussianNB(), first, "label"))  # the files read directly
        timed(lambda: br.GaussianNB().fit(ddf.partitions[0][features], ddf.partitions[0]["label"]))
        for name in [m for m in names if m in MODELS]:
            # in turn, so that a change of the machine's load falls on all three alike
            times: dict[str, list[float]] = {"mem": [], "dask": [], "spark": []}
            for _ in range(max(1, args.repeat)):
                t, ref = timed(lambda name=name: MODELS[name]().fit(X, y))
                times["mem"].append(t)
                t, on_dask = timed(
                    lambda name=name: MODELS[name]().fit(ddf[features], ddf["label"])
                )
                times["dask"].append(t)
                t, on_spark = timed(lambda name=name: bs.fit(MODELS[name](), sdf, "label"))
                times["spark"].append(t)
            t_mem, t_dask, t_spark = (float(np.median(times[k])) for k in ("mem", "dask", "spark"))
            results[name] = {
                "mem": t_mem,
                "dask": t_dask,
                "spark": t_spark,
                "rows": rows,
                "acc": [accuracy(e, Xte, yte) for e in (ref, on_dask, on_spark)],
                "same": same(ref, on_dask) and same(ref, on_spark),
            }
            say(
                f"  {name}: done ({t_mem:.1f} / {t_dask:.1f} / {t_spark:.1f} s); "
                f"spark read {seen.way()}"
            )
            summary(say, results, None, rows, n, args, final=False)
        if "mda" in names:
            one = spark.read.parquet(str(folder / "part-000.parquet")).cache()
            one.count()
            part = dd.read_parquet(str(folder / "part-000.parquet")).persist()
            t_mem, ref = timed(lambda: mda(args.quick).fit(Xtr, ytr))
            t_dask, on_dask = timed(lambda: mda(args.quick).fit(part[features], part["label"]))
            t_spark, on_spark = timed(lambda: bs.fit(mda(args.quick), one, "label"))
            results["mda"] = {
                "mem": t_mem,
                "dask": t_dask,
                "spark": t_spark,
                "rows": n,
                "acc": [accuracy(e, Xte, yte) for e in (ref, on_dask, on_spark)],
                "same": all(
                    np.allclose(ref.means_, e.means_, rtol=1e-6, atol=1e-8)
                    for e in (on_dask, on_spark)
                ),
            }
            one.unpersist()
            say(
                f"  mda: done ({t_mem:.1f} / {t_dask:.1f} / {t_spark:.1f} s); "
                f"spark read {seen.way()}"
            )
            summary(say, results, None, rows, n, args, final=False)
    mllib = None
    if "mllib" in names:
        runs = [mllib_naive_bayes(spark, sdf, features, Xte, yte) for _ in range(args.repeat)]
        mllib = (float(np.median([t for t, _ in runs])), runs[-1][1])

    summary(say, results, mllib, rows, n, args, final=True)
    spark.stop()


if __name__ == "__main__":
    main()
