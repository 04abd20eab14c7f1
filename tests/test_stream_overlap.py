"""Streamed fits that overlap reading and summarising: the same statistics, errors, threads.

``fit_stream`` reads blocks ahead on a thread of its own and summarises
blocks side by side (the discriminant analyses' scatter too); GaussianNB's
statistics of blocks laid out by columns (as read from Parquet) have a pass
of their own. Here: every layout of row groups and blocks gives the
statistics of the sequential path and of ``fit`` in memory; an error of the
reading thread reaches the caller with its message and leaves the estimator
as it was; and no thread outlives a fit, whether it ends, fails or is
interrupted.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesrule as br
from _arrow_tables import write_parquet
from bayesrule.backends.stream import fit as stream_fit
from bayesrule.stats import DiagonalStats, ScatterStats

pytestmark = pytest.mark.usefixtures("no_thread_left")

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ESTIMATORS = {
    "gnb": br.GaussianNB,
    "lda": br.LinearDiscriminantAnalysis,
    "qda": br.QuadraticDiscriminantAnalysis,
}
RTOL = 1e-12


def _data(n: int, p: int, k: int, seed: int, dtype: type, labels: str) -> tuple:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k  # every class present, in every order the permutation gives
    rng.shuffle(y)
    X = (rng.normal(size=(n, p)) * 3.0 + 50.0 + y[:, None]).astype(dtype)
    if labels == "str":
        y = np.array([f"class {c}" for c in y])
    return X, y


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    model=st.sampled_from(sorted(ESTIMATORS)),
    n=st.integers(40, 700),
    p=st.integers(1, 6),
    k=st.integers(2, 4),
    row_group=st.integers(7, 300),
    block_rows=st.one_of(st.none(), st.integers(5, 250)),
    dtype=st.sampled_from([np.float32, np.float64]),
    labels=st.sampled_from(["int", "str"]),
    weighted=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_read_ahead_and_side_by_side_equal_sequential_and_fit(
    tmp_path_factory,
    monkeypatch,
    model,
    n,
    p,
    k,
    row_group,
    block_rows,
    dtype,
    labels,
    weighted,
    seed,
):
    X, y = _data(n, p, k, seed, dtype, labels)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, n) if weighted else None
    path = tmp_path_factory.mktemp("overlap") / "d.parquet"
    write_parquet(path, X, y, row_group, w=w)
    kw = {"target": "label", "block_rows": block_rows, "weight": "w" if weighted else None}

    with br.config_context(n_threads=2):  # two blocks side by side, however busy the machine
        overlapped = br.fit_stream(ESTIMATORS[model](), path, **kw)
    with monkeypatch.context() as m:
        m.setattr(stream_fit, "PREFETCH", 0)
        m.setattr(stream_fit, "PIPELINE", 1)
        sequential = br.fit_stream(ESTIMATORS[model](), path, **kw)
    in_memory = ESTIMATORS[model]().fit(X, y, sample_weight=w)

    assert overlapped.stats_.allclose(sequential.stats_, rtol=RTOL)
    assert overlapped.stats_.allclose(in_memory.stats_, rtol=RTOL)
    assert list(overlapped.classes_) == list(in_memory.classes_)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 3000),
    p=st.integers(1, 40),
    k=st.integers(1, 6),
    dtype=st.sampled_from([np.float32, np.float64]),
    missing=st.floats(0.0, 0.2),
    weighted=st.booleans(),
    labels=st.sampled_from(["int", "str"]),
    offset=st.sampled_from([0.0, 1e4]),
    seed=st.integers(0, 2**16),
)
def test_diagonal_statistics_by_columns_equal_by_rows(
    n, p, k, dtype, missing, weighted, labels, offset, seed
):
    # an F-ordered block (columns in memory, as read from Parquet) takes the
    # column pass; a C-ordered one the pass over rows: the same statistics
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    if labels == "str":
        y = np.array(["ab", "cd", "ef", "gh", "ij", "kl"])[y]
    X = (rng.normal(size=(n, p)) * 2.0 + offset).astype(dtype)
    X[rng.random((n, p)) < missing] = np.nan
    w = rng.uniform(0.1, 3.0, n) if weighted else None
    by_rows = DiagonalStats.from_data(np.ascontiguousarray(X), y, w)
    by_columns = DiagonalStats.from_data(np.asfortranarray(X), y, w)
    assert by_columns.allclose(by_rows, rtol=RTOL)
    np.testing.assert_array_equal(by_columns.lower, by_rows.lower)
    np.testing.assert_array_equal(by_columns.upper, by_rows.upper)
    np.testing.assert_array_equal(by_columns.counts, by_rows.counts)


def test_diagonal_statistics_by_columns_of_many_rows_equal_by_rows():
    # more rows than one column pass takes at once: the slices are merged
    rng = np.random.default_rng(5)
    n, p = 70_000, 3
    y = rng.integers(0, 4, n)
    X = (rng.normal(size=(n, p)) + 1e3 * y[:, None]).astype(np.float32)
    by_rows = DiagonalStats.from_data(np.ascontiguousarray(X), y)
    by_columns = DiagonalStats.from_data(np.asfortranarray(X), y)
    assert by_columns.allclose(by_rows, rtol=RTOL)


def test_scatter_statistics_by_columns_equal_by_rows():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 3, 900)
    X = rng.normal(size=(900, 5)).astype(np.float32) + y[:, None]
    assert ScatterStats.from_data(np.asfortranarray(X), y).allclose(
        ScatterStats.from_data(np.ascontiguousarray(X), y), rtol=RTOL
    )


def test_discriminant_analyses_are_summarised_side_by_side():
    # the scatter spreads one block over the threads in memory; streamed with
    # two threads, blocks go side by side instead (not DataFrame blocks, taken
    # in turn); with many threads one block at a time still takes them all
    for make in (br.LinearDiscriminantAnalysis, br.QuadraticDiscriminantAnalysis):
        assert stream_fit._side_by_side(make().input_spec(), 2)
        assert not stream_fit._side_by_side(make().input_spec(), 8)
    assert stream_fit._side_by_side(br.GaussianNB().input_spec(), 2)
    assert not stream_fit._side_by_side(br.MixedNB().input_spec(), 2)


def _blocks(n_blocks: int, fail_at: int | None, exc: BaseException, pulled: list[int]):
    rng = np.random.default_rng(0)
    try:
        for i in range(n_blocks):
            if i == fail_at:
                raise exc
            pulled.append(i)
            y = np.arange(60) % 3
            yield rng.normal(size=(60, 3)) + y[:, None], y
    finally:
        pulled.append(-1)  # the generator was closed (or ran out)


@pytest.mark.parametrize("model", sorted(ESTIMATORS))
def test_error_of_the_reading_thread_reaches_the_caller_and_leaves_the_model(model):
    est = ESTIMATORS[model]()
    pulled: list[int] = []
    with pytest.raises(RuntimeError, match="disk went away at block 3"):
        br.fit_stream(est, _blocks(10, 3, RuntimeError("disk went away at block 3"), pulled))
    assert not hasattr(est, "stats_")  # unfitted, as before
    assert pulled[-1] == -1

    fitted = ESTIMATORS[model]().fit(*next(_blocks(1, None, RuntimeError(), [])))
    before = fitted.stats_
    with pytest.raises(RuntimeError, match="disk went away"):
        br.fit_stream(fitted, _blocks(10, 5, RuntimeError("disk went away"), []), partial=True)
    assert fitted.stats_ is before  # a failed partial fit changes nothing


def test_error_in_a_later_parquet_file_names_it(tmp_path):
    X, y = _data(300, 3, 3, 1, np.float32, "int")
    write_parquet(tmp_path / "a.parquet", X, y, 50)
    data = bytearray((tmp_path / "a.parquet").read_bytes())
    (tmp_path / "b.parquet").write_bytes(bytes(data[: len(data) // 2]))
    est = br.LinearDiscriminantAnalysis()
    with pytest.raises(ValueError, match=r"b\.parquet: cannot be read as Parquet"):
        br.fit_stream(est, [tmp_path / "a.parquet", tmp_path / "b.parquet"], target="label")
    assert not hasattr(est, "stats_")


@pytest.mark.parametrize("model", sorted(ESTIMATORS))
def test_interrupt_in_the_reading_thread_stops_everything(model):
    est = ESTIMATORS[model]()
    pulled: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        br.fit_stream(est, _blocks(50, 4, KeyboardInterrupt(), pulled))
    assert not hasattr(est, "stats_")
    assert pulled[-1] == -1


class _Interrupting:
    """A block whose conversion to an array is interrupted (Ctrl-C while it is summarised)."""

    shape = (60, 3)
    ndim = 2
    dtype = np.dtype(np.float64)

    def __array__(self, dtype=None, copy=None):
        raise KeyboardInterrupt


@pytest.mark.parametrize("model", sorted(ESTIMATORS))
def test_interrupt_while_summarising_stops_the_reader(model):
    pulled: list[int] = []

    def source():
        rng = np.random.default_rng(1)
        try:
            for i in range(1000):
                pulled.append(i)
                y = np.arange(60) % 3
                X = rng.normal(size=(60, 3)) + y[:, None]
                yield (_Interrupting() if i == 2 else X), y
        finally:
            pulled.append(-1)

    est = ESTIMATORS[model]()
    with pytest.raises(KeyboardInterrupt):
        br.fit_stream(est, source())
    assert not hasattr(est, "stats_")
    assert pulled[-1] == -1  # the source was closed
    # the reader stopped a few blocks ahead, not at the end of the source
    assert max(pulled) < 2 + stream_fit.PREFETCH + stream_fit.PIPELINE + 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gaussian_nb_streams_missing_values_as_fit(tmp_path, dtype):
    # NaN cells and Arrow nulls are both missing values, read ahead and side by side
    X, y = _data(900, 4, 3, 7, dtype, "str")
    rng = np.random.default_rng(7)
    X[rng.random(X.shape) < 0.05] = np.nan
    nulls = rng.random(X.shape[0]) < 0.05
    mask = np.zeros(X.shape, dtype=bool)
    mask[:, 0] = nulls  # nulls in place of values
    write_parquet(tmp_path / "d.parquet", X, y, 130, nulls=mask)
    with br.config_context(n_threads=2):
        streamed = br.fit_stream(br.GaussianNB(), tmp_path / "d.parquet", target="label")
    X[nulls, 0] = np.nan
    assert streamed.stats_.allclose(br.GaussianNB().fit(X, y).stats_, rtol=RTOL)
