"""BFS path enumeration on small hand-written worlds, where the paths are known exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from webworld.explore.candidates import (
    ExploreConfig,
    expected_states,
    explore_world,
    write_candidates,
)
from webworld.spec.models import WorldSpec


def link(aid: str, el: str, to: str, **kw: Any) -> dict[str, Any]:
    return {"id": aid, "label": aid, "gui": [{"op": "click", "element": el}], "navigate": to,
            **kw}


def page(pid: str, actions: list[dict], elements: list[str] = (), terminal: bool = False,
         **kw: Any) -> dict[str, Any]:
    els = [{"id": e, "kind": "button", "label": e} for e in elements]
    return {"id": pid, "title": pid, "actions": actions, "elements": els, "terminal": terminal,
            **kw}


def world(pages: list[dict], tasks: list[dict], variables: list[dict] = ()) -> WorldSpec:
    return WorldSpec.model_validate({"id": "w", "name": "w", "theme": "t", "home": "home",
                                     "pages": pages, "tasks": tasks,
                                     "variables": list(variables)})


def task(goal: str, **kw: Any) -> dict[str, Any]:
    return {"id": "t", "goal": {"page": goal}, "intents": ["Reach the goal"], **kw}


def actions_of(result) -> list[list[str]]:
    return [[s["action"] for s in c["steps"]] for c in result.candidates]


DIAMOND = [
    page("home", [link("to_a", "a", "a"), link("to_b", "b", "b"), link("to_x", "x", "x")],
         ["a", "b", "x"]),
    page("a", [link("a_done", "go", "done"), link("a_back", "back", "home", is_back=True)],
         ["go", "back"]),
    page("b", [link("b_done", "go", "done"), link("b_back", "back", "home", is_back=True)],
         ["go", "back"]),
    page("x", [link("x_a", "go", "a"), link("x_back", "back", "home", is_back=True)],
         ["go", "back"]),
    page("done", [], terminal=True),
]


def test_linear_world_has_exactly_one_path() -> None:
    spec = world([
        page("home", [link("h1", "go", "p1")], ["go"]),
        page("p1", [link("p1_go", "go", "p2")], ["go"]),
        page("p2", [link("p2_go", "go", "done")], ["go"]),
        page("done", [], terminal=True),
    ], [task("done")])
    result = explore_world(spec, ExploreConfig(extra_steps=2, max_longer=5))
    assert actions_of(result) == [["h1", "p1_go", "p2_go"]]
    assert result.candidates[0]["length"] == result.candidates[0]["shortest_length"] == 3


def test_diamond_gives_all_shortest_paths_then_bounded_longer_ones() -> None:
    spec = world(DIAMOND, [task("done")])
    only_shortest = explore_world(spec, ExploreConfig(extra_steps=0))
    assert actions_of(only_shortest) == [["to_a", "a_done"], ["to_b", "b_done"]]

    with_longer = explore_world(spec, ExploreConfig(extra_steps=1, max_longer=10))
    assert actions_of(with_longer) == [["to_a", "a_done"], ["to_b", "b_done"],
                                       ["to_x", "x_a", "a_done"]]
    # back-and-forth detours revisit a state, so they are never enumerated
    assert all(len(set(a)) == len(a) for a in actions_of(with_longer))


def test_caps_are_reported_when_they_cut() -> None:
    spec = world(DIAMOND, [task("done")])
    result = explore_world(spec, ExploreConfig(extra_steps=1, max_shortest=1, max_longer=0))
    assert actions_of(result) == [["to_a", "a_done"]]
    assert any("shortest paths capped" in c for c in result.cuts)
    assert any("longer paths capped" in c for c in result.cuts)
    assert explore_world(spec, ExploreConfig(extra_steps=0)).cuts == []


def test_state_budget_cut_is_reported() -> None:
    spec = world(DIAMOND, [task("done")])
    result = explore_world(spec, ExploreConfig(state_budget=2))
    assert result.truncated_by == "state budget 2"
    assert "state graph cut by state budget 2" in result.cuts


def parameterised_world() -> WorldSpec:
    return world(
        [
            page("home", [{
                "id": "search", "label": "Search",
                "gui": [{"op": "type", "element": "box", "value": "{q}"},
                        {"op": "key_press", "element": "box", "key": "Enter"}],
                "params": [{"name": "q", "domain": ["tea", "coffee", "bad"]}],
                "guards": [{"param": "q", "op": "in", "value": ["tea", "coffee"]}],
                "effects": [{"op": "set_param", "var": "query", "param": "q"}],
                "navigate": "results"}], ["box"]),
            page("results", [
                {"id": "agree", "label": "Agree", "gui": [{"op": "check", "element": "terms"}],
                 "effects": [{"op": "set", "var": "terms", "value": True}]},
                {"id": "gift", "label": "Gift", "gui": [{"op": "check", "element": "gift"}],
                 "effects": [{"op": "set", "var": "gift", "value": True}]},
                link("buy", "buy", "done", guards=[{"var": "terms", "op": "eq", "value": True},
                                                   {"var": "gift", "op": "eq", "value": True}]),
                link("back", "back", "home", is_back=True,
                     effects=[{"op": "clear", "var": "query"}]),
            ], ["buy", "back"]),
            page("done", [], terminal=True),
        ],
        [task("done", slots=["query"], intents=["Buy {query} as a gift"])],
        variables=[{"name": "query", "type": "enum", "values": ["tea", "coffee", "bad"]},
                   {"name": "terms", "type": "bool"}, {"name": "gift", "type": "bool"}],
    )


def test_slots_make_instances_and_independent_steps_make_orderings() -> None:
    result = explore_world(parameterised_world(), ExploreConfig(extra_steps=0))
    by_slot: dict[str, list[list[str]]] = {}
    for c in result.candidates:
        by_slot.setdefault(c["slots"]["query"], []).append([s["action"] for s in c["steps"]])
    # a guard rejects "bad"; both orders of the two independent checkboxes are shortest
    assert sorted(by_slot) == ["coffee", "tea"]
    for paths in by_slot.values():
        assert sorted(paths) == [["search", "agree", "gift", "buy"],
                                 ["search", "gift", "agree", "buy"]]
    intents = {c["intent"] for c in result.candidates}
    assert intents == {"Buy tea as a gift", "Buy coffee as a gift"}
    assert result.tasks["t"].instances == 2


def test_candidate_records_carry_params_gui_and_expected_state(tmp_path) -> None:
    result = explore_world(parameterised_world(), ExploreConfig(extra_steps=0))
    record = next(c for c in result.candidates if c["slots"]["query"] == "tea")
    first = record["steps"][0]
    assert first["params"] == {"q": "tea"}
    assert first["gui"] == [{"op": "type", "element": "box", "value": "tea"},
                            {"op": "key_press", "element": "box", "key": "Enter"}]
    assert first["expected"] == {"page": "results", "changes": {"query": "tea"}}
    final = expected_states(record)[-1]
    assert final == {"page": "done", "vars": {"query": "tea", "terms": True, "gift": True}}

    path = write_candidates(result, tmp_path / "w")
    lines = path.read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [c["id"] for c in result.candidates]
    assert json.loads((tmp_path / "w" / "explore_stats.json").read_text())["candidates"] == 4
    assert not list((tmp_path / "w").glob(".*.tmp"))


def test_ids_are_stable_and_unique() -> None:
    a = explore_world(parameterised_world(), ExploreConfig(extra_steps=0))
    b = explore_world(parameterised_world(), ExploreConfig(extra_steps=0, max_instances=1))
    ids = [c["id"] for c in a.candidates]
    assert len(set(ids)) == len(ids)
    assert {c["id"] for c in b.candidates} <= set(ids)
    assert any("kept 1 of 2 instances" in c for c in b.cuts)


def test_bindings_restrict_the_instances() -> None:
    spec = parameterised_world()
    spec.tasks[0].bindings = {"query": "coffee"}
    result = explore_world(spec, ExploreConfig(extra_steps=0))
    assert {c["slots"]["query"] for c in result.candidates} == {"coffee"}


def test_unreachable_task_yields_no_candidates() -> None:
    spec = world(DIAMOND + [page("island", [], terminal=True)], [task("island")])
    result = explore_world(spec)
    assert result.candidates == [] and result.tasks["t"].instances == 0


@pytest.mark.parametrize("profile", ["easy", "medium"])
def test_generated_world_has_candidates_for_every_task(profile: str) -> None:
    from webworld.propose.procedural import generate

    spec = generate("online bookstore", profile, 3).spec
    result = explore_world(spec, ExploreConfig(max_shortest=4, max_instances=4))
    assert {c["task_id"] for c in result.candidates} == {t.id for t in spec.tasks}
    for c in result.candidates:
        final = expected_states(c)[-1]
        goal = next(t for t in spec.tasks if t.id == c["task_id"]).goal.page
        assert final["page"] == goal
        assert c["length"] >= c["shortest_length"]
        assert "{" not in c["intent"]
