"""Date and time columns in a streamed fit: MixedNB takes them declared 'categorical'.

The in-memory MixedNB takes a timestamp column declared 'categorical' (and
names that declaration when it is not); the streamed reader must not refuse
what the model takes. Models of numbers refuse such a column naming the file.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesrule

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


@pytest.fixture()
def table(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 2, n)
    days = rng.integers(0, 3, n) + y
    frame = pd.DataFrame(
        {
            "ts": pd.to_datetime("2024-01-01") + pd.to_timedelta(days, unit="D"),
            "a": rng.normal(size=n) + y,
            "y": y,
        }
    )
    path = tmp_path / "ts.parquet"
    frame.to_parquet(path)
    return frame, path


def test_a_declared_categorical_timestamp_streams_as_in_memory(table):
    frame, path = table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        streamed = bayesrule.fit_stream(
            bayesrule.MixedNB(columns={"ts": "categorical"}), str(path), target="y"
        )
        whole = bayesrule.MixedNB(columns={"ts": "categorical"}).fit(frame[["ts", "a"]], frame["y"])
    X = frame[["ts", "a"]]
    np.testing.assert_allclose(streamed.predict_proba(X), whole.predict_proba(X), atol=1e-10)


def test_an_undeclared_timestamp_is_refused_naming_the_declaration(table):
    _, path = table
    with pytest.raises(ValueError, match=r"'ts'.*declare columns=\{'ts': 'categorical'\}"):
        bayesrule.fit_stream(bayesrule.MixedNB(), str(path), target="y")


def test_a_model_of_numbers_refuses_a_timestamp_naming_the_file(table):
    _, path = table
    with pytest.raises(ValueError, match=r"ts\.parquet: the column 'ts' holds timestamps"):
        bayesrule.fit_stream(bayesrule.GaussianNB(), str(path), target="y")
