"""Judging a candidate page template: compile it in the server's sandbox, render it in the
sample states (with and without a refused-action message) and say exactly what is wrong, in
words a model can act on."""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment, SecurityError

from webworld import contract
from webworld.agents.site_coder.lint import lint_template
from webworld.render.checks import check_page, parse_html
from webworld.render.context import AlertView
from webworld.render.plan import visible_ids
from webworld.render.site import Site
from webworld.render.view import make_environment, page_context, render_page
from webworld.spec.semantics import Machine, State

CHECK_BASE_PREFIX = "/w/"
"""Pages are checked under a mount prefix, so a hard-coded URL is caught."""
SAMPLE_ERROR = "Sorry, that is not possible right now (sample message)."
MAX_PROBLEM_LINES = 40
MAX_PROBLEM_CHARS = 9_000

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


def alert_problems(html: str, alert: AlertView | None, error: str | None) -> list[str]:
    """A refused action's message is shown once, with role="alert", where the context says;
    without one, no alert is shown."""
    doc = parse_html(html)
    alerts = [n for n in doc.walk() if n.get("role") == "alert"]
    if error is None:
        if alerts:
            return [f'role="alert" on {alerts[0].describe()} although no action was refused: '
                    "show an alert only when `alert` is set"]
        return []
    where = alert.where if alert else "main"
    with_text = [n for n in alerts if error in " ".join(n.all_text().split())]
    if len(alerts) != 1 or not with_text:
        return [f'a refused action (alert.where = "{where}") must show alert.text in exactly one '
                f'element with role="alert" (e.g. w.alert_box(alert.text)); found {len(alerts)} '
                f"such element(s), {len(with_text)} with the text"]
    if alert is not None and where == "overlay":
        overlay = [n for n in doc.walk() if n.get(contract.ELEMENT_ATTR) == alert.overlay]
        if overlay and not alerts[0].inside(overlay[0]):
            return [f'the alert must be inside the open overlay {alert.overlay!r} '
                    "(the layout does this: do not print it in main)"]
    elif where in ("main", "form") and any(
            n.get(contract.ELEMENT_ATTR) and n.get("role") in ("dialog", "alertdialog")
            for n in alerts[0].ancestors()):
        return [f'alert.where is "{where}" but the alert is inside an overlay']
    return []


@dataclass
class Evaluator:
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
                                                 error=error).alert
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


