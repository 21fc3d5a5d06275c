"""What a page template may not do, found from its syntax tree before it is rendered: a
template must extend the layout, fill only ``main``, import only the widgets, and finish
quickly on any data."""

from __future__ import annotations

import re

import jinja2
from jinja2 import nodes as jn

_FORBIDDEN_CALLS = {"range": "range() is not allowed (loop over the context's lists instead)",
                    "lipsum": "lipsum() is not allowed (write real text)",
                    "cycler": "cycler() is not allowed (use loop.cycle)",
                    "joiner": "joiner() is not allowed"}
_LONG_DIGITS = re.compile(r"\d{5,}")


def lint_template(source: str, env: jinja2.Environment) -> list[str]:
    """Structural problems of a page template, found without rendering it."""
    try:
        tree = env.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        return [f"template syntax error at line {exc.lineno}: {exc.message}"]
    problems: list[str] = []
    top = tree.body
    extends = [n for n in top if isinstance(n, jn.Extends)]
    if not extends or not (isinstance(extends[0].template, jn.Const)
                           and extends[0].template.value == "layout.html"):
        problems.append('the template must start with {% extends "layout.html" %} (the layout '
                        "prints the header, navigation, overlays, footer and every action's "
                        "<form>)")
    blocks = [n for n in top if isinstance(n, jn.Block)]
    if not any(b.name == "main" for b in blocks):
        problems.append("the template has no {% block main %}...{% endblock %}: the page body "
                        "goes there")
    for block in blocks:
        if block.name != "main":
            problems.append(f"{{% block {block.name} %}} at line {block.lineno} is never shown: "
                            "layout.html only has the block 'main'")
    for node in top:
        if isinstance(node, jn.Output) and any(
                not isinstance(n, jn.TemplateData) or n.data.strip() for n in node.nodes):
            problems.append(f"output at line {node.lineno} is outside {{% block main %}}: a "
                            "template that extends the layout only shows its blocks")
    for node in tree.find_all((jn.Extends, jn.Import, jn.FromImport, jn.Include)):
        name = node.template.value if isinstance(node.template, jn.Const) else None
        if isinstance(node, jn.Include):
            problems.append(f"{{% include %}} at line {node.lineno} is not allowed: import "
                            'the macros with {% import "widgets.html" as w %}')
        elif isinstance(node, jn.Extends):
            if all(node is not first for first in extends[:1]):
                problems.append(f"a second or nested {{% extends %}} at line {node.lineno}")
        elif name != "widgets.html":
            problems.append(f"import of {name or 'a computed name'!r} at line {node.lineno}: "
                            "only widgets.html may be imported")
    for node in tree.find_all((jn.Mul, jn.Pow)):
        problems.append(f"the operator {'*' if isinstance(node, jn.Mul) else '**'} at line "
                        f"{node.lineno} is not allowed in templates")
    for node in tree.find_all(jn.Call):
        if isinstance(node.node, jn.Name) and node.node.name in _FORBIDDEN_CALLS:
            problems.append(f"line {node.lineno}: {_FORBIDDEN_CALLS[node.node.name]}")
    problems += _loop_problems(tree)
    for node in tree.find_all(jn.Const):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) > 1000:
            problems.append(f"the number {value} at line {node.lineno} is too large (at most "
                            "1000)")
        elif isinstance(value, str) and _LONG_DIGITS.search(value):
            problems.append(f"the string at line {node.lineno} holds a long run of digits; "
                            "widths and counts in templates must stay small")
    return problems


MAX_LOOP_NESTING = 5


def _loop_problems(tree: jn.Template) -> list[str]:
    """Loops nested too deep, recursive loops and recursive macros: a template must finish
    quickly on any data (the sandbox bounds what a template may touch, not how long it runs)."""
    problems: list[str] = []

    def depth(node: jn.Node, level: int) -> None:
        if isinstance(node, jn.For):
            level += 1
            if level == MAX_LOOP_NESTING + 1:
                problems.append(f"the loop at line {node.lineno} is nested {level} deep (at most "
                                f"{MAX_LOOP_NESTING})")
            if node.recursive:
                problems.append(f"the recursive loop at line {node.lineno} is not allowed")
        for child in node.iter_child_nodes():
            depth(child, level)

    depth(tree, 0)
    macros = {m.name: m for m in tree.find_all(jn.Macro)}
    calls = {name: {c.node.name for c in m.find_all(jn.Call)
                    if isinstance(c.node, jn.Name) and c.node.name in macros}
             for name, m in macros.items()}
    for name, macro in macros.items():
        seen, todo = set(), list(calls[name])
        while todo:
            callee = todo.pop()
            if callee == name:
                problems.append(f"the macro {name!r} at line {macro.lineno} calls itself "
                                "(directly or through another macro): recursion is not allowed")
                break
            if callee not in seen:
                seen.add(callee)
                todo.extend(calls[callee])
    return problems


