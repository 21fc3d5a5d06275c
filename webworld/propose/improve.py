"""The improver: repair what the validator finds, in rounds, on any spec.

Each round validates, then applies one small repair per finding (a function keyed by the
finding code) and validates again, until the spec is valid, a round changes nothing, the
same findings come back, or ``max_iterations`` is reached. Broken references and
duplicate ids are repaired first, in a round of their own, because other findings (an
"unreachable" page behind a misspelt link) are only meaningful once they are gone.
Some findings are design decisions (an unreachable goal, a state space over budget): those
are reported with the reason, never "fixed" by changing what a task means.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from webworld.spec.graph import DEFAULT_STATE_BUDGET, page_graph
from webworld.spec.models import (
    Action,
    Condition,
    Element,
    ElementKind,
    GuiStep,
    Page,
    Variable,
    WorldSpec,
)
from webworld.spec.semantics import in_domain, same_value
from webworld.spec.validate import (
    BLOCKING_CODES,
    OPTION_CHECKED_KINDS,
    SELECT_KINDS,
    TEXT_KINDS,
    Finding,
    Report,
    closest,
    placeholders,
    select_values,
    validate,
)

UNREPAIRABLE: dict[str, str] = {
    "state-budget": "the state space is a design decision: shrink variable or parameter "
    "domains, or raise --state-budget",
    "unreachable-terminal": "which guard or effect should change so the page can be reached "
    "is a design decision",
    "unreachable-goal": "reaching the goal needs a change to the goal or to the actions that "
    "lead to it, which would change what the task means",
    "no-terminal": "which page is the success page is a design decision",
    "no-tasks": "tasks are user intents, which cannot be invented mechanically",
    "dead-action": "a warning only: a control that is never enabled may be intended",
    "column-kind": "what the cell should say is content: the proposer writes it again",
    "foreign-facet": "which filter or sort the site needs is content: the proposer writes it "
    "again",
    "miscategorised-item": "which items a category lists is content: the proposer writes it "
    "again",
    "fact-mismatch": "which of the two values is right is content: the proposer writes it "
    "again",
}
"""Codes the improver reports but never changes, with the reason."""

_MAX_ID = 80
_OP_KIND: dict[str, ElementKind] = {
    "type": "text_input", "select": "select", "check": "checkbox", "uncheck": "checkbox",
    "hover": "hover_menu",
}
_NEUTRAL_OPS = frozenset({"click", "hover", "key_press", "drag"})


class CannotRepair(Exception):
    """A repair that does not apply; the message says why."""


@dataclass
class Repair:
    """One change the improver made: the finding it answers and what it did."""

    code: str
    path: str
    description: str


@dataclass
class ImproveResult:
    """The repaired copy, what was done, and the final validation report."""

    spec: WorldSpec
    repairs: list[Repair]
    report: Report
    iterations: int
    reasons: dict[tuple[str, str], str] = field(default_factory=dict)
    """(code, path) -> why the last attempt to repair that finding did not apply."""

    @property
    def valid(self) -> bool:
        return self.report.valid

    def why(self, f: Finding) -> str:
        """Why a remaining finding was not repaired."""
        if f.code in UNREPAIRABLE:
            return UNREPAIRABLE[f.code]
        return self.reasons.get((f.code, f.path), "still present after the last repair round "
                                "(a repair may have exposed it, or the rounds ran out)")

    def summary(self) -> str:
        """What was fixed, then every finding left and why it was not repaired."""
        lines = [f"{len(self.repairs)} repair(s) in {self.iterations} round(s)."]
        lines += [f"  fixed [{r.code}] {r.path}: {r.description}" for r in self.repairs]
        left = self.report.findings
        if not left:
            lines.append("The spec is valid, with no warnings.")
            return "\n".join(lines)
        state = "valid" if self.valid else "NOT valid"
        lines.append(f"The spec is {state}: {len(self.report.errors)} error(s), "
                     f"{len(self.report.warnings)} warning(s) left.")
        for f in left:
            lines.append(f"  {f.severity} [{f.code}] {f.path}: {f.message}")
            lines.append(f"    not repaired: {self.why(f)}")
        return "\n".join(lines)


# --- locating a finding's path in the spec -------------------------------------------------

_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")
_ROLES = {
    "pages": "page", "actions": "action", "elements": "element", "tasks": "task",
    "variables": "variable", "params": "param", "guards": "condition",
    "conditions": "condition", "visible_when": "condition", "effects": "effect",
    "gui": "step", "slots": "slot",
}


@dataclass
class Target:
    """The objects a JSON path passes through, by role, and the lists that hold them."""

    parts: list[str | int]
    objs: dict[str, Any] = field(default_factory=dict)
    lists: dict[str, list[Any]] = field(default_factory=dict)
    role: str | None = None

    @property
    def field(self) -> str | None:
        """The attribute the path ends on (``navigate``, ``var`` ...), if any."""
        return self.parts[-1] if self.parts and isinstance(self.parts[-1], str) else None

    @property
    def parent_field(self) -> str | None:
        """The attribute before the last part (``bindings`` for a binding key)."""
        return self.parts[-2] if len(self.parts) > 1 and isinstance(self.parts[-2], str) else None


def parse_path(path: str) -> list[str | int]:
    """``$.pages[3].navigate`` -> ``["pages", 3, "navigate"]``; a binding key (any text)
    stays whole: ``$.tasks[0].bindings.a-b`` -> ``["tasks", 0, "bindings", "a-b"]``."""
    head, sep, key = path.partition(".bindings.")
    parts: list[str | int] = [name if name else int(index) for name, index in _PART.findall(head)]
    return [*parts, "bindings", key] if sep else parts


def locate(spec: WorldSpec, path: str) -> Target:
    """Walk ``path`` through ``spec``, recording every page, action, condition ... on the way."""
    target, obj, last = Target(parse_path(path)), spec, ""
    for part in target.parts:
        if isinstance(part, int):
            role = _ROLES.get(last)
            container, obj = obj, obj[part]
            if role:
                target.objs[role], target.lists[role], target.role = obj, container, role
        elif isinstance(obj, dict):
            break  # a bindings key: the path ends here
        else:
            obj, last = getattr(obj, part), part
    return target


# --- small helpers -----------------------------------------------------------------------


def fresh_id(base: str, taken: Iterable[str], *, keep: bool = False) -> str:
    """``base`` (if ``keep`` and free) or ``base_2``, ``base_3`` ... not in ``taken``."""
    used = set(taken)
    if keep and base not in used:
        return base[:_MAX_ID]
    n = 2
    while True:
        suffix = f"_{n}"
        candidate = base[: _MAX_ID - len(suffix)] + suffix
        if candidate not in used:
            return candidate
        n += 1


def label_of(identifier: str) -> str:
    return identifier.replace("_", " ").strip().capitalize() or identifier


def _action_ids(spec: WorldSpec) -> set[str]:
    return {a.id for p in spec.pages for a in p.actions}


def _remove(items: list[Any], item: Any) -> None:
    items[:] = [x for x in items if x is not item]


def _unique(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if not any(same_value(v, o) for o in out):
            out.append(v)
    return out


def _reachable(spec: WorldSpec) -> tuple[nx.DiGraph, list[str]]:
    """The page graph and the pages reachable from home in BFS order."""
    graph = page_graph(spec)
    order = list(nx.bfs_tree(graph, spec.home)) if spec.home in graph else []
    return graph, order


def _terminal(spec: WorldSpec, page_id: str) -> bool:
    return any(p.terminal for p in spec.pages if p.id == page_id)


# --- repairs: duplicate ids ----------------------------------------------------------------


def _scope(spec: WorldSpec, t: Target) -> set[str]:
    """The ids the renamed object must differ from."""
    role = t.role
    if role == "page":
        return {p.id for p in spec.pages}
    if role == "variable":
        return {v.name for v in spec.variables}
    if role == "task":
        return {x.id for x in spec.tasks}
    if role == "action":
        return _action_ids(spec)
    if role == "element":
        return {e.id for e in t.objs["page"].elements}
    return {p.name for p in t.objs["action"].params}


def fix_duplicate(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Drop the later duplicate when it copies an earlier one exactly (a list pasted twice
    would otherwise become thousands of renamed tasks to explore); else rename it with a
    numeric suffix, and references keep the first."""
    obj, attr = t.objs[t.role or ""], t.field or "id"
    old = getattr(obj, attr)
    siblings = t.lists.get(t.role or "", [])
    if any(x is not obj and getattr(x, attr, None) == old and x == obj for x in siblings):
        return _drop(t, t.role or "", "it is an exact copy of an earlier one")
    new = fresh_id(old, _scope(spec, t))
    setattr(obj, attr, new)
    return f"renamed the later {t.role} {old!r} to {new!r}"


# --- repairs: dangling references -----------------------------------------------------------


def _drop(t: Target, role: str, why: str) -> str:
    _remove(t.lists[role], t.objs[role])
    name = getattr(t.objs[role], "id", None)
    return f"dropped the {role}{f' {name!r}' if name else ''}: {why}"


def _retarget(obj: Any, attr: str, candidates: Iterable[str], what: str) -> str | None:
    old = getattr(obj, attr)
    new = closest(old, candidates)
    if new is None:
        return None
    setattr(obj, attr, new)
    return f"{what} {old!r} -> closest match {new!r}"


def _fix_navigate(spec: WorldSpec, t: Target) -> str:
    action = t.objs["action"]
    done = _retarget(action, "navigate", [p.id for p in spec.pages], "navigate")
    return done or _drop(t, "action", f"no page resembles {action.navigate!r}")


def _fix_task_page(spec: WorldSpec, t: Target) -> str:
    task, pages = t.objs["task"], [p.id for p in spec.pages]
    if t.field == "start":
        done = _retarget(task, "start", pages, "start page")
        if done:
            return done
        task.start = None
        return "start page reset to home"
    done = _retarget(task.goal, "page", pages, "goal page")
    return done or _drop(t, "task", f"no page resembles its goal page {task.goal.page!r}")


def _new_element(page: Page, action: Action, step: GuiStep, ref: str, role: str) -> Element:
    kind: ElementKind = _OP_KIND.get(step.op, "button") if role == "element" else "button"
    el = Element(id=ref, kind=kind, label=label_of(ref))
    if kind == "select":
        el.options = select_values(action, step.value)
    if kind == "hover_menu":
        el.options = _menu_entries(page, ref) or [label_of(ref)]
    return el


def _fix_step_element(spec: WorldSpec, t: Target) -> str | None:
    page, action, step = t.objs["page"], t.objs["action"], t.objs["step"]
    ref = getattr(step, t.field or "element")
    if any(e.id == ref for e in page.elements):
        return None  # added for an earlier finding
    el = _new_element(page, action, step, ref, t.field or "element")
    page.elements.append(el)
    return f"added {el.kind} element {ref!r} to page {page.id!r}"


def _fix_step_value(spec: WorldSpec, t: Target) -> str:
    action, step = t.objs["action"], t.objs["step"]
    names = [p.name for p in action.params]
    changes = []
    for name in placeholders(step.value):
        if name in names:
            continue
        new = closest(name, names)
        step.value = (step.value or "").replace(f"{{{name}}}", f"{{{new}}}" if new else name)
        changes.append(f"{{{name}}} -> " + (f"{{{new}}}" if new else f"literal {name!r}"))
    return "in the step value " + ", ".join(changes)


def _fix_condition(spec: WorldSpec, t: Target) -> str:
    cond: Condition = t.objs["condition"]
    if t.field == "var":
        done = _retarget(cond, "var", [v.name for v in spec.variables], "variable")
        return done or _drop(t, "condition", f"no variable resembles {cond.var!r}")
    action = t.objs.get("action")
    if t.field == "param" and action is not None and t.lists["condition"] is action.guards:
        done = _retarget(cond, "param", [p.name for p in action.params], "parameter")
        return done or _drop(t, "condition", f"no parameter resembles {cond.param!r}")
    return _drop(t, "condition", "it refers to nothing that exists here")


def _fix_effect_param(spec: WorldSpec, t: Target) -> str:
    eff = t.objs["effect"]
    done = _retarget(eff, "param", [p.name for p in t.objs["action"].params], "parameter")
    return done or _drop(t, "effect", f"no parameter resembles {eff.param!r}")


def _fix_task_names(spec: WorldSpec, t: Target) -> str:
    task, names = t.objs["task"], [v.name for v in spec.variables]
    if t.role == "slot":
        bad = t.objs["slot"]
        new = closest(bad, [n for n in names if n not in task.slots])
        renamed = (new if s == bad else s for s in task.slots)
        task.slots = list(dict.fromkeys(s for s in renamed if s))
        return f"slot {bad!r} -> {new!r}" if new else f"dropped slot {bad!r}"
    bad = str(t.parts[-1])
    new = closest(bad, [n for n in names if n not in task.bindings])
    value = task.bindings.pop(bad)
    if new:
        task.bindings[new] = value
    return f"binding {bad!r} -> {new!r}" if new else f"dropped binding {bad!r}"


def fix_dangling(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Point a broken reference at the closest existing name, or add / drop what it needs."""
    if t.parts == ["home"]:
        spec.home = spec.pages[0].id
        return f"home -> first page {spec.home!r}"
    if t.role == "action" and t.field == "navigate":
        return _fix_navigate(spec, t)
    if t.parent_field == "bindings" or t.role == "slot":
        return _fix_task_names(spec, t)
    if t.role == "task" and t.field in ("page", "start"):
        return _fix_task_page(spec, t)
    if t.role == "step":
        return _fix_step_value(spec, t) if t.field == "value" else _fix_step_element(spec, t)
    if t.role == "condition":
        return _fix_condition(spec, t)
    if t.role == "effect":
        return _fix_effect_param(spec, t)
    if t.role == "element" and t.field == "parent":
        t.objs["element"].parent = None
        return f"cleared the unknown parent of element {t.objs['element'].id!r}"
    raise CannotRepair("no repair for this kind of reference")


# --- repairs: page graph -------------------------------------------------------------------


def _has_back(spec: WorldSpec, page: Page) -> bool:
    ids = {p.id for p in spec.pages}
    return any(a.is_back and a.navigate in ids and a.navigate != page.id for a in page.actions)


def back_target(spec: WorldSpec, page: Page) -> str:
    """The first non-terminal predecessor of ``page`` in BFS order from home, else home."""
    graph, order = _reachable(spec)
    rank = {p: i for i, p in enumerate(order)}
    preds = [p for p in graph.predecessors(page.id)
             if p in rank and p != page.id and not _terminal(spec, p)]
    return min(preds, key=rank.__getitem__) if preds else spec.home


def add_link(spec: WorldSpec, host: Page, to: str, label: str, *, back: bool = False) -> Action:
    """Add a link element and a click action on ``host`` that navigates to ``to``."""
    base = "back" if back else f"to_{to}"
    el_id = fresh_id(base, (e.id for e in host.elements), keep=True)
    host.elements.append(Element(id=el_id, kind="link", label=label))
    action_id = fresh_id(f"{host.id}_{base}", _action_ids(spec), keep=True)
    action = Action(id=action_id, label=label, gui=[GuiStep(op="click", element=el_id)],
                    navigate=to, is_back=back)
    host.actions.append(action)
    return action


def fix_back(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Give a page a Back action to its first predecessor (or home)."""
    page: Page = t.objs["page"]
    if page.id == spec.home:
        raise CannotRepair("home has nowhere to go back to; link other pages from it")
    if _has_back(spec, page):
        return None  # repaired for an earlier finding on this page
    to = back_target(spec, page)
    stale = next((a for a in page.actions if a.is_back), None)
    if stale is not None:
        stale.navigate = to
        return f"pointed Back action {stale.id!r} of page {page.id!r} at {to!r}"
    plain = next((a for a in page.actions if a.navigate == to and not a.guards and not a.params),
                 None)
    if plain is not None:
        plain.is_back = True
        return f"marked action {plain.id!r} (to {to!r}) as the Back action of page {page.id!r}"
    action = add_link(spec, page, to, "Back", back=True)
    return f"added Back action {action.id!r} on page {page.id!r} -> {to!r}"


def _host(spec: WorldSpec, page: Page, reachable: list[str]) -> Page:
    """Where to link an unreachable page from: where its own Back or links point, or home."""
    actions = sorted(page.actions, key=lambda a: not a.is_back)
    for a in actions:
        if a.navigate in reachable and a.navigate != page.id and not _terminal(spec, a.navigate):
            return spec.page(a.navigate)
    return spec.page(spec.home)


def _prune(spec: WorldSpec, page: Page) -> str:
    dropped = [a.id for p in spec.pages for a in p.actions if a.navigate == page.id]
    _remove(spec.pages, page)
    for p in spec.pages:
        p.actions = [a for a in p.actions if a.navigate != page.id]
    return f"pruned unreachable page {page.id!r}" + (
        f" and the actions leading to it {dropped}" if dropped else "")


def fix_unreachable_page(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Link a terminal / goal / start page from its best host; prune any other page."""
    page: Page = t.objs["page"]
    _, reachable = _reachable(spec)
    if page.id in reachable:
        return None  # linked by an earlier repair this round
    wanted = {task.goal.page for task in spec.tasks} | {task.start for task in spec.tasks}
    if not (page.terminal or page.id in wanted):
        return _prune(spec, page)
    host = _host(spec, page, reachable)
    action = add_link(spec, host, page.id, f"Go to {page.title}")
    return f"linked page {page.id!r} from {host.id!r} with action {action.id!r}"


# --- repairs: domains, effects, guards, widgets -------------------------------------------


def _mentions(spec: WorldSpec, name: str) -> list[Any]:
    """Every literal value the spec compares with, sets, or feeds into variable ``name``."""
    out: list[Any] = []
    conds = [c for p in spec.pages for a in p.actions for c in a.guards]
    conds += [c for task in spec.tasks for c in task.goal.conditions]
    for c in conds:
        if c.var == name and c.op in ("eq", "neq", "in", "gt", "gte", "lt", "lte"):
            out += c.value if isinstance(c.value, list) else [c.value]
    for p in spec.pages:
        for a in p.actions:
            params = {x.name: x.domain for x in a.params}
            for e in (e for e in a.effects if e.var == name):
                out += params.get(e.param, []) if e.param else [e.value]
    out += [task.bindings[name] for task in spec.tasks if name in task.bindings]
    return _unique(v for v in out if v is not None)


def _fill_variable(spec: WorldSpec, var: Variable) -> str:
    seen = _mentions(spec, var.name)
    if var.type == "int":
        ints = [v for v in seen if isinstance(v, int) and not isinstance(v, bool)]
        if var.min is not None and var.max is not None:
            var.min, var.max = var.max, var.min
        else:
            var.min = var.min if var.min is not None else min([0, *ints])
            var.max = var.max if var.max is not None else max([var.min + 3, *(i + 1 for i in ints)])
        return f"int variable {var.name!r} now ranges {var.min}..{var.max}"
    values = [v for v in seen if not isinstance(v, list)]
    if not values:
        raise CannotRepair(f"no value of {var.name!r} is mentioned anywhere to fill its domain")
    var.values = values
    return f"{var.type} variable {var.name!r} takes the values it is used with: {values}"


def _fill_param(spec: WorldSpec, t: Target) -> str:
    page, action, param = t.objs["page"], t.objs["action"], t.objs["param"]
    elements = {e.id: e for e in page.elements}
    for step in action.gui:
        el = elements.get(step.element)
        if step.op == "select" and step.value == f"{{{param.name}}}" and el and el.options:
            param.domain = list(el.options)
            return f"parameter {param.name!r} takes the options of {el.id!r}: {el.options}"
    return _drop(t, "action", f"its parameter {param.name!r} has no values")


def _menu_entries(page: Page, menu: str) -> list[str]:
    labels = {e.id: e.label for e in page.elements}
    out = [e.label for e in page.elements if e.parent == menu]
    for a in page.actions:
        for prev, step in zip(a.gui, a.gui[1:]):
            if prev.op == "hover" and prev.element == menu and step.element in labels:
                out.append(labels[step.element])
    return _unique(out)


def _fill_options(spec: WorldSpec, t: Target) -> str:
    page, el = t.objs["page"], t.objs["element"]
    if el.kind == "hover_menu":
        options = _menu_entries(page, el.id)
    else:
        options = _unique(v for a in page.actions for s in a.gui
                          if s.op == "select" and s.element == el.id
                          for v in select_values(a, s.value))
    if options:
        el.options = options
        return f"{el.kind} {el.id!r} lists the options its actions use: {options}"
    used = any(s.element == el.id or s.target == el.id for a in page.actions for s in a.gui)
    if used or any(e.parent == el.id for e in page.elements):
        raise CannotRepair(f"nothing says which options {el.id!r} should offer")
    _remove(page.elements, el)
    return f"removed the unused, empty {el.kind} {el.id!r}"


def fix_empty_domain(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Fill a domain from how the spec uses it, else drop what cannot work."""
    if t.role == "variable":
        return _fill_variable(spec, t.objs["variable"])
    if t.role == "param":
        return _fill_param(spec, t)
    return _fill_options(spec, t)


def fix_bad_initial(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Reset an out-of-domain initial value to the default (empty) one."""
    var = t.objs["variable"]
    old, var.initial = var.initial, None
    return f"initial value {old!r} of {var.name!r} reset to the default"


def _accepts(var: Variable, op: str, value: object) -> bool:
    if op == "append":
        return var.type == "list" and any(same_value(value, v) for v in var.values)
    return in_domain(var, value)


def fix_bad_effect(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Narrow a parameter to the values its effect accepts (the machine refuses the others
    anyway, so behaviour is unchanged); otherwise drop the effect."""
    eff, action = t.objs["effect"], t.objs["action"]
    var = next((v for v in spec.variables if v.name == eff.var), None)
    param = next((p for p in action.params if p.name == eff.param), None)
    if var is not None and param is not None and var.max_length != 0:
        good = [d for d in param.domain if _accepts(var, eff.op, d)]
        if 0 < len(good) < len(param.domain):
            param.domain = good
            return f"narrowed parameter {param.name!r} of {action.id!r} to {good}, the " \
                f"values {eff.var!r} accepts"
    return _drop(t, "effect", f.message)


def fix_drop_guard(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Drop a guard that can never hold."""
    return _drop(t, "condition", f.message)


def fix_drop_action(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Drop the later of two indistinguishable actions."""
    return _drop(t, "action", "it duplicates an earlier action's trigger and guards")


def _retype(page: Page, el: Element, kind: ElementKind) -> str:
    ops = {s.op for a in page.actions for s in a.gui if s.element == el.id}
    if any(op not in _NEUTRAL_OPS and _OP_KIND.get(op) != kind for op in ops):
        raise CannotRepair(f"{el.id!r} is used by steps that need different widget kinds")
    old, el.kind = el.kind, kind
    return f"{old} {el.id!r} became a {kind}"


def fix_widget(spec: WorldSpec, f: Finding, t: Target) -> str | None:
    """Make the widget fit the step: list missing options, or change its kind."""
    page, action, step = t.objs["page"], t.objs["action"], t.objs["step"]
    el = next((e for e in page.elements if e.id == step.element), None)
    if el is None:
        raise CannotRepair(f"element {step.element!r} is gone")
    if step.value is None and step.op in ("type", "select"):
        if len(action.params) != 1:
            raise CannotRepair(f"the {step.op} step needs a value and no single parameter fits")
        step.value = f"{{{action.params[0].name}}}"
        return f"the {step.op} step on {el.id!r} now uses {step.value}"
    done = [] if _fits(step.op, el.kind) else [_retype(page, el, _OP_KIND[step.op])]
    if step.op == "select" and el.kind in OPTION_CHECKED_KINDS:
        missing = [v for v in select_values(action, step.value) if v not in el.options]
        if missing:
            el.options += missing
            done.append(f"added options {missing} to {el.id!r}")
    return "; ".join(done) or None


def _fits(op: str, kind: str) -> bool:
    """Does a step with ``op`` suit a widget of ``kind`` (as the validator judges it)?"""
    if op == "type":
        return kind in TEXT_KINDS
    if op == "select":
        return kind in SELECT_KINDS
    return kind == "checkbox" if op in ("check", "uncheck") else True


Fixer = Callable[[WorldSpec, Finding, Target], "str | None"]
FIXERS: dict[str, Fixer] = {
    "duplicate-id": fix_duplicate,
    "dangling-reference": fix_dangling,
    "empty-domain": fix_empty_domain,
    "bad-initial": fix_bad_initial,
    "bad-effect": fix_bad_effect,
    "impossible-guard": fix_drop_guard,
    "nondeterministic-actions": fix_drop_action,
    "widget-contract": fix_widget,
    "unreachable-page": fix_unreachable_page,
    "dead-end-page": fix_back,
    "missing-back": fix_back,
}
"""Finding code -> the repair for it. Codes not here are reported, not changed."""


# --- the loop ------------------------------------------------------------------------------


def repair_round(spec: WorldSpec, report: Report, reasons: dict[tuple[str, str], str]
                 ) -> list[Repair]:
    """Apply one repair per error of the report (structure first); return what was done."""
    errors = report.errors
    todo = [f for f in errors if f.code in BLOCKING_CODES] or errors
    targets = [(f, locate(spec, f.path)) for f in todo]  # before any change moves indices
    repairs: list[Repair] = []
    for f, target in targets:
        if _detached(spec, target):
            continue  # its page or action was removed by an earlier repair this round
        fixer = FIXERS.get(f.code)
        if fixer is None:
            reasons[(f.code, f.path)] = UNREPAIRABLE.get(f.code, "no automatic repair")
            continue
        try:
            done = fixer(spec, f, target)
        except CannotRepair as exc:
            reasons[(f.code, f.path)] = str(exc)
            continue
        if done:
            repairs.append(Repair(f.code, f.path, done))
    return repairs


def _detached(spec: WorldSpec, t: Target) -> bool:
    """Was the page or action a finding points into removed earlier in this round?"""
    page, action = t.objs.get("page"), t.objs.get("action")
    if page is None:
        return False
    if not any(p is page for p in spec.pages):
        return True
    return action is not None and not any(a is action for a in page.actions)


def _key(report: Report) -> frozenset[tuple[str, str, str]]:
    return frozenset((f.code, f.path, f.message) for f in report.findings)


def improve(
    spec: WorldSpec, *, max_iterations: int = 8, state_budget: int = DEFAULT_STATE_BUDGET
) -> ImproveResult:
    """Validate and repair a copy of ``spec`` in rounds until valid or stuck."""
    work = spec.model_copy(deep=True)
    report = validate(work, state_budget=state_budget)
    seen, repairs, reasons = {_key(report)}, [], {}
    rounds = 0
    while not report.valid and rounds < max_iterations:
        rounds += 1
        done = repair_round(work, report, reasons)
        if not done:
            break
        repairs += done
        report = validate(work, state_budget=state_budget)
        if _key(report) in seen:
            break
        seen.add(_key(report))
    return ImproveResult(work, repairs, report, rounds, reasons)

