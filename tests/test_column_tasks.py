"""One column-aware task for every estimator whose statistic has a column pass.

``GenerativeClassifier.summariser()`` gives a :class:`ColumnSummariser`
wherever the fit's statistic is the declared one (or its extension) and has
``from_columns``; ``input_spec().column_blocks`` says so to the backends.
Over every registered estimator: the two agree; where a task takes columns,
its statistics equal the laid-out block's (float32 and float64), and a NaN,
an infinity, weights or a refused label send the block to the laid-out
path; a streamed Parquet fit of a model that gained the column pass by the
rule alone (DiagonalLDA) takes it and equals ``fit``.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayesrule as br
from _arrow_tables import columns_of, write_parquet
from _generated import class_rows
from bayesrule.estimators._tasks import ColumnSummariser
from bayesrule.estimators.registry import available


def _data(n, p, k, dtype, seed):
    return class_rows(n, p, k, dtype, 50.0, seed)


ESTIMATORS = sorted(available().items())


@pytest.mark.parametrize("name,cls", ESTIMATORS, ids=[n for n, _ in ESTIMATORS])
def test_task_and_spec_agree_with_the_statistics_column_pass(name, cls):
    est = cls()
    declared, actual = est.spec.statistic, est._statistic_type()
    expected = (
        hasattr(declared, "from_columns") and hasattr(actual, "from_columns") and not est.spec.frame
    )
    assert est.input_spec().column_blocks is expected
    assert isinstance(est.summariser(), ColumnSummariser) is expected


def test_the_column_models_are_the_gaussian_ones():
    """Which models take columns follows from their statistics: the Gaussian ones."""
    takes = {n for n, cls in ESTIMATORS if cls().input_spec().column_blocks}
    assert {"gnb", "lda", "qda", "rda"} <= takes
    assert "rdacv" not in takes  # its search wraps the statistic
    assert not takes & {"mnb", "cnb", "bnb", "catnb", "mixed", "mda", "rdacv"}


COLUMN_MODELS = [(n, c) for n, c in ESTIMATORS if c().input_spec().column_blocks]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,cls", COLUMN_MODELS, ids=[n for n, _ in COLUMN_MODELS])
def test_column_statistics_equal_the_laid_out_block_or_decline(name, cls, dtype):
    X, y = _data(300, 5, 3, dtype, 11)
    task = cls().summariser()
    by_columns = task.column_statistics(columns_of(X), y)
    assert by_columns is not None
    laid_out = task.statistics(X, y)
    assert type(by_columns) is type(laid_out)
    assert by_columns.allclose(laid_out, rtol=1e-10)
    declared = task.column_statistics(columns_of(X), y, classes=[0, 1, 2, 3])
    assert declared is not None and list(declared.classes) == [0, 1, 2, 3]
    assert declared.allclose(task.statistics(X, y, classes=[0, 1, 2, 3]), rtol=1e-10)
    for bad in (np.nan, np.inf, -np.inf):
        Xb = X.copy()
        Xb[7, 3] = bad
        part = task.column_statistics(columns_of(Xb), y)
        if np.isnan(bad) and task.estimator.spec.allow_nan:  # a missing value, as in fit
            assert part is not None and part.allclose(task.statistics(Xb, y), rtol=1e-10)
        else:  # the laid-out block's error names the row
            assert part is None
    assert task.column_statistics(columns_of(X), y, np.ones(len(y))) is None
    assert task.column_statistics(columns_of(X), y, classes=[0, 1]) is None
    assert task.column_statistics(columns_of(X), y.astype(float) + 0.5) is None
    assert task.column_statistics([], y) is None


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_diagonal_lda_streams_by_columns_and_equals_fit(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    pytest.importorskip("pyarrow.parquet")
    X, y = _data(700, 6, 4, np.float32, 3)
    path = write_parquet(tmp_path / "part.parquet", X, y, 150)
    calls = []
    real = ColumnSummariser.column_statistics

    def spy(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(ColumnSummariser, "column_statistics", spy)
    est = br.fit_stream(br.DiagonalLDA(), path, target="label", progress=False)
    monkeypatch.undo()
    assert calls and all(calls)
    whole = br.DiagonalLDA().fit(X, y)
    assert est.stats_.allclose(whole.stats_, rtol=1e-10)
    np.testing.assert_array_equal(est.predict(X), whole.predict(X))
