"""`webworld build`: themes -> specs -> sites -> candidates -> verified data -> dataset.

The work is :func:`webworld.pipeline.build_worlds`; this module parses and prints."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from webworld.agents.errors import BudgetExceeded
from webworld.cli.console import err, out
from webworld.cli.errors import reports_errors
from webworld.cli.llm_options import (
    LLMBaseURL,
    LLMBudget,
    LLMConfigFile,
    LLMKey,
    LLMModel,
    LLMStages,
    llm_session,
    print_costs,
)
from webworld.cli.options import (
    ExtraSteps,
    GeneratorVersion,
    MaxDepth,
    ProfileChoice,
    RayAddress,
    RayInsecure,
    RayWorkers,
    StateBudget,
    Transition,
)
from webworld.cli.verify_cmd import Workers
from webworld.pipeline import (
    DATASET_DIR,
    DEFAULT_THEMES,
    SITES_DIR,
    SPECS_DIR,
    TRAJECTORIES_DIR,
    BuildConfig,
    BuildEvent,
    BuildResult,
    build_worlds,
)


@reports_errors
def build_cmd(
    # --themes and --specs: BuildConfig's field names, as recipes record the command
    themes: list[str] = typer.Option(None, "--theme", "--themes", "-t",
                                     show_default=", ".join(DEFAULT_THEMES),
                                     help="Theme(s); repeat the option for several worlds."),
    spec_paths: list[Path] = typer.Option(None, "--spec", "--specs", help="Build these spec "
                                          "files (or every *.json in a folder) as they are, "
                                          "instead of or besides themes."),
    profile: ProfileChoice = typer.Option(ProfileChoice.medium, "--profile", "-p"),
    seed: int = typer.Option(0, "--seed", "-s"),
    generator_version: int = GeneratorVersion,
    transition: Transition = typer.Option(None, "--transition", help="How every site moves "
                                          "between pages: navigate (a page load per action) or "
                                          "swap (in place). Default: the proposer's seeded pick "
                                          "per world (mostly swap); a --spec keeps its own."),
    specs_dir: Path = typer.Option(SPECS_DIR, "--specs-out"),
    sites_dir: Path = typer.Option(SITES_DIR, "--sites-out"),
    traj_dir: Path = typer.Option(TRAJECTORIES_DIR, "--out", "-o"),
    dataset_dir: Path = typer.Option(DATASET_DIR, "--dataset-out"),
    state_budget: int = StateBudget,
    max_depth: int = MaxDepth,
    extra_steps: int = ExtraSteps,
    max_shortest: int = typer.Option(2, "--max-shortest", min=1,
                                     help="Shortest paths kept per task instance."),
    max_longer: int = typer.Option(1, "--max-longer", min=0),
    max_instances: int = typer.Option(3, "--max-instances", min=1,
                                      help="Task instances kept per task."),
    workers: int = Workers,
    ray: str = RayAddress,
    ray_workers: int = RayWorkers,
    ray_insecure: bool = RayInsecure,
    verify: bool = typer.Option(True, "--verify/--no-verify", help="Replay in Chromium."),
    screenshots: bool = typer.Option(True, "--screenshots/--no-screenshots",
                                     help="Screenshot every step while verifying."),
    llm: str = LLMStages,
    llm_base_url: str = LLMBaseURL,
    llm_model: str = LLMModel,
    llm_api_key: str = LLMKey,
    llm_config: Path = LLMConfigFile,
    llm_budget_usd: float = LLMBudget,
) -> None:
    """Themes to verified dataset: generate, improve, render, explore, verify, export.

    The whole pipeline for each theme: generate, validate/improve, render, explore,
    verify in Chromium (served on loopback), export; then a summary. Offline by default;
    `--llm propose,render,intents,...` hands those stages to a language model. `--spec`
    builds existing specs (e.g. from `webworld import`) from the render stage on."""
    config = BuildConfig(
        themes=themes or None, specs=spec_paths or [], profile=profile.value, seed=seed,
        generator_version=generator_version, transition=transition.value if transition else None, specs_out=specs_dir,
        sites_out=sites_dir, out=traj_dir, dataset_out=dataset_dir, state_budget=state_budget,
        max_depth=max_depth, extra_steps=extra_steps, max_shortest=max_shortest,
        max_longer=max_longer, max_instances=max_instances, workers=workers, ray=ray,
        ray_workers=ray_workers, ray_insecure=ray_insecure, verify=verify,
        screenshots=screenshots)
    session = llm_session(llm, llm_base_url, llm_model, llm_api_key, llm_config, llm_budget_usd)
    if session is not None:
        session.run(lambda client: client.preflight())
    result: BuildResult | None = None
    try:
        with BuildProgress() as progress:
            result = build_worlds(config, session=session, progress=progress)
    except BudgetExceeded as exc:
        err.print(f"[bold red]stopped:[/] {exc}")
        raise typer.Exit(1) from None
    finally:
        if session is not None:
            print_costs(session, result.verified if result else 0)
    print_summary(result, config)


class BuildProgress:
    """The build's events as two transient bars (worlds, then candidates) and note lines."""

    def __init__(self) -> None:
        columns = (TextColumn("{task.description}"), BarColumn(),
                   TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn())
        self.bars = Progress(*columns, console=out, transient=True)
        self.ids: dict[str, TaskID] = {}

    def __enter__(self) -> BuildProgress:
        self.bars.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bars.__exit__(*exc)

    def __call__(self, event: BuildEvent) -> None:
        if event.stage == "note":
            self.bars.console.print(f"[dim]{event.subject}[/]")
            return
        bar = "verify" if event.stage == "verify" else "worlds"
        if bar not in self.ids:
            self.ids[bar] = self.bars.add_task(bar, total=event.total)
        if event.stage == "verify":
            label = f"verify ({event.verified} verified)"
        elif event.stage == "world":
            label = "worlds"
        else:
            label = f"{event.subject}: {event.stage}"
        self.bars.update(self.ids[bar], description=label, completed=event.done,
                         total=event.total)


def print_summary(result: BuildResult, config: BuildConfig) -> None:
    table = Table("world", "archetype", "pages", "states", "candidates", "verified",
                  "failure classes", title="webworld build")
    for r in result.rows:
        classes = ", ".join(f"{k}: {v}" for k, v in sorted(r.failures.items())) or "-"
        table.add_row(r.world, r.archetype, str(r.pages), str(r.states), str(r.candidates),
                      str(r.verified) if config.verify else "-", classes)
    out.print(table)
    if result.dataset is not None:
        out.print(f"dataset: {result.dataset}/ ({result.trajectories} trajectories, "
                  f"{result.steps} steps)")
    candidates = result.candidates
    total = result.verified if config.verify else candidates
    what = "verified trajectories" if config.verify else "candidate trajectories"
    if config.verify and candidates:
        failed = sum(sum(r.failures.values()) for r in result.rows)
        out.print(f"verified {total} of {candidates} candidates ({100 * total / candidates:.1f}%); "
                  f"{failed} failed, each with its class in {config.out}/<world>/failures.jsonl")
    seconds = result.seconds
    rate = total / seconds if seconds else 0.0
    out.print(f"{total} {what} from {len(result.rows)} worlds in {seconds:.1f}s ({rate:.2f} "
              f"trajectories/s). Specs: {config.specs_out}/  sites: {config.sites_out}/  data: "
              f"{config.out}/<world>/" + (f"  dataset: {config.dataset_out}/" if config.verify else ""))
