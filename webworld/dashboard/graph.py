"""A world's state machine as a picture: pages are nodes (success pages doubled, home in
bold), actions are edges (navigations between pages, in-page actions as loops, Back / Home
links dashed and left out of the layout's ranking). Site furniture (the links of a page's
navigation bar, sidebar and footer, and the pages only they and display entries open) is
left out: it goes everywhere and no task takes it. Graphviz's ``dot`` lays it out; every
node and edge carries an id (``page-<id>``, ``act-<id>``) so the page can highlight a path."""

from __future__ import annotations

import shutil
import subprocess

from webworld.spec.models import FURNITURE_ROLES, Action, Page, WorldSpec

DOT_TIMEOUT_S = 60.0
LABEL_CHARS = 34


class GraphUnavailable(Exception):
    """The graph could not be drawn; the message says why and what to do."""


def quote(text: str) -> str:
    """A DOT string literal showing ``text`` as written: escapes (``\\N``, ``\\l`` ...) and
    HTML-like labels cannot be smuggled in."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"


def page_graph_dot(spec: WorldSpec) -> str:
    lines = ["digraph world {",
             '  graph [rankdir=LR, bgcolor="transparent", nodesep=0.3, ranksep=0.8, pad=0.3, '
             'fontname="Helvetica"];',
             '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#7d8794", '
             'fontname="Helvetica", fontsize=11, margin="0.12,0.06"];',
             '  edge [fontname="Helvetica", fontsize=8, color="#7d8794", fontcolor="#4b5561", '
             'arrowsize=0.6];']
    pages = [p for p in spec.pages if p.role not in FURNITURE_ROLES]
    drawn = {p.id for p in pages}
    lines += [_node(spec, page) for page in pages]
    for page in pages:
        areas = {e.id for e in page.elements if e.area is not None}
        lines += [_edge(page, action) for action in page.actions
                  if action.trigger.element not in areas
                  and (action.navigate is None or action.navigate in drawn)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node(spec: WorldSpec, page: Page) -> str:
    kind = "terminal" if page.terminal else "home" if page.id == spec.home else "page"
    style = {"terminal": ', peripheries=2, fillcolor="#dcf3e4", color="#23804a"',
             "home": ', penwidth=2, fillcolor="#e4eefb", color="#2f6db5"',
             "page": ""}[kind]
    label = f"{short(page.title)}\\n{page.id}"
    tooltip = f"{page.title} ({page.id}): {len(page.actions)} actions"
    return (f"  {quote('p:' + page.id)} [id={quote('page-' + page.id)}, "
            f"class={quote('page ' + kind)}, label=\"{_escaped(label)}\", "
            f"tooltip={quote(tooltip)}{style}];")


def _edge(page: Page, action: Action) -> str:
    target = action.navigate or page.id
    attrs = [f"id={quote('act-' + action.id)}", f"tooltip={quote(f'{action.label} ({action.id})')}"]
    if action.is_back:
        attrs += ['class="act back"', 'style=dashed', 'color="#b6bec8"', "constraint=false"]
    elif action.navigate and action.navigate != page.id:
        attrs += ['class="act nav"', f"label={quote(short(action.label))}"]
    else:
        attrs += ['class="act stay"', 'style=dotted', f"label={quote(short(action.label))}"]
    return f"  {quote('p:' + page.id)} -> {quote('p:' + target)} [{', '.join(attrs)}];"


def _escaped(label: str) -> str:
    """Like :func:`quote` without the quotes, keeping the ``\\n`` line break we put in."""
    parts = label.split("\\n")
    return "\\n".join(quote(p)[1:-1] for p in parts)


def render_svg(dot: str) -> str:
    """The laid-out graph as an SVG element (no XML prolog), ready to inline."""
    exe = shutil.which("dot")
    if exe is None:
        raise GraphUnavailable("Graphviz is not installed: `apt-get install graphviz` "
                               "(scripts/setup.sh does it), then reload")
    try:
        done = subprocess.run([exe, "-Tsvg"], input=dot.encode(), capture_output=True,
                              timeout=DOT_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise GraphUnavailable(f"Graphviz took over {DOT_TIMEOUT_S:.0f}s on this graph") from None
    if done.returncode != 0:
        raise GraphUnavailable("Graphviz failed: " + done.stderr.decode(errors="replace")[:300])
    svg = done.stdout.decode("utf-8", errors="replace")
    return svg[svg.find("<svg"):]
