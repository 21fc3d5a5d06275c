"""Benchmarks of the spec core: world generation, candidate exploration and state-space BFS.

Run from the project root::

    .venv/bin/python bench/bench_spec.py            # full: BFS scaling up to 1e6 states
    .venv/bin/python bench/bench_spec.py --quick    # smoke run: up to 1e5 states, fewer worlds

What is measured (single-threaded; steps 1-2 in wall time, ``time.perf_counter``):

1. Generation. ``generate(theme, profile, seed)`` over a fixed grid of themes x profiles x
   seeds: worlds/s per profile. ``generate`` already runs one BFS per attempt (profile
   checks and validation), so it is BFS-bound on larger worlds. The same worlds then go
   through ``explore_world`` (BFS + task instances + path enumeration): candidates/s.
2. BFS on generated worlds. ``explore_states`` on every generated world, summed per profile:
   reachable states, transitions (enabled firings that change the state), seconds, states/s.
3. BFS scaling. Synthetic worlds of 10 pages in a ring x two int counters, with a guarded
   inc / dec action per counter and next / prev links on every page: every state has the
   same out-degree (6 in the interior), so only the number of states changes. The reachable
   count is exactly pages * A * B (printed). For each size: seconds, states/s,
   ``t(n)/t(1e3)`` next to ``n/1e3`` (equal columns = linear time), and the log-log slope
   between consecutive sizes, ``log(t2/t1) / log(n2/n1)``: 1.0 is linear, above 1.1 means
   per-state cost grows with the size (dict / GC / memory effects). Ratios, rates and
   slopes of steps 3-4 use CPU seconds (``time.process_time``) so that other processes on a
   shared machine do not bend the curve; ``cpu/wall`` below ~90% says how loaded it was.
4. Baseline. ``nx.single_source_shortest_path_length`` over the state graph that step 3
   already built: the cost of traversal alone, with no guard / effect evaluation and no
   graph construction. ``webworld / nx`` is how many times more a webworld BFS costs than
   walking the finished graph; a ratio that stays flat with size means webworld's overhead
   is a constant factor per state, a growing ratio means something in it scales worse.

Small sizes are repeated and the least CPU time kept (the nx baseline at least 3 times);
1e6 runs once. The scaling runs pass
``budget=`` (above ``DEFAULT_STATE_BUDGET``) so 1e6 is not truncated. Peak RSS (``ru_maxrss``,
the process high-water mark) is printed after the largest run.
"""

from __future__ import annotations

import argparse
import functools
import gc
import math
import os
import resource
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

import networkx as nx
from benchkit import load_note, make_console, progress_bar, rate
from rich.console import Console
from rich.table import Table

from webworld.explore.candidates import ExploreConfig, explore_world
from webworld.propose.procedural import GenerationError, generate
from webworld.spec.graph import explore_states
from webworld.spec.models import (
    Action,
    Condition,
    Effect,
    Element,
    GuiStep,
    Page,
    Variable,
    WorldSpec,
)

T = TypeVar("T")

THEMES = [
    "online bookstore",
    "flight booking",
    "hotel reservations",
    "recipe site",
    "job board",
    "bank",
]
PROFILES = ["easy", "medium", "hard"]
SEEDS = [0, 1, 2]
QUICK_THEMES, QUICK_SEEDS = THEMES[:3], [0]

# (target, pages, counter a size, counter b size): pages * a * b reachable states.
SCALING_SIZES = [
    (1_000, 10, 10, 10),
    (10_000, 10, 40, 25),
    (100_000, 10, 100, 100),
    (1_000_000, 10, 400, 250),
]
QUICK_MAX_SIZE = 100_000
REPEAT_WORK = 100_000
"""Small sizes are repeated until about this many states were explored (least CPU time kept)."""


# --- helpers -----------------------------------------------------------------------------






def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Wall seconds of one call, and its result."""
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


@dataclass
class Timing:
    wall: float
    cpu: float

    @property
    def cpu_share(self) -> float:
        """CPU / wall: below ~90% the process was waiting for a core (a loaded machine)."""
        return self.cpu / self.wall if self.wall > 0 else 0.0


def best_of(fn: Callable[[], T], repeats: int) -> tuple[Timing, T]:
    """The run with the least CPU time over ``repeats`` calls, and the last result."""
    best, out = Timing(math.inf, math.inf), None
    for _ in range(repeats):
        gc.collect()
        cpu_started = time.process_time()
        wall, out = timed(fn)
        cpu = time.process_time() - cpu_started
        if cpu < best.cpu:
            best = Timing(wall, cpu)
    return best, out  # type: ignore[return-value]






def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


# --- 1 + 2: generated worlds ---------------------------------------------------------------


@dataclass
class ProfileStats:
    worlds: int = 0
    failed: int = 0
    gen_seconds: float = 0.0
    gen_cpu: float = 0.0
    explore_seconds: float = 0.0
    candidates: int = 0
    bfs_seconds: float = 0.0
    states: int = 0
    transitions: int = 0
    specs: list[WorldSpec] = field(default_factory=list)


def generate_worlds(themes: list[str], seeds: list[int], console: Console
                    ) -> dict[str, ProfileStats]:
    """Time ``generate`` over themes x profiles x seeds, grouped by profile."""
    stats = {p: ProfileStats() for p in PROFILES}
    jobs = [(t, p, s) for p in PROFILES for t in themes for s in seeds]
    with progress_bar(console) as progress:
        task = progress.add_task("generate", total=len(jobs))
        for theme, profile, seed in jobs:
            progress.update(task, description=f"generate {profile:6} {theme} s{seed}")
            st = stats[profile]
            cpu_started = time.process_time()
            try:
                seconds, proposal = timed(functools.partial(generate, theme, profile, seed))
                st.specs.append(proposal.spec)
                st.worlds += 1
            except GenerationError:
                seconds = 0.0
                st.failed += 1
            st.gen_seconds += seconds
            st.gen_cpu += time.process_time() - cpu_started
            progress.advance(task)
    return stats


def explore_worlds(stats: dict[str, ProfileStats], console: Console) -> None:
    """Time ``explore_world`` (candidates) and ``explore_states`` (BFS) on every world."""
    total = sum(len(st.specs) for st in stats.values())
    config = ExploreConfig()
    with progress_bar(console) as progress:
        task = progress.add_task("explore", total=total)
        for profile, st in stats.items():
            for spec in st.specs:
                progress.update(task, description=f"explore {profile:6} {spec.id}")
                seconds, result = timed(functools.partial(explore_world, spec, config))
                st.explore_seconds += seconds
                st.candidates += len(result.candidates)
                seconds, graph = timed(functools.partial(explore_states, spec))
                st.bfs_seconds += seconds
                st.states += len(graph.states)
                st.transitions += graph.edges
                progress.advance(task)


def generation_table(stats: dict[str, ProfileStats]) -> Table:
    table = Table(title="1. Worlds generated per second (generate) and explore_world candidates/s")
    for name in ("profile", "worlds", "failed", "gen s", "cpu/wall", "worlds/s", "s/world",
                 "explore s", "candidates", "candidates/s"):
        table.add_column(name, justify="left" if name == "profile" else "right")
    rows = list(stats.items()) + [("all", _sum_stats(stats.values()))]
    for profile, st in rows:
        share = st.gen_cpu / st.gen_seconds if st.gen_seconds else 0.0
        table.add_row(profile, str(st.worlds), str(st.failed), f"{st.gen_seconds:.2f}",
                      f"{share:.0%}",
                      rate(st.worlds, st.gen_seconds),
                      f"{st.gen_seconds / st.worlds:.3f}" if st.worlds else "-",
                      f"{st.explore_seconds:.2f}", f"{st.candidates:,}",
                      rate(st.candidates, st.explore_seconds),
                      end_section=profile == PROFILES[-1])
    return table


def bfs_table(stats: dict[str, ProfileStats]) -> Table:
    table = Table(title="2. BFS (explore_states) on generated worlds, summed per profile")
    for name in ("profile", "worlds", "states", "transitions", "mean states/world",
                 "seconds", "states/s", "transitions/s"):
        table.add_column(name, justify="left" if name == "profile" else "right")
    rows = list(stats.items()) + [("all", _sum_stats(stats.values()))]
    for profile, st in rows:
        table.add_row(profile, str(st.worlds), f"{st.states:,}", f"{st.transitions:,}",
                      f"{st.states / st.worlds:,.0f}" if st.worlds else "-",
                      f"{st.bfs_seconds:.3f}", rate(st.states, st.bfs_seconds),
                      rate(st.transitions, st.bfs_seconds), end_section=profile == PROFILES[-1])
    return table


def _sum_stats(items: Iterable[ProfileStats]) -> ProfileStats:
    total = ProfileStats()
    for st in items:
        for name in ("worlds", "failed", "gen_seconds", "gen_cpu", "explore_seconds", "candidates",
                     "bfs_seconds", "states", "transitions"):
            setattr(total, name, getattr(total, name) + getattr(st, name))
    return total


# --- 3 + 4: synthetic scaling ------------------------------------------------------------


def grid_spec(pages: int, a_size: int, b_size: int) -> WorldSpec:
    """``pages`` pages in a ring x counters a in [0, a_size) and b in [0, b_size).

    Every (page, a, b) is reachable from (p0, 0, 0), so the state space has exactly
    ``pages * a_size * b_size`` states; interior states have 6 outgoing transitions.
    """
    variables = [Variable(name="a", type="int", min=0, max=a_size - 1, initial=0),
                 Variable(name="b", type="int", min=0, max=b_size - 1, initial=0)]
    page_list = [_grid_page(i, pages, {"a": a_size - 1, "b": b_size - 1}) for i in range(pages)]
    return WorldSpec(id=f"grid_{pages}x{a_size}x{b_size}", name="Counter grid",
                     theme="benchmark", home="p0", variables=variables, pages=page_list)


def _grid_page(i: int, pages: int, maxima: dict[str, int]) -> Page:
    elements: list[Element] = []
    actions: list[Action] = []
    for var, top in maxima.items():
        for verb, step, guard in (("inc", 1, Condition(var=var, op="lt", value=top)),
                                  ("dec", -1, Condition(var=var, op="gt", value=0))):
            elements.append(Element(id=f"{verb}_{var}", kind="button", label=f"{verb} {var}"))
            actions.append(Action(id=f"p{i}_{verb}_{var}", label=f"{verb} {var}",
                                  gui=[GuiStep(op="click", element=f"{verb}_{var}")],
                                  guards=[guard], effects=[Effect(op="inc", var=var, value=step)]))
    for name, target in (("next", (i + 1) % pages), ("prev", (i - 1) % pages)):
        elements.append(Element(id=name, kind="link", label=name))
        actions.append(Action(id=f"p{i}_{name}", label=name, navigate=f"p{target}",
                              gui=[GuiStep(op="click", element=name)]))
    return Page(id=f"p{i}", title=f"Page {i}", elements=elements, actions=actions)


@dataclass
class ScalingRow:
    target: int
    states: int
    transitions: int
    bfs: Timing
    nx: Timing
    repeats: int

    # Ratios and slopes use CPU seconds: on a shared machine they do not count the time
    # other processes held the core (cpu/wall shows how much that was).
    @property
    def seconds(self) -> float:
        return self.bfs.cpu

    @property
    def nx_seconds(self) -> float:
        return self.nx.cpu



def nx_bfs(graph: nx.DiGraph) -> int:
    """Plain BFS over the finished state graph: how many nodes it reaches from node 0."""
    return len(nx.single_source_shortest_path_length(graph, 0))


def measure_size(target: int, pages: int, a_size: int, b_size: int) -> ScalingRow:
    spec = grid_spec(pages, a_size, b_size)
    expected = pages * a_size * b_size
    repeats = max(1, min(5, REPEAT_WORK // expected))
    # budget= overrides DEFAULT_STATE_BUDGET (200k) so the 1e6 space is not cut.
    bfs = functools.partial(explore_states, spec, budget=expected + 1)
    bfs_time, graph = best_of(bfs, repeats)
    assert not graph.truncated and len(graph.states) == expected, graph.truncated_by
    nx_time, reached = best_of(functools.partial(nx_bfs, graph.graph), max(3, repeats))
    assert reached == expected, (reached, expected)
    states, transitions = len(graph.states), graph.edges
    del graph
    gc.collect()
    return ScalingRow(target, states, transitions, bfs_time, nx_time, repeats)


def run_scaling(sizes: list[tuple[int, int, int, int]], console: Console) -> list[ScalingRow]:
    rows = []
    with progress_bar(console) as progress:
        task = progress.add_task("BFS scaling", total=len(sizes))
        for target, pages, a_size, b_size in sizes:
            progress.update(task, description=f"BFS {pages} pages x {a_size} x {b_size}")
            rows.append(measure_size(target, pages, a_size, b_size))
            progress.advance(task)
    return rows


def slope(t1: float, t2: float, n1: int, n2: int) -> str:
    if t1 <= 0 or t2 <= 0 or n1 == n2:
        return "-"
    return f"{math.log(t2 / t1) / math.log(n2 / n1):.2f}"


def scaling_table(rows: list[ScalingRow]) -> Table:
    table = Table(title="3. BFS scaling on synthetic grid worlds (10 pages x counter a x counter b)")
    for name in ("target", "reachable states", "transitions", "runs", "wall s", "cpu s",
                 "cpu/wall", "states/s", "t(n)/t(1e3)", "n/1e3", "slope vs prev"):
        table.add_column(name, justify="right")
    base = rows[0]
    for prev, row in zip([None] + rows, rows):
        table.add_row(f"{row.target:.0e}", f"{row.states:,}", f"{row.transitions:,}",
                      str(row.repeats), f"{row.bfs.wall:.3f}", f"{row.seconds:.3f}",
                      f"{row.bfs.cpu_share:.0%}",
                      rate(row.states, row.seconds),
                      f"{row.seconds / base.seconds:,.1f}", f"{row.states / base.states:,.1f}",
                      slope(prev.seconds, row.seconds, prev.states, row.states) if prev else "-")
    return table


def baseline_table(rows: list[ScalingRow]) -> Table:
    table = Table(title="4. Baseline: nx.single_source_shortest_path_length on the built graph")
    for name in ("target", "states", "webworld cpu s", "nx BFS cpu s", "nx states/s",
                 "nx slope", "webworld / nx"):
        table.add_column(name, justify="right")
    for prev, row in zip([None] + rows, rows):
        table.add_row(f"{row.target:.0e}", f"{row.states:,}", f"{row.seconds:.3f}",
                      f"{row.nx_seconds:.4f}", rate(row.states, row.nx_seconds),
                      slope(prev.nx_seconds, row.nx_seconds, prev.states, row.states)
                      if prev else "-",
                      f"{row.seconds / row.nx_seconds:.1f}x")
    return table


# --- main --------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: BFS scaling up to 1e5 states, fewer worlds")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    console = make_console()
    themes, seeds = (QUICK_THEMES, QUICK_SEEDS) if args.quick else (THEMES, SEEDS)
    sizes = [s for s in SCALING_SIZES if not args.quick or s[0] <= QUICK_MAX_SIZE]
    console.print(f"[bold]webworld spec benchmarks[/] ({'quick' if args.quick else 'full'}; "
                  f"python {sys.version.split()[0]}, networkx {nx.__version__}, "
                  f"{os.cpu_count()} cpus, {load_note()})")

    stats = generate_worlds(themes, seeds, console)
    explore_worlds(stats, console)
    console.print(generation_table(stats))
    console.print(bfs_table(stats))
    del stats
    gc.collect()

    rows = run_scaling(sizes, console)
    console.print(scaling_table(rows))
    console.print(baseline_table(rows))
    console.print(f"Finished: {load_note()}")
    console.print(f"Peak RSS after the {rows[-1].states:,}-state run: "
                  f"{peak_rss_mib():,.0f} MiB (process high-water mark)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
