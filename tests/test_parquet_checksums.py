"""A Parquet page damaged on disk is refused where the file carries page checksums.

Without verification pyarrow decodes a zeroed page into other numbers and the
fit goes on (an audit's ``corrupt.parquet``). Files written with
``write_page_checksum=True`` (pyarrow, Spark, DuckDB can) are checked by
every reader of bayesrule: the streamed one and the CLI's in-memory one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bayesrule

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(0)
    n = 2000
    table = pa.table({"a": rng.normal(size=n), "b": rng.normal(size=n), "y": rng.integers(0, 2, n)})
    good = tmp_path / "good.parquet"
    pq.write_table(table, good, write_page_checksum=True, compression="none")
    data = bytearray(good.read_bytes())
    data[300:340] = bytes(40)  # inside the first data page of 'a'
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    return good, bad


def test_the_damage_would_pass_unverified(files):
    _, bad = files
    # what a reader without verification does: decodes other numbers, no error
    pq.read_table(bad, page_checksum_verification=False)


def test_a_damaged_page_is_refused_by_the_streamed_reader(files):
    good, bad = files
    bayesrule.fit_stream(bayesrule.GaussianNB(), str(good), target="y")
    with pytest.raises(ValueError, match=r"bad\.parquet.*CRC checksum verification failed"):
        bayesrule.fit_stream(bayesrule.GaussianNB(), str(bad), target="y")


def test_a_damaged_page_is_refused_by_the_command_line(files, tmp_path):
    pytest.importorskip("typer")
    _, bad = files
    cli = Path(sys.executable).with_name("bayesrule")
    out = tmp_path / "m.bayesrule"
    result = subprocess.run(
        [str(cli), "fit", str(bad), "-t", "y", "-m", "gnb", "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "bad.parquet" in result.stderr and "CRC checksum" in result.stderr
    assert not out.exists()
