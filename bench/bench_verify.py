"""Benchmarks of verification: webworld's verifier against a bare Playwright replay.

Run from the project root::

    .venv/bin/python bench/bench_verify.py            # full: ~60 candidates, 1/2/4/8 contexts
    .venv/bin/python bench/bench_verify.py --quick    # smoke run: ~16 candidates, 1/4 contexts
    .venv/bin/python bench/bench_verify.py --transition navigate   # sites that load pages
    .venv/bin/python bench/bench_verify.py --density  # sparse (generator 2) vs dense (3) pages

Setup. Two worlds (``online bookstore`` and ``hotel booking``, profile ``medium``, seed 0:
every widget kind, hover menus and slider drags included) are generated, rendered and
explored into a temp dir (shortest paths only), capped to about 30 candidates each (quick:
8), as sites that update in place (``--transition swap``, the default) or that load a page
per action (``navigate``), and served by one ``LiveServer(create_multi_app(...))`` in this process (a uvicorn
thread). A short bare warm-up run goes first and is discarded. Every run replays exactly
the same candidates.

What is measured (wall time, ``time.perf_counter``, around the whole run: starting
Playwright and Chromium, opening the contexts, replaying, closing):

1. Throughput, per number of browser contexts (pages run concurrently, one Chromium):

   * ``bare``: a plain Playwright script. Per candidate: clear the context's cookies (a
     fresh cookie jar; the verifier does the same), ``page.goto`` the world, then for every
     gesture ``webworld.verify.gestures.gestures`` plans, ``page.locator(selector)`` +
     ``click / fill / press / select_option / hover`` (check: click when not checked;
     drag: a mouse drag of the slider thumb) and, around each step's trigger,
     ``expect_navigation(wait_until="load")`` (swap sites: a promise of the page's own
     ``ww:settled`` event, set before the trigger and awaited after it). No observation,
     screenshot, element ids or ground truth. ``on goal page`` only compares the final
     ``page.url`` string with the candidate's last page (no browser round trip): a sanity
     check that it did the work.
   * ``verifier``: ``verify_jobs`` with that many workers on fresh output folders (nothing
     skipped): per gesture an observation (DOM walk, a digest of what the pixels depend
     on, and a PNG screenshot of the viewport, ``webworld.browser.capture.capture_png``,
     unless the run's ``ScreenshotCache`` holds that page's already), target resolution, the
     action, and after every GUI step a ground-truth read over HTTP; records and
     screenshots written to disk.

   Columns: ``traj/s`` = candidates / wall s; ``actions/s`` = browser gestures / wall s
   (a date pick is 2 gestures; the opening ``goto`` is not counted); ``ok`` = verified
   (verifier) or completed without a Playwright error (bare); ``py cpu/wall`` = CPU of this
   Python process (asyncio loop + Playwright client + the uvicorn server thread) / wall;
   ``browser cpu/wall`` = CPU of the reaped child processes (Playwright's node driver +
   Chromium, ``RUSAGE_CHILDREN``) / wall. On 2 cores the sum of both cannot exceed 200%;
   it misses Chromium's renderers (not reaped by its chain of parents), so ``machine cpu
   ms/action`` = the whole machine's busy CPU during the run (``/proc/stat``) / gestures:
   what an action costs in every process, plus whatever else ran (so: a quiet machine).
   ``verifier / bare`` = verifier wall / bare wall at the same number of contexts (how many
   times longer the verifier takes; the verifier's rate is 1 / that of the bare one's).
   Extra verifier rows: ``ReplayConfig(reuse_screenshots=False)`` at each number of
   contexts (every step's screenshot captured, no cache: what the run's
   ``ScreenshotCache`` saves) and ``ReplayConfig(screenshots=False)`` at 4 contexts:
   what screenshots cost. An extra bare row at 1 and 4 contexts, ``with page.screenshot()``:
   the bare script also takes Playwright's PNG screenshot of the viewport before each
   gesture, as a plain data-collecting script would (the verifier's screenshot per gesture,
   without its cache); its ratio column is the verifier's wall over this run's. ``PNG MB``:
   the screenshots the run wrote. 1b: the speed-up
   from more contexts, and ``verifier rate / bare rate`` (= bare wall / verifier wall:
   the verifier's speed as a fraction of bare Playwright's).
2. Where the time goes, 1 context (so time spans do not overlap): the bare script and the
   verifier run once more with timers. The verifier is timed by wrapping (in this process
   only, restored afterwards) ``observe`` (its DOM walk and pixels key; the capture of a
   page not seen before, ``BrowserTab.screenshot``, has its own span),
   ``BrowserTab.act`` (the rules, scrolling, hit test and pointer moves), its gesture (per
   action name) and wait for a page load, ``BrowserTab.goto``, ``Replay._open / _resolve /
   _record``,
   ``Truth.state / reset``, ``_write_images`` and ``verify_candidate``. Times are
   *exclusive* (a span's time minus the spans inside it), so the rows add up to the wall
   time; ``runner / launch / other`` is the rest (Playwright + Chromium start, contexts,
   JSONL appends with fsync). ms/action divides by the gestures of the run.
3. Memory per browser context: a fresh Chromium (``launch_browser``) with N = 0, 1, 2, 4, 8
   contexts, each with one page on a served world page (loaded, then 1 s to settle). PSS
   (proportional set size, ``/proc/<pid>/smaps_rollup``: shared pages split between the
   processes that map them, so the sum is what the tree really costs) and RSS (shared pages
   counted in every process) summed over this process's descendants found through
   ``/proc/*/stat`` parent pids: Chromium (browser, zygotes, GPU/utility, renderers) and,
   separately, Playwright's node driver. ``of which UI`` / ``UI PSS MB``: renderers started
   with ``--top-chrome-webui``; Chromium's new headless mode opens a browser window per
   context and each window renders its own UI in one. ``marginal MB/context`` = the PSS
   change from the previous N divided by the contexts added.

The machine's load average is printed before and after, and per run (1-minute value at
its end): on a shared 2-core machine, compare rows of one run, not numbers across runs.

``--density``: what a denser page costs the verifier. The same worlds (themes, profile,
seed, caps) are generated at generator version 2 (sparse pages) and version 3 (dense: a
navigation bar, sidebar, footer of links and paged result lists), each set served by its
own ``LiveServer`` (the ids are the same), and the verifier (default ``ReplayConfig``) runs
at 1 and 4 contexts on each, back to back (1: sparse, dense; 4: sparse, dense), after a
short bare warm-up of each set. Per run: ``elements/page`` = the median over the verified
steps' observations (the records' ``axtree`` text, read before the run's folder is
removed) of the lines with an element id (``interactive_elements``), ``obs chars`` = the
median length of that text, ``ms/action`` = wall / gestures. The last rows divide the dense
run by the sparse one at the same number of contexts: if ``ms/action`` grows by less than
``elements/page``, an action costs less than in proportion to the page.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Coroutine, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any
from unittest import mock

from benchkit import load_note, machine_busy_s, make_console, progress_bar, rate
from playwright.async_api import Browser, Locator, Page, async_playwright
from playwright.async_api import Error as PlaywrightError
from rich.console import Console
from rich.table import Table

from webworld import contract
from webworld.browser import tab as tab_mod
from webworld.browser.launch import VIEWPORT, launch_browser
from webworld.browser.observe import interactive_elements
from webworld.explore.candidates import ExploreConfig, explore_world, spread, write_candidates
from webworld.propose.procedural import generate
from webworld.render.site import load_site, render_site
from webworld.serve.multi import WORLD_PREFIX, create_multi_app
from webworld.serve.runner import LiveServer
from webworld.spec.models import WorldSpec
from webworld.verify import replay as replay_mod
from webworld.verify import runner as runner_mod
from webworld.verify.gestures import Gesture, gestures
from webworld.verify.replay import Endpoint, ReplayConfig
from webworld.verify.runner import WorldJob, load_candidates, verify_jobs

THEMES = ["online bookstore", "hotel booking"]
PROFILE, SEED = "medium", 0
# Shortest paths only: these worlds' "longer" alternatives (accept the cookie banner, then
# reject it) click a button the accepted banner no longer renders, so they cannot verify.
FULL = {"caps": {"max_shortest": 2, "max_longer": 0, "max_instances": 3}, "per_world": 30,
        "contexts": [1, 2, 4, 8]}
QUICK = {"caps": {"max_shortest": 1, "max_longer": 0, "max_instances": 2}, "per_world": 8,
         "contexts": [1, 4]}
SCREENSHOTS_OFF_CONTEXTS = 4
BARE_SHOTS_CONTEXTS = (1, 4)      # the bare script with page.screenshot() before each gesture
MEMORY_CONTEXTS = [0, 1, 2, 4, 8]
MEMORY_SETTLE_S = 1.0
WARMUP_PER_WORLD = 2
DENSITY_VERSIONS = {2: "sparse", 3: "dense"}   # generator version -> what its pages are
DENSITY_CONTEXTS = (1, 4)
CONFIG = ReplayConfig()          # the verifier's defaults: 3 s per action, 10 s per load
ACTION_MS, NAV_MS = CONFIG.action_timeout_ms, CONFIG.navigation_timeout_ms


# --- helpers -----------------------------------------------------------------------------










def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class World:
    spec: WorldSpec
    theme: str
    base: str                      # http://127.0.0.1:P/w/<world id>
    candidates: list[dict[str, Any]]

    def page_url(self, page: str) -> str:
        return contract.PAGE_URL.format(base=self.base, page=page)


@dataclass
class Run:
    """One measured run over all candidates."""

    kind: str                      # "bare" | "verifier"
    contexts: int
    candidates: int
    ok: int = 0
    actions: int = 0
    failures: Counter = field(default_factory=Counter)
    on_goal: int | None = None     # bare only
    wall: float = 0.0
    cpu: float = 0.0
    child_cpu: float = 0.0
    machine_cpu: float = 0.0       # the whole machine's busy CPU seconds during the run
    load: float = 0.0
    images_mb: float = 0.0
    note: str = ""
    elements: list[int] = field(default_factory=list)  # per verified step's observation
    chars: list[int] = field(default_factory=list)     # (--density only)
    messages: list[str] = field(default_factory=list)  # first failure messages

    @property
    def label(self) -> str:
        return f"{self.kind}{' ' + self.note if self.note else ''}"


def measured(run: Run, coro_fn: Callable[[], Coroutine[Any, Any, None]]) -> Run:
    """Fill ``run``'s wall / cpu / child cpu / load around ``asyncio.run(coro_fn())``."""
    gc.collect()
    wall0, cpu0, child0 = time.perf_counter(), time.process_time(), children_cpu()
    busy0 = machine_busy_s()
    asyncio.run(coro_fn())
    run.wall = time.perf_counter() - wall0
    run.machine_cpu = machine_busy_s() - busy0
    run.cpu = time.process_time() - cpu0
    run.child_cpu = children_cpu() - child0
    run.load = os.getloadavg()[0]
    return run


# --- exclusive-time spans (one asyncio task at a time: used with 1 context) --------------


class Timers:
    """Named spans; each records its time minus the spans nested inside it."""

    def __init__(self) -> None:
        self.total: dict[str, float] = defaultdict(float)
        self.calls: Counter = Counter()
        self._stack: list[list] = []

    @contextmanager
    def span(self, name: str) -> Iterator[None]:
        frame: list = [name, 0.0]
        self._stack.append(frame)
        started = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - started
            self._stack.pop()
            self.total[name] += elapsed - frame[1]
            self.calls[name] += 1
            if self._stack:
                self._stack[-1][1] += elapsed

    def inside(self, name: str) -> bool:
        return bool(self._stack) and self._stack[-1][0] == name


def span(timers: Timers | None, name: str):  # type: ignore[no-untyped-def]
    return timers.span(name) if timers is not None else nullcontext()


# --- worlds --------------------------------------------------------------------------------


def build_worlds(root: Path, caps: dict[str, int], per_world: int, transition: str,
                 version: int | None = None) -> list[Path]:
    """Generate (at generator ``version``; None: the latest), render and explore the worlds;
    return their site dirs (candidates under root/candidates/<world id>/candidates.jsonl)."""
    sites = []
    pinned = {} if version is None else {"version": version}
    for theme in THEMES:
        spec = generate(theme, PROFILE, SEED, **pinned).spec.model_copy(
            update={"transition": transition})
        sites.append(render_site(spec, root / "sites" / spec.id))
        explored = explore_world(spec, ExploreConfig(**caps))
        explored.candidates = spread(explored.candidates, per_world)
        write_candidates(explored, root / "candidates" / spec.id)
    return sites


# --- bare Playwright baseline --------------------------------------------------------------


async def _new_page(browser: Browser) -> Page:
    context = await browser.new_context(viewport=VIEWPORT, device_scale_factor=1,
                                        locale="en-US", timezone_id="UTC")
    return await context.new_page()


async def _drag(page: Page, target: Locator, value: str | None) -> None:
    """Drag a range input's thumb to ``value`` with the mouse (thumb width per contract)."""
    box = await target.bounding_box(timeout=ACTION_MS)
    lo, hi, now = await target.evaluate(
        "e => [Number(e.min || 0), Number(e.max || 100), Number(e.value)]")
    thumb = contract.SLIDER_THUMB_PX

    def x_of(v: float) -> float:
        return box["x"] + thumb / 2 + ((v - lo) / (hi - lo) if hi > lo else 0) * (
            box["width"] - thumb)

    y = box["y"] + box["height"] / 2
    await page.mouse.move(x_of(now), y)
    await page.mouse.down()
    await page.mouse.move(x_of(float(value or lo)), y, steps=6)
    await page.mouse.up()


async def bare_gesture(page: Page, g: Gesture) -> None:
    target = page.locator(g.selector)
    if g.action == "click":
        await target.click(timeout=ACTION_MS)
    elif g.action == "fill":
        await target.fill(g.arg or "", timeout=ACTION_MS)
    elif g.action == "press":
        await target.press(g.arg or "Enter", timeout=ACTION_MS)
    elif g.action == "select_option":
        await target.select_option(label=g.arg, timeout=ACTION_MS)
    elif g.action == "hover":
        await target.hover(timeout=ACTION_MS)
    elif g.action in ("check", "uncheck"):
        if await target.is_checked(timeout=ACTION_MS) != (g.action == "check"):
            await target.click(timeout=ACTION_MS)
    elif g.action == "drag":
        await _drag(page, target, g.arg)
    else:
        raise ValueError(f"unknown gesture {g.action}")


@asynccontextmanager
async def next_page(page: Page, transition: str):  # type: ignore[no-untyped-def]
    """Wait for the page the block's action leads to: its load, or the site's swap."""
    if transition != "swap":
        async with page.expect_navigation(wait_until="load", timeout=NAV_MS):
            yield
        return
    await page.evaluate("() => { window.__benchSettled = new Promise((r) => "
                        "document.addEventListener('ww:settled', r, {once: true})); }")
    yield
    await page.evaluate("() => window.__benchSettled")


async def bare_candidate(page: Page, world: World, cand: dict[str, Any],
                         timers: Timers | None, shots: bool = False) -> int:
    """Replay one candidate's gestures (with ``shots``, a screenshot before each); the
    number of gestures done."""
    done = 0
    with span(timers, "open: goto + load"):
        await page.context.clear_cookies()
        await page.goto(world.base + "/", wait_until="load", timeout=NAV_MS)
    for step in cand["steps"]:
        for j, gui in enumerate(step["gui"]):
            planned = gestures(world.spec, step["page"], gui)
            for i, g in enumerate(planned):
                if shots:
                    await page.screenshot(type="png")
                if j == len(step["gui"]) - 1 and i == len(planned) - 1:  # the trigger
                    with span(timers, "trigger: wait for the next page"):
                        async with next_page(page, world.spec.transition):
                            with span(timers, f"action: {g.action}"):
                                await bare_gesture(page, g)
                else:
                    with span(timers, f"action: {g.action}"):
                        await bare_gesture(page, g)
                done += 1
    return done


async def bare_run(worlds: list[World], run: Run, progress: Callable[[], None],
                   timers: Timers | None = None, shots: bool = False) -> None:
    queue = [(w, c) for w in worlds for c in w.candidates]
    queue.reverse()
    run.on_goal = 0

    async def worker(browser: Browser) -> None:
        page = await _new_page(browser)
        try:
            while queue:
                world, cand = queue.pop()
                try:
                    done = await bare_candidate(page, world, cand, timers, shots)
                    run.actions += done  # not `+= await ...`: that loses updates across tasks
                    run.ok += 1
                    final = cand["steps"][-1]["expected"]["page"]
                    run.on_goal += page.url == world.page_url(final)
                except PlaywrightError as exc:
                    run.failures[type(exc).__name__] += 1
                    if len(run.messages) < 3:
                        run.messages.append(f"{cand['id']}: {str(exc).splitlines()[0]}")
                progress()
        finally:
            await page.context.close()

    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        try:
            await asyncio.gather(*(worker(browser) for _ in range(run.contexts)))
        finally:
            await browser.close()


# --- webworld's verifier -------------------------------------------------------------------


def verifier_jobs(worlds: list[World], token: str, out: Path) -> list[WorldJob]:
    """Jobs writing to a fresh folder (so nothing is skipped), on private candidate copies."""
    return [WorldJob(w.spec, Endpoint(w.base, token), out / w.spec.id, w.theme,
                     copy.deepcopy(w.candidates)) for w in worlds]


async def verifier_run(jobs: list[WorldJob], run: Run, config: ReplayConfig,
                       progress: Callable[[], None]) -> None:
    stats = await verify_jobs(jobs, workers=run.contexts, config=config,
                              progress=lambda world, ok: progress())
    for st in stats:
        run.ok += st.verified
        run.actions += st.steps
        run.failures.update(st.failures)


@contextmanager
def instrumented(timers: Timers) -> Iterator[None]:
    """Wrap the verifier's pieces in exclusive-time spans (restored on exit)."""
    original_write = replay_mod._write_images
    original_verify = runner_mod.verify_candidate
    Replay, Truth, Tab = replay_mod.Replay, replay_mod.Truth, tab_mod.BrowserTab
    methods = {name: getattr(Replay, name) for name in ("_open", "_resolve")}
    gesture, settle, goto, original_observe = Tab._gesture, Tab._settle, Tab.goto, Tab.observe
    capture = Tab.screenshot
    record, state, reset, act = Replay._record, Truth.state, Truth.reset, Tab.act

    async def observe(self, *, screenshot=False):  # type: ignore[no-untyped-def]
        # with the run's screenshot cache (the default) the walk and its pixels' key come
        # first, then a capture only for a page not seen before: each has its own span
        with timers.span("observe: DOM walk + pixels key (evaluate)"):
            return await original_observe(self, screenshot=screenshot)

    async def _capture(self):  # type: ignore[no-untyped-def]
        with timers.span("observe: screenshot (capture_png, new pages)"):
            return await capture(self)

    async def _act(self, action, seen):  # type: ignore[no-untyped-def]
        with timers.span("act: rules, scroll, hit test, pointer"):
            return await act(self, action, seen)

    async def _gesture(self, action, place):  # type: ignore[no-untyped-def]
        with timers.span(f"action: {action.name}"):
            return await gesture(self, action, place)

    async def _settle(self, **kw):  # type: ignore[no-untyped-def]
        with timers.span("after action: wait for load (and the pointer's park)"):
            return await settle(self, **kw)

    async def _goto(self, url):  # type: ignore[no-untyped-def]
        with timers.span("open: goto + load"):
            return await goto(self, url)

    async def _open(self):  # type: ignore[no-untyped-def]
        with timers.span("open: cookies + session"):
            return await methods["_open"](self)

    async def _resolve(self, gesture, seen):  # type: ignore[no-untyped-def]
        with timers.span("resolve target (evaluate)"):
            return await methods["_resolve"](self, gesture, seen)

    def _record(self, *args):  # type: ignore[no-untyped-def]
        with timers.span("record step (Python)"):
            return record(self, *args)

    async def truth_state(self, sid):  # type: ignore[no-untyped-def]
        with timers.span("truth: state (HTTP GET)"):
            return await state(self, sid)

    async def truth_reset(self, sid, page):  # type: ignore[no-untyped-def]
        with timers.span("truth: reset (HTTP POST)"):
            return await reset(self, sid, page)

    def write_images(world_dir, recorded):  # type: ignore[no-untyped-def]
        with timers.span("write screenshots (disk)"):
            return original_write(world_dir, recorded)

    async def verify_candidate(*args, **kw):  # type: ignore[no-untyped-def]
        with timers.span("candidate: records, rest"):
            return await original_verify(*args, **kw)

    with ExitStack() as stack:
        for target, name, value in (
                (Tab, "observe", observe), (Tab, "screenshot", _capture),
                (replay_mod, "_write_images", write_images),
                (runner_mod, "verify_candidate", verify_candidate),
                (Tab, "act", _act), (Tab, "_gesture", _gesture), (Tab, "_settle", _settle),
                (Tab, "goto", _goto), (Replay, "_open", _open),
                (Replay, "_resolve", _resolve), (Replay, "_record", _record),
                (Truth, "state", truth_state), (Truth, "reset", truth_reset)):
            stack.enter_context(mock.patch.object(target, name, value))
        yield


# --- runs ------------------------------------------------------------------------------------


class Bench:
    def __init__(self, worlds: list[World], token: str, root: Path, console: Console) -> None:
        self.worlds, self.token, self.root, self.console = worlds, token, root, console
        self.total = sum(len(w.candidates) for w in worlds)
        self.count = 0

    def _bar(self, description: str):  # type: ignore[no-untyped-def]
        bar = progress_bar(self.console)
        task = bar.add_task(description, total=self.total)
        return bar, lambda: bar.advance(task)

    def bare(self, contexts: int, timers: Timers | None = None,
             worlds: list[World] | None = None, shots: bool = False) -> Run:
        worlds = worlds or self.worlds
        note = "with page.screenshot()" if shots else ""
        run = Run("bare", contexts, sum(len(w.candidates) for w in worlds), note=note)
        bar, tick = self._bar(f"bare{' ' + note if note else ''}, {contexts} context(s)")
        with bar:
            return measured(run, lambda: bare_run(worlds, run, tick, timers, shots))

    def verifier(self, contexts: int, config: ReplayConfig = CONFIG, note: str = "",
                 pages: bool = False) -> Run:
        """A verifier run; with ``pages``, the run keeps each verified step's element count
        and observation length (read from its records, outside the timed run)."""
        self.count += 1
        out = self.root / "runs" / f"{self.count:02d}-{contexts}"
        jobs = verifier_jobs(self.worlds, self.token, out)
        run = Run("verifier", contexts, self.total, note=note)
        bar, tick = self._bar(f"verifier{' ' + note if note else ''}, {contexts} context(s)")
        with bar:
            measured(run, lambda: verifier_run(jobs, run, config, tick))
        run.images_mb = sum(p.stat().st_size for p in out.rglob("*.png")) / 1e6
        if pages:
            observed_pages(out, run)
        for path in sorted(out.glob("*/failures.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines()[:3]:
                failure = json.loads(line)
                run.messages.append(f"{failure['id']} step {failure['step']}: "
                                    f"{failure['failure']}: {failure['message']}")
        shutil.rmtree(out, ignore_errors=True)
        return run


def observed_pages(out: Path, run: Run) -> None:
    """Each verified step's interactive elements and observation characters, from the
    run's records (the axtree text the agent saw before acting)."""
    for path in sorted(out.glob("*/verified.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for step in json.loads(line)["steps"]:
                text = step["observation"]["axtree"]
                run.elements.append(interactive_elements(text))
                run.chars.append(len(text))


# --- memory ----------------------------------------------------------------------------------


def _proc_tree(root_pid: int) -> list[int]:
    """Descendants of ``root_pid`` (not itself), found through /proc/*/stat parent pids."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])  # comm may hold spaces
        children[ppid].append(int(entry.name))
    out, todo = [], list(children[root_pid])
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children[pid])
    return out


def _kb(path: str, key: str) -> int:
    for line in Path(path).read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


@dataclass
class TreeMemory:
    processes: int = 0
    pss_mb: float = 0.0
    rss_mb: float = 0.0
    driver_pss_mb: float = 0.0
    renderers: int = 0
    webui: int = 0                 # renderers of the browser's own UI (one per window)
    webui_pss_mb: float = 0.0


def tree_memory() -> TreeMemory:
    mem = TreeMemory()
    for pid in _proc_tree(os.getpid()):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            pss = _kb(f"/proc/{pid}/smaps_rollup", "Pss") / 1024
            rss = _kb(f"/proc/{pid}/smaps_rollup", "Rss") / 1024
        except OSError:  # exited meanwhile
            continue
        if comm.startswith("node"):  # Playwright's driver (comm "node-MainThread")
            mem.driver_pss_mb += pss
            continue
        mem.processes += 1
        mem.pss_mb += pss
        mem.rss_mb += rss
        if b"--type=renderer" in cmdline:
            mem.renderers += 1
            if b"--top-chrome-webui" in cmdline:
                mem.webui += 1
                mem.webui_pss_mb += pss
    return mem


async def memory_at(n: int, urls: list[str]) -> TreeMemory:
    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        try:
            for i in range(n):
                page = await _new_page(browser)
                await page.goto(urls[i % len(urls)], wait_until="load", timeout=NAV_MS)
            await asyncio.sleep(MEMORY_SETTLE_S)
            return tree_memory()
        finally:
            await browser.close()


def memory_table(rows: list[tuple[int, TreeMemory]]) -> Table:
    table = Table(title="3. Memory of the Chromium process tree per number of contexts "
                        "(one loaded page each)")
    for name in ("contexts", "chromium procs", "renderers", "of which UI", "UI PSS MB",
                 "PSS MB", "RSS MB", "marginal PSS MB/context", "(PSS(N)-PSS(0))/N",
                 "node driver PSS MB"):
        table.add_column(name, justify="right")
    base = rows[0][1].pss_mb
    for (prev_n, prev), (n, mem) in zip([(None, None)] + rows, rows):
        marginal = ((mem.pss_mb - prev.pss_mb) / (n - prev_n)) if prev is not None else None
        table.add_row(str(n), str(mem.processes), str(mem.renderers), str(mem.webui),
                      f"{mem.webui_pss_mb:,.0f}", f"{mem.pss_mb:,.0f}",
                      f"{mem.rss_mb:,.0f}", f"{marginal:,.1f}" if marginal is not None else "-",
                      f"{(mem.pss_mb - base) / n:,.1f}" if n else "-",
                      f"{mem.driver_pss_mb:,.0f}")
    return table


# --- tables ------------------------------------------------------------------------------------


def _fail_note(run: Run) -> str:
    return ", ".join(f"{k} {v}" for k, v in run.failures.most_common()) or "-"


def throughput_table(pairs: list[tuple[Run, Run | None]], extra: list[Run],
                     bare_at: dict[int, Run], verifier_at: dict[int, Run]) -> Table:
    table = Table(title="1. Replaying the same candidates: bare Playwright vs webworld's "
                        "verifier (wall time)")
    for name in ("run", "contexts", "wall s", "traj/s", "actions/s", "ok / cands",
                 "failures", "py cpu/wall", "browser cpu/wall", "machine cpu ms/action",
                 "load 1m", "PNG MB", "verifier / bare"):
        table.add_column(name, justify="left" if name in ("run", "failures") else "right")

    def row(run: Run, ratio: str, end: bool = False) -> None:
        ok = f"{run.ok}/{run.candidates}"
        if run.on_goal is not None:
            ok += f" ({run.on_goal} on goal page)"
        table.add_row(run.label, str(run.contexts), f"{run.wall:.1f}",
                      rate(run.candidates, run.wall), rate(run.actions, run.wall), ok,
                      _fail_note(run), f"{run.cpu / run.wall:.0%}",
                      f"{run.child_cpu / run.wall:.0%}",
                      f"{1000 * run.machine_cpu / run.actions:.1f}" if run.actions else "-",
                      f"{run.load:.2f}",
                      f"{run.images_mb:.1f}" if run.kind == "verifier" else "-", ratio,
                      end_section=end)

    for bare, ver in pairs:
        row(bare, "-")
        if ver is not None:
            row(ver, f"{ver.wall / bare.wall:.2f}x", end=True)
    for run in extra:
        bare = bare_at.get(run.contexts)
        ver = verifier_at.get(run.contexts)
        if run.kind == "bare":  # a bare script that also takes screenshots
            row(run, f"verifier: {ver.wall / run.wall:.2f}x this" if ver else "-")
            continue
        parts = [f"{run.wall / bare.wall:.2f}x"] if bare else []
        if ver:
            parts.append(f"(screenshots on: {ver.wall / run.wall:.2f}x this)")
        row(run, " ".join(parts) or "-")
    return table


def scaling_table(bare_at: dict[int, Run], verifier_at: dict[int, Run]) -> Table:
    table = Table(title="1b. Scaling with contexts (speed-up = traj/s / traj/s at 1 context)")
    for name in ("contexts", "bare traj/s", "bare speed-up", "verifier traj/s",
                 "verifier speed-up", "verifier / bare (wall)", "verifier rate / bare rate"):
        table.add_column(name, justify="right")
    b1, v1 = bare_at.get(1), verifier_at.get(1)
    for n in sorted(set(bare_at) | set(verifier_at)):
        b, v = bare_at.get(n), verifier_at.get(n)
        table.add_row(str(n), rate(b.candidates, b.wall) if b else "-",
                      f"{b1.wall / b.wall:.2f}x" if b and b1 else "-",
                      rate(v.candidates, v.wall) if v else "-",
                      f"{v1.wall / v.wall:.2f}x" if v and v1 else "-",
                      f"{v.wall / b.wall:.2f}x" if b and v else "-",
                      f"{b.wall / v.wall:.2f}x" if b and v else "-")
    return table


def breakdown_table(bare: Run, bare_t: Timers, ver: Run, ver_t: Timers) -> Table:
    table = Table(title="2. Where the time goes, 1 context (exclusive spans; ms per action = "
                        "span time / gestures of the run)")
    for name in ("span", "bare calls", "bare ms/action", "bare share", "verifier calls",
                 "verifier ms/action", "verifier share", "verifier - bare ms/action"):
        table.add_column(name, justify="left" if name == "span" else "right")
    names = sorted(set(bare_t.total) | set(ver_t.total),
                   key=lambda k: -(ver_t.total.get(k, 0.0)))
    shared = [k for k in names if k in bare_t.total]
    only = [k for k in names if k not in bare_t.total]

    def cells(run: Run, timers: Timers, key: str) -> list[str]:
        if key not in timers.total:
            return ["-", "-", "-"]
        secs = timers.total[key]
        return [str(timers.calls[key]), f"{1000 * secs / run.actions:.1f}",
                f"{secs / run.wall:.1%}"]

    def add(key: str, end: bool = False) -> None:
        b = bare_t.total.get(key, 0.0) / bare.actions
        v = ver_t.total.get(key, 0.0) / ver.actions
        table.add_row(key, *cells(bare, bare_t, key), *cells(ver, ver_t, key),
                      f"{1000 * (v - b):+.1f}", end_section=end)

    for i, key in enumerate(shared):
        add(key, end=i == len(shared) - 1)
    for i, key in enumerate(only):
        add(key, end=i == len(only) - 1)
    rest = {name: run.wall - sum(t.total.values())
            for name, run, t in (("bare", bare, bare_t), ("verifier", ver, ver_t))}
    table.add_row("runner / launch / other", "-", f"{1000 * rest['bare'] / bare.actions:.1f}",
                  f"{rest['bare'] / bare.wall:.1%}", "-",
                  f"{1000 * rest['verifier'] / ver.actions:.1f}",
                  f"{rest['verifier'] / ver.wall:.1%}",
                  f"{1000 * (rest['verifier'] / ver.actions - rest['bare'] / bare.actions):+.1f}",
                  end_section=True)
    table.add_row("total wall", "-", f"{1000 * bare.wall / bare.actions:.1f}", "100%", "-",
                  f"{1000 * ver.wall / ver.actions:.1f}", "100%",
                  f"{1000 * (ver.wall / ver.actions - bare.wall / bare.actions):+.1f}")
    table.add_row("py cpu / wall", "", f"{bare.cpu / bare.wall:.0%}", "", "",
                  f"{ver.cpu / ver.wall:.0%}", "", "")
    return table


def density_table(runs: dict[tuple[int, int], Run]) -> Table:
    """The verifier on sparse and dense pages at each number of contexts, then dense /
    sparse ratios at each."""
    table = Table(title="Density: the verifier on sparse (generator 2) and dense (3) pages "
                        "(medians over the verified steps' observations)")
    for name in ("generator version", "contexts", "ok / cands", "gestures", "elements/page",
                 "obs chars", "wall s", "traj/s", "actions/s", "ms/action",
                 "machine cpu ms/action", "load 1m"):
        table.add_column(name, justify="left" if name == "generator version" else "right")
    sparse_v, dense_v = DENSITY_VERSIONS
    contexts = sorted({n for _, n in runs})
    for n in contexts:
        for v, what in DENSITY_VERSIONS.items():
            run = runs[(v, n)]
            table.add_row(f"{v} ({what})", str(n), f"{run.ok}/{run.candidates}",
                          str(run.actions), _median(run.elements), _median(run.chars),
                          f"{run.wall:.1f}", rate(run.candidates, run.wall),
                          rate(run.actions, run.wall), _ms_per_action(run),
                          f"{1000 * run.machine_cpu / run.actions:.1f}" if run.actions else "-",
                          f"{run.load:.2f}", end_section=v == dense_v)
    for n in contexts:
        sparse, dense = runs[(sparse_v, n)], runs[(dense_v, n)]
        table.add_row(
            "dense / sparse", str(n), "", _ratio(dense.actions, sparse.actions),
            _ratio(_med(dense.elements), _med(sparse.elements)),
            _ratio(_med(dense.chars), _med(sparse.chars)), _ratio(dense.wall, sparse.wall),
            _ratio(dense.candidates / dense.wall, sparse.candidates / sparse.wall),
            _ratio(dense.actions / dense.wall, sparse.actions / sparse.wall),
            _ratio(dense.wall / max(dense.actions, 1), sparse.wall / max(sparse.actions, 1)),
            _ratio(dense.machine_cpu / max(dense.actions, 1),
                   sparse.machine_cpu / max(sparse.actions, 1)), "")
    return table


def _med(values: list[int]) -> float:
    return statistics.median(values) if values else 0.0


def _median(values: list[int]) -> str:
    return f"{_med(values):,.0f}" if values else "-"


def _ms_per_action(run: Run) -> str:
    return f"{1000 * run.wall / run.actions:.1f}" if run.actions else "-"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


# --- main ----------------------------------------------------------------------------------


def serve_worlds(site_dirs: list[Path], root: Path, stack: ExitStack
                 ) -> tuple[list[World], str, str]:
    """Serve the built worlds in this process (one ``LiveServer`` until ``stack`` closes):
    the worlds with their candidates, the ground-truth token and the server's URL."""
    app = create_multi_app(site_dirs)
    server = stack.enter_context(LiveServer(app))
    worlds = []
    for site_dir in site_dirs:
        site = load_site(site_dir)
        worlds.append(World(site.spec, site.theme.name,
                            server.url + WORLD_PREFIX.format(world=site.spec.id),
                            load_candidates(root / "candidates" / site.spec.id)))
    return worlds, app.state.truth_token, server.url


def describe(worlds: list[World]) -> str:
    """The worlds, their candidates, FSM steps and gestures (by kind), in one line."""
    planned = [gg.action for w in worlds for c in w.candidates for s in c["steps"]
               for g in s["gui"] for gg in gestures(w.spec, s["page"], g)]
    ops = Counter(planned)
    return (", ".join(f"{w.spec.id} ({len(w.candidates)} candidates, {len(w.spec.pages)} pages)"
                      for w in worlds)
            + f"; {sum(len(w.candidates) for w in worlds)} candidates, "
            f"{sum(c['length'] for w in worlds for c in w.candidates)} FSM steps, "
            f"{len(planned)} gestures ({', '.join(f'{k} {v}' for k, v in ops.most_common())})")


def density(args: argparse.Namespace, mode: dict[str, Any], console: Console) -> None:
    """The verifier on the same worlds at generator versions 2 and 3 (see the docstring)."""
    with ExitStack() as stack:
        root = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix="bench-verify-density-")))
        benches: dict[int, Bench] = {}
        for v, what in DENSITY_VERSIONS.items():
            where = root / f"v{v}"  # the versions' worlds have the same ids
            site_dirs = build_worlds(where, mode["caps"], mode["per_world"], args.transition,
                                     version=v)
            worlds, token, url = serve_worlds(site_dirs, where, stack)
            console.print(f"Generator {v} ({what}): {describe(worlds)}; served at {url}")
            benches[v] = Bench(worlds, token, where, console)
        for v, bench in benches.items():
            warm = [World(w.spec, w.theme, w.base, w.candidates[:WARMUP_PER_WORLD])
                    for w in bench.worlds]
            warmup = bench.bare(1, worlds=warm)
            console.print(f"Warm-up, generator {v} (bare, {warmup.candidates} candidates, "
                          f"discarded): {warmup.wall:.1f} s, {warmup.ok} ok {_fail_note(warmup)}")
        runs: dict[tuple[int, int], Run] = {}
        for n in DENSITY_CONTEXTS:
            for v, bench in benches.items():
                runs[(v, n)] = run = bench.verifier(n, note=f"generator {v}", pages=True)
                console.print(f"  {n} context(s), generator {v}: {run.wall:.1f} s, "
                              f"{run.ok}/{run.candidates} verified {_fail_note(run)}")
                for message in run.messages:
                    console.print(f"    failure: {message}")
        console.print(density_table(runs))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: ~16 candidates, 1 and 4 contexts")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the worlds here (kept) instead of a temp dir")
    parser.add_argument("--transition", choices=["swap", "navigate"], default="swap",
                        help="the sites update in place (swap) or load a page per action")
    parser.add_argument("--density", action="store_true",
                        help="only the verifier at 1 and 4 contexts on the worlds at generator "
                             "version 2 (sparse pages) and 3 (dense)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    mode = QUICK if args.quick else FULL
    console = make_console()
    console.print(f"[bold]webworld verify benchmarks[/] ({'quick' if args.quick else 'full'}, "
                  f"{args.transition} sites{', density' if args.density else ''}; "
                  f"python {sys.version.split()[0]}, playwright {version('playwright')}, "
                  f"{os.cpu_count()} cpus)")
    console.print(f"Start: {load_note()}")
    started = time.perf_counter()
    if args.density:
        density(args, mode, console)
        console.print(f"Finished in {time.perf_counter() - started:.0f} s: {load_note()}")
        return 0
    with ExitStack() as stack:
        root = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix="bench-verify-")))
        site_dirs = build_worlds(root, mode["caps"], mode["per_world"], args.transition)
        worlds, token, url = serve_worlds(site_dirs, root, stack)
        console.print(f"Worlds: {describe(worlds)}; served at {url}")
        bench = Bench(worlds, token, root, console)

        warm = [World(w.spec, w.theme, w.base, w.candidates[:WARMUP_PER_WORLD]) for w in worlds]
        warmup = bench.bare(1, worlds=warm)
        console.print(f"Warm-up (bare, {warmup.candidates} candidates, discarded): "
                      f"{warmup.wall:.1f} s, {warmup.ok} ok {_fail_note(warmup)}")

        # 1. throughput: bare and verifier back to back at each number of contexts
        bare_at: dict[int, Run] = {}
        verifier_at: dict[int, Run] = {}
        for n in mode["contexts"]:
            bare_at[n] = bench.bare(n)
            verifier_at[n] = bench.verifier(n)
            console.print(f"  {n} context(s): bare {bare_at[n].wall:.1f} s, "
                          f"verifier {verifier_at[n].wall:.1f} s")
        extra = [bench.verifier(n, ReplayConfig(reuse_screenshots=False),
                                note="every screenshot captured") for n in mode["contexts"]]
        extra.append(bench.verifier(SCREENSHOTS_OFF_CONTEXTS, ReplayConfig(screenshots=False),
                                    note="screenshots off"))
        extra += [bench.bare(n, shots=True) for n in BARE_SHOTS_CONTEXTS if n in mode["contexts"]]
        console.print(throughput_table([(bare_at[n], verifier_at[n]) for n in mode["contexts"]],
                                       extra, bare_at, verifier_at))
        for run in [r for pair in zip(bare_at.values(), verifier_at.values()) for r in pair] + \
                extra:
            for message in run.messages:
                console.print(f"  failure in {run.label}, {run.contexts} context(s): {message}")
        console.print(scaling_table(bare_at, verifier_at))

        # 2. where the time goes (1 context)
        bare_t, ver_t = Timers(), Timers()
        bare_timed = bench.bare(1, timers=bare_t)
        with instrumented(ver_t):
            ver_timed = bench.verifier(1, note="timed")
        console.print(breakdown_table(bare_timed, bare_t, ver_timed, ver_t))
        console.print(f"  timed runs: bare {bare_timed.wall:.1f} s ({bare_timed.actions} "
                      f"actions), verifier {ver_timed.wall:.1f} s ({ver_timed.actions} "
                      f"actions, {ver_timed.ok}/{ver_timed.candidates} verified)")

        # 3. memory per context
        urls = [w.base + "/" for w in worlds]
        mem_rows = []
        for n in MEMORY_CONTEXTS:
            mem_rows.append((n, asyncio.run(memory_at(n, urls))))
        console.print(memory_table(mem_rows))
    console.print(f"Finished in {time.perf_counter() - started:.0f} s: {load_note()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
