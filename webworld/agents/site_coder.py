"""The LLM site coder: page templates and CSS for a spec, written in stages and checked.

1. **Style guide** (stage ``render``): a :class:`StyleGuide` (palette, fonts from a fixed
   list, layout, listing, mode, density, a few validated extra CSS rules). The site's CSS
   is the nearest built-in theme (:mod:`webworld.render.themes`) with the guide's palette
   and fonts, plus the extra rules.
2. **Pages**: one :class:`PageTemplate` per page, concurrently (bounded), each written
   against the :func:`webworld.render.view.page_context` contract, the element views of
   that page in sample states and the macros of the renderer's ``widgets.html``.
3. **Build**: :func:`webworld.render.site.render_site` writes the site (layout, widgets,
   JS and manifest stay the deterministic renderer's) in a staging directory; the LLM's
   page templates and the CSS replace the renderer's.
4. **Self-repair**: each template is compiled in Jinja2's sandbox and rendered in
   representative states (a bounded BFS of the FSM chosen to show every element both
   shown and hidden where the sample allows), with and without a refused-action message;
   :func:`webworld.render.checks.check_page` and an alert check judge the HTML. The exact
   problems go back to the model, up to ``max_rounds`` times; a page still broken falls
   back to the deterministic template and is reported.

:func:`repair_pages` sends browser-verification failures of an already coded site back
to the coder for the pages involved.

What a model writes is data: JSON validated by pydantic, CSS checked by rules, templates
rendered only by Jinja2's :class:`~jinja2.sandbox.SandboxedEnvironment` (with
``StrictUndefined``). Nothing a model writes is ever ``exec``'d or ``eval``'d as Python.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import shutil
import tempfile
import traceback
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import jinja2
from jinja2 import nodes as jn
from jinja2.sandbox import SandboxedEnvironment, SecurityError
from pydantic import AfterValidator, BaseModel, Field, field_validator

from webworld import contract
from webworld.agents.client import BudgetExceeded, LLMClient, LLMError
from webworld.fsio import atomic_write_text, dumps_json, replace_dir
from webworld.render import assets, themes
from webworld.render import view as view_module
from webworld.render.checks import check_page, parse_html
from webworld.render.plan import visible_ids
from webworld.render.site import Site, SiteError, load_site, page_template, render_site
from webworld.render.themes import THEMES, Theme, choose_theme
from webworld.render.view import make_environment, page_context, render_page
from webworld.spec.models import WorldSpec
from webworld.spec.semantics import Machine, State

STAGE = "render"
CODER_GENERATOR = "webworld.agents.site_coder/1"
MAX_TEMPLATE_CHARS = 24_000
MAX_EXTRA_CSS_CHARS = 4_000
CHECK_BASE_PREFIX = "/w/"
"""Pages are checked under a mount prefix, so a hard-coded URL is caught."""
SAMPLE_ERROR = "Sorry, that is not possible right now (sample message)."
MAX_PROBLEM_LINES = 40
MAX_PROBLEM_CHARS = 9_000

# --- reply models --------------------------------------------------------------------------

_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}){1,2}$")


def _hex(value: str) -> str:
    value = value.strip()
    if not _HEX.match(value):
        raise ValueError(f"{value!r} is not a hex colour like #1f5fd1")
    if len(value) == 4:
        value = "#" + "".join(c * 2 for c in value[1:])
    return value.lower()


HexColor = Annotated[str, AfterValidator(_hex)]

FONTS: dict[str, str] = {
    "sans": themes.SANS, "humanist": themes.HUMANIST, "grotesk": themes.GROTESK,
    "serif": themes.SERIF, "oldstyle": themes.OLDSTYLE, "mono": themes.MONO,
    "narrow": themes.NARROW,
}
FontChoice = Literal["sans", "humanist", "grotesk", "serif", "oldstyle", "mono", "narrow"]


class Palette(BaseModel):
    """Colours of the site (CSS custom properties of the theme)."""

    bg: HexColor = Field(description="page background")
    surface: HexColor = Field(description="cards, forms, dialogs")
    surface_alt: HexColor = Field(description="subtle fills: table heads, chips")
    text: HexColor
    muted: HexColor = Field(description="secondary text")
    border: HexColor
    primary: HexColor = Field(description="main buttons and links")
    primary_text: HexColor = Field(description="text on primary")
    accent: HexColor
    header_bg: HexColor
    header_text: HexColor
    hero_from: HexColor = Field(description="hero gradient start")
    hero_to: HexColor = Field(description="hero gradient end")
    danger: HexColor | None = None
    success: HexColor | None = None


_CSS_FORBIDDEN = (
    (re.compile(r"\\"), "backslash escapes are not allowed"),
    (re.compile(r"@import", re.I), "@import is not allowed: the stylesheet must be self-contained"),
    (re.compile(r"@font-face", re.I), "@font-face is not allowed: choose fonts from the fixed list"),
    (re.compile(r"\burl\s*\(", re.I),
     "url(...) is not allowed: the site has no image or font files, and a url() would load "
     "something from another origin or request a page of the site"),
    (re.compile(r"\b(?:image-set|image|src|cross-fade)\s*\(", re.I),
     "image-set()/image()/src() are not allowed (they load resources)"),
    (re.compile(r"[a-z][a-z0-9+.-]*://|(?:^|[\s('\"])//", re.I),
     "addresses of other hosts are not allowed"),
    (re.compile(r"expression\s*\(|javascript:|behavior\s*:|-moz-binding", re.I),
     "scripting in CSS is not allowed"),
    (re.compile(r"<"), "'<' is not allowed (no HTML in CSS)"),
    (re.compile(r"data-ww", re.I),
     "selectors on data-ww-* attributes are not allowed (they belong to the test harness)"),
    (re.compile(r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|pointer-events\s*:"
                r"\s*none", re.I),
     "hiding content (display:none, visibility:hidden, pointer-events:none) is not allowed: "
     "every control must stay visible and clickable"),
)


def css_problems(css: str) -> list[str]:
    """Why extra CSS rules are unacceptable (empty when they are fine)."""
    problems = [message for pattern, message in _CSS_FORBIDDEN if pattern.search(css)]
    text = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    if "/*" in text:
        problems.append("a comment is not closed with */")
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            break
    if depth != 0:
        problems.append("the braces { } are not balanced")
    return problems


class StyleGuide(BaseModel):
    """The look of a site: reply of stage 1."""

    label: str = Field("", max_length=40, pattern=r"^[A-Za-z0-9 ,.'&-]*$",
                       description="a short name for the look (letters, digits, spaces)")
    palette: Palette
    font_body: FontChoice
    font_heading: FontChoice
    heading_weight: int = Field(700, ge=400, le=900)
    radius: int = Field(8, ge=0, le=24, description="corner radius in px")
    nav_uppercase: bool = False
    layout: Literal["topnav", "sidebar"]
    listing: Literal["cards", "table"] = Field(description="result lists as cards or a table")
    mode: Literal["light", "dark"]
    density: Literal["dense", "airy"]
    extra_css: str = Field("", max_length=MAX_EXTRA_CSS_CHARS,
                           description="a few extra CSS rules appended to the stylesheet")

    @field_validator("extra_css")
    @classmethod
    def _safe_css(cls, value: str) -> str:
        problems = css_problems(value)
        if problems:
            raise ValueError("extra_css rejected: " + "; ".join(problems))
        return value.strip()


class PageTemplate(BaseModel):
    """One Jinja2 page template: reply of stage 2 (and of every repair round)."""

    template: str = Field(min_length=1, max_length=MAX_TEMPLATE_CHARS,
                          description="the complete Jinja2 source of the page template")


# --- result ------------------------------------------------------------------------------


@dataclass
class CoderResult:
    site_dir: Path
    theme: str
    """The built-in theme the site's CSS starts from (the manifest's ``theme``)."""
    style: StyleGuide | None = None
    llm_pages: list[str] = field(default_factory=list)
    """Pages whose final template is the LLM's."""
    repaired: dict[str, int] = field(default_factory=dict)
    """LLM pages that needed repair: page -> repair rounds used."""
    fallbacks: dict[str, list[str]] = field(default_factory=dict)
    """Pages that fell back to the deterministic template: page -> last problems."""
    problems: list[str] = field(default_factory=list)
    """Everything left to know: fallbacks, a rejected style guide, a spent budget."""
    stopped: str | None = None
    """Why the coder stopped asking the model early (e.g. the budget is spent)."""

    @property
    def ok(self) -> bool:
        return not self.fallbacks and not self.problems

    def report_lines(self) -> list[str]:
        """A short human report (one line each) for the CLI."""
        look = (f"style guide {self.style.label or 'untitled'!r} ({self.style.mode}, "
                f"{self.style.density}) on" if self.style else "built-in look")
        lines = [f"{self.site_dir}: {look} theme {self.theme!r}; {len(self.llm_pages)} "
                 f"page(s) written by the LLM, {len(self.fallbacks)} fell back"]
        if self.repaired:
            lines.append("repaired: " + ", ".join(f"{p} ({n} round{'s' if n > 1 else ''})"
                                                  for p, n in self.repaired.items()))
        lines += self.problems
        return lines


# --- sample states ---------------------------------------------------------------------------


def sample_states(spec: WorldSpec, machine: Machine, *, max_states: int = 2000,
                  per_page: int = 6) -> dict[str, list[State]]:
    """Representative states of every page: a bounded BFS from the initial state that
    expands states showing a new set of elements first, then per page a greedy cover of
    (element, shown / hidden). Pages the BFS does not reach get their initial-value state."""
    pages = {p.id: p for p in spec.pages}
    terminal = {p.id for p in spec.pages if p.terminal}
    start = machine.initial_state()
    seen = {start}
    order = [start]
    signatures: set[tuple[str, frozenset[str]]] = set()

    def signature(state: State) -> tuple[str, frozenset[str]]:
        return state.page, frozenset(visible_ids(pages[state.page], machine, state))

    signatures.add(signature(start))
    novel, rest = deque([start]), deque()
    while (novel or rest) and len(seen) < max_states:
        state = (novel or rest).popleft()
        if state.page in terminal:
            continue
        for tr in machine.transitions(state):
            if tr.target in seen or tr.target.page not in pages:
                continue
            seen.add(tr.target)
            order.append(tr.target)
            sig = signature(tr.target)
            (rest if sig in signatures else novel).append(tr.target)
            signatures.add(sig)
            if len(seen) >= max_states:
                break

    by_page: dict[str, list[State]] = {p.id: [] for p in spec.pages}
    for state in order:
        by_page[state.page].append(state)
    chosen: dict[str, list[State]] = {}
    for page in spec.pages:
        states = by_page[page.id] or [machine.initial_state(page.id)]
        all_ids = [e.id for e in page.elements]
        covered: set[tuple[str, bool]] = set()
        picks: list[State] = []
        for state in states:
            shown = set(visible_ids(page, machine, state))
            pairs = {(eid, eid in shown) for eid in all_ids}
            if not picks or pairs - covered:
                picks.append(state)
                covered |= pairs
            if len(picks) >= per_page:
                break
        chosen[page.id] = picks
    return chosen


# --- template checks -------------------------------------------------------------------------


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


class _OverlayEnv:
    """The server's sandboxed environment (:func:`make_environment`) with page templates
    replaced in memory. One per evaluator, so layout.html and widgets.html compile once;
    a replaced page recompiles whenever its source changes."""

    def __init__(self, site: Site) -> None:
        self.overrides: dict[str, str] = {}
        self.env = make_environment(site)
        root = str(site.root / "templates")
        disk = self.env.loader

        def load(name: str) -> tuple[str, str, Any] | None:
            source = self.overrides.get(name)
            if source is None:
                return None
            return source, f"{root}/{name}", lambda: self.overrides.get(name) is source

        self.env.loader = jinja2.ChoiceLoader([jinja2.FunctionLoader(load), disk])

    def use(self, name: str, source: str) -> SandboxedEnvironment:
        self.overrides[name] = source
        return self.env


def describe_render_error(exc: BaseException, page_file: str) -> str:
    """One sentence for a render failure, with the line of the page template (and of
    widgets.html / layout.html when the error happened inside one of them)."""
    where: list[str] = []
    for frame in traceback.extract_tb(exc.__traceback__):
        name = frame.filename.replace("\\", "/")
        if name.endswith("/" + page_file):
            where.append(f"line {frame.lineno} of your template")
        elif name.endswith(("/widgets.html", "/layout.html")):
            where.append(f"{name.rsplit('/', 1)[1]} line {frame.lineno}")
    last = max((i for i, w in enumerate(where) if w.endswith("your template")), default=None)
    at = ""
    if last is not None:
        inner = where[last + 1:]  # frames below the page's own line: a macro or the layout
        at = f" at {where[last]}" + (f" (inside {inner[-1]})" if inner else "")
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return f"template syntax error at line {exc.lineno}: {exc.message}"
    if isinstance(exc, SecurityError):
        return f"the sandbox refused an unsafe operation{at}: {exc}"
    if isinstance(exc, jinja2.UndefinedError):
        return (f"undefined value{at}: {exc.message} (templates run with StrictUndefined: "
                "use only the context keys and view fields listed)")
    if isinstance(exc, RecursionError):
        return f"infinite recursion while rendering{at}"
    return f"rendering failed{at}: {type(exc).__name__}: {exc}"


def alert_problems(html: str, alert: dict[str, Any] | None, error: str | None) -> list[str]:
    """A refused action's message is shown once, with role="alert", where the context says;
    without one, no alert is shown."""
    doc = parse_html(html)
    alerts = [n for n in doc.walk() if n.get("role") == "alert"]
    if error is None:
        if alerts:
            return [f'role="alert" on {alerts[0].describe()} although no action was refused: '
                    "show an alert only when `alert` is set"]
        return []
    where = (alert or {}).get("where", "main")
    with_text = [n for n in alerts if error in " ".join(n.all_text().split())]
    if len(alerts) != 1 or not with_text:
        return [f'a refused action (alert.where = "{where}") must show alert.text in exactly one '
                f'element with role="alert" (e.g. w.alert_box(alert.text)); found {len(alerts)} '
                f"such element(s), {len(with_text)} with the text"]
    if where == "overlay":
        overlay = [n for n in doc.walk() if n.get(contract.ELEMENT_ATTR) == alert["overlay"]]
        if overlay and not alerts[0].inside(overlay[0]):
            return [f'the alert must be inside the open overlay {alert["overlay"]!r} '
                    "(the layout does this: do not print it in main)"]
    elif where in ("main", "form") and any(
            n.get(contract.ELEMENT_ATTR) and n.get("role") in ("dialog", "alertdialog")
            for n in alerts[0].ancestors()):
        return [f'alert.where is "{where}" but the alert is inside an overlay']
    return []


@dataclass
class _Evaluator:
    """Renders a candidate page template in sample states and says what is wrong."""

    site: Site
    machine: Machine
    samples: dict[str, list[State]]
    overlay: _OverlayEnv = field(init=False)

    def __post_init__(self) -> None:
        self.overlay = _OverlayEnv(self.site)

    @property
    def base(self) -> str:
        return CHECK_BASE_PREFIX + self.site.spec.id

    def legend(self, page_id: str) -> list[str]:
        page = self.site.spec.page(page_id)
        out = []
        for i, state in enumerate(self.samples[page_id], 1):
            shown = visible_ids(page, self.machine, state)
            out.append(f"state {i}: visible elements {', '.join(shown) or '(none)'}")
        return out

    def problems(self, page_id: str, source: str) -> list[str]:
        """Problems of ``source`` as the template of ``page_id`` (empty: it passes)."""
        name = self.site.manifest["pages"].get(page_id, f"pages/{page_id}.html")
        env = self.overlay.use(name, source)
        found = lint_template(source, env)
        if found:
            return found
        try:
            env.get_template(name)
        except jinja2.TemplateSyntaxError as exc:
            return [describe_render_error(exc, name)]
        seen: dict[str, dict[int, set[bool]]] = {}
        spec = self.site.spec
        for i, state in enumerate(self.samples[page_id], 1):
            for error in (None, SAMPLE_ERROR):
                tag = (i, error is not None)
                try:
                    html = render_page(self.site, env, self.machine, state, base=self.base,
                                       error=error)
                except Exception as exc:  # noqa: BLE001 - every failure is reported back
                    seen.setdefault(describe_render_error(exc, name), {}).setdefault(
                        tag[0], set()).add(tag[1])
                    continue
                context_alert = None
                if error is not None:
                    context_alert = page_context(self.site, self.machine, state, base=self.base,
                                                 error=error)["alert"]
                lines = html.splitlines()
                found = alert_problems(html, context_alert, error)
                if error is None:
                    found += check_page(html, spec, self.machine, state, base=self.base)
                for problem in found:
                    seen.setdefault(_with_line(problem, lines), {}).setdefault(
                        tag[0], set()).add(tag[1])
        return [f"[{_where(states)}] {problem}" for problem, states in seen.items()]


def _where(states: dict[int, set[bool]]) -> str:
    """Which sample states a problem showed up in (with / without a refusal message)."""
    parts = []
    for i, flags in list(states.items())[:3]:
        if flags == {False}:
            parts.append(f"state {i}")
        elif flags == {True}:
            parts.append(f"state {i} with a refused-action message")
        else:
            parts.append(f"state {i}, with and without a refused-action message")
    return "; ".join(parts) + ("; ..." if len(states) > 3 else "")


_LINE = re.compile(r"\bat line (\d+)|\blines? (\d+)")


def _with_line(problem: str, lines: list[str]) -> str:
    """Quote the rendered HTML line a problem points at (the model cannot see the output)."""
    match = _LINE.search(problem)
    if not match:
        return problem
    number = int(match.group(1) or match.group(2))
    if not 1 <= number <= len(lines):
        return problem
    text = lines[number - 1].strip()
    if len(text) > 220:
        text = text[:220] + "…"
    return f"{problem}\n    rendered line {number}: {text}"


def format_problems(problems: list[str], legend: list[str]) -> str:
    shown = problems[:MAX_PROBLEM_LINES]
    text = "\n".join(f"- {p}" for p in shown)
    if len(problems) > len(shown):
        text += f"\n- ... and {len(problems) - len(shown)} more"
    if len(text) > MAX_PROBLEM_CHARS:
        text = text[:MAX_PROBLEM_CHARS] + "\n- ... (cut)"
    return text + "\n\nThe states named above:\n" + "\n".join(legend)


# --- prompts ----------------------------------------------------------------------------------


SYSTEM = ("You are a front-end developer on a website generator. The site's data, layout and "
          "widget macros are fixed; you write what the site looks like. Reply with one JSON "
          "object only.")

_MACRO = re.compile(r"{%-?\s*macro\s+(\w+)\(([^)]*)\)")
MACRO_NOTES = {
    "element": "renders ANY element view by its kind, with its children, putting data-ww-id "
               "on the right node; the safe default for every element. Pass theme.listing "
               "for result lists: w.element(v, theme.listing)",
    "button": "a button or link view (kind button, or link without options)",
    "text_input": "a labelled text field", "search_box": "a search field",
    "select": "a native <select>", "checkbox": "a labelled checkbox", "radio": "a radio group",
    "slider": "a range input", "date_picker": "a date field with its calendar popup",
    "tabs": "a tab strip; a call macro: {% call w.tabs(v) %}panel content{% endcall %}",
    "hover_menu": "a menu button with its items (the layout renders nav menus)",
    "option_links": "a result list (a link view with options) as cards or a table",
    "overlay": "a modal / cookie banner / permission prompt (the layout renders these)",
    "region_overlays": "the layout renders the overlays; do not call",
    "region_nav": "the layout renders regions.nav; do not call",
    "region_search": "regions.search in a search bar",
    "region_tabs": "regions.tabs with regions.tabpanel and the content blocks inside the "
                   "first tab's panel",
    "region_toolbar": "regions.toolbar (sort / filter controls) in a toolbar",
    "region_listing": "regions.listing as result sections (cards or table)",
    "region_form": "form_groups as form cards (shows the alert of a group with g.alert) and "
                   "an optional summary card",
    "region_actions": "a row of element views (regions.actions, regions.back, ...)",
    "region_links": "regions.links as a 'See also' list",
    "region_feedback": "regions.feedback",
    "page_head": "breadcrumbs with the back views, the title (or the chosen item), the "
                 "action views, the summary card and the alert when alert.where == 'main'",
    "hero": "the home page hero: title, text, the search and action views, the main alert",
    "confirmation": "the success card of a terminal page: content, back views, main alert",
    "crumbs": "breadcrumbs plus the back views", "facts": "a <dl> of fields",
    "summary_card": "the chosen item as an order summary", "alert_box": 'role="alert" box',
    "icon": "an inline SVG icon by name (search, chevron, calendar, check, x, share, user, "
            "cart, heart, help, alert, back, filter, phone, pin, cookie)",
    "brand": "the site logo and name (the layout prints it)",
    "block": "one content block", "blocks": "all content blocks",
    "hidden_inputs": "hidden inputs of a view (the element macros already include them)",
    "choice_attrs": "attributes of one option button (submit / pick / disabled)",
}


def macro_catalogue() -> str:
    lines = []
    for name, args in _MACRO.findall(assets.WIDGETS_HTML):
        args = " ".join(args.split())
        lines.append(f"- w.{name}({args}): {MACRO_NOTES.get(name, '')}".rstrip(": "))
    return "\n".join(lines)


def css_classes() -> list[str]:
    return sorted(set(re.findall(r"\.([a-zA-Z][\w-]*)", assets.css.BASE_CSS)))


def _dom_rules() -> str:
    doc = contract.__doc__ or ""
    start = doc.find("DOM rules\n")
    return doc[start:].strip() if start >= 0 else doc.strip()


def style_messages(spec: WorldSpec, base_theme: str | None) -> list[dict[str, str]]:
    pages = "\n".join(f"- {p.title} (role {p.role}{', success page' if p.terminal else ''})"
                      for p in spec.pages)
    builtin = "\n".join(f"- {t.name}: {t.layout}, {t.listing}, {t.mode}, {t.density}, primary "
                        f"{t.primary}, background {t.bg}" for t in THEMES.values())
    forced = ""
    if base_theme:
        t = THEMES[base_theme]
        forced = (f"\nThe site must keep the structure of the built-in theme {t.name!r}: "
                  f"layout {t.layout!r}, listing {t.listing!r}.\n")
    user = f"""Design the look of the website "{spec.name}" ({spec.theme}).

Pages:
{pages}

Choose a palette (hex colours, readable contrast: text on bg and surface, primary_text on
primary, header_text on header_bg), fonts (body and headings, from: {", ".join(FONTS)}; no
web fonts), layout (topnav: navigation across the top; sidebar: a side column), listing
(result lists as cards or as a table), mode (light / dark), density (dense / airy), corner
radius, heading weight, and a label for the look.
{forced}
Built-in looks, for reference (make this site's own):
{builtin}

extra_css: optional, at most {MAX_EXTRA_CSS_CHARS} characters of extra rules appended to
the site's stylesheet, using these classes and CSS variables (var(--primary), var(--surface),
var(--radius), ...). Rules: no @import, no @font-face, no url(), no other hosts, no
backslashes, nothing that hides controls (display:none, visibility:hidden,
pointer-events:none), no selectors on data-ww-* attributes.
Classes of the stylesheet: {" ".join(css_classes())}

Reply with JSON: {{"label", "palette": {{"bg", "surface", "surface_alt", "text", "muted",
"border", "primary", "primary_text", "accent", "header_bg", "header_text", "hero_from",
"hero_to"}}, "font_body", "font_heading", "heading_weight", "radius", "nav_uppercase",
"layout", "listing", "mode", "density", "extra_css"}}."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _trim(view: dict[str, Any], keep_options: int = 4) -> dict[str, Any]:
    """A view for the prompt: empty fields dropped, long option lists cut, children by id."""
    out: dict[str, Any] = {}
    kind = view.get("kind")
    noise = set() if kind == "slider" else {"min", "max", "step"}
    if kind not in ("select", "slider", "radio", "tabs", "hover_menu", "date_picker", "link"):
        noise.add("unset")
    for key, value in view.items():
        if key in noise:
            continue
        if key == "children":
            if value:
                out["children"] = [c["id"] for c in value]
        elif key == "options":
            if value:
                out["options"] = [_trim(o) for o in value[:keep_options]]
                if len(value) > keep_options:
                    out["options_more"] = f"{len(value) - keep_options} more options like these"
        elif key == "months":
            if value:
                out["months"] = f"{len(value)} month grid(s) (the date_picker macro draws them)"
        elif (value is not False and value is not None and value != "" and value != []) or (
                key in ("id", "kind", "label")):
            out[key] = value
    return out


def _context_summary(ctx: dict[str, Any]) -> dict[str, Any]:
    return {
        "regions": {k: [v["id"] for v in vs] for k, vs in ctx["regions"].items() if vs},
        "form_groups": [{"title": g["title"], "fields": [f["id"] for f in g["fields"]],
                         "buttons": [b["id"] for b in g["buttons"]]} for g in ctx["form_groups"]],
        "forms": [f["id"] for f in ctx["forms"]],
        "content": [{"kind": b["kind"], "title": b["title"], "entries": len(b["entries"])}
                    for b in ctx["content"]],
        "hero": ctx["hero"],
        "item": ctx["item"] and {"title": ctx["item"]["title"],
                                 "fields": [f["key"] for f in ctx["item"]["fields"]]},
        "summary": ctx["summary"] and {"title": ctx["summary"]["title"]},
        "summary_in_form": ctx["summary_in_form"],
        "about": ctx["page"]["about"],
    }


def page_messages(site: Site, machine: Machine, samples: list[State], page_id: str,
                  style: StyleGuide | None, base: str) -> list[dict[str, str]]:
    """The request for one page template: the contract, the page's data, the macros."""
    spec = site.spec
    page = spec.page(page_id)
    contexts = [page_context(site, machine, s, base=base) for s in samples]
    picked, shown_ids = [], set()
    for ctx in contexts:  # the first state, then those that show more elements
        new = set(ctx["elements"]) - shown_ids
        if not picked or new:
            picked.append(ctx)
            shown_ids |= new
        if len(picked) >= 3:
            break
    views: dict[str, dict[str, Any]] = {}
    for ctx in picked:
        for eid, v in ctx["elements"].items():
            views.setdefault(eid, _trim(v))
    states = "\n".join(f"State {i}: " + json.dumps(_context_summary(ctx), ensure_ascii=False)
                       for i, ctx in enumerate(picked, 1))
    first = contexts[0]
    look = (f'The look: "{style.label}", {style.mode}, {style.density}; extra CSS rules:\n'
            f"{style.extra_css or '(none)'}" if style else "The look: a built-in theme.")
    plan = site.plan.pages[page_id]
    reference = page_template(plan, home=page_id == spec.home)
    others = ", ".join(f"{p.id} ({p.title})" for p in spec.pages if p.id != page_id)
    what = ", ".join([f"id {page.id}", f"role {page.role}"]
                     + (["a success page that ends a task"] if page.terminal else [])
                     + (["the home page"] if page_id == spec.home else []))
    user = f"""Write the Jinja2 template of the page "{page.title}" ({what}) of the site
"{spec.name}" ({spec.theme}). Other pages: {others}.

# How a page template works
- Start with {{% extends "layout.html" %}} and {{% import "widgets.html" as w %}}; put the
  whole page body in {{% block main %}}...{{% endblock %}} (anything outside is not shown).
- layout.html already renders <head>, the header with the brand and regions.nav, every
  overlay of regions.overlays (with the alert when alert.where == "overlay"), the footer and
  one hidden <form> per action (forms). Do not render those again.
- Every element view in `elements` that is not in regions.nav or regions.overlays (or a
  child of one of them) must be rendered EXACTLY ONCE, and hidden elements not at all.
  Render each top-level view of the other regions once, e.g. with w.element(v) or a
  region macro; an element's macro renders its children, so never render a child again.
  Iterate over the regions (they hold only the visible views) instead of naming ids; if you
  name an element, guard it: {{% if "x" in elements %}}...{{% endif %}}.
- regions.form holds the same views as form_groups: render form_groups (w.region_form) OR
  regions.form, never both. regions.tabpanel belongs inside the first tab's panel
  (w.region_tabs does that).
- Take every URL, form id, input name and option value from the views (v.form, v.name,
  v.href, o.value, forms...). Never write them by hand.
- When `alert` is set, its text must appear exactly once in an element with role="alert"
  (w.alert_box(alert.text)): where "main" in the page body, "form" in the group with
  g.alert (w.region_form does it), "overlay" is done by the layout. No alert otherwise.
- Pages are served with a strict Content-Security-Policy: no style="" attributes, no
  <style>, no <script>, no on*="" handlers, no javascript: URLs, no external resources,
  no links except to views' href. Style with the stylesheet's classes.
- Templates run in Jinja2's sandbox with StrictUndefined: use only the context keys and
  view fields below; no attributes starting with "_", no range(), no * or ** operators,
  no numbers above 1000.
- Make it look like a real, polished page of this site: headings, short copy that fits the
  page, and the page's content blocks (content, hero, item, summary) laid out well.

# The context every page template gets (webworld.render.view.page_context)
{(view_module.__doc__ or "").strip()}

# DOM rules the rendered page must follow (the macros follow them for you)
{_dom_rules()}

# Macros of widgets.html (call them as w.<name>)
{macro_catalogue()}

# This page
page: {json.dumps(first["page"], ensure_ascii=False)}
theme: {json.dumps(first["theme"], ensure_ascii=False)}
{look}
Stylesheet classes you can use: {" ".join(css_classes())}

What the context holds in sample states (regions, form groups and blocks by element id):
{states}

Element views, one per line (fields that are empty / false are left out here but always
exist in the real view):
{chr(10).join(f"{eid}: {json.dumps(v, ensure_ascii=False)}" for eid, v in views.items())}

# A minimal correct template of this page (the built-in renderer's; design your own)
{reference}
Reply with JSON: {{"template": "<the complete template>"}}."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def repair_message(problems: list[str], legend: list[str], round_: int, rounds: int) -> str:
    return (f"(Repair round {round_} of {rounds}.) Your template was rendered in several "
            "states of the site and checked. Problems:\n"
            f"{format_problems(problems, legend)}\n\n"
            "Fix every problem and reply with the complete corrected template as JSON: "
            '{"template": "..."}.')


# --- theme ------------------------------------------------------------------------------------


_DENSITY_VARS = {"dense": "--gap: 12px; --pad: 14px; --section: 22px; --control-h: 36px;",
                 "airy": "--gap: 20px; --pad: 22px; --section: 36px; --control-h: 44px;"}


def _distance(a: str, b: str) -> int:
    try:
        x, y = _hex(a), _hex(b)
    except ValueError:
        return 3 * 255
    return sum(abs(int(x[i:i + 2], 16) - int(y[i:i + 2], 16)) for i in (1, 3, 5))


def nearest_theme(style: StyleGuide) -> Theme:
    """The built-in theme closest to a style guide: same layout and listing (they shape the
    page), then mode, density and colours."""
    def score(t: Theme) -> float:
        p = style.palette
        colours = sum(_distance(getattr(t, k), getattr(p, k)) for k in ("bg", "primary", "text"))
        return ((t.layout != style.layout) * 1e6 + (t.listing != style.listing) * 1e6
                + (t.mode != style.mode) * 1e4 + (t.density != style.density) * 1e3 + colours)
    return min(THEMES.values(), key=score)


def style_css(base: Theme, style: StyleGuide) -> tuple[Theme, str]:
    """The site's stylesheet: the base theme with the guide's palette and fonts, then the
    extra rules. Returns the customised theme (for the favicon) and the CSS."""
    palette = {k: v for k, v in style.palette.model_dump().items() if v is not None}
    theme = dataclasses.replace(
        base, label=style.label or base.label, mode=style.mode, font_body=FONTS[style.font_body],
        font_heading=FONTS[style.font_heading], heading_weight=style.heading_weight,
        radius=style.radius, nav_uppercase=style.nav_uppercase, **palette)
    css = assets.theme_css(theme)
    if style.density != base.density:
        css += (f"\n/* density: {style.density} */\nbody.density-{base.density} "
                f"{{ {_DENSITY_VARS[style.density]} }}\n")
    if style.extra_css:
        css += f"\n/* style guide: extra rules */\n{style.extra_css}\n"
    return theme, css


# --- the coder ------------------------------------------------------------------------------


@dataclass
class _Run:
    client: LLMClient
    evaluator: _Evaluator
    max_rounds: int
    result: CoderResult
    stopped: str | None = None
    final: dict[str, str] = field(default_factory=dict)
    """page id -> accepted LLM template source."""

    async def ask(self, messages: list[dict[str, str]]) -> str | None:
        if self.stopped:
            return None
        try:
            reply = await self.client.structured(STAGE, messages, PageTemplate)
        except BudgetExceeded as exc:
            self.stopped = self.stopped or str(exc)
            return None
        return reply.template

    async def settle(self, page_id: str, messages: list[dict[str, str]],
                     previous: str | None = None) -> None:
        """Ask for the page's template, check it, send problems back until it passes or
        the rounds are spent; record the outcome."""
        evaluator = self.evaluator
        legend = evaluator.legend(page_id)
        initial = list(messages)
        problems: list[str] = []
        for round_ in range(self.max_rounds + 1):
            try:
                source = await self.ask(messages)
            except LLMError as exc:
                problems = [f"no usable reply: {exc}"]
                break
            if source is None:
                problems = problems or [f"not written: {self.stopped}"]
                break
            problems = evaluator.problems(page_id, source)
            if previous is not None and source.strip() == previous.strip():
                problems = ["the template is unchanged, but the failures above came from it",
                            *problems]
            if not problems:
                self.final[page_id] = source
                if round_:
                    self.result.repaired[page_id] = round_
                return
            messages = [*initial,
                        {"role": "assistant", "content": json.dumps({"template": source})},
                        {"role": "user", "content": repair_message(
                            problems, legend, round_ + 1, self.max_rounds)}]
        self.result.fallbacks[page_id] = problems
        self.result.problems.append(
            f"page {page_id!r}: fell back to the deterministic template ({problems[0]}"
            f"{f' and {len(problems) - 1} more problem(s)' if len(problems) > 1 else ''})")


async def _style_guide(client: LLMClient, spec: WorldSpec, base_theme: str | None,
                       result: CoderResult) -> StyleGuide | None:
    try:
        return await client.structured(STAGE, style_messages(spec, base_theme), StyleGuide)
    except LLMError as exc:
        result.problems.append(f"style guide: no valid reply, the built-in theme is used ({exc})")
    except BudgetExceeded as exc:
        result.stopped = str(exc)
        result.problems.append(f"style guide: not written ({exc})")
    return None


def _check_theme(name: str | None) -> None:
    if name is not None and name not in THEMES:
        raise SiteError(f"unknown theme {name!r} (choose from {', '.join(sorted(THEMES))})")


async def code_site(client: LLMClient, spec: WorldSpec, out_dir: Path, *, max_rounds: int = 3,
                    base_theme: str | None = None, concurrency: int = 4,
                    max_states: int = 2000) -> CoderResult:
    """Write the site of ``spec`` at ``out_dir`` with LLM-written CSS and page templates.

    The site is built in a staging directory next to ``out_dir`` and swapped in only when
    complete, so a failure leaves the previous site as it was. Every page of the result
    passes the contract checks in the sample states: the LLM's template, or the
    deterministic renderer's where the LLM's could not be repaired.
    ``BudgetExceeded`` does not escape: the coder stops asking, falls back where needed
    and says so in ``result.stopped``. ``LLMError`` for one page only affects that page.
    """
    _check_theme(base_theme)
    out_dir = Path(out_dir)
    result = CoderResult(site_dir=out_dir, theme=base_theme or choose_theme(spec))
    style = await _style_guide(client, spec, base_theme, result)
    base = THEMES[base_theme] if base_theme else (nearest_theme(style) if style else
                                                  THEMES[result.theme])
    result.theme, result.style = base.name, style

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}.",
                                    suffix=".coder"))
    try:
        site_dir = render_site(spec, staging / "site", theme=base.name)
        if style is not None:
            theme, css = style_css(base, style)
            atomic_write_text(site_dir / "static" / "theme.css", css)
            atomic_write_text(site_dir / "static" / "favicon.svg", assets.favicon_svg(spec, theme))
        site = load_site(site_dir)
        machine = Machine(spec)
        evaluator = _Evaluator(site, machine, sample_states(spec, machine, max_states=max_states))
        run = _Run(client, evaluator, max_rounds, result, stopped=result.stopped)
        limit = asyncio.Semaphore(max(1, concurrency))

        async def one(page_id: str) -> None:
            async with limit:
                messages = page_messages(site, machine, evaluator.samples[page_id], page_id,
                                         style, evaluator.base)
                await run.settle(page_id, messages)

        await asyncio.gather(*(one(p.id) for p in spec.pages))
        for page_id, source in run.final.items():
            atomic_write_text(site_dir / "templates" / site.manifest["pages"][page_id], source)
        result.llm_pages = [p.id for p in spec.pages if p.id in run.final]
        result.stopped = run.stopped
        if run.stopped:
            result.problems.append(f"stopped asking the model: {run.stopped}")
        _write_manifest(site_dir, result)
        replace_dir(site_dir, out_dir)  # the previous site, if any, goes with the staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return result


async def repair_pages(client: LLMClient, site_dir: Path,
                       verification_failures: dict[str, list[str]], *, max_rounds: int = 3,
                       concurrency: int = 4, max_states: int = 2000) -> CoderResult:
    """Send verifier failures (page id -> messages) back to the coder for those pages.

    A page whose new template passes the contract checks is rewritten (the caller
    verifies again); a page the model cannot fix falls back to the deterministic
    template. Pages not written by the LLM are left alone and reported.
    """
    site = load_site(Path(site_dir))
    spec, machine = site.spec, Machine(site.spec)
    coder = site.manifest.get("coder") or {}
    style = None
    if coder.get("style_guide"):
        style = StyleGuide.model_validate(coder["style_guide"])
    result = CoderResult(site_dir=site.root, theme=site.theme.name, style=style)
    llm_pages = set(coder.get("llm_pages") or [])
    evaluator = _Evaluator(site, machine, sample_states(spec, machine, max_states=max_states))
    run = _Run(client, evaluator, max_rounds, result)
    limit = asyncio.Semaphore(max(1, concurrency))
    pages = {p.id for p in spec.pages}

    async def one(page_id: str, failures: list[str]) -> None:
        rel = site.manifest["pages"][page_id]
        current = (site.root / "templates" / rel).read_text(encoding="utf-8")
        fallback = page_template(site.plan.pages[page_id], home=page_id == spec.home)
        if page_id not in llm_pages or current == fallback:
            result.problems.append(f"page {page_id!r}: not written by the LLM coder, so not "
                                   f"repaired ({len(failures)} verifier failure(s))")
            return
        async with limit:
            messages = page_messages(site, machine, evaluator.samples[page_id], page_id,
                                     style, evaluator.base)
            checks = evaluator.problems(page_id, current)
            text = ("The site was driven in a real browser and these checks failed on this "
                    "page:\n" + "\n".join(f"- {f}" for f in failures[:MAX_PROBLEM_LINES]))
            if checks:
                text += "\n\nThe contract checks also report:\n" + format_problems(
                    checks, evaluator.legend(page_id))
            text += ('\n\nFix the template and reply with the complete corrected template as '
                     'JSON: {"template": "..."}.')
            messages += [{"role": "assistant", "content": json.dumps({"template": current})},
                         {"role": "user", "content": text}]
            await run.settle(page_id, messages, previous=current)
        if page_id in run.final:
            result.repaired[page_id] = result.repaired.get(page_id, 0) + 1

    unknown = sorted(set(verification_failures) - pages)
    for page_id in unknown:
        result.problems.append(f"page {page_id!r}: the spec has no such page")
    await asyncio.gather(*(one(p, f) for p, f in verification_failures.items() if p in pages))
    for page_id in verification_failures:
        if page_id in run.final:
            source = run.final[page_id]
        elif page_id in result.fallbacks:
            source = page_template(site.plan.pages[page_id], home=page_id == spec.home)
            llm_pages.discard(page_id)
        else:
            continue
        atomic_write_text(site.root / "templates" / site.manifest["pages"][page_id], source)
    result.llm_pages = [p.id for p in spec.pages if p.id in llm_pages]
    result.stopped = run.stopped
    if run.stopped:
        result.problems.append(f"stopped asking the model: {run.stopped}")
    _write_manifest(site.root, result)
    return result


def _write_manifest(site_dir: Path, result: CoderResult) -> None:
    path = site_dir / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["generator"] = CODER_GENERATOR
    manifest["coder"] = {
        "llm_pages": result.llm_pages,
        "fallback_pages": sorted(set(result.fallbacks) | set(
            (manifest.get("coder") or {}).get("fallback_pages", [])) - set(result.llm_pages)),
        "style_guide": result.style.model_dump() if result.style else None,
    }
    atomic_write_text(path, dumps_json(manifest))


__all__ = ["CoderResult", "PageTemplate", "Palette", "StyleGuide", "code_site", "css_problems",
           "lint_template", "nearest_theme", "repair_pages", "sample_states", "style_css"]
