"""`webworld build`: the pipeline from themes to data, with progress and a summary."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from webworld.cli.console import out
from webworld.cli.errors import reports_errors
from webworld.cli.generate_cmd import propose_world
from webworld.cli.options import (
    SPECS_DIR,
    TRAJECTORIES_DIR,
    ExtraSteps,
    MaxDepth,
    MaxInstances,
    MaxLonger,
    MaxShortest,
    ProfileChoice,
    StateBudget,
)
from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
from webworld.spec.io import save_spec

DEFAULT_THEMES = ["online bookstore", "flight booking", "hotel booking"]


@dataclass
class WorldRow:
    world: str
    archetype: str
    pages: int
    states: int
    tasks: int
    candidates: int
    cuts: int
    seconds: float


@reports_errors
def build_cmd(
    themes: list[str] = typer.Option(DEFAULT_THEMES, "--theme", "-t",
                                     help="Theme(s); repeat the option for several worlds."),
    profile: ProfileChoice = typer.Option(ProfileChoice.medium, "--profile", "-p"),
    seed: int = typer.Option(0, "--seed", "-s"),
    specs_dir: Path = typer.Option(SPECS_DIR, "--specs-out"),
    out_dir: Path = typer.Option(TRAJECTORIES_DIR, "--out", "-o"),
    state_budget: int = StateBudget,
    max_depth: int = MaxDepth,
    extra_steps: int = ExtraSteps,
    max_shortest: int = MaxShortest,
    max_longer: int = MaxLonger,
    max_instances: int = MaxInstances,
) -> None:
    """Generate -> validate/improve -> explore, for each theme; prints a summary table."""
    config = ExploreConfig(state_budget=state_budget, max_depth=max_depth,
                           extra_steps=extra_steps, max_shortest=max_shortest,
                           max_longer=max_longer, max_instances=max_instances)
    started = time.perf_counter()
    rows = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=out, transient=True) as progress:
        bar = progress.add_task("building worlds", total=len(themes))
        for theme in themes:
            progress.update(bar, description=f"{theme}: propose")
            rows.append(_build_one(theme, profile.value, seed, specs_dir, out_dir, config,
                                   lambda stage, t=theme: progress.update(bar, description=f"{t}: {stage}")))
            progress.advance(bar)
    _summary(rows, time.perf_counter() - started)


def _build_one(theme: str, profile: str, seed: int, specs_dir: Path, out_dir: Path,
               config: ExploreConfig, stage) -> WorldRow:
    t0 = time.perf_counter()
    spec = propose_world(theme, profile, seed, config.state_budget).spec
    save_spec(spec, specs_dir / f"{spec.id}.json")
    stage("explore")
    result = explore_world(spec, config)
    write_candidates(result, out_dir / spec.id)
    return WorldRow(spec.id, spec.provenance.archetype, len(spec.pages), result.states,
                    len(spec.tasks), len(result.candidates), len(result.cuts),
                    time.perf_counter() - t0)


def _summary(rows: list[WorldRow], seconds: float) -> None:
    table = Table("world", "archetype", "pages", "states", "tasks", "candidates", "caps hit",
                  "seconds", title="webworld build")
    for r in rows:
        table.add_row(r.world, r.archetype, str(r.pages), str(r.states), str(r.tasks),
                      str(r.candidates), str(r.cuts), f"{r.seconds:.2f}")
    total = sum(r.candidates for r in rows)
    table.add_section()
    table.add_row(f"{len(rows)} worlds", "", str(sum(r.pages for r in rows)),
                  str(sum(r.states for r in rows)), str(sum(r.tasks for r in rows)), str(total),
                  str(sum(r.cuts for r in rows)), f"{seconds:.2f}")
    out.print(table)
    rate = total / seconds if seconds else 0.0
    out.print(f"{total} candidate trajectories from {len(rows)} worlds in {seconds:.1f}s "
              f"({rate:.0f} trajectories/s). Specs in {SPECS_DIR}/, candidates in "
              f"{TRAJECTORIES_DIR}/<world>/candidates.jsonl")
