"""The Spark fast path's plan and blocks, without Spark: how files are shared out into tasks,
and how a task's blocks are laid out and summarised.

Only pyarrow is needed: the plan (:func:`plan_splits`) and the executors'
functions (:mod:`bayesrule.backends.spark.arrow`) import no pyspark.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesrule

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from bayesrule.backends.spark.arrow import (  # noqa: E402
    Columns,
    Scratch,
    block_of,
    column_views,
    summarise_block,
)
from bayesrule.backends.spark.files import FOOTERS_BELOW, plan_splits  # noqa: E402


def _write(folder: Path, groups: list[list[int]]) -> tuple[str, ...]:
    """One Parquet file per list, of row groups of those sizes (a file of no row group: [])."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.parquet"):
        old.unlink()
    files = []
    schema = pa.schema([("x", pa.float64()), ("label", pa.int64())])
    for i, sizes in enumerate(groups):
        path = folder / f"part-{i}.parquet"
        with pq.ParquetWriter(path, schema) as writer:
            for n in sizes:
                writer.write_table(
                    pa.table({"x": np.zeros(n), "label": np.zeros(n, dtype=np.int64)}, schema)
                )
        files.append(str(path))
    return tuple(files)


def _rows(files: tuple[str, ...], piece: tuple[int, tuple[int, ...] | None]) -> int:
    meta = pq.ParquetFile(files[piece[0]]).metadata
    groups = range(meta.num_row_groups) if piece[1] is None else piece[1]
    return sum(meta.row_group(g).num_rows for g in groups)


@pytest.mark.parametrize(("n_files", "cores"), [(10, 2), (4, 4), (6, 3), (1, 1), (40, 3)])
def test_files_that_share_out_evenly_are_read_whole_and_in_order(tmp_path, n_files, cores):
    """A multiple of the cores (or many files): consecutive whole files, no footer read."""
    files = tuple(str(tmp_path / f"missing-{i}.parquet") for i in range(n_files))  # never opened
    tasks = plan_splits(files, cores)
    assert len(tasks) == min(cores, n_files)
    pieces = [piece for task in tasks for piece in task]
    assert pieces == [(i, None) for i in range(n_files)]
    sizes = [len(task) for task in tasks]
    assert max(sizes) - min(sizes) <= 1


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    groups=st.lists(st.lists(st.integers(1, 50), max_size=6), min_size=1, max_size=7),
    cores=st.integers(2, 4),
)
def test_row_groups_are_shared_out_in_runs_of_about_equal_rows(tmp_path, groups, cores):
    """Files that do not share out evenly: every row group read once, in order, balanced."""
    if len(groups) % cores == 0 or len(groups) >= FOOTERS_BELOW * cores:
        groups = groups + [[1]]  # the footers are read for this plan
    if len(groups) % cores == 0:
        groups = groups + [[1]]
    files = _write(tmp_path / "plan", groups)
    tasks = plan_splits(files, cores)
    assert 1 <= len(tasks) <= cores
    assert all(task for task in tasks)
    # every row group of every file exactly once, in file and row-group order
    read = [(i, g) for task in tasks for i, gs in task for g in gs]  # type: ignore[union-attr]
    assert read == [(i, g) for i, sizes in enumerate(groups) for g in range(len(sizes))]
    # every file is opened by some task (a file without rows: for its schema)
    assert {i for task in tasks for i, _ in task} == set(range(len(groups)))
    # each task's rows are within the largest row group of an equal share
    total = sum(map(sum, groups))
    biggest = max((n for sizes in groups for n in sizes), default=0)
    for task in tasks:
        rows = sum(_rows(files, piece) for piece in task)
        assert abs(rows - total / cores) <= biggest


def test_a_file_gone_before_its_footer_is_read_is_named(tmp_path):
    files = _write(tmp_path / "gone", [[5], [5], [5]])
    Path(files[1]).unlink()
    with pytest.raises(FileNotFoundError, match=r"part-1\.parquet.*gone"):
        plan_splits(files, 2)


def _batch(rng, n: int, dtype=np.float32, nulls: bool = False, weights: bool = False):
    X = (rng.normal(size=(n, 4)) * 3 + 10).astype(dtype)
    arrays = [pa.array(X[:, j]) for j in range(4)]
    if nulls:
        mask = np.zeros(n, dtype=bool)
        mask[::7] = True
        arrays[2] = pa.array(X[:, 2], mask=mask)
    labels = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    names = ["f0", "f1", "f2", "f3", "label"]
    arrays.append(pa.array(labels))
    if weights:
        arrays.append(pa.array(rng.integers(0, 3, n).astype(np.float64)))
        names.append("w")
    return pa.RecordBatch.from_arrays(arrays, names=names)


@pytest.mark.parametrize("order", ["C", "F"])
def test_blocks_laid_out_in_one_scratch_array_equal_fresh_ones(order):
    """The scratch memory is reused (same buffer) and every block equals its fresh layout."""
    rng = np.random.default_rng(0)
    cols = Columns(("f0", "f1", "f2", "f3"), "label", dtype="float32", order=order)
    scratch = Scratch()
    held = None
    for n in (50, 20, 50, 1):
        batch = _batch(rng, n)
        X, y, _, _ = block_of(batch, cols, scratch)
        fresh, y2, _, _ = block_of(batch, cols)
        np.testing.assert_array_equal(X, fresh)
        np.testing.assert_array_equal(y, y2)
        assert X.flags.f_contiguous if order == "F" else X.flags.c_contiguous
        assert X.dtype == np.float32
        if held is None:
            held = scratch.flat
        assert scratch.flat is held  # no block bigger than the first: the same memory
    # a bigger block takes new memory, and still lays out right
    batch = _batch(rng, 80)
    X, _, _, _ = block_of(batch, cols, scratch)
    np.testing.assert_array_equal(X, block_of(batch, cols)[0])
    assert scratch.flat.size >= 80 * 4


def test_column_views_share_arrow_memory_or_say_none():
    rng = np.random.default_rng(1)
    cols = Columns(("f0", "f1", "f2", "f3"), "label", dtype="float32", order="F")
    batch = _batch(rng, 30)
    views = column_views(batch, cols)
    assert views is not None and [v.dtype for v in views] == [np.float32] * 4
    np.testing.assert_array_equal(np.column_stack(views), block_of(batch, cols)[0])
    assert column_views(_batch(rng, 30, nulls=True), cols) is None  # a null: laid out
    wider = Columns(cols.features, "label", dtype="float64", order="F")
    assert column_views(batch, wider) is None  # float32 columns for a float64 block


class _Taken(Exception):
    pass


def _task(est, p: int = 4):
    """The one-pass task ``est.fit_plan`` hands a backend's ``reduce``."""
    held = {}

    def reduce(task):
        held["task"] = task
        raise _Taken

    with pytest.raises(_Taken):
        est.fit_plan(reduce, first_block=np.empty((0, p), dtype=np.float32), classes=None)
    return held["task"]


@pytest.mark.parametrize(
    ("nulls", "weights"), [(False, False), (True, False), (False, True)], ids=str
)
def test_a_block_summarised_by_its_columns_equals_the_laid_out_one(nulls, weights):
    """GaussianNB's task takes the Arrow columns as they are; a null or weights: laid out.

    Equal to the laid-out block's statistics either way (as the in-memory fit's)."""
    rng = np.random.default_rng(2)
    cols = Columns(
        ("f0", "f1", "f2", "f3"),
        "label",
        "w" if weights else None,
        dtype="float32",
        order=bayesrule.GaussianNB().input_spec().order,
    )
    task = _task(bayesrule.GaussianNB())
    batch = _batch(rng, 200, nulls=nulls, weights=weights)
    X, y, w, _ = block_of(batch, cols)
    got, rows, dropped = summarise_block(task, batch, cols, None, Scratch())
    ref = task.statistics(X, y, w, None)
    assert rows == 200 and dropped == 0
    assert not nulls or np.isnan(X).any()  # a null: NaN in the laid-out block
    assert got.allclose(ref, rtol=1e-12)


def test_a_pooled_lda_task_reads_every_block_by_its_columns_and_equals_one_fit(
    tmp_path, monkeypatch
):
    """The fast path's task over several files and many blocks (LDA's pooled statistics):
    each block is summarised from its Arrow columns, and the task's statistics are the rows'.
    """
    from bayesrule.backends.spark import arrow
    from bayesrule.backends.spark.files import Scan, summarise_splits
    from bayesrule.estimators._tasks import ColumnSummariser
    from bayesrule.stats import PooledScatterStats

    rng = np.random.default_rng(3)
    n, p = 3000, 6
    y = rng.integers(0, 3, n)
    X = (rng.uniform(0, 1, (n, p)) * (rng.random((n, p)) < 0.5)).astype(np.float32)
    X[:, 0] = 0.0
    X[y == 1, 3] = 0.0
    names = tuple(f"f{j}" for j in range(p))
    files = []
    for i, rows in enumerate(np.array_split(np.arange(n), 3)):
        table = pa.table({**{f: X[rows, j] for j, f in enumerate(names)}, "label": y[rows]})
        path = tmp_path / f"part-{i}.parquet"
        pq.write_table(table, path, row_group_size=300)
        files.append(str(path))
    schema = pa.schema([(f, pa.float32()) for f in names] + [("label", pa.int64())])
    wanted = (*names, "label")
    scan = Scan(tuple(files), wanted, wanted, schema)
    cols = Columns(names, "label", dtype="float32", order="F")
    est = bayesrule.LinearDiscriminantAnalysis()
    held = {}

    def reduce(task):
        held["task"] = task
        raise _Taken

    with pytest.raises(_Taken):
        est.fit_plan(reduce, first_block=np.empty((0, p), np.float32), pooled_scatter=True)
    task = held["task"]
    answers = []
    real = ColumnSummariser.column_statistics

    def spy(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        answers.append(out is not None)
        return out

    monkeypatch.setattr(ColumnSummariser, "column_statistics", spy)
    monkeypatch.setattr(arrow, "BLOCK_BYTES", 1024 * p * 4)  # blocks of 1024 rows
    run = summarise_splits(task, cols, None, scan, [((0, None), (1, None), (2, None))])
    (out,) = list(run(iter([pa.RecordBatch.from_arrays([pa.array([0])], ["id"])])))
    outcome = arrow.decode(out.column(0)[0].as_py())
    assert outcome.error is None and outcome.rows == n
    assert len(answers) >= 3 and all(answers)  # several blocks, each by its columns
    assert type(outcome.summary) is PooledScatterStats
    assert outcome.summary.allclose(PooledScatterStats.from_data(X, y), rtol=1e-10)
