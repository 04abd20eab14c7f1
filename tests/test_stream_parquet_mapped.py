"""Parquet files streamed through memory maps: remapped spans, and files that cannot be mapped."""

from __future__ import annotations

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import bayesrule  # noqa: E402
from bayesrule.backends.stream import parquet_files  # noqa: E402


def _write(path, rng, n, p, group, dtype, compression="snappy", nullable=True):
    X = (rng.standard_normal((n, p)) * rng.uniform(0.5, 3.0, p) + 1e6).astype(dtype)
    y = rng.integers(0, 4, n).astype(np.int32)
    names = [f"x{j}" for j in range(p)]
    kind = pa.from_numpy_dtype(np.dtype(dtype))
    schema = pa.schema(
        [pa.field(c, kind, nullable=nullable) for c in names]
        + [pa.field("y", pa.int32(), nullable=nullable)]
    )
    table = pa.table({**{c: X[:, j] for j, c in enumerate(names)}, "y": y}, schema=schema)
    pq.write_table(table, path, row_group_size=group, compression=compression)
    return X, y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("span", ["released", 1, 10_000, None])
@pytest.mark.parametrize(("compression", "nullable"), [("snappy", True), ("none", False)])
def test_mapped_spans_fit_as_in_memory(tmp_path, monkeypatch, dtype, span, compression, nullable):
    # 'released': one map per file, each row group's pages let go once read (tables
    # read before stay valid: a page let go is read again from the file). The others
    # are the platforms without madvise: span=1 remaps before every row group, None
    # keeps one map per file. Uncompressed required columns are where Arrow may share
    # the map
    if span != "released":
        monkeypatch.setattr(parquet_files, "_map_parquet", lambda path: None)
        if span is not None:
            monkeypatch.setattr(parquet_files, "_MAPPED_BYTES", span)
    rng = np.random.default_rng(7)
    parts = [
        _write(tmp_path / f"p{i}.parquet", rng, 700 + 91 * i, 5, 128, dtype, compression, nullable)
        for i in range(3)
    ]
    X = np.concatenate([a for a, _ in parts])
    y = np.concatenate([b for _, b in parts])
    streamed = bayesrule.fit_stream(bayesrule.GaussianNB(), tmp_path, target="y", progress=False)
    whole = bayesrule.GaussianNB().fit(X, y)
    np.testing.assert_allclose(streamed.theta_, whole.theta_, rtol=1e-12)
    np.testing.assert_allclose(streamed.var_, whole.var_, rtol=1e-10)
    assert streamed.n_samples_seen_ == len(y)


def test_file_that_cannot_be_mapped_is_read(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    X, y = _write(tmp_path / "a.parquet", rng, 900, 4, 100, np.float32)
    real = pq.ParquetFile
    mapped = []

    def refuse_maps(path, *args, memory_map=False, **kwargs):
        mapped.append(memory_map)
        if memory_map:
            raise OSError("mmap: not supported here")
        return real(path, *args, **kwargs)

    def no_map(*args, **kwargs):
        raise OSError("mmap: not supported here")

    monkeypatch.setattr(pq, "ParquetFile", refuse_maps)
    monkeypatch.setattr(parquet_files.mmap, "mmap", no_map)
    streamed = bayesrule.fit_stream(bayesrule.GaussianNB(), tmp_path, target="y", progress=False)
    whole = bayesrule.GaussianNB().fit(X, y)
    assert True in mapped and False in mapped  # a map was tried, then a plain read
    np.testing.assert_allclose(streamed.theta_, whole.theta_, rtol=1e-12)
    np.testing.assert_allclose(streamed.var_, whole.var_, rtol=1e-10)


def test_stream_stopped_early_closes_the_file(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    _write(tmp_path / "a.parquet", rng, 1000, 3, 100, np.float64)
    real = pq.ParquetFile
    opened = []

    class Tracked(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.was_closed = False
            opened.append(self)

        def close(self, force=False):
            self.was_closed = True
            super().close(force=force)

    monkeypatch.setattr(pq, "ParquetFile", Tracked)
    monkeypatch.setattr(parquet_files, "_MAPPED_BYTES", 1)
    blocks = bayesrule.read_blocks(tmp_path / "a.parquet", target="y", block_rows=100)
    next(blocks)
    blocks.close()
    assert opened and all(f.was_closed for f in opened)


def test_column_task_refuses_continuous_labels_and_takes_integer_ones():
    # integer labels skip scikit-learn's target check (always binary or multiclass);
    # float labels that are not classes still go through it and are refused
    rng = np.random.default_rng(11)
    cols = [rng.standard_normal(60).astype(np.float32) for _ in range(3)]
    task = bayesrule.GaussianNB().summariser()
    X = np.column_stack(cols).astype(np.float64)
    for y in (
        rng.integers(0, 3, 60),
        rng.integers(0, 3, 60).astype(np.uint8),
        rng.random(60) < 0.5,
    ):
        stats = task.column_statistics(cols, y)
        assert stats is not None
        for k, label in enumerate(np.unique(y)):
            rows = X[y == label]
            np.testing.assert_allclose(stats.means[k], rows.mean(axis=0), rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(stats.variances()[k], rows.var(axis=0), rtol=1e-12)
    assert task.column_statistics(cols, rng.random(60)) is None  # continuous: refused


def test_stream_with_continuous_labels_raises(tmp_path):
    rng = np.random.default_rng(13)
    table = pa.table({"a": rng.random(50), "b": rng.random(50), "y": rng.random(50)})
    pq.write_table(table, tmp_path / "c.parquet")
    with pytest.raises(ValueError, match="[Uu]nknown label type|continuous"):
        bayesrule.fit_stream(bayesrule.GaussianNB(), tmp_path, target="y", progress=False)


def test_each_row_group_is_let_go_once_read(tmp_path, monkeypatch):
    # one map for the whole file, and every row group's pages released after it is
    # read, before the next is: the file is never resident all at once
    rng = np.random.default_rng(9)
    X, y = _write(tmp_path / "a.parquet", rng, 5000, 6, 700, np.float64, "none", False)
    meta = pq.read_metadata(tmp_path / "a.parquet")
    released, maps = [], []
    real_release = parquet_files._Mapped.release
    real_init = parquet_files._Mapped.__init__

    def spying_init(self, path):
        maps.append(path)
        real_init(self, path)

    def spying_release(self, rg):
        calls = []
        real_madvise = self._map.madvise

        class Spy:
            def __getattr__(self, name):
                return getattr(real_madvise.__self__, name)

            def madvise(self, flag, start, length):
                calls.append((start, start + length))
                return real_madvise(flag, start, length)

        held, self._map = self._map, Spy()
        try:
            real_release(self, rg)
        finally:
            self._map = held
        released.append((rg.num_rows, calls))

    monkeypatch.setattr(parquet_files._Mapped, "__init__", spying_init)
    monkeypatch.setattr(parquet_files._Mapped, "release", spying_release)
    streamed = bayesrule.fit_stream(bayesrule.GaussianNB(), tmp_path, target="y", progress=False)
    whole = bayesrule.GaussianNB().fit(X, y)
    np.testing.assert_allclose(streamed.var_, whole.var_, rtol=1e-10)
    assert len(maps) == 1  # the file mapped once, not once per span of row groups
    assert [rows for rows, _ in released] == [
        meta.row_group(i).num_rows for i in range(meta.num_row_groups)
    ]
    page = parquet_files.mmap.PAGESIZE
    for i, (_, calls) in enumerate(released):
        rg = meta.row_group(i)
        first, last = rg.column(0), rg.column(rg.num_columns - 1)
        start = first.data_page_offset
        end = last.data_page_offset + last.total_compressed_size
        ((lo, hi),) = calls
        assert lo % page == 0 and (hi % page == 0 or hi == (tmp_path / "a.parquet").stat().st_size)
        assert lo <= start and end <= hi


def test_an_empty_file_is_refused_naming_it(tmp_path):
    (tmp_path / "empty.parquet").write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.parquet"):
        bayesrule.fit_stream(bayesrule.GaussianNB(), tmp_path, target="y", progress=False)
