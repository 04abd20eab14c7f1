"""LDA, QDA, RDA and GaussianNB streamed from Parquet: the statistics of ``fit`` in memory.

``fit_stream`` reads Parquet row groups on a read-ahead thread and
summarises the blocks side by side on threads of their own, however busy
the machine is when the pass begins (``stream_threads``). Here, over
generated data: the streamed statistics equal those of ``fit`` on all the
rows at once (to 1e-10 relative) whatever the row-group and block sizes,
the column types (float32, float64, integers, mixed), the sample weights,
the class order (declared classes, string labels) and the offset of the
data from the origin; a null or an infinity is refused with the file, the
row and the column named, and the estimator is left unfitted.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesrule as br
from _arrow_tables import arrow_table
from bayesrule._util import parallel
from bayesrule.backends.stream import fit as stream_fit

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

RTOL = 1e-10

MODELS = {
    "lda": lambda: br.LinearDiscriminantAnalysis(),
    "qda": lambda: br.QuadraticDiscriminantAnalysis(reg_param=0.1),
    "rda": lambda: br.RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.1),
    "gnb": lambda: br.GaussianNB(),
}


def _kinds(dtype: str, p: int) -> list[type]:
    if dtype == "mixed":  # float32, float64 and integer columns: read as float64
        return [(np.float32, np.float64, np.int32)[j % 3] for j in range(p)]
    return [np.dtype(dtype).type] * p


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    model=st.sampled_from(sorted(MODELS)),
    n=st.integers(12, 300),
    p=st.integers(1, 6),
    k=st.integers(2, 4),
    dtype=st.sampled_from(["float32", "float64", "int32", "mixed"]),
    weighted=st.booleans(),
    labels=st.sampled_from(["int", "str", "declared"]),
    group=st.integers(1, 130),
    block=st.one_of(st.none(), st.integers(1, 160)),
    offset=st.sampled_from([0.0, 1e4]),
    seed=st.integers(0, 10_000),
)
def test_streamed_statistics_equal_fit(
    tmp_path_factory, model, n, p, k, dtype, weighted, labels, group, block, offset, seed
):
    rng = np.random.default_rng(seed)
    yi = np.arange(n) % k
    rng.shuffle(yi)
    kinds = _kinds(dtype, p)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 5.0, size=p) + offset + 3.0 * yi[:, None]
    if dtype != "float64":
        X = np.round(X) if dtype != "float32" else X
    # the values the file holds, as fit sees them
    X = np.column_stack([X[:, j].astype(kinds[j]) for j in range(p)])
    Xfit = X.astype(np.float32) if dtype == "float32" else X.astype(np.float64)
    names = np.array(["b", "a", "d", "c"])[:k]
    y = yi if labels == "int" else names[yi]
    w = rng.integers(1, 4, size=n).astype(np.float64) if weighted else None
    path = tmp_path_factory.mktemp("da") / "d.parquet"
    pq.write_table(arrow_table(X, y, kinds=kinds, w=w), path, row_group_size=group)
    classes = names[::-1] if labels == "declared" else None
    est = MODELS[model]()
    got = br.fit_stream(
        est,
        path,
        target="label",
        weight="w" if weighted else None,
        block_rows=block,
        classes=classes,
    )
    if classes is None:
        ref = MODELS[model]().fit(Xfit, y, sample_weight=w)
    else:  # declared classes: partial_fit takes them (fit takes those of y)
        ref = MODELS[model]().partial_fit(Xfit, y, classes=classes, sample_weight=w)
    assert got is est
    assert np.array_equal(got.classes_, ref.classes_)
    assert got.stats_.allclose(ref.stats_, rtol=RTOL)
    assert np.array_equal(got.stats_.lower, ref.stats_.lower)
    assert np.array_equal(got.stats_.upper, ref.stats_.upper)


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("block_rows", [None, 40])
def test_an_infinity_is_named_by_file_row_and_column(tmp_path, model, block_rows):
    X = np.random.default_rng(5).normal(size=(200, 3))
    y = np.arange(200) % 3
    X[157, 2] = -np.inf
    pq.write_table(
        arrow_table(X, y, kinds=[np.float32] * 3), tmp_path / "inf.parquet", row_group_size=50
    )
    est = MODELS[model]()
    with pytest.raises(ValueError, match=r"inf\.parquet, rows .*row 158 .*'x2'"):
        br.fit_stream(est, tmp_path / "inf.parquet", target="label", block_rows=block_rows)
    assert not hasattr(est, "stats_")


@pytest.mark.parametrize("model", ["lda", "qda", "rda"])
def test_a_null_is_named_by_file_row_and_column(tmp_path, model):
    # the discriminant analyses take no missing values: a null is NaN, refused by row
    X = np.random.default_rng(6).normal(size=(120, 2))
    y = np.arange(120) % 2
    nulls = np.zeros(X.shape, dtype=bool)
    nulls[77, 1] = True
    table = arrow_table(X, y, kinds=[np.float64] * 2, nulls=nulls)
    pq.write_table(table, tmp_path / "null.parquet", row_group_size=30)
    est = MODELS[model]()
    with pytest.raises(ValueError, match=r"null\.parquet, rows .*row 78 .*'x1'"):
        br.fit_stream(est, tmp_path / "null.parquet", target="label")
    assert not hasattr(est, "stats_")


def test_stream_threads_count_the_cores_not_the_idle_ones(monkeypatch):
    # another process running when a pass begins must not halve the whole pass
    monkeypatch.setattr(parallel, "idle_cores", lambda: 1)
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    monkeypatch.setattr(parallel, "blas_threads", lambda: 2)
    assert parallel.thread_count(parallel.PARALLEL_MIN_WORK) == 1
    assert stream_fit.stream_threads() == 2
    with br.config_context(n_threads=1):
        assert stream_fit.stream_threads() == 1
    with br.config_context(limit_blas=False):
        assert stream_fit.stream_threads() == 1  # our threads would need a one-thread BLAS


def test_blocks_are_summarised_side_by_side_on_a_busy_machine(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "idle_cores", lambda: 1)
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    monkeypatch.setattr(parallel, "blas_threads", lambda: 2)
    rng = np.random.default_rng(7)
    y = np.arange(2000) % 3
    X = rng.normal(size=(2000, 4)) + y[:, None]
    pq.write_table(
        arrow_table(X, y, kinds=[np.float64] * 4), tmp_path / "d.parquet", row_group_size=100
    )
    from bayesrule.backends.stream import passes

    asked: list[int] = []
    original = passes._parallel.ordered_map

    def spied(fn, items, threads):
        asked.append(threads)
        return original(fn, items, threads)

    monkeypatch.setattr(passes._parallel, "ordered_map", spied)
    got = br.fit_stream(
        br.LinearDiscriminantAnalysis(), tmp_path / "d.parquet", target="label", block_rows=100
    )
    assert asked == [2]  # two blocks at a time, though one core looked busy
    assert got.stats_.allclose(br.LinearDiscriminantAnalysis().fit(X, y).stats_, rtol=RTOL)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 400),
    p=st.integers(2, 12),
    k=st.integers(1, 5),
    dtype=st.sampled_from([np.float32, np.float64]),
    weighted=st.booleans(),
    zero_column=st.booleans(),
    offset=st.sampled_from([0.0, 1e4]),
    seed=st.integers(0, 10_000),
)
def test_scatter_of_feature_major_blocks_equals_row_major(
    n, p, k, dtype, weighted, zero_column, offset, seed
):
    # the passes of their own for F-ordered blocks (Parquet's columns side by side)
    from bayesrule.stats import ScatterStats

    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 3.0, p) + offset + y[:, None]
    if zero_column:  # all-zero in one class (left out of its products), and everywhere
        X[y == y[0], 0] = 0.0
        X[:, p - 1] = 0.0
    X = X.astype(dtype)
    w = rng.integers(0, 3, n).astype(np.float64) if weighted else None
    if w is not None:
        w[0] = 1.0
    by_rows = ScatterStats.from_data(np.ascontiguousarray(X), y, w)
    by_columns = ScatterStats.from_data(np.asfortranarray(X), y, w)
    assert by_columns.allclose(by_rows, rtol=RTOL)
    assert np.array_equal(by_columns.counts, by_rows.counts)
    assert np.array_equal(by_columns.lower, by_rows.lower)
    assert np.array_equal(by_columns.upper, by_rows.upper)


def test_scatter_of_a_feature_major_block_split_over_threads_equals_row_major():
    # enough multiply-adds for the rows to be split over two threads
    from bayesrule.stats import ScatterStats

    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 30_000)
    X = (rng.normal(size=(30_000, 60)) + 50.0 * y[:, None]).astype(np.float32)
    with br.config_context(n_threads=2):
        by_columns = ScatterStats.from_data(np.asfortranarray(X), y)
    with br.config_context(n_threads=1):
        by_rows = ScatterStats.from_data(np.ascontiguousarray(X), y)
    assert by_columns.allclose(by_rows, rtol=RTOL)


def test_scratch_arrays_reused_across_blocks_give_fresh_results():
    # blocks of different shapes summarised in turn with one thread's scratch arrays
    from bayesrule.stats import ScatterStats
    from bayesrule.stats._common import scratch_space

    rng = np.random.default_rng(9)
    shapes = [(500, 7), (120, 7), (800, 3), (60, 9), (500, 7)]
    blocks = []
    for n, p in shapes:
        y = rng.integers(0, 3, n)
        X = rng.normal(size=(n, p)) * 10.0 + 1e3 * y[:, None]
        blocks.append((np.asfortranarray(X.astype(np.float32)), y))
    arrays: dict = {}
    with scratch_space(arrays):
        reused = [ScatterStats.from_data(X, y) for X, y in blocks]
    assert arrays  # the pass's arrays were used
    for (X, y), got in zip(blocks, reused, strict=True):
        fresh = ScatterStats.from_data(X, y)
        assert all(
            np.array_equal(getattr(got, f), getattr(fresh, f))
            for f in ("means", "scatter", "m3", "m4", "counts")
        )


def test_a_streamed_pass_drops_its_scratch_arrays(tmp_path, monkeypatch):
    from bayesrule.backends.stream import passes

    held: list[dict] = []
    original = passes.scratch_space

    def spied(arrays):
        held.append(arrays)
        return original(arrays)

    monkeypatch.setattr(passes, "scratch_space", spied)
    rng = np.random.default_rng(10)
    y = np.arange(900) % 3
    X = rng.normal(size=(900, 5)) + y[:, None]
    pq.write_table(
        arrow_table(X, y, kinds=[np.float32] * 5), tmp_path / "d.parquet", row_group_size=100
    )
    got = br.fit_stream(
        br.QuadraticDiscriminantAnalysis(), tmp_path / "d.parquet", target="label", block_rows=100
    )
    assert held and all(not arrays for arrays in held)  # used, then dropped with the pass
    ref = br.QuadraticDiscriminantAnalysis().fit(X.astype(np.float32), y)
    assert got.stats_.allclose(ref.stats_, rtol=RTOL)
