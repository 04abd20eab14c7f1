"""The README's usage block runs as written on MNIST and says what is true."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.mnist
def test_readme_usage_block(mnist, tmp_path, monkeypatch):
    text = README.read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", text.split("## Use", 1)[1], flags=re.S)[0]
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    X_test, y_test = namespace["X_test"], namespace["y_test"]
    lda, same = namespace["lda"], namespace["same"]
    assert lda.score(X_test, y_test) == pytest.approx(0.873, abs=5e-4)
    # statistics of blocks, merged, give the model of one fit
    np.testing.assert_allclose(
        same.predict_proba(X_test[:2000]), lda.predict_proba(X_test[:2000]), atol=1e-8
    )
    # merging two halves gives the streamed model (before it forgot 100 rows)
    both, qda = namespace["both"], namespace["qda"]
    X, y = namespace["X"], namespace["y"]
    qda.partial_fit(X[:100], y[:100])
    np.testing.assert_allclose(
        both.predict_proba(X_test[:500]), qda.predict_proba(X_test[:500]), atol=1e-8
    )
