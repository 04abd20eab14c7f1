"""``bayesrule fit/predict/evaluate --spark``: Spark reads the file, the model is the in-memory one.

Every command runs in this process (typer's runner) on the suite's one
SparkSession (the ``spark`` fixture): ``--spark local[2]`` takes the active
session, as ``getOrCreate`` does, so no second JVM starts. Each result is
compared with the same command without ``--spark`` on the same file: the
model files hold the same model (every fitted array to 1e-10), the
predictions and the report are the same. The refusals (a master that does
not answer, no Java, no pyspark, a missing column) are one line on stderr
and exit status 2, before any Spark job runs.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from _cli_runner import error_line, ok, run  # noqa: E402
from bayesrule.backends.spark import reading  # noqa: E402
from bayesrule.io import load  # noqa: E402
from bayesrule.stats import PooledScatterStats  # noqa: E402


def same_model(a: Path, b: Path) -> None:
    """Two model files hold the same model: every fitted attribute to 1e-10, same predictions."""
    A, B = load(a), load(b)
    assert type(A) is type(B)
    keys = sorted(k for k in vars(A) if k.endswith("_") and not k.startswith("_"))
    assert keys == sorted(k for k in vars(B) if k.endswith("_") and not k.startswith("_"))
    for k in keys:
        x, y = getattr(A, k), getattr(B, k)
        if k == "stats_":
            if type(y) is PooledScatterStats and type(x) is not PooledScatterStats:
                # LDA fitted on Spark (no estimated shrinkage) holds the pooled statistic
                x = PooledScatterStats.from_scatter(x)
            assert x.allclose(y, rtol=1e-10), k
        elif isinstance(x, np.ndarray) and x.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12, err_msg=k)
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=k)
        elif isinstance(x, float):
            assert x == pytest.approx(y, rel=1e-10), k
        else:
            assert repr(x) == repr(y), k


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory) -> dict[str, Path]:
    """Rows with an id, three numeric features, a text column and a label, in several formats."""
    rng = np.random.default_rng(7)
    n = 900
    y = rng.choice(["Adelie", "Chinstrap", "Gentoo"], n)
    df = pd.DataFrame(
        {
            "id": np.arange(n),
            "bill": rng.normal(40, 5, n) + (y == "Gentoo") * 6,
            "depth": rng.normal(17, 2, n) - (y == "Gentoo") * 2,
            "mass": rng.normal(4000, 400, n) + (y == "Chinstrap") * 300,
            "island": np.where(y == "Gentoo", "Biscoe", rng.choice(["Dream", "Torgersen"], n)),
            "species": y,
        }
    )
    folder = tmp_path_factory.mktemp("spark_cli")
    paths = {"csv": folder / "penguins.csv", "gz": folder / "penguins.tsv.gz"}
    df.to_csv(paths["csv"], index=False)
    with gzip.open(paths["gz"], "wt") as fh:
        df.to_csv(fh, index=False, sep="\t")
    # a folder as Spark writes it: part files of three partitions, a _SUCCESS marker
    paths["folder"] = folder / "penguins_parts"
    spark.createDataFrame(df).repartition(3).write.parquet(str(paths["folder"]))
    gaps = df.copy()
    gaps.loc[[3, 50, 400], "species"] = None
    paths["gaps"] = folder / "gaps.csv"
    gaps.to_csv(paths["gaps"], index=False)
    return paths


@pytest.mark.parametrize(
    ("kind", "model", "extra"),
    [
        ("csv", "lda", ["--drop", "id,island"]),
        ("gz", "qda", ["--features", "bill,depth,mass", "--set", "reg_param=0.1"]),
        ("folder", "gnb", ["--drop", "id,island"]),
        ("csv", "mixed", ["--drop", "id"]),
    ],
)
def test_fit_writes_the_model_an_in_memory_fit_writes(tables, tmp_path, kind, model, extra):
    data = tables[kind]
    ok(run("fit", data, "-t", "species", "-m", model, *extra, "-o", tmp_path / "mem.bayesrule"))
    done = ok(
        run(
            "fit",
            data,
            "-t",
            "species",
            "-m",
            model,
            *extra,
            "--spark",
            "local[2]",
            "-o",
            tmp_path / "spark.bayesrule",
        )
    )
    assert "fitted on 900 rows" in done.stderr
    same_model(tmp_path / "mem.bayesrule", tmp_path / "spark.bayesrule")
    a, b = load(tmp_path / "mem.bayesrule"), load(tmp_path / "spark.bayesrule")
    X = pd.read_csv(tables["csv"])[[str(c) for c in a.feature_names_in_]]
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-9, atol=1e-12)


@pytest.fixture(scope="module")
def model(tables, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("spark_model") / "lda.bayesrule"
    ok(run("fit", tables["csv"], "-t", "species", "--drop", "id,island", "-o", path))
    return path


def test_predict_writes_a_folder_with_sparks_writer(tables, model, tmp_path):
    ok(run("predict", model, tables["csv"], "--proba", "--keep", "id", "-o", tmp_path / "m.csv"))
    out = tmp_path / "p.parquet"
    args = ("predict", model, tables["folder"], "--proba", "-k", "id", "--spark", "local[2]")
    done = ok(run(*args, "-o", out))
    assert "900 predictions" in done.stderr
    assert out.is_dir() and (out / "_SUCCESS").exists()
    got = pd.read_parquet(out).sort_values("id").reset_index(drop=True)
    want = pd.read_csv(tmp_path / "m.csv").sort_values("id").reset_index(drop=True)
    assert list(got.columns) == list(want.columns)
    np.testing.assert_array_equal(got["prediction"].astype(str), want["prediction"].astype(str))
    probas = [c for c in want.columns if c.startswith("proba_")]
    np.testing.assert_allclose(got[probas].to_numpy(), want[probas].to_numpy(), rtol=1e-9)
    ok(run(*args, "-o", out))  # a folder Spark wrote is replaced
    assert len(pd.read_parquet(out)) == 900
    other = tmp_path / "mine.parquet"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    line = error_line(run(*args, "-o", other))
    assert "Spark did not write" in line and (other / "notes.txt").exists()


def test_predict_to_standard_output_and_csv_folder(tables, model, tmp_path):
    want = ok(run("predict", model, tables["csv"], "-k", "id")).stdout
    got = ok(run("predict", model, tables["csv"], "-k", "id", "--spark", "local[2]")).stdout
    a = pd.read_csv(io.StringIO(want)).sort_values("id").reset_index(drop=True)
    b = pd.read_csv(io.StringIO(got)).sort_values("id").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    out = tmp_path / "p.csv"
    ok(run("predict", model, tables["gz"], "-k", "id", "--spark", "local[2]", "-o", out))
    parts = sorted(out.glob("part-*.csv"))
    assert parts
    c = pd.concat(pd.read_csv(p) for p in parts).sort_values("id").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, c)


def test_evaluate_gives_the_in_memory_report(tables, model, tmp_path):
    ok(run("evaluate", model, tables["csv"], "-o", tmp_path / "mem"))
    done = ok(run("evaluate", model, tables["folder"], "--spark", "session", "-o", tmp_path / "sp"))
    assert "accuracy" in done.stdout
    a = json.loads((tmp_path / "mem" / "metrics.json").read_text())
    b = json.loads((tmp_path / "sp" / "metrics.json").read_text())
    assert a["confusion_matrix"] == b["confusion_matrix"]
    assert (a["n_samples"], a["accuracy"]) == (b["n_samples"], b["accuracy"])
    for key in ("log_loss", "log_loss_unclipped"):
        assert a[key] == pytest.approx(b[key], rel=1e-10)
    assert a["per_class"] == b["per_class"]


def test_rows_without_a_label_are_left_out_or_refused(tables, tmp_path):
    done = ok(
        run(
            "fit",
            tables["gaps"],
            "-t",
            "species",
            "--drop",
            "id,island",
            "--spark",
            "local[2]",
            "-o",
            tmp_path / "m.bayesrule",
        )
    )
    assert "fitted on 897 rows" in done.stderr
    assert "left out 3 rows" in done.stderr
    line = error_line(
        run(
            "fit",
            tables["gaps"],
            "-t",
            "species",
            "--drop",
            "id,island",
            "--missing-target",
            "error",
            "--spark",
            "local[2]",
            "-o",
            tmp_path / "e.bayesrule",
        )
    )
    assert "3 rows" in line and "species" in line
    assert not (tmp_path / "e.bayesrule").exists()


def test_a_missing_column_is_one_line(tables, model, tmp_path):
    out = tmp_path / "m.bayesrule"
    line = error_line(run("fit", tables["csv"], "-t", "specie", "--spark", "local[2]", "-o", out))
    assert "no column 'specie' for --target" in line and "did you mean 'species'" in line
    line = error_line(
        run(
            "fit",
            tables["csv"],
            "-t",
            "species",
            "-f",
            "bill,wings",
            "--spark",
            "local[2]",
            "-o",
            out,
        )
    )
    assert "wings" in line
    line = error_line(run("fit", tables["csv"], "-t", "species", "--spark", "local[2]", "-o", out))
    assert "'island'" in line and "not numeric" in line
    assert not out.exists()
    lacking = tmp_path / "lacking.csv"
    pd.read_csv(tables["csv"]).drop(columns="depth").to_csv(lacking, index=False)
    line = error_line(run("predict", model, lacking, "--spark", "local[2]"))
    assert "depth" in line


def test_a_malformed_csv_row_is_refused_not_padded(spark, tmp_path):
    """A row with a field too many is an error naming the row (Spark's FAILFAST), never cut."""
    path = tmp_path / "bad.csv"
    path.write_text("a,b,label\n1.0,2.0,x\n3.0,4.0,y\n5.0,6.0,7.0,x\n")
    out = tmp_path / "m.bayesrule"
    line = error_line(run("fit", path, "-t", "label", "--spark", "local[2]", "-o", out))
    assert "Spark:" in line and "malformed" in line.lower()
    assert not out.exists()


@pytest.fixture
def no_session(monkeypatch):
    """The command sees no active session, as a fresh process does (nothing is started)."""
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))


def test_an_unreachable_master_is_one_line(tables, tmp_path, no_session):
    import time

    t0 = time.perf_counter()
    args = ("fit", tables["csv"], "-t", "species", "-o", tmp_path / "m.bayesrule")
    line = error_line(run(*args, "--spark", "spark://127.0.0.1:1"))
    assert "--spark spark://127.0.0.1:1" in line and "no Spark master answered" in line
    assert time.perf_counter() - t0 < 15
    line = error_line(run(*args, "--spark", "sc://127.0.0.1:1"))
    assert "no Spark Connect server answered" in line


def test_java_missing_is_one_line(tables, tmp_path, no_session, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))  # no bin/java there
    args = ("fit", tables["csv"], "-t", "species", "-o", tmp_path / "m.bayesrule")
    line = error_line(run(*args, "--spark", "local[2]"))
    assert "Java" in line


def test_pyspark_missing_names_the_extra(tables, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    args = ("fit", tables["csv"], "-t", "species", "-o", tmp_path / "m.bayesrule")
    line = error_line(run(*args, "--spark", "local[2]"))
    assert "pip install 'bayesrule[spark]'" in line


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--spark", "mesos://h:5050"], "expected 'local[N]'"),
        (["--spark", "local[2]", "--scheduler", "local"], "--scheduler"),
        (["--spark", "local[2]", "--stream"], "--stream"),
    ],
)
def test_bad_masters_and_clashing_options(tables, tmp_path, extra, expected):
    args = ("fit", tables["csv"], "-t", "species", "-o", tmp_path / "m.bayesrule")
    assert expected in error_line(run(*args, *extra))


# ------------------------------------------------------------------ reading, without Spark
@pytest.mark.parametrize(
    ("name", "fmt", "sep", "compression"),
    [
        ("a.csv", "csv", None, None),
        ("a.CSV.GZ", "csv", None, "gzip"),
        ("a.tsv.bz2", "csv", "\t", "bzip2"),
        ("part-00000-x-c000.snappy.parquet", "parquet", None, None),
        ("a.jsonl", "json", None, None),
        ("events.json.gz", "json", None, "gzip"),
        ("a.orc", "orc", None, None),
    ],
)
def test_table_format_by_suffix(name, fmt, sep, compression):
    got = reading.table_format(f"s3a://bucket/{name}")
    assert (got.format, got.sep, got.compression) == (fmt, sep, compression)


def test_table_format_refusals_and_folders(tmp_path):
    with pytest.raises(ValueError, match="xz-compressed"):
        reading.table_format("s3a://b/a.csv.xz")
    with pytest.raises(ValueError, match="no such file"):
        reading.table_format(str(tmp_path / "absent.csv"))
    with pytest.raises(ValueError, match="compressed as a whole"):
        reading.table_format("hdfs://nn/a.parquet.gz")
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(ValueError, match="no data file"):
        reading.table_format(str(folder))
    (folder / "_SUCCESS").write_text("")
    (folder / "part-0.csv.gz").write_bytes(b"")
    assert reading.table_format(str(folder)).format == "csv"
    (folder / "part-1.parquet").write_bytes(b"PAR1")
    with pytest.raises(ValueError, match="several formats"):
        reading.table_format(str(folder))
    plain = tmp_path / "noname"
    plain.write_bytes(b"PAR1....")
    assert reading.table_format(str(plain)).format == "parquet"
    plain.write_bytes(b"a,b\n1,2\n")
    with pytest.raises(ValueError, match="cannot tell its format"):
        reading.table_format(str(plain))
    assert reading.table_format("s3a://bucket/table/").format == "parquet"


def test_locations_and_masters():
    assert reading.location(Path("s3a://bucket/key.csv")) == "s3a://bucket/key.csv"
    assert reading.location(Path("hdfs://nn:8020/a")) == "hdfs://nn:8020/a"
    assert reading.location(Path("file:///tmp/x")) == "file:/tmp/x"
    assert reading.location(Path("data/x.csv")) == "data/x.csv"
    kinds = {
        "local": "local",
        "local[2]": "local",
        "local[*]": "local",
        "local[2,3]": "local",
        "spark://a:7077,b:7077": "standalone",
        "sc://h:15002": "connect",
        "yarn": "cluster",
        "k8s://https://h:443": "cluster",
        "session": "session",
    }
    for master, kind in kinds.items():
        assert reading.master_kind(master) == kind
    for bad in ("local[0]", "local[two]", "spark://", "mesos://h:5050", ""):
        with pytest.raises(ValueError, match="expected"):
            reading.master_kind(bad)
    with pytest.raises(ConnectionError, match=r"127\.0\.0\.1:1: .*127\.0\.0\.1:2: "):
        reading.check_master("spark://127.0.0.1:1,127.0.0.1:2", timeout=2)
    reading.check_master("local[2]")  # nothing to check
