"""benchmarks/suite_audit.py classifies an item by its marker first, then by its text.

The rule that keeps the oracle share honest: where a parametrised test marks
its parametrisations one by one, an unmarked one is not an oracle because its
function's text calls a reference (a probe's refused items never reach the
comparison of its success branch).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _audit():
    spec = importlib.util.spec_from_file_location("suite_audit", ROOT / "benchmarks/suite_audit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


audit = _audit()


def _probe(short):  # a probe: refused, or compared with a reference
    try:
        out = short.fit()
    except ValueError:
        return None
    return reference_proba(short, out)  # noqa: F821 (read as text, never run)


def _law(a, b):
    import numpy as np

    np.testing.assert_allclose(a, b)


def _item(function, own_marks=(), marked=False, params=None):
    marker = pytest.mark.oracle.mark if marked or own_marks else None
    return SimpleNamespace(
        function=function,
        path=Path("tests/test_x.py"),
        originalname=function.__name__,
        name=function.__name__,
        callspec=SimpleNamespace(params=params or {}, marks=list(own_marks)),
        get_closest_marker=lambda name: marker if name == "oracle" else None,
    )


def test_a_marked_item_is_an_oracle_and_says_it_carries_the_marker():
    assert audit.classify(_item(_law, marked=True)) == ("oracle", True)


def test_the_text_of_a_reference_makes_an_oracle_where_nothing_is_marked_by_parameter():
    assert audit.classify(_item(_probe)) == ("oracle", False)
    assert audit.classify(_item(_law)) == ("law", False)


def test_unmarked_parametrisations_of_a_test_that_marks_them_one_by_one_are_not_oracles():
    marked = _item(_probe, own_marks=[pytest.mark.oracle.mark])
    unmarked = _item(_probe)
    by_param = frozenset(
        audit._function_key(i) for i in (marked, unmarked) if audit._param_marked(i)
    )
    assert by_param == {audit._function_key(marked)}
    assert audit.classify(marked, by_param) == ("oracle", True)
    # its text asserts a refusal ("except ValueError"): that is what the item checks
    assert audit.classify(unmarked, by_param) == ("refusal", False)
