"""The house: webworld's imports (at the top of a module or inside a function) run one way.
No two parts of the package import each other, directly or round a longer circle, and no two
modules do; the four imports that once ran up (the held-out manifest read by data/ and rl/ from
eval/, the policy's Turn taken by train/ from eval/) and the two circles (data/card <->
data/export, scale/rollout <-> train/rollout) would each fail here.

The repo's other Python (experiments/, scripts/, bench/) joins the same graph, each study
folder experiments/<study>/ one node: no circle anywhere; a study imports webworld and
third-party libraries only (no other study, nothing of tests/, no ``sys.path``), and
experiments/ holds nothing but study folders (the circle data_scale <-> gpu_run, the seven
``sys.path`` imports and a study reading tests/interop would each fail here)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "webworld"


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


# --- the repo beyond the package: experiments/, scripts/, bench/ ----------------------------

OUTSIDE = ("experiments", "scripts", "bench")


def _unit(root: Path, path: Path) -> str:
    """A file's node: ``experiments.<study>`` for anything in a study folder, else its
    dotted path (``scripts.carry_plan``, ``bench.benchkit``, ``experiments.stages``)."""
    parts = path.relative_to(root).with_suffix("").parts
    if parts[0] == "experiments" and len(parts) > 2:
        return f"experiments.{parts[1]}"
    return ".".join(parts)


def _top_names(tree: ast.AST) -> set[str]:
    """The absolute module names a file imports, anywhere in it (``from a import b``: a, a.b)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _resolve(root: Path, path: Path, name: str) -> str | None:
    """The node of experiments/, scripts/ or bench/ an imported ``name`` is, seen from
    ``path``; None for the package, tests and libraries. A bare name is a file beside
    ``path`` or in bench/ (scripts put bench/ on the path); from a study, also a loose module
    of experiments/ or another study's file (what a ``sys.path`` insert would reach)."""
    parts = name.split(".")
    if parts[0] in OUTSIDE and len(parts) > 1:
        if parts[0] == "experiments" and (root / "experiments" / parts[1]).is_dir():
            return f"experiments.{parts[1]}"
        file = root.joinpath(*parts[:2]).with_suffix(".py")
        return _unit(root, file) if file.is_file() else None
    if len(parts) > 1:
        return None
    folders = [path.parent, root / "bench"]
    if path.is_relative_to(root / "experiments"):
        folders += [root / "experiments", *sorted((root / "experiments").glob("*/"))]
    found = [f / f"{name}.py" for f in folders if (f / f"{name}.py").is_file()]
    return _unit(root, found[0]) if found else None


def _outside_files(root: Path) -> list[Path]:
    return sorted(p for folder in OUTSIDE for p in (root / folder).rglob("*.py")
                  if "__pycache__" not in p.parts)


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"))


def repo_graph(root: Path = REPO) -> nx.DiGraph:
    """The package's module graph with the files of experiments/, scripts/ and bench/ added
    (a study folder is one node): an edge per import among them, either way."""
    graph = import_graph() if root == REPO else nx.DiGraph()
    for path in _outside_files(root):
        unit = _unit(root, path)
        graph.add_node(unit)
        for name in _top_names(_tree(path)):
            target = name if name.startswith("webworld.") and _is_module(name) else \
                _resolve(root, path, name)
            if target is not None and target != unit:
                graph.add_edge(unit, target)
    for path in (root / "webworld").rglob("*.py"):  # the package reaching out of itself
        for name in _top_names(_tree(path)):
            target = _resolve(root, path, name) if name.split(".")[0] in OUTSIDE else None
            if target is not None:
                graph.add_edge(_module_name(path) if root == REPO else _unit(root, path), target)
    return graph


def _is_study(folder: Path) -> bool:
    """A REPORT.md and its script (run.py), its recipe.toml, or a recipe in recipes/ it names."""
    report = folder / "REPORT.md"
    return report.is_file() and ((folder / "run.py").is_file() or (folder / "recipe.toml").is_file()
                                 or "recipes/" in report.read_text(encoding="utf-8"))


def study_faults(root: Path = REPO) -> list[str]:
    """What a study must not do, one line each: import another study or a loose module of
    experiments/, import tests, touch ``sys.path``; and what does not belong in experiments/."""
    faults: list[str] = []
    for item in sorted((root / "experiments").iterdir()):
        if item.is_file() and item.name != "README.md":
            faults.append(f"{item.relative_to(root)}: experiments/ holds study folders only")
        elif item.is_dir() and item.name != "__pycache__" and not _is_study(item):
            faults.append(f"{item.relative_to(root)}: a study has a REPORT.md and its run.py "
                          "or recipe")
    for path in sorted((root / "experiments").rglob("*.py")):
        tree, where, unit = _tree(path), path.relative_to(root), _unit(root, path)
        for name in sorted(_top_names(tree)):
            target = _resolve(root, path, name)
            if name.split(".")[0] == "tests":
                faults.append(f"{where}: imports {name} (tests)")
            elif target is not None and target != unit:
                faults.append(f"{where}: imports {name} ({target})")
        faults += [f"{where}:{node.lineno}: touches sys.path" for node in ast.walk(tree)
                   if isinstance(node, ast.Attribute) and node.attr == "path"
                   and isinstance(node.value, ast.Name) and node.value.id == "sys"]
    return faults


def test_no_import_circle_anywhere_in_the_repo() -> None:
    graph = repo_graph()
    studies = {n for n in graph if n.startswith("experiments.")}
    assert len(studies) >= 6 and {"scripts.carry_plan", "bench.benchkit"} <= set(graph)
    assert graph.has_edge("experiments.staleness", "webworld.study")  # the walk saw a study's imports
    assert nx.is_directed_acyclic_graph(graph), list(nx.simple_cycles(graph))[:5]


def test_a_study_imports_only_webworld_and_libraries() -> None:
    assert study_faults() == []


def test_the_house_rules_catch_what_they_forbid(tmp_path: Path) -> None:
    """Each rule, planted in a small repo: a circle between two studies, a study reading tests
    and touching sys.path, a loose shared module, a folder that is no study; a study's own
    modules and a study run as a recipe are fine."""
    def write(path: str, text: str = "") -> None:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)

    for folder in ("scripts", "bench", "webworld"):
        (tmp_path / folder).mkdir()
    write("experiments/a/REPORT.md")
    write("experiments/a/run.py", "import experiments.b.run\n")
    write("experiments/b/REPORT.md")
    write("experiments/b/run.py", "import sys\nsys.path.insert(0, '.')\nimport shared\n"
          "from experiments.a import run\nfrom tests.interop import reference\n\n\n"
          "def later():\n    import helper\n")
    write("experiments/c/REPORT.md", "Runs as `recipes/c.toml`.")
    write("experiments/c/helper.py", "import plot\n")  # its own module
    write("experiments/c/plot.py")
    write("experiments/shared.py")
    write("experiments/notes/data.json")
    graph = repo_graph(tmp_path)
    assert [sorted(c) for c in nx.simple_cycles(graph)] == [["experiments.a", "experiments.b"]]
    assert graph.has_edge("experiments.b", "experiments.c")
    assert sorted(study_faults(tmp_path)) == [
        "experiments/a/run.py: imports experiments.b.run (experiments.b)",
        "experiments/b/run.py: imports experiments.a (experiments.a)",
        "experiments/b/run.py: imports experiments.a.run (experiments.a)",
        "experiments/b/run.py: imports helper (experiments.c)",
        "experiments/b/run.py: imports shared (experiments.shared)",
        "experiments/b/run.py: imports tests.interop (tests)",
        "experiments/b/run.py: imports tests.interop.reference (tests)",
        "experiments/b/run.py:2: touches sys.path",
        "experiments/notes: a study has a REPORT.md and its run.py or recipe",
        "experiments/shared.py: experiments/ holds study folders only"]
