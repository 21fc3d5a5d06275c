"""Running a recipe: its stages in order in one run folder, each a library call, skipped when
its record says it finished; wall time and the equivalent command logged in stages.json.

The run folder (what `webworld recipe report` reads)::

    recipe.json            the resolved recipe
    stages.json            stage -> {"wall": s, "command": "webworld ...", "ended": false?}
    worlds/                specs/, sites/, trajectories/ of every build; dataset-<name>/
    data/                  the export
    train-worlds/          the [train_worlds] subset (links)
    sft-<name>/            SFT (resumes from its checkpoints)
    rl-<name>-s<seed>/     RL runs (resume from their checkpoints)
    eval/<name>.jsonl      eval results (appended to: a rerun resumes)

A kill or Ctrl-C loses nothing finished: run the recipe again and it goes on where it was.
"""

from __future__ import annotations

import json
import os
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from webworld.errors import WebworldError
from webworld.fsio import atomic_write_json
from webworld.recipe.model import EvalRecipe, Recipe, RLRecipe, SFTRecipe, WorldsRecipe

HEARTBEAT_S = 30.0  # a running stage's wall is logged this often, so a killed segment counts
Say = Callable[[str], None]


@dataclass(frozen=True)
class Stage:
    """One step of a recipe: ``run`` makes ``output``; ``command`` is the same as a command."""

    name: str
    output: Path
    command: str
    run: Callable[[], None]


@dataclass(frozen=True)
class StageOutcome:
    name: str
    skipped: bool
    wall: float


class RunFolder:
    """Where each stage of a recipe writes in the run folder ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.worlds = root / "worlds"
        self.data = root / "data"
        self.train_worlds = root / "train-worlds"
        self.eval = root / "eval"
        self.stages = root / "stages.json"

    def sft(self, sft: SFTRecipe) -> Path:
        return self.root / sft.folder

    def rl(self, run: RLRecipe, seed: int) -> Path:
        return self.root / run.folder(seed)

    def results(self, name: str) -> Path:
        return self.eval / f"{name}.jsonl"


class StageLog:
    """stages.json: each stage's wall time (every session it ran in, added up), its command,
    and ``"ended": false`` while it has not finished."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = \
            json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        self._lock = threading.Lock()

    def done(self, stage: Stage) -> bool:
        entry = self.entries.get(stage.name)
        return entry is not None and entry.get("ended", True) and stage.output.exists()

    def wall(self, name: str) -> float:
        return float(self.entries.get(name, {}).get("wall", 0.0))

    def record(self, stage: Stage, wall: float, *, ended: bool) -> None:
        with self._lock:
            self.entries[stage.name] = {"command": stage.command, "wall": round(wall, 2),
                                        **({} if ended else {"ended": False})}
            atomic_write_json(self.path, self.entries)


def run_recipe(recipe: Recipe, root: Path, *, say: Say = print,
               only: Callable[[Stage], bool] | None = None) -> list[StageOutcome]:
    """Run ``recipe``'s stages in ``root``: what finished is skipped, the rest runs in order
    (``only``: just the stages it accepts, e.g. the GPU kit's split of a recipe between a
    machine with a browser and one without)."""
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_json(root / "recipe.json", recipe.record())
    _set_threads(recipe.device.threads)
    log = StageLog(root / "stages.json")
    stages = [s for s in plan_stages(recipe, RunFolder(root), say) if only is None or only(s)]
    return [_run_stage(stage, log, say) for stage in stages]


def _set_threads(threads: int | None) -> None:
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def _run_stage(stage: Stage, log: StageLog, say: Say) -> StageOutcome:
    if log.done(stage):
        say(f"== {stage.name}: done ({log.wall(stage.name):.0f} s), skipped")
        return StageOutcome(stage.name, True, log.wall(stage.name))
    say(f"== {stage.name}: {stage.command}")
    earlier, started = log.wall(stage.name), time.perf_counter()

    def wall() -> float:
        return earlier + time.perf_counter() - started

    log.record(stage, wall(), ended=False)
    with _heartbeat(lambda: log.record(stage, wall(), ended=False)):
        try:
            stage.run()
        except BaseException:  # Ctrl-C or a failure: the time spent still counts
            log.record(stage, wall(), ended=False)
            raise
    log.record(stage, wall(), ended=True)
    return StageOutcome(stage.name, False, wall())


@contextmanager
def _heartbeat(beat: Callable[[], None]) -> Iterator[None]:
    """Call ``beat`` every :data:`HEARTBEAT_S` seconds while the block runs."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(HEARTBEAT_S):
            beat()

    thread = threading.Thread(target=loop, name="stage-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def plan_stages(recipe: Recipe, folder: RunFolder, say: Say) -> list[Stage]:
    """Every stage of ``recipe`` in the order it runs."""
    stages = [_build_stage(w, folder, say) for w in recipe.worlds]
    if recipe.snapshots:
        stages.append(_snapshot_stage(folder, say))
    stages.append(_export_stage(recipe, folder))
    if recipe.train_worlds is not None:
        stages.append(_train_worlds_stage(recipe.train_worlds.count, folder))
    if recipe.sft is not None:
        stages.append(_sft_stage(recipe.sft, recipe, folder))
    stages += [_rl_stage(run, seed, recipe, folder, say) for run in recipe.rl for seed in run.seeds]
    stages += [stage for ev in recipe.evals for stage in _eval_stages(ev, recipe, folder, say)]
    return stages


# --- the equivalent commands ------------------------------------------------------------------


def command(*words: Any, **flags: Any) -> str:
    """``webworld <words> <flags>``: a stage's equivalent command where no settings model
    stands behind it."""
    parts = ["webworld", *map(_shown, words)]
    for key, value in flags.items():
        name = "--" + key.replace("_", "-")
        values = value if isinstance(value, list | tuple) else [value]
        parts += [p for item in values for p in (name, _shown(item))]
    return shlex.join(parts)


def _shown(value: Any) -> str:
    """A path relative to the working folder when it is under it; anything else as text."""
    if isinstance(value, Path):
        return os.path.relpath(value) if not value.is_absolute() or \
            value.resolve().is_relative_to(Path.cwd()) else str(value)
    return str(value)


def rendered(words: list[str], settings: BaseModel) -> str:
    """The equivalent command of a stage: ``webworld <words>`` and the flags that make
    ``settings`` (:func:`webworld.settings.command_line`)."""
    from webworld.settings import command_line

    return shlex.join(command_line(["webworld", *words], settings))


# --- the stages -------------------------------------------------------------------------------


def _build_stage(worlds: WorldsRecipe, folder: RunFolder, say: Say) -> Stage:
    from webworld.pipeline import BuildConfig

    filled = {"specs_out": folder.worlds / "specs", "sites_out": folder.worlds / "sites",
              "out": folder.worlds / "trajectories",
              "dataset_out": folder.worlds / f"dataset-{worlds.name}"}
    config = BuildConfig.model_validate({**worlds.model_dump(exclude={"name"}), **filled})

    def run() -> None:
        from webworld.pipeline import BuildEvent, build_worlds

        def show(event: BuildEvent) -> None:
            if event.stage in ("world", "note"):
                say(f"   {event.subject} ({event.done}/{event.total})")

        result = build_worlds(config, progress=show)
        say(f"   {result.verified} of {result.candidates} candidates verified "
            f"in {result.seconds:.0f} s")
        if config.verify and not result.verified:
            raise WebworldError(f"build {worlds.name}: no candidate verified, nothing to train on")

    return Stage(f"build {worlds.name}", config.out, rendered(["build"], config), run)


def _snapshot_stage(folder: RunFolder, say: Say) -> Stage:
    sites = folder.worlds / "sites"
    done = sites / ".snapshots-done"

    def run() -> None:
        from webworld.render.site import load_site
        from webworld.rl.fast.capture import build_snapshot, load_snapshot

        for site_dir in sorted(p for p in sites.iterdir() if p.is_dir()):
            site = load_site(site_dir)
            if load_snapshot(site) is None:
                say(f"   {site_dir.name}: capturing the fast env's pages")
                build_snapshot(site)
        done.touch()

    return Stage("snapshots", done, command("env", "snapshot", sites=sites), run)


def _export_stage(recipe: Recipe, folder: RunFolder) -> Stage:
    export = recipe.export
    trajectories = folder.worlds / "trajectories"

    def run() -> None:
        from webworld.data.export import export_dataset

        export_dataset(trajectories, folder.data, formats=set(export.formats),
                       splits=export.splits, seed=export.seed, observation=export.observation,
                       actions=export.actions,
                       progress=False)

    return Stage("export", folder.data / "manifest.json",
                 command("export", trajectories, out=folder.data, format=export.formats,
                         observation=export.observation, actions=export.actions,
                         splits=",".join(map(str, export.splits)), seed=export.seed), run)


def _train_worlds_stage(count: int, folder: RunFolder) -> Stage:
    def run() -> None:
        manifest = json.loads((folder.data / "manifest.json").read_text(encoding="utf-8"))
        chosen = sorted(manifest["splits"]["train"]["worlds"])[:count]
        for part in ("sites", "trajectories"):
            (folder.train_worlds / part).mkdir(parents=True, exist_ok=True)
            for world in chosen:
                link = folder.train_worlds / part / world
                if not link.is_symlink():
                    link.symlink_to((folder.worlds / part / world).resolve())

    return Stage("train-worlds", folder.train_worlds,
                 f"(links to the first {count} training-split worlds of "
                 f"{_shown(folder.data / 'manifest.json')})", run)


def sft_settings(sft: SFTRecipe, recipe: Recipe, folder: RunFolder) -> Any:
    """The SFTSettings of the recipe's SFT stage, its folders and device filled in."""
    from webworld.train.sft import SFTSettings

    return SFTSettings.model_validate({**sft.model_dump(exclude={"name"}), "data": folder.data,
                                       "out": folder.sft(sft), "device": recipe.device.device})


def _sft_stage(sft: SFTRecipe, recipe: Recipe, folder: RunFolder) -> Stage:
    settings = sft_settings(sft, recipe, folder)

    def run() -> None:
        from webworld.train.sft import run_sft

        run_sft(settings, progress=True)

    return Stage(f"sft {sft.name}", folder.sft(sft) / "model" / "config.json",
                 rendered(["train", "sft"], settings), run)


def rl_config(run: RLRecipe, seed: int, recipe: Recipe, folder: RunFolder) -> Any:
    """The RLConfig of one seed of an RL run of the recipe, its folders filled in."""
    from webworld.train.config import validate_config

    model = folder.sft(recipe.sft) / "model" if run.model == "sft" and recipe.sft else run.model
    worlds = folder.train_worlds if run.world_folder == "train-worlds" else folder.worlds
    data = {**run.model_dump(exclude={"name", "seeds", "world_folder"}), "model": str(model),
            "worlds": worlds, "out": folder.rl(run, seed), "seed": seed,
            "device": recipe.device.device}
    return validate_config(data, f"rl {run.name}")


def _rl_stage(run: RLRecipe, seed: int, recipe: Recipe, folder: RunFolder, say: Say) -> Stage:
    config = rl_config(run, seed, recipe, folder)

    def train() -> None:
        from webworld.train.loop import RLRun

        def show(row: dict[str, Any]) -> None:
            say(f"   batch {row['step']}/{config.steps}: success {row['success_rate']:.2f}, "
                f"reward {row['reward_mean']:.2f}")

        RLRun(config, on_step=show).run()

    return Stage(f"rl {run.name} s{seed}", config.out / "model" / "config.json",
                 rendered(["train", "rl"], config), train)


def eval_targets(ev: EvalRecipe, recipe: Recipe, folder: RunFolder) -> list[tuple[str, str]]:
    """(results name, policy) of each eval an entry stands for: one per seed of an RL run."""
    if ev.policy == "sft" and recipe.sft is not None:
        return [(ev.name, f"hf:{folder.sft(recipe.sft) / 'model'}")]
    run = next((r for r in recipe.rl if r.name == ev.rl_run), None)
    if run is None:
        return [(ev.name, ev.policy)]
    targets = []
    for seed in ev.seeds or run.seeds:
        if ev.milestones:  # along the way first: they are there before the run's end
            from webworld.train.checkpoint import milestone_dir
            targets += [(ev.result_name(seed, step), f"hf:{milestone_dir(folder.rl(run, seed), step)}")
                        for step in sorted(run.milestones)]
        targets.append((ev.result_name(seed), f"hf:{folder.rl(run, seed) / 'model'}"))
    return targets


def _eval_stages(ev: EvalRecipe, recipe: Recipe, folder: RunFolder, say: Say) -> list[Stage]:
    stages = []
    for name, policy in eval_targets(ev, recipe, folder):
        settings = eval_settings(ev, policy, recipe, folder, folder.results(name))
        done = settings.out.with_name(settings.out.name + ".done")

        def run(settings: Any = settings, done: Path = done) -> None:
            _evaluate(settings, say)
            done.touch()

        stages.append(Stage(f"eval {name}", done, rendered(["eval"], settings), run))
    return stages


def eval_settings(ev: EvalRecipe, policy: str, recipe: Recipe, folder: RunFolder, out: Path
                  ) -> Any:
    """The EvalSettings of one eval of the recipe: its policy, suite, results file, held-out
    folder and device filled in."""
    from webworld.eval.runner import EvalSettings

    suite = {"worlds": str(folder.worlds), "train-worlds": str(folder.train_worlds)}.get(
        ev.suite, ev.suite)
    heldout = ev.heldout_dir if "heldout_dir" in ev.model_fields_set else folder.root / "heldout"
    device = None if recipe.device.device == "auto" else recipe.device.device
    data = {**ev.model_dump(include=set(EvalSettings.model_fields)), "policy": policy,
            "suite": suite, "out": out, "heldout_dir": heldout, "device": device}
    return EvalSettings.model_validate(data)


def _evaluate(settings: Any, say: Say) -> None:
    """One `webworld eval`: the suite's episodes not in its results file yet, appended."""
    from webworld.eval.runner import run_eval

    settings.out.parent.mkdir(parents=True, exist_ok=True)
    stats = run_eval(settings, note=say).stats
    say(f"   {stats.episodes} episodes played, {stats.skipped} already in {_shown(settings.out)}")
    if stats.stopped:
        raise WebworldError(f"stopped early: {stats.stopped}; run the recipe again to resume",
                            str(settings.out))
