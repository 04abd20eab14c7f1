"""Measure the source layout: import cycles, layers, private names, file sizes.

Run from the repository root: ``python benchmarks/layout_audit.py [SRC]``.
Every ``import`` statement of every module under ``src/bayesrule`` counts,
including those made inside functions and under ``TYPE_CHECKING`` (a cycle
that only type checkers see is still a cycle a reader must follow). Prints:

* the strongly connected components of the module import graph (cycles);
* the layer of each module and every import that points up a layer;
* whether the lower layers (statistics, models, estimators and the utilities)
  can reach an engine or a front end (Dask, pyarrow, pyspark, typer, rich,
  matplotlib, the backends, the CLI, model files, plots) through any chain;
* imports of private names (``_x``) from another subpackage;
* files over 500 and over 600 lines;
* the number of doctest examples in public estimators' docstrings.

``tests/test_layout.py`` asserts the same rules, so a change that breaks them
fails the suite.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

PACKAGE = "bayesrule"

#: Layers from the bottom up; a module may import its own layer and below.
LAYERS: dict[str, int] = {
    "_util": 0,
    "stats": 1,
    "models": 2,
    "estimators": 3,
    "backends": 4,
    "io": 4,
    "plotting": 5,
    "datasets": 5,
    "cli": 6,
    "demo": 6,
}

#: Third-party engines and front ends the lower layers must never reach.
ENGINES = (
    "dask",
    "distributed",
    "pyarrow",
    "pyspark",
    "typer",
    "rich",
    "matplotlib",
    "torch",
    "cupy",
)
FRONT_ENDS = ("backends", "cli", "io", "plotting", "demo")
LOWER = ("_util", "stats", "models", "estimators")


def modules(src: Path) -> dict[str, Path]:
    root = src / PACKAGE
    found = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(
    module: str, path: Path, known: Iterable[str]
) -> tuple[set[str], set[str], list[tuple[str, str]]]:
    """Return (internal modules, external top-level packages, private names)."""
    known = set(known)
    tree = ast.parse(path.read_text(), str(path))
    internal: set[str] = set()
    external: set[str] = set()
    private: list[tuple[str, str]] = []
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    internal.add(_owner(alias.name, known))
                else:
                    external.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node)
            if target.split(".")[0] != PACKAGE:
                external.add(target.split(".")[0])
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in known:
                    internal.add(full)
                else:
                    internal.add(_owner(target, known))
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append((target, alias.name))
                    elif any(part.startswith("_") for part in target.split(".")[2:]):
                        # a private module of another subpackage (its names are not its API)
                        private.append((target, f"{alias.name} (private module)"))
    internal.discard(module)
    return internal, external, private


def _owner(name: str, known: set[str]) -> str:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or PACKAGE


def subpackage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_of(module: str) -> int | None:
    name = subpackage(module).removesuffix(".py")
    return LAYERS.get(name)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen = {start}
    todo = [start]
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def audit(src: Path) -> dict[str, object]:
    mods = modules(src)
    graph: dict[str, set[str]] = {}
    externals: dict[str, set[str]] = {}
    private_cross: list[str] = []
    for name, path in mods.items():
        internal, external, private = imports(name, path, mods)
        # importing a.b.c also runs a and a.b; the package __init__ files are
        # edges only where the import names the package itself
        graph[name] = internal
        externals[name] = external
        for target, alias in private:
            if subpackage(target) != subpackage(name) or subpackage(name) == "":
                private_cross.append(f"{name}: from {target} import {alias}")
    upward = []
    for name, deps in graph.items():
        mine = layer_of(name)
        if mine is None:
            continue
        for dep in deps:
            theirs = layer_of(dep)
            if theirs is not None and theirs > mine:
                upward.append(f"{name} -> {dep}")
    leaks = []
    for name in mods:
        if subpackage(name) not in LOWER:
            continue
        reach = reachable(graph, name)
        bad_ext = sorted({e for m in reach for e in externals.get(m, ()) if e in ENGINES})
        bad_int = sorted(m for m in reach if subpackage(m) in FRONT_ENDS)
        if bad_ext or bad_int:
            leaks.append(f"{name} reaches {', '.join(bad_ext + bad_int[:3])}")
    sizes = {name: len(path.read_text().splitlines()) for name, path in mods.items()}
    doctests = 0
    for name, path in mods.items():
        if subpackage(name) == "estimators":
            doctests += path.read_text().count(">>> ")
    return {
        "modules": len(mods),
        "lines": sum(sizes.values()),
        "cycles": cycles(graph),
        "upward": sorted(upward),
        "leaks": sorted(leaks),
        "private_cross": sorted(private_cross),
        "over_500": sorted((n for n, s in sizes.items() if s > 500), key=lambda n: -sizes[n]),
        "over_600": sorted((n for n, s in sizes.items() if s > 600), key=lambda n: -sizes[n]),
        "sizes": sizes,
        "doctest_lines": doctests,
    }


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("src")
    result = audit(src)
    sizes = result["sizes"]
    assert isinstance(sizes, dict)
    print(f"modules: {result['modules']}, lines: {result['lines']}")
    comps = result["cycles"]
    assert isinstance(comps, list)
    print(f"import cycles (function-local imports included): {len(comps)}")
    for comp in comps:
        print(f"  {len(comp)} modules: {', '.join(comp)}")
    for key, title in [
        ("upward", "imports pointing up a layer"),
        ("leaks", "lower-layer modules that reach an engine or front end"),
        ("private_cross", "private names imported across subpackages"),
    ]:
        items = result[key]
        assert isinstance(items, list)
        print(f"{title}: {len(items)}")
        for item in items[:40]:
            print(f"  {item}")
    for key in ("over_500", "over_600"):
        items = result[key]
        assert isinstance(items, list)
        share = sum(sizes[n] for n in items) / max(1, int(str(result["lines"])))
        print(f"files {key.replace('_', ' ')} lines: {len(items)} ({share:.0%} of the source)")
        for n in items:
            print(f"  {sizes[n]:5d} {n}")
    print(f"doctest example lines in estimators: {result['doctest_lines']}")


if __name__ == "__main__":
    main()
