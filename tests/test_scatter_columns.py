"""Per-class scatter from a block's columns (Arrow's buffers): the statistics of the laid-out block.

``ScatterStats.from_columns`` (and ``FourthMomentStats``'s) gathers each
column once, in class order, and runs the pass of ``from_data`` on that
feature-major array without gathering again; the discriminant analyses'
streaming task hands it the Parquet block's columns
(``ColumnSummariser.column_statistics``). Here, over generated data: the
statistics equal ``from_data`` of the columns side by side (to 1e-12
relative, bounds exactly), for float32 and float64, data far from the
origin, declared classes without rows, sorted and unsorted labels; parts
merge to the whole; a NaN, an infinity, sample weights or a refused label
send the block to the laid-out path (whose error names the row), and a
streamed fit from Parquet takes the column path and equals ``fit``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesrule as br
from _arrow_tables import columns_of, write_parquet
from _generated import class_rows
from bayesrule.estimators._tasks import ColumnSummariser
from bayesrule.stats import FourthMomentStats, PooledScatterStats, ScatterStats

RTOL = 1e-12


def _data(n, p, k, dtype, offset, seed, sort=False):
    return class_rows(n, p, k, dtype, offset, seed, sort=sort)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 400),
    p=st.integers(1, 9),
    k=st.integers(1, 5),
    dtype=st.sampled_from([np.float32, np.float64]),
    offset=st.sampled_from([0.0, 1e4]),
    stats=st.sampled_from([ScatterStats, FourthMomentStats]),
    declared=st.booleans(),
    sort=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_from_columns_equals_from_data(n, p, k, dtype, offset, stats, declared, sort, seed):
    X, y = _data(n, p, k, dtype, offset, seed, sort)
    classes = np.arange(k + 1) if declared else None  # class k has no row
    whole = stats.from_data(X, y, classes=classes)
    cols = stats.from_columns(columns_of(X), y, classes=classes)
    assert type(cols) is stats
    assert cols.allclose(whole, rtol=RTOL)
    np.testing.assert_array_equal(cols.classes, whole.classes)
    np.testing.assert_array_equal(cols.counts, whole.counts)
    np.testing.assert_array_equal(cols.lower, whole.lower)
    np.testing.assert_array_equal(cols.upper, whole.upper)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 200),
    p=st.integers(1, 5),
    bad=st.sampled_from([np.nan, np.inf, -np.inf]),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_a_nan_or_infinity_reaches_the_means_and_the_range_skips_it(n, p, bad, dtype, seed):
    """As from_data: the means are not finite (the caller refuses the block), the range ignores it."""
    X, y = _data(n, p, 2, dtype, 0.0, seed)
    rng = np.random.default_rng(seed)
    X[rng.integers(n), rng.integers(p)] = bad
    with np.errstate(invalid="ignore", over="ignore"):
        whole = ScatterStats.from_data(X, y)
        cols = ScatterStats.from_columns(columns_of(X), y)
    assert not np.isfinite(cols.means).all()
    np.testing.assert_array_equal(np.isfinite(cols.means), np.isfinite(whole.means))
    np.testing.assert_array_equal(cols.lower, whole.lower)
    np.testing.assert_array_equal(cols.upper, whole.upper)


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(4, 300),
    p=st.integers(1, 7),
    k=st.integers(1, 4),
    dtype=st.sampled_from([np.float32, np.float64]),
    cut=st.floats(0.1, 0.9),
    seed=st.integers(0, 2**16),
)
def test_parts_from_columns_merge_to_the_whole(n, p, k, dtype, cut, seed):
    X, y = _data(n, p, k, dtype, 100.0, seed)
    m = max(1, min(n - 1, int(cut * n)))
    parts = ScatterStats.from_columns(columns_of(X[:m]), y[:m], classes=np.arange(k)).merge(
        ScatterStats.from_columns(columns_of(X[m:]), y[m:], classes=np.arange(k))
    )
    assert parts.allclose(ScatterStats.from_data(X, y, classes=np.arange(k)), rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_already_in_class_order_are_read_in_place(dtype, monkeypatch):
    """A feature-major block whose labels are sorted is not gathered again: the same statistics."""
    X, y = _data(3000, 6, 3, dtype, 50.0, 7, sort=True)
    taken = []
    real_take = np.take

    def spy(a, *args, **kwargs):
        taken.append(kwargs.get("out") is not None and np.shape(kwargs["out"])[1] >= 1000)
        return real_take(a, *args, **kwargs)

    from bayesrule.stats import _moments

    monkeypatch.setattr(_moments.np, "take", spy)
    F = ScatterStats.from_data(np.asfortranarray(X), y)
    monkeypatch.undo()
    assert taken and not any(taken)  # samples only: no range of rows was gathered
    monkeypatch.setattr(_moments.np, "take", spy)
    ScatterStats.from_data(np.asfortranarray(X[::-1]), y[::-1])
    monkeypatch.undo()
    assert any(taken)  # rows out of class order are gathered
    assert F.allclose(ScatterStats.from_data(np.ascontiguousarray(X), y), rtol=RTOL)


def test_from_columns_refuses_what_is_not_one_float_block():
    X, y = _data(20, 3, 2, np.float64, 0.0, 1)
    cols = columns_of(X)
    with pytest.raises(ValueError, match="at least one feature"):
        ScatterStats.from_columns([], y)
    with pytest.raises(ValueError, match="column 1 is float64 of shape \\(19,\\)"):
        ScatterStats.from_columns([cols[0], cols[1][:19], cols[2]], y)
    with pytest.raises(ValueError, match="column 2 is float32"):
        ScatterStats.from_columns([cols[0], cols[1], cols[2].astype(np.float32)], y)
    with pytest.raises(ValueError, match="column 0 is int64"):
        ScatterStats.from_columns([c.astype(np.int64) for c in cols], y)
    with pytest.raises(ValueError, match="20 labels, one per row; got shape \\(19,\\)"):
        ScatterStats.from_columns(cols, y[:19])
    with pytest.raises(ValueError):
        ScatterStats.from_columns(cols, y, classes=[0])  # label 1 is not declared


@pytest.mark.parametrize(
    "make",
    [
        lambda: br.LinearDiscriminantAnalysis(),
        lambda: br.LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto"),
        lambda: br.QuadraticDiscriminantAnalysis(reg_param=0.1),
    ],
)
def test_column_task_equals_the_laid_out_task_or_declines(make):
    X, y = _data(500, 5, 3, np.float32, 10.0, 3)
    task = make().summariser()
    assert isinstance(task, ColumnSummariser)
    by_columns = task.column_statistics(columns_of(X), y)
    assert by_columns is not None
    laid_out = task.statistics(X, y)
    assert type(by_columns) is type(laid_out)
    assert by_columns.allclose(laid_out, rtol=RTOL)
    # the block goes to the laid-out path, whose error names the row: NaN, infinity,
    # weights, a label refused, no rows, columns of two dtypes
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[17, 2] = bad
        assert task.column_statistics(columns_of(Xb), y) is None
        with pytest.raises(ValueError, match="row 17"):
            task.statistics(Xb, y)
    assert task.column_statistics(columns_of(X), y, np.ones(500)) is None
    assert task.column_statistics(columns_of(X), y, classes=[0, 1]) is None
    assert task.column_statistics(columns_of(X[:0]), y[:0]) is None
    mixed = columns_of(X)
    mixed[1] = mixed[1].astype(np.float64)
    assert task.column_statistics(mixed, y) is None


def test_pooled_lda_task_takes_the_column_path():
    """LDA's pooled statistics (a backend's option) have a column pass too: equal to the laid-out one."""
    X, y = _data(200, 4, 3, np.float64, 0.0, 5)
    task = br.LinearDiscriminantAnalysis().summariser(pooled_scatter=True)
    by_columns = task.column_statistics(columns_of(X), y)
    laid_out = task.statistics(X, y)
    assert isinstance(by_columns, PooledScatterStats)
    assert isinstance(laid_out, PooledScatterStats)
    assert by_columns.allclose(laid_out, rtol=RTOL)
    assert br.LinearDiscriminantAnalysis().input_spec().column_blocks
    assert not br.RegularizedDiscriminantAnalysisCV().input_spec().column_blocks


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    model=st.sampled_from(["lda", "qda"]),
    dtype=st.sampled_from(["float32", "float64"]),
    group=st.integers(40, 400),
    seed=st.integers(0, 2**16),
)
def test_streamed_fit_takes_the_column_path_and_equals_fit(
    tmp_path_factory, monkeypatch, model, dtype, group, seed
):
    pytest.importorskip("pyarrow")
    pytest.importorskip("pyarrow.parquet")
    X, y = _data(900, 6, 4, np.dtype(dtype).type, 1e3, seed)
    path = write_parquet(tmp_path_factory.mktemp("cols") / "part.parquet", X, y, group)
    calls = []
    real = ColumnSummariser.column_statistics

    def spy(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(ColumnSummariser, "column_statistics", spy)
    make = {
        "lda": br.LinearDiscriminantAnalysis,
        "qda": lambda: br.QuadraticDiscriminantAnalysis(reg_param=0.1),
    }[model]
    est = br.fit_stream(make(), path, target="label", progress=False)
    monkeypatch.undo()
    assert calls and all(calls)
    whole = make().fit(X, y)
    assert est.stats_.allclose(whole.stats_, rtol=1e-10)
    assert est.n_samples_seen_ == 900
    np.testing.assert_array_equal(est.predict(X), whole.predict(X))
    np.testing.assert_allclose(est.predict_proba(X), whole.predict_proba(X), rtol=1e-8, atol=1e-12)


def test_a_streamed_pass_restores_numpys_huge_page_setting(tmp_path):
    """The pass keeps NumPy's large arrays on ordinary pages and restores the setting after."""
    from bayesrule.backends.stream import passes

    toggle = passes._madvise_toggle()
    if toggle is None:
        pytest.skip("this NumPy has no huge-page switch")
    initial = toggle(True)
    seen = []
    X, y = _data(300, 3, 2, np.float64, 0.0, 9)
    blocks = [(X[:150], y[:150]), (X[150:], y[150:])]

    class Spy:
        def __iter__(self):
            for block in blocks:
                seen.append(toggle(False))  # the setting while the pass runs (kept off)
                yield block

    for before in (True, False):
        toggle(before)
        with passes._small_pages():  # nested passes: restored once the last one ends
            br.fit_stream(br.QuadraticDiscriminantAnalysis(reg_param=0.1), Spy(), progress=False)
            assert toggle(False) is False
        assert toggle(before) is before
        assert seen and not any(seen)
        seen.clear()
    toggle(initial)
