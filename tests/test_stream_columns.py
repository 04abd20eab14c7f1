"""GaussianNB streamed from Arrow's column buffers: the statistics of the laid-out blocks.

``fit_stream`` hands GaussianNB's task the feature columns of each Parquet
block as zero-copy NumPy views (``column_statistics``, through
``DiagonalStats.from_columns``) instead of laying the block out as a 2-D
array. Here: that path gives the statistics of the laid-out path and of
``fit`` in memory (to 1e-10) over shapes, dtypes, NaN and nulls, row-group
and block sizes, empty files and one-row groups; blocks it cannot take
(nulls, mixed dtypes, weights, infinities) go the laid-out way, whose
errors name the file and the row; and no read-ahead thread outlives a fit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesrule as br
from _arrow_tables import arrow_table, our_threads
from bayesrule.backends.stream import blocks
from bayesrule.stats import DiagonalStats

pytestmark = pytest.mark.usefixtures("no_thread_left")

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

RTOL = 1e-10


class _Spy:
    """Counts the blocks GaussianNB's task summarised from their columns."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.by_columns = 0
        original = DiagonalStats.from_columns.__func__  # type: ignore[attr-defined]

        def counted(cls, *args, **kwargs):
            self.by_columns += 1
            return original(cls, *args, **kwargs)

        monkeypatch.setattr(DiagonalStats, "from_columns", classmethod(counted))


def _laid_out(monkeypatch, *args, **kwargs):
    """fit_stream with every block laid out as a 2-D array (the path before column views)."""
    with monkeypatch.context() as m:
        m.setattr(blocks, "_column_views", lambda *a, **k: None)
        return br.fit_stream(*args, **kwargs)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(5, 260),
    p=st.integers(1, 5),
    k=st.integers(1, 4),
    dtype=st.sampled_from(["float32", "float64", "mixed"]),
    nan=st.sampled_from([0.0, 0.0, 0.1]),
    nulls=st.booleans(),
    group=st.integers(1, 120),
    block=st.one_of(st.none(), st.integers(1, 150)),
    offset=st.sampled_from([0.0, 1e4]),
    seed=st.integers(0, 10_000),
)
def test_columns_give_the_statistics_of_the_laid_out_blocks_and_of_fit(
    tmp_path_factory, monkeypatch, n, p, k, dtype, nan, nulls, group, block, offset, seed
):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % (k + 1)  # k + 1 >= 2 classes, shuffled
    rng.shuffle(y)
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 5.0, size=p) + offset + y[:, None]
    if dtype == "float32":
        X = X.astype(np.float32)
    full = X.copy()
    X[rng.random(X.shape) < nan] = np.nan
    mask = rng.random(X.shape) < 0.1 if nulls else None
    # every feature observed in some row of every class (else the model refuses it)
    firsts = np.unique(y, return_index=True)[1]
    X[firsts] = full[firsts]
    if mask is not None:
        mask[firsts] = False
    kinds = None
    if dtype == "mixed":  # float32 and float64 columns: read as float64
        kinds = [np.float32 if j % 2 else np.float64 for j in range(p)]
        X = np.column_stack([X[:, j].astype(kinds[j]) for j in range(p)]).astype(np.float64)
    path = tmp_path_factory.mktemp("cols") / "d.parquet"
    pq.write_table(arrow_table(X, y, nulls=mask, kinds=kinds), path, row_group_size=group)
    spy = _Spy(monkeypatch)
    got = br.fit_stream(br.GaussianNB(), path, target="label", block_rows=block)
    if dtype != "mixed" and not nulls:
        assert spy.by_columns > 0  # the column views were used
    before = spy.by_columns
    old = _laid_out(monkeypatch, br.GaussianNB(), path, target="label", block_rows=block)
    assert spy.by_columns == before  # ... and not here
    Xm = X.copy()
    if mask is not None:
        Xm[mask] = np.nan
    ref = br.GaussianNB().fit(Xm, y)
    assert got.stats_.allclose(old.stats_, rtol=RTOL)
    assert got.stats_.allclose(ref.stats_, rtol=RTOL)
    assert np.array_equal(got.stats_.lower, ref.stats_.lower, equal_nan=True)
    assert np.array_equal(got.stats_.upper, ref.stats_.upper, equal_nan=True)
    assert got.theta_.dtype == ref.theta_.dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # names: fitted from a file, given an array
        np.testing.assert_allclose(got.predict_proba(Xm), ref.predict_proba(Xm), rtol=1e-8)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 300),
    p=st.integers(1, 6),
    k=st.integers(1, 5),
    dtype=st.sampled_from([np.float32, np.float64]),
    nan=st.sampled_from([0.0, 0.0, 0.2]),
    weighted=st.booleans(),
    declared=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_diagonal_stats_from_columns_equal_from_data(n, p, k, dtype, nan, weighted, declared, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    X = (rng.normal(size=(n, p)) * 2.0 - 1e3 * y[:, None]).astype(dtype)
    X[rng.random(X.shape) < nan] = np.nan
    w = rng.integers(0, 4, size=n).astype(float) if weighted else None
    classes = np.arange(k + 1) if declared else None
    if n == 0 and classes is None:
        classes = np.arange(2)
    columns = [X[:, j].copy() for j in range(p)]  # separate buffers, as Arrow's
    got = DiagonalStats.from_columns(columns, y, w, classes=classes)
    ref = DiagonalStats.from_data(X, y, w, classes=classes)
    assert got.allclose(ref, rtol=RTOL)
    assert np.array_equal(got.lower, ref.lower, equal_nan=True)
    assert np.array_equal(got.upper, ref.upper, equal_nan=True)


def test_diagonal_stats_from_columns_refuses_ragged_or_no_columns():
    with pytest.raises(ValueError, match=r"column 1 has shape \(4,\), column 0 \(5,\)"):
        DiagonalStats.from_columns([np.zeros(5), np.zeros(4)], np.zeros(5))
    with pytest.raises(ValueError, match="at least one feature"):
        DiagonalStats.from_columns([], np.zeros(5))
    with pytest.raises(ValueError, match=r"one label per row \(5\)"):
        DiagonalStats.from_columns([np.zeros(5)], np.zeros(4))


def test_empty_files_and_one_row_groups(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3)).astype(np.float32)
    y = np.arange(90) % 3
    pq.write_table(arrow_table(X[:0], y[:0]), tmp_path / "a.parquet")  # no row
    pq.write_table(arrow_table(X[:40], y[:40]), tmp_path / "b.parquet", row_group_size=1)
    pq.write_table(arrow_table(X[40:0:-1][:0], y[:0]), tmp_path / "c.parquet")  # no row
    pq.write_table(arrow_table(X[40:], y[40:]), tmp_path / "d.parquet", row_group_size=7)
    spy = _Spy(monkeypatch)
    got = br.fit_stream(br.GaussianNB(), tmp_path, target="label", block_rows=16)
    assert spy.by_columns > 0
    assert got.stats_.allclose(br.GaussianNB().fit(X, y).stats_, rtol=RTOL)
    assert got.n_samples_seen_ == 90
    with pytest.raises(ValueError, match="holds no rows"):
        br.fit_stream(
            br.GaussianNB(), [tmp_path / "a.parquet", tmp_path / "c.parquet"], target="label"
        )


def test_weights_take_the_laid_out_path_and_equal_fit(tmp_path, monkeypatch):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    y = np.arange(200) % 2
    w = rng.integers(0, 3, size=200).astype(np.float64)
    pq.write_table(arrow_table(X, y, w=w), tmp_path / "w.parquet", row_group_size=33)
    spy = _Spy(monkeypatch)
    got = br.fit_stream(br.GaussianNB(), tmp_path / "w.parquet", target="label", weight="w")
    assert spy.by_columns == 0
    assert got.stats_.allclose(br.GaussianNB().fit(X, y, sample_weight=w).stats_, rtol=RTOL)


@pytest.mark.parametrize("block_rows", [None, 64])
def test_an_infinity_is_named_by_file_row_and_column(tmp_path, block_rows):
    X = np.random.default_rng(5).normal(size=(200, 3)).astype(np.float32)
    y = np.arange(200) % 3
    X[157, 1] = np.inf
    pq.write_table(arrow_table(X, y), tmp_path / "inf.parquet", row_group_size=50)
    est = br.GaussianNB()
    with pytest.raises(ValueError, match=r"inf\.parquet, rows .*infinity at row 158 .*'x1'"):
        br.fit_stream(est, tmp_path / "inf.parquet", target="label", block_rows=block_rows)
    assert not hasattr(est, "stats_")


def test_a_bad_label_is_refused_as_by_the_laid_out_path(tmp_path):
    X = np.random.default_rng(6).normal(size=(60, 2))
    y = np.linspace(0.0, 1.0, 60)  # continuous labels
    pq.write_table(arrow_table(X, y), tmp_path / "y.parquet")
    with pytest.raises(ValueError, match=r"y\.parquet.*continuous"):
        br.fit_stream(br.GaussianNB(), tmp_path / "y.parquet", target="label")


def test_corrupt_file_after_good_ones_is_named_and_the_reader_ends(tmp_path):
    X = np.random.default_rng(7).normal(size=(300, 3)).astype(np.float32)
    y = np.arange(300) % 3
    pq.write_table(arrow_table(X, y), tmp_path / "a.parquet", row_group_size=40)
    data = (tmp_path / "a.parquet").read_bytes()
    (tmp_path / "b.parquet").write_bytes(data[: len(data) // 2])
    est = br.GaussianNB()
    with pytest.raises(ValueError, match=r"b\.parquet: cannot be read as Parquet"):
        br.fit_stream(est, [tmp_path / "a.parquet", tmp_path / "b.parquet"], target="label")
    assert not hasattr(est, "stats_")


def test_read_ahead_stops_when_the_consumer_leaves_early():
    produced: list[int] = []

    def chunks():
        try:
            for i in range(1000):
                produced.append(i)
                yield i
        finally:
            produced.append(-1)

    ahead = blocks._prefetched(chunks(), depth=2)
    assert next(ahead) == 0
    ahead.close()  # the consumer stops after one block
    assert produced[-1] == -1  # the source was closed ...
    assert max(produced) <= 4  # ... a few blocks ahead, not read to its end
    assert not [t for t in our_threads() if t.name == "bayesrule-read-ahead" and t.is_alive()]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_string_labels_and_declared_classes_by_columns_equal_fit(tmp_path, monkeypatch, dtype):
    rng = np.random.default_rng(8)
    codes = np.arange(500) % 3
    rng.shuffle(codes)
    y = np.array(["setosa", "versicolor", "virginica"])[codes]
    X = (rng.normal(size=(500, 4)) * 0.01 + 1e5 + codes[:, None]).astype(dtype)
    pq.write_table(arrow_table(X, y), tmp_path / "s.parquet", row_group_size=90)
    spy = _Spy(monkeypatch)
    classes = ["setosa", "unseen", "versicolor", "virginica"]
    got = br.fit_stream(br.GaussianNB(), tmp_path / "s.parquet", target="label", classes=classes)
    assert spy.by_columns > 0
    ref = br.GaussianNB().partial_fit(X, y, classes=classes)
    assert got.stats_.allclose(ref.stats_, rtol=RTOL)
    assert list(got.classes_) == classes
