"""Helpers the streaming tests share: Arrow tables and Parquet files of ``(X, y)``, thread checks.

``arrow_table`` puts each feature in a column ``x0, x1, ...`` (optionally
cast per column by ``kinds``, with nulls where ``nulls`` is true), the
labels in ``label`` and the weights, if any, in ``w``; ``write_parquet``
writes it in row groups of the size given. ``no_thread_left`` is a fixture
a module turns on with ``pytestmark = pytest.mark.usefixtures(...)`` or an
autouse wrapper: it fails a test that leaves one of bayesrule's worker
threads running (the long-lived BLAS-cap thread excepted).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest


def arrow_table(
    X: Any, y: Any, *, kinds: Any = None, nulls: Any = None, w: Any = None, label: str = "label"
) -> Any:
    """An Arrow table of ``X``'s columns ``x0...``, the labels and the weights."""
    import pyarrow as pa

    cols = {}
    for j in range(X.shape[1]):
        values = X[:, j] if kinds is None else X[:, j].astype(kinds[j])
        mask = None if nulls is None else nulls[:, j]
        cols[f"x{j}"] = pa.array(values, mask=mask)
    cols[label] = pa.array(y)
    if w is not None:
        cols["w"] = pa.array(w)
    return pa.table(cols)


def write_parquet(path: Any, X: Any, y: Any, row_group: int | None = None, **table: Any) -> Any:
    """Write :func:`arrow_table` of the arguments to ``path`` in row groups of ``row_group``."""
    import pyarrow.parquet as pq

    pq.write_table(arrow_table(X, y, **table), path, row_group_size=row_group)
    return path


def columns_of(X: Any) -> list[Any]:
    """``X``'s columns as contiguous 1-D arrays (a columnar block's buffers)."""
    return [np.ascontiguousarray(X[:, j]) for j in range(X.shape[1])]


def our_threads() -> list[threading.Thread]:
    """bayesrule's live worker threads, but the one long-lived thread that caps the BLAS."""
    return [
        t
        for t in threading.enumerate()
        if t.name.startswith("bayesrule")
        and not t.name.startswith("bayesrule-blas")
        and t.is_alive()
    ]


@pytest.fixture
def no_thread_left():
    """Fail the test if it leaves a bayesrule worker thread running."""
    before = set(our_threads())
    yield
    left = [t for t in our_threads() if t not in before]
    assert not left, f"threads left running: {[t.name for t in left]}"
