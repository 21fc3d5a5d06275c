"""An AutoWebWorld ``fsm.json`` as a webworld :class:`WorldSpec`.

The meaning followed is that of AutoWebWorld's own path generator (``bfs_action.py``):
preconditions over the current signature, effects applied in order, navigation only when
``is_navigation`` is true, page-scoped signatures (see :mod:`.state`), and interceptors
(permission / consent fields) that must be answered first, which webworld expresses as a
blocking overlay holding the answering controls.

Where the file is open-ended, finite meanings are chosen and reported: ``{ITEM_ANY}``
ranges over named items the page lists, typed text gets a realistic value, ``now()`` is the
date picked, ``append($.list, {...})`` appends the object's name or id, counters get a bound.
An action whose outcome depends on another variable's value (``append`` of ``$.x``) is
split into one variant per value of that variable, guarded by it, so the split is exact.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from webworld.errors import validation_problems
from webworld.interop.autowebworld import naming
from webworld.interop.autowebworld.findings import finding
from webworld.interop.autowebworld.gui import Procedure, Widgets
from webworld.interop.autowebworld.source import (
    Eff,
    Pre,
    Source,
    SrcAction,
    SrcPage,
    ident,
    load_source,
)
from webworld.interop.autowebworld.state import (
    COUNTER_SPAN,
    VarInfo,
    parse_type,
    reset_effect,
    to_variable,
)
from webworld.spec.models import (
    Action,
    Condition,
    ContentBlock,
    Effect,
    Element,
    Goal,
    Page,
    Parameter,
    Provenance,
    Task,
    Variable,
    WorldSpec,
)
from webworld.spec.semantics import check
from webworld.spec.validate import Finding

GENERATOR = "webworld.interop.autowebworld"
ITEMS_PER_LIST = 3
_PLACEHOLDER = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]*)\}$")
_INLINE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_APPEND = re.compile(r"^append\(\s*\$\.([A-Za-z_]\w*)\s*,\s*(\{.*\})\s*\)$", re.S)
_FIELD = re.compile(r'"(name|title|id)"\s*:\s*(\$\.[A-Za-z_]\w*|gen_id\(\)|"[^"]*")')


@dataclass
class ImportResult:
    source: Source
    spec: WorldSpec | None
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return self.spec is not None


def import_fsm(path: str | Path, world_id: str | None = None) -> ImportResult:
    """Read, check and translate one file; errors leave ``spec`` None."""
    source = load_source(path)
    if not source.ok:
        return ImportResult(source, None, list(source.findings))
    try:
        return Translator(source, world_id).run()
    except ValidationError as exc:  # a translation webworld's spec model rejects
        return ImportResult(source, None, [*source.findings, finding(
            "bad-shape", (), f"the translated spec is not valid: {validation_problems(exc, 1)}")])


# --- what one source effect means, before domains are known ----------------------------


@dataclass
class Value:
    """A value an effect stores: a constant, an action parameter, or another variable's
    current value (``copy``: the action is split over that variable's domain)."""

    const: Any = None
    param: str | None = None
    copy: str | None = None


@dataclass
class Plan:
    """One source action, resolved: parameters with domains, guards, effects."""

    action: SrcAction
    items: dict[str, list[str]] = field(default_factory=dict)   # item params -> names
    typed: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # {x} -> param, text
    guards: list[Condition] = field(default_factory=list)
    effects: list[tuple[Eff, str, Value | None]] = field(default_factory=list)  # op, value
    set_value: Any = None


class Translator:
    def __init__(self, source: Source, world_id: str | None) -> None:
        self.src = source
        fallback = Path(source.path).parent.parent.name if source.path else "site"
        wid, self.name, self.theme = naming.world_names(source.app, fallback)
        self.world = world_id or wid
        self.findings: list[Finding] = list(source.findings)
        self.vars: dict[str, VarInfo] = {}
        self.schema_of: dict[str, set[str]] = {}
        self.item_pools: dict[str, list[str]] = {}

    def note(self, code: str, loc: tuple[Any, ...], message: str) -> None:
        self.findings.append(finding(code, loc, message))

    # -- the whole import --------------------------------------------------------------
    def run(self) -> ImportResult:
        self._declare()
        plans = [self._plan(a) for p in self.src.pages for a in p.actions]
        self._check_types()
        if any(f.severity == "error" for f in self.findings):
            return ImportResult(self.src, None, self.findings)
        used = self._used(plans)
        self._propagate_copies(plans)
        variables = {n: to_variable(self.vars[n]) for n in self.vars if n in used}
        pages = [self._page(p, [pl for pl in plans if pl.action.page == p.id], variables)
                 for p in self.src.pages]
        spec = WorldSpec(
            id=self.world, name=self.name, theme=self.theme,
            description=f"{self.name} ({self.theme}), imported from AutoWebWorld's "
                        f"{Path(self.src.path).name}",
            home=_page_id(self.src.initial), variables=list(variables.values()), pages=pages,
            tasks=self._tasks(),
            provenance=Provenance(generator=GENERATOR, theme=self.theme, archetype="autowebworld",
                                  notes=[f"source: {self.src.path}",
                                         f"app: {self.src.app}"]))
        captcha = [a for p in self.src.pages for a in p.actions if "captcha" in a.id.lower()]
        if captcha:
            self.note("captcha-order", captcha[0].loc,
                      f"{len(captcha)} captcha action(s) may fire before the form is complete")
        return ImportResult(self.src, spec, self.findings)

    # -- variables ---------------------------------------------------------------------
    def _declare(self) -> None:
        for page in self.src.pages:
            self.schema_of[page.id] = set(page.schema)
            for name, type_text in page.schema.items():
                info = parse_type(name, type_text)
                known = self.vars.get(name)
                if known is None:
                    info.loc = page.loc + ("signature_schema", name)
                    self.vars[name] = info
                elif known.kind != info.kind or known.nullable != info.nullable:
                    self.note("type-conflict", page.loc + ("signature_schema", name),
                              f"{name!r} is {type_text!r} here but {known.type_text!r} "
                              "earlier; the first type is kept")

    def _var(self, name: str, loc: tuple[Any, ...], type_text: str = "string|null") -> VarInfo:
        if name not in self.vars:
            self.note("undeclared-variable", loc,
                      f"{name!r} is in no page's signature_schema; it starts unset")
            info = parse_type(name, type_text)
            info.loc = loc
            self.vars[name] = info
        return self.vars[name]

    def _check_types(self) -> None:
        for name, info in self.vars.items():
            if info.kind == "object" and info.values:
                self.note("unsupported-type", info.loc,
                          f"{name!r} has type {info.type_text!r}, which has no finite domain")
            if info.kind == "int" and any(isinstance(v, float) and not v.is_integer()
                                          for v in info.values):
                self.note("unsupported-type", info.loc,
                          f"{name!r} takes fractional values {info.values}")

    def _used(self, plans: list[Plan]) -> set[str]:
        used: set[str] = set()
        for plan in plans:
            used |= {g.var for g in plan.guards if g.var}
            used |= {var for _, var, _ in plan.effects}
            used |= {v.copy for _, _, v in plan.effects if v is not None and v.copy}
        for name, info in self.vars.items():
            if name not in used:
                self.note("unused-variable", info.loc,
                          f"nothing reads or writes {name!r}; it is left out")
        for name in used:
            if self.vars[name].kind == "object":
                self.vars[name].kind = "str"
        return used

    # -- one action ----------------------------------------------------------------------
    def _plan(self, action: SrcAction) -> Plan:
        plan = Plan(action)
        for key in _item_params(action):
            plan.items[key] = self._items_for(action, key)
        for pre in action.pres:
            cond = self._condition(plan, pre)
            if cond is not None:
                plan.guards.append(cond)
        for eff in action.effs:
            listy = eff.op == "append_unique" or (eff.value_expr or "").startswith("append(")
            info = self._var(eff.var, eff.loc + ("path",), "array" if listy else "string|null")
            if eff.op == "clear" and info.nullable and info.kind in ("bool", "int"):
                info.add(False if info.kind == "bool" else 0)
            plan.effects.append((eff, eff.var, self._value(plan, eff, info)))
        consts = [v.const for e, _, v in plan.effects if v is not None and e.op == "set"
                  and v.param is None and v.copy is None]
        plan.set_value = consts[0] if len(consts) == 1 else None
        return plan

    def _items_for(self, action: SrcAction, param: str) -> list[str]:
        listed = [v for s in action.steps for v, _ in s.options]
        if listed:  # a dropdown lists them: the items are the file's own
            return listed
        noun = self._noun(action, param)
        if noun not in self.item_pools:
            self.item_pools[noun] = naming.item_names(self.world, self.theme, noun,
                                                      ITEMS_PER_LIST)
            self.note("items-synthesized", action.loc + ("parameters", param),
                      f"{action.params[param]} ({noun}s) ranges over "
                      f"{', '.join(self.item_pools[noun])}")
        return self.item_pools[noun]

    def _noun(self, action: SrcAction, param: str) -> str:
        """``project_id`` -> project; a generic ``item_id`` takes the noun of the variable it
        selects (``selected_product_id`` -> product), else of the page's list."""
        generic = {"item", "id", "any", "selected", "matched", "viewport", "anchor"}
        ws = [w for w in naming.words(param) if w not in generic]
        if ws:
            return ws[-1]
        for eff in action.effs:
            low = eff.var.lower()
            if eff.value_ref == f"{{{param}}}" and ("selected" in low or "matched" in low):
                ws = [w for w in naming.words(eff.var) if w not in generic]
                if ws:
                    return ws[-1]
        lists = [k for k, t in self.src.page(action.page).schema.items()
                 if t.lower().startswith("array")]
        return naming.words(lists[0])[-1].rstrip("s") if lists else "item"

    def _param_value(self, plan: Plan, name: str, loc: tuple[Any, ...]) -> Value | None:
        if name in plan.items:
            return Value(param=name)
        if name in plan.action.params:
            return Value(const=plan.action.params[name])
        self.note("dangling-value-ref", loc,
                  f"action {plan.action.id!r}: {{{name}}} names no parameter (it has "
                  f"{', '.join(sorted(plan.action.params)) or 'none'})")
        return None

    def _value(self, plan: Plan, eff: Eff, info: VarInfo) -> Value | None:
        if eff.op == "clear":
            return None
        if eff.op == "inc":
            step = eff.by if isinstance(eff.by, int) and not isinstance(eff.by, bool) else 1
            info.counter_step = max(info.counter_step, abs(step))
            self.note("bounded-counter", eff.loc,
                      f"counter {eff.var!r} can rise {COUNTER_SPAN} steps of {step} above "
                      "its values")
            return Value(const=step)
        if eff.value_ref is not None:
            return self._ref(plan, eff, info)
        if eff.value_expr is not None:
            return self._expr(plan, eff, info, eff.value_expr, "value_expr")
        m = _PLACEHOLDER.match(eff.value) if isinstance(eff.value, str) else None
        if m and m.group(1) not in plan.action.params:  # "value": "{input_text}"
            return self._expr(plan, eff, info, eff.value, "value")
        if m:
            eff.value_ref = eff.value
            return self._ref(plan, eff, info)
        if isinstance(eff.value, str) and _INLINE.search(eff.value):  # "Campaign {input_text}"
            return self._const(self._template(plan, eff, eff.value), info, eff.op)
        return self._const(eff.value, info, eff.op)

    def _template(self, plan: Plan, eff: Eff, template: str) -> str:
        """A stored text with typed parts: each part gets a realistic text the action types."""
        def fill(match: re.Match[str]) -> str:
            field_name = next((s.selector for s in plan.action.steps
                               if s.op == "type_text" and s.text == match.group(0)), eff.var)
            text = naming.typed_text(self.world, field_name)
            plan.typed[match.group(0)] = (None, text)
            return text

        value = _INLINE.sub(fill, template)
        self.note("text-synthesized", eff.loc + ("value",),
                  f"{template!r} stores typed text; the file gives none, so it is {value!r}")
        return value

    def _const(self, value: Any, info: VarInfo, op: str) -> Value:
        if op == "append_unique" and value is not None:
            info.add_item(_scalar(value))
        else:
            info.add(value)
        return Value(const=value)

    def _ref(self, plan: Plan, eff: Eff, info: VarInfo) -> Value | None:
        ref = eff.value_ref or ""
        if ref.startswith("$."):
            src = ident(ref[2:])
            self._var(src, eff.loc + ("value_ref",))
            return Value(copy=src)
        m = _PLACEHOLDER.match(ref)
        if m is None:
            self.note("dangling-value-ref", eff.loc + ("value_ref",),
                      f"{ref!r} is neither {{param}} nor $.path")
            return None
        value = self._param_value(plan, m.group(1), eff.loc + ("value_ref",))
        if value is None:
            return None
        if isinstance(value.const, str) and _PLACEHOLDER.match(value.const):
            return self._expr(plan, eff, info, value.const, "value_ref")  # {input_text}
        if value.param:
            for item in plan.items[value.param]:
                info.add_item(item) if eff.op == "append_unique" else info.add(item)
            return value
        return self._const(value.const, info, eff.op)

    def _expr(self, plan: Plan, eff: Eff, info: VarInfo, expr: str, key: str) -> Value | None:
        expr = expr.strip()
        loc = eff.loc + (key,)
        m = _PLACEHOLDER.match(expr)
        if m:  # what the user types, e.g. {input_text}
            param = naming.slug(f"{eff.var} text", 40)
            field_name = next((s.selector for s in plan.action.steps
                               if s.op == "type_text" and s.text == expr), eff.var)
            text = naming.typed_text(self.world, field_name)
            plan.typed[expr] = (param, text)
            info.add(text)
            self.note("text-synthesized", loc,
                      f"{expr} stores what is typed; the file gives no text, so it is {text!r}")
            return Value(param=param)
        if expr.startswith('"') and expr.endswith('"'):
            return self._const(json.loads(expr), info, eff.op)
        if expr == "gen_id()":
            value = f"new {naming.words(eff.var)[0]}"
            self.note("expr-approximated", loc, f"gen_id() stores one new id, {value!r}")
            return self._const(value, info, eff.op)
        if expr == "now()":
            p = plan.action.params
            date = f"{int(p.get('year', 2025)):04d}-{int(p.get('month', 1)):02d}-" \
                   f"{int(p.get('day', 1)):02d}"
            self.note("expr-approximated", loc, f"now() stores the date picked, {date}")
            return self._const(date, info, eff.op)
        m = _APPEND.match(expr)
        if m and m.group(1) == eff.var and info.kind == "list":
            return self._append_expr(plan, eff, info, m.group(2))
        self.note("expr-approximated", loc,
                  f"{expr[:60]!r} is not understood; like AutoWebWorld's explorer, the "
                  "effect stores nothing (null)")
        return Value(const=None)

    def _append_expr(self, plan: Plan, eff: Eff, info: VarInfo, obj: str) -> Value:
        fields = dict(_FIELD.findall(obj))
        pick = fields.get("name") or fields.get("title") or fields.get("id") or "gen_id()"
        loc = eff.loc + ("value_expr",)
        eff.op = "append_unique"
        if pick.startswith("$."):
            self.note("expr-approximated", loc,
                      f"the appended object is represented by {pick}")
            self._var(ident(pick[2:]), loc)
            return Value(copy=ident(pick[2:]))
        item = json.loads(pick) if pick.startswith('"') else f"new {naming.words(eff.var)[-1]}"
        self.note("expr-approximated", loc, f"the appended object is represented by {item!r}")
        info.add_item(item)
        return Value(const=item)

    def _condition(self, plan: Plan, pre: Pre) -> Condition | None:
        info = self._var(pre.var, pre.loc + ("path",))
        value = pre.value
        m = _PLACEHOLDER.match(value) if isinstance(value, str) else None
        if m and m.group(1) in plan.action.params and m.group(1) not in plan.items:
            value = plan.action.params[m.group(1)]
        if pre.cond in ("not_null", "exists"):
            return Condition(var=pre.var, op="neq", value=[] if info.kind == "list" else None)
        if pre.cond in ("in", "oneof"):
            values = value if isinstance(value, list) else [value]
            info.add(values)
            return Condition(var=pre.var, op="in", value=[_scalar(v) for v in values])
        if pre.cond == "length_gt":
            n = value if isinstance(value, int) and not isinstance(value, bool) else 0
            return Condition(var=pre.var, op="length_gt", value=n)
        if info.kind == "list" and value is None:
            return Condition(var=pre.var, op=pre.cond, value=[])  # null and [] are one state
        info.add(value)
        return Condition(var=pre.var, op=pre.cond, value=_scalar(value, allow_none=True))

    # -- splitting on copied values -----------------------------------------------------
    def _propagate_copies(self, plans: list[Plan]) -> None:
        for _ in range(3):  # copies of copies settle in a few rounds
            for plan in plans:
                for eff, var, value in plan.effects:
                    if value is None or value.copy is None:
                        continue
                    for v in self._domain(value.copy):
                        if v is None:
                            continue
                        if eff.op == "append_unique":
                            self.vars[var].add_item(_scalar(v))
                        else:
                            self.vars[var].add(v)

    def _domain(self, name: str) -> list[Any]:
        info = self.vars[name]
        values = list(info.values)
        if info.nullable or info.default is None:
            values.append(None)
        elif not any(v == info.default and type(v) is type(info.default) for v in values):
            values.insert(0, info.default)
        return values

    def _variants(self, plan: Plan) -> list[tuple[list[Condition], list[Effect], dict[str, list]]]:
        """(guards, effects, params) of each variant; one unless a value is copied."""
        copies = sorted({v.copy for _, _, v in plan.effects if v is not None and v.copy})
        combos: list[dict[str, Any]] = [{}]
        for name in copies:
            combos = [{**c, name: v} for c in combos for v in self._domain(name)]
        out = []
        for combo in combos:
            if not all(check(g, combo[g.var]) for g in plan.guards if g.var in combo):
                continue  # the action's own guards rule this value out
            guards = list(plan.guards) + [Condition(var=n, op="eq", value=v)
                                          for n, v in combo.items()]
            effects: list[Effect] = []
            params: dict[str, list] = {}
            for eff, var, value in plan.effects:
                made = self._effect(eff, var, value, combo, params, plan, guards)
                if made is not None:
                    effects.append(made)
            out.append((guards, effects, params))
        return out

    def _effect(self, eff: Eff, var: str, value: Value | None, combo: dict[str, Any],
                params: dict[str, list], plan: Plan, guards: list[Condition]) -> Effect | None:
        info = self.vars[var]
        if eff.op == "clear":
            return self._clear(eff, info, guards)
        if eff.op == "inc":
            return Effect(op="inc", var=var, value=value.const if value else 1)
        if value is None:
            return Effect(op="set", var=var, value=None) if info.kind != "list" else \
                Effect(op="clear", var=var)
        if value.param:
            typed = {p: t for p, t in plan.typed.values() if p}
            params[value.param] = [typed[value.param]] if value.param in typed else \
                list(plan.items.get(value.param) or [])
            op = "append" if eff.op == "append_unique" else "set_param"
            return Effect(op=op, var=var, param=value.param)
        const = combo[value.copy] if value.copy else value.const
        if eff.op == "append_unique":
            return Effect(op="append", var=var, value=_scalar(const)) if const is not None \
                else None
        if info.kind == "list":
            return Effect(op="clear", var=var)  # set to [] / null: the empty list
        return Effect(op="set", var=var, value=_scalar(const, allow_none=True))

    def _clear(self, eff: Eff, info: VarInfo, guards: list[Condition]) -> Effect:
        """AutoWebWorld's ``clear`` depends on the current value: a list empties, a string
        or null becomes null, a boolean False, a number 0."""
        if info.kind in ("list", "str") or (info.kind == "int" and not info.nullable):
            return Effect(op="clear", var=info.name) if info.kind != "int" else \
                Effect(op="set", var=info.name, value=0)
        if info.kind == "bool" and not info.nullable:
            return Effect(op="set", var=info.name, value=False)
        pinned = [g.value for g in guards if g.var == info.name and g.op == "eq"]
        if pinned and pinned[0] is None:
            return Effect(op="clear", var=info.name)
        if not pinned:
            self.note("clear-approximated", eff.loc,
                      f"clear of {info.name!r} gives null when it is null and "
                      f"{'false' if info.kind == 'bool' else '0'} otherwise; the action does "
                      "not pin it, so it becomes the latter")
        value = False if info.kind == "bool" else 0
        return Effect(op="set", var=info.name, value=value)

    # -- pages -------------------------------------------------------------------------
    def _live(self, page: SrcPage) -> set[str]:
        written = {e.var for a in page.actions for e in a.effs}
        return set(page.schema) | written

    def _resets(self, action: SrcAction, variables: dict[str, Variable]) -> list[Effect]:
        if not action.navigates:
            return []
        source, target = self.src.page(action.page), self.schema_of.get(action.to, set())
        return [reset_effect(self.vars[n], variables[n])
                for n in sorted(self._live(source) - target) if n in variables]

    def _page(self, page: SrcPage, plans: list[Plan], variables: dict[str, Variable]) -> Page:
        widgets = Widgets()
        actions: list[Action] = []
        for plan in plans:
            actions.extend(self._actions(plan, widgets, variables))
        elements = list(widgets.elements.values())
        elements = self._overlays(page, actions, elements, variables)
        pid = _page_id(page.id)
        terminal = page.id in self.src.terminals
        return Page(id=pid, title=naming.humanize(page.id), role=self._role(page, terminal),
                    terminal=terminal, elements=elements, actions=actions,
                    content=self._content(page, elements, terminal))

    def _actions(self, plan: Plan, widgets: Widgets, variables: dict[str, Variable]
                 ) -> list[Action]:
        a = plan.action
        listing = self._listing_param(plan)
        gui = Procedure(a, widgets, world=self.world, items=plan.items, listing_param=listing,
                        typed=plan.typed, set_value=plan.set_value).translate()
        self.findings.extend(gui.findings)
        resets = self._resets(a, variables)
        variants = self._variants(plan)
        out = []
        for k, (guards, effects, params) in enumerate(variants):
            params.update(self._step_params(plan, gui.steps, listing))
            out.append(Action(
                id=_action_id(a.id) + (f"_{k + 1}" if len(variants) > 1 else ""),
                label=naming.humanize(" ".join(w for w in naming.words(a.id) if w != "act")),
                gui=gui.steps, guards=guards, effects=effects + resets,
                params=[Parameter(name=n, domain=d) for n, d in sorted(params.items())],
                navigate=_page_id(a.to) if a.navigates else None, is_back=_is_back(a)))
        return out

    @staticmethod
    def _step_params(plan: Plan, steps: list, listing: str | None) -> dict[str, list]:
        """The domains of the parameters the GUI steps bind: typed text, items."""
        bound = {name for s in steps for name in re.findall(r"\{(\w+)\}", s.value or "")}
        params: dict[str, list] = {p: [text] for p, text in plan.typed.values()
                                   if p and p in bound}
        for name in bound | ({listing} if listing else set()):
            if name in plan.items:
                params.setdefault(name, list(plan.items[name]))
        return params

    def _listing_param(self, plan: Plan) -> str | None:
        """The item parameter a click chooses: stored by an effect, in an action that types
        nothing (a typed item is a search)."""
        if any(s.op == "type_text" for s in plan.action.steps):
            return None
        for _, _, value in plan.effects:
            if value is not None and value.param in plan.items:
                return value.param
        return None

    def _overlays(self, page: SrcPage, actions: list[Action], elements: list[Element],
                  variables: dict[str, Variable]) -> list[Element]:
        """Consent and permission prompts: the controls of the actions that answer them sit
        in an overlay shown while the answer is unset (blocking for interceptors)."""
        out = list(elements)
        by_id = {e.id: e for e in out}
        for name in page.schema:
            info = self.vars[name]
            if name not in variables or not info.nullable or info.kind != "bool":
                continue
            if not (info.interceptor or "cookie" in name.lower()):
                continue
            answering = [act for act in actions
                         if any(e.var == name and e.op == "set" for e in act.effects)]
            if not answering:
                continue
            kind = "cookie_banner" if "cookie" in name.lower() else "permission_prompt"
            oid = naming.slug(f"{name} prompt", 60)
            label = "We use cookies" if kind == "cookie_banner" else \
                f"Allow {naming.humanize(name.replace('permission', '').replace('granted', ''))}?"
            out.insert(0, Element(id=oid, kind=kind, label=label, blocking=info.interceptor,
                                  visible_when=[Condition(var=name, op="eq", value=None)]))
            for act in answering:
                for step in act.gui:
                    el = by_id.get(step.element)
                    if el is not None and el.parent is None:
                        el.parent = oid
        return out

    def _role(self, page: SrcPage, terminal: bool) -> str:
        if terminal:
            return "confirmation"
        if page.id == self.src.initial:
            return "home"
        if any(s.op == "type_text" for a in page.actions for s in a.steps):
            return "form"
        if any(t.lower().startswith("array") for t in page.schema.values()):
            return "results"
        return "page"

    def _content(self, page: SrcPage, elements: list[Element], terminal: bool
                 ) -> list[ContentBlock]:
        if terminal:
            return [ContentBlock(kind="heading", title=naming.humanize(page.id)),
                    ContentBlock(kind="text", text="Done! Your request went through.")]
        blocks = []
        if page.id == self.src.initial:
            blocks.append(ContentBlock(kind="text", title=f"Welcome to {self.name}",
                                       text=f"{self.name}: {self.theme}."))
        for el in elements:
            if el.kind == "link" and el.options:
                blocks.append(ContentBlock(kind="cards", title=el.label,
                                           items=[{"title": o} for o in el.options]))
        return blocks

    def _tasks(self) -> list[Task]:
        return [Task(id=naming.slug(t.lower(), 60), goal=Goal(page=_page_id(t)),
                     intents=naming.intents(t, self.name)) for t in self.src.terminals]


def _is_back(action: SrcAction) -> bool:
    """A navigating action that goes back (by its id or its controls' names)."""
    words = naming.words(action.id + " " + " ".join(s.selector for s in action.steps))
    return action.navigates and any(w in words for w in ("back", "home", "logo", "breadcrumb",
                                                          "close", "cancel"))


def _item_params(action: SrcAction) -> list[str]:
    """Parameters such as ``{"item_id": "{ITEM_ANY}"}`` that the action uses: stored by an
    effect, or typed into a search box (whose text names no parameter of its own)."""
    anys = [k for k, v in action.params.items()
            if isinstance(v, str) and (m := _PLACEHOLDER.match(v)) and
            m.group(1).upper().endswith("ANY")]
    refs = {e.value_ref or "" for e in action.effs} | {s.text or "" for s in action.steps}
    used = [k for k in anys if f"{{{k}}}" in refs]
    typed_free = any(s.op == "type_text" and (m := _PLACEHOLDER.match(s.text or "")) and
                     m.group(1) not in action.params for s in action.steps)
    return used or (anys[:1] if typed_free and len(anys) == 1 else [])


def _page_id(pid: str) -> str:
    return naming.slug(pid.lower(), 80)


def _action_id(aid: str) -> str:
    return naming.slug(aid.lower(), 76)


def _scalar(value: Any, allow_none: bool = False) -> Any:
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return json.dumps(value, sort_keys=True)

