"""The meaning of a spec: guards, effects and transitions, compiled once for speed.

One module decides what an action does, so the explorer, the validator and (later) the
server that owns each session's state can never disagree.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from webworld.spec.models import (
    Action,
    Condition,
    Effect,
    Element,
    Page,
    Scalar,
    Variable,
    WorldSpec,
)

Value = Scalar | tuple[Scalar, ...] | None
Params = tuple[tuple[str, Scalar], ...]
"""Parameter bindings of one action firing, sorted by parameter name."""


class State(NamedTuple):
    """A node of the FSM: the page and the signature (variable values in spec order)."""

    page: str
    values: tuple[Value, ...]


@dataclass(frozen=True)
class Transition:
    action: str
    params: Params
    target: State


# --- domains --------------------------------------------------------------------------


def empty_value(var: Variable) -> Value:
    """What ``clear`` sets: False, 0 (or min), unset, or the empty list."""
    if var.type == "bool":
        return False
    if var.type == "int":
        lo, hi = var.min or 0, var.max or 0
        return 0 if lo <= 0 <= hi else lo
    if var.type == "list":
        return ()
    return None


def initial_value(var: Variable) -> Value:
    if var.initial is None:
        return empty_value(var)
    if var.type == "list" and isinstance(var.initial, list):
        return tuple(var.initial)
    return var.initial  # type: ignore[return-value]


def same_value(a: object, b: object) -> bool:
    """Type-strict equality: True is not 1, "1" is not 1."""
    if isinstance(a, list):
        a = tuple(a)
    if isinstance(b, list):
        b = tuple(b)
    return type(a) is type(b) and a == b


def in_domain(var: Variable, value: object) -> bool:
    if var.type == "bool":
        return isinstance(value, bool)
    if var.type == "int":
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            and (var.min is None or value >= var.min)
            and (var.max is None or value <= var.max)
        )
    if var.type == "enum":
        return value is None or any(same_value(value, v) for v in var.values)
    items = tuple(value) if isinstance(value, list) else value
    return (
        isinstance(items, tuple)
        and len(set(items)) == len(items)
        and (var.max_length is None or len(items) <= var.max_length)
        and all(any(same_value(i, v) for v in var.values) for i in items)
    )


def domain_size(var: Variable) -> int:
    """How many values a variable can take (the factor it adds to the state space)."""
    if var.type == "bool":
        return 2
    if var.type == "int":
        if var.min is None or var.max is None:
            return 0
        return max(0, var.max - var.min + 1)
    if var.type == "enum":
        return len(var.values) + 1
    n, cap = len(var.values), var.max_length if var.max_length is not None else len(var.values)
    return sum(_permutations(n, k) for k in range(min(n, cap) + 1))


def _permutations(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def is_set(value: object) -> bool:
    """``exists``: a value that is not unset, empty or False."""
    return value is not None and value is not False and value != "" and value != ()


# --- conditions and effects -------------------------------------------------------------


def check(cond: Condition, operand: object) -> bool:
    """Evaluate one condition on the value of its variable or parameter."""
    op, ref = cond.op, cond.value
    if op == "exists":
        return is_set(operand)
    if op == "eq":
        return same_value(operand, ref)
    if op == "neq":
        return not same_value(operand, ref)
    if op == "in":
        return isinstance(ref, list) and any(same_value(operand, r) for r in ref)
    if op == "length_gt":
        return isinstance(operand, (tuple, str)) and isinstance(ref, int) and len(operand) > ref
    if not _is_number(operand) or not _is_number(ref):
        return False
    if op == "gt":
        return operand > ref  # type: ignore[operator]
    if op == "gte":
        return operand >= ref  # type: ignore[operator]
    if op == "lt":
        return operand < ref  # type: ignore[operator]
    return operand <= ref  # type: ignore[operator]


def _is_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def apply_effect(var: Variable, effect: Effect, current: Value, params: dict[str, Scalar]) -> Value:
    """The variable's next value; the result may fall outside the domain (caller checks)."""
    if effect.op == "set":
        return effect.value
    if effect.op == "set_param":
        return params.get(effect.param or "")
    if effect.op == "inc":
        step = effect.value if _is_number(effect.value) else 1
        return current + step if _is_number(current) else None  # type: ignore[operator]
    if effect.op == "clear":
        return empty_value(var)
    item = params.get(effect.param) if effect.param else effect.value
    items = current if isinstance(current, tuple) else ()
    return items if any(same_value(item, i) for i in items) else items + (item,)


# --- the compiled machine ----------------------------------------------------------------


@dataclass(frozen=True)
class Reach:
    """When a person can operate an action: every ``shown`` condition holds (its controls
    and their containers are displayed) and no overlay in ``blockers`` is open (each
    entry: the conditions under which a blocking overlay not containing the trigger shows)."""

    shown: tuple[Condition, ...]
    blockers: tuple[tuple[Condition, ...], ...]


def reach_of(page: Page, action: Action) -> Reach | None:
    elements = {e.id: e for e in page.elements}

    def chain(element_id: str | None) -> list[Element]:
        out: list[Element] = []
        while element_id in elements and elements[element_id] not in out:
            out.append(elements[element_id])
            element_id = elements[element_id].parent
        return out

    controls = {s.element for s in action.gui} | {s.target for s in action.gui if s.target}
    shown = tuple(c for cid in sorted(controls) for e in chain(cid) for c in e.visible_when)
    trigger_chain = {e.id for e in chain(action.trigger.element)}
    blockers = tuple(
        tuple(c for e in chain(b.id) for c in e.visible_when)
        for b in page.elements if b.blocking and b.id not in trigger_chain
    )
    return Reach(shown, blockers) if shown or blockers else None


def param_assignments(action: Action) -> list[Params]:
    """Every combination of parameter values, in a deterministic order."""
    params = sorted(action.params, key=lambda p: p.name)
    combos = itertools.product(*(p.domain for p in params))
    return [tuple(zip((p.name for p in params), combo)) for combo in combos]


@dataclass
class StepResult:
    """Outcome of trying one action in one state. A refused action is data, not an error."""

    ok: bool
    state: State
    message: str = ""


_DYNAMIC = object()
"""An effect whose value depends on the state or the parameters."""


class _ParamFit(NamedTuple):
    """A ``set_param``: the values of its parameter that fit the variable."""

    param: str
    fits: dict[tuple[type, object], object]


class Machine:
    """Executable form of a :class:`WorldSpec`. Assumes the spec passed structural checks."""

    def __init__(self, spec: WorldSpec) -> None:
        self.spec = spec
        self.variables = list(spec.variables)
        self.index = {v.name: i for i, v in enumerate(self.variables)}
        self.actions = {a.id: (p.id, a) for p in spec.pages for a in p.actions}
        self._firings = {
            p.id: [(a, param_assignments(a)) for a in p.actions] for p in spec.pages
        }
        self._reach = {a.id: reach_of(p, a) for p in spec.pages for a in p.actions}
        self._plans = {a.id: self._plan(a) for p in spec.pages for a in p.actions}

    def _plan(self, action: Action) -> list[tuple[int, Effect, object]] | None:
        """The action's effects as (variable index, effect, value): the value where it is
        the same in every state and inside the domain (``clear``, a ``set`` that fits),
        else ``_DYNAMIC``. None when an effect can never apply (an unknown variable, a
        value outside the domain): what firing would find, found once."""
        plan: list[tuple[int, Effect, object]] = []
        for effect in action.effects:
            i = self.index.get(effect.var)
            if i is None:
                return None
            var = self.variables[i]
            value: object = _DYNAMIC
            domain = next((p.domain for p in action.params if p.name == effect.param), None)
            if effect.op == "set_param" and domain is not None:
                # which parameter values fit the variable, decided once (type-strict keys)
                value = _ParamFit(effect.param or "", {
                    (type(v), v): v for v in domain if in_domain(var, v)})
            elif effect.op in ("clear", "set"):
                value = apply_effect(var, effect, None, {})
                if not in_domain(var, value):
                    return None
                value = tuple(value) if isinstance(value, list) else value
            plan.append((i, effect, value))
        return plan

    def initial_state(self, page: str | None = None) -> State:
        return State(page or self.spec.home, tuple(initial_value(v) for v in self.variables))

    def value(self, state: State, name: str) -> Value:
        return state.values[self.index[name]]

    def holds(self, cond: Condition, state: State, params: dict[str, Scalar] | None = None) -> bool:
        if cond.param is not None:
            return check(cond, (params or {}).get(cond.param))
        if cond.var not in self.index:
            return False
        return check(cond, state.values[self.index[cond.var]])

    def reachable(self, state: State, action: Action) -> bool:
        """Can a person operate the action's controls: shown, and not behind an overlay?"""
        reach = self._reach.get(action.id)
        if reach is None:
            return True
        if not all(self.holds(c, state) for c in reach.shown):
            return False
        return not any(all(self.holds(c, state) for c in overlay) for overlay in reach.blockers)

    def fire(self, state: State, action: Action, params: Params) -> StepResult:
        """Apply one action with bound parameters; guards and domains decide if it may."""
        if not self.reachable(state, action):
            return StepResult(False, state, "That control is not available right now.")
        bound = dict(params)
        failed = self._failed_guard(state, action, bound)
        if failed is not None:
            return StepResult(False, state, failed.message or action.error_message)
        target = self._effects(state, action, bound)
        if target is None:
            return StepResult(False, state, action.error_message)
        return StepResult(True, target)

    def _failed_guard(self, state: State, action: Action, bound: dict[str, Scalar]
                      ) -> Condition | None:
        for guard in action.guards:
            if not self.holds(guard, state, bound):
                return guard
        return None

    def _effects(self, state: State, action: Action, bound: dict[str, Scalar]) -> State | None:
        """The state after the effects, or None when one leaves its variable's domain."""
        plan = self._plans.get(action.id)
        if plan is None:
            return None
        values = list(state.values)
        for i, effect, value in plan:
            if isinstance(value, _ParamFit):
                given = bound.get(value.param)
                value = value.fits.get((type(given), given), _DYNAMIC)
                if value is _DYNAMIC:
                    return None
            elif value is _DYNAMIC:
                value = apply_effect(self.variables[i], effect, values[i], bound)
                if not in_domain(self.variables[i], value):
                    return None
                value = tuple(value) if isinstance(value, list) else value
            values[i] = value
        return State(action.navigate or state.page, tuple(values))

    def step(self, state: State, action_id: str, params: dict[str, Scalar]) -> StepResult:
        """Fire an action by id, as a server does for a request; unknown input is refused."""
        found = self.actions.get(action_id)
        if found is None or found[0] != state.page:
            return StepResult(False, state, f"No action {action_id!r} on page {state.page!r}.")
        action = found[1]
        names = {p.name: p for p in action.params}
        if set(params) != set(names):
            return StepResult(False, state, f"Action {action_id!r} takes {sorted(names)}.")
        for name, value in params.items():
            if not any(same_value(value, d) for d in names[name].domain):
                return StepResult(False, state, f"{value!r} is not a valid {name}.")
        return self.fire(state, action, tuple(sorted(params.items())))

    def transitions(self, state: State) -> Iterator[Transition]:
        """Every enabled firing from ``state`` that changes it (self-loops are dropped)."""
        for action, assignments in self._firings.get(state.page, ()):
            if not self.reachable(state, action):
                continue
            for params in assignments:
                bound = dict(params)
                if self._failed_guard(state, action, bound) is not None:
                    continue
                target = self._effects(state, action, bound)
                if target is not None and target != state:
                    yield Transition(action.id, params, target)

    def describe(self, state: State) -> dict[str, object]:
        """JSON-friendly view of a state: ``{"page": ..., "vars": {...}}``."""
        return {
            "page": state.page,
            "vars": {
                v.name: list(val) if isinstance(val, tuple) else val
                for v, val in zip(self.variables, state.values)
            },
        }

    def satisfies(self, state: State, page: str, conditions: list[Condition]) -> bool:
        return state.page == page and all(self.holds(c, state) for c in conditions)
