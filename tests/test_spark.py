"""The Spark backend (bayesrule.spark): every model fitted on a Spark DataFrame equals one fit.

One local session for the whole suite (the ``spark`` fixture, ``local[2,3]``)
and a few small cached DataFrames shared by the module keep the number of
Spark jobs low. Each DataFrame is hash-partitioned on a key that leaves
some partitions empty and others holding a single class.
"""

from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import bayesrule
from bayesrule.estimators.registry import available
from bayesrule.stats import FourthMomentStats, PooledScatterStats, ScatterStats, StatisticsError

pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")

import bayesrule.spark as bspark  # noqa: E402
from bayesrule.backends.spark import env  # noqa: E402
from bayesrule.backends.spark.arrow import SUMMARY, Outcome, decode  # noqa: E402

#: every model fitted from partitions: the mergeable ones and the EM model
BLOCKWISE = sorted(s for s, c in available().items() if hasattr(c, "partial_fit") or s == "mda")
PARAMS: dict[str, dict] = {
    "qda": {"reg_param": 0.1},
    "rda": {"alpha": 0.5, "gamma": 0.1},
    "mda": {"n_components": 2, "covariance_type": "diag", "max_iter": 3},
}
FEATURES = ["x0", "x1", "x2"]
README = Path(__file__).resolve().parents[1] / "README.md"


def _make(short: str):
    return available()[short](**PARAMS.get(short, {}))


def _kind(short: str) -> str:
    if short in ("mnb", "cnb", "pnb"):
        return "counts"
    if short == "catnb":
        return "codes"
    if short == "mixed":
        return "mixed"
    return "normal"


def _table(kind: str, n: int = 180, seed: int = 0) -> pd.DataFrame:
    """Rows of one kind of data, labels and a partitioning key (``part``)."""
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 3, n)
    if kind == "counts":
        X = rng.poisson(1.0 + 2.0 * k[:, None], size=(n, 3))
    elif kind == "codes":
        X = (rng.integers(0, 3, size=(n, 3)) + k[:, None]) % 4
    else:
        X = rng.normal(size=(n, 3)) + 2.0 * k[:, None] + 10.0
    df = pd.DataFrame(X, columns=FEATURES)
    if kind == "mixed":
        df["colour"] = np.array(["red", "green", "blue", "teal"])[(rng.integers(0, 3, n) + k) % 4]
        df["grade"] = (rng.integers(0, 3, n) + k) % 4  # few integers: categories
        df["visits"] = rng.poisson(1 + 3 * k)  # counts
        df["flag"] = rng.random(n) < 0.2 + 0.3 * k
    # integer labels for the count data, strings elsewhere
    df["label"] = k if kind == "counts" else np.array(["a", "b", "c"])[k]
    df["w"] = rng.integers(0, 4, n).astype(float)
    # 60 % of the rows keyed by their class (a partition of one class), the rest mixed
    df["part"] = np.where(rng.random(n) < 0.6, k, 3)
    return df


@pytest.fixture(scope="module")
def frames(spark):
    """For each kind of data: (pandas rows, cached Spark DataFrame of them, feature names)."""
    out = {}
    for kind in ("normal", "counts", "codes", "mixed"):
        pdf = _table(kind)
        df = spark.createDataFrame(pdf).repartition(6, "part").drop("part").cache()
        features = [c for c in pdf.columns if c not in ("label", "w", "part")]
        out[kind] = (pdf.drop(columns="part"), df, features)
    yield out
    for _, df, _ in out.values():
        df.unpersist()


def _assert_same_model(a, b, rtol: float = 1e-10) -> None:
    """Every public fitted attribute of ``b`` equals ``a``'s to ``rtol``."""
    fitted = sorted(k for k in vars(a) if k.endswith("_") and not k.startswith("_"))
    assert fitted == sorted(k for k in vars(b) if k.endswith("_") and not k.startswith("_"))
    for key in fitted:
        va, vb = getattr(a, key), getattr(b, key)
        if key == "stats_":
            if isinstance(vb, PooledScatterStats) and not isinstance(va, PooledScatterStats):
                # LDA fitted on Spark without an estimated shrinkage: the pooled statistic
                assert isinstance(b, bayesrule.LinearDiscriminantAnalysis)
                va = PooledScatterStats.from_scatter(va)
            assert va.allclose(vb, rtol=rtol)
            continue
        if isinstance(va, dict):
            assert va.keys() == vb.keys(), key
            for k in va:
                np.testing.assert_array_equal(va[k], vb[k], err_msg=key)
            continue
        va, vb = np.asarray(va), np.asarray(vb)
        if va.dtype.kind in "fc":
            scale = float(np.max(np.abs(va[np.isfinite(va)]), initial=1.0))
            np.testing.assert_allclose(vb, va, rtol=rtol, atol=rtol * scale, err_msg=key)
        else:
            np.testing.assert_array_equal(vb, va, err_msg=key)


def _proba_columns(est, prefix: str = "") -> list[str]:
    return [f"{prefix}proba_{c}" for c in est.classes_]


def test_the_partitioning_has_empty_partitions_and_partitions_missing_classes(frames):
    from pyspark.sql import functions as F

    _, df, _ = frames["normal"]
    per = (
        df.groupBy(F.spark_partition_id().alias("p"))
        .agg(F.countDistinct("label").alias("k"))
        .toPandas()
    )
    assert len(per) < 6  # some of the 6 partitions hold no row
    assert (per["k"] < 3).any()  # some hold rows of a single class


@pytest.fixture(scope="module")
def fitted(frames):
    """Every model fitted on Spark, and each kind's predictions of all its models in one job."""
    models = {}
    for short in BLOCKWISE:
        _, df, features = frames[_kind(short)]
        est = _make(short)
        assert bspark.fit(est, df, "label", features=features) is est
        models[short] = est
    scored = {}
    for kind, (_, df, _) in frames.items():
        out = df
        for short in BLOCKWISE:
            if _kind(short) == kind:
                out = bspark.predict(models[short], out, prefix=f"{short}_")
        scored[kind] = out.toPandas()
    return models, scored


@pytest.mark.parametrize("short", BLOCKWISE)
def test_fit_and_predictions_equal_in_memory(short, frames, fitted):
    """Spark fit = in-memory fit (1e-10; MDA 1e-8), and so are the predictions collected."""
    pdf, df, features = frames[_kind(short)]
    est, out = fitted[0][short], fitted[1][_kind(short)]
    ref = _make(short).fit(pdf[features], pdf["label"])
    rtol = 1e-8 if short == "mda" else 1e-10
    _assert_same_model(ref, est, rtol)
    proba = _proba_columns(ref, f"{short}_")
    assert all(c in out.columns for c in [f"{short}_prediction", *proba])
    X = out[features]
    np.testing.assert_array_equal(
        out[f"{short}_prediction"].to_numpy(dtype=object), ref.predict(X).astype(object)
    )
    np.testing.assert_allclose(out[proba].to_numpy(), ref.predict_proba(X), rtol=rtol, atol=rtol)


def test_another_partitioning_gives_the_same_model(frames, fitted):
    """Rows hashed on a continuous column into 5 partitions: the model of the 6-partition fit."""
    pdf, df, features = frames["normal"]
    other = bspark.fit(_make("qda"), df.repartition(5, "x1"), "label", features)
    _assert_same_model(fitted[0]["qda"], other)


def test_string_and_integer_labels_keep_their_type(frames, fitted):
    from pyspark.sql.types import LongType, StringType

    models = fitted[0]
    for short, want in (("gnb", StringType()), ("mnb", LongType())):
        _, df, _ = frames[_kind(short)]
        schema = bspark.predict(models[short], df, "predict").schema  # no job: the plan's schema
        assert schema["prediction"].dataType == want
    assert models["mnb"].classes_.tolist() == [0, 1, 2]
    assert models["gnb"].classes_.tolist() == ["a", "b", "c"]


def test_more_methods_and_a_prefix(frames, fitted):
    pdf, df, features = frames["normal"]
    est = fitted[0]["lda"]
    methods = ["transform", "predict_log_proba", "decision_function", "score_samples"]
    out = bspark.predict(est, df, methods, prefix="lda_").toPandas()
    X = out[features]
    d = est.transform(X).shape[1]
    np.testing.assert_allclose(
        out[[f"lda_transform_{i}" for i in range(d)]].to_numpy(), est.transform(X), rtol=1e-10
    )
    classes = est.classes_
    np.testing.assert_allclose(
        out[[f"lda_log_proba_{c}" for c in classes]].to_numpy(), est.predict_log_proba(X)
    )
    np.testing.assert_allclose(
        out[[f"lda_decision_{c}" for c in classes]].to_numpy(), est.decision_function(X)
    )
    np.testing.assert_allclose(out["lda_score_samples"].to_numpy(), est.score_samples(X))
    # the estimator's own methods route a Spark DataFrame to the same map
    routed = est.predict_proba(df)
    assert routed.columns[-3:] == _proba_columns(est)


def test_a_weight_column_is_sample_weight(frames):
    pdf, df, features = frames["normal"]
    got = bspark.fit(bayesrule.GaussianNB(), df, "label", weight="w")
    ref = bayesrule.GaussianNB().fit(pdf[features], pdf["label"], sample_weight=pdf["w"])
    _assert_same_model(ref, got)
    # the estimator's own fit takes a Spark DataFrame with column names for y and the weights
    again = bayesrule.LinearDiscriminantAnalysis().fit(df, "label", sample_weight="w")
    ref = bayesrule.LinearDiscriminantAnalysis()
    _assert_same_model(ref.fit(pdf[features], pdf["label"], sample_weight=pdf["w"]), again)


def test_mixed_nb_with_string_integer_and_boolean_columns(frames, fitted):
    pdf, df, features = frames["mixed"]
    got = fitted[0]["mixed"]
    ref = bayesrule.MixedNB().fit(pdf[features], pdf["label"])
    assert got.kinds_ == ref.kinds_
    assert got.kinds_[3:] == ["categorical", "categorical", "poisson", "bernoulli"]
    np.testing.assert_array_equal(got.categories_["colour"], ["blue", "green", "red", "teal"])
    X = pdf[features]
    np.testing.assert_allclose(got.predict_proba(X), ref.predict_proba(X), rtol=1e-10)
    # declared kinds are kept (no integer column left to count: one job)
    kinds = {"grade": "gaussian", "visits": "kernel"}
    declared = bspark.fit(bayesrule.MixedNB(columns=kinds), df, "label", features)
    assert declared.kinds_[4:6] == ["gaussian", "kernel"]
    ref = bayesrule.MixedNB(columns=kinds).fit(X, pdf["label"])
    np.testing.assert_allclose(declared.predict_proba(X), ref.predict_proba(X), rtol=1e-10)


def test_partial_continues_a_fit(frames, fitted):
    from pyspark.sql import functions as F

    pdf, df, features = frames["normal"]
    first, rest = df.where(F.col("x0") < 12.0), df.where(F.col("x0") >= 12.0)
    est = bspark.fit(
        bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.1), first, "label", features
    )
    assert bspark.fit(est, rest, "label", features, partial=True) is est
    ref = bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.1).fit(pdf[features], pdf["label"])
    _assert_same_model(ref, est)
    # declared classes: a class with no row yet
    declared = bspark.fit(
        bayesrule.GaussianNB(), first, "label", features, classes=["a", "b", "c", "d"], partial=True
    )
    assert declared.classes_.tolist() == ["a", "b", "c", "d"]
    with pytest.raises(TypeError, match="cannot continue a fit"):
        bspark.fit(fitted[0]["mda"], df, "label", features=features, partial=True)


def test_a_task_that_fails_once_still_gives_the_right_model(frames, tmp_path):
    """local[2,3]: the failed task is run again, and the statistics are the same."""
    pdf, df, features = frames["normal"]
    marker = str(tmp_path / "failed-once")

    def fail_once(batches):
        import os

        for batch in batches:
            if batch.num_rows and not os.path.exists(marker):
                open(marker, "w").close()
                raise RuntimeError("injected fault")
            yield batch

    flaky = df.mapInArrow(fail_once, df.schema)
    got = bspark.fit(bayesrule.LinearDiscriminantAnalysis(), flaky, "label", features)
    assert Path(marker).exists()
    ref = bayesrule.LinearDiscriminantAnalysis().fit(pdf[features], pdf["label"])
    _assert_same_model(ref, got)


def test_rows_never_travel_to_the_driver(frames, monkeypatch):
    """Only one pickled summary per partition is collected; no other way out is taken."""
    from pyspark.sql import DataFrame

    pdf, df, features = frames["mixed"]
    cls = type(df)
    collected: list = []
    original = cls.collect

    def collect(self):
        assert self.columns == [SUMMARY], f"a DataFrame of {self.columns} was collected"
        rows = original(self)
        collected.extend(decode(r[0]) for r in rows)
        return rows

    def refuse(self, *args, **kwargs):
        raise AssertionError("the rows were brought to the driver")

    monkeypatch.setattr(cls, "collect", collect)
    for name in ("toPandas", "toArrow", "toLocalIterator", "take", "head", "tail"):
        for owner in {cls, DataFrame}:
            if hasattr(owner, name):
                monkeypatch.setattr(owner, name, refuse)
    got = bspark.fit(bayesrule.MixedNB(), df, "label", features=features)
    # the integer columns' value counts, then the statistics: one summary per partition each
    assert len(collected) == 2 * df.rdd.getNumPartitions()
    assert all(isinstance(o, Outcome) for o in collected)
    monkeypatch.undo()
    _assert_same_model(bayesrule.MixedNB().fit(pdf[features], pdf["label"]), got)


def test_null_labels_are_left_out_with_a_warning(spark, frames):
    pdf, _, features = frames["normal"]
    holed = pdf.copy()
    holed["label"] = holed["label"].astype(object)
    holed.loc[holed.index[:7], "label"] = None
    df = spark.createDataFrame(
        holed, schema="x0 double, x1 double, x2 double, label string, w double"
    )
    with pytest.warns(UserWarning, match=r"left out 7 row\(s\) whose label \(column 'label'\)"):
        got = bspark.fit(bayesrule.GaussianNB(), df, "label", features)
    kept = holed.iloc[7:]
    ref = bayesrule.GaussianNB().fit(kept[features], kept["label"].astype(str))
    _assert_same_model(ref, got)


def test_bad_input_is_refused_on_the_driver_before_any_job(spark, frames, fitted, monkeypatch):
    pdf, df, features = frames["normal"]
    fitted = fitted[0]["gnb"]
    before = fitted.predict_proba(pdf[features])

    def no_job(self, *args, **kwargs):
        raise AssertionError("a Spark job was started")

    monkeypatch.setattr(type(df), "mapInArrow", no_job)
    est = bayesrule.GaussianNB()
    with pytest.raises(ValueError, match="target column 'y' is not in the DataFrame"):
        bspark.fit(est, df, "y")
    with pytest.raises(ValueError, match=r"feature column\(s\) 'x9' not in the DataFrame"):
        bspark.fit(est, df, "label", features=["x0", "x9"])
    with pytest.raises(ValueError, match="weight column 'weight' is not in the DataFrame"):
        bspark.fit(est, df, "label", weight="weight")
    texty = df.withColumn("x1", df["x1"].cast("string"))
    with pytest.raises(ValueError, match="feature column 'x1' has Spark type string"):
        bspark.fit(est, texty, "label")
    with pytest.raises(ValueError, match=r"lacks the feature column\(s\) \['x2'\]"):
        bspark.predict(fitted, df.drop("x2"))
    with pytest.raises(ValueError, match=r"differ from the columns GaussianNB was fitted on"):
        bspark.predict(fitted, df, features=["x1", "x0", "x2"])
    with pytest.raises(ValueError, match=r"already in the DataFrame"):
        bspark.predict(fitted, df.withColumnRenamed("w", "prediction"))
    with pytest.raises(TypeError, match="cannot be fitted on a Spark DataFrame"):
        bspark.fit(bayesrule.RegularizedDiscriminantAnalysisCV(), df, "label")
    with pytest.raises(TypeError, match="pyspark.sql.DataFrame"):
        bspark.fit(est, pdf, "label")
    assert not hasattr(est, "stats_")
    np.testing.assert_array_equal(fitted.predict_proba(pdf[features]), before)


def test_a_fit_that_fails_on_the_executors_leaves_the_estimator_as_it_was(spark, frames):
    pdf, df, features = frames["normal"]
    est = bspark.fit(bayesrule.LinearDiscriminantAnalysis(), df, "label", features=features)
    stats, proba = est.stats_, est.predict_proba(pdf[features])
    unknown = df.where(df["label"] == "a").withColumn("label", df["x0"].cast("string"))
    with pytest.raises(ValueError, match="label"):
        bspark.fit(est, unknown, "label", features, partial=True)
    with pytest.raises(ValueError, match="no row to fit on"):
        bspark.fit(est, df.where(df["x0"] > 1e9), "label", features)
    with_nan = spark.createDataFrame(
        pd.DataFrame({"x0": [np.nan, 1.0], "x1": [0.0, 1.0], "x2": [1.0, 2.0], "label": ["a", "b"]})
    )
    with pytest.raises(ValueError, match="NaN"):
        bspark.fit(est, with_nan, "label")
    assert est.stats_ is stats
    np.testing.assert_array_equal(est.predict_proba(pdf[features]), proba)


def test_java_check(tmp_path, monkeypatch):
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.22\" 2024-01-16' >&2\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(RuntimeError, match=r"needs Java 17 or newer; .* is Java 11\."):
        env.check_java()
    java.write_text("#!/bin/sh\necho 'java version \"1.8.0_392\"' >&2\n")
    assert env.java_version() == 8
    java.write_text("#!/bin/sh\necho 'openjdk version \"21.0.1\" 2023-10-17' >&2\n")
    assert env.check_java() == 21
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(RuntimeError, match="none was found"):
        env.check_java()
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(RuntimeError, match="no java on PATH"):
        env.check_java()


def test_without_pyspark_the_error_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(ImportError, match=re.escape("pip install 'bayesrule[spark]'")):
        env.require_pyspark()


def test_the_readme_spark_block_runs(spark):
    text = README.read_text(encoding="utf-8")
    section = text.split("## Spark", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]
    namespace: dict = {"spark": spark}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        exec(compile(code, str(README), "exec"), namespace)
    scored = namespace["scored"]
    assert "prediction" in scored.columns


# ------------------------------------------------------------------ the fast path: Parquet files
#: one model of each family the fast path must read as Spark does (weight: fitted with "w")
DIRECT = ["lda", "qda", "gnb", "mnb", "catnb", "mixed", "mda"]


def _write_parts(pdf, folder: Path, parts: int, row_group: int) -> Path:
    """``pdf`` as ``parts`` Parquet files of row groups of ``row_group`` rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    for i, chunk in enumerate(np.array_split(np.arange(len(pdf)), parts)):
        table = pa.Table.from_pandas(pdf.iloc[chunk], preserve_index=False)
        pq.write_table(table, folder / f"part-{i}.parquet", row_group_size=row_group)
    return folder


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    """For each kind of data: (pandas rows, their folder of 3 Parquet files of 16-row groups)."""
    root = tmp_path_factory.mktemp("direct")
    out = {}
    for kind in ("normal", "counts", "codes", "mixed"):
        pdf = _table(kind, seed=1).drop(columns="part")
        out[kind] = (pdf, _write_parts(pdf, root / kind, 3, 16))
    return out


def _read_way(caplog) -> str:
    """How the last fit read the data, from the backend's DEBUG log."""
    said = [r.getMessage() for r in caplog.records if r.name == "bayesrule.spark"]
    assert said, "the fit said nothing about how it read the data"
    return said[-1]


@pytest.mark.parametrize("short", DIRECT)
def test_a_parquet_scan_is_read_directly_and_gives_the_same_model(short, spark, parquet, caplog):
    """Row groups of 3 files shared out into 2 tasks (2 cores): the model of an in-memory fit."""
    pdf, folder = parquet[_kind(short)]
    features = [c for c in pdf.columns if c not in ("label", "w")]
    weight = "w" if short in ("lda", "gnb") else None
    df = spark.read.parquet(str(folder))
    with caplog.at_level(logging.DEBUG, logger="bayesrule.spark"):
        got = bspark.fit(_make(short), df, "label", features, weight)
    said = [r.getMessage() for r in caplog.records if "directly" in r.getMessage()]
    assert said == ["fit reads 3 Parquet file(s) directly, in 2 task(s)"]
    w = None if weight is None else pdf[weight]
    ref = _make(short).fit(pdf[features], pdf["label"], sample_weight=w)
    _assert_same_model(ref, got, 1e-8 if short == "mda" else 1e-10)


def test_a_derived_dataframe_is_read_through_spark(spark, parquet, caplog):
    from pyspark.sql import functions as F

    pdf, folder = parquet["normal"]
    df = spark.read.parquet(str(folder))
    derived = {
        "Filter": df.where(F.col("x0") > 0.0),
        "computed": df.withColumn("x1", F.col("x1") * 2.0),
        "Repartition": df.repartition(2),
    }
    for why, frame in derived.items():
        with pytest.raises(ValueError, match=f"direct=True, but .*{why}"):
            bspark.fit(bayesrule.GaussianNB(), frame, "label", FEATURES, direct=True)
    with caplog.at_level(logging.DEBUG, logger="bayesrule.spark"):
        got = bspark.fit(bayesrule.GaussianNB(), derived["Filter"], "label", FEATURES)
    assert "through Spark: the plan reads Filter" in _read_way(caplog)
    kept = pdf[pdf["x0"] > 0.0]
    _assert_same_model(bayesrule.GaussianNB().fit(kept[FEATURES], kept["label"]), got)


def test_selected_and_renamed_columns_are_read_from_their_files(spark, parquet, caplog):
    from pyspark.sql import functions as F

    pdf, folder = parquet["normal"]
    df = spark.read.parquet(str(folder))
    # x0 and x1 swapped by their names, a label renamed twice
    swapped = df.select(
        F.col("x1").alias("x0"), F.col("x0").alias("x1"), "x2", F.col("label").alias("k")
    ).withColumnRenamed("k", "y")
    with caplog.at_level(logging.DEBUG, logger="bayesrule.spark"):
        got = bspark.fit(bayesrule.LinearDiscriminantAnalysis(), swapped, "y")
    assert "directly" in _read_way(caplog)
    X = pdf[["x1", "x0", "x2"]].set_axis(FEATURES, axis=1)
    _assert_same_model(bayesrule.LinearDiscriminantAnalysis().fit(X, pdf["label"]), got)
    # integer counts cast to double (as the command line does): read and converted by the tasks
    counts, folder = parquet["counts"]
    cast = spark.read.parquet(str(folder))
    cast = cast.select(*[F.col(c).cast("double").alias(c) for c in FEATURES], "label")
    with caplog.at_level(logging.DEBUG, logger="bayesrule.spark"):
        got = bspark.fit(bayesrule.GaussianNB(), cast, "label")
    assert "directly" in _read_way(caplog)
    ref = bayesrule.GaussianNB().fit(counts[FEATURES].astype(float), counts["label"])
    _assert_same_model(ref, got)


def test_null_labels_classes_and_partial_on_the_fast_path(spark, parquet, tmp_path, caplog):
    pdf, _ = parquet["normal"]
    holed = pdf.copy()
    holed["label"] = holed["label"].astype(object)
    holed.loc[holed.index[::9], "label"] = None
    first = spark.read.parquet(str(_write_parts(holed.iloc[:90], tmp_path / "a", 2, 16)))
    rest = spark.read.parquet(str(_write_parts(holed.iloc[90:], tmp_path / "b", 1, 16)))
    classes = ["a", "b", "c", "d"]
    est = bayesrule.GaussianNB()
    with caplog.at_level(logging.DEBUG, logger="bayesrule.spark"):
        with pytest.warns(UserWarning, match=r"left out 10 row\(s\) whose label"):
            bspark.fit(est, first, "label", FEATURES, classes=classes, partial=True)
        assert "directly" in _read_way(caplog)
        with pytest.warns(UserWarning, match=r"left out 10 row\(s\) whose label"):
            bspark.fit(est, rest, "label", FEATURES, partial=True)
        assert "directly" in _read_way(caplog)
    kept = holed.dropna(subset=["label"])
    ref = bayesrule.GaussianNB().partial_fit(kept[FEATURES], kept["label"], classes=classes)
    assert est.classes_.tolist() == classes
    _assert_same_model(ref, est)


def test_a_file_that_differs_from_the_schema_sends_the_fit_through_spark(spark, parquet, caplog):
    """A column named in another case: Spark reads it (case-insensitively), the fast path cannot."""
    pdf, folder = parquet["normal"]
    df = spark.read.schema("X0 double, x1 double, x2 double, label string").parquet(str(folder))
    with caplog.at_level(logging.DEBUG, logger="bayesrule.spark"):
        got = bspark.fit(bayesrule.GaussianNB(), df, "label")
    assert "through Spark from now on" in _read_way(caplog)
    assert "has no column 'X0'" in _read_way(caplog)
    X = pdf[FEATURES].set_axis(["X0", "x1", "x2"], axis=1)
    _assert_same_model(bayesrule.GaussianNB().fit(X, pdf["label"]), got)


@pytest.mark.parametrize("parts", [3, 8])
def test_a_file_that_is_gone_is_a_clear_error(spark, parquet, tmp_path, parts):
    """3 files (not a multiple of 2 cores): the driver reads the footers; 8: the executors meet it."""
    pdf, _ = parquet["normal"]
    folder = _write_parts(pdf, tmp_path / "gone", parts, 16)
    df = spark.read.parquet(str(folder))
    (folder / "part-1.parquet").unlink()
    est = bayesrule.GaussianNB()
    with pytest.raises(FileNotFoundError, match=r"part-1\.parquet.*gone"):
        bspark.fit(est, df, "label", FEATURES)
    assert not hasattr(est, "stats_")


def test_the_file_systems_of_uris(tmp_path):
    from bayesrule.backends.spark.files import filesystem_of

    fs, path = filesystem_of("file:///tmp/a%20b/part-0.parquet")
    assert type(fs).__name__ == "LocalFileSystem" and path == "/tmp/a b/part-0.parquet"
    assert filesystem_of("/tmp/x.parquet")[1] == "/tmp/x.parquet"
    pytest.importorskip("fsspec")
    fs, path = filesystem_of("memory://bucket/part-0.parquet")  # fsspec's, wrapped for pyarrow
    assert type(fs).__name__ == "PyFileSystem" and path.endswith("bucket/part-0.parquet")
    with pytest.raises(Exception, match="nosuch"):
        filesystem_of("nosuch://host/part-0.parquet")


def test_release_destroys_the_model_broadcast(frames, fitted):
    from bayesrule.backends.spark.predict import release

    _, df, _ = frames["normal"]
    scored = bspark.predict(fitted[0]["gnb"], df, "predict")
    assert scored.count() == df.count()
    assert release(scored) is True
    assert release(scored) is False  # once
    with pytest.raises(Exception, match="(?i)destroyed"):
        scored.count()


# ------------------------------------------------- LDA's pooled statistic (K times less to move)
#: LDA settings that need no class's own scatter: Spark collects PooledScatterStats
POOLED = [
    {},
    {"solver": "eigen", "shrinkage": 0.25, "bias": True},
    {"priors": [0.5, 0.3, 0.2], "n_components": 1, "reduced_rank": True},
]
#: settings that need each class's scatter (or fourth moments): Spark collects those
PER_CLASS = [
    ({"solver": "eigen", "shrinkage": "oas"}, ScatterStats),
    ({"solver": "eigen", "shrinkage": "auto"}, FourthMomentStats),
    ({"moments": "second"}, ScatterStats),
]


@pytest.mark.parametrize("params", POOLED)
def test_lda_on_spark_pools_the_scatter_and_equals_the_in_memory_fit(params, frames):
    """Empty partitions, partitions of one class, string labels, weights: one fit's model."""
    pdf, df, features = frames["normal"]
    got = bspark.fit(bayesrule.LinearDiscriminantAnalysis(**params), df, "label", features, "w")
    assert type(got.stats_) is PooledScatterStats
    ref = bayesrule.LinearDiscriminantAnalysis(**params)
    ref.fit(pdf[features], pdf["label"], sample_weight=pdf["w"])
    assert type(ref.stats_) is ScatterStats  # in memory: unchanged
    _assert_same_model(ref, got)
    X = pdf[features]
    np.testing.assert_allclose(got.predict_proba(X), ref.predict_proba(X), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("params", "kind"), PER_CLASS)
def test_lda_settings_that_need_per_class_statistics_collect_them(params, kind, frames):
    pdf, df, features = frames["normal"]
    got = bspark.fit(bayesrule.LinearDiscriminantAnalysis(**params), df, "label", features)
    assert type(got.stats_) is kind
    ref = bayesrule.LinearDiscriminantAnalysis(**params).fit(pdf[features], pdf["label"])
    _assert_same_model(ref, got)


def test_a_pooled_lda_continues_merges_forgets_and_is_saved(frames, tmp_path):
    """partial (Spark and in memory), forget, merge and a model file keep the pooled statistic."""
    from pyspark.sql import functions as F

    pdf, df, features = frames["normal"]
    X, y = pdf[features], pdf["label"]
    low = (pdf["x0"] < 12.0).to_numpy()
    first, rest = df.where(F.col("x0") < 12.0), df.where(F.col("x0") >= 12.0)
    full = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    est = bspark.fit(bayesrule.LinearDiscriminantAnalysis(), first, "label", features)
    assert bspark.fit(est, rest, "label", features, partial=True) is est
    assert type(est.stats_) is PooledScatterStats
    _assert_same_model(full, est)
    # in memory: more rows, then the same rows forgotten
    est.partial_fit(X[low], y[low])
    est.forget(X[low], y[low])
    _assert_same_model(full, est)
    # a model fitted in memory (ScatterStats) continued on Spark keeps per-class statistics
    half = bayesrule.LinearDiscriminantAnalysis().fit(X[low], y[low])
    bspark.fit(half, rest, "label", features, partial=True)
    assert type(half.stats_) is ScatterStats
    _assert_same_model(full, half)
    # merge: per-class statistics merge into pooled ones, not the other way round
    part = bspark.fit(bayesrule.LinearDiscriminantAnalysis(), rest, "label", features)
    _assert_same_model(full, part.merge(bayesrule.LinearDiscriminantAnalysis().fit(X[low], y[low])))
    with pytest.raises(StatisticsError, match="not PooledScatterStats"):
        half.merge(part)
    # an estimated shrinkage needs each class's scatter: said, and the model is kept
    before = est.predict_proba(X)
    with pytest.raises(ValueError, match="estimated from each class's scatter"):
        est.set_params(solver="eigen", shrinkage="oas").partial_fit(X[low], y[low])
    np.testing.assert_array_equal(
        est.set_params(solver="svd", shrinkage=None).predict_proba(X), before
    )
    # a model file holds the pooled statistic and gives the same model back
    path = tmp_path / "lda.bayesrule"
    bayesrule.save(est, path)
    back = bayesrule.load(path)
    assert type(back.stats_) is PooledScatterStats
    _assert_same_model(est, back, 1e-12)


def _sparse_pixels(n: int, p: int, seed: int) -> pd.DataFrame:
    """float32 features like images': some zero in every row, some in every row of a class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    X = rng.uniform(0.0, 1.0, (n, p)) * (rng.random((n, p)) < 0.6)
    X[:, :2] = 0.0  # never used
    for k in range(4):
        X[np.ix_(y == k, rng.choice(np.arange(2, p), 3, replace=False))] = 0.0
    X[:, 2] += y  # classes differ
    frame = pd.DataFrame(X.astype(np.float32), columns=[f"p{j}" for j in range(p)])
    frame["label"] = y
    return frame


@pytest.mark.parametrize("direct", [None, False])
def test_pooled_lda_from_arrow_columns_equals_the_in_memory_fit(spark, tmp_path, direct, caplog):
    """No weights, no nulls, float32: the tasks summarise their blocks from Arrow's columns
    (features zero in a block left out of its products), on the fast path and through Spark."""
    pdf = _sparse_pixels(1500, 9, seed=4)
    folder = _write_parts(pdf, tmp_path / "pixels", 3, 200)
    df = spark.read.parquet(str(folder))
    with caplog.at_level(logging.DEBUG, logger="bayesrule.spark"):
        got = bspark.fit(bayesrule.LinearDiscriminantAnalysis(), df, "label", direct=direct)
    assert ("directly" in _read_way(caplog)) == (direct is None)
    assert type(got.stats_) is PooledScatterStats
    features = [c for c in pdf.columns if c != "label"]
    ref = bayesrule.LinearDiscriminantAnalysis().fit(pdf[features], pdf["label"])
    _assert_same_model(ref, got)
    np.testing.assert_array_equal(got.stats_.lower[:2], 0.0)
