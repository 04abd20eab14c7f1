"""Out-of-core fits from Parquet: the faster paths give the statistics of the in-memory fit.

* GaussianNB's column pass (``DiagonalStats.from_columns``: radix class
  order, per-class centring in place, the thread's scratch buffers reused
  from block to block) equals ``from_data`` on the laid-out rows and
  ``fit`` in memory to 1e-10, for classes missing from some blocks,
  declared classes without rows, data far from the origin, and blocks of
  changing sizes; merged parts equal the whole.
* The scatter pass of LDA/QDA (one ``moments_about`` for C- and F-ordered
  blocks, its buffers the thread's scratch arrays) gives the same numbers
  for both layouts and for blocks of changing shapes within one pass.
* ``fit_stream`` does not lay out the first block of an estimator that
  infers nothing from it, and the Arrow memory pool it reads with is put
  back when the stream ends, whether it ends well or not.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesrule as br
from bayesrule.backends.stream import blocks, parquet_files
from bayesrule.stats import DiagonalStats, ScatterStats, scratch_space

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

RTOL = 1e-10


def _close(a: np.ndarray, b: np.ndarray, rtol: float = RTOL) -> None:
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * max(scale, 1e-300))


def _data(rng, n, p, k, dtype, offset, spread):
    """``n`` rows of ``k`` classes (some classes may get no row), far from the origin if asked."""
    y = rng.integers(0, k, size=n)
    means = offset + rng.normal(scale=spread, size=(k, p))
    X = (means[y] + rng.normal(size=(n, p)) * rng.uniform(0.01, 3.0, size=p)).astype(dtype)
    return X, y


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(1, 400), min_size=1, max_size=5),
    p=st.integers(1, 9),
    k=st.integers(2, 7),
    dtype=st.sampled_from([np.float32, np.float64]),
    offset=st.sampled_from([0.0, 1e3, -1e6]),
    spread=st.sampled_from([0.0, 1.0, 100.0]),
    seed=st.integers(0, 10_000),
)
def test_column_pass_merged_over_blocks_equals_the_whole_and_from_data(
    sizes, p, k, dtype, offset, spread, seed
):
    rng = np.random.default_rng(seed)
    X, y = _data(rng, sum(sizes), p, k, dtype, offset, spread)
    classes = np.arange(k + 1)  # one declared class never appears
    whole = DiagonalStats.from_data(X, y, classes=classes)
    merged = DiagonalStats.empty(classes, p)
    scratch: dict = {}
    start = 0
    for m in sizes:  # blocks of changing sizes, one thread's scratch buffers reused
        part = X[start : start + m]
        with scratch_space(scratch):
            got = DiagonalStats.from_columns(
                [part[:, j] for j in range(p)], y[start : start + m], classes=classes
            )
        ref = DiagonalStats.from_data(part, y[start : start + m], classes=classes)
        assert got.allclose(ref, rtol=RTOL)
        merged = merged.merge(got)
        start += m
    assert merged.allclose(whole, rtol=RTOL)
    np.testing.assert_array_equal(merged.counts, np.bincount(y, minlength=k + 1))
    _close(merged.means, whole.means)
    _close(merged.m2, whole.m2)
    np.testing.assert_array_equal(merged.lower, whole.lower)
    np.testing.assert_array_equal(merged.upper, whole.upper)


def _write(path, X, y, group):
    cols = {f"x{j}": pa.array(X[:, j]) for j in range(X.shape[1])}
    cols["label"] = pa.array(y)
    pq.write_table(pa.table(cols), path, row_group_size=group)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    n=st.integers(2, 3000),
    p=st.integers(1, 6),
    group=st.integers(1, 2000),
    dtype=st.sampled_from([np.float32, np.float64]),
    nan=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_gaussian_nb_streamed_by_row_groups_equals_fit(
    tmp_path_factory, n, p, group, dtype, nan, seed
):
    # labels sorted by blocks of rows: most row groups miss most classes
    rng = np.random.default_rng(seed)
    X, _ = _data(rng, n, p, 4, dtype, 50.0, 10.0)
    y = np.sort(rng.integers(0, 4, size=n))
    if nan:
        X[rng.random(X.shape) < 0.05] = np.nan
    if np.unique(y).size < 2:
        y[0], y[-1] = 0, 1
    path = tmp_path_factory.mktemp("gnb") / "data.parquet"
    _write(path, X, y, group)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a class of one row is warned about by both
        got = br.fit_stream(br.GaussianNB(), path, target="label", progress=False)
        ref = br.GaussianNB().fit(X, y)
    np.testing.assert_array_equal(got.classes_, ref.classes_)
    np.testing.assert_array_equal(got.class_count_, ref.class_count_)
    _close(got.theta_, ref.theta_)
    _close(got.var_, ref.var_)


def test_gaussian_nb_first_block_is_not_laid_out(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    X, y = _data(rng, 500, 5, 3, np.float32, 0.0, 1.0)
    _write(tmp_path / "a.parquet", X, y, 100)
    laid = []
    original = blocks._fill_matrix

    def counted(*args, **kwargs):
        laid.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(blocks, "_fill_matrix", counted)
    got = br.fit_stream(br.GaussianNB(), tmp_path, target="label", progress=False)
    assert laid == []  # every block summarised from Arrow's columns, the first included
    ref = br.GaussianNB().fit(X, y)
    _close(got.theta_, ref.theta_)
    _close(got.var_, ref.var_)
    # an estimator that infers its columns from the first block still gets it laid out
    frame = pa.table({"a": pa.array(X[:, 0]), "b": pa.array(["u", "v"] * 250), "label": y})
    pq.write_table(frame, tmp_path / "m.parquet", row_group_size=100)
    mixed = br.fit_stream(br.MixedNB(), tmp_path / "m.parquet", target="label", progress=False)
    assert mixed.n_features_in_ == 2


@pytest.mark.skipif(
    "mimalloc" not in getattr(pa, "supported_memory_backends", lambda: [])(),
    reason="pyarrow built without mimalloc",
)
def test_the_arrow_pool_is_switched_for_the_read_and_put_back(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    X, y = _data(rng, 300, 3, 2, np.float32, 0.0, 1.0)
    _write(tmp_path / "a.parquet", X, y, 50)
    before = pa.default_memory_pool()
    seen = []
    original = parquet_files._parquet_batches

    def spying(*args, **kwargs):
        seen.append(pa.default_memory_pool().backend_name)
        yield from original(*args, **kwargs)

    monkeypatch.setattr(parquet_files, "_parquet_batches", spying)
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    try:
        br.fit_stream(br.GaussianNB(), tmp_path, target="label", progress=False)
        assert seen and all(name != "mimalloc" for name in seen)
        assert pa.default_memory_pool().backend_name == "mimalloc"
        # an error part-way through puts it back too
        (tmp_path / "b.parquet").write_bytes(b"not parquet at all")
        with pytest.raises(ValueError, match=r"b\.parquet"):
            br.fit_stream(br.GaussianNB(), tmp_path, target="label", progress=False)
        assert pa.default_memory_pool().backend_name == "mimalloc"
        # a pool the user chose is left alone
        seen.clear()
        pa.set_memory_pool(pa.system_memory_pool())
        (tmp_path / "b.parquet").unlink()
        br.fit_stream(br.GaussianNB(), tmp_path, target="label", progress=False)
        assert seen == ["system"]
    finally:
        pa.set_memory_pool(before)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shapes=st.lists(st.tuples(st.integers(3, 300), st.integers(2, 12)), min_size=1, max_size=4),
    k=st.integers(2, 4),
    dtype=st.sampled_from([np.float32, np.float64]),
    offset=st.sampled_from([0.0, 1e4]),
    weighted=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_scatter_pass_is_the_same_for_both_layouts_with_scratch_reused(
    shapes, k, dtype, offset, weighted, seed
):
    rng = np.random.default_rng(seed)
    scratch: dict = {}
    for n, p in shapes:  # blocks of changing shapes within one pass's scratch
        X, y = _data(rng, n, p, k, dtype, offset, 1.0)
        w = rng.uniform(0.0, 2.0, size=n) if weighted else None
        rows = ScatterStats.from_data(X, y, w, classes=np.arange(k))
        with scratch_space(scratch):
            cols = ScatterStats.from_data(np.asfortranarray(X), y, w, classes=np.arange(k))
        assert cols.allclose(rows, rtol=RTOL)
        np.testing.assert_array_equal(cols.counts, rows.counts)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(0, 60), min_size=1, max_size=3),
    kinds=st.lists(
        st.sampled_from(["float32", "float64", "int64", "bool"]), min_size=1, max_size=5
    ),
    nulls=st.booleans(),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 10_000),
)
def test_feature_major_blocks_are_the_columns_in_the_rings_arrays(sizes, kinds, nulls, dtype, seed):
    # LDA's and QDA's blocks (F order) are filled column by column into the ring's
    # reused arrays: the values of the laid-out columns, NaN for a null
    rng = np.random.default_rng(seed)
    names = [f"c{j}" for j in range(len(kinds))]
    batches = []
    for m in sizes:
        cols = []
        for kind in kinds:
            values = rng.normal(size=m) * 10
            mask = rng.random(m) < 0.2 if nulls and kind != "bool" else None
            if kind == "bool":
                arr = pa.array(values > 0)
            elif kind == "int64":
                arr = pa.array(values.astype(np.int64), mask=mask)
            else:
                arr = pa.array(values.astype(kind), mask=mask)
            cols.append(arr)
        batches.append(pa.record_batch(cols, names=names))
    table = pa.Table.from_batches(batches)
    expected = np.column_stack(
        [
            np.asarray(table.column(name).to_pandas(), dtype=np.float64).astype(dtype)
            for name in names
        ]
    )
    ring = blocks._Ring(3, order="F")
    for _ in range(4):  # the ring's arrays are used in turn, and refilled
        got = blocks._fill_matrix(table, names, dtype, ring)
        assert got.dtype == dtype and got.shape == (table.num_rows, len(names))
        assert got.flags.f_contiguous
        if got.size:
            assert any(np.shares_memory(got, s) for s in ring.slots if s is not None)
        np.testing.assert_array_equal(got, expected)
