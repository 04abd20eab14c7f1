"""Classify the test suite's items: oracle, law, refusal or smoke.

Usage: python benchmarks/suite_audit.py [pytest args, e.g. tests/test_io.py]

Collects the items (nothing runs) and puts each in one class, the first
that applies:

* oracle: marked ``@pytest.mark.oracle``, or its test function (with the
  module-level helpers it calls by name) computes the expected number
  independently: scikit-learn's estimators, ``scipy.stats``, a NumPy
  transcription (a helper named ``*reference*``/``*transcription*``), or the
  same model fitted on cleaned input (``cleaned``);
* refusal: it asserts an error or a warning (``pytest.raises``,
  ``pytest.warns``, or a probe counting refusals);
* law: it compares numbers of bayesrule with other numbers of bayesrule
  (``assert_allclose``, ``array_equal``, ``allclose``): merge = fit, save =
  load, streamed = in memory, and the like;
* smoke: anything else (shapes, finiteness, types, that it runs).

The classification reads source text, so it is a guide, not a proof; the
``oracle`` marker is the authoritative part, and the report shows how many
oracle items carry it. Where a parametrised test marks its parametrisations
one by one (``pytest.param(..., marks=pytest.mark.oracle)``), the marks say
which of them reach the comparison: its unmarked items are not oracles by the
text of the function they share (a probe whose success branch calls a
reference that its refused items never reach). Prints a table by class and
by file.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ORACLE = re.compile(
    r"\bsk(?:nb|da|learn)?\.\w+\(|sklearn\.(?:naive_bayes|discriminant_analysis|mixture)"
    r"|\bGaussianMixture\b|scipy\.stats|\bstats\.(?:norm|poisson|bernoulli|multivariate_normal"
    r"|gaussian_kde|multinomial)|\breference\w*\(|\btranscription\w*\(|\bcleaned\w*\b"
    r"|\bmass_\w+\(|\bfrom_sklearn\b"
)
REFUSAL = re.compile(
    r"pytest\.(?:raises|warns)\b|\brefused\b|\bModelFileError\b"
    r"|except \(?(?:ValueError|TypeError|\w+Error)"
)
LAW = re.compile(r"assert_allclose|assert_array_equal|array_equal|\.allclose\(|assert_equal")


def _source(fn) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return ""


def _called_helpers(fn, source: str) -> str:
    """The source of module-level functions the test calls by name, one level deep."""
    module = inspect.getmodule(fn)
    if module is None or not source:
        return ""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    names = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    out = []
    for name in names:
        obj = getattr(module, name, None)
        if inspect.isfunction(obj) and obj.__module__ == module.__name__:
            out.append(_source(obj))
    return "\n".join(out)


def _module_of(value) -> str:
    value = getattr(value, "func", value)  # a functools.partial of a check
    if isinstance(value, (tuple, list)):
        return " ".join(_module_of(v) for v in value)
    return getattr(value, "__module__", None) or type(value).__module__ or ""


def _is_sklearn_check(value) -> bool:
    return "sklearn.utils.estimator_checks" in _module_of(value)


def _is_sklearn_model(value) -> bool:
    """A scikit-learn estimator among the parameters (a pair to compare with)."""
    values = value if isinstance(value, (tuple, list)) else [value]
    return any(type(v).__module__.startswith("sklearn.") and hasattr(v, "fit") for v in values)


def _param_marked(item) -> bool:
    """Whether the item's own parametrisation carries the oracle marker."""
    marks = getattr(getattr(item, "callspec", None), "marks", ())
    return any(m.name == "oracle" for m in marks)


def _function_key(item) -> tuple[str, str]:
    return str(item.path), getattr(item, "originalname", item.name)


def classify(item, marked_by_param: frozenset = frozenset()) -> tuple[str, bool]:
    """(class, carries the oracle marker).

    ``marked_by_param``: the tests (``_function_key``) that mark some of their
    parametrisations as oracles; their unmarked items are classified without
    the oracle patterns.
    """
    marked = item.get_closest_marker("oracle") is not None
    if marked:
        return "oracle", True
    by_param = _function_key(item) in marked_by_param
    fn = getattr(item, "function", None)
    source = _source(fn) if fn is not None else ""
    text = source + "\n" + (_called_helpers(fn, source) if fn is not None else "")
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(_is_sklearn_check(v) for v in params.values()):
        return "law", False  # scikit-learn's API checks: conventions, not numbers
    if not by_param and (
        ORACLE.search(text)
        or any(_is_sklearn_model(v) and name in source for name, v in params.items())
    ):
        return "oracle", False
    if REFUSAL.search(text):
        return "refusal", False
    if LAW.search(text):
        return "law", False
    return "smoke", False


class _Collector:
    def __init__(self) -> None:
        self.items: list = []

    def pytest_collection_modifyitems(self, items) -> None:
        self.items = list(items)


def main(argv: list[str]) -> int:
    collector = _Collector()
    code = pytest.main(
        ["--collect-only", "-qq", "-p", "no:cacheprovider", *argv], plugins=[collector]
    )
    if code not in (0, 5):
        return int(code)
    total: Counter[str] = Counter()
    marked = 0
    by_file: dict[str, Counter[str]] = defaultdict(Counter)
    by_param = frozenset(_function_key(i) for i in collector.items if _param_marked(i))
    for item in collector.items:
        kind, has_marker = classify(item, by_param)
        total[kind] += 1
        marked += has_marker
        by_file[Path(str(item.path)).name][kind] += 1
    n = sum(total.values())
    kinds = ["oracle", "law", "refusal", "smoke"]
    print(f"\n{n} items")
    for kind in kinds:
        print(f"  {kind:<8} {total[kind]:>6}  {100 * total[kind] / max(n, 1):5.1f} %")
    print(f"  (oracle items carrying the marker: {marked})")
    print(f"\n{'file':<36}" + "".join(f"{k:>9}" for k in kinds))
    for name in sorted(by_file):
        row = by_file[name]
        print(f"{name:<36}" + "".join(f"{row[k]:>9}" for k in kinds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
