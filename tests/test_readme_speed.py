"""README.md's Speed section is what benchmarks/readme_speed.py generates from the saved results.

So a figure in the README cannot drift from the benchmarks' latest saved
output: rerun the benchmark, then ``python benchmarks/readme_speed.py``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


readme_speed = _load("readme_speed")


def test_readme_section_is_generated_from_saved_results():
    readme = (ROOT / "README.md").read_text()
    assert readme_speed.current(readme) == readme_speed.generate(), (
        "README.md's Speed section differs from benchmarks/results/: "
        "run `python benchmarks/readme_speed.py`"
    )


def test_every_saved_prediction_ratio_is_quoted():
    """Each ratio of the saved prediction runs appears in the README's table."""
    section = readme_speed.current((ROOT / "README.md").read_text())
    for condition in ("idle", "busy"):
        runs = readme_speed.read_all(readme_speed.RESULTS, condition)
        assert runs, f"benchmarks/results/bench_predict_{condition}.txt is missing"
        assert any(saved.rows for saved in runs), f"no {condition} measurement saved"
    for saved in readme_speed.read_all(readme_speed.RESULTS, "idle") + readme_speed.read_all(
        readme_speed.RESULTS, "busy"
    ):
        assert saved.header["command"] in section
        for model, method, dataset, ours, theirs, ratio in saved.rows:
            assert float(ratio) == pytest.approx(float(theirs) / float(ours), rel=0.01, abs=0.01)
            row = next(
                line for line in section.splitlines() if line.startswith(f"| {model} | {dataset} |")
            )
            assert re.search(rf"(^|\s|\|){re.escape(ratio)}(\s|$|\|)", row), (model, method)


def test_generated_section_follows_the_files(tmp_path):
    (tmp_path / "bench_predict_idle.txt").write_text(
        "# bench_predict: idle\n# command: python benchmarks/bench_predict.py\n"
        "# machine: test cpu\n# versions: x\nQDA predict mnist 10.00 17.00 1.70\n"
        "# floor QDA mnist: 1 ms\n"
    )
    section = readme_speed.generate(tmp_path)
    assert "| QDA | mnist | 1.70 / - |" in section
    assert "floor QDA mnist: 1 ms." in section
    assert "Lowest ratio idle: 1.70" in section
    # a changed figure changes the section
    (tmp_path / "bench_predict_idle.txt").write_text(
        "# command: c\nQDA predict mnist 10.00 15.00 1.50\n"
    )
    assert "| QDA | mnist | 1.50 / - |" in readme_speed.generate(tmp_path)


def test_splice_replaces_only_the_section():
    text = "intro\n<!-- speed:begin -->\nold\n<!-- speed:end -->\nrest\n"
    new = readme_speed.splice(text, "<!-- speed:begin -->\nnew\n<!-- speed:end -->")
    assert new == "intro\n<!-- speed:begin -->\nnew\n<!-- speed:end -->\nrest\n"
    with pytest.raises(ValueError, match="speed:begin"):
        readme_speed.splice("no markers", "x")
