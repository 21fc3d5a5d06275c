"""Generator version 3: pages as dense as real sites', with furniture that adds no task states."""

from __future__ import annotations

import pytest

from webworld.propose.chrome import DENSITY, counted_actions
from webworld.propose.procedural import PROFILES, generate, profile_problems
from webworld.spec.graph import explore_states
from webworld.spec.models import FURNITURE_ROLES, WorldSpec
from webworld.spec.semantics import Machine

WORLDS = [("online bookstore", "medium", 0), ("flight booking", "easy", 3),
          ("email inbox", "hard", 1), ("recipe site", "medium", 4)]


def _world(theme: str, profile: str, seed: int) -> WorldSpec:
    return generate(theme, profile, seed, version=3).spec


def _without_furniture(spec: WorldSpec) -> WorldSpec:
    """The same world with its site furniture (area link groups and the pages only they
    lead to) taken out."""
    bare = spec.model_copy(deep=True)
    only_furniture = {"site_section", "site_help", "site_account", "spotlight"}
    bare.pages = [p for p in bare.pages if p.id not in only_furniture]
    for page in bare.pages:
        areas = {e.id for e in page.elements if e.area is not None}
        page.elements = [e for e in page.elements if e.id not in areas]
        page.actions = [a for a in page.actions if a.trigger.element not in areas]
    bare.variables = [v for v in bare.variables if v.name not in ("site_topic", "spotlight_item")]
    return bare


@pytest.mark.parametrize("world", WORLDS, ids=lambda w: f"{w[0]}-{w[1]}")
def test_furniture_adds_no_state_to_the_pages_tasks_use(world: tuple[str, str, int]) -> None:
    spec = _world(*world)
    full, bare = explore_states(spec), explore_states(_without_furniture(spec))
    assert not full.truncated
    names = [v.name for v in bare.machine.variables]
    index = {v.name: i for i, v in enumerate(full.machine.variables)}

    def on_task_pages(graph, pick) -> set[tuple[str, tuple]]:
        furniture = {p.id for p in spec.pages if p.role in FURNITURE_ROLES}
        return {(s.page, tuple(pick(s))) for s in graph.states if s.page not in furniture}

    assert on_task_pages(full, lambda s: [s.values[index[n]] for n in names]) == \
        on_task_pages(bare, lambda s: s.values)
    # the furniture pages hold one state per link (and cookie answer), not one per path
    furniture_states = [s for s in full.states if s.page in
                        {"site_section", "site_help", "site_account", "spotlight"}]
    topics = len(spec.variable("site_topic").values) + len(spec.variable("spotlight_item").values)
    assert 0 < len(furniture_states) <= 2 * topics


def test_a_furniture_link_starts_over_from_anywhere() -> None:
    spec = _world("online bookstore", "medium", 0)
    graph = explore_states(spec)
    machine = Machine(spec)
    open_page = [i for i, s in enumerate(graph.states)  # no dialog over the footer
                 if f"{s.page}__policy_links" in machine.actions
                 and machine.reachable(s, machine.actions[f"{s.page}__policy_links"][1])]
    state = graph.states[max(open_page, key=lambda i: graph.depth[i])]
    assert graph.depth[graph.index[state]] >= 5
    result = machine.step(state, f"{state.page}__policy_links", {"topic": "Privacy policy"})
    assert result.ok, result.message
    after = machine.describe(result.state)
    assert after["page"] == "site_help"
    start = machine.describe(machine.initial_state())["vars"]
    moved = {k for k, v in after["vars"].items() if v != start[k]}
    assert moved <= {"site_topic"} | {k for k in start if k.startswith("cookie_consent")}
    assert after["vars"]["site_topic"] == "Privacy policy"


@pytest.mark.parametrize("world", WORLDS, ids=lambda w: f"{w[0]}-{w[1]}")
def test_every_page_but_success_carries_the_site_furniture(world: tuple[str, str, int]) -> None:
    spec = _world(*world)
    for page in spec.pages:
        areas = {e.area for e in page.elements if e.area is not None}
        assert areas == (set() if page.terminal else {"header", "sidebar", "footer"}), page.id


def test_result_lists_are_long_paged_and_hold_the_task_entries_on_page_one() -> None:
    for theme, profile, seed in WORLDS:
        spec = _world(theme, profile, seed)
        results = next((p for p in spec.pages if p.role == "results"), None)
        if results is None:
            continue
        per_page = DENSITY[profile].per_page
        lists = [e for e in results.elements if e.kind == "link" and e.options and e.area is None]
        assert lists and all(len(e.options) <= per_page for e in lists)
        opens = [a for a in results.actions if a.navigate == "detail"]
        assert opens
        for action in opens:
            shown = {(c.var, c.value) for c in action.guards}
            assert any(var.endswith("page_no") and value == 1 for var, value in shown)
        # a list of one search or category: 10 to 40 entries over its pages
        by_key: dict[object, int] = {}
        for e in lists:
            key = next((c.value for c in e.visible_when if not c.var.endswith("page_no")), None)
            by_key[key] = by_key.get(key, 0) + len(e.options)
        assert all(10 <= n <= 40 for n in by_key.values()), by_key


def test_previews_lead_nowhere_but_back() -> None:
    spec = _world("online bookstore", "medium", 0)
    preview = next(p for p in spec.pages if p.id == "item_preview")
    areas = {e.id for e in preview.elements if e.area is not None}
    own = [a for a in preview.actions if a.trigger.element not in areas]
    assert [a.is_back for a in own] == [True]


def test_profiles_count_what_tasks_use_and_density_grows_with_the_profile() -> None:
    for theme, profile, seed in WORLDS:
        spec = _world(theme, profile, seed)
        assert profile_problems(spec, PROFILES[profile]) == []
        furniture = {p.id for p in spec.pages if p.role in FURNITURE_ROLES}
        lo, hi = PROFILES[profile].actions_per_page
        for page in spec.pages:
            if not page.terminal and page.id not in furniture:
                assert lo <= counted_actions(page, furniture) <= hi
                assert len(page.actions) > counted_actions(page, furniture)

    def links(profile: str) -> int:
        spec = _world("online bookstore", profile, 0)
        home = spec.page(spec.home)
        return sum(len(e.options) for e in home.elements if e.area is not None)

    assert links("easy") < links("medium") <= links("hard")


def test_older_versions_have_no_furniture() -> None:
    for version in (1, 2):
        spec = generate("online bookstore", "medium", 0, version=version).spec
        assert not any(e.area for p in spec.pages for e in p.elements)
        assert not any(p.role in FURNITURE_ROLES for p in spec.pages)


def test_the_world_graph_leaves_the_furniture_out() -> None:
    from webworld.dashboard.graph import page_graph_dot

    spec = _world("online bookstore", "medium", 0)
    dot = page_graph_dot(spec)
    assert '"p:detail"' in dot and '"p:results"' in dot
    assert "site_help" not in dot and "spotlight" not in dot and "item_preview" not in dot
    assert "policy_links" not in dot
