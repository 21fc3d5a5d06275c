"""`webworld explore`: candidate trajectories for every task of a world."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from webworld.cli.console import out
from webworld.cli.errors import reports_errors
from webworld.cli.options import (
    TRAJECTORIES_DIR,
    ExtraSteps,
    MaxDepth,
    MaxInstances,
    MaxLonger,
    MaxShortest,
    StateBudget,
)
from webworld.explore.candidates import (
    ExploreConfig,
    ExploreResult,
    explore_world,
    write_candidates,
)
from webworld.spec.io import load_spec


@reports_errors
def explore_cmd(
    spec_paths: list[Path] = typer.Argument(..., help="World spec JSON file(s)."),
    out_dir: Path = typer.Option(TRAJECTORIES_DIR, "--out", "-o",
                                 help="Writes <out>/<world>/candidates.jsonl."),
    state_budget: int = StateBudget,
    max_depth: int = MaxDepth,
    extra_steps: int = ExtraSteps,
    max_shortest: int = MaxShortest,
    max_longer: int = MaxLonger,
    max_instances: int = MaxInstances,
) -> None:
    """Enumerate task paths by BFS over (page, signature) states."""
    config = ExploreConfig(state_budget=state_budget, max_depth=max_depth,
                           extra_steps=extra_steps, max_shortest=max_shortest,
                           max_longer=max_longer, max_instances=max_instances)
    specs = [load_spec(p) for p in spec_paths]  # fail on bad input before writing anything
    for spec in specs:
        result = explore_world(spec, config)
        path = write_candidates(result, out_dir / spec.id)
        print_result(result)
        out.print(f"wrote {path}")


def print_result(result: ExploreResult) -> None:
    table = Table("task", "instances", "shortest", "candidates", "shortest paths", "longer",
                  title=f"{result.world_id}: {result.states} states, {result.edges} transitions, "
                        f"{result.seconds:.2f}s")
    for task, st in result.tasks.items():
        table.add_row(task, f"{st.instances_kept}/{st.instances}", str(st.shortest_length),
                      str(st.candidates), str(st.shortest), str(st.longer))
    out.print(table)
    for cut in result.cuts:
        out.print(f"[yellow]cut:[/] {cut}")
    missing = [t for t, st in result.tasks.items() if st.candidates == 0]
    if missing:
        out.print(f"[red]no candidates for:[/] {', '.join(missing)}")
