"""The fast env's snapshot capture (``webworld.rl.fast.capture.build_snapshot``): the way it
was (kept here, ``old``) against the library's (``new``), in the same run, on the same sites.

    .venv/bin/python bench/bench_snapshot.py              # bookstore + shipped flight world
    .venv/bin/python bench/bench_snapshot.py --quick      # the bookstore only
    .venv/bin/python bench/bench_snapshot.py --rounds 2   # each pair twice (old, new; new, old)

Sites: ``generate("online bookstore", "easy", 0)`` and ``fsm_specs/flight_booking_easy_s0``,
rendered into a temp dir (``--keep DIR`` keeps it). Each way runs in this process:

* ``old``: every state rendered twice with Jinja (without and with the flash placeholder);
  every layout loaded through a Playwright route (which turns Chromium's cache off, so the
  style sheet and script are fetched on every page), in a 1280 x 800 window, two tabs at
  once; facts and each config of the layout read in calls of their own, as structured values;
* ``new``: the library as it is now (``capture.default_workers()`` tabs: one on 2 CPUs).

Both write ``<site>/fast/snapshot.json.gz`` with ``save_snapshot``; the bytes of the two
files must be equal (the run exits 1 otherwise). First, a page function's result read
through the new JSON transfer is checked against Playwright's own (undefined, NaN, -0).

Columns: ``plan`` is ``plan_renders`` (Python only: the BFS and Jinja); ``capture`` is the
Chromium part (a server thread, Playwright's client and driver, Chromium). CPU is user+sys:
``python`` is this process (``getrusage(RUSAGE_SELF)``, less the sampler's own thread),
``browser`` is every process under it (Playwright's node driver and all of Chromium's),
sampled from ``/proc/<pid>/stat`` every 50 ms, each process's largest reading (Chromium's
renderers are not reaped through this process, so ``RUSAGE_CHILDREN`` misses them). CPU is
the measure (the test suite's and a build's budget on 2 cores); wall times are printed too,
and bend with the machine's load (printed).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchkit import load_note, make_console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webworld import contract  # noqa: E402
from webworld.browser.launch import launch_browser, new_context  # noqa: E402
from webworld.contract import WORLD_PREFIX  # noqa: E402
from webworld.errors import WebworldError  # noqa: E402
from webworld.render.site import Site, load_site, render_site  # noqa: E402
from webworld.render.view import make_environment, render_page  # noqa: E402
from webworld.rl.fast import capture  # noqa: E402
from webworld.spec.graph import DEFAULT_STATE_BUDGET, explore_states  # noqa: E402
from webworld.spec.semantics import Machine, State  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# --- the old way, as build_snapshot did it ------------------------------------------------------


def old_plan_renders(site: Site, machine: Machine) -> capture.RenderPlan:
    """Every state rendered with and without the placeholder; each distinct HTML kept once."""
    spec = site.spec
    env = make_environment(site)
    base = WORLD_PREFIX.format(world=spec.id)
    starts = sorted({t.start for t in spec.tasks if t.start}) + [None]
    seen: dict[State, None] = {}
    for start in starts:
        graph = explore_states(spec, start=start, budget=DEFAULT_STATE_BUDGET, machine=machine)
        seen.update(dict.fromkeys(graph.states))
    plan = capture.RenderPlan(list(seen), [], [], [])
    index: dict[str, int] = {}

    def layout(state: State, flash: str | None) -> int:
        html = render_page(site, env, machine, state, base=base, error=flash)
        digest = hashlib.sha1(html.encode()).hexdigest()
        if digest not in index:
            index[digest] = len(plan.htmls)
            plan.htmls.append(html)
            plan.pages.append(state.page)
        return index[digest]

    for state in plan.states:
        plan.table.append((layout(state, None), layout(state, capture.FLASH_PLACEHOLDER)))
    return plan


async def old_capture_layouts(site: Site, plan: capture.RenderPlan, workers: int
                              ) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    from webworld.browser.tab import BrowserTab
    from webworld.serve.app import SECURITY_HEADERS
    from webworld.serve.multi import create_multi_app
    from webworld.serve.runner import LiveServer

    base = WORLD_PREFIX.format(world=site.spec.id)
    layouts: list[dict[str, Any] | None] = [None] * len(plan.htmls)
    todo = iter(range(len(plan.htmls)))

    async def worker(browser: Any, url: str) -> None:
        context = await new_context(browser)
        tab = await BrowserTab.open(context)
        current = {"html": ""}

        async def fulfil(route: Any) -> None:
            await route.fulfill(status=200, body=current["html"], headers=dict(SECURITY_HEADERS),
                                content_type="text/html; charset=utf-8")

        await context.route(f"{url}{base}/page/**", fulfil)
        for i in todo:
            current["html"] = plan.htmls[i]
            await tab.goto(url + contract.PAGE_URL.format(base=base, page=plan.pages[i]))
            layouts[i] = await old_capture_layout(tab, plan.pages[i])
        await context.close()

    with LiveServer(create_multi_app([site.root])) as server:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                await asyncio.gather(*(worker(browser, server.url) for _ in range(workers)))
            finally:
                await browser.close()
    return [layout for layout in layouts if layout is not None]


async def old_capture_layout(tab: Any, page: str) -> dict[str, Any]:
    facts = await tab.page.evaluate(capture.FACTS_JS)
    configs = []
    for popups, menus in capture.configs_of(facts):
        got = await tab.page.evaluate(capture.CONFIG_JS, [popups, menus])
        if got["parkInMenu"]:
            raise WebworldError(f"page {page!r}: the pointer's resting corner lies on a hover menu")
        configs.append({
            "popups": popups, "menus": menus,
            "rows": [capture._slim(r) for r in got["rows"]],
            "hits": {int(k): v for k, v in got["hits"].items()},
            "inplace": {int(m): {int(a): {int(k): v for k, v in row.items()}
                                 for a, row in anchors.items()}
                        for m, anchors in got["inplace"].items()},
        })
    return {"page": page, "facts": facts, "configs": configs}


# --- measuring -----------------------------------------------------------------------------------


class ProcessTree:
    """CPU seconds of every process below this one, sampled from /proc while it runs."""

    def __init__(self, interval_s: float = 0.05) -> None:
        self.interval_s = interval_s
        self.latest: dict[int, float] = {}
        self.sampler_cpu = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        children: dict[int, list[tuple[int, float]]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:  # it ended meanwhile
                continue
            cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime
            children.setdefault(int(fields[1]), []).append((int(name), cpu))
        stack = [os.getpid()]
        while stack:
            for pid, cpu in children.get(stack.pop(), []):
                self.latest[pid] = max(self.latest.get(pid, 0.0), cpu)
                stack.append(pid)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()
        self._sample()
        self.sampler_cpu = time.thread_time()

    def __enter__(self) -> ProcessTree:
        self._sample()
        self.before = dict(self.latest)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def cpu(self) -> float:
        return sum(cpu - self.before.get(pid, 0.0) for pid, cpu in self.latest.items())


def self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Phase:
    wall: float = 0.0
    python: float = 0.0
    browser: float = 0.0

    @property
    def cpu(self) -> float:
        return self.python + self.browser


def timed(work: Callable[[], Any]) -> tuple[Any, Phase]:
    wall, cpu = time.perf_counter(), self_cpu()
    with ProcessTree() as tree:
        out = work()
    return out, Phase(time.perf_counter() - wall, self_cpu() - cpu - tree.sampler_cpu, tree.cpu)


@dataclass
class Run:
    site: str
    way: str
    states: int
    layouts: int
    plan: Phase
    capture: Phase
    digest: str
    baseline: Run | None = None  # the old way's run of the same pair


def run_way(name: str, site: Site, way: str, workers: int | None) -> Run:
    """Build the site's snapshot the old or the new way; the file's digest."""
    path = capture.snapshot_path(site)
    path.unlink(missing_ok=True)
    machine = Machine(site.spec)
    if way == "old":
        plan, planned = timed(lambda: old_plan_renders(site, machine))
        layouts, captured = timed(lambda: asyncio.run(old_capture_layouts(site, plan,
                                                                          workers or 2)))
    else:
        plan, planned = timed(lambda: capture.plan_renders(site, machine))
        layouts, captured = timed(lambda: capture.capture_layouts(site, plan, workers=workers))
    capture.save_snapshot(site, plan, layouts)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return Run(name, way, len(plan.states), len(plan.htmls), planned, captured, digest)


# Values Playwright's transfer turns into something JSON.stringify alone would not keep.
AWKWARD_JS = """(arg) => ({gone: undefined, nan: NaN, zero: -0, big: Infinity, list: [undefined,
  -Infinity, 1.5, 2], text: "a\\u0001ww:b \\"q\\"", none: null, keys: {1: true, 0: false}, arg})"""


async def transfer_matches() -> bool:
    """The capture's JSON transfer (capture.AS_JSON_JS) reads a page function's result as
    Playwright's structured transfer does."""
    import json

    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        page = await (await new_context(browser)).new_page()
        direct = await page.evaluate(AWKWARD_JS, [1, "z"])
        text = await page.evaluate(capture.AS_JSON_JS.replace("(FN)", f"({AWKWARD_JS})"), [1, "z"])
        await browser.close()
    return repr(direct) == repr(json.loads(text))  # repr: nan != nan


def prepare(root: Path, quick: bool) -> dict[str, Site]:
    from webworld.propose.procedural import generate
    from webworld.spec.io import load_spec

    specs = {"bookstore (easy s0)": generate("online bookstore", "easy", 0).spec}
    if not quick:
        specs["flight (shipped)"] = load_spec(ROOT / "fsm_specs" / "flight_booking_easy_s0.json")
    sites = {}
    for name, spec in specs.items():
        folder = root / spec.id
        if not (folder / "manifest.json").is_file():
            render_site(spec, folder)
        sites[name] = load_site(folder)
    return sites


def report(runs: list[Run]) -> Table:
    table = Table("site", "way", "states", "layouts", "plan cpu s", "capture wall s",
                  "capture cpu s (python + browser)", "total cpu s", "total wall s",
                  "cpu new/old", "wall new/old", "snapshot", title="build_snapshot, old vs new")
    for r in runs:
        cpu, wall = r.plan.cpu + r.capture.cpu, r.plan.wall + r.capture.wall
        base = r.baseline
        ratios = ["", ""]
        if base:
            ratios = [f"{cpu / (base.plan.cpu + base.capture.cpu):.2f}",
                      f"{wall / (base.plan.wall + base.capture.wall):.2f}"]
        table.add_row(r.site, r.way, str(r.states), str(r.layouts), f"{r.plan.cpu:.2f}",
                      f"{r.capture.wall:.2f}",
                      f"{r.capture.cpu:.2f} ({r.capture.python:.2f} + {r.capture.browser:.2f})",
                      f"{cpu:.2f}", f"{wall:.2f}", *ratios, r.digest)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the bookstore only")
    parser.add_argument("--rounds", type=int, default=1, help="old/new pairs per site")
    parser.add_argument("--workers", type=int, default=None,
                        help="tabs capturing at once, both ways (default: old 2, as it was; "
                             "new capture.default_workers())")
    parser.add_argument("--keep", type=Path, default=None, help="render the sites here")
    args = parser.parse_args()
    console = make_console()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-snapshot-"))
    sites = prepare(root, args.quick)
    tabs = (args.workers, args.workers) if args.workers else (2, capture.default_workers())
    console.print(f"[dim]sites in {root}; tabs: old {tabs[0]}, new {tabs[1]}; {load_note()}[/]")
    if not asyncio.run(transfer_matches()):
        console.print("[red]the JSON transfer reads a result unlike Playwright's[/]")
        raise SystemExit(1)
    runs: list[Run] = []
    equal = True
    for name, site in sites.items():
        for round_ in range(args.rounds):
            ways = ("old", "new") if round_ % 2 == 0 else ("new", "old")
            pair = {}
            for way in ways:
                pair[way] = run_way(name, site, way, args.workers)
                runs.append(pair[way])
                console.print(f"[dim]{name} {way}: {pair[way].capture.wall:.1f} s; "
                              f"{load_note()}[/]")
            pair["new"].baseline = pair["old"]
            equal &= pair["old"].digest == pair["new"].digest
    console.print(report(runs))
    console.print("snapshot bytes equal, old and new: " + ("[green]yes[/]" if equal else "[red]NO[/]"))
    console.print(f"[dim]{load_note()}[/]")
    if not equal:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
