"""The deterministic validator: small named checks over a world spec.

Each check is one short function registered in :data:`CHECKS` (name -> function, in the
order they run) and yields :class:`Finding` s that point at the spec file by JSON path.
Structural checks always run; the dynamic checks (one BFS over (page, signature) states)
run only when the structure is sound enough for :class:`~webworld.spec.semantics.Machine`
(no ``duplicate-id`` or ``dangling-reference`` errors).

Static guard analysis is exact for small domains (every value is tried) and conservative
for large ones (it never reports a guard that might hold).
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import networkx as nx

from webworld.spec.coherence import miscategorised_items, static_incoherences
from webworld.spec.graph import DEFAULT_STATE_BUDGET, StateGraph, explore_states, page_graph
from webworld.spec.io import json_path
from webworld.spec.models import (
    Action,
    Condition,
    Effect,
    Element,
    GuiStep,
    Page,
    Scalar,
    Task,
    Variable,
    WorldSpec,
)
from webworld.spec.semantics import (
    Machine,
    Value,
    check,
    domain_size,
    in_domain,
    param_assignments,
    same_value,
)

Severity = Literal["error", "warning"]

_E: Severity = "error"
_W: Severity = "warning"
_CODES: dict[str, tuple[Severity, str]] = {
    "duplicate-id": (_E, "an id or name is used twice where it must be unique"),
    "dangling-reference": (_E, "a reference to a missing page, element, variable or parameter"),
    "empty-domain": (_E, "a variable, parameter or option widget has no values"),
    "bad-initial": (_E, "a variable's initial value is outside its domain"),
    "bad-effect": (_E, "an effect that can never apply (unknown variable, value outside domain)"),
    "impossible-guard": (_E, "a guard no value can satisfy, alone or with the action's others"),
    "nondeterministic-actions": (_E, "two actions of a page share a trigger and a guard set"),
    "widget-contract": (_E, "a GUI step that does not fit its widget (kind or options)"),
    "unreachable-page": (_E, "a page no navigation from home leads to"),
    "dead-end-page": (_E, "a non-terminal page with no navigating action"),
    "missing-back": (_E, "a non-home, non-terminal page without a Back action"),
    "no-terminal": (_E, "the spec has no terminal (success) page"),
    "no-tasks": (_W, "the spec has no tasks"),
    "state-budget": (_E, "the reachable state space exceeds the state budget"),
    "unreachable-terminal": (_E, "a terminal page no reachable state is on"),
    "unreachable-goal": (_E, "a task goal no reachable state satisfies"),
    "dead-action": (_W, "an action that is enabled in no reachable state"),
    "column-kind": (_W, "a column value that is not of the kind its header names"),
    "foreign-facet": (_W, "a filter, sort or category menu the site's archetype has no use for"),
    "miscategorised-item": (_W, "an item listed under a category it does not belong to"),
    "fact-mismatch": (_W, "an item's fact that differs between two places"),
}
CHECK_CODES: dict[str, str] = {code: desc for code, (_, desc) in _CODES.items()}
"""Every finding code -> a one-line description (for docs and the CLI)."""

BLOCKING_CODES = frozenset({"duplicate-id", "dangling-reference"})
"""Error codes that make the dynamic (BFS) checks unsafe, so they are skipped."""

ENUMERATION_LIMIT = 4096
"""Domains up to this size are enumerated exactly when judging guards statically."""

TEXT_KINDS = frozenset({"text_input", "search_box", "date_picker"})
SELECT_KINDS = frozenset({"select", "radio", "tabs", "date_picker"})
OPTION_KINDS = frozenset({"select", "radio", "tabs", "hover_menu"})
OPTION_CHECKED_KINDS = frozenset({"select", "radio", "tabs"})
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


# --- public data ---------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One problem: a stable ``code``, its severity, where it is and what is wrong."""

    code: str
    severity: Severity
    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "path": self.path,
                "message": self.message}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(data["code"], data["severity"], data["path"], data["message"])


class HasFindings:
    """``errors``, ``warnings`` and ``valid`` over an object's ``findings``."""

    findings: list[Finding]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def valid(self) -> bool:
        return not self.errors


@dataclass
class Report(HasFindings):
    """All findings of one validation; ``states`` is None if the BFS did not run."""

    findings: list[Finding]
    states: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "states": self.states,
            "findings": [f.to_dict() for f in self.findings],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        return cls([Finding.from_dict(f) for f in data["findings"]], data.get("states"))


def finding(code: str, loc: tuple[Any, ...], message: str) -> Finding:
    """A finding of ``code`` (severity from the code table) at the spec location ``loc``."""
    return Finding(code, _CODES[code][0], json_path(loc), message)


# --- the shared context of one validate() call ------------------------------------------


@dataclass
class Context:
    """The spec plus indexes, the page graph and the state graph, each built once."""

    spec: WorldSpec
    budget: int = DEFAULT_STATE_BUDGET
    states: StateGraph | None = None
    starts: dict[str, StateGraph] = field(default_factory=dict)

    @cached_property
    def page_ids(self) -> set[str]:
        return {p.id for p in self.spec.pages}

    @cached_property
    def variables(self) -> dict[str, Variable]:
        out: dict[str, Variable] = {}
        for var in self.spec.variables:
            out.setdefault(var.name, var)
        return out

    @cached_property
    def graph(self) -> nx.DiGraph:
        return page_graph(self.spec)

    @cached_property
    def reachable_pages(self) -> set[str]:
        home = self.spec.home
        return nx.descendants(self.graph, home) | {home} if home in self.graph else set()

    def actions(self) -> Iterator[tuple[int, Page, int, Action]]:
        for i, page in enumerate(self.spec.pages):
            for j, action in enumerate(page.actions):
                yield i, page, j, action

    def explored(self, start: str | None = None) -> StateGraph:
        """The BFS from home (built by validate), or from another task start (cached)."""
        assert self.states is not None
        if start is None or start == self.spec.home:
            return self.states
        if start not in self.starts:
            self.starts[start] = explore_states(
                self.spec, start=start, budget=self.budget, machine=self.states.machine
            )
        return self.starts[start]


Check = Callable[[Context], Iterable[Finding]]


# --- helpers ---------------------------------------------------------------------------


def placeholders(text: str | None) -> list[str]:
    """Parameter names mentioned as ``{name}`` in a GUI step value."""
    return _PLACEHOLDER.findall(text or "")


def option_text(value: object) -> str:
    """How a parameter value appears among a widget's options."""
    return str(value)


def _freeze(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_freeze(v) for v in value))
    return (type(value).__name__, value)


def guard_key(cond: Condition) -> tuple[object, ...]:
    """A hashable, type-strict identity of a condition (True is not 1)."""
    return (cond.var, cond.param, cond.op, _freeze(cond.value))


def trigger_key(action: Action) -> tuple[object, ...]:
    """What the user does last: op, element, key and value of the trigger step."""
    t = action.trigger
    return (t.op, t.element, t.key, t.value)


def _refs(conds: list[Condition]) -> list[object]:
    out: list[object] = []
    for c in conds:
        out.extend(c.value if isinstance(c.value, list) else [c.value])
    return out


def _int_witnesses(var: Variable, conds: list[Condition]) -> list[Value]:
    """Boundary points that decide a conjunction of comparisons over a large int range."""
    points = {0} if var.min is None and var.max is None else set()
    points |= {b for b in (var.min, var.max) if b is not None}
    for r in _refs(conds):
        if isinstance(r, int) and not isinstance(r, bool):
            points |= {r - 1, r, r + 1}
    return sorted(p for p in points if in_domain(var, p))


def _list_witnesses(var: Variable, conds: list[Condition]) -> list[Value]:
    """One list of every length plus every referenced list that is in the domain."""
    cap = min(len(var.values), var.max_length if var.max_length is not None else 10**9)
    out: list[Value] = [tuple(var.values[:k]) for k in range(cap + 1)]
    out += [tuple(r) for r in _refs(conds) if isinstance(r, list) and in_domain(var, r)]
    return out


def _all_values(var: Variable) -> list[Value]:
    if var.type == "bool":
        return [False, True]
    if var.type == "int":
        return list(range(var.min or 0, (var.max or 0) + 1))
    if var.type == "enum":
        return [None, *var.values]
    cap = var.max_length if var.max_length is not None else len(var.values)
    return [p for k in range(cap + 1) for p in itertools.permutations(var.values, k)]


def witnesses(var: Variable, conds: list[Condition]) -> tuple[list[Value], list[Condition]]:
    """Values to try and the conditions to try them on; exact for small domains, and for
    large ones ``neq`` is ignored so a satisfiable guard is never called impossible."""
    if var.type in ("bool", "enum"):
        return _all_values(var), conds  # explicit, linear in the spec's size
    bounded = var.type == "list" or (var.min is not None and var.max is not None)
    if bounded and domain_size(var) <= ENUMERATION_LIMIT:
        return _all_values(var), conds
    loose = [c for c in conds if c.op != "neq"]
    if var.type == "int":
        return _int_witnesses(var, loose), loose
    return _list_witnesses(var, loose), loose


def satisfiable(var: Variable | None, domain: list[Scalar] | None, conds: list[Condition]) -> bool:
    """Can one value of the variable (or of the parameter ``domain``) meet all ``conds``?"""
    if var is not None:
        values, conds = witnesses(var, conds)
    else:
        values = list(domain or [])
    return any(all(check(c, v) for c in conds) for v in values)


def closest(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The most similar candidate (difflib), or None; shared with the improver."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return found[0] if found else None


# --- structural checks ------------------------------------------------------------------


def _dups(names: list[str], loc: Callable[[int], tuple[Any, ...]], what: str) -> Iterator[Finding]:
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            yield finding("duplicate-id", loc(i), f"{what} {name!r} is already defined at "
                          f"{json_path(loc(seen[name]))}")
        else:
            seen[name] = i


def check_duplicate_ids(ctx: Context) -> Iterator[Finding]:
    """Page ids, variable names, task ids and action ids (spec-wide) are unique; so are
    element ids within a page and parameter names within an action."""
    spec = ctx.spec
    yield from _dups([p.id for p in spec.pages], lambda i: ("pages", i, "id"), "page id")
    yield from _dups([v.name for v in spec.variables], lambda i: ("variables", i, "name"),
                     "variable")
    yield from _dups([t.id for t in spec.tasks], lambda i: ("tasks", i, "id"), "task id")
    locs = [(i, j) for i, _, j, _ in ctx.actions()]
    yield from _dups([a.id for _, _, _, a in ctx.actions()],
                     lambda n: ("pages", locs[n][0], "actions", locs[n][1], "id"), "action id")
    for i, page in enumerate(spec.pages):
        yield from _dups([e.id for e in page.elements],
                         lambda k, i=i: ("pages", i, "elements", k, "id"),
                         f"element id on page {page.id!r}:")
        for j, action in enumerate(page.actions):
            yield from _dups([p.name for p in action.params],
                             lambda k, i=i, j=j: ("pages", i, "actions", j, "params", k, "name"),
                             f"parameter of action {action.id!r}:")


def _dangling_condition(
    ctx: Context, cond: Condition, loc: tuple[Any, ...], params: set[str] | None, owner: str
) -> Iterator[Finding]:
    """A condition names a known variable, or (in an action guard) a known parameter."""
    if cond.var is not None and cond.var not in ctx.variables:
        yield finding("dangling-reference", (*loc, "var"),
                      f"{owner}: condition on unknown variable {cond.var!r}")
    if cond.param is not None and cond.param not in (params or set()):
        where = "is not a parameter of the action" if params is not None else (
            "cannot be used here (only action guards have parameters)")
        yield finding("dangling-reference", (*loc, "param"),
                      f"{owner}: condition parameter {cond.param!r} {where}")


def _dangling_element(ctx: Context, i: int, page: Page, k: int, el: Element) -> Iterator[Finding]:
    ids = {e.id for e in page.elements}
    if el.parent is not None and el.parent not in ids:
        yield finding("dangling-reference", ("pages", i, "elements", k, "parent"),
                      f"element {el.id!r} on page {page.id!r} has unknown parent {el.parent!r}")
    for m, cond in enumerate(el.visible_when):
        yield from _dangling_condition(ctx, cond, ("pages", i, "elements", k, "visible_when", m),
                                       None, f"visible_when of element {el.id!r}")


def _dangling_gui(i: int, page: Page, j: int, action: Action) -> Iterator[Finding]:
    ids, params = {e.id for e in page.elements}, {p.name for p in action.params}
    for k, step in enumerate(action.gui):
        loc = ("pages", i, "actions", j, "gui", k)
        for attr in ("element", "target"):
            ref = getattr(step, attr)
            if ref is not None and ref not in ids:
                yield finding("dangling-reference", (*loc, attr), f"action {action.id!r}: "
                              f"{step.op} {attr} {ref!r} is not an element of page {page.id!r}")
        for name in placeholders(step.value):
            if name not in params:
                yield finding("dangling-reference", (*loc, "value"), f"action {action.id!r}: "
                              f"{{{name}}} in a {step.op} value is not a parameter of the action")


def _dangling_action(ctx: Context, i: int, page: Page, j: int, action: Action) -> Iterator[Finding]:
    loc = ("pages", i, "actions", j)
    if action.navigate is not None and action.navigate not in ctx.page_ids:
        yield finding("dangling-reference", (*loc, "navigate"),
                      f"action {action.id!r} navigates to unknown page {action.navigate!r}")
    yield from _dangling_gui(i, page, j, action)
    params = {p.name for p in action.params}
    for k, cond in enumerate(action.guards):
        yield from _dangling_condition(ctx, cond, (*loc, "guards", k), params,
                                       f"guard of action {action.id!r}")
    for k, eff in enumerate(action.effects):
        if eff.param is not None and eff.param not in params:
            yield finding("dangling-reference", (*loc, "effects", k, "param"),
                          f"effect of action {action.id!r} uses unknown parameter {eff.param!r}")


def _dangling_task(ctx: Context, t: int, task: Task) -> Iterator[Finding]:
    if task.goal.page not in ctx.page_ids:
        yield finding("dangling-reference", ("tasks", t, "goal", "page"),
                      f"task {task.id!r} has unknown goal page {task.goal.page!r}")
    if task.start is not None and task.start not in ctx.page_ids:
        yield finding("dangling-reference", ("tasks", t, "start"),
                      f"task {task.id!r} has unknown start page {task.start!r}")
    for m, cond in enumerate(task.goal.conditions):
        yield from _dangling_condition(ctx, cond, ("tasks", t, "goal", "conditions", m), None,
                                       f"goal of task {task.id!r}")
    for m, slot in enumerate(task.slots):
        if slot not in ctx.variables:
            yield finding("dangling-reference", ("tasks", t, "slots", m),
                          f"task {task.id!r} has slot {slot!r}, which is not a variable")
    for name in task.bindings:
        if name not in ctx.variables:
            yield finding("dangling-reference", ("tasks", t, "bindings", name),
                          f"task {task.id!r} binds {name!r}, which is not a variable")


def check_dangling_references(ctx: Context) -> Iterator[Finding]:
    """Every page, element, variable and parameter a spec names exists where it must."""
    if ctx.spec.home not in ctx.page_ids:
        yield finding("dangling-reference", ("home",),
                      f"home {ctx.spec.home!r} is not a page")
    for i, page in enumerate(ctx.spec.pages):
        for k, el in enumerate(page.elements):
            yield from _dangling_element(ctx, i, page, k, el)
        for j, action in enumerate(page.actions):
            yield from _dangling_action(ctx, i, page, j, action)
    for t, task in enumerate(ctx.spec.tasks):
        yield from _dangling_task(ctx, t, task)


def _variable_domain_problem(var: Variable) -> str | None:
    if var.type in ("enum", "list") and not var.values:
        return f"{var.type} variable {var.name!r} has no values"
    if var.type == "int" and (var.min is None or var.max is None):
        return f"int variable {var.name!r} needs both min and max (finite domain)"
    if var.type == "int" and var.min > var.max:  # type: ignore[operator]
        return f"int variable {var.name!r} has min {var.min} > max {var.max}"
    return None


def check_empty_domains(ctx: Context) -> Iterator[Finding]:
    """Variables, parameters and option widgets (select, radio, tabs, hover menu) have
    at least one value; int variables have min <= max."""
    for v, var in enumerate(ctx.spec.variables):
        problem = _variable_domain_problem(var)
        if problem:
            yield finding("empty-domain", ("variables", v), problem)
    for i, page in enumerate(ctx.spec.pages):
        for k, el in enumerate(page.elements):
            if el.kind in OPTION_KINDS and not el.options:
                yield finding("empty-domain", ("pages", i, "elements", k),
                              f"{el.kind} {el.id!r} on page {page.id!r} has no options")
        for j, action in enumerate(page.actions):
            for k, param in enumerate(action.params):
                if not param.domain:
                    yield finding("empty-domain", ("pages", i, "actions", j, "params", k),
                                  f"parameter {param.name!r} of action {action.id!r} has an "
                                  "empty domain, so the action can never fire")


def check_initial_values(ctx: Context) -> Iterator[Finding]:
    """A variable's initial value lies in its domain (lists: given as a list)."""
    for v, var in enumerate(ctx.spec.variables):
        if var.initial is None or _variable_domain_problem(var):
            continue
        if not in_domain(var, var.initial):
            yield finding("bad-initial", ("variables", v, "initial"),
                          f"initial value {var.initial!r} of {var.type} variable {var.name!r} "
                          "is outside its domain")


def _effect_problem(var: Variable, eff: Effect, params: dict[str, list[Scalar]]) -> str | None:
    if eff.op == "set" and not in_domain(var, eff.value):
        return f"sets {var.type} variable {var.name!r} to {eff.value!r}, outside its domain"
    if eff.op == "inc" and var.type != "int":
        return f"inc on {var.type} variable {var.name!r} (inc needs an int)"
    if eff.op == "set_param":
        if eff.param is None:
            return f"set_param on {var.name!r} names no parameter"
        bad = [d for d in params.get(eff.param, []) if not in_domain(var, d)]
        if bad:
            return (f"set_param {var.name!r} from parameter {eff.param!r}: values {bad!r} are "
                    "outside the variable's domain")
    if eff.op == "append":
        return _append_problem(var, eff, params)
    return None


def _append_problem(var: Variable, eff: Effect, params: dict[str, list[Scalar]]) -> str | None:
    if var.type != "list":
        return f"append on {var.type} variable {var.name!r} (append needs a list)"
    if var.max_length == 0:
        return f"append on list {var.name!r} whose max_length is 0"
    items = params.get(eff.param, []) if eff.param is not None else [eff.value]
    bad = [x for x in items if not any(same_value(x, v) for v in var.values)]
    if bad:
        return f"append to list {var.name!r}: items {bad!r} are not among its values"
    return None


def check_effects(ctx: Context) -> Iterator[Finding]:
    """Effects name declared variables and can produce values inside their domains."""
    for i, _page, j, action in ctx.actions():
        params = {p.name: p.domain for p in action.params}
        for k, eff in enumerate(action.effects):
            loc = ("pages", i, "actions", j, "effects", k)
            var = ctx.variables.get(eff.var)
            if var is None:
                problem = f"variable {eff.var!r} is not declared"
            elif _variable_domain_problem(var) or (eff.param and eff.param not in params):
                continue
            else:
                problem = _effect_problem(var, eff, params)
            if problem:
                yield finding("bad-effect", loc, f"effect {k} of action {action.id!r}: {problem}")


def _operand(ctx: Context, cond: Condition, params: dict[str, list[Scalar]]
             ) -> tuple[Variable | None, list[Scalar] | None] | None:
    """The variable or parameter domain a condition tests, or None if it cannot be judged."""
    if cond.param is not None:
        return (None, params[cond.param]) if cond.param in params else None
    var = ctx.variables.get(cond.var or "")
    if var is None or _variable_domain_problem(var):
        return None
    return var, None


def _grouped(conds: list[Condition]) -> dict[tuple[str | None, str | None], list[int]]:
    groups: dict[tuple[str | None, str | None], list[int]] = {}
    for k, cond in enumerate(conds):
        key = ("param", cond.param) if cond.param is not None else ("var", cond.var)
        groups.setdefault(key, []).append(k)  # type: ignore[arg-type]
    return groups


def impossible_conditions(
    ctx: Context, conds: list[Condition], params: dict[str, list[Scalar]]
) -> Iterator[tuple[int, str]]:
    """(index, reason) of each condition that can never hold, alone or with earlier ones
    on the same variable or parameter."""
    for indices in _grouped(conds).values():
        operand = _operand(ctx, conds[indices[0]], params)
        if operand is None:
            continue
        kept: list[int] = []
        for k in indices:
            cond = conds[k]
            what = f"{cond.op} {cond.value!r} on " + (
                f"parameter {cond.param!r}" if cond.param is not None else
                f"{operand[0].type} variable {cond.var!r}")  # type: ignore[union-attr]
            if not satisfiable(*operand, [cond]):
                yield k, f"{what} can never hold"
            elif not satisfiable(*operand, [conds[m] for m in kept] + [cond]):
                yield k, f"{what} contradicts the condition(s) at index {kept} on the same operand"
            else:
                kept.append(k)


def check_impossible_guards(ctx: Context) -> Iterator[Finding]:
    """Each action guard can hold for some value of its operand's domain, and the guards
    on one variable or parameter do not contradict each other."""
    for i, page, j, action in ctx.actions():
        params = {p.name: p.domain for p in action.params}
        for k, reason in impossible_conditions(ctx, action.guards, params):
            yield finding("impossible-guard", ("pages", i, "actions", j, "guards", k),
                          f"action {action.id!r} on page {page.id!r}: {reason}")


def goal_conditions(task: Task) -> list[Condition]:
    """The goal's conditions plus the task's bindings as extra ``eq`` conditions."""
    # model_construct: binding keys are free text, and must not crash the validator
    bound = [Condition.model_construct(var=k, op="eq", value=v) for k, v in task.bindings.items()]
    return list(task.goal.conditions) + bound


def check_impossible_goals(ctx: Context) -> Iterator[Finding]:
    """A task goal (with its bindings) can hold for some values of its variables."""
    for t, task in enumerate(ctx.spec.tasks):
        conds, n = goal_conditions(task), len(task.goal.conditions)
        names = list(task.bindings)
        for k, reason in impossible_conditions(ctx, conds, {}):
            loc = ("goal", "conditions", k) if k < n else ("bindings", names[k - n])
            yield finding("unreachable-goal", ("tasks", t, *loc),
                          f"goal of task {task.id!r}: {reason}")


def check_nondeterminism(ctx: Context) -> Iterator[Finding]:
    """No two actions of a page share a trigger (op, element, key, value) and guard set. A
    trigger whose value is a parameter stands for each value of its domain: two actions
    on one list of links, each with its own links, are apart."""
    for i, page in enumerate(ctx.spec.pages):
        seen: dict[tuple[object, ...], Action] = {}
        for j, action in enumerate(page.actions):
            guards = frozenset(guard_key(g) for g in action.guards)
            keys = [(k, guards) for k in concrete_triggers(action)]
            clash = next((seen[k] for k in keys if k in seen), None)
            if clash is not None:
                yield finding("nondeterministic-actions", ("pages", i, "actions", j),
                              f"actions {clash.id!r} and {action.id!r} on page {page.id!r} "
                              "have the same trigger and the same guards")
            for k in keys:
                seen.setdefault(k, action)


def concrete_triggers(action: Action) -> list[tuple[object, ...]]:
    """The trigger keys an action's last step can take: one per value of a parameter that
    is its whole value, else the step as written."""
    op, element, key, value = trigger_key(action)
    names = placeholders(value)
    if len(names) == 1 and value == f"{{{names[0]}}}":
        domain = {p.name: p.domain for p in action.params}.get(names[0])
        if domain:
            return [(op, element, key, option_text(v)) for v in domain]
    return [(op, element, key, value)]


def _step_problem(action: Action, step: GuiStep, el: Element) -> str | None:
    op, kind = step.op, el.kind
    if op == "type" and kind not in TEXT_KINDS:
        return f"type into {kind} {el.id!r} (needs a text_input, search_box or date_picker)"
    if op == "select" and kind not in SELECT_KINDS:
        return f"select on {kind} {el.id!r} (needs a select, radio, tabs or date_picker)"
    if op in ("check", "uncheck") and kind != "checkbox":
        return f"{op} on {kind} {el.id!r} (needs a checkbox)"
    if op in ("type", "select") and step.value is None:
        return f"{op} on {el.id!r} without a value"
    if op == "select" and kind in OPTION_CHECKED_KINDS:
        missing = [v for v in select_values(action, step.value) if v not in el.options]
        if missing:
            return f"select on {kind} {el.id!r}: values {missing} are not among its options"
    return None


def select_values(action: Action, value: str | None) -> list[str]:
    """The option texts a select step can choose: a literal, or a parameter's domain."""
    names = placeholders(value)
    if not names:
        return [value] if value is not None else []
    if len(names) == 1 and value == f"{{{names[0]}}}":
        params = {p.name: p.domain for p in action.params}
        return [option_text(v) for v in params.get(names[0], [])]
    return []  # a composite template: not judged


def check_widget_contracts(ctx: Context) -> Iterator[Finding]:
    """GUI steps fit their widgets: type into text fields, select among listed options,
    check / uncheck checkboxes."""
    for i, page, j, action in ctx.actions():
        elements = {e.id: e for e in page.elements}
        for k, step in enumerate(action.gui):
            el = elements.get(step.element)
            problem = _step_problem(action, step, el) if el is not None else None
            if problem:
                yield finding("widget-contract", ("pages", i, "actions", j, "gui", k),
                              f"action {action.id!r}: {problem}")


def check_unreachable_pages(ctx: Context) -> Iterator[Finding]:
    """Every page can be reached from home by following navigating actions."""
    if ctx.spec.home not in ctx.page_ids:
        return
    for i, page in enumerate(ctx.spec.pages):
        if page.id not in ctx.reachable_pages:
            yield finding("unreachable-page", ("pages", i),
                          f"page {page.id!r} cannot be reached from home {ctx.spec.home!r}")


def _navigates(page: Page, ctx: Context, *, back: bool = False) -> bool:
    return any(
        a.navigate in ctx.page_ids and a.navigate != page.id and (a.is_back or not back)
        for a in page.actions
    )


def check_dead_ends(ctx: Context) -> Iterator[Finding]:
    """Every non-terminal page has an action that navigates to another page."""
    for i, page in enumerate(ctx.spec.pages):
        if not page.terminal and not _navigates(page, ctx):
            yield finding("dead-end-page", ("pages", i),
                          f"page {page.id!r} is not terminal but no action leaves it")


def check_back_actions(ctx: Context) -> Iterator[Finding]:
    """Every non-home, non-terminal page has an ``is_back`` action that navigates."""
    for i, page in enumerate(ctx.spec.pages):
        if page.id != ctx.spec.home and not page.terminal and not _navigates(page, ctx, back=True):
            yield finding("missing-back", ("pages", i),
                          f"page {page.id!r} has no Back action (is_back=True with navigate)")


def check_terminals(ctx: Context) -> Iterator[Finding]:
    """The spec has at least one terminal (success) page."""
    if not ctx.spec.terminals:
        yield finding("no-terminal", ("pages",), "no page is terminal, so no task can end")


def check_tasks(ctx: Context) -> Iterator[Finding]:
    """The spec defines at least one task."""
    if not ctx.spec.tasks:
        yield finding("no-tasks", ("tasks",), "the spec defines no tasks")


# --- dynamic checks (one BFS) ------------------------------------------------------------


def parameter_explosion(ctx: Context) -> Iterator[Finding]:
    """Actions whose parameter combinations alone exceed the budget (Machine would
    enumerate them all up front)."""
    for i, _page, j, action in ctx.actions():
        combos = 1
        for param in action.params:
            combos *= len(param.domain)
        if combos > ctx.budget:
            yield finding("state-budget", ("pages", i, "actions", j),
                          f"action {action.id!r} has {combos} parameter combinations, more "
                          f"than the state budget {ctx.budget}; shrink its parameter domains")


def _incomplete(sg: StateGraph) -> str:
    return f" (the search was cut by the {sg.truncated_by}, so this may be incomplete)" \
        if sg.truncated else ""


def check_state_budget(ctx: Context) -> Iterator[Finding]:
    """The BFS over reachable states finishes within the state budget."""
    sg = ctx.explored()
    if sg.truncated:
        yield finding("state-budget", (), f"more than {ctx.budget} reachable states (stopped "
                      f"at {len(sg.states)}): shrink variable / parameter domains or raise "
                      "--state-budget")


def check_reachable_terminals(ctx: Context) -> Iterator[Finding]:
    """Every (statically reachable) terminal page is on some reachable state."""
    seen = {s.page for s in ctx.explored().states}
    for i, page in enumerate(ctx.spec.pages):
        if page.terminal and page.id in ctx.reachable_pages and page.id not in seen:
            yield finding("unreachable-terminal", ("pages", i),
                          f"terminal page {page.id!r} is on no reachable state: no sequence of "
                          f"enabled actions leads there{_incomplete(ctx.explored())}")


def check_reachable_goals(ctx: Context) -> Iterator[Finding]:
    """Some reachable state (from the task's start) satisfies each task's goal."""
    for t, task in enumerate(ctx.spec.tasks):
        conds = goal_conditions(task)
        if any(True for _ in impossible_conditions(ctx, conds, {})):
            continue  # reported statically
        sg = ctx.explored(task.start)
        if not sg.matching(task.goal.page, conds):
            yield finding("unreachable-goal", ("tasks", t, "goal"),
                          f"no reachable state satisfies the goal of task {task.id!r} "
                          f"(page {task.goal.page!r}){_incomplete(sg)}")


def _enabled_somewhere(ctx: Context, page: Page, action: Action) -> bool:
    sg, combos = ctx.explored(), param_assignments(action)
    return any(
        sg.machine.fire(s, action, params).ok
        for s in sg.states if s.page == page.id for params in combos
    )


def check_dead_actions(ctx: Context) -> Iterator[Finding]:
    """Every action of a reachable page is enabled in some reachable state (only judged
    when the BFS finished)."""
    sg = ctx.explored()
    if sg.truncated:
        return
    used = {label[0] for labels in sg.labels.values() for label in labels}
    pages = {s.page for s in sg.states}
    for i, page, j, action in ctx.actions():
        if action.id in used or page.id not in pages:
            continue
        if not _enabled_somewhere(ctx, page, action):
            yield finding("dead-action", ("pages", i, "actions", j),
                          f"action {action.id!r} on page {page.id!r} is enabled in no "
                          "reachable state")


# --- coherence (webworld.spec.coherence): the content agrees with itself ------------------


def check_coherence(ctx: Context) -> Iterator[Finding]:
    """Columns of their header's kind, facets of the archetype, one value per fact."""
    for found in static_incoherences(ctx.spec):
        yield finding(found.code, found.loc, found.message)


def check_categories(ctx: Context) -> Iterator[Finding]:
    """A result list shown under a category holds that category's items (every reachable
    state; judged on what the BFS reached)."""
    for found in miscategorised_items(ctx.spec, ctx.explored()):
        yield finding(found.code, found.loc, found.message)


# --- the registry and the entry point ----------------------------------------------------

STRUCTURAL_CHECKS: dict[str, Check] = {
    "duplicate-id": check_duplicate_ids,
    "dangling-reference": check_dangling_references,
    "empty-domain": check_empty_domains,
    "bad-initial": check_initial_values,
    "bad-effect": check_effects,
    "impossible-guard": check_impossible_guards,
    "impossible-goal": check_impossible_goals,
    "nondeterministic-actions": check_nondeterminism,
    "widget-contract": check_widget_contracts,
    "unreachable-page": check_unreachable_pages,
    "dead-end-page": check_dead_ends,
    "missing-back": check_back_actions,
    "no-terminal": check_terminals,
    "no-tasks": check_tasks,
    "coherence": check_coherence,
}
DYNAMIC_CHECKS: dict[str, Check] = {
    "state-budget": check_state_budget,
    "unreachable-terminal": check_reachable_terminals,
    "unreachable-goal": check_reachable_goals,
    "dead-action": check_dead_actions,
    "miscategorised-item": check_categories,
}
CHECKS: dict[str, Check] = {**STRUCTURAL_CHECKS, **DYNAMIC_CHECKS}
"""Every check in the order it runs (structural first, then dynamic)."""


def validate(spec: WorldSpec, *, state_budget: int = DEFAULT_STATE_BUDGET,
             graph: StateGraph | None = None) -> Report:
    """Run every check; the BFS runs once and only if the structure is sound (``graph``:
    a BFS of this spec from home, with this budget, that the caller already has)."""
    ctx = Context(spec, state_budget)
    findings = [f for check_fn in STRUCTURAL_CHECKS.values() for f in check_fn(ctx)]
    if any(f.code in BLOCKING_CODES for f in findings):
        return Report(findings, None)
    too_big = list(parameter_explosion(ctx))
    if too_big:
        return Report(findings + too_big, None)
    ctx.states = graph or explore_states(spec, budget=state_budget, machine=Machine(spec))
    findings += [f for check_fn in DYNAMIC_CHECKS.values() for f in check_fn(ctx)]
    return Report(findings, len(ctx.states.states))
