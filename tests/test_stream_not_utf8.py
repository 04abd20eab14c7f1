"""A streamed CSV holding bytes that are not UTF-8 is refused, naming where; never fitted.

pyarrow reads a text column holding such bytes as binary: its labels became
``"b'\\xe9t\\xe9'"``, a class of its own beside ``'été'``, and the fit went on
(found by an audit). A later block of a column read as text raised pyarrow's
bare "invalid UTF8 data"; a number column's cell was offered to na_values as
``'2\\ufffd'``, which no marker can match.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayesrule as br

pytest.importorskip("pyarrow")


def _write(path, rows, latin_from):
    """A CSV of ``rows`` rows, UTF-8 up to data row ``latin_from``, Latin-1 after."""
    rng = np.random.default_rng(0)
    lines = ["a,b,label"]
    for i in range(rows):
        label = "été" if i % 2 else "hiver"
        lines.append(f"{rng.normal():.3f},{rng.normal():.3f},{label}")
    head = "\n".join(lines[: latin_from + 1]) + "\n"
    tail = "\n".join(lines[latin_from + 1 :]) + "\n"
    data = head.encode("utf-8") + tail.encode("latin-1")
    path.write_bytes(data)
    return data


@pytest.mark.parametrize(
    ("rows", "latin_from", "block_rows"),
    [(3000, 2000, 500), (3000, 2000, None), (200_000, 150_000, 500)],
    ids=["one-read-block", "default-blocks", "later-block"],
)
def test_a_label_column_with_latin1_bytes_is_refused_naming_where(
    tmp_path, rows, latin_from, block_rows
):
    path = tmp_path / "labels.csv"
    data = _write(path, rows, latin_from)
    first = data.index(b"\xe9")
    line = data[:first].count(b"\n") + 1
    model = br.GaussianNB()
    with pytest.raises(ValueError, match="not UTF-8 text") as info:
        br.fit_stream(model, path, target="label", block_rows=block_rows, progress=False)
    msg = str(info.value)
    assert "labels.csv" in msg and "iconv -f latin1 -t UTF-8" in msg
    # the first foreign byte: its data row (line - 1) or its line and byte offset
    assert f"data row {line - 1}" in msg or (f"line {line}" in msg and f"{first:,}" in msg), msg
    assert not hasattr(model, "classes_")


def test_a_number_cell_with_latin1_bytes_gets_no_na_values_advice(tmp_path):
    rng = np.random.default_rng(1)
    lines = ["a,b,label"]
    for i in range(3000):
        b = "2\xe9" if i == 2500 else f"{rng.normal():.3f}"
        lines.append(f"{rng.normal():.3f},{b},{'x' if i % 2 else 'y'}")
    path = tmp_path / "numbers.csv"
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8 text") as info:
        br.fit_stream(br.GaussianNB(), path, target="label", block_rows=500, progress=False)
    msg = str(info.value)
    assert "column 'b'" in msg and "na_values" not in msg and "iconv" in msg


def test_utf8_text_streams_as_before(tmp_path):
    path = tmp_path / "clean.csv"
    _write(path, 3000, 3000)  # all UTF-8
    model = br.fit_stream(br.GaussianNB(), path, target="label", block_rows=500, progress=False)
    assert sorted(model.classes_.tolist()) == ["hiver", "été"]
    assert model.class_count_.sum() == 3000


def test_a_compressed_file_gets_a_command_that_decompresses_first(tmp_path):
    import gzip

    plain = tmp_path / "labels.csv"
    _write(plain, 3000, 2000)
    packed = tmp_path / "labels.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    with pytest.raises(ValueError, match="not UTF-8 text") as info:
        br.fit_stream(br.GaussianNB(), packed, target="label", block_rows=500, progress=False)
    assert f"gzip -dc {packed} | iconv -f latin1 -t UTF-8" in str(info.value)
