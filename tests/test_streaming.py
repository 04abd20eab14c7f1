"""Out-of-core fitting and prediction (bayesrule.backends.stream): the same model as fit, bounded memory."""

from __future__ import annotations

import bz2
import gzip
import lzma

import numpy as np
import pytest
from sklearn.base import clone

import bayesrule as br
from bayesrule.stats import ValueCountStats

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

N = 480
P = 4
FEATURES = [f"f{j}" for j in range(P)]


def _gaussian(n: int = N, seed: int = 0, k: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, P)) + y[:, None] * np.array([1.0, -0.5, 0.3, 0.0])
    df = pd.DataFrame(X, columns=FEATURES)
    df["label"] = y
    return df


def _counts(n: int = N, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.poisson(1.0 + y[:, None] * np.array([1, 0, 2, 0.5]), size=(n, P))
    df = pd.DataFrame(X.astype(np.int64), columns=FEATURES)
    df["label"] = np.array(["a", "b", "c"])[y]
    return df


def _codes(n: int = N, seed: int = 2) -> pd.DataFrame:
    """Category codes whose largest values appear only in the last rows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = (rng.integers(0, 3, size=(n, P)) + y[:, None]) % 4
    X[-40:, 0] = 7  # a category first seen in the last block
    df = pd.DataFrame(X.astype(np.int64), columns=FEATURES)
    df["label"] = y
    return df


def _mixed(n: int = N, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    city = np.array(["Oslo", "Rome", "Lima", "Kyiv"], dtype=object)[(y + rng.integers(0, 2, n)) % 4]
    city[-30:] = "Pune"  # a string first seen in the last block
    df = pd.DataFrame(
        {
            "city": city,
            "member": rng.random(n) < 0.2 + 0.3 * y,
            "visits": rng.poisson(1 + 2 * y).astype(np.int64),
            "height": rng.normal(160 + 8 * y, 6),
        }
    )
    df["label"] = y
    return df


def _data(name: str) -> pd.DataFrame:
    if name in ("BernoulliNB", "MultinomialNB", "ComplementNB", "PoissonNB"):
        return _counts()
    if name == "CategoricalNB":
        return _codes()
    if name == "MixedNB":
        return _mixed()
    if name == "KernelNB":
        return _counts()  # few distinct values: exact, never binned
    return _gaussian()


STREAMED = [
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysis",
    "GaussianNB",
    "DiagonalLDA",
    "BernoulliNB",
    "MultinomialNB",
    "ComplementNB",
    "CategoricalNB",
    "PoissonNB",
    "KernelNB",
    "MixedNB",
]


def _write(df: pd.DataFrame, path, fmt: str) -> None:
    if fmt == "parquet":
        df.to_parquet(path, row_group_size=101)
    else:
        df.to_csv(path, index=False)


def _assert_same_model(a, b) -> None:
    assert a.stats_.allclose(b.stats_, rtol=1e-10)
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert list(getattr(a, "feature_names_in_", [])) == list(getattr(b, "feature_names_in_", []))


@pytest.mark.parametrize("name", STREAMED)
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_stream_equals_fit_for_every_estimator(tmp_path, name, fmt):
    df = _data(name)
    path = tmp_path / f"data.{fmt}"
    _write(df, path, fmt)
    est = getattr(br, name)()
    X, y = df.drop(columns="label"), df["label"].to_numpy()
    if name != "MixedNB":
        X = X.astype(np.float64)
    ref = clone(est).fit(X, y)
    out = br.fit_stream(est, path, target="label", block_rows=61)
    assert out is est
    _assert_same_model(est, ref)
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))


def test_union_of_classes_equals_fit_whatever_the_order(tmp_path):
    # sorted by label: the first blocks hold one class, later ones the others
    df = _gaussian(seed=5, k=4).sort_values("label", kind="stable").reset_index(drop=True)
    X, y = df[FEATURES].to_numpy(), df["label"].to_numpy()
    ref = br.QuadraticDiscriminantAnalysis().fit(X, y)
    forward = br.fit_stream(
        br.QuadraticDiscriminantAnalysis(),
        [(X[s : s + 50], y[s : s + 50]) for s in range(0, N, 50)],
    )
    backward = br.fit_stream(
        br.QuadraticDiscriminantAnalysis(),
        [(X[s : s + 50], y[s : s + 50]) for s in range(0, N, 50)][::-1],
    )
    for est in (forward, backward):
        assert est.stats_.allclose(ref.stats_, rtol=1e-10)
        np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-10)


def test_declared_classes_and_weights_from_blocks():
    df = _gaussian(seed=6)
    X, y = df[FEATURES].to_numpy(), df["label"].to_numpy()
    w = np.random.default_rng(0).integers(0, 4, N).astype(float)
    blocks = [(X[s : s + 70], y[s : s + 70], w[s : s + 70]) for s in range(0, N, 70)]
    est = br.fit_stream(br.GaussianNB(), blocks, classes=[0, 1, 2, 9])
    ref = br.GaussianNB().partial_fit(X, y, classes=[0, 1, 2, 9], sample_weight=w)
    assert est.stats_.allclose(ref.stats_, rtol=1e-10)
    assert est.classes_.tolist() == [0, 1, 2, 9]
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-10)


def test_weight_column_and_feature_globs(tmp_path):
    df = _gaussian(seed=7)
    df["w"] = np.random.default_rng(1).uniform(0, 3, N)
    df["id"] = np.arange(N)
    df.to_parquet(tmp_path / "d.parquet")
    est = br.fit_stream(
        br.LinearDiscriminantAnalysis(),
        tmp_path / "d.parquet",
        target="label",
        features="f*",
        weight="w",
        block_rows=100,
    )
    ref = br.LinearDiscriminantAnalysis().fit(df[FEATURES], df["label"], sample_weight=df["w"])
    _assert_same_model(est, ref)
    blocks = list(
        br.read_blocks(tmp_path / "d.parquet", target="label", features=["f[13]"], weight="w")
    )
    assert all(len(b) == 3 and b[0].shape[1] == 2 for b in blocks)


def test_npy_memory_mapped_with_separate_labels(tmp_path):
    df = _gaussian(seed=8)
    np.save(tmp_path / "X.npy", df[FEATURES].to_numpy())
    np.save(tmp_path / "y.npy", df["label"].to_numpy())
    est = br.fit_stream(
        br.GaussianNB(), tmp_path / "X.npy", target=tmp_path / "y.npy", block_rows=77
    )
    ref = br.GaussianNB().fit(df[FEATURES].to_numpy(), df["label"])
    assert est.stats_.allclose(ref.stats_, rtol=1e-10)
    # the label as the last column of the same array
    np.save(tmp_path / "Xy.npy", df[[*FEATURES, "label"]].to_numpy())
    est2 = br.fit_stream(br.GaussianNB(), tmp_path / "Xy.npy", target=P, block_rows=50)
    assert est2.stats_.allclose(ref.stats_, rtol=1e-10)


def test_several_files_directory_and_glob(tmp_path):
    df = _gaussian(seed=9)
    (tmp_path / "parts").mkdir()
    for i in range(3):
        df.iloc[i * 160 : (i + 1) * 160].to_parquet(tmp_path / "parts" / f"p{i}.parquet")
    ref = br.LinearDiscriminantAnalysis().fit(df[FEATURES], df["label"])
    for source in (
        tmp_path / "parts",
        str(tmp_path / "parts" / "p*.parquet"),
        [tmp_path / "parts" / f"p{i}.parquet" for i in range(3)],
    ):
        est = br.fit_stream(br.LinearDiscriminantAnalysis(), source, target="label", block_rows=64)
        _assert_same_model(est, ref)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
def test_compressed_csv(tmp_path, suffix):
    df = _gaussian(seed=10)
    text = df.to_csv(index=False).encode()
    path = tmp_path / f"d.csv{suffix}"
    if suffix == ".gz":
        path.write_bytes(gzip.compress(text))
    elif suffix == ".bz2":
        path.write_bytes(bz2.compress(text))
    elif suffix == ".xz":
        path.write_bytes(lzma.compress(text))
    else:
        with pa.CompressedOutputStream(str(path), "zstd") as out:
            out.write(text)
    est = br.fit_stream(br.GaussianNB(), path, target="label", block_rows=100)
    ref = br.GaussianNB().fit(df[FEATURES], df["label"])
    _assert_same_model(est, ref)


# ------------------------------------------------------------------ atomicity
def test_failed_fit_leaves_estimator_unfitted(tmp_path):
    df = _gaussian(seed=11)
    df.loc[300, "f2"] = np.inf
    est = br.LinearDiscriminantAnalysis()
    blocks = [
        (df[FEATURES].to_numpy()[s : s + 100], df["label"].to_numpy()[s : s + 100])
        for s in range(0, N, 100)
    ]
    with pytest.raises(ValueError, match=r"block 3 .*rows 301-400.*infinity at row 301"):
        br.fit_stream(est, blocks)
    assert not hasattr(est, "stats_")


def test_partial_adds_to_a_fitted_model_or_leaves_it_exactly(tmp_path):
    df = _gaussian(seed=12)
    X, y = df[FEATURES], df["label"].to_numpy()
    first, rest = df.iloc[:200], df.iloc[200:]
    rest.to_parquet(tmp_path / "rest.parquet")
    est = br.GaussianNB().fit(first[FEATURES], first["label"])
    br.fit_stream(est, tmp_path / "rest.parquet", target="label", block_rows=50, partial=True)
    ref = br.GaussianNB().fit(X, y)
    _assert_same_model(est, ref)
    before = est.stats_
    bad = rest.copy()
    bad.loc[bad.index[-1], "f0"] = np.inf
    bad.to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match="infinity"):
        br.fit_stream(est, tmp_path / "bad.parquet", target="label", block_rows=50, partial=True)
    assert est.stats_ is before
    other = df.rename(columns={"f0": "g0"})
    other.to_parquet(tmp_path / "other.parquet")
    with pytest.raises(ValueError, match="not those the model was fitted with"):
        br.fit_stream(est, tmp_path / "other.parquet", target="label", partial=True)
    assert est.stats_ is before


# ------------------------------------------------------------------ bad input
def test_files_that_disagree_on_columns(tmp_path):
    df = _gaussian(seed=13)
    df.iloc[:200].to_parquet(tmp_path / "a.parquet")
    df.iloc[200:].drop(columns="f3").to_parquet(tmp_path / "b.parquet")
    with pytest.raises(ValueError, match=r"b\.parquet: has no column 'f3'"):
        br.fit_stream(
            br.GaussianNB(), [tmp_path / "a.parquet", tmp_path / "b.parquet"], target="label"
        )
    df.iloc[:200].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[200:].drop(columns="f3").to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(ValueError, match=r"b\.csv: has no column 'f3'"):
        br.fit_stream(br.GaussianNB(), [tmp_path / "a.csv", tmp_path / "b.csv"], target="label")


def test_files_that_disagree_on_types(tmp_path):
    df = _gaussian(seed=14)
    df.iloc[:200].to_parquet(tmp_path / "a.parquet")
    other = df.iloc[200:].copy()
    other["label"] = other["label"].map(str)
    other.to_parquet(tmp_path / "b.parquet")
    with pytest.raises(ValueError, match=r"b\.parquet: column 'label' holds string values.*first"):
        br.fit_stream(
            br.GaussianNB(), [tmp_path / "a.parquet", tmp_path / "b.parquet"], target="label"
        )
    words = df.copy()
    words["f1"] = "x"
    words.to_parquet(tmp_path / "c.parquet")
    with pytest.raises(ValueError, match=r"c\.parquet: column 'f1' holds string values"):
        br.fit_stream(br.GaussianNB(), tmp_path / "c.parquet", target="label")


def test_missing_target_column(tmp_path):
    df = _gaussian(seed=15)
    df.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(ValueError, match=r"d\.csv: the target column 'class' is not in the file"):
        br.fit_stream(br.GaussianNB(), tmp_path / "d.csv", target="class")
    with pytest.raises(ValueError, match="target must name the label column"):
        br.fit_stream(br.GaussianNB(), tmp_path / "d.csv")
    with pytest.raises(ValueError, match=r"no column matches the feature 'z\*'"):
        br.fit_stream(br.GaussianNB(), tmp_path / "d.csv", target="label", features="z*")


@pytest.mark.parametrize("row", [3, 350])
def test_non_numeric_cell_names_file_column_and_row(tmp_path, row):
    df = _gaussian(seed=16).astype({"f2": object})
    df.loc[row - 1, "f2"] = "n/a?"
    df.to_csv(tmp_path / "d.csv", index=False)
    pattern = rf"d\.csv: column 'f2' at data row {row} \(line {row + 1}\) holds 'n/a\?'"
    with pytest.raises(ValueError, match=pattern):
        br.fit_stream(br.GaussianNB(), tmp_path / "d.csv", target="label", block_rows=64)


def test_block_with_another_number_of_features():
    X = np.random.default_rng(0).normal(size=(60, 3))
    y = np.arange(60) % 2
    blocks = [(X[:30], y[:30]), (X[30:, :2], y[30:])]
    with pytest.raises(
        ValueError,
        match=r"block 1 \(rows 31-60\): the block has 2 features, but the first block had 3",
    ):
        br.fit_stream(br.GaussianNB(), blocks)


def test_truncated_or_corrupt_parquet(tmp_path):
    df = _gaussian(seed=17)
    df.to_parquet(tmp_path / "d.parquet", row_group_size=100)
    data = (tmp_path / "d.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"cut\.parquet: cannot be read as Parquet"):
        br.fit_stream(br.GaussianNB(), tmp_path / "cut.parquet", target="label")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all" * 10)
    with pytest.raises(ValueError, match=r"junk\.parquet: cannot be read as Parquet"):
        br.fit_stream(br.GaussianNB(), tmp_path / "junk.parquet", target="label")
    # a data page overwritten in the middle, the footer intact
    broken = bytearray(data)
    broken[200:4000] = b"\xff" * 3800
    (tmp_path / "broken.parquet").write_bytes(bytes(broken))
    with pytest.raises(ValueError, match=r"broken\.parquet"):
        br.fit_stream(br.GaussianNB(), tmp_path / "broken.parquet", target="label")


def test_missing_sources(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        br.fit_stream(br.GaussianNB(), tmp_path / "nope.parquet", target="y")
    with pytest.raises(ValueError, match="no file matches"):
        br.fit_stream(br.GaussianNB(), str(tmp_path / "nope*.parquet"), target="y")
    (tmp_path / "d.json").write_text("{}")
    with pytest.raises(ValueError, match="cannot tell its format"):
        br.fit_stream(br.GaussianNB(), tmp_path / "d.json", target="y")
    with pytest.raises(TypeError, match="source is an array"):
        br.fit_stream(br.GaussianNB(), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="holds no rows"):
        br.fit_stream(br.GaussianNB(), [])


# ------------------------------------------------------------------ KernelNB
def _steps(X: np.ndarray, max_values: int) -> np.ndarray:
    """The oracle: the grid fit_stream must end on (smallest power of two that fits)."""
    steps = np.zeros(X.shape[1])
    for j in range(X.shape[1]):
        if np.unique(X[:, j]).size <= max_values:
            continue
        lo, hi = X[:, j].min(), X[:, j].max()
        h = 2.0 ** np.floor(np.log2((hi - lo) / max_values))
        while np.floor(hi / h) - np.floor(lo / h) + 1 > max_values:
            h *= 2
        steps[j] = h
    return steps


def _binned(X: np.ndarray, steps: np.ndarray) -> np.ndarray:
    out = X.copy()
    on = steps > 0
    out[:, on] = (np.floor(X[:, on] / steps[on]) + 0.5) * steps[on]
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_nb_statistics_stay_bounded_and_equal_fit_on_the_grid(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    y = rng.integers(0, 3, n)
    X = np.column_stack(
        [
            rng.normal(y, 1.0 + seed),  # continuous: binned
            rng.standard_t(2, n) * 10,  # heavy tails: binned
            rng.integers(0, 20, n).astype(float),  # 20 values: exact
        ]
    )
    blocks = [(X[s : s + 256], y[s : s + 256]) for s in range(0, n, 256)]
    est = br.fit_stream(br.KernelNB(), blocks, max_values=100)
    assert np.diff(est.stats_.indptr).max() <= 100
    steps = _steps(X, 100)
    assert steps[0] > 0 and steps[1] > 0 and steps[2] == 0
    ref = br.KernelNB().fit(_binned(X, steps), y)
    assert est.stats_.allclose(ref.stats_, rtol=1e-10)
    shuffled = br.fit_stream(br.KernelNB(), blocks[::-1], max_values=100)
    assert shuffled.stats_.allclose(ref.stats_, rtol=1e-10)
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("bandwidth", [0.05, 0.4])
def test_kernel_nb_binned_density_within_the_documented_bound(seed, bandwidth):
    """|f_binned(x) - f_exact(x)| <= h / (2 b^2 sqrt(2 pi e)) for every class and x."""
    rng = np.random.default_rng(seed)
    n = 1200
    y = rng.integers(0, 2, n)
    X = rng.normal(3 * y, rng.uniform(0.5, 3), size=n)[:, None] * rng.uniform(0.2, 5)
    params = {"bandwidth": bandwidth, "alpha": 0.0, "point_mass": 2.0, "method": "exact"}
    exact = br.KernelNB(**params).fit(X, y)
    blocks = [(X[s : s + 300], y[s : s + 300]) for s in range(0, n, 300)]
    binned = br.fit_stream(br.KernelNB(**params), blocks, max_values=64)
    h = _steps(X, 64)[0]
    assert h > 0
    grid = np.linspace(X.min() - 3, X.max() + 3, 801)[:, None]
    fe = np.exp(exact.class_log_density(grid))
    fb = np.exp(binned.class_log_density(grid))
    bound = h / (2 * bandwidth**2 * np.sqrt(2 * np.pi * np.e))
    gap = np.abs(fb - fe).max()
    assert gap <= bound * (1 + 1e-9)
    assert gap > 0  # binned, not exact: the bound is what is tested


def test_value_count_stats_binned_nests_and_equals_binned_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)) * [1, 10, 0.01]
    y = rng.integers(0, 2, 500)
    h = np.array([2.0**-4, 2.0**0, 0.0])
    s = ValueCountStats.from_data(X, y)
    assert s.binned(h).allclose(ValueCountStats.from_data(_binned(X, h), y), rtol=1e-12)
    assert s.binned(h).binned(2 * h).allclose(s.binned(2 * h), rtol=1e-12)
    assert s.binned(h).binned(h).allclose(s.binned(h), rtol=1e-12)
    with pytest.raises(ValueError, match="steps must be finite and non-negative"):
        s.binned([-1.0, 1.0, 1.0])


def test_mixed_nb_kernel_columns_refused_unless_exact():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    y = np.arange(200) % 2
    est = br.MixedNB(columns={"a": "kernel"})
    with pytest.raises(ValueError, match="'kernel' column 'a' keeps every distinct value"):
        br.fit_stream(est, [(df[:100], y[:100]), (df[100:], y[100:])])
    assert not hasattr(est, "stats_")
    br.fit_stream(est, [(df[:100], y[:100]), (df[100:], y[100:])], max_values=None)
    assert est.stats_.allclose(clone(est).fit(df, y).stats_, rtol=1e-10)


# ------------------------------------------------------------------ prediction
@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".csv.gz"])
def test_predict_stream_writes_what_predict_gives(tmp_path, suffix):
    df = _gaussian(seed=20)
    df["id"] = np.arange(N) * 7
    df.to_parquet(tmp_path / "d.parquet", row_group_size=90)
    est = br.LinearDiscriminantAnalysis().fit(df[FEATURES], df["label"])
    out = br.predict_stream(
        est,
        tmp_path / "d.parquet",
        tmp_path / f"out{suffix}",
        method=["predict", "predict_proba", "score_samples"],
        keep=["id"],
        target="label",
        block_rows=100,
    )
    got = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out)
    assert list(got.columns) == [
        "id",
        "prediction",
        "proba_0",
        "proba_1",
        "proba_2",
        "score_samples",
    ]
    np.testing.assert_array_equal(got["id"], df["id"])
    np.testing.assert_array_equal(got["prediction"], est.predict(df[FEATURES]))
    P = got[["proba_0", "proba_1", "proba_2"]].to_numpy()
    np.testing.assert_allclose(P, est.predict_proba(df[FEATURES]), atol=1e-12)
    np.testing.assert_allclose(got["score_samples"], est.score_samples(df[FEATURES]), rtol=1e-12)
    assert not list(tmp_path.glob(".out*"))  # no temporary file left


def test_iter_predict_yields_blocks_and_mixed_strings(tmp_path):
    df = _mixed()
    df.to_parquet(tmp_path / "m.parquet")
    est = br.fit_stream(br.MixedNB(), tmp_path / "m.parquet", target="label", block_rows=100)
    blocks = list(
        br.iter_predict(est, tmp_path / "m.parquet", method="predict_proba", block_rows=100)
    )
    assert [len(b) for b in blocks] == [100, 100, 100, 100, 80]
    P = pd.concat(blocks).to_numpy()
    np.testing.assert_allclose(P, est.predict_proba(df.drop(columns="label")), atol=1e-12)


def test_predict_stream_failure_leaves_no_file_and_keeps_the_old_one(tmp_path):
    df = _gaussian(seed=21)
    est = br.LinearDiscriminantAnalysis().fit(df[FEATURES], df["label"])
    bad = df.copy()
    bad.loc[450, "f1"] = np.inf
    bad.to_parquet(tmp_path / "bad.parquet")
    target = tmp_path / "out.parquet"
    target.write_bytes(b"previous")
    with pytest.raises(ValueError, match=r"bad\.parquet, rows 401-480.*row 451"):
        br.predict_stream(est, tmp_path / "bad.parquet", target, block_rows=100)
    assert target.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.parquet", "out.parquet"]
    with pytest.raises(ValueError, match=r"cannot write a table as '\.json'; use \.csv"):
        br.predict_stream(est, tmp_path / "bad.parquet", tmp_path / "out.json")


# ------------------------------------------------------------------ progress
def test_progress_bar_only_when_asked_or_on_a_terminal(tmp_path, capsys):
    pytest.importorskip("rich")
    df = _gaussian(seed=22)
    df.to_parquet(tmp_path / "d.parquet")
    br.fit_stream(br.GaussianNB(), tmp_path / "d.parquet", target="label", block_rows=100)
    assert capsys.readouterr().err == ""  # stderr is not a terminal under pytest
    br.fit_stream(
        br.GaussianNB(), tmp_path / "d.parquet", target="label", block_rows=100, progress=True
    )
    err = capsys.readouterr().err
    assert "480 rows" in err and "MB/s" in err


def test_rda_cv_refuses_streaming_clearly():
    df = _gaussian(seed=23)
    X, y = df[FEATURES].to_numpy(), df["label"].to_numpy()
    est = br.RegularizedDiscriminantAnalysisCV()
    with pytest.raises(ValueError, match="cross-validation scores cannot be merged"):
        br.fit_stream(est, [(X[:240], y[:240]), (X[240:], y[240:])])
    assert not hasattr(est, "stats_")


def test_nan_in_csv_named_by_file_row_and_column(tmp_path):
    df = _gaussian(seed=24)
    df.loc[299, "f3"] = np.nan
    df.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(ValueError, match=r"d\.csv, rows 201-300: .*NaN at row 300 .*column 'f3'"):
        br.fit_stream(
            br.LinearDiscriminantAnalysis(), tmp_path / "d.csv", target="label", block_rows=100
        )


def test_csv_types_follow_the_first_file_unless_declared(tmp_path):
    df = _mixed()
    second = df.iloc[300:].copy()
    second["visits"] = second["visits"].astype(object)
    second.loc[400, "visits"] = 2.5
    df.iloc[:300].to_csv(tmp_path / "a.csv", index=False)
    second.to_csv(tmp_path / "b.csv", index=False)
    files = [tmp_path / "a.csv", tmp_path / "b.csv"]
    pattern = r"b\.csv: column 'visits' at data row 101 \(line 102\) holds '2.5'.*dtypes="
    with pytest.raises(ValueError, match=pattern):
        br.fit_stream(br.MixedNB(), files, target="label", block_rows=100)
    est = br.fit_stream(
        br.MixedNB(), files, target="label", block_rows=100, dtypes={"visits": "float64"}
    )
    # the declared dtype gives the in-memory fit of the same values
    whole = pd.concat([df.iloc[:300], second]).astype({"visits": "float64"})
    memory = br.MixedNB().fit(whole.drop(columns="label"), whole["label"])
    assert est.kinds_ == memory.kinds_
    assert est.kinds_[:2] == ["categorical", "bernoulli"]
    features = whole.drop(columns="label")
    np.testing.assert_allclose(
        est.predict_proba(features), memory.predict_proba(features), rtol=1e-9, atol=1e-12
    )


def test_the_example_of_the_docs_runs(tmp_path, monkeypatch, capsys):
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "scale-out.md"
    section = page.read_text().split("## Out of core", 1)[1]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(page), "exec"), {})
    assert (tmp_path / "predictions.parquet").exists()
    assert "prediction" in capsys.readouterr().out
