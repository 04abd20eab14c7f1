"""Write README.md's Speed section from the benchmarks' saved output, so no figure drifts.

Usage (from the repository root)::

    python benchmarks/readme_speed.py          # rewrite the section in README.md
    python benchmarks/readme_speed.py --check  # exit 1 if README.md differs

The section lies between ``<!-- speed:begin -->`` and ``<!-- speed:end -->``
and is generated from ``benchmarks/results/``:

* ``bench_predict_idle.txt`` and ``bench_predict_busy.txt``
  (``benchmarks/bench_predict.py``, without and with ``--busy``), and any
  ``bench_predict_idle_*.txt`` / ``bench_predict_busy_*.txt`` (parts run
  separately with ``--models`` or ``--datasets``, each with its command);
* ``bench_discriminant.txt`` (``benchmarks/bench_discriminant.py``: LDA and
  QDA fit and predict, LDA's fit against its syrk floor, its memory);
* ``bench_naive_bayes.txt`` (``benchmarks/bench_naive_bayes.py``).

A file that is missing leaves its part out. Each part names the command
that reproduces it and the machine it ran on, as saved in the file.
``tests/test_readme_speed.py`` checks that README.md holds exactly what this
script generates.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
BEGIN, END = "<!-- speed:begin -->", "<!-- speed:end -->"
METHODS = (
    "predict",
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "predict_joint_log_proba",
    "score_samples",
)


@dataclass
class Saved:
    """One result file: its ``#`` header fields, its notes and its data lines."""

    header: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


def read(path: Path) -> Saved | None:
    """The saved output at ``path``, or None when there is none."""
    if not path.is_file():
        return None
    saved = Saved()
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        if line.startswith("# floor"):
            saved.notes.append(line[2:])
        elif line.startswith("#"):
            key, _, value = line[1:].strip().partition(":")
            if value and key.strip() in {"command", "machine", "versions", "load", "run"}:
                saved.header[key.strip()] = value.strip()
            elif value and key.strip().startswith("bench_"):
                saved.header["title"] = value.strip()
        else:
            saved.rows.append(line.split())
    return saved


def read_all(results: Path, condition: str) -> list[Saved]:
    """``bench_predict_<condition>.txt`` and any ``bench_predict_<condition>_*.txt`` (parts
    run separately, e.g. ``--models QDA``), in name order."""
    found = [read(results / f"bench_predict_{condition}.txt")]
    found += [read(p) for p in sorted(results.glob(f"bench_predict_{condition}_*.txt"))]
    return [s for s in found if s is not None]


def _source(saved: Saved) -> str:
    load = saved.header.get("load")
    return (
        f"`{saved.header.get('command', '?')}` on {saved.header.get('machine', '?')} "
        f"({saved.header.get('versions', '?')}{'; ' + load if load else ''})"
    )


def predict_part(idle: list[Saved], busy: list[Saved]) -> list[str]:
    """The prediction table: one row per model and data set, idle / busy ratio per method."""
    if not idle and not busy:
        return []
    ratios: dict[tuple[str, str], dict[str, list[str]]] = {}
    for which, runs in ((0, idle), (1, busy)):
        for saved in runs:
            for model, method, dataset, *_, ratio in saved.rows:
                cell = ratios.setdefault((model, dataset), {}).setdefault(method, ["-", "-"])
                cell[which] = ratio
    used = [m for m in METHODS if any(m in cells for cells in ratios.values())]
    out = [
        "**Prediction**: scikit-learn's time / bayesrule's for every prediction method that "
        "scikit-learn's namesake has, idle / busy (above 1: bayesrule is faster); "
        "MNIST predicts its 10000 test rows, `narrow` a generated table of 20 features.",
        "",
    ]
    for label, runs in (("idle", idle), ("busy", busy)):
        for saved in runs:
            out.append(
                f"* {label}: {_source(saved)}; {saved.header.get('title', '')}; "
                f"{saved.header.get('run', '')}"
            )
    out += [
        "",
        "| model | data | " + " | ".join(f"`{m}`" for m in used) + " |",
        "|---|---|" + "---|" * len(used),
    ]
    for (model, dataset), cells in ratios.items():
        row = [" / ".join(cells.get(m, ["", ""])) if m in cells else "" for m in used]
        out.append(f"| {model} | {dataset} | " + " | ".join(row) + " |")
    for label, runs in (("idle", idle), ("busy", busy)):
        rows = [r for saved in runs for r in saved.rows]
        if not rows:
            continue
        worst = min(rows, key=lambda r: float(r[-1]))
        out.append("")
        out.append(
            f"Lowest ratio {label}: {worst[-1]} ({worst[0]} `{worst[1]}` on {worst[2]}: "
            f"{worst[3]} ms against {worst[4]} ms)."
        )
        out += [f"{n}." for saved in runs for n in saved.notes]
    return out + [""]


def discriminant_part(saved: Saved | None) -> list[str]:
    """LDA and QDA fit and predict beside scikit-learn, the syrk floor and the memory."""
    if saved is None:
        return []
    out = [
        f"**LDA and QDA on MNIST**: {_source(saved)}; {saved.header.get('title', '')}.",
        "",
        "| model | phase | bayesrule (s) | scikit-learn (s) | ratio | accuracy | scikit-learn's |",
        "|---|---|---|---|---|---|---|",
    ]
    extra = []
    for row in saved.rows:
        if row[0] == "floor":
            fields = dict(f.split("=") for f in row[3:])
            cpu = fields.get("cpu_ratio")
            extra.append(
                f"LDA fit: {fields['fit_s']} s, {fields['ratio']}x its floor (one BLAS syrk "
                f"of the training matrix, {fields['syrk_s']} s in the same run; medians of "
                f"{fields.get('pairs', '?')} interleaved pairs, best "
                f"{fields.get('best_ratio', '?')}x"
                + (f", {cpu}x in CPU seconds" if cpu else "")
                + ")."
            )
        elif row[0] == "memory":
            fields = dict(f.split("=") for f in row[3:])
            extra.append(
                f"LDA fit's peak allocation beyond the training matrix (tracemalloc): "
                f"{fields['ours_x']}x the matrix for bayesrule, {fields['theirs_x']}x for "
                "scikit-learn's svd solver."
            )
        else:
            out.append("| " + " | ".join(row) + " |")
    return out + [""] + extra + [""]


def naive_bayes_part(saved: Saved | None) -> list[str]:
    """Naive Bayes fit and ``predict_proba`` beside scikit-learn."""
    if saved is None:
        return []
    out = [
        f"**Naive Bayes on MNIST**: {_source(saved)}; {saved.header.get('title', '')}.",
        "",
        "| model | fit (s) | scikit-learn | ratio | predict (s) | scikit-learn | ratio "
        "| accuracy | scikit-learn's |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    out += ["| " + " | ".join(row) + " |" for row in saved.rows]
    return out + [""]


def generate(results: Path = RESULTS) -> str:
    """The Speed section, markers included, from the files in ``results``."""
    lines = [
        BEGIN,
        "<!-- generated by `python benchmarks/readme_speed.py` from benchmarks/results/; "
        "rerun the benchmarks and that script rather than editing this -->",
        "",
        "Every figure here is read from the benchmarks' saved output in "
        "`benchmarks/results/`, each measured in one run beside scikit-learn on the "
        "machine named with it; ratios are scikit-learn's time / bayesrule's. "
        "`tests/test_readme_speed.py` checks that this section is what "
        "`benchmarks/readme_speed.py` writes from those files. Timings on a shared "
        "machine are noisy: compare ratios from one run, not times across runs.",
        "",
    ]
    lines += predict_part(read_all(results, "idle"), read_all(results, "busy"))
    lines += discriminant_part(read(results / "bench_discriminant.txt"))
    lines += naive_bayes_part(read(results / "bench_naive_bayes.txt"))
    while lines[-1] == "":
        lines.pop()
    return "\n".join(lines + [END])


def splice(readme: str, section: str) -> str:
    """``readme`` with the text between the markers (included) replaced by ``section``."""
    start, stop = readme.find(BEGIN), readme.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"README.md has no {BEGIN} ... {END} section to replace.")
    return readme[:start] + section + readme[stop + len(END) :]


def current(readme: str) -> str:
    """The section now in ``readme``, markers included."""
    start, stop = readme.find(BEGIN), readme.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"README.md has no {BEGIN} ... {END} section.")
    return readme[start : stop + len(END)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md differs")
    args = parser.parse_args(argv)
    text = README.read_text()
    section = generate()
    if args.check:
        if current(text) != section:
            print("README.md's Speed section differs from benchmarks/results/", file=sys.stderr)
            return 1
        return 0
    README.write_text(splice(text, section))
    print(f"wrote the Speed section of {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
