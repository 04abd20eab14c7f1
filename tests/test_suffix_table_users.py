"""Every reader asks the one suffix table (:mod:`bayesrule.io.formats`): the cases that
a reader's own list used to get wrong (``.tab`` streamed, ``.GZ`` IDX files, a
``.ZIP`` output's member name, standard input in each compression)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zipfile
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("typer")
pytest.importorskip("pyarrow")

from typer.testing import CliRunner  # noqa: E402

from bayesrule import LinearDiscriminantAnalysis, predict_stream  # noqa: E402
from bayesrule.cli._app import app  # noqa: E402
from bayesrule.cli._read_table import _sniff_content  # noqa: E402
from bayesrule.datasets import read_idx  # noqa: E402
from bayesrule.io import load  # noqa: E402
from bayesrule.io.formats import COMPRESSION_MAGIC, EXCEL  # noqa: E402


def _frame(seed: int, n: int = 200) -> object:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 3)) + y[:, None]
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["label"] = np.array(["x", "y", "z"])[y]
    return df


@pytest.mark.parametrize("suffix", [".tab", ".TSV", ".tab.gz", ".Tab.GZ"])
@pytest.mark.parametrize("seed", [0, 1])
def test_tab_files_stream_as_tab_separated(tmp_path, suffix, seed):
    data = tmp_path / f"d{suffix}"
    text = _frame(seed).to_csv(sep="\t", index=False).encode()
    data.write_bytes(gzip.compress(text) if suffix.lower().endswith(".gz") else text)
    models = []
    for flag in ("--stream", "--no-stream"):
        out = tmp_path / f"m{flag}.brm"
        res = CliRunner().invoke(app, ["fit", str(data), "-t", "label", "-o", str(out), flag])
        assert res.exit_code == 0, (res.output, res.exception)
        models.append(load(out))
    np.testing.assert_allclose(models[0].means_, models[1].means_, rtol=1e-10)
    np.testing.assert_allclose(models[0].covariance_, models[1].covariance_, rtol=1e-10)


def _idx_bytes(values: np.ndarray) -> bytes:
    return b"\x00\x00\x08\x01" + len(values).to_bytes(4, "big") + values.tobytes()


@pytest.mark.parametrize(
    ("suffix", "pack"),
    [
        ("", lambda b: b),
        (".gz", gzip.compress),
        (".GZ", gzip.compress),
        (".bz2", bz2.compress),
        (".Xz", lzma.compress),
    ],
)
def test_read_idx_follows_the_compression_suffix(tmp_path, suffix, pack):
    labels = np.random.default_rng(len(suffix)).integers(0, 10, 50).astype(np.uint8)
    path = tmp_path / f"t-labels-idx1-ubyte{suffix}"
    path.write_bytes(pack(_idx_bytes(labels)))
    np.testing.assert_array_equal(read_idx(path), labels)


def test_read_idx_names_a_file_that_is_not_what_its_suffix_says(tmp_path):
    path = tmp_path / "t-labels-idx1-ubyte.xz"
    path.write_bytes(_idx_bytes(np.arange(5, dtype=np.uint8)))  # not compressed
    with pytest.raises(ValueError, match=r"t-labels-idx1-ubyte\.xz: cannot read IDX file"):
        read_idx(path)


@pytest.mark.parametrize("compression", sorted(set(COMPRESSION_MAGIC.values())))
def test_standard_input_compression_by_its_magic_bytes(compression):
    text = b"a,b\n1,2\n"
    if compression == "zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("t.csv", text)
        data = buf.getvalue()
    elif compression == "zstd":
        pa = pytest.importorskip("pyarrow")
        data = pa.compress(text, codec="zstd", asbytes=True)
    else:
        data = {"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[compression](text)
    kind = _sniff_content(data)
    assert kind.name == "CSV" and kind.compression == compression


def test_standard_input_excel_is_told_from_a_zip_archive():
    pytest.importorskip("openpyxl")
    buf = io.BytesIO()
    pd.DataFrame({"a": [1, 2]}).to_excel(buf, index=False)
    assert _sniff_content(buf.getvalue()).format is EXCEL


@pytest.mark.parametrize("name", ["out.csv.zip", "out.csv.ZIP", "out.TSV.Zip"])
def test_predict_stream_zip_member_is_the_name_without_compression(tmp_path, name):
    df = _frame(3)
    src = tmp_path / "d.parquet"
    df.to_parquet(src)
    est = LinearDiscriminantAnalysis().fit(df[["a", "b", "c"]], df["label"])
    out = predict_stream(est, src, tmp_path / name, method="predict", target="label")
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == [Path(name).stem]
        back = pd.read_csv(zf.open(Path(name).stem), sep="\t" if "TSV" in name else ",")
    np.testing.assert_array_equal(back["prediction"], est.predict(df[["a", "b", "c"]]))


def test_predict_stream_refuses_an_option_iter_predict_does_not_take(tmp_path):
    df = _frame(4)
    src = tmp_path / "d.parquet"
    df.to_parquet(src)
    est = LinearDiscriminantAnalysis().fit(df[["a", "b", "c"]], df["label"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'weight'"):
        predict_stream(est, src, tmp_path / "p.csv", weight="a")
    assert not (tmp_path / "p.csv").exists()


@pytest.mark.parametrize("inner", ["parquet", "xlsx"])
def test_file_set_names_a_format_compressed_as_a_whole(tmp_path, inner):
    good = tmp_path / "a.parquet"
    _frame(5).to_parquet(good)
    bad = tmp_path / f"b.{inner}.gz"
    bad.write_bytes(gzip.compress(b"x"))
    res = CliRunner().invoke(app, ["fit", str(good), str(bad), "-t", "label", "-o", "m.brm"])
    assert res.exit_code == 2
    name = {"parquet": "Parquet", "xlsx": "Excel"}[inner]
    assert f"a compressed {name} file cannot be read" in res.stderr


def test_reading_options_are_those_each_command_lists_in_its_help():
    """Each command takes the shared reading options it declares, after its own, in one order."""
    import typer.main

    from bayesrule.cli._options import Reading

    order = [f.name.replace("_", "-") for f in __import__("dataclasses").fields(Reading)]
    cmd = typer.main.get_command(app)
    commands = cmd.commands  # type: ignore[attr-defined]
    expected = {
        "fit": [o for o in order if o != "incomplete"],
        "predict": [o for o in order if o != "missing-target"],
        "evaluate": order,
        "plot": ["sep", "na-values", "sheet", "missing-target", "split"],
    }
    for name, options in expected.items():
        params = [p.name.replace("_", "-") for p in commands[name].params]
        assert params[-len(options) :] == options, (name, params)
    splits = {n: next(p for p in commands[n].params if p.name == "split") for n in expected}
    assert splits["fit"].default == "train" and splits["predict"].default == "test"
