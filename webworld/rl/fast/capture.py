"""Capture a world's pages once in Chromium, so the fast environment needs no browser.

A page's HTML is a function of the true state and of the message a refused action
left (its *flash*), and different states often render the same HTML. The capture
renders every reachable state with :func:`webworld.render.view.render_page` (as the
server does), with and without a placeholder message, keeps each distinct HTML once,
loads it in Chromium at its real URL and records, for each *layout*:

* ``facts``: every element a page script or a form touches (controls, forms, menus,
  calendars, pickers), with the attributes and relations the client model needs;
* ``configs``: for each set of open calendars and menus, the observation rows (the
  walk of :mod:`webworld.browser.observe`), what covers each element at the centre of
  the viewport (the placement of :mod:`webworld.browser.tab`), and the same for
  actions taken in place inside a hovered menu.

The snapshot is one gzipped JSON file in the site folder, keyed by a fingerprint of
the site's files and of this capture code, so a re-rendered site is captured again.

What it costs is CPU, nearly all of it Chromium's page loads (``bench/bench_snapshot.py``
measures it against the way it was, and checks the snapshot's bytes stay the same): a
state's template is rendered only when its page's context is new, a page is served from
memory with the site's static files cached, the window around the emulated viewport is
small (Chromium draws it in software), a layout's configs are read in one call as JSON,
and on a machine with few CPUs one tab captures at a time.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webworld import __version__, contract
from webworld.browser.launch import launch_browser, new_context
from webworld.browser.observe import WALK_JS
from webworld.browser.placement import PLACE_FN
from webworld.contract import WORLD_PREFIX
from webworld.errors import WebworldError
from webworld.fsio import atomic_write_bytes
from webworld.render.site import GENERATOR, Site
from webworld.render.view import make_environment, page_context, render_page
from webworld.spec.graph import DEFAULT_STATE_BUDGET, explore_states
from webworld.spec.semantics import Machine, State

if TYPE_CHECKING:  # capturing needs a browser; loading a snapshot does not
    from fastapi import FastAPI
    from playwright.async_api import BrowserContext, Page

    from webworld.browser.tab import BrowserTab

FORMAT = "webworld-fast/1"
SNAPSHOT = Path("fast") / "snapshot.json.gz"
FLASH_PLACEHOLDER = "WWFLASH0x7f3a"
"""Stands for a refused action's message in a captured page; the fast env puts the real one in."""

FACTS_JS = r"""
() => {
  const all = Array.from(document.querySelectorAll("*"));
  const keyOf = new Map(all.map((e, i) => [e, i]));
  const k = (e) => (e ? keyOf.get(e) ?? null : null);
  const byId = (id) => (id ? document.getElementById(id) : null);
  const path = (u) => { const x = new URL(u, location.href); return x.pathname + x.search; };
  const SEL = "input, select, button, textarea, a[href], form, output, .menu, .menu-button, " +
    "[data-ww-part], .date-popup, .datepicker, .date-input, [data-ww-pick], [data-ww-id], [role=tab]";
  const CLASSES = ["menu", "menu-button", "is-open", "date-popup", "datepicker", "date-input"];
  const out = [];
  for (const el of document.querySelectorAll(SEL)) {
    const a = (n) => el.getAttribute(n);
    const f = {key: k(el), tag: el.tagName, type: (el.type || "").toLowerCase(), id: el.id || null,
      name: a("name"), role: a("role"), form: el.tagName !== "FORM" && el.form ? el.form.id : null,
      form_attr: a("form"), value: "value" in el ? String(el.value ?? "") : null,
      value_attr: a("value"), checked: !!el.checked, disabled: !!el.disabled,
      readonly: !!el.readOnly, hidden: !!el.hidden,
      classes: CLASSES.filter((c) => el.classList.contains(c)),
      submit: a("data-ww-submit"), check: a("data-ww-check"), uncheck: a("data-ww-uncheck"),
      pick: k(byId(a("data-ww-pick"))), value_of: a("data-ww-value"),
      mirror: el.hasAttribute("data-ww-mirror")
        ? k(document.querySelector('[data-ww-id="' + CSS.escape(a("data-ww-mirror")) + '"]')) : null,
      is_mirror: el.hasAttribute("data-ww-mirror"), unset: el.hasAttribute("data-ww-unset"),
      part: a("data-ww-part"), ww_id: a("data-ww-id"), controls: k(byId(a("aria-controls"))),
      expanded: a("aria-expanded"), aria_selected: a("aria-selected"),
      menu: k(el.closest(".menu")), popup: k(el.closest(".date-popup")),
      container: k(el.closest("[data-ww-id]")), toggle_up: k(el.closest("[data-ww-part='toggle']")),
      pick_up: k(el.closest("[data-ww-pick]")), display_up: k(el.closest(".date-input[readonly]")),
      menubutton_up: k(el.closest(".menu-button"))};
    if (el.tagName === "A") f.href = path(el.href);
    if (el.tagName === "FORM") {
      f.action = path(el.action); f.method = (el.method || "get").toUpperCase();
      f.elements = Array.from(el.elements, k);
    }
    if (el.tagName === "SELECT") {
      f.selected = el.selectedIndex;
      f.options = Array.from(el.options, (o) => ({text: o.text, value: o.value,
        disabled: o.disabled, form: o.getAttribute("data-ww-form")}));
    }
    if (el.tagName === "OUTPUT") {
      f.for = Array.from(el.htmlFor, (i) => k(byId(i)));
      f.text = el.textContent;
    }
    if (el.type === "range") { f.min = el.min; f.max = el.max; f.step = el.step; }
    if (f.classes.includes("menu")) f.menu_button = k(el.querySelector(".menu-button"));
    if (el.hasAttribute("data-ww-id")) {
      f.pickers = Array.from(el.querySelectorAll("[data-ww-pick]"), k);
      f.date_input = k(el.querySelector(".date-input"));
    }
    if (f.classes.includes("date-input")) {
      const box = el.closest(".datepicker");
      f.box_toggle = k(box ? box.querySelector("[data-ww-part='toggle']") : null);
    }
    out.push(f);
  }
  return out;
}
"""

# Rows and placements with the given calendars shown and menus open (forced the way
# site.js opens them), then everything put back.
CONFIG_JS = "([popups, menus]) => {" + PLACE_FN + "const walk = " + WALK_JS.strip() + r""";
  const all = Array.from(document.querySelectorAll("*"));
  const saved = [];
  for (const k of popups) { saved.push([all[k], "hidden", all[k].hidden]); all[k].hidden = false; }
  for (const k of menus) {
    saved.push([all[k], "open", all[k].classList.contains("is-open")]);
    all[k].classList.add("is-open");
  }
  const rows = walk({capture: true});
  const keys = rows.filter((r) => r[1] === "node").map((r) => r[4].key);
  const hits = {};
  for (const k of keys) hits[k] = placeOf(all[k], false).covered || null;
  const inplace = {};
  for (const m of menus) {
    const inside = keys.filter((k) => all[m].contains(all[k]));
    inplace[m] = {};
    for (const anchor of inside) {
      placeOf(all[anchor], false);
      inplace[m][anchor] = {};
      for (const k of inside) inplace[m][anchor][k] = placeOf(all[k], true).covered || null;
    }
  }
  window.scrollTo(0, 0);
  const corner = document.elementFromPoint(0, 0);
  const parkInMenu = !!(corner && corner.closest(".menu"));
  for (const [el, what, old] of saved) {
    if (what === "hidden") el.hidden = old; else el.classList.toggle("is-open", old);
  }
  return {rows, hits, inplace, parkInMenu};
}"""

ROW_FACTS = ("bid", "role", "name", "tag", "type", "disabled", "readonly", "checked", "value",
             "selected", "expanded", "options", "min", "max", "step", "key")


def capture_code_hash() -> str:
    """Changes when anything the capture's meaning depends on changes: its own page code, the
    sites' script, and the code that turns a state into a page (the server renders a site's
    templates with it, so a change there changes every site's pages)."""
    import inspect

    from webworld.render import plan, view
    from webworld.render.assets.js import SITE_JS

    text = "\0".join([FORMAT, FACTS_JS, CONFIG_JS, SITE_JS, GENERATOR,
                       inspect.getsource(view), inspect.getsource(plan)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def site_fingerprint(site: Site) -> str:
    digest = hashlib.sha256(capture_code_hash().encode())
    for path in sorted(p for p in site.root.rglob("*") if p.is_file() and "fast" not in p.parts):
        digest.update(path.relative_to(site.root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


# --- which pages to capture ---------------------------------------------------------------------


@dataclass
class RenderPlan:
    """Every reachable state, and the layout (distinct HTML) each shows, without a
    message and with one."""

    states: list[State]
    htmls: list[str]
    pages: list[str]                    # the page of each layout
    table: list[tuple[int, int]]        # state index -> (layout, layout with a message)


def plan_renders(site: Site, machine: Machine, *, state_budget: int = DEFAULT_STATE_BUDGET
                 ) -> RenderPlan:
    spec = site.spec
    env = make_environment(site)
    base = WORLD_PREFIX.format(world=spec.id)
    starts = sorted({t.start for t in spec.tasks if t.start}) + [None]
    seen: dict[State, None] = {}
    for start in starts:
        graph = explore_states(spec, start=start, budget=state_budget, machine=machine)
        if graph.truncated:
            raise WebworldError(f"{spec.id}: more than {state_budget} reachable states; the fast "
                                "environment needs them all (raise --state-budget)")
        seen.update(dict.fromkeys(graph.states))
    plan = RenderPlan(list(seen), [], [], [])
    index: dict[str, int] = {}
    by_input: dict[tuple[str, str], int] = {}

    def layout(state: State, flash: str | None) -> int:
        # render_page prints the page's template with page_context's views: states whose
        # context is equal give equal HTML, so only the first of them is rendered
        key = (state.page, page_context(site, machine, state, base=base, error=flash)
               .model_dump_json())
        known = by_input.get(key)
        if known is not None:
            return known
        html = render_page(site, env, machine, state, base=base, error=flash)
        digest = hashlib.sha1(html.encode()).hexdigest()
        if digest not in index:
            index[digest] = len(plan.htmls)
            plan.htmls.append(html)
            plan.pages.append(state.page)
        by_input[key] = index[digest]
        return index[digest]

    for state in plan.states:
        plan.table.append((layout(state, None), layout(state, FLASH_PLACEHOLDER)))
    return plan


def configs_of(facts: list[dict[str, Any]]) -> list[tuple[list[int], list[int]]]:
    """(calendars shown, menus open) combinations site.js can reach: at most one calendar
    or clicked-open menu, plus at most one hovered menu."""
    popups = [f["key"] for f in facts if "date-popup" in f["classes"]]
    menus = [f["key"] for f in facts if "menu" in f["classes"]]
    out: dict[tuple[frozenset[int], frozenset[int]], None] = {}
    for opened in [None, *popups, *menus]:
        for hovered in [None, *menus]:
            shown = {k for k in (opened, hovered) if k is not None}
            out[(frozenset(shown & set(popups)), frozenset(shown & set(menus)))] = None
    return [(sorted(p), sorted(m)) for p, m in out]


# --- capturing in Chromium ----------------------------------------------------------------------

# Every config of a layout in one call, in order (each CONFIG_JS puts the page back as it was).
CONFIGS_JS = "(list) => { const one = " + CONFIG_JS + "; return list.map((c) => one(c)); }"

# A page function's result as one JSON string: Playwright's client checks a structured value
# value by value (see webworld.browser.tab's _CALL_JS), json.loads reads the string in C. The
# replacer keeps what Playwright's own transfer gives: undefined as null; NaN, Infinity and -0
# as those floats (marked, then written as the literals Python's json reads; a string of the
# page that looks like a mark is refused rather than read wrong).
AS_JSON_JS = r"""(arg) => {
  const tag = "\u0001ww:";
  const text = JSON.stringify((FN)(arg), (k, v) => {
    if (v === undefined) return null;
    if (typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0)))
      return tag + (Object.is(v, -0) ? "-0.0" : String(v));
    if (typeof v === "string" && v.startsWith(tag)) throw new Error("a string starts with " + tag);
    return v;
  });
  return text.includes("\\u0001ww:") ? text.replace(/"\\u0001ww:([^"]*)"/g, "$1") : text;
}"""

FACTS_CALL = AS_JSON_JS.replace("(FN)", f"({FACTS_JS})")
CONFIGS_CALL = AS_JSON_JS.replace("(FN)", f"({CONFIGS_JS})")

WINDOW_BOUNDS = {"width": 500, "height": 200}
"""A capturing tab's window (500 is the narrowest Chromium's browser UI allows)."""

TAB_HEADER = "x-ww-capture-tab"
"""Names the capturing tab in its requests, so the server answers it with that tab's layout."""


def _capture_app(site: Site, current: dict[str, str]) -> FastAPI:
    """The site's own server, except that a page URL answers with the HTML the asking tab
    captures now. A real response rather than a Playwright route: routing turns Chromium's
    cache off, and every page load would fetch the style sheet and script again."""
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route

    from webworld.serve.app import NO_STORE, SECURITY_HEADERS
    from webworld.serve.multi import create_multi_app

    async def page(request: Request) -> Response:
        html = current.get(request.headers.get(TAB_HEADER, ""))
        if html is None:
            return Response(status_code=404)
        return HTMLResponse(html, headers={**SECURITY_HEADERS, **NO_STORE})

    app = create_multi_app([site.root])
    base = WORLD_PREFIX.format(world=site.spec.id)
    app.router.routes.insert(0, Route(contract.PAGE_URL.format(base=base, page="{page:path}"),
                                      page))
    return app


async def _shrink_window(context: BrowserContext, page: Page) -> None:
    """Make the tab's window small. The page keeps its viewport (Playwright emulates it), so
    its layout, hit tests and script see the same page; but Chromium draws every frame of the
    window in software, browser UI included, at the window's size: at 1280 x 800 that was
    17-30% of the capture's CPU. Not smaller: a window with no room left for the page below
    the browser's toolbar (under about 80 pixels high) gets its frames throttled, and every
    page load waits. Chromium without browser windows (a headless shell) has none to shrink."""
    from playwright.async_api import Error as PlaywrightError

    cdp = await context.new_cdp_session(page)
    try:
        window = await cdp.send("Browser.getWindowForTarget")
        await cdp.send("Browser.setWindowBounds", {"windowId": window["windowId"],
                                                   "bounds": WINDOW_BOUNDS})
    except PlaywrightError:  # a headless shell: no window to shrink, the capture goes on as is
        pass
    finally:
        await cdp.detach()


async def _capture_layouts(site: Site, plan: RenderPlan, workers: int,
                           progress: Callable[[int, int], None] | None) -> list[dict[str, Any]]:
    """Load every layout at its real URL (static files cached from the site's server) in
    ``workers`` tabs at once, and capture it."""
    from playwright.async_api import async_playwright

    from webworld.browser.tab import BrowserTab
    from webworld.serve.runner import LiveServer

    base = WORLD_PREFIX.format(world=site.spec.id)
    layouts: list[dict[str, Any] | None] = [None] * len(plan.htmls)
    todo = iter(range(len(plan.htmls)))
    done = [0]
    current: dict[str, str] = {}  # tab name -> the HTML it loads now

    async def worker(browser: Any, url: str, name: str) -> None:
        context = await new_context(browser)
        await context.set_extra_http_headers({TAB_HEADER: name})
        tab = await BrowserTab.open(context)
        await _shrink_window(context, tab.page)
        for i in todo:
            current[name] = plan.htmls[i]
            await tab.goto(url + contract.PAGE_URL.format(base=base, page=plan.pages[i]))
            layouts[i] = await _capture_layout(tab, plan.pages[i])
            done[0] += 1
            if progress:
                progress(done[0], len(plan.htmls))
        await context.close()

    with LiveServer(_capture_app(site, current)) as server:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                await asyncio.gather(*(worker(browser, server.url, str(n))
                                       for n in range(max(1, workers))))
            finally:
                await browser.close()
    return [layout for layout in layouts if layout is not None]


async def _evaluate(tab: BrowserTab, call: str, arg: Any = None) -> Any:
    return json.loads(await tab.page.evaluate(call, arg))


async def _capture_layout(tab: BrowserTab, page: str) -> dict[str, Any]:
    facts = await _evaluate(tab, FACTS_CALL)
    wanted = configs_of(facts)
    configs = []
    for (popups, menus), got in zip(wanted, await _evaluate(tab, CONFIGS_CALL,
                                                           [[p, m] for p, m in wanted])):
        if got["parkInMenu"]:
            raise WebworldError(f"page {page!r}: the pointer's resting corner lies on a hover menu")
        configs.append({
            "popups": popups, "menus": menus,
            "rows": [_slim(r) for r in got["rows"]],
            "hits": {int(k): v for k, v in got["hits"].items()},
            "inplace": {int(m): {int(a): {int(k): v for k, v in row.items()}
                                 for a, row in anchors.items()}
                        for m, anchors in got["inplace"].items()},
        })
    return {"page": page, "facts": facts, "configs": configs}


def _slim(row: list[Any]) -> list[Any]:
    depth, kind, role, text, facts = row
    if kind == "node":
        facts = {k: facts[k] for k in ROW_FACTS if k in facts}
    return [depth, kind, role, text, facts]


# --- the snapshot file ---------------------------------------------------------------------------


def snapshot_path(site: Site) -> Path:
    return site.root / SNAPSHOT


def default_workers() -> int:
    """Tabs capturing at once: two where there are at least 4 CPUs to run them. On 2 busy
    CPUs a second tab took about 25% more CPU (part of Chromium's work per page load comes
    with the load's wall time) and the capture was no sooner."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 if (cpus or 1) >= 4 else 1


def build_snapshot(site: Site, *, state_budget: int = DEFAULT_STATE_BUDGET,
                   workers: int | None = None,
                   progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Capture every layout of ``site`` and write ``<site>/fast/snapshot.json.gz``
    (``workers`` tabs at once, :func:`default_workers` if None)."""
    generator = site.manifest.get("generator", "")
    if generator != GENERATOR:
        raise WebworldError(f"the fast environment reproduces sites of the built-in renderer "
                            f"({GENERATOR}); this one was made by {generator or 'an unknown tool'} "
                            "(render it again, or use the live environment)", str(site.root))
    plan = plan_renders(site, Machine(site.spec), state_budget=state_budget)
    return save_snapshot(site, plan, capture_layouts(site, plan, workers=workers,
                                                     progress=progress))


def capture_layouts(site: Site, plan: RenderPlan, *, workers: int | None = None,
                    progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Every layout of ``plan`` captured in Chromium, in the plan's order."""
    tabs = default_workers() if workers is None else workers
    return asyncio.run(_capture_layouts(site, plan, tabs, progress))


def save_snapshot(site: Site, plan: RenderPlan, layouts: list[dict[str, Any]]) -> dict[str, Any]:
    """Write the snapshot of ``plan``'s states and their captured layouts; return it."""
    snapshot = {
        "format": FORMAT, "webworld": __version__, "world": site.spec.id,
        "fingerprint": site_fingerprint(site), "placeholder": FLASH_PLACEHOLDER,
        "states": [[s.page, [list(v) if isinstance(v, tuple) else v for v in s.values]]
                   for s in plan.states],
        "table": plan.table, "layouts": layouts,
    }
    data = json.dumps(snapshot, ensure_ascii=False, separators=(",", ":")).encode()
    atomic_write_bytes(snapshot_path(site), gzip.compress(data, compresslevel=6, mtime=0))
    return snapshot


def load_snapshot(site: Site) -> dict[str, Any] | None:
    """The site's snapshot if it exists and matches the site and this code, else None."""
    path = snapshot_path(site)
    if not path.is_file():
        return None
    try:
        snapshot = json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, ValueError, EOFError):
        return None
    if snapshot.get("format") != FORMAT or snapshot.get("fingerprint") != site_fingerprint(site):
        return None
    return snapshot
