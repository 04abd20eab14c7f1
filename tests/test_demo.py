"""The demo's computation and report (the table `make demo` prints)."""

from __future__ import annotations

import numpy as np
import pytest

from bayesrule.demo import confusion_matrix, format_report, main, run


def test_confusion_matrix_is_row_normalised():
    y = np.array([0, 0, 1, 1, 1, 2])
    p = np.array([0, 1, 1, 1, 2, 2])
    cm = confusion_matrix(y, p, np.array([0, 1, 2]))
    np.testing.assert_allclose(cm.sum(axis=1), 1.0)
    np.testing.assert_allclose(cm[1], [0, 2 / 3, 1 / 3])


def test_wine_only_when_mnist_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("BAYESRULE_DATA", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    import bayesrule.datasets as ds

    monkeypatch.setattr(ds, "find_mnist", lambda path=None: None)
    monkeypatch.setattr("bayesrule.demo.find_mnist", lambda path=None: None)
    result = run(str(tmp_path), str(tmp_path / "report"))
    assert result.mnist_dir is None and result.confusion is None
    wine = {r["model"]: r for r in result.rows if r["dataset"] == "wine"}
    assert wine["LDA"]["n_test"] == 60 and wine["LDA"]["errors"] <= 1
    text = format_report(result)
    assert "MNIST not found" in text and "LDA" in text
    assert (tmp_path / "report" / "report.txt").read_text().strip() == text


@pytest.mark.mnist
def test_mnist_table_and_confusion_matrix(mnist, capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "row-normalised confusion matrix" in out
    lda = [line for line in out.splitlines() if line.startswith("mnist  LDA ")]
    assert lda and float(lda[0].split()[2]) >= 0.873
    rows = [line for line in out.splitlines() if line.strip()[:1].isdigit() and "." in line]
    assert len(rows) >= 10
