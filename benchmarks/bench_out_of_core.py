"""Out-of-core fitting from Parquet files: throughput beside pyarrow's own reading, and peak memory.

Writes Parquet files of a given total size (default 10 GB) holding a
synthetic mixture of Gaussian classes (``--classes`` 10, ``--features`` 256
float32 columns and an int32 label, in row groups of ``--row-group-rows``),
then in separate subprocesses (so that each peak RSS is its own):

* ``pyarrow``: the files read with pyarrow alone, row group by row group
  (``ParquetFile.read_row_group``, columns decoded on pyarrow's threads; no
  model, no conversion), the reading speed to compare with;
* ``blocks``: :func:`bayesrule.read_blocks` alone (reading and conversion to
  2-D float32 NumPy blocks, no model);
* ``lda``, ``gnb``, ``qda``: :func:`bayesrule.fit_stream` of
  LinearDiscriminantAnalysis, GaussianNB and QuadraticDiscriminantAnalysis.

Prints, for each: seconds, CPU seconds (all threads), rows/s, MB/s (bytes
of the files), the share of pyarrow's speed, and the peak resident memory of
the subprocess; and the load average before and after (on a busy machine the
wall-clock figures say little: compare the CPU seconds). Every mode reads the
same columns (the 256 features and the label) of the same row groups. The files
are written under ``--dir`` (default: a temporary directory) and deleted at
the end unless ``--keep``. With files smaller than the free memory the reads
come from the page cache once the files are written; with larger ones from
the disk.

Run: ``PYTHONPATH=src python benchmarks/bench_out_of_core.py --size-gb 10``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MODELS = {
    "lda": "LinearDiscriminantAnalysis",
    "gnb": "GaussianNB",
    "qda": "QuadraticDiscriminantAnalysis",
}


def write_files(
    directory: Path, size_gb: float, p: int, k: int, group: int, file_gb: float, seed: int = 0
) -> tuple[int, int]:
    """Parquet files of about ``size_gb`` GB in total; returns (rows, bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    means = rng.normal(scale=1.0, size=(k, p)).astype(np.float32)
    scales = rng.uniform(0.5, 2.0, size=(k, p)).astype(np.float32)
    row_bytes = 4 * p + 4
    total_rows = int(size_gb * 1e9 // row_bytes)
    rows_per_file = max(group, int(file_gb * 1e9 // row_bytes) // group * group)
    names = [f"x{j:03d}" for j in range(p)]
    schema = pa.schema([(n, pa.float32()) for n in names] + [("y", pa.int32())])
    written, index = 0, 0
    while written < total_rows:
        n_file = min(rows_per_file, total_rows - written)
        path = directory / f"part-{index:04d}.parquet"
        with pq.ParquetWriter(path, schema, compression="none", use_dictionary=False) as writer:
            done = 0
            while done < n_file:
                m = min(group, n_file - done)
                y = rng.integers(0, k, size=m).astype(np.int32)
                X = rng.standard_normal(size=(m, p), dtype=np.float32)
                X *= scales[y]
                X += means[y]
                cols = [pa.array(X[:, j]) for j in range(p)] + [pa.array(y)]
                writer.write_table(pa.Table.from_arrays(cols, schema=schema))
                done += m
        written += n_file
        index += 1
    size = sum(f.stat().st_size for f in directory.glob("*.parquet"))
    return written, size


def child(mode: str, directory: str) -> dict[str, float]:
    """One measurement, in this process: seconds and rows (imports not timed)."""
    import pyarrow.parquet as pq

    import bayesrule

    start = time.perf_counter()
    cpu0 = time.process_time()
    rows = 0
    if mode == "pyarrow":
        # the fastest plain read found: row group by row group, columns on threads
        for path in sorted(Path(directory).glob("*.parquet")):
            pf = pq.ParquetFile(path)
            for i in range(pf.num_row_groups):
                rows += pf.read_row_group(i, use_threads=True).num_rows
    elif mode == "blocks":
        for X, _ in bayesrule.read_blocks(directory, target="y"):
            rows += X.shape[0]
    else:
        est = getattr(bayesrule, MODELS[mode])()
        bayesrule.fit_stream(est, directory, target="y", progress=False)
        rows = int(est.n_samples_seen_)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": seconds, "cpu": cpu, "rows": rows, "peak_mb": peak_kb / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=10.0, help="total size of the files")
    parser.add_argument("--features", type=int, default=256)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--row-group-rows", type=int, default=65536)
    parser.add_argument("--file-gb", type=float, default=1.0, help="size of each file")
    parser.add_argument("--dir", default=None, help="where to write (default: a temporary dir)")
    parser.add_argument("--keep", action="store_true", help="keep the files afterwards")
    parser.add_argument("--reuse", action="store_true", help="use the files already in --dir")
    parser.add_argument("--models", default="lda,gnb,qda")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        print(json.dumps(child(args.child, args.dir)))
        return

    owned = args.dir is None
    directory = Path(args.dir or tempfile.mkdtemp(prefix="bench_ooc_"))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        if args.reuse and any(directory.glob("*.parquet")):
            files = sorted(directory.glob("*.parquet"))
            size = sum(f.stat().st_size for f in files)
            print(f"reusing {len(files)} files in {directory} ({size / 1e9:.2f} GB)")
        else:
            t0 = time.perf_counter()
            rows, size = write_files(
                directory,
                args.size_gb,
                args.features,
                args.classes,
                args.row_group_rows,
                args.file_gb,
            )
            print(
                f"wrote {rows:,} rows x {args.features} float32 features, {args.classes} classes: "
                f"{size / 1e9:.2f} GB in {time.perf_counter() - t0:.0f} s ({directory})"
            )
        env = dict(os.environ)
        here = Path(__file__).resolve().parent.parent / "src"
        env["PYTHONPATH"] = str(here) + os.pathsep + env.get("PYTHONPATH", "")
        results: dict[str, dict[str, float]] = {}
        modes = ["pyarrow", "blocks", *[m for m in args.models.split(",") if m]]
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(
            f"{'':10s} {'seconds':>8s} {'CPU s':>7s} {'rows/s':>12s} {'MB/s':>8s} "
            f"{'of pyarrow':>10s} {'peak RSS':>9s}"
        )
        for mode in modes:
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode, "--dir", str(directory)],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results[mode] = r
            mbs = size / 1e6 / r["seconds"]
            share = results["pyarrow"]["seconds"] / r["seconds"]
            print(
                f"{mode:10s} {r['seconds']:8.2f} {r['cpu']:7.2f} {r['rows'] / r['seconds']:12,.0f} "
                f"{mbs:8.0f} {share:10.0%} {r['peak_mb']:7.0f} MB"
            )
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if owned and not args.keep:
            shutil.rmtree(directory, ignore_errors=True)
        elif not args.keep and not args.reuse:
            for f in directory.glob("part-*.parquet"):
                f.unlink()


if __name__ == "__main__":
    main()
