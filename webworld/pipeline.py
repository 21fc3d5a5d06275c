"""The build: themes (or specs) -> specs -> sites -> candidates -> verified data -> dataset.

:func:`build_worlds` runs the whole pipeline per world from a :class:`BuildConfig` and
returns a :class:`BuildResult`; `webworld build` and the recipes call it and only print.
Each stage writes atomically and the verifier skips what it recorded before, so a build
stopped part way (Ctrl-C, a kill) resumes when it is run again.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from webworld.errors import UsageError, WebworldError
from webworld.propose.versions import GENERATOR_HELP, LATEST_GENERATOR
from webworld.spec.graph import DEFAULT_STATE_BUDGET

if TYPE_CHECKING:  # the heavy stages load when a build runs, not when a CLI option is read
    from webworld.agents.session import LLMSession
    from webworld.explore.candidates import ExploreConfig
    from webworld.propose.improve import ImproveResult
    from webworld.spec.models import WorldSpec
    from webworld.verify.replay import ReplayConfig
    from webworld.verify.runner import WorldStats

# Where the build writes by default, relative to the working folder (git ignores the outputs;
# fsm_specs/ also holds the shipped example specs, which git tracks).
SPECS_DIR = Path("fsm_specs")
SITES_DIR = Path("sites")
TRAJECTORIES_DIR = Path("trajectories")
DATASET_DIR = Path("datasets/webworld")
DEFAULT_THEMES = ["online bookstore", "flight booking", "recipe site"]
DEFAULT_WORKERS = 4


class BuildConfig(BaseModel):
    """Everything one build needs besides an LLM session; the defaults are `webworld build`'s."""

    model_config = ConfigDict(extra="forbid")

    themes: list[str] | None = Field(
        None, description="Themes to build, one world each (default: "
        f"{', '.join(DEFAULT_THEMES)}, unless specs are given).")
    specs: list[Path] = Field(
        default_factory=list, description="Spec files (or folders: every *.json directly in "
        "them) built as they are, instead of or besides themes.")
    profile: Literal["easy", "medium", "hard"] = Field(
        "medium", description="Size and difficulty of the proposed worlds.")
    seed: int = Field(0, description="Seed of the proposer: the same theme, profile and seed "
                      "give the same bytes.")
    generator_version: int = Field(LATEST_GENERATOR, ge=1, le=LATEST_GENERATOR,
                                   description=GENERATOR_HELP)
    transition: Literal["navigate", "swap"] | None = Field(
        None, description="How every site moves between pages: navigate (a page load per "
        "action) or swap (in place). Default: the proposer's seeded pick per world (mostly "
        "swap); a spec keeps its own.")
    specs_out: Path = Field(SPECS_DIR, description="Folder for the world specs.")
    sites_out: Path = Field(SITES_DIR, description="Folder for the rendered sites.")
    out: Path = Field(TRAJECTORIES_DIR, description="Folder for the trajectories (candidates, "
                      "verified, failures) by world.")
    dataset_out: Path = Field(DATASET_DIR, description="Folder for the exported dataset.")
    state_budget: int = Field(DEFAULT_STATE_BUDGET, ge=1, description="Most states BFS may "
                              "visit before it reports the cut.")
    max_depth: int | None = Field(None, ge=1, description="BFS depth limit (default: none).")
    extra_steps: int = Field(1, ge=0, description="Also keep paths up to this many steps "
                             "longer than the shortest.")
    max_shortest: int = Field(2, ge=1, description="Shortest paths kept per task instance.")
    max_longer: int = Field(1, ge=0, description="Longer paths kept per task instance.")
    max_instances: int = Field(3, ge=1, description="Task instances kept per task.")
    workers: int = Field(DEFAULT_WORKERS, ge=1, le=32, description="Parallel browser contexts "
                         "(per Ray worker with ray).")
    ray: str | None = Field(None, description="Verify on a Ray cluster: `auto` (the one `ray "
                            "start` runs here), host:port, or `local` (a new one in this "
                            "process); default: in this process, without Ray.")
    ray_workers: int | None = Field(None, ge=1, description="Ray worker actors (default: one "
                                    "per CPU of the cluster).")
    ray_insecure: bool = Field(False, description="Join a Ray cluster that has no token "
                               "authentication (not advised).")
    verify: bool = Field(True, description="Replay the candidates in Chromium and export what "
                         "verifies (off: stop after exploring).")
    screenshots: bool = Field(True, description="Take a screenshot of every step while "
                              "verifying (off: text-only records).")

    def sources(self) -> list[str | Path]:
        """The themes, then the spec files, in build order."""
        specs = spec_files(self.specs)
        themes = self.themes if self.themes is not None else ([] if specs else DEFAULT_THEMES)
        return [*themes, *specs]

    def explore_config(self) -> ExploreConfig:
        from webworld.explore.candidates import ExploreConfig

        return ExploreConfig(state_budget=self.state_budget, max_depth=self.max_depth,
                             extra_steps=self.extra_steps, max_shortest=self.max_shortest,
                             max_longer=self.max_longer, max_instances=self.max_instances)


class WorldRow(BaseModel):
    """One world of a build, as its summary table shows it."""

    world: str = Field(description="World id.")
    archetype: str = Field(description="Site type the proposer built it as.")
    pages: int = Field(description="Pages of the spec.")
    states: int = Field(description="States BFS visited.")
    candidates: int = Field(description="Candidate trajectories explored.")
    verified: int = Field(0, description="Verified trajectories on disk (earlier runs' too).")
    failures: dict[str, int] = Field(default_factory=dict,
                                     description="Failed candidates by failure class.")


class BuildResult(BaseModel):
    """What a build made."""

    rows: list[WorldRow] = Field(description="One row per world, in build order.")
    dataset: Path | None = Field(None, description="The exported dataset folder; None when "
                                 "nothing was exported (no verification, or nothing verified).")
    trajectories: int = Field(0, description="Trajectories in the exported dataset.")
    steps: int = Field(0, description="Steps in the exported dataset.")
    seconds: float = Field(description="Wall time of the build.")

    @property
    def verified(self) -> int:
        return sum(r.verified for r in self.rows)

    @property
    def candidates(self) -> int:
        return sum(r.candidates for r in self.rows)


@dataclass(frozen=True)
class BuildEvent:
    """A step of the build, for a progress display: ``stage`` of ``subject`` (a theme or
    world), ``done`` of ``total`` (worlds, or candidates while verifying); ``note`` carries
    a line worth showing (the site coder's report)."""

    stage: Literal["propose", "render", "explore", "world", "verify", "export", "note"]
    subject: str
    done: int
    total: int
    verified: int = 0


Progress = Callable[[BuildEvent], None]


def build_worlds(config: BuildConfig, *, session: LLMSession | None = None,
                 progress: Progress | None = None) -> BuildResult:
    """Generate, validate and improve, render, explore, verify in Chromium and export each
    world of ``config``; ``session`` hands the stages it names to a language model.
    Raises :class:`~webworld.agents.errors.BudgetExceeded` when the session's budget runs out."""
    started = time.perf_counter()
    report = progress or (lambda event: None)
    if config.ray_insecure:  # read where webworld joins the cluster (scale.cluster.authenticate)
        os.environ["WEBWORLD_RAY_INSECURE"] = "1"
    rows = _prepare_worlds(config, session, report)
    result = BuildResult(rows=rows, seconds=0.0)
    if config.verify:
        from webworld.verify.replay import ReplayConfig

        replay = ReplayConfig(screenshots=config.screenshots)
        _verify(config, [config.sites_out / r.world for r in rows], replay, report)
        _repair_sites(session, rows, config, replay, report)
        _count_outcomes(rows, config.out)
        _write_thoughts(session, rows, config.out)
        if result.verified:
            _export(result, config, report)
    result.seconds = time.perf_counter() - started
    return result


def propose_world(theme: str, profile: str, seed: int, state_budget: int, *,
                  generator_version: int = LATEST_GENERATOR) -> ImproveResult:
    """Propose a draft offline, then validate and improve it: the pipeline's first stage."""
    from webworld.propose.improve import improve
    from webworld.propose.procedural import generate

    proposal = generate(theme, profile, seed, version=generator_version)
    result = improve(proposal.spec, state_budget=state_budget)
    if not result.valid:
        raise WebworldError(f"the improver could not make {proposal.spec.id} valid:\n"
                            f"{result.summary()}")
    return result


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


def verify_sites(site_dirs: list[Path], traj_dir: Path, *, workers: int = DEFAULT_WORKERS,
                 ray: str | None = None, ray_workers: int | None = None,
                 config: ReplayConfig | None = None, retry_failed: bool = False,
                 progress: Progress | None = None) -> list[WorldStats]:
    """Verify the candidates of each site's world: in this process (``workers`` browser
    contexts), or with ``ray`` on a Ray cluster (``workers`` contexts per worker actor).
    ``progress`` gets a ``verify`` event after each candidate."""
    from webworld.verify.runner import load_candidates, verify_worlds

    total = sum(len(load_candidates(traj_dir / d.name)) for d in site_dirs)
    counts = Counter[str]()

    def tick(world: str, ok: bool) -> None:
        counts["done"] += 1
        counts["ok"] += ok
        if progress:
            progress(BuildEvent("verify", world, counts["done"], total, counts["ok"]))

    if ray:
        from webworld.scale.verify import verify_worlds_on_ray

        return verify_worlds_on_ray(site_dirs, traj_dir, address=ray, contexts=workers,
                                    actors=ray_workers, config=config,
                                    retry_failed=retry_failed, progress=tick)
    return verify_worlds(site_dirs, traj_dir, workers=workers, config=config,
                         retry_failed=retry_failed, progress=tick)


def _verify(config: BuildConfig, site_dirs: list[Path], replay: ReplayConfig,
            report: Progress, *, retry_failed: bool = False) -> None:
    verify_sites(site_dirs, config.out, workers=config.workers, ray=config.ray,
                 ray_workers=config.ray_workers, config=replay, retry_failed=retry_failed,
                 progress=report)


# --- the stages -------------------------------------------------------------------------------


def _prepare_worlds(config: BuildConfig, session: LLMSession | None,
                    report: Progress) -> list[WorldRow]:
    """Propose (or load), render and explore each world; its spec, site and candidates are
    written as they are made."""
    from webworld.explore.candidates import explore_world, write_candidates
    from webworld.spec.io import load_spec, save_spec

    sources = config.sources()
    explore = config.explore_config()
    rows = []
    for done, source in enumerate(sources):
        def stage(name: str, subject: str = str(source)) -> None:
            report(BuildEvent(name, subject, done, len(sources)))  # type: ignore[arg-type]

        if isinstance(source, Path):
            spec = load_spec(source)
        else:
            stage("propose")
            spec = _propose(source, config, session)
        if config.transition is not None:
            spec = spec.model_copy(update={"transition": config.transition})
        save_spec(spec, config.specs_out / f"{spec.id}.json")
        stage("render", spec.id)
        _render(spec, config.sites_out / spec.id, session, report)
        stage("explore", spec.id)
        result = explore_world(spec, explore)
        if session is not None and session.uses("intents"):
            from webworld.agents.writers import paraphrase_intents

            session.run(lambda c, r=result: paraphrase_intents(c, r.candidates))
        write_candidates(result, config.out / spec.id)
        rows.append(WorldRow(world=spec.id, archetype=spec.provenance.archetype,
                             pages=len(spec.pages), states=result.states,
                             candidates=len(result.candidates)))
        report(BuildEvent("world", spec.id, done + 1, len(sources)))
    return rows


def _propose(theme: str, config: BuildConfig, session: LLMSession | None) -> WorldSpec:
    budget = config.state_budget
    if session is None or not session.stages & {"propose", "improve", "critic"}:
        return propose_world(theme, config.profile, config.seed, budget,
                             generator_version=config.generator_version).spec
    from webworld.agents.improver import improve_with_llm, propose_world_llm

    critic, rounds = session.uses("critic"), 4 if session.uses("improve") else 0
    if session.uses("propose"):
        proposed = session.run(lambda c: propose_world_llm(
            c, theme, config.profile, seed=config.seed, critic=critic, max_rounds=rounds,
            state_budget=budget))
        if not proposed.ok:
            raise WebworldError(f"the LLM path gave no valid world for {theme!r}: "
                                f"{proposed.reason}")
        return proposed.spec
    draft = propose_world(theme, config.profile, config.seed, budget).spec
    improved = session.run(lambda c: improve_with_llm(
        c, draft, max_rounds=rounds, critic=critic, profile=config.profile,
        state_budget=budget))
    if not improved.valid:
        raise WebworldError(f"the LLM improver left {theme!r} invalid: {improved.summary()}")
    return improved.spec


def _render(spec: WorldSpec, site_dir: Path, session: LLMSession | None,
            report: Progress) -> None:
    if session is None or not session.uses("render"):
        from webworld.render.site import render_site

        render_site(spec, site_dir)
        return
    from webworld.agents.site_coder import code_site

    result = session.run(lambda c: code_site(c, spec, site_dir))
    _notes(report, spec.id, result.report_lines())


def _notes(report: Progress, world: str, lines: list[str]) -> None:
    for line in lines:
        report(BuildEvent("note", f"site coder: {line}", 0, 0))


def _repair_sites(session: LLMSession | None, rows: list[WorldRow], config: BuildConfig,
                  replay: ReplayConfig, report: Progress) -> None:
    """`--llm render`: verification failures go back to the site coder, then the failed
    candidates are verified again."""
    if session is None or not session.uses("render"):
        return
    from webworld.agents.site_coder import repair_pages
    from webworld.render.site import load_site

    again = []
    for row in rows:
        failures = _records(config.out / row.world / "failures.jsonl")
        if not failures:
            continue
        site_dir = config.sites_out / row.world
        spec = load_site(site_dir).spec
        pages = {a.id: p.id for p in spec.pages for a in p.actions}
        by_page: dict[str, list[str]] = defaultdict(list)
        for f in failures:
            by_page[pages.get(f["fsm_action"], spec.home)].append(f"{f['failure']}: {f['message']}")
        result = session.run(lambda c, d=site_dir, b=dict(by_page): repair_pages(c, d, b))
        _notes(report, row.world, result.report_lines())
        again.append(site_dir)
    if again:
        _verify(config, again, replay, report, retry_failed=True)


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


def _count_outcomes(rows: list[WorldRow], traj_dir: Path) -> None:
    """Counts from the records on disk (they include work resumed from earlier runs)."""
    for row in rows:
        world = traj_dir / row.world
        row.verified = len(_records(world / "verified.jsonl"))
        row.failures = dict(Counter(r["failure"] for r in _records(world / "failures.jsonl")))


def _export(result: BuildResult, config: BuildConfig, report: Progress) -> None:
    from webworld.data.export import export_dataset

    report(BuildEvent("export", str(config.dataset_out), 0, 1))
    summary = export_dataset(config.out, config.dataset_out,
                             worlds=[r.world for r in result.rows], progress=False)
    result.dataset = config.dataset_out
    result.trajectories, result.steps = summary.trajectories, summary.steps


def _records(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
