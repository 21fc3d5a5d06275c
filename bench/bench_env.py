"""Benchmarks of the RL environments, all in one run, against BrowserGym as the baseline.

Run from the project root::

    .venv/bin/python bench/bench_env.py            # ~8 min: two shipped worlds, 300 steps a row
    .venv/bin/python bench/bench_env.py --quick    # ~4 min: one world, 80 steps a row
    .venv/bin/python bench/bench_env.py --density  # sparse (generator 2) vs dense (3) pages

Setup (timed, not benchmarked): shipped worlds from ``fsm_specs/`` (``flight_booking_easy_s0``:
hover menu, calendar, modal; ``recipe_site_easy_s3``: cookie banner, slider) are rendered,
explored (2 instances a task, shortest paths), verified in Chromium and captured for the
fast env into a temp dir (``--keep DIR`` keeps and reuses it). The MiniWoB++ pages are
served from the ``miniwob`` wheel on loopback.

What is measured (wall time, ``time.perf_counter``):

1. **webworld live env**, 1 episode and 4 at once (``LiveVectorEnv``, one Chromium, a
   context per episode), on the worlds as sites that load a page per action (``navigate``)
   and as sites that update in place (``swap``, the same specs): the verified trajectories of
   the worlds played in turn, one action a step; steps/s, mean ms per step, and resets.
   ``reset (next page ready)``: a reset after the episode ran, so the next episode's start
   page has loaded in the background (the normal case in a rollout loop); ``reset (back to
   back)``: a reset right after a reset, which has to wait for that load.
2. **webworld fast env**, 1 and 4 episodes (``FastVectorEnv``): the same trajectories, and
   random actions (``RandomPolicy``, 20% broken ones).
3. **MiniWoB++ click-button**, the same non-ending steps on both (fill the first text
   field, then click it, alternately; the episode never ends): **BrowserGym's own env**
   (``browsergym/miniwob.click-button`` with ``slow_mo=0, pre_observation_delay=0``, its
   default observation: AXTree, DOM snapshot and screenshot) and **webworld's
   ``MiniWoBEnv``** (accessibility text, no screenshot; ``+shot`` adds one). Steps/s and
   reset median.

A second table splits a live step (1 episode) by process: CPU ms per step of Chromium (its
renderers, GPU and browser processes, read from ``/proc``), of Playwright's node driver, and of
this Python process (the env, the Playwright client, the site server's thread), and
Chromium's share of the step's wall time, for both transitions. The last table checks the
targets: the live env (swap) at least 3x BrowserGym's tuned steps/s, reset median at most
0.1 s, the fast env at least 1,000 steps/s.

``--density`` (instead of the above): what a denser page costs a step. Each world's
provenance in ``fsm_specs/`` (theme, profile, seed) is generated again at generator version
2 (sparse pages) and version 3 (dense: a navigation bar, sidebar, footer of links and paged
result lists), as a swap site, and prepared like the shipped worlds (render, explore,
verify, snapshot). Per version, one after the other in one run: the live env (1 episode)
plays the verified trajectories for the same number of steps (steps/s, ms/step, and the
CPU ms per step of Chromium and of this process), then plays them again with a probe after
each step, outside the step's time: the step's observation's interactive elements
(``interactive_elements``) and characters, and one more ``BrowserTab.observe()`` of the
same page, timed alone (the page's DOM walk, its answer, the text formatted; a step's own
read is part of its settle call and cannot be timed apart from outside). The probe's text
must be the step's, or its ids might differ from the ones the next action uses:
``probe = step`` counts the steps where it was. The fast env plays the same trajectories
(steps/s). The last row divides dense by sparse.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchkit import load_note, make_console, progress_bar, rate
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webworld.browser.observe import interactive_elements  # noqa: E402
from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates  # noqa: E402
from webworld.propose.procedural import generate  # noqa: E402
from webworld.render.site import load_site, render_site  # noqa: E402
from webworld.rl.fast.capture import build_snapshot, load_snapshot  # noqa: E402
from webworld.rl.fast.env import FastEnv, FastVectorEnv  # noqa: E402
from webworld.rl.live import LiveEnv, LiveVectorEnv  # noqa: E402
from webworld.rl.policies import RandomPolicy, page_elements  # noqa: E402
from webworld.rl.tasks import TaskInstance, WorldSet, load_worlds  # noqa: E402
from webworld.spec.io import load_spec  # noqa: E402
from webworld.spec.models import WorldSpec  # noqa: E402
from webworld.verify.runner import verify_worlds  # noqa: E402

WORLDS = ["flight_booking_easy_s0", "recipe_site_easy_s3"]
TRANSITIONS = ("navigate", "swap")
DENSITY_VERSIONS = {2: "sparse", 3: "dense"}   # generator version -> what its pages are


def prepare(root: Path, names: list[str], console,  # type: ignore[no-untyped-def]
            transition: str = "navigate") -> WorldSet:
    """The shipped worlds, built under ``root`` (as sites that ``transition`` between pages)."""
    specs = [load_spec(ROOT / "fsm_specs" / f"{name}.json").model_copy(
        update={"transition": transition}) for name in names]
    return prepare_specs(root, specs, console)


def prepare_specs(root: Path, specs: list[WorldSpec], console) -> WorldSet:  # type: ignore[no-untyped-def]
    """The worlds of ``specs`` rendered, explored, verified and captured under ``root``
    (a world already captured there is kept)."""
    for spec in specs:
        site_dir = root / "sites" / spec.id
        if (site_dir / "fast" / "snapshot.json.gz").is_file() and \
                load_snapshot(load_site(site_dir)) is not None:
            continue
        started = time.perf_counter()
        render_site(spec, site_dir)
        config = ExploreConfig(max_instances=2, max_shortest=1, max_longer=0)
        write_candidates(explore_world(spec, config), root / "trajectories" / spec.id)
        verify_worlds([site_dir], root / "trajectories", workers=2)
        build_snapshot(load_site(site_dir))
        console.print(f"[dim]prepared {spec.id} in {time.perf_counter() - started:.0f}s[/]")
    return load_worlds(root / "sites", root / "trajectories", worlds=[s.id for s in specs])


def regenerated(names: list[str], version: int) -> list[WorldSpec]:
    """The shipped worlds' provenance (theme, profile, seed) generated at ``version``, as
    sites that update in place."""
    specs = []
    for name in names:
        made = load_spec(ROOT / "fsm_specs" / f"{name}.json").provenance
        assert made is not None, f"{name} says nothing of how it was generated"
        spec = generate(made.theme, made.profile, made.seed, version=version).spec
        specs.append(spec.model_copy(update={"transition": "swap"}))
    return specs


# --- where a live step's time goes ------------------------------------------------------------


def process_cpu() -> dict[str, float]:
    """CPU seconds so far of Chromium's processes and of Playwright's node driver (from /proc),
    and of this process."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {"chromium": 0.0, "driver": 0.0, "python": time.process_time()}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            kind = "chromium" if comm.startswith(("chromium", "chrome")) else \
                "driver" if comm == "node" else None
            if kind is None:
                continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        out[kind] += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return out


def with_cpu(play: Callable[[], dict[str, float]]) -> dict[str, float]:
    """``play()``'s numbers and the CPU seconds each process kind used during it."""
    before = process_cpu()
    numbers = play()
    after = process_cpu()
    return {**numbers, **{f"cpu_{k}": after[k] - before[k] for k in before}}


# --- playing ---------------------------------------------------------------------------------


def oracle_steps(instances: list[TaskInstance]) -> list[tuple[TaskInstance, tuple[str, ...]]]:
    return [(i, path) for i in instances for path in i.oracle]


def play_single(env, plays: list, steps: int, tick: Callable[[int], None]) -> dict[str, float]:
    """Trajectories in turn until ``steps`` steps: steps/s, ms/step, reset times."""
    env.reset(seed=0)
    done, spent, warm, cold, k = 0, 0.0, [], [], 0
    while done < steps:
        inst, path = plays[k % len(plays)]
        k += 1
        started = time.perf_counter()
        env.reset(options={"task": inst, "intent": inst.intents[0]})
        warm.append(time.perf_counter() - started)
        for action in path:
            started = time.perf_counter()
            env.step(action)
            spent += time.perf_counter() - started
            done += 1
            tick(1)
    for seed in range(5):
        started = time.perf_counter()
        env.reset(seed=seed)
        cold.append(time.perf_counter() - started)
    return {"steps": done, "seconds": spent, "warm": statistics.median(warm),
            "cold": statistics.median(cold)}


def play_vector(envs, steps: int, tick: Callable[[int], None]) -> dict[str, float]:
    """N episodes at once, each playing its instance's verified trajectory (next-step
    autoreset: a slot whose episode ended is reset on the next step, not counted)."""
    n = envs.num_envs
    _, infos = envs.reset(seed=0)
    paths = [envs.worlds.instance(x).oracle[0] for x in infos["instance"]]
    cursor = [0] * n
    done, spent = 0, 0.0
    while done < steps:
        actions = [paths[i][cursor[i]] if cursor[i] < len(paths[i]) else "press('1', 'Escape')"
                   for i in range(n)]
        started = time.perf_counter()
        _, _, _, _, infos = envs.step(actions)
        spent += time.perf_counter() - started
        stepped = 0
        for i in range(n):
            if infos["step"][i] == 0:  # this slot was reset: a new episode
                paths[i], cursor[i] = envs.worlds.instance(infos["instance"][i]).oracle[0], 0
            else:
                cursor[i] += 1
                stepped += 1
        done += stepped
        tick(stepped)
    return {"steps": done, "seconds": spent}


def random_fast(env, steps: int) -> dict[str, float]:
    policy = RandomPolicy(0, invalid_rate=0.2)
    obs, info = env.reset(seed=0)
    spent, done = 0.0, 0
    while done < steps:
        action = policy.act(obs, info)
        started = time.perf_counter()
        obs, _, term, trunc, info = env.step(action)
        if term or trunc:
            obs, info = env.reset()
        spent += time.perf_counter() - started
        done += 1
    return {"steps": done, "seconds": spent}


class ObservationProbe:
    """After each step of a live env (a ``play_single`` tick, outside the step's time): the
    step's observation's interactive elements and characters, and one more observation of
    the same page, timed alone."""

    def __init__(self, env: LiveEnv) -> None:
        self.env = env
        self.elements: list[int] = []
        self.chars: list[int] = []
        self.ms: list[float] = []
        self.same = 0

    def after(self, tick: Callable[[int], None]) -> Callable[[int], None]:
        def probe(n: int) -> None:
            self.probe()
            tick(n)
        return probe

    def probe(self) -> None:
        episode = self.env.episode
        assert episode is not None and episode.seen is not None
        text = episode.seen.text  # the env's observation text ("full", the default mode)
        self.elements.append(interactive_elements(text))
        self.chars.append(len(text))
        tab = episode.page.tab  # type: ignore[attr-defined]

        async def observe() -> tuple[float, str]:
            started = time.perf_counter()
            seen = await tab.observe()
            return time.perf_counter() - started, seen.text

        seconds, again = self.env._drive(observe())
        self.ms.append(1000 * seconds)
        self.same += again == text

    def numbers(self) -> dict[str, float]:
        return {"elements": statistics.median(self.elements),
                "chars": statistics.median(self.chars), "observe_ms": statistics.median(self.ms),
                "probed": len(self.ms), "same": self.same}


# --- MiniWoB++: webworld against BrowserGym ------------------------------------------------------


def time_steps(env, field_of: Callable[[dict], str], action: Callable[[int, str], str],
               steps: int) -> dict[str, float]:
    """Five seeded resets, then ``steps`` non-ending steps on the page's first text field."""
    resets = []
    for seed in range(5):
        started = time.perf_counter()
        obs, _ = env.reset(seed=seed)
        resets.append(time.perf_counter() - started)
    field, spent = field_of(obs), 0.0
    for k in range(steps):
        started = time.perf_counter()
        env.step(action(k, field))
        spent += time.perf_counter() - started
    return {"steps": steps, "seconds": spent, "reset": statistics.median(resets)}


def webworld_miniwob(steps: int, screenshot: bool) -> dict[str, float]:
    from webworld.rl.miniwob import MiniWoBEnv

    env = MiniWoBEnv("click-button", max_steps=10_000, screenshot=screenshot)
    try:
        return time_steps(
            env, lambda obs: next(e.bid for e in page_elements(obs["axtree"]) if e.role == "textbox"),
            lambda k, f: f"fill('{f}', 'abc')" if k % 2 == 0 else f"click('{f}')", steps)
    finally:
        env.close()


def browsergym_miniwob(steps: int) -> dict[str, float]:
    import gymnasium
    from browsergym.miniwob import ALL_MINIWOB_TASKS  # noqa: F401  (registers the ids)

    from webworld.browser.launch import chromium_path
    from webworld.rl.browsergym import release_playwright, use_debian_chromium
    from webworld.rl.miniwob import MiniWoBServer

    server = MiniWoBServer()
    os.environ["MINIWOB_URL"] = f"{server.url}/miniwob/"
    use_debian_chromium()
    env = gymnasium.make("browsergym/miniwob.click-button", headless=True, slow_mo=0,
                         pre_observation_delay=0,
                         pw_chromium_kwargs={"executable_path": chromium_path()})
    try:
        return time_steps(
            env, lambda obs: next(n["browsergym_id"] for n in obs["axtree_object"]["nodes"]
                                  if n.get("role", {}).get("value") == "textbox"
                                  and "browsergym_id" in n),
            lambda k, f: f'fill("{f}", "abc")' if k % 2 == 0 else f'click("{f}")', steps)
    finally:
        env.close()
        server.close()
        release_playwright()


# --- the run ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--keep", type=Path, help="build the worlds here and keep them")
    parser.add_argument("--density", action="store_true",
                        help="only the live (swap) and fast envs on the worlds generated at "
                             "version 2 (sparse pages) and 3 (dense)")
    args = parser.parse_args()
    console = make_console()
    steps = 80 if args.quick else 300
    names = WORLDS[:1] if args.quick else WORLDS
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-env-"))
    console.print(f"bench_env: {'quick' if args.quick else 'full'}"
                  f"{', density' if args.density else ''}, {steps} steps a row; {load_note()}")
    try:
        if args.density:
            by_version = {v: prepare_specs(root / "density" / f"v{v}", regenerated(names, v),
                                           console) for v in DENSITY_VERSIONS}
            density_report(run_density(by_version, steps, console), console)
        else:
            worlds = {t: prepare(root / t, names, console, t) for t in TRANSITIONS}
            rows = run_all(worlds, steps, console)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if not args.density:
        report(rows, console)
    console.print(load_note())


def run_all(by_transition: dict[str, WorldSet], steps: int,
            console) -> dict[str, dict[str, float]]:  # type: ignore[no-untyped-def]
    rows: dict[str, dict[str, float]] = {}
    bar = progress_bar(console)
    worlds = by_transition["navigate"]
    plays = oracle_steps(worlds.instances())
    with bar:
        def run(name: str, total: int, fn: Callable[[Callable[[int], None]], dict]) -> None:
            task = bar.add_task(name, total=total)
            rows[name] = fn(lambda n: bar.advance(task, n))
            bar.remove_task(task)

        for transition, sites in by_transition.items():
            live = LiveEnv(sites, split=None, max_steps=1000)
            played = oracle_steps(sites.instances())
            try:
                run(f"live env ({transition}), 1 episode", steps, lambda tick, env=live, p=played:
                    with_cpu(lambda: play_single(env, p, steps, tick)))
            finally:
                live.close()
            vector = LiveVectorEnv(4, sites, split=None, max_steps=1000)
            try:
                run(f"live env ({transition}), 4 episodes", steps,
                    lambda tick, envs=vector: play_vector(envs, steps, tick))
            finally:
                vector.close()
        fast = FastEnv(worlds, split=None, build=False, max_steps=1000)
        run("fast env, 1 episode", steps * 20,
            lambda tick: play_single(fast, plays, steps * 20, tick))
        rows["fast env, random actions"] = random_fast(FastEnv(worlds, split=None, build=False),
                                                       steps * 20)
        fast4 = FastVectorEnv(4, worlds, split=None, build=False, max_steps=1000)
        run("fast env, 4 episodes", steps * 20, lambda tick: play_vector(fast4, steps * 20, tick))
        run("MiniWoB click-button: BrowserGym", 1, lambda tick: browsergym_miniwob(steps // 2))
        run("MiniWoB click-button: webworld", 1, lambda tick: webworld_miniwob(steps // 2, False))
        run("MiniWoB click-button: webworld +shot", 1,
            lambda tick: webworld_miniwob(steps // 2, True))
    return rows


def run_density(by_version: dict[int, WorldSet], steps: int,
                console) -> dict[int, dict[str, float]]:  # type: ignore[no-untyped-def]
    """Per generator version: the live env's timed play, its probed play, the fast env's."""
    rows: dict[int, dict[str, float]] = {}
    bar = progress_bar(console)
    with bar:
        def run(name: str, total: int, fn: Callable[[Callable[[int], None]], dict]) -> dict:
            task = bar.add_task(name, total=total)
            try:
                return fn(lambda n: bar.advance(task, n))
            finally:
                bar.remove_task(task)

        for v, sites in by_version.items():
            plays = oracle_steps(sites.instances())
            console.print(f"generator {v} ({DENSITY_VERSIONS[v]}): "
                          f"{', '.join(sorted(sites.worlds))}; {len(plays)} verified trajectories")
            live = LiveEnv(sites, split=None, max_steps=1000)
            try:
                row = run(f"live env (swap), generator {v}", steps, lambda tick: with_cpu(
                    lambda: play_single(live, plays, steps, tick)))
                probe = ObservationProbe(live)
                run(f"live env (swap), generator {v}, probed", steps,
                    lambda tick: play_single(live, plays, steps, probe.after(tick)))
                row.update(probe.numbers())
            finally:
                live.close()
            fast = FastEnv(sites, split=None, build=False, max_steps=1000)
            played = run(f"fast env, generator {v}", steps * 20,
                         lambda tick: play_single(fast, plays, steps * 20, tick))
            row.update(fast_steps=played["steps"], fast_seconds=played["seconds"])
            rows[v] = row
    return rows


def density_report(rows: dict[int, dict[str, float]], console) -> None:  # type: ignore[no-untyped-def]
    table = Table("version", "steps", "steps/s", "ms/step", "Chromium CPU ms/step",
                  "Python CPU ms/step", "elements/obs", "obs chars", "observe alone ms",
                  "probe = step", "fast env steps/s", "fast env ms/step",
                  title="Density: the live env (swap, 1 episode) and the fast env on sparse "
                        "(generator 2) and dense (3) pages (elements, chars, observe: medians "
                        "per step)")
    numbers: dict[int, dict[str, float]] = {}
    for v, r in rows.items():
        n = numbers[v] = {
            "rate": r["steps"] / r["seconds"], "ms": 1000 * r["seconds"] / r["steps"],
            "chromium": 1000 * r["cpu_chromium"] / r["steps"],
            "python": 1000 * r["cpu_python"] / r["steps"], "elements": r["elements"],
            "chars": r["chars"], "observe": r["observe_ms"],
            "fast_rate": r["fast_steps"] / r["fast_seconds"],
            "fast_ms": 1000 * r["fast_seconds"] / r["fast_steps"]}
        table.add_row(f"{v} ({DENSITY_VERSIONS[v]})", f"{r['steps']:.0f}",
                      rate(r["steps"], r["seconds"]), f"{n['ms']:.1f}", f"{n['chromium']:.1f}",
                      f"{n['python']:.1f}", f"{n['elements']:.0f}", f"{n['chars']:,.0f}",
                      f"{n['observe']:.1f}", f"{r['same']:.0f}/{r['probed']:.0f}",
                      rate(r["fast_steps"], r["fast_seconds"]), f"{n['fast_ms']:.3f}",
                      end_section=v == max(rows))
    sparse, dense = (numbers[v] for v in DENSITY_VERSIONS)

    def ratio(key: str) -> str:
        return f"{dense[key] / sparse[key]:.2f}x" if sparse[key] else "-"

    table.add_row("dense/sparse", "", ratio("rate"), ratio("ms"), ratio("chromium"),
                  ratio("python"), ratio("elements"), ratio("chars"), ratio("observe"), "",
                  ratio("fast_rate"), ratio("fast_ms"))
    console.print(table)


def report(rows: dict[str, dict[str, float]], console) -> None:  # type: ignore[no-untyped-def]
    table = Table("environment", "steps", "steps/s", "ms/step", "reset (next page ready)",
                  "reset (back to back)", title="Environments")
    for name, r in rows.items():
        ms = 1000 * r["seconds"] / r["steps"]
        warm = r.get("warm", r.get("reset"))
        table.add_row(name, f"{r['steps']:.0f}", rate(r["steps"], r["seconds"]), f"{ms:.2f}",
                      f"{1000 * warm:.0f} ms" if warm is not None else "-",
                      f"{1000 * r['cold']:.0f} ms" if "cold" in r else "-")
    console.print(table)
    split = Table("live env, 1 episode", "ms/step (wall)", "Chromium CPU ms/step",
                  "driver CPU ms/step", "Python CPU ms/step", "Chromium share of the step",
                  title="Where a live step's time goes")
    for transition in TRANSITIONS:
        r = rows[f"live env ({transition}), 1 episode"]
        per = {k: 1000 * r[f"cpu_{k}"] / r["steps"] for k in ("chromium", "driver", "python")}
        wall = 1000 * r["seconds"] / r["steps"]
        # the CPU counts span the resets too; the step's wall time does not
        split.add_row(transition, f"{wall:.1f}", f"{per['chromium']:.1f}", f"{per['driver']:.1f}",
                      f"{per['python']:.1f}", f"{per['chromium'] / wall:.0%}")
    console.print(split)
    bg = rows["MiniWoB click-button: BrowserGym"]
    bg_rate = bg["steps"] / bg["seconds"]
    live = rows["live env (swap), 1 episode"]
    live4 = rows["live env (swap), 4 episodes"]
    before = rows["live env (navigate), 1 episode"]
    ours = rows["MiniWoB click-button: webworld"]
    fast = rows["fast env, 1 episode"]
    checks = Table("target", "goal", "measured", "met", title="Targets")
    for what, goal, value, ok in [
        ("live env (navigate) steps/s / BrowserGym's (1 episode)", "-",
         f"{before['steps'] / before['seconds'] / bg_rate:.1f}x", None),
        ("live env (swap) steps/s / BrowserGym's (1 episode)", ">= 3x",
         f"{live['steps'] / live['seconds'] / bg_rate:.1f}x",
         live["steps"] / live["seconds"] >= 3 * bg_rate),
        ("live env (swap) steps/s / BrowserGym's (4 episodes)", ">= 3x",
         f"{live4['steps'] / live4['seconds'] / bg_rate:.1f}x",
         live4["steps"] / live4["seconds"] >= 3 * bg_rate),
        ("webworld MiniWoB env / BrowserGym, same task and steps", "-",
         f"{ours['steps'] / ours['seconds'] / bg_rate:.1f}x", None),
        ("live env (swap) reset median (next page ready)", "<= 100 ms",
         f"{1000 * live['warm']:.0f} ms",
         live["warm"] <= 0.1),
        ("fast env steps/s (verified trajectories)", ">= 1,000",
         rate(fast["steps"], fast["seconds"]), fast["steps"] / fast["seconds"] >= 1000),
    ]:
        checks.add_row(what, goal, value, "-" if ok is None else "yes" if ok else "[red]no[/]")
    console.print(checks)


if __name__ == "__main__":
    main()
