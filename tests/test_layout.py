"""The source layout's rules (docs/architecture.md), measured by benchmarks/layout_audit.py.

Imports point one way (front ends and backends -> estimators -> models ->
statistics -> utilities) with no cycle, counting imports made inside
functions; the lower layers reach no engine or front end through any chain;
no private name or private module crosses a subpackage; no source file is
over 600 lines; the backends use the estimators' public seam only.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


def _audit_module():
    spec = importlib.util.spec_from_file_location(
        "layout_audit", ROOT / "benchmarks/layout_audit.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def audit():
    return _audit_module().audit(SRC)


def test_no_import_cycle(audit):
    assert audit["cycles"] == []


def test_imports_point_down(audit):
    assert audit["upward"] == []


def test_lower_layers_reach_no_engine_or_front_end(audit):
    assert audit["leaks"] == []


def test_no_private_name_crosses_a_subpackage(audit):
    assert audit["private_cross"] == []


def test_no_source_file_over_600_lines(audit):
    assert audit["over_600"] == []


def test_the_audit_sees_what_it_measures(tmp_path):
    """The audit itself: a planted cycle, an upward import and a private import are found."""
    module = _audit_module()
    pkg = tmp_path / "bayesrule"
    for sub in ("stats", "estimators", "backends"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "stats" / "a.py").write_text(
        "def f():\n    from ..estimators.b import g\n    import dask\n"
    )
    (pkg / "estimators" / "b.py").write_text("from ..stats.a import f\nfrom ..stats.a import _h\n")
    found = module.audit(tmp_path)
    assert ["bayesrule.estimators.b", "bayesrule.stats.a"] in found["cycles"]
    assert "bayesrule.stats.a -> bayesrule.estimators.b" in found["upward"]
    assert any(leak.startswith("bayesrule.stats.a reaches dask") for leak in found["leaks"])
    assert any("_h" in item for item in found["private_cross"])


_PRIVATE_USE = re.compile(r"\b(?:est|estimator|model|proto|base|self\.estimator)\._[a-z]\w*")


@pytest.mark.parametrize("folder", ["backends", "io", "cli", "plotting"])
def test_front_ends_use_public_estimator_names(folder):
    """The backends, model files, CLI and plots reach estimators through public names only."""
    uses = []
    for path in sorted((SRC / "bayesrule" / folder).rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _PRIVATE_USE.search(line) and not line.lstrip().startswith("#"):
                uses.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert uses == []
