"""The improver: repairs what it can, reports what it must not change, never mutates input."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from webworld.propose.improve import FIXERS, UNREPAIRABLE, improve, locate, parse_path
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
from webworld.spec.validate import CHECK_CODES, validate

Mutation = Callable[[WorldSpec], object]
C = Condition


def act(spec: WorldSpec, action_id: str) -> Action:
    return next(a for p in spec.pages for a in p.actions if a.id == action_id)


def click(action_id: str, element: str, **kw: object) -> Action:
    return Action(id=action_id, label=action_id, gui=[GuiStep(op="click", element=element)], **kw)


def back_page(page_id: str, to: str, **kw: object) -> Page:
    return Page(id=page_id, title=page_id.capitalize(), **kw,
                elements=[Element(id="back", kind="link", label="Back")],
                actions=[click(f"{page_id}_back", "back", is_back=True, navigate=to)])


# (case id, mutation, repaired code, check on the repaired spec)
CASES: list[tuple[str, Mutation, str, Callable[[WorldSpec], bool]]] = [
    ("dup-action", lambda s: setattr(act(s, "cart_back"), "id", "results_back"), "duplicate-id",
     lambda s: [a.id for a in s.pages[2].actions] == ["checkout", "results_back_2"]),
    ("dup-page", lambda s: s.pages.append(Page(id="cart", title="Cart again")), "duplicate-id",
     lambda s: [p.id for p in s.pages] == ["home", "results", "cart", "done"]),  # then pruned
    ("tasks-pasted-twice", lambda s: s.tasks.extend(t.model_copy(deep=True) for t in s.tasks * 3),
     "duplicate-id", lambda s: [t.id for t in s.tasks] == [s.tasks[0].id]),
    ("task-copied-and-edited", lambda s: s.tasks.append(s.tasks[0].model_copy(
        deep=True, update={"intents": ["Buy {query} again"]})), "duplicate-id",
     lambda s: [t.id for t in s.tasks] == [s.tasks[0].id, s.tasks[0].id + "_2"]),
    ("typo-navigate", lambda s: setattr(act(s, "open_cart"), "navigate", "carts"),
     "dangling-reference", lambda s: act(s, "open_cart").navigate == "cart"),
    ("navigate-nowhere", lambda s: s.pages[1].actions.append(
        click("to_blog", "add", navigate="zzz")), "dangling-reference",
     lambda s: "to_blog" not in {a.id for p in s.pages for a in p.actions}),
    ("missing-element", lambda s: setattr(act(s, "checkout").gui[0], "element", "pay_now"),
     "dangling-reference", lambda s: s.page("cart").elements[-1].kind == "button"),
    ("missing-select", lambda s: setattr(act(s, "add_to_cart").gui[0], "element", "size"),
     "dangling-reference",
     lambda s: s.page("results").elements[-1].model_dump(include={"id", "kind", "options"})
     == {"id": "size", "kind": "select", "options": ["shoes", "hats"]}),
    ("typo-guard-var", lambda s: setattr(act(s, "add_to_cart").guards[0], "var", "querry"),
     "dangling-reference", lambda s: act(s, "add_to_cart").guards[0].var == "query"),
    ("unknown-guard-var", lambda s: act(s, "checkout").guards.append(
        C(var="zzz", op="exists")), "dangling-reference", lambda s: len(act(s, "checkout").guards) == 1),
    ("typo-effect-param", lambda s: setattr(act(s, "add_to_cart").effects[0], "param", "items"),
     "dangling-reference", lambda s: act(s, "add_to_cart").effects[0].param == "item"),
    ("typo-placeholder", lambda s: setattr(act(s, "add_to_cart").gui[0], "value", "{itm}"),
     "dangling-reference", lambda s: act(s, "add_to_cart").gui[0].value == "{item}"),
    ("bad-home", lambda s: setattr(s, "home", "index"), "dangling-reference",
     lambda s: s.home == "home"),
    ("typo-goal", lambda s: setattr(s.tasks[0].goal, "page", "don"), "dangling-reference",
     lambda s: s.tasks[0].goal.page == "done"),
    ("typo-slot-binding", lambda s: setattr(s.tasks[0], "bindings", {"qeury": "hats"}),
     "dangling-reference", lambda s: s.tasks[0].bindings == {"query": "hats"}),
    ("empty-param", lambda s: setattr(act(s, "add_to_cart").params[0], "domain", []),
     "empty-domain", lambda s: act(s, "add_to_cart").params[0].domain == ["shoes", "hats"]),
    ("empty-options", lambda s: setattr(s.pages[1].elements[0], "options", []), "empty-domain",
     lambda s: s.pages[1].elements[0].options == ["shoes", "hats"]),
    ("empty-enum", lambda s: setattr(s.variables[0], "values", []), "empty-domain",
     lambda s: s.variables[0].values == ["shoes", "hats"]),
    ("int-no-bounds", lambda s: s.variables.append(Variable(name="n", type="int")),
     "empty-domain", lambda s: (s.variables[2].min, s.variables[2].max) == (0, 3)),
    ("bad-initial", lambda s: setattr(s.variables[1], "initial", ["socks"]), "bad-initial",
     lambda s: s.variables[1].initial is None),
    ("set-outside", lambda s: act(s, "checkout").effects.append(
        Effect(op="set", var="query", value="boots")), "bad-effect",
     lambda s: act(s, "checkout").effects == []),
    ("param-too-wide", lambda s: act(s, "search").params[0].domain.append("socks"), "bad-effect",
     lambda s: act(s, "search").params[0].domain == ["shoes", "hats"]),
    ("impossible-guard", lambda s: act(s, "checkout").guards.append(
        C(var="cart", op="length_gt", value=5)), "impossible-guard",
     lambda s: len(act(s, "checkout").guards) == 1),
    ("contradiction", lambda s: act(s, "add_to_cart").guards.extend(
        [C(param="item", op="eq", value="hats"), C(param="item", op="neq", value="hats")]),
     "impossible-guard", lambda s: len(act(s, "add_to_cart").guards) == 2),
    ("nondeterministic", lambda s: s.pages[2].actions.append(
        click("pay", "checkout", navigate="done", guards=[C(var="cart", op="length_gt", value=0)])),
     "nondeterministic-actions", lambda s: [a.id for a in s.pages[2].actions][-1] == "cart_back"),
    ("option-missing", lambda s: setattr(s.pages[1].elements[0], "options", ["shoes"]),
     "widget-contract", lambda s: s.pages[1].elements[0].options == ["shoes", "hats"]),
    ("type-into-div", lambda s: setattr(s.pages[0].elements[0], "kind", "button"),
     "widget-contract", lambda s: s.pages[0].elements[0].kind == "text_input"),
    ("not-marked-back", lambda s: setattr(act(s, "cart_back"), "is_back", False), "missing-back",
     lambda s: act(s, "cart_back").is_back),
    ("no-back-at-all", lambda s: s.pages[2].actions.pop(), "missing-back",
     lambda s: [a.navigate for a in s.pages[2].actions if a.is_back] == ["home"]),
    ("dead-end", lambda s: setattr(s.pages[1], "actions", s.pages[1].actions[:1]), "dead-end-page",
     lambda s: any(a.is_back for a in s.pages[1].actions)),
    ("orphan-page", lambda s: s.pages.append(back_page("about", "home")), "unreachable-page",
     lambda s: "about" not in {p.id for p in s.pages}),
    ("orphan-terminal", lambda s: s.pages.append(back_page("thanks", "cart", terminal=True)),
     "unreachable-page", lambda s: any(a.navigate == "thanks" for a in s.page("cart").actions)),
]


@pytest.mark.parametrize(("mutate", "code", "check"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_repairable_code_is_repaired(small_world: WorldSpec, mutate: Mutation, code: str,
                                     check: Callable[[WorldSpec], bool]) -> None:
    mutate(small_world)
    assert code in {f.code for f in validate(small_world).findings}
    pristine = small_world.model_copy(deep=True)
    result = improve(small_world)
    assert result.valid, result.summary()
    assert code in {r.code for r in result.repairs}
    assert small_world == pristine, "improve mutated its input"
    assert check(result.spec), result.spec.model_dump(exclude_defaults=True)
    WorldSpec.model_validate(result.spec.model_dump())  # still schema-valid
    again = improve(result.spec)
    assert again.repairs == [] and again.iterations == 0


def test_every_repairable_code_has_a_case() -> None:
    assert {c[2] for c in CASES} == set(FIXERS)
    assert set(FIXERS) | set(UNREPAIRABLE) == set(CHECK_CODES)


def test_valid_spec_is_left_alone(small_world: WorldSpec) -> None:
    result = improve(small_world)
    assert result.spec == small_world and result.spec is not small_world
    assert result.repairs == [] and result.iterations == 0 and result.valid
    assert "valid" in result.summary()


def test_unreachable_goal_is_reported_not_fixed(small_world: WorldSpec) -> None:
    small_world.variables.append(Variable(name="vip", type="bool"))
    small_world.tasks[0].goal.conditions.append(C(var="vip", op="eq", value=True))
    pristine = small_world.model_copy(deep=True)
    result = improve(small_world)
    assert not result.valid and result.repairs == []
    assert [f.code for f in result.report.errors] == ["unreachable-goal"]
    assert result.spec == pristine == small_world
    summary = result.summary()
    assert "unreachable-goal" in summary and UNREPAIRABLE["unreachable-goal"] in summary


def test_unfixable_and_fixable_together(small_world: WorldSpec) -> None:
    small_world.variables.append(Variable(name="tags", type="list"))  # nothing to fill it from
    act(small_world, "open_cart").navigate = "crt"
    result = improve(small_world)
    assert [r.code for r in result.repairs] == ["dangling-reference"]
    assert [f.code for f in result.report.errors] == ["empty-domain"]
    assert "no value of 'tags'" in result.summary()


def test_messy_hand_written_spec_takes_several_rounds() -> None:
    spec = WorldSpec.model_validate({
        "id": "messy", "name": "Messy", "theme": "blog", "home": "index",
        "variables": [{"name": "topic", "type": "enum", "values": ["news"]}],
        "pages": [
            {"id": "home", "title": "Home", "actions": [
                {"id": "read", "label": "Read", "gui": [{"op": "click", "element": "read_btn"}],
                 "navigate": "articel", "effects": [{"op": "set", "var": "topik", "value": "x"}]}]},
            {"id": "article", "title": "Article", "actions": [
                {"id": "read", "label": "Like", "gui": [{"op": "check", "element": "like"}],
                 "navigate": "liked"}]},
            {"id": "liked", "title": "Liked", "terminal": True},
            {"id": "ads", "title": "Ads"},
        ],
        "tasks": [{"id": "like", "goal": {"page": "liked"}, "intents": ["Like an article"]}],
    })
    pristine = spec.model_copy(deep=True)
    result = improve(spec)
    assert result.valid, result.summary()
    assert result.iterations >= 2 and spec == pristine
    codes = {r.code for r in result.repairs}
    assert {"dangling-reference", "duplicate-id", "bad-effect", "unreachable-page",
            "missing-back"} <= codes
    assert [p.id for p in result.spec.pages] == ["home", "article", "liked"]


def test_max_iterations_zero_changes_nothing(small_world: WorldSpec) -> None:
    act(small_world, "open_cart").navigate = "crt"
    result = improve(small_world, max_iterations=0)
    assert result.repairs == [] and not result.valid and result.spec == small_world


def test_state_budget_is_reported(small_world: WorldSpec) -> None:
    result = improve(small_world, state_budget=5)
    assert not result.valid and result.repairs == []
    assert "--state-budget" in result.summary()


def test_locate_walks_paths(small_world: WorldSpec) -> None:
    assert parse_path("$.pages[2].actions[0].guards[0].var") == [
        "pages", 2, "actions", 0, "guards", 0, "var"]
    t = locate(small_world, "$.pages[2].actions[0].guards[0].var")
    assert t.role == "condition" and t.field == "var"
    assert t.objs["action"].id == "checkout" and t.objs["page"].id == "cart"
    assert locate(small_world, "$.tasks[0].bindings.query").parent_field == "bindings"
    assert parse_path("$.tasks[1].bindings.odd key-1") == ["tasks", 1, "bindings", "odd key-1"]


def test_binding_key_that_is_no_identifier(small_world: WorldSpec) -> None:
    small_world.tasks[0].bindings = {"Query (main)": "hats"}
    result = improve(small_world)
    assert result.valid and result.spec.tasks[0].bindings == {}


def test_parameter_fill_needs_a_select(small_world: WorldSpec) -> None:
    act(small_world, "search").params[0].domain = []
    result = improve(small_world)
    assert "search" not in {a.id for p in result.spec.pages for a in p.actions}
    assert any(r.code == "empty-domain" and "dropped" in r.description for r in result.repairs)


def test_int_parameter_options_are_texts(small_world: WorldSpec) -> None:
    small_world.variables.append(Variable(name="qty", type="int", min=1, max=3))
    small_world.pages[1].elements.append(Element(id="qty_pick", kind="select", label="Qty"))
    small_world.pages[1].actions.append(Action(
        id="set_qty", label="Qty", gui=[GuiStep(op="select", element="qty_pick", value="{n}")],
        params=[Parameter(name="n", domain=[1, 2, 3])],
        effects=[Effect(op="set_param", var="qty", param="n")]))
    result = improve(small_world)
    assert result.valid, result.summary()
    assert result.spec.page("results").elements[-1].options == ["1", "2", "3"]
