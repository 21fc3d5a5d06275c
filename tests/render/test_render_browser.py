"""Rendered pages driven in real Chromium with the contract's gestures reach the FSM's states.

A minimal loopback server (stdlib, one session) stands in for ``webworld.serve`` so the
renderer's HTML and site.js are tested on their own: hover menus, native selects,
checkbox check / uncheck, slider drags, tabs, radios, date pickers and Enter in a search
box must each submit exactly the action the spec says, with the right parameters.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from webworld import contract
from webworld.browser.launch import chromium_path
from webworld.render import Site, load_site, make_environment, render_page, render_site
from webworld.render.assets import RANGE_THUMB_PX
from webworld.render.plan import option_text, visible_ids
from webworld.spec.io import load_spec
from webworld.spec.models import Element, GuiStep
from webworld.spec.semantics import Machine, State, Transition

# scripts/setup.sh installs Debian's chromium: without it this module fails, it never skips
CHROMIUM = chromium_path()

SPECS = Path(__file__).parents[2] / "fsm_specs"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CSP = "default-src 'self'; script-src 'self'; style-src 'self'"


class World:
    def __init__(self, site: Site) -> None:
        self.site, self.env, self.machine = site, make_environment(site), Machine(site.spec)
        self.state = self.machine.initial_state()
        self.base = f"/w/{site.spec.id}"

    def params(self, action_id: str, form: dict[str, str]) -> dict[str, object]:
        action = self.machine.actions[action_id][1]
        out: dict[str, object] = dict(form)
        for p in action.params:
            if p.name in form:
                out[p.name] = next((d for d in p.domain if option_text(d) == form[p.name]),
                                   form[p.name])
        return out


def _handler(worlds: dict[str, World]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def reply(self, code: int, body: bytes = b"", ctype: str = "text/html; charset=utf-8",
                  location: str | None = None) -> None:
            self.send_response(code)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def route(self, form: dict[str, str] | None) -> None:
            parts = urllib.parse.urlparse(self.path).path.split("/", 4)  # '', w, id, kind, rest
            world = worlds.get(parts[2]) if len(parts) > 3 else None
            if world is None:
                return self.reply(404)
            kind, rest = parts[3], parts[4] if len(parts) > 4 else ""
            if kind == "static" and form is None:
                path = world.site.root / "static" / rest
                ctype = {"css": "text/css", "js": "text/javascript", "svg": "image/svg+xml"}
                return self.reply(200, path.read_bytes(), ctype[path.suffix[1:]])
            if kind == "act":
                result = world.machine.step(world.state, rest, world.params(rest, form or {}))
                if result.ok:
                    world.state = result.state
                    return self.reply(303, location=f"{world.base}/page/{world.state.page}")
                html = render_page(world.site, world.env, world.machine, world.state,
                                   base=world.base, error=result.message)
                return self.reply(200, html.encode())
            html = render_page(world.site, world.env, world.machine, world.state, base=world.base)
            return self.reply(200, html.encode())

        def do_GET(self) -> None:
            self.route(None)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            self.route(dict(urllib.parse.parse_qsl(body, keep_blank_values=True)))

    return Handler


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("sites")
    worlds = {}
    for name, theme in (("online_bookstore_medium_s1", "blossom"),
                        ("flight_booking_easy_s0", "ember"), ("bug_tracker_medium_s0", "nordic")):
        spec = load_spec(SPECS / f"{name}.json")
        worlds[spec.id] = World(load_site(render_site(spec, root / spec.id, theme=theme)))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(worlds))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(5000)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        yield worlds, f"http://127.0.0.1:{server.server_address[1]}", page, errors
        browser.close()
    server.shutdown()


def _usable(machine: Machine, state: State, t: Transition) -> bool:
    """A person can do it: every element it uses is shown and not behind an open overlay."""
    page = machine.spec.page(state.page)
    shown = set(visible_ids(page, machine, state))
    els = {e.id: e for e in page.elements}
    blockers = {e.id for e in page.elements if e.id in shown and e.blocking}

    def under_overlay(eid: str | None) -> bool:
        while eid is not None and eid in els:
            if eid in blockers:
                return True
            eid = els[eid].parent
        return False

    steps = machine.actions[t.action][1].gui
    return all(s.element in shown and (not blockers or under_overlay(s.element)) for s in steps)


def _path(machine: Machine, start: State, action: str, params: dict) -> list[Transition]:
    """Shortest usable path from ``start`` ending with ``action(params)``."""
    want = tuple(sorted(params.items()))
    prev: dict[State, tuple[State, Transition] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        for t in machine.transitions(state):
            if not _usable(machine, state, t):
                continue
            if t.action == action and t.params == want:
                path = [t]
                while prev[state] is not None:
                    state, step = prev[state]  # type: ignore[misc]
                    path.append(step)
                return path[::-1]
            if t.target not in prev and len(prev) < 20000:
                prev[t.target] = (state, t)
                queue.append(t.target)
    raise AssertionError(f"{action}{params} is not reachable")


def _gesture(page, el: Element, step: GuiStep, params: dict) -> None:
    sel = contract.element_selector(step.element)
    value = step.value
    for name, v in params.items():
        value = value.replace("{" + name + "}", option_text(v)) if value else value
    if step.op == "click":
        page.click(contract.value_selector(step.element, value) if value else sel)
    elif step.op == "hover":
        page.hover(sel)
    elif step.op == "type":
        page.click(sel)
        page.keyboard.type(value)
    elif step.op == "key_press":
        page.press(sel, step.key or "Enter")
    elif step.op in ("check", "uncheck"):
        page.click(sel)
    elif step.op == "select" and el.kind == "select":
        page.select_option(sel, label=value)
    elif step.op == "select" and el.kind == "date_picker":
        page.click(f"{sel} [{contract.PART_ATTR}=toggle]")
        page.click(contract.value_selector(step.element, value))
    elif step.op == "select":
        page.click(contract.value_selector(step.element, value))
    elif step.op == "drag":
        box = page.locator(sel).bounding_box()
        lo, hi = el.min or 0, el.max or 10
        half = RANGE_THUMB_PX / 2

        def x(v: float) -> float:
            return box["x"] + half + (v - lo) / (hi - lo) * (box["width"] - RANGE_THUMB_PX)

        y = box["y"] + box["height"] / 2
        page.mouse.move(x(float(page.locator(sel).input_value())), y)
        page.mouse.down()
        page.mouse.move(x(float(value)), y, steps=6)
        page.mouse.up()
    else:
        raise AssertionError(step.op)


def _perform(world: World, page, t: Transition) -> None:
    page_id, action = world.machine.actions[t.action]
    els = {e.id: e for e in world.site.spec.page(page_id).elements}
    params = dict(t.params)
    for i, step in enumerate(action.gui):
        if i == len(action.gui) - 1:
            with page.expect_navigation():
                _gesture(page, els[step.element], step, params)
        else:
            _gesture(page, els[step.element], step, params)
    assert world.state == t.target, f"{t.action}{params} led to {world.machine.describe(world.state)}"


TARGETS = {
    "online_bookstore_medium_s1": [
        ("home_browse", {"category": "History"}),                    # hover menu
        ("results_choose_results_sort", {"results_sort": "Top rated"}),  # native select
        ("results_filter_on", {}), ("results_filter_off", {}),       # check / uncheck
        ("detail_open_detail_tab", {"tab": "Details"}),              # tabs
        ("review_write_a_review_set_review_rating", {"review_rating": 4}),  # slider drag
    ],
    "flight_booking_easy_s0": [
        ("booking_your_booking_choose_booking_date", {"booking_date": "2027-04-18"}),
        ("home_choose_home_helpful", {"home_helpful": "No"}),       # radio
    ],
    "bug_tracker_medium_s0": [("home_search", {"query": "high priority"})],  # type + Enter
}


@pytest.mark.parametrize("world_id", sorted(TARGETS))
def test_gestures_drive_the_machine(served, world_id: str) -> None:
    worlds, origin, page, errors = served
    world = worlds[world_id]
    page.goto(f"{origin}{world.base}/page/{world.state.page}")
    done = []
    for action, params in TARGETS[world_id]:
        for t in _path(world.machine, world.state, action, params):
            _perform(world, page, t)
            done.append(t.action)
    assert action in done
    assert errors == []
