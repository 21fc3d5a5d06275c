"""A recipe: every stage of a study in one TOML file, validated by pydantic.

The sections reuse the settings of the commands they stand for (``SFTSettings``,
``RLConfig``, ``EvalSettings``, the build's config): one source per setting. What the recipe
fills itself (where the data is, the run folders, the device, an RL run's seed) is left out
of a section; setting it there is an error naming the key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from webworld.eval.runner import EvalSettings
from webworld.pipeline import BuildConfig
from webworld.train.config import RLConfig
from webworld.train.sft import SFTSettings

NAME = r"^[a-z0-9][a-z0-9_.-]*$"  # a stage's name is part of a folder's or a file's name
Device = Literal["auto", "cpu", "cuda"]


class RecipeFilled(BaseModel):
    """A section whose base settings name some keys the recipe fills itself (:attr:`FILLED`,
    key: what fills it); giving one in the file is an error naming it."""

    FILLED: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _leave_filled_keys_out(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = [key for key in cls.FILLED if key in data]
            if given:
                key = given[0]
                raise ValueError(f"{key} is filled by the recipe ({cls.FILLED[key]}): leave it out")
        return data


class DeviceSettings(BaseModel):
    """Where the training and the model policies run."""

    model_config = ConfigDict(extra="forbid")

    device: Device = Field("auto", description="auto (CUDA when there is one), cpu or cuda: for "
                           "SFT, RL and every model policy's evals.")
    threads: int | None = Field(None, ge=1, description="CPU threads of torch (None: torch's "
                                "default, one per core).")


class WorldsRecipe(RecipeFilled, BuildConfig):
    """One `webworld build` into the run's worlds/ (every BuildConfig key but the folders)."""

    FILLED: ClassVar[dict[str, str]] = {
        "specs_out": "worlds/specs/", "sites_out": "worlds/sites/",
        "out": "worlds/trajectories/", "dataset_out": "worlds/dataset-<name>/"}

    name: str = Field(pattern=NAME, description="The stage's name (`build <name>`), e.g. the "
                      "profile.")


class ExportRecipe(BaseModel):
    """`webworld export` of every world built, into the run's data/ folder."""

    model_config = ConfigDict(extra="forbid")

    formats: list[Literal["jsonl", "parquet", "hf", "sft"]] = Field(
        ["sft"], min_length=1, description="What to write (SFT needs sft).")
    observation: Literal["full", "compact"] = Field("compact", description="Page text in the SFT "
                                                    "prompts (train and act in the same mode).")
    actions: Literal["named", "ids"] = Field("named", description="How the SFT replies act: "
                                             "named (by role and name where that picks the "
                                             "element out, else by id) or ids (always by id).")
    splits: tuple[float, float, float] = Field((0.8, 0.1, 0.1), description="Train, validation, "
                                               "test fractions of the worlds.")
    seed: int = Field(0, description="Which worlds go to which split.")


class TrainWorlds(BaseModel):
    """train-worlds/: a few training-split worlds (links) for RL and whole-task evals that fit."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(ge=1, description="Training-split worlds linked, the first by name.")


class SFTRecipe(RecipeFilled, SFTSettings):
    """`webworld train sft` on the export (every SFTSettings key but those the recipe fills)."""

    FILLED: ClassVar[dict[str, str]] = {"data": "the run's export, data/",
                                        "out": "sft-<name>/ in the run folder",
                                        "device": "the [device] section"}

    name: str = Field("main", pattern=NAME, description="The run folder is sft-<name>/.")
    data: Path = Field(Path("data"), exclude=True, description="Filled by the recipe.")
    out: Path = Field(Path("sft"), exclude=True, description="Filled by the recipe.")

    @property
    def folder(self) -> str:
        return f"sft-{self.name}"


class RLRecipe(RecipeFilled, RLConfig):
    """`webworld train rl` once per seed (every RLConfig key but those the recipe fills)."""

    FILLED: ClassVar[dict[str, str]] = {"worlds": "world_folder", "out": "rl-<name>-s<seed>/",
                                        "seed": "seeds", "device": "the [device] section"}

    name: str = Field(pattern=NAME, description="Run folders are rl-<name>-s<seed>/.")
    seeds: list[int] = Field([0], min_length=1, description="One run per seed.")
    model: str = Field("sft", description="What to start from: sft (the recipe's SFT model), "
                       "tiny, smollm2, gemma3 or a model folder.")
    world_folder: Literal["worlds", "train-worlds"] = Field(
        "worlds", description="worlds: every world built; train-worlds: the [train_worlds] "
        "subset.")
    out: Path = Field(Path("rl"), exclude=True, description="Filled by the recipe.")

    def folder(self, seed: int) -> str:
        return f"rl-{self.name}-s{seed}"


class EvalRecipe(RecipeFilled, EvalSettings):
    """`webworld eval` of one policy on one suite (every EvalSettings key but those the recipe
    fills); ``study = { ground_names = true }`` grounds a model's replies by name."""

    FILLED: ClassVar[dict[str, str]] = {"out": "eval/<name>.jsonl",
                                        "device": "the [device] section"}

    name: str = Field(pattern=NAME, description="Results go to eval/<name>.jsonl (an RL policy's "
                      "to eval/<name>-s<seed>.jsonl).")
    policy: str = Field(description="sft (the recipe's SFT model), rl:<run> (each seed of that "
                        "RL run), oracle, random, hf:PATH (hf:smollm2: zero shot) or "
                        "openai:MODEL.")
    suite: str = Field("heldout", description="heldout (made once in heldout_dir, default: "
                       "heldout/ in the run folder), heldout-dense (its worlds at generator "
                       "version 3, beside it in heldout-dense/), miniwob, miniwob:TASK,..., worlds (every "
                       "world built), train-worlds, or a folder with sites/ and trajectories/.")
    seeds: list[int] | None = Field(None, description="rl:<run> policies: the seeds scored "
                                    "(None: every seed of the run).")
    milestones: bool = Field(False, description="rl:<run> policies: also score the policy at "
                             "each of the run's milestones (eval/<name>-s<seed>-b<batch>.jsonl): "
                             "the curve along training.")
    baseline: str | None = Field(None, description="Another eval of this recipe on the same "
                                 "suite: the report pairs this one's episodes with its (won, "
                                 "lost, a sign test, the gain).")

    @property
    def rl_run(self) -> str | None:
        return self.policy.removeprefix("rl:") if self.policy.startswith("rl:") else None

    def result_name(self, seed: int, batch: int | None = None) -> str:
        """The results file (in eval/, less .jsonl) of an rl:<run> policy's seed, at the end
        of the run or at its milestone ``batch``."""
        return f"{self.name}-s{seed}" + (f"-b{batch}" if batch is not None else "")


class Recipe(BaseModel):
    """A study: the worlds to build, their export, SFT, the RL runs, the evals, the device."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("", description="What the recipe is called (default: its file's name).")
    description: str = Field("", description="One line on what it runs and what it is for.")
    device: DeviceSettings = Field(default_factory=DeviceSettings, description="Where training "
                                   "and model policies run.")
    worlds: list[WorldsRecipe] = Field(min_length=1, description="The builds ([[worlds]]), all "
                                       "into worlds/.")
    snapshots: bool = Field(True, description="Capture the fast env's pages of every site as a "
                            "stage of its own (else the first fast env captures them).")
    export: ExportRecipe = Field(default_factory=ExportRecipe, description="The export, data/.")
    train_worlds: TrainWorlds | None = Field(None, description="A subset of the training-split "
                                             "worlds, train-worlds/ (None: not made).")
    sft: SFTRecipe | None = Field(None, description="SFT on the export (None: no SFT stage).")
    rl: list[RLRecipe] = Field([], description="The RL runs ([[rl]]), each once per seed.")
    evals: list[EvalRecipe] = Field([], description="The evals ([[evals]]), in order.")

    def record(self) -> dict[str, Any]:
        """The recipe as JSON data, without the keys its sections leave to the recipe."""
        every = {"__all__"}
        return self.model_dump(mode="json", exclude={
            "worlds": dict.fromkeys(every, set(WorldsRecipe.FILLED)),
            "rl": dict.fromkeys(every, set(RLRecipe.FILLED)),
            "evals": dict.fromkeys(every, set(EvalRecipe.FILLED)),
            "sft": set(SFTRecipe.FILLED)})

    @model_validator(mode="after")
    def _references_resolve(self) -> Recipe:
        _unique("worlds", [w.name for w in self.worlds])
        _unique("rl", [r.name for r in self.rl])
        _unique("evals", [e.name for e in self.evals])
        runs = {r.name: r for r in self.rl}
        for i, run in enumerate(self.rl):
            if run.model == "sft" and self.sft is None:
                raise ValueError(f"rl.{i}.model: sft, but the recipe has no [sft] section")
            if run.world_folder == "train-worlds" and self.train_worlds is None:
                raise ValueError(f"rl.{i}.world_folder: train-worlds needs a [train_worlds] "
                                 "section")
        names = [e.name for e in self.evals]
        for i, ev in enumerate(self.evals):
            _check_eval(i, ev, self, runs, names[:i])
        return self


def _unique(section: str, names: list[str]) -> None:
    seen = {n for n in names if names.count(n) > 1}
    if seen:
        raise ValueError(f"{section}: the name {sorted(seen)[0]!r} is used twice")


def _check_eval(i: int, ev: EvalRecipe, recipe: Recipe, runs: dict[str, RLRecipe],
                earlier: list[str]) -> None:
    """An eval's policy, suite and baseline name what the recipe makes (a baseline runs first)."""
    if ev.policy == "sft" and recipe.sft is None:
        raise ValueError(f"evals.{i}.policy: sft, but the recipe has no [sft] section")
    run = ev.rl_run
    if run is not None and run not in runs:
        raise ValueError(f"evals.{i}.policy: no RL run named {run!r}")
    if run is not None and ev.seeds and not set(ev.seeds) <= set(runs[run].seeds):
        raise ValueError(f"evals.{i}.seeds: not all of them are seeds of rl run {run!r}")
    if run is None and ev.seeds is not None:
        raise ValueError(f"evals.{i}.seeds: only an rl:<run> policy has seeds")
    if ev.milestones and (run is None or not runs[run].milestones):
        raise ValueError(f"evals.{i}.milestones: only an rl:<run> policy whose run keeps "
                         "milestones (rl.milestones) has them")
    if ev.suite == "train-worlds" and recipe.train_worlds is None:
        raise ValueError(f"evals.{i}.suite: train-worlds needs a [train_worlds] section")
    if ev.baseline is not None and ev.baseline not in earlier:
        raise ValueError(f"evals.{i}.baseline: no eval named {ev.baseline!r} before this one")
    if not re.match(r"^(sft|rl:.+|oracle|random|hf:.+|openai:.+)$", ev.policy):
        raise ValueError(f"evals.{i}.policy: {ev.policy!r} is not sft, rl:<run>, oracle, random, "
                         "hf:PATH or openai:MODEL")
