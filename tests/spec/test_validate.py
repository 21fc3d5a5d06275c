"""The deterministic validator: every finding code, its JSON path, and near misses."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from webworld.spec.models import (
    Action,
    Condition,
    Effect,
    Element,
    GuiStep,
    Page,
    Parameter,
    Variable,
    WorldSpec,
)
from webworld.spec.validate import (
    CHECK_CODES,
    CHECKS,
    DYNAMIC_CHECKS,
    Finding,
    Report,
    validate,
)

Mutation = Callable[[WorldSpec], object]
C, E, V = Condition, Effect, Variable


def act(spec: WorldSpec, action_id: str) -> Action:
    return next(a for p in spec.pages for a in p.actions if a.id == action_id)


def click(action_id: str, element: str, **kw: object) -> Action:
    return Action(id=action_id, label=action_id, gui=[GuiStep(op="click", element=element)], **kw)


def add_var(spec: WorldSpec, var: Variable) -> WorldSpec:
    spec.variables.append(var)
    return spec


def vip_guard(spec: WorldSpec, action_id: str) -> None:
    """A bool ``vip`` that nothing sets, required by ``action_id``."""
    add_var(spec, V(name="vip", type="bool"))
    act(spec, action_id).guards.append(C(var="vip", op="eq", value=True))


def set_guards(action_id: str, *guards: Condition) -> Mutation:
    return lambda s: setattr(act(s, action_id), "guards", list(guards))


def set_effects(action_id: str, *effects: Effect) -> Mutation:
    return lambda s: setattr(act(s, action_id), "effects", list(effects))


ABOUT = Page(id="about", title="About", elements=[Element(id="back", kind="link", label="Back")],
             actions=[click("about_back", "back", is_back=True, navigate="home")])
INT_N = V(name="n", type="int", min=0, max=3)

# (case id, mutation, expected code, expected JSON path)
TRIGGERS: list[tuple[str, Mutation, str, str]] = [
    # duplicate-id
    ("dup-page", lambda s: s.pages.append(Page(id="done", title="x", terminal=True)),
     "duplicate-id", "$.pages[4].id"),
    ("dup-var", lambda s: add_var(s, V(name="query", type="bool")),
     "duplicate-id", "$.variables[2].name"),
    ("dup-task", lambda s: s.tasks.append(s.tasks[0].model_copy()), "duplicate-id", "$.tasks[1].id"),
    ("dup-action", lambda s: setattr(act(s, "cart_back"), "id", "results_back"),
     "duplicate-id", "$.pages[2].actions[1].id"),
    ("dup-element", lambda s: s.pages[0].elements.append(Element(id="go", kind="link", label="G")),
     "duplicate-id", "$.pages[0].elements[3].id"),
    ("dup-param", lambda s: act(s, "search").params.append(Parameter(name="q", domain=["x"])),
     "duplicate-id", "$.pages[0].actions[0].params[1].name"),
    # dangling-reference
    ("bad-home", lambda s: setattr(s, "home", "start"), "dangling-reference", "$.home"),
    ("navigate", lambda s: setattr(act(s, "open_cart"), "navigate", "basket"),
     "dangling-reference", "$.pages[0].actions[1].navigate"),
    ("gui-element", lambda s: setattr(act(s, "checkout").gui[0], "element", "pay"),
     "dangling-reference", "$.pages[2].actions[0].gui[0].element"),
    ("drag-target", lambda s: setattr(act(s, "checkout").gui[0], "target", "bin"),
     "dangling-reference", "$.pages[2].actions[0].gui[0].target"),
    ("gui-param", lambda s: setattr(act(s, "search").gui[0], "value", "{query}"),
     "dangling-reference", "$.pages[0].actions[0].gui[0].value"),
    ("guard-var", lambda s: setattr(act(s, "add_to_cart").guards[0], "var", "qry"),
     "dangling-reference", "$.pages[1].actions[0].guards[0].var"),
    ("guard-param", lambda s: act(s, "add_to_cart").guards.append(C(param="size", op="exists")),
     "dangling-reference", "$.pages[1].actions[0].guards[1].param"),
    ("effect-param", lambda s: setattr(act(s, "search").effects[0], "param", "qq"),
     "dangling-reference", "$.pages[0].actions[0].effects[0].param"),
    ("parent", lambda s: setattr(s.pages[1].elements[1], "parent", "menu"),
     "dangling-reference", "$.pages[1].elements[1].parent"),
    ("visible-when", lambda s: s.pages[1].elements[1].visible_when.append(C(var="vip", op="exists")),
     "dangling-reference", "$.pages[1].elements[1].visible_when[0].var"),
    ("goal-page", lambda s: setattr(s.tasks[0].goal, "page", "finished"),
     "dangling-reference", "$.tasks[0].goal.page"),
    ("goal-var", lambda s: setattr(s.tasks[0].goal.conditions[0], "var", "basket"),
     "dangling-reference", "$.tasks[0].goal.conditions[0].var"),
    ("goal-param", lambda s: s.tasks[0].goal.conditions.append(C(param="q", op="exists")),
     "dangling-reference", "$.tasks[0].goal.conditions[1].param"),
    ("start", lambda s: setattr(s.tasks[0], "start", "landing"),
     "dangling-reference", "$.tasks[0].start"),
    ("slot", lambda s: s.tasks[0].slots.append("colour"), "dangling-reference", "$.tasks[0].slots[1]"),
    ("binding", lambda s: setattr(s.tasks[0], "bindings", {"colour": "red"}),
     "dangling-reference", "$.tasks[0].bindings.colour"),
    # empty-domain
    ("enum-empty", lambda s: setattr(s.variables[0], "values", []), "empty-domain", "$.variables[0]"),
    ("list-empty", lambda s: add_var(s, V(name="tags", type="list")), "empty-domain", "$.variables[2]"),
    ("int-no-max", lambda s: add_var(s, V(name="n", type="int", min=0)),
     "empty-domain", "$.variables[2]"),
    ("int-min-gt-max", lambda s: add_var(s, V(name="n", type="int", min=3, max=1)),
     "empty-domain", "$.variables[2]"),
    ("param-empty", lambda s: setattr(act(s, "add_to_cart").params[0], "domain", []),
     "empty-domain", "$.pages[1].actions[0].params[0]"),
    ("select-no-options", lambda s: setattr(s.pages[1].elements[0], "options", []),
     "empty-domain", "$.pages[1].elements[0]"),
    # bad-initial
    ("initial-enum", lambda s: setattr(s.variables[0], "initial", "boots"),
     "bad-initial", "$.variables[0].initial"),
    ("initial-list", lambda s: setattr(s.variables[1], "initial", ["hats", "hats"]),
     "bad-initial", "$.variables[1].initial"),
    # bad-effect
    ("effect-undeclared", set_effects("checkout", E(op="clear", var="basket")),
     "bad-effect", "$.pages[2].actions[0].effects[0]"),
    ("set-outside", set_effects("checkout", E(op="set", var="query", value="boots")),
     "bad-effect", "$.pages[2].actions[0].effects[0]"),
    ("set-none-bool", lambda s: add_var(set_effects("checkout", E(op="set", var="b"))(s) or s,
                                        V(name="b", type="bool")),
     "bad-effect", "$.pages[2].actions[0].effects[0]"),
    ("inc-enum", set_effects("checkout", E(op="set", var="query", value="hats"),
                              E(op="inc", var="query")),
     "bad-effect", "$.pages[2].actions[0].effects[1]"),
    ("append-enum", set_effects("checkout", E(op="append", var="query", value="hats")),
     "bad-effect", "$.pages[2].actions[0].effects[0]"),
    ("append-item", set_effects("checkout", E(op="append", var="cart", value="socks")),
     "bad-effect", "$.pages[2].actions[0].effects[0]"),
    ("set-param-domain", lambda s: act(s, "search").params[0].domain.append("socks"),
     "bad-effect", "$.pages[0].actions[0].effects[0]"),
    # impossible-guard
    ("eq-outside", set_guards("checkout", C(var="query", op="eq", value="boots")),
     "impossible-guard", "$.pages[2].actions[0].guards[0]"),
    ("in-outside", set_guards("checkout", C(var="query", op="in", value=["boots", "socks"])),
     "impossible-guard", "$.pages[2].actions[0].guards[0]"),
    ("gt-enum", set_guards("checkout", C(var="query", op="gt", value=0)),
     "impossible-guard", "$.pages[2].actions[0].guards[0]"),
    ("gt-bound", lambda s: set_guards("checkout", C(var="n", op="gt", value=3))(add_var(s, INT_N)),
     "impossible-guard", "$.pages[2].actions[0].guards[0]"),
    ("eq-type-strict", lambda s: set_guards("checkout", C(var="b", op="eq", value=1))(
        add_var(s, V(name="b", type="bool"))), "impossible-guard", "$.pages[2].actions[0].guards[0]"),
    ("length-max", set_guards("checkout", C(var="cart", op="length_gt", value=2)),
     "impossible-guard", "$.pages[2].actions[0].guards[0]"),
    ("length-enum", set_guards("checkout", C(var="query", op="length_gt", value=40)),
     "impossible-guard", "$.pages[2].actions[0].guards[0]"),
    ("contradiction", set_guards("checkout", C(var="query", op="eq", value="shoes"),
                                 C(var="cart", op="exists"), C(var="query", op="eq", value="hats")),
     "impossible-guard", "$.pages[2].actions[0].guards[2]"),
    ("range-contradiction", lambda s: set_guards(
        "checkout", C(var="n", op="gt", value=2), C(var="n", op="lt", value=2))(add_var(s, INT_N)),
     "impossible-guard", "$.pages[2].actions[0].guards[1]"),
    ("param-guard", lambda s: act(s, "add_to_cart").guards.append(
        C(param="item", op="eq", value="socks")), "impossible-guard",
     "$.pages[1].actions[0].guards[1]"),
    # unreachable-goal
    ("goal-static", lambda s: s.tasks[0].goal.conditions.append(
        C(var="query", op="eq", value="boots")), "unreachable-goal", "$.tasks[0].goal.conditions[1]"),
    ("goal-contradiction", lambda s: s.tasks[0].goal.conditions.append(
        C(var="cart", op="eq", value=[])), "unreachable-goal", "$.tasks[0].goal.conditions[1]"),
    ("goal-binding", lambda s: setattr(s.tasks[0], "bindings", {"query": "boots"}),
     "unreachable-goal", "$.tasks[0].bindings.query"),
    ("goal-dynamic", lambda s: s.tasks[0].goal.conditions.append(C(var="vip", op="exists"))
     or add_var(s, V(name="vip", type="bool")), "unreachable-goal", "$.tasks[0].goal"),
    ("goal-start", lambda s: setattr(s.tasks[0], "start", "done"),
     "unreachable-goal", "$.tasks[0].goal"),
    # nondeterministic-actions
    ("same-trigger", lambda s: s.pages[1].actions.append(
        click("add_again", "add", guards=[C(var="query", op="exists")])),
     "nondeterministic-actions", "$.pages[1].actions[2]"),
    # widget-contract
    ("select-literal", lambda s: setattr(act(s, "add_to_cart").gui[0], "value", "socks"),
     "widget-contract", "$.pages[1].actions[0].gui[0]"),
    ("select-param", lambda s: setattr(s.pages[1].elements[0], "options", ["shoes"]),
     "widget-contract", "$.pages[1].actions[0].gui[0]"),
    ("type-button", lambda s: setattr(act(s, "search").gui[0], "element", "go"),
     "widget-contract", "$.pages[0].actions[0].gui[0]"),
    ("select-button", lambda s: setattr(act(s, "add_to_cart").gui[0], "element", "add"),
     "widget-contract", "$.pages[1].actions[0].gui[0]"),
    ("check-button", lambda s: setattr(act(s, "checkout").gui[0], "op", "check"),
     "widget-contract", "$.pages[2].actions[0].gui[0]"),
    ("type-no-value", lambda s: setattr(act(s, "search").gui[0], "value", None),
     "widget-contract", "$.pages[0].actions[0].gui[0]"),
    # page graph
    ("unreachable-page", lambda s: s.pages.append(ABOUT.model_copy(deep=True)),
     "unreachable-page", "$.pages[4]"),
    ("dead-end", lambda s: setattr(s.pages[2], "actions", []), "dead-end-page", "$.pages[2]"),
    ("dead-end-home", lambda s: setattr(s.pages[0], "actions", []), "dead-end-page", "$.pages[0]"),
    ("missing-back", lambda s: setattr(act(s, "cart_back"), "is_back", False),
     "missing-back", "$.pages[2]"),
    ("back-stays", lambda s: setattr(act(s, "cart_back"), "navigate", None),
     "missing-back", "$.pages[2]"),
    ("no-terminal", lambda s: setattr(s.pages[3], "terminal", False), "no-terminal", "$.pages"),
    ("no-tasks", lambda s: setattr(s, "tasks", []), "no-tasks", "$.tasks"),
    # dynamic
    ("unreachable-terminal", lambda s: vip_guard(s, "checkout"), "unreachable-terminal",
     "$.pages[3]"),
    ("dead-action", lambda s: vip_guard(s, "open_cart"), "dead-action", "$.pages[0].actions[1]"),
]


@pytest.mark.parametrize(("mutate", "code", "path"), [t[1:] for t in TRIGGERS],
                         ids=[t[0] for t in TRIGGERS])
def test_each_code_is_raised_at_its_path(small_world: WorldSpec, mutate: Mutation, code: str,
                                         path: str) -> None:
    mutate(small_world)
    report = validate(small_world)
    assert (code, path) in {(f.code, f.path) for f in report.findings}, report.to_dict()
    hit = next(f for f in report.findings if f.code == code and f.path == path)
    assert hit.severity == ("warning" if code in {"no-tasks", "dead-action"} else "error")
    assert hit.message
    assert report.valid == (not report.errors)


def test_every_code_has_a_trigger_case() -> None:
    coherence = {"column-kind", "foreign-facet", "miscategorised-item", "fact-mismatch"}
    # the coherence codes are planted in tests/spec/test_coherence.py
    assert {t[2] for t in TRIGGERS} | {"state-budget"} | coherence == set(CHECK_CODES)


def test_valid_baseline_has_no_findings(small_world: WorldSpec) -> None:
    report = validate(small_world)
    assert report.findings == []
    assert report.valid and report.states is not None and report.states > 10


def test_state_budget(small_world: WorldSpec) -> None:
    report = validate(small_world, state_budget=5)
    (hit,) = [f for f in report.findings if f.code == "state-budget"]
    assert hit.path == "$" and "5" in hit.message and "--state-budget" in hit.message
    assert report.states == 5
    assert "dead-action" not in {f.code for f in report.findings}  # not judged when cut
    assert validate(small_world, state_budget=report.states * 100).valid


def test_parameter_explosion_is_a_budget_error(small_world: WorldSpec) -> None:
    act(small_world, "search").params.append(Parameter(name="page", domain=list(range(100))))
    report = validate(small_world, state_budget=50)
    assert ("state-budget", "$.pages[0].actions[0]") in {(f.code, f.path) for f in report.findings}
    assert report.states is None


# (case id, mutation, code that must NOT appear)
NEAR_MISSES: list[tuple[str, Mutation, str]] = [
    ("same-trigger-other-guards", lambda s: s.pages[1].actions.append(
        click("add_vip", "add", guards=[C(var="query", op="eq", value="hats")])),
     "nondeterministic-actions"),
    ("select-other-value", lambda s: s.pages[1].actions.extend([
        Action(id=f"pick_{v}", label=v, gui=[GuiStep(op="select", element="item_pick", value=v)])
        for v in ("shoes", "hats")]), "nondeterministic-actions"),
    ("guards-in-domain", set_guards("checkout", C(var="query", op="in", value=["hats", "boots"]),
                                    C(var="query", op="neq", value="shoes"),
                                    C(var="cart", op="length_gt", value=1)), "impossible-guard"),
    ("range-ok", lambda s: set_guards("checkout", C(var="n", op="gte", value=1),
                                      C(var="n", op="lte", value=1))(add_var(s, INT_N)),
     "impossible-guard"),
    ("huge-int", lambda s: set_guards("checkout", C(var="big", op="gt", value=999_998),
                                      C(var="big", op="neq", value=999_999))(
        add_var(s, V(name="big", type="int", min=0, max=1_000_000))), "impossible-guard"),
    ("huge-list", lambda s: set_guards("checkout", C(var="tags", op="length_gt", value=7))(
        add_var(s, V(name="tags", type="list", values=[f"t{i}" for i in range(12)]))),
     "impossible-guard"),
    ("huge-enum", lambda s: set_guards("checkout", C(var="city", op="eq", value="c4999"),
                                       C(var="city", op="neq", value="c1"))(
        add_var(s, V(name="city", type="enum", values=[f"c{i}" for i in range(5000)]))),
     "impossible-guard"),
    ("clear-and-none", set_effects("checkout", E(op="clear", var="cart"),
                                   E(op="set", var="query", value=None)), "bad-effect"),
    ("hover-and-click", lambda s: setattr(act(s, "search").gui[1], "op", "hover"),
     "widget-contract"),
    ("type-date", lambda s: setattr(s.pages[0].elements[0], "kind", "date_picker"),
     "widget-contract"),
    ("terminal-no-back", lambda s: setattr(s.pages[3], "actions", []), "missing-back"),
    ("goal-in-domain", lambda s: setattr(s.tasks[0], "bindings", {"query": "hats"}),
     "unreachable-goal"),
]


@pytest.mark.parametrize(("mutate", "code"), [t[1:] for t in NEAR_MISSES],
                         ids=[t[0] for t in NEAR_MISSES])
def test_near_misses_are_not_raised(small_world: WorldSpec, mutate: Mutation, code: str) -> None:
    mutate(small_world)
    report = validate(small_world)
    assert code not in {f.code for f in report.findings}, report.to_dict()


def test_huge_int_beyond_bound_is_still_impossible(small_world: WorldSpec) -> None:
    add_var(small_world, V(name="big", type="int", min=0, max=1_000_000))
    set_guards("checkout", C(var="big", op="gt", value=1_000_000))(small_world)
    assert "impossible-guard" in {f.code for f in validate(small_world).findings}


def test_dynamic_checks_skipped_when_structure_is_broken(small_world: WorldSpec) -> None:
    act(small_world, "checkout").navigate = "nowhere"
    vip_guard(small_world, "open_cart")
    report = validate(small_world)
    assert report.states is None and not report.valid
    assert not {f.code for f in report.findings} & set(DYNAMIC_CHECKS)


def test_report_round_trip(small_world: WorldSpec) -> None:
    small_world.home = "start"
    small_world.tasks = []
    report = validate(small_world)
    data = json.loads(json.dumps(report.to_dict()))
    assert Report.from_dict(data) == report
    assert data["valid"] is False and data["errors"] == len(report.errors) >= 1
    assert data["warnings"] == 1
    assert Finding.from_dict(report.findings[0].to_dict()) == report.findings[0]


def test_findings_are_deterministic_and_ordered(small_world: WorldSpec) -> None:
    for aid in ("open_cart", "checkout", "results_back"):
        act(small_world, aid).navigate = f"{aid}_gone"
    small_world.variables[0].values = []
    first = validate(small_world).findings
    assert first == validate(small_world.model_copy(deep=True)).findings
    dangling = [f.path for f in first if f.code == "dangling-reference"]
    assert dangling == ["$.pages[0].actions[1].navigate", "$.pages[1].actions[1].navigate",
                        "$.pages[2].actions[0].navigate"]
    codes = [f.code for f in first]
    assert codes.index("dangling-reference") < codes.index("empty-domain")


def test_registry_covers_codes() -> None:
    assert next(iter(CHECKS)) == "duplicate-id"
    assert all(desc for desc in CHECK_CODES.values())
