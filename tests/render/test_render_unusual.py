"""Any spec renders: widgets used in less common ways still meet the contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_small_world
from webworld.render import check_page, load_site, make_environment, render_page, render_site
from webworld.render.checks import form_owner, parse_html
from webworld.spec.models import WorldSpec
from webworld.spec.semantics import Machine, State


def _el(id: str, kind: str, **kw: Any) -> dict[str, Any]:
    return {"id": id, "kind": kind, "label": id.replace("_", " ").capitalize(), **kw}


def _act(id: str, gui: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {"id": id, "label": id.replace("_", " ").capitalize(), "gui": gui, **kw}


def unusual_world() -> WorldSpec:
    days = ["2027-01-30", "2027-02-02"]
    return WorldSpec.model_validate({
        "id": "odd_shop", "name": "Odd & Co <Shop>", "theme": "odd shop", "home": "home",
        "variables": [
            {"name": "size", "type": "enum", "values": ["S", "M"]},
            {"name": "day", "type": "enum", "values": days},
            {"name": "plan", "type": "enum", "values": ["Basic", "Pro"]},
            {"name": "gift", "type": "bool"},
            {"name": "open", "type": "bool"},
            {"name": "qty", "type": "int", "min": 0, "max": 3},
            {"name": "tags", "type": "list", "values": ["red", "blue"], "max_length": 2},
            {"name": "member", "type": "bool"},
        ],
        "pages": [{
            "id": "home", "title": "Order", "role": "form",
            "elements": [
                _el("size_pick", "select", options=["S", "M"]),
                _el("plan_pick", "radio", options=["Basic", "Pro"]),
                _el("section", "tabs", options=["One", "Two"]),
                _el("when", "date_picker", options=days),
                _el("typed_day", "date_picker", options=days),
                _el("gift_box", "checkbox"),
                _el("note", "text_input", placeholder="A note"),
                _el("qty_slider", "slider", min=0, max=3),
                _el("submit", "button"),
                _el("more", "hover_menu", options=["red", "blue"]),
                _el("menu_help", "link", parent="more"),
                _el("colours", "link", options=["red", "blue"]),
                _el("panel", "modal", visible_when=[{"var": "open", "op": "eq", "value": True}]),
                _el("panel_note", "text_input", parent="panel"),
                _el("panel_ok", "button", parent="panel"),
                _el("open_panel", "button"),
                _el("join", "button"),
                _el("start_over", "link"),
                _el("finish", "button"),
            ],
            "actions": [
                _act("order", [
                    {"op": "select", "element": "size_pick", "value": "{size}"},
                    {"op": "select", "element": "plan_pick", "value": "{plan}"},
                    {"op": "select", "element": "section", "value": "{sec}"},
                    {"op": "select", "element": "when", "value": "{day}"},
                    {"op": "check", "element": "gift_box"},
                    {"op": "type", "element": "note", "value": "{note}"},
                    {"op": "drag", "element": "qty_slider", "value": "{qty}"},
                    {"op": "click", "element": "submit"}],
                     params=[{"name": "size", "domain": ["S", "M"]},
                             {"name": "plan", "domain": ["Basic", "Pro"]},
                             {"name": "sec", "domain": ["One", "Two"]},
                             {"name": "day", "domain": days},
                             {"name": "note", "domain": ["hi"]},
                             {"name": "qty", "domain": [1, 2, 3]}],
                     effects=[{"op": "set_param", "var": "size", "param": "size"},
                              {"op": "set_param", "var": "qty", "param": "qty"}]),
                _act("type_day", [{"op": "type", "element": "typed_day", "value": "{d}"},
                                  {"op": "key_press", "element": "typed_day", "key": "Enter"}],
                     params=[{"name": "d", "domain": days}],
                     effects=[{"op": "set_param", "var": "day", "param": "d"}]),
                _act("tag_red", [{"op": "hover", "element": "more"},
                                 {"op": "click", "element": "more", "value": "red"}],
                     effects=[{"op": "append", "var": "tags", "value": "red"}]),
                _act("tag_blue", [{"op": "hover", "element": "more"},
                                  {"op": "click", "element": "more", "value": "blue"}],
                     effects=[{"op": "append", "var": "tags", "value": "blue"}]),
                _act("help", [{"op": "click", "element": "menu_help"}]),
                _act("colour", [{"op": "click", "element": "colours", "value": "{c}"}],
                     params=[{"name": "c", "domain": ["red", "blue"]}]),
                _act("open_it", [{"op": "click", "element": "open_panel"}],
                     effects=[{"op": "set", "var": "open", "value": True}]),
                _act("panel_save", [{"op": "type", "element": "panel_note", "value": "{n}"},
                                    {"op": "type", "element": "note", "value": "{m}"},
                                    {"op": "click", "element": "panel_ok"}],
                     params=[{"name": "n", "domain": ["x"]}, {"name": "m", "domain": ["y"]}],
                     effects=[{"op": "set", "var": "open", "value": False}]),
                # one button, two actions told apart by their guards
                _act("join_free", [{"op": "click", "element": "join"}],
                     guards=[{"var": "member", "op": "eq", "value": False}],
                     effects=[{"op": "set", "var": "member", "value": True}]),
                _act("join_again", [{"op": "click", "element": "join"}],
                     guards=[{"var": "member", "op": "eq", "value": True}],
                     effects=[{"op": "set", "var": "member", "value": False}]),
                _act("home_back", [{"op": "click", "element": "start_over"}], is_back=True,
                     effects=[{"op": "clear", "var": "tags"}]),
                _act("finish_up", [{"op": "click", "element": "finish"}], navigate="done"),
            ],
            "content": [{"kind": "list", "title": "Notes", "items": [{"text": "<b>bold</b>"}]},
                        {"kind": "table", "items": [{"a": "1", "b": "2"}]},
                        {"kind": "cards", "items": [{"title": "red", "price": "$1"}]},
                        {"kind": "form_note", "text": "All fields are optional."}],
        }, {
            # a success page that still has a form field, tabs and a menu
            "id": "done", "title": "Thanks", "terminal": True,
            "elements": [_el("again", "link"), _el("keep", "checkbox"),
                         _el("more_tabs", "tabs", options=["A", "B"])],
            "actions": [
                _act("done_back", [{"op": "click", "element": "again"}], navigate="home",
                     is_back=True),
                _act("keep_on", [{"op": "check", "element": "keep"}],
                     effects=[{"op": "set", "var": "gift", "value": True}]),
                _act("pick_tab", [{"op": "select", "element": "more_tabs", "value": "{t}"}],
                     params=[{"name": "t", "domain": ["A", "B"]}]),
            ],
            "content": [{"kind": "heading", "title": "Thanks"},
                        {"kind": "text", "text": "Your order is on its way."}],
        }],
    })


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory):
    spec = unusual_world()
    site = load_site(render_site(spec, tmp_path_factory.mktemp("o") / "site", theme="graphite"))
    return spec, site, make_environment(site), Machine(spec)


def test_unusual_widgets_meet_the_contract(odd) -> None:
    spec, site, env, machine = odd
    start = machine.initial_state()
    states = [start] + [t.target for t in machine.transitions(start)]
    opened = machine.step(start, "open_it", {}).state
    member = machine.step(start, "join_free", {}).state
    done = machine.step(start, "finish_up", {}).state
    for state in states + [opened, member, done]:
        html = render_page(site, env, machine, state, base="/o")
        assert check_page(html, spec, machine, state, base="/o") == [], state


def test_non_trigger_choices_fill_hidden_inputs_of_their_form(odd) -> None:
    spec, site, env, machine = odd
    nodes = list(parse_html(render_page(site, env, machine, machine.initial_state())).walk())
    held = {n.get("name"): n for n in nodes if n.tag == "input" and n.get("type") == "hidden"}
    assert form_owner(held["sec"]) == "ww-act-order" and form_owner(held["day"]) == "ww-act-order"
    pickers = [n for n in nodes if n.get("data-ww-pick")]
    assert {n.get("data-ww-value") for n in pickers} == {"One", "Two", *spec.page("home")
                                                         .elements[3].options}
    radios = [n for n in nodes if n.get("type") == "radio"]
    assert all(r.get("name") == "plan" and r.get("data-ww-submit") is None for r in radios)
    select = next(n for n in nodes if n.get("data-ww-id") == "size_pick")
    assert select.get("name") == "size" and select.get("data-ww-submit") is None
    gift = next(n for n in nodes if n.get("data-ww-id") == "gift_box")
    assert form_owner(gift) == "ww-act-order" and gift.get("data-ww-check") is None


def test_shared_trigger_submits_the_action_whose_guards_hold(odd) -> None:
    spec, site, env, machine = odd
    start = machine.initial_state()
    member = machine.step(start, "join_free", {}).state

    def join(state: State) -> str | None:
        doc = parse_html(render_page(site, env, machine, state))
        return next(n for n in doc.walk() if n.get("data-ww-id") == "join").get("form")

    assert join(start) == "ww-act-join_free" and join(member) == "ww-act-join_again"


def test_text_field_used_by_two_actions_mirrors_into_the_second(odd) -> None:
    spec, site, env, machine = odd
    opened = machine.step(machine.initial_state(), "open_it", {}).state
    nodes = list(parse_html(render_page(site, env, machine, opened)).walk())
    mirror = next(n for n in nodes if n.get("data-ww-mirror") == "note")
    assert (mirror.get("name"), mirror.get("form")) == ("m", "ww-act-panel_save")


def test_text_is_escaped(odd) -> None:
    spec, site, env, machine = odd
    html = render_page(site, env, machine, machine.initial_state())
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    assert "Odd &amp; Co &lt;Shop&gt;" in html
    assert html.count("All fields are optional.") == 1, "content is printed once"


def test_small_world_from_the_shared_fixture(tmp_path: Path) -> None:
    spec = make_small_world()
    site = load_site(render_site(spec, tmp_path / "small", theme="nordic"))
    env, machine = make_environment(site), Machine(spec)
    state = machine.initial_state()
    seen = {state}
    frontier = [state]
    while frontier:
        state = frontier.pop()
        html = render_page(site, env, machine, state)
        assert check_page(html, spec, machine, state) == [], state
        for t in machine.transitions(state):
            if t.target not in seen:
                seen.add(t.target)
                frontier.append(t.target)
    assert len(seen) > 10
