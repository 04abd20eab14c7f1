"""A streamed fit refused from the statistics of all its blocks names the files.

The squared-deviation overflow of a feature (a value of 1e200) is found in
the merged statistics, after every block: the message named the feature and
its range, but not the data it came from.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayesrule

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def _write(path, seed, far=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(100, 3))
    if far:
        X[50, 1] = 1e200
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": np.arange(100) % 2})
    frame.to_parquet(path)


@pytest.mark.parametrize("make", [bayesrule.GaussianNB, bayesrule.LinearDiscriminantAnalysis])
def test_one_file(tmp_path, make):
    path = tmp_path / "p.parquet"
    _write(path, 0, far=True)
    with pytest.raises(ValueError, match=r"p\.parquet: feature 'b' holds values so far apart"):
        bayesrule.fit_stream(make(), str(path), target="y")


def test_several_files(tmp_path):
    for i in range(3):
        _write(tmp_path / f"part-{i}.parquet", i, far=i == 2)
    with pytest.raises(ValueError, match=r"part-0\.parquet and 2 more: feature 'b'"):
        bayesrule.fit_stream(bayesrule.GaussianNB(), str(tmp_path), target="y")


def test_blocks_without_a_name_keep_the_message(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    X[5, 1] = 1e200
    y = np.arange(100) % 2
    with pytest.raises(ValueError, match=r"^feature 1 holds values so far apart"):
        bayesrule.fit_stream(bayesrule.GaussianNB(), [(X[:50], y[:50]), (X[50:], y[50:])])
