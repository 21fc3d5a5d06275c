"""`webworld build`: themes -> specs -> sites -> candidates -> verified data -> dataset."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from webworld.agents.errors import BudgetExceeded
from webworld.agents.session import LLMSession
from webworld.cli.console import err, out
from webworld.cli.errors import reports_errors
from webworld.cli.generate_cmd import propose_world
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
    SPECS_DIR,
    TRAJECTORIES_DIR,
    ExtraSteps,
    MaxDepth,
    ProfileChoice,
    RayAddress,
    RayInsecure,
    RayWorkers,
    StateBudget,
    Transition,
)
from webworld.cli.site_cmd import SITES_DIR
from webworld.cli.verify_cmd import Workers, run_verification
from webworld.data.export import export_dataset
from webworld.errors import UsageError, WebworldError
from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
from webworld.render.site import load_site, render_site
from webworld.spec.io import load_spec, save_spec
from webworld.spec.models import WorldSpec

DEFAULT_THEMES = ["online bookstore", "flight booking", "recipe site"]
DATASET_DIR = Path("datasets/webworld")


@dataclass
class WorldRow:
    world: str
    archetype: str
    pages: int
    states: int
    candidates: int
    verified: int = 0
    failures: Counter = field(default_factory=Counter)


@reports_errors
def build_cmd(
    themes: list[str] = typer.Option(None, "--theme", "-t", show_default=", ".join(DEFAULT_THEMES),
                                     help="Theme(s); repeat the option for several worlds."),
    spec_paths: list[Path] = typer.Option(None, "--spec", help="Build these spec files (or "
                                          "every *.json in a folder) as they are, instead of "
                                          "or besides themes."),
    profile: ProfileChoice = typer.Option(ProfileChoice.medium, "--profile", "-p"),
    seed: int = typer.Option(0, "--seed", "-s"),
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
    specs = spec_files(spec_paths or [])
    themes = list(themes or ([] if specs else DEFAULT_THEMES))
    config = ExploreConfig(state_budget=state_budget, max_depth=max_depth,
                           extra_steps=extra_steps, max_shortest=max_shortest,
                           max_longer=max_longer, max_instances=max_instances)
    session = llm_session(llm, llm_base_url, llm_model, llm_api_key, llm_config, llm_budget_usd)
    if session is not None:
        session.run(lambda client: client.preflight())
    started = time.perf_counter()
    rows: list[WorldRow] = []
    try:
        rows = _prepare_worlds(themes, specs, profile.value, seed, specs_dir, sites_dir,
                               traj_dir, config, session,
                               transition.value if transition else None)
        if verify:
            scale = {"workers": workers, "ray": ray, "ray_workers": ray_workers}
            run_verification([sites_dir / r.world for r in rows], traj_dir, **scale)
            _repair_sites(session, rows, sites_dir, traj_dir, scale)
            _merge(rows, traj_dir)
            _write_thoughts(session, rows, traj_dir)
            if sum(r.verified for r in rows):
                summary = export_dataset(traj_dir, dataset_dir, worlds=[r.world for r in rows])
                out.print(f"dataset: {dataset_dir}/ ({summary.trajectories} trajectories, "
                          f"{summary.steps} steps)")
    except BudgetExceeded as exc:
        err.print(f"[bold red]stopped:[/] {exc}")
        raise typer.Exit(1) from None
    finally:
        if session is not None:
            print_costs(session, sum(r.verified for r in rows))
    _summary(rows, time.perf_counter() - started, verify,
             Folders(specs_dir, sites_dir, traj_dir, dataset_dir))


def _repair_sites(session: LLMSession | None, rows: list[WorldRow], sites_dir: Path,
                  traj_dir: Path, scale: dict[str, Any]) -> None:
    """`--llm render`: verification failures go back to the site coder, then the failed
    candidates are verified again."""
    if session is None or not session.uses("render"):
        return
    from webworld.agents.site_coder import repair_pages

    again = []
    for row in rows:
        failures = _records(traj_dir / row.world / "failures.jsonl")
        if not failures:
            continue
        spec = load_site(sites_dir / row.world).spec
        pages = {a.id: p.id for p in spec.pages for a in p.actions}
        by_page: dict[str, list[str]] = defaultdict(list)
        for f in failures:
            by_page[pages.get(f["fsm_action"], spec.home)].append(f"{f['failure']}: {f['message']}")
        result = session.run(lambda c, d=sites_dir / row.world, b=dict(by_page):
                             repair_pages(c, d, b))
        for line in result.report_lines():
            out.print(f"[dim]site coder:[/] {line}")
        again.append(sites_dir / row.world)
    if again:
        run_verification(again, traj_dir, retry_failed=True, **scale)


def _write_thoughts(session: LLMSession | None, rows: list[WorldRow], traj_dir: Path) -> None:
    """LLM-written per-step thoughts for the SFT data (`--llm thoughts`)."""
    if session is None or not session.uses("thoughts"):
        return
    from webworld.agents.writers import save_thoughts, write_thoughts

    for row in rows:
        verified = _records(traj_dir / row.world / "verified.jsonl")
        if verified:
            thoughts = session.run(lambda client, v=verified: write_thoughts(client, v))
            save_thoughts(traj_dir / row.world, thoughts)


def _propose(theme: str, profile: str, seed: int, state_budget: int,
             session: LLMSession | None) -> WorldSpec:
    if session is None or not session.stages & {"propose", "improve", "critic"}:
        return propose_world(theme, profile, seed, state_budget).spec
    from webworld.agents.improver import improve_with_llm, propose_world_llm

    critic, rounds = session.uses("critic"), 4 if session.uses("improve") else 0
    if session.uses("propose"):
        proposed = session.run(lambda c: propose_world_llm(
            c, theme, profile, seed=seed, critic=critic, max_rounds=rounds,
            state_budget=state_budget))
        if not proposed.ok:
            raise WebworldError(f"the LLM path gave no valid world for {theme!r}: "
                                f"{proposed.reason}")
        return proposed.spec
    draft = propose_world(theme, profile, seed, state_budget).spec
    improved = session.run(lambda c: improve_with_llm(
        c, draft, max_rounds=rounds, critic=critic, profile=profile, state_budget=state_budget))
    if not improved.valid:
        raise WebworldError(f"the LLM improver left {theme!r} invalid: {improved.summary()}")
    return improved.spec


def _render(spec: WorldSpec, site_dir: Path, session: LLMSession | None) -> None:
    if session is None or not session.uses("render"):
        render_site(spec, site_dir)
        return
    from webworld.agents.site_coder import code_site

    result = session.run(lambda c: code_site(c, spec, site_dir))
    for line in result.report_lines():
        out.print(f"[dim]site coder:[/] {line}")


def spec_files(paths: list[Path]) -> list[Path]:
    """The spec files named, plus every ``*.json`` directly in each folder named."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            found.append(path)
        else:
            raise UsageError("no such spec file or folder", str(path))
    return found


def _prepare_worlds(themes: list[str], specs: list[Path], profile: str, seed: int,
                    specs_dir: Path, sites_dir: Path, traj_dir: Path, config: ExploreConfig,
                    session: LLMSession | None, transition: str | None) -> list[WorldRow]:
    rows = []
    columns = (TextColumn("{task.description}"), BarColumn(),
               TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn())
    with Progress(*columns, console=out, transient=True) as progress:
        bar = progress.add_task("worlds", total=len(themes) + len(specs))
        for source in [*themes, *specs]:
            if isinstance(source, Path):
                theme = source.stem
                spec = load_spec(source)
            else:
                theme = source
                progress.update(bar, description=f"{theme}: propose")
                spec = _propose(theme, profile, seed, config.state_budget, session)
            if transition is not None:
                spec = spec.model_copy(update={"transition": transition})
            save_spec(spec, specs_dir / f"{spec.id}.json")
            progress.update(bar, description=f"{theme}: render")
            _render(spec, sites_dir / spec.id, session)
            progress.update(bar, description=f"{theme}: explore")
            result = explore_world(spec, config)
            if session is not None and session.uses("intents"):
                from webworld.agents.writers import paraphrase_intents

                session.run(lambda c, r=result: paraphrase_intents(c, r.candidates))
            write_candidates(result, traj_dir / spec.id)
            rows.append(WorldRow(spec.id, spec.provenance.archetype, len(spec.pages),
                                 result.states, len(result.candidates)))
            progress.advance(bar)
    return rows


def _merge(rows: list[WorldRow], traj_dir: Path) -> None:
    """Counts from the records on disk (they include work resumed from earlier runs)."""
    for row in rows:
        world = traj_dir / row.world
        row.verified = len(_records(world / "verified.jsonl"))
        row.failures = Counter(r["failure"] for r in _records(world / "failures.jsonl"))


def _records(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@dataclass
class Folders:
    """Where this build wrote each kind of output (the summary names them)."""

    specs: Path
    sites: Path
    trajectories: Path
    dataset: Path


def _summary(rows: list[WorldRow], seconds: float, verified: bool, folders: Folders) -> None:
    table = Table("world", "archetype", "pages", "states", "candidates", "verified",
                  "failure classes", title="webworld build")
    for r in rows:
        classes = ", ".join(f"{k}: {v}" for k, v in sorted(r.failures.items())) or "-"
        table.add_row(r.world, r.archetype, str(r.pages), str(r.states), str(r.candidates),
                      str(r.verified) if verified else "-", classes)
    out.print(table)
    candidates = sum(r.candidates for r in rows)
    total = sum(r.verified for r in rows) if verified else candidates
    what = "verified trajectories" if verified else "candidate trajectories"
    if verified and candidates:
        failed = sum(sum(r.failures.values()) for r in rows)
        out.print(f"verified {total} of {candidates} candidates ({100 * total / candidates:.1f}%); "
                  f"{failed} failed, each with its class in {folders.trajectories}/<world>/failures.jsonl")
    rate = total / seconds if seconds else 0.0
    out.print(f"{total} {what} from {len(rows)} worlds in {seconds:.1f}s ({rate:.2f} "
              f"trajectories/s). Specs: {folders.specs}/  sites: {folders.sites}/  data: "
              f"{folders.trajectories}/<world>/" + (f"  dataset: {folders.dataset}/" if verified else ""))
