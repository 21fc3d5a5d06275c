"""Every example spec renders, in contrasting themes, into pages that meet the DOM contract."""

from __future__ import annotations

from collections import deque
from html import escape
from pathlib import Path

import pytest

from webworld import contract
from webworld.render import (
    THEMES,
    check_page,
    load_site,
    make_environment,
    page_context,
    render_page,
    render_site,
)
from webworld.render.checks import parse_html
from webworld.render.context import FormView
from webworld.render.plan import visible_ids
from webworld.spec.io import load_spec
from webworld.spec.semantics import Machine, State

EXAMPLES = sorted((Path(__file__).parents[2] / "fsm_specs").glob("*.json"))
BASE = "/w/world"


def sample_states(machine: Machine, limit: int = 3000, head: int = 8) -> list[State]:
    """The first ``head`` states, then one state per (page, set of visible elements): a
    search that dives into pages it has not seen yet, so every page (and every overlay or
    tab-dependent element) is covered within ``limit`` states."""
    start = machine.initial_state()
    seen, queue, picked, looks, pages = {start}, deque([start]), [], set(), set()
    while queue and len(seen) < limit:
        state = queue.popleft()
        look = (state.page, tuple(visible_ids(machine.spec.page(state.page), machine, state)))
        if len(picked) < head or look not in looks:
            picked.append(state)
            looks.add(look)
            pages.add(state.page)
        for t in machine.transitions(state):
            if t.target not in seen:
                seen.add(t.target)
                if t.target.page in pages:
                    queue.append(t.target)
                else:
                    queue.appendleft(t.target)
    return picked


@pytest.mark.parametrize("theme", ["harbor", "midnight"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_page_meets_the_contract(path: Path, theme: str, tmp_path: Path) -> None:
    spec = load_spec(path)
    site = load_site(render_site(spec, tmp_path / "site", theme=theme))
    env, machine = make_environment(site), Machine(spec)
    states = sample_states(machine)
    assert {s.page for s in states} == {p.id for p in spec.pages}, "BFS should reach every page"
    for state in states:
        html = render_page(site, env, machine, state, base=BASE)
        assert check_page(html, spec, machine, state, base=BASE) == [], state
        for block in spec.page(state.page).content:
            if block.kind == "text" and block.text:  # the page's copy: shown, and once
                assert html.count(escape(block.text)) == 1, (state.page, block.text)


def test_every_theme_renders_a_spec_cleanly(tmp_path: Path) -> None:
    spec = load_spec(EXAMPLES[0])
    machine = Machine(spec)
    states = sample_states(machine, limit=300, head=5)
    for name in THEMES:
        site = load_site(render_site(spec, tmp_path / name, theme=name))
        env = make_environment(site)
        for state in states:
            html = render_page(site, env, machine, state)
            assert check_page(html, spec, machine, state) == [], (name, state.page)
            assert f"theme-{name}" in html


def _walk(machine: Machine, *steps: tuple[str, dict]) -> State:
    state = machine.initial_state()
    for action, params in steps:
        result = machine.step(state, action, params)
        assert result.ok, result.message
        state = result.state
    return state


@pytest.fixture(scope="module")
def bookstore(tmp_path_factory: pytest.TempPathFactory):
    spec = load_spec(next(p for p in EXAMPLES if p.stem == "online_bookstore_medium_s1"))
    site = load_site(render_site(spec, tmp_path_factory.mktemp("b") / "site", theme="harbor"))
    return site, make_environment(site), Machine(spec)


def test_widgets_show_the_values_the_state_knows(bookstore) -> None:
    site, env, machine = bookstore
    results = _walk(machine, ("home_cookies_accepted", {}), ("home_browse", {"category": "History"}))
    sorted_ = machine.step(results, "results_choose_results_sort", {"results_sort": "Top rated"}).state
    filtered = machine.step(sorted_, "results_filter_on", {}).state
    doc = parse_html(render_page(site, env, machine, filtered))
    nodes = list(doc.walk())
    select = next(n for n in nodes if n.get("data-ww-id") == "results_sort")
    chosen = [o for o in select.walk() if o.tag == "option" and o.get("selected") is not None]
    assert [o.get("value") for o in chosen] == ["Top rated"]
    box = next(n for n in nodes if n.get("data-ww-id") == "filter")
    assert box.get("checked") is not None
    assert box.get(contract.CHECK_ATTR) == "ww-act-results_filter_on"
    assert box.get(contract.UNCHECK_ATTR) == "ww-act-results_filter_off"
    plain = parse_html(render_page(site, env, machine, results))
    box = next(n for n in plain.walk() if n.get("data-ww-id") == "filter")
    assert box.get("checked") is None


def test_slider_radio_and_tabs_reflect_state(bookstore) -> None:
    site, env, machine = bookstore
    spec = site.spec
    review_page = spec.page("review_write_a_review")
    state = State(review_page.id, machine.initial_state().values)
    html = render_page(site, env, machine, state)
    slider = next(n for n in parse_html(html).walk() if n.get("data-ww-id") == "review_rating")
    assert (slider.get("type"), slider.get("min"), slider.get("max")) == ("range", "1", "5")
    assert slider.get("data-ww-unset") is not None  # nothing chosen yet
    rated = machine.step(state, "review_write_a_review_set_review_rating", {"review_rating": 4})
    slider = next(n for n in parse_html(render_page(site, env, machine, rated.state)).walk()
                  if n.get("data-ww-id") == "review_rating")
    assert slider.get("value") == "4" and slider.get("data-ww-unset") is None

    detail = State("detail", machine.initial_state().values)
    tab_action = next(a for a in spec.page("detail").actions if a.gui[0].op == "select"
                      and a.gui[0].element == "detail_tab")
    after = machine.step(detail, tab_action.id, {"tab": "Questions"}).state
    tabs = [n for n in parse_html(render_page(site, env, machine, after)).walk()
            if n.get("role") == "tab"]
    assert [t.get(contract.VALUE_ATTR) for t in tabs if t.get("aria-selected") == "true"] == [
        "Questions"]


def test_links_without_parameters_are_get_links(bookstore) -> None:
    site, env, machine = bookstore
    state = _walk(machine, ("home_cookies_accepted", {}), ("home_browse", {"category": "History"}))
    doc = parse_html(render_page(site, env, machine, state, base=BASE))
    back = next(n for n in doc.walk() if n.get("data-ww-id") == "home")
    assert back.tag == "a" and back.get("href") == f"{BASE}/act/results_back"
    item = next(n for n in doc.walk() if n.get(contract.VALUE_ATTR) == "Atomic Habits")
    assert item.tag == "button" and item.get("form") == "ww-act-results_open_item"
    assert (item.get("name"), item.get("value")) == ("item", "Atomic Habits")


def test_refused_action_message_is_one_alert(bookstore) -> None:
    site, env, machine = bookstore
    state = machine.initial_state()
    html = render_page(site, env, machine, state, error="Please answer the cookie banner first.")
    alerts = [n for n in parse_html(html).walk() if n.get("role") == "alert"]
    assert len(alerts) == 1 and "Please answer the cookie banner first." in alerts[0].all_text()
    banner = next(n for n in parse_html(html).walk() if n.get("data-ww-id") == "cookie_banner")
    assert any(n.get("role") == "alert" for n in banner.walk()), "shown inside the open overlay"
    assert not [n for n in parse_html(render_page(site, env, machine, state)).walk()
                if n.get("role") == "alert"]


def test_context_carries_views_not_the_state(bookstore) -> None:
    site, env, machine = bookstore
    state = _walk(machine, ("home_cookies_accepted", {}))
    ctx = page_context(site, machine, state, base=BASE)
    assert not {"state", "vars", "values", "machine"} & set(ctx.template_names())
    assert set(ctx.elements) == {"browse_menu", "newsletter", "create_account", "sign_in"}
    assert ctx.forms[0] == FormView(id="ww-act-home_cookies_accepted",
                                    url=f"{BASE}/act/home_cookies_accepted",
                                    action="home_cookies_accepted", label="Accept all cookies")
    menu = ctx.elements["browse_menu"]
    assert [o.value for o in menu.options] == ["Biography", "History"]
    assert [v.id for v in ctx.regions.nav] == ["browse_menu", "create_account", "sign_in"]
    assert ctx.regions.overlays == []  # the cookie banner was answered
    # a region's views are the very views of `elements` (variants set once show in both)
    assert all(v is ctx.elements[v.id] for v in ctx.regions.nav + ctx.regions.actions)
    # static files carry a version (a hash of their bytes), so browsers may keep them
    assert ctx.urls.css == f"{BASE}/static/theme.css?v={site.static_version}"
    assert len(site.static_version) == 12


def test_blocking_overlay_has_a_backdrop_and_dialog_semantics(bookstore) -> None:
    site, env, machine = bookstore
    doc = parse_html(render_page(site, env, machine, machine.initial_state()))
    banner = next(n for n in doc.walk() if n.get("data-ww-id") == "cookie_banner")
    assert banner.get("role") == "dialog" and banner.get("aria-modal") == "true"
    title = next(n for n in doc.walk() if n.get("id") == banner.get("aria-labelledby"))
    assert "cookies" in title.all_text()
    root = banner.parent
    assert "is-blocking" in (root.get("class") or "")
    assert any("backdrop" in (c.get("class") or "") for c in root.children)
    css = (site.root / "static" / "theme.css").read_text()
    assert ".backdrop { position: fixed; inset: 0;" in css
