"""Mixture discriminant analysis fitted in passes: in memory, out of core and on Dask alike.

Every driver runs the same EM (the same seeding sample, the same passes), so
the models agree to rounding: predict_proba to 1e-8 (measured: below 1e-9),
the same number of iterations and passes.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.datasets import load_digits

import bayesrule
from bayesrule import MixtureDiscriminantAnalysis as MDA
from bayesrule.stats._sketch import KeyedRows, KeySketch, row_keys

COVARIANCE_TYPES = ["auto", "full", "diag", "spherical", "shared", "ppca"]
PROJECTIONS = [None, "pca", "fisher"]
TOL = 1e-8
#: uneven blocks; the one-row block and the short ones miss most classes
CUTS = [0, 100, 137, 300, 301, 420, 480]


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X, y = X[:480] / 16.0, y[:480]
    w = np.random.default_rng(0).uniform(0.2, 2.0, size=y.size)
    return X, y, w


def _params(covariance_type, projection, **extra):
    return {
        "n_components": 2,
        "covariance_type": covariance_type,
        "projection": projection,
        "n_dims": 8 if projection == "pca" else None,
        "rank": 2,
        **extra,
    }


def _features(X, projection):
    return X[:, 1::6] if projection is None else X  # 11 features without a projection


def _blocks(X, y, w, cuts=CUTS):
    return [(X[s:e], y[s:e], w[s:e]) for s, e in itertools.pairwise(cuts)]


def _same(a, b, X):
    assert a.n_iter_ == b.n_iter_ and a.n_passes_ == b.n_passes_
    np.testing.assert_array_equal(a.n_components_, b.n_components_)
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), rtol=0, atol=TOL)


# ------------------------------------------------------------------ the drivers agree
@pytest.mark.parametrize("projection", PROJECTIONS)
@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_memory_blocks_and_dask_fit_the_same_model(covariance_type, projection, digits):
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    X, y, w = digits
    X = _features(X, projection)
    priors = np.linspace(1.0, 2.0, 10) / np.linspace(1.0, 2.0, 10).sum()
    kw = _params(covariance_type, projection, priors=priors)
    ref = MDA(**kw).fit(X, y, sample_weight=w)
    streamed = bayesrule.fit_stream(MDA(**kw), _blocks(X, y, w))
    _same(ref, streamed, X)
    with dask.config.set(scheduler="sync"):
        on_dask = MDA(**kw).fit(
            da.from_array(X, chunks=(150, 4)),
            da.from_array(y, chunks=150),
            sample_weight=da.from_array(w, chunks=150),
        )
    _same(ref, on_dask, X)
    np.testing.assert_array_equal(on_dask.priors_, ref.priors_)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_fit_stream_over_a_file_is_the_in_memory_fit(fmt, digits, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    X, y, w = digits
    frame = pd.DataFrame(X, columns=[f"px{j}" for j in range(X.shape[1])])
    frame["digit"], frame["w"] = y, w
    path = tmp_path / f"digits.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False, float_format="%.17g")
    else:
        frame.to_parquet(path, row_group_size=100)
    kw = _params("full", "pca")
    ref = MDA(**kw).fit(frame.drop(columns=["digit", "w"]), y, sample_weight=w)
    got = bayesrule.fit_stream(MDA(**kw), path, target="digit", weight="w", block_rows=130)
    _same(ref, got, frame.drop(columns=["digit", "w"]))
    assert list(got.feature_names_in_) == list(frame.columns[:-2])


def test_dask_dataframe_on_threads_is_the_in_memory_fit(digits):
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, w = digits
    frame = pd.DataFrame(X, columns=[f"px{j}" for j in range(X.shape[1])])
    frame["w"] = w
    ddf = dd.from_pandas(frame.assign(digit=y), npartitions=5)
    kw = _params("diag", "fisher")
    ref = MDA(**kw).fit(frame.drop(columns="w"), y, sample_weight=w)
    with dask.config.set(scheduler="threads"):
        got = MDA(**kw).fit(ddf.drop(columns=["digit", "w"]), ddf["digit"], sample_weight=ddf["w"])
    _same(ref, got, frame.drop(columns="w"))
    with dask.config.set(scheduler="threads"):
        stats = MDA(**kw).statistics(ddf.drop(columns=["digit", "w"]), ddf["digit"], ddf["w"])
    assert stats.allclose(ref.stats_, rtol=1e-6)


def test_the_order_of_the_blocks_does_not_change_the_model(digits):
    X, y, w = digits
    kw = _params("full", "pca", n_components=3)
    blocks = _blocks(X, y, w)
    a = bayesrule.fit_stream(MDA(**kw), blocks)
    b = bayesrule.fit_stream(MDA(**kw), blocks[::-1])
    rng = np.random.default_rng(5)
    order = rng.permutation(y.size)
    c = MDA(**kw).fit(X[order], y[order], sample_weight=w[order])
    _same(a, b, X)
    _same(a, c, X)


def test_integer_weights_and_repeated_rows_fit_the_same_model(digits):
    X, y, _ = digits
    w = np.random.default_rng(2).integers(0, 4, size=y.size)
    kw = _params("full", "pca", n_components=3)
    a = MDA(**kw).fit(X, y, sample_weight=w)
    b = MDA(**kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    _same(a, b, X)


# ------------------------------------------------------------------ the public seam
@pytest.mark.parametrize("classes", [None, np.arange(10)])
def test_fit_plan_over_pickled_blocks_is_the_in_memory_fit(classes, digits):
    """A backend's reduce: each pass's task pickled to the blocks, their summaries pickled back."""
    import pickle

    from bayesrule.estimators.seam import Schema, summarise

    X, y, w = digits
    kw = _params("full", "pca", n_components=3)
    ref = MDA(**kw).fit(X, y, sample_weight=w)
    est = MDA(**kw)
    assert est.input_spec().multi_pass
    blocks = _blocks(X, y, w)
    passes = []

    def reduce(task):
        passes.append(type(task).__name__)
        total = None
        for Xb, yb, wb in blocks:  # a block with no rows of a class, one with one row
            far = pickle.loads(pickle.dumps(task))
            part = pickle.loads(pickle.dumps(far.statistics(Xb, yb, wb, classes)))
            total = task.combine(total, part)
        total = task.combine(total, task.statistics(X[:0], y[:0], w[:0], classes))
        return task.finish(total)

    stats = est.fit_plan(reduce, first_block=X[:100], classes=classes)
    assert len(passes) == int(stats.n_passes[0]) == ref.n_passes_
    assert passes[:3] == ["_Survey", "_Gather", "_Assign"] and set(passes[3:]) == {"_EStep"}
    est.fit_statistics(stats, schema=Schema(X.shape[1]))
    _same(ref, est, X)
    # the reference reduce gives the same statistics
    again = MDA(**kw).fit_plan(lambda task: summarise(task, blocks, classes), classes=classes)
    assert again.allclose(stats, rtol=1e-10)


def test_fit_plan_refuses_data_without_rows():
    est = MDA(n_components=2)
    with pytest.raises(ValueError, match="0 samples"):
        est.fit_plan(lambda task: task.finish(task.combine(None, None)))


# ------------------------------------------------------------------ passes and sources
def test_n_passes_is_two_plus_one_and_n_iter_per_run(digits, tmp_path):
    X, y, w = digits
    m = MDA(n_components=2, n_dims=8).fit(X, y)
    assert m.n_passes_ == 3 + m.n_iter_
    bayesrule.save(m, tmp_path / "m.bayesrule")
    assert bayesrule.load(tmp_path / "m.bayesrule").n_passes_ == m.n_passes_


@pytest.mark.parametrize("params", [{"n_init": 2}, {"n_components": "bic", "max_components": 2}])
def test_n_passes_counts_the_reads_of_the_source(params, digits):
    X, y, w = digits
    blocks = _blocks(X, y, w)
    reads = []

    def source():
        reads.append(1)
        return iter(blocks)

    m = bayesrule.fit_stream(MDA(n_dims=8, **{"n_components": 2, **params}), source)
    runs = 2
    assert len(reads) == m.n_passes_ >= 2 + runs * (1 + 1)
    ref = MDA(n_dims=8, **{"n_components": 2, **params}).fit(X, y, sample_weight=w)
    _same(ref, m, X)


def test_a_generator_of_blocks_is_refused_with_what_to_pass(digits):
    X, y, w = digits
    est = MDA(n_components=2)
    blocks = (b for b in _blocks(X, y, w))
    with pytest.raises(ValueError, match="several times.*list of .X, y. blocks, or a callable"):
        bayesrule.fit_stream(est, blocks)
    assert not hasattr(est, "stats_")


def test_partial_is_refused_with_its_reason(digits):
    X, y, w = digits
    est = MDA(n_components=2, n_dims=8).fit(X, y)
    before = est.predict_proba(X[:5])
    with pytest.raises(ValueError, match="partial=True.*two EM fits do not correspond"):
        bayesrule.fit_stream(est, _blocks(X, y, w), partial=True)
    np.testing.assert_array_equal(est.predict_proba(X[:5]), before)


def test_an_empty_source_and_a_bad_block_are_named(digits):
    X, y, w = digits
    with pytest.raises(ValueError, match="holds no rows"):
        bayesrule.fit_stream(MDA(), [(X[:0], y[:0])])
    bad = X[100:137].copy()
    bad[3, 2] = np.nan
    blocks = [(X[:100], y[:100]), (bad, y[100:137])]
    with pytest.raises(ValueError, match=r"block 1 \(rows 101-137\)"):
        bayesrule.fit_stream(MDA(n_components=2), blocks)


def test_the_cli_streams_mda_leaving_out_rows_without_a_label(digits, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("typer")
    pytest.importorskip("pyarrow")
    from typer.testing import CliRunner

    from bayesrule.cli._app import app

    X, y, _ = digits
    frame = pd.DataFrame(X[:, ::2], columns=[f"px{j}" for j in range(32)])
    frame["digit"] = y.astype(float)
    frame.loc[[5, 200, 333], "digit"] = np.nan  # read again block by block, without them
    data = tmp_path / "digits.csv"
    frame.to_csv(data, index=False, float_format="%.17g")
    out = {}
    for how in (["--no-stream"], ["--stream", "--block-rows", "100"]):
        model = tmp_path / f"{how[0].strip('-')}.brm"
        args = ["fit", str(data), "-t", "digit", "-m", "mda", "--set", "n_components=2"]
        result = CliRunner().invoke(app, [*args, *how, "-o", str(model)])
        assert result.exit_code == 0, (result.output, result.exception)
        assert "left out 3 rows" in result.output
        out[how[0]] = bayesrule.load(model)
    _same(out["--no-stream"], out["--stream"], frame.drop(columns="digit"))


# ------------------------------------------------------------------ the sample
def _keys_and_sketch(X, yi, w, size, classes=(0, 1, 2)):
    return KeySketch.from_keys(row_keys(X), yi, w, classes, size)


def _equal_sketches(a, b):
    np.testing.assert_array_equal(a.classes, b.classes)
    np.testing.assert_array_equal(a.owner, b.owner)
    np.testing.assert_array_equal(a.keys, b.keys)
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-15)


def test_the_sketch_of_blocks_merged_in_any_order_is_the_sketch_of_all():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    yi = rng.integers(0, 3, size=300)
    w = rng.uniform(0.5, 2.0, size=300)
    whole = _keys_and_sketch(X, yi, w, 20)
    assert np.all(np.bincount(whole.owner, minlength=3) == 20)
    for cuts in ([0, 50, 51, 200, 300], [0, 150, 300], [0, 7, 90, 91, 92, 300]):
        parts = [_keys_and_sketch(X[s:e], yi[s:e], w[s:e], 20) for s, e in itertools.pairwise(cuts)]
        for order in (parts, parts[::-1], parts[1:] + parts[:1]):
            merged = order[0]
            for p in order[1:]:
                merged = merged.merge(p)
            _equal_sketches(whole, merged)
    # a tree merge too
    a = _keys_and_sketch(X[:100], yi[:100], w[:100], 20)
    b = _keys_and_sketch(X[100:200], yi[100:200], w[100:200], 20)
    c = _keys_and_sketch(X[200:], yi[200:], w[200:], 20)
    _equal_sketches(a.merge(b.merge(c)), (c.merge(a)).merge(b))


def test_the_sketch_keeps_a_class_s_smallest_keys_and_unites_classes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    keys = row_keys(X)
    yi = np.zeros(60, dtype=int)
    sketch = KeySketch.from_keys(keys, yi, np.ones(60), ["a"], 10)
    np.testing.assert_array_equal(sketch.keys, np.sort(keys)[:10])
    other = KeySketch.from_keys(keys[:5], np.zeros(5, dtype=int), np.ones(5), ["b"], 10)
    both = sketch.merge(other)
    assert both.classes.tolist() == ["a", "b"]
    np.testing.assert_array_equal(both.of_class(1)[0], np.sort(keys[:5]))


def test_duplicate_rows_are_one_entry_with_their_weights_summed():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 4))
    yi = rng.integers(0, 2, size=40)
    w = rng.integers(1, 4, size=40).astype(float)
    weighted = _keys_and_sketch(X, yi, w, 15, (0, 1))
    n = w.astype(int)
    repeated = _keys_and_sketch(
        np.repeat(X, n, axis=0), np.repeat(yi, n), np.ones(int(n.sum())), 15, (0, 1)
    )
    _equal_sketches(weighted, repeated)
    # rows of zero weight are never sampled; -0.0 is the row of 0.0
    w0 = w.copy()
    w0[0] = 0.0
    assert row_keys(X[:1])[0] not in _keys_and_sketch(X, yi, w0, 100, (0, 1)).keys
    Z = np.zeros((2, 3))
    Z[1, 1] = -0.0
    assert row_keys(Z)[0] == row_keys(Z)[1]
    np.testing.assert_array_equal(
        row_keys(X.astype(np.float32)), row_keys(X.astype(np.float32).astype(float))
    )


def test_rows_found_by_key_merge_by_union():
    keys = np.array([5, 3, 9], dtype=np.uint64)
    a = KeyedRows.of([0, 0, 1], keys, np.arange(6.0).reshape(3, 2))
    b = KeyedRows.of([0, 1], keys[1:], np.arange(6.0, 10.0).reshape(2, 2))
    merged = a.merge(b)
    assert merged.keys.tolist() == [3, 5, 9] and merged.owner.tolist() == [0, 0, 1]
    np.testing.assert_array_equal(
        merged.of_class(0, np.array([5, 3], dtype=np.uint64)), [[0, 1], [2, 3]]
    )
    with pytest.raises(ValueError, match="changed between passes"):
        merged.of_class(1, np.array([4], dtype=np.uint64))
