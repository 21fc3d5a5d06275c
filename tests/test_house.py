"""The house: webworld's imports (at the top of a module or inside a function) run one way.
No two parts of the package import each other, directly or round a longer circle, and no two
modules do; the four imports that once ran up (the held-out manifest read by data/ and rl/ from
eval/, the policy's Turn taken by train/ from eval/) and the two circles (data/card <->
data/export, scale/rollout <-> train/rollout) would each fail here."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[1] / "webworld"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    return (PACKAGE.parent / relative).with_suffix(".py").is_file() or \
        (PACKAGE.parent / relative / "__init__.py").is_file()


def _imported(tree: ast.AST) -> set[str]:
    """Every webworld module a module imports (``from a import b`` counts b when b is a module)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = [f"{node.module}.{a.name}" for a in node.names]
            found.update(s for s in subs if _is_module(s))
            if not all(_is_module(s) for s in subs):
                found.add(node.module)
    return {name for name in found if name.startswith("webworld.")}


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        graph.add_node(module)
        for target in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            if not module.startswith(target + "."):  # a module reaching its own package's init
                graph.add_edge(module, target)
    return graph


def _part(module: str) -> str:
    return module.split(".")[1] if module.count(".") else module


def test_no_two_modules_import_each_other() -> None:
    graph = import_graph()
    assert graph.number_of_edges() > 200  # the walk found the package's imports
    assert nx.is_directed_acyclic_graph(graph), list(nx.simple_cycles(graph))[:5]


def test_no_two_parts_of_the_package_import_each_other() -> None:
    parts = nx.DiGraph((_part(a), _part(b)) for a, b in import_graph().edges
                       if _part(a) != _part(b))
    assert {"data", "eval", "rl", "train", "scale"} <= set(parts)
    assert nx.is_directed_acyclic_graph(parts), list(nx.simple_cycles(parts))[:5]
    assert not parts.has_edge("data", "eval") and not parts.has_edge("rl", "eval")
    assert not parts.has_edge("train", "eval") and not parts.has_edge("scale", "train")
