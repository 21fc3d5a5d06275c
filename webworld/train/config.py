"""The one configuration of an RL run: a TOML file and flags (flags win), validated by pydantic.

``webworld train rl --config run.toml --algo gspo`` reads ``run.toml`` (keys are the field
names below, the loss settings under ``[loss]``), then applies the flags given. The run folder
keeps the resolved settings in ``config.json``; ``--resume`` reads them back from there.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from webworld.errors import UsageError, validation_problems
from webworld.settings import aliases
from webworld.train.loss_config import LossConfig

Algo = Literal["vespo", "gspo", "gspo-token", "grpo", "sapo"]


class RLConfig(BaseModel):
    """Settings of ``webworld train rl``."""

    model_config = ConfigDict(extra="forbid")

    algo: Algo = Field("vespo", description="the policy loss")
    model: str = Field("tiny", description="tiny (random init), smollm2, gemma3, or a model folder "
                                           "(an SFT output, a checkpoint)")
    worlds: Path = Field(Path("."), description="a folder with sites/ and trajectories/ "
                                                "(webworld build's output)")
    split: Literal["train", "validation", "test", "all"] = Field(
        "train", description="which worlds' tasks to train on (held-out worlds are never in train)")
    env: Literal["fast", "live"] = Field("fast", description="fast env (captured pages) or "
                                                              "live sites in Chromium")
    ray: str | None = Field(None, description="play the rollouts on this Ray cluster (auto, "
                                              "host:port or local); None: in this process")
    ray_workers: int | None = Field(None, ge=1, description="Ray env workers (default: one "
                                                            "per CPU of the cluster)")
    observation: Literal["full", "compact"] | None = Field(
        None, description="page text mode; default: what the policy was trained on (its SFT "
                          "data), else compact")
    out: Path = Field(Path("runs/rl"), description="the run folder")
    steps: int = Field(20, ge=1, description="rollout batches (learner iterations)")
    tasks_per_step: int = Field(4, ge=1, description="task instances per rollout batch",
                                json_schema_extra=aliases("--tasks"))
    group_size: int = Field(8, ge=2, description="episodes per task instance (G)",
                            json_schema_extra=aliases("-G"))
    minibatches: int = Field(1, ge=1, description="optimiser steps per rollout batch (staleness N)",
                             json_schema_extra=aliases("-N"))
    async_lag: int = Field(0, ge=0, description="rollouts run ahead of the learner by this many "
                                                "policy versions (0: synchronous)",
                           json_schema_extra=aliases("--async"))
    envs: int = Field(16, ge=1, description="episodes played at once")
    max_episode_steps: int | None = Field(None, ge=1, description="default: twice the shortest "
                                                                  "path")
    from_goal: int = Field(0, ge=0, description="start each episode this many steps before the "
                           "goal (the verified path is replayed up to there; a reverse "
                           "curriculum) and end it after twice as many policy turns; 0: the "
                           "whole task")
    curriculum: bool = Field(False, description="widen from_goal by one step each time a "
                             "rollout batch's success reaches curriculum_threshold, up to whole "
                             "tasks (from_goal >= the longest verified path)")
    curriculum_threshold: float = Field(0.6, gt=0, le=1, description="rollout success that "
                                        "widens the curriculum")
    reward: Literal["success", "progress"] = Field(
        "success", description="success: 1 at the goal, else 0, one advantage per episode; "
        "progress: plus Phi(s') - Phi(s) per turn, Phi = -(FSM actions from the true state to "
        "the goal), and per-turn advantages from the returns to go")
    max_new_tokens: int = Field(96, ge=1, description="tokens per reply")
    temperature: float = Field(0.7, gt=0, description="sampling temperature of the policy "
                               "trained (0.7 learnt faster and steadier than 1.0 at every "
                               "learning rate of experiments/learning_rates/REPORT.md)")
    learning_rate: float | None = Field(None, gt=0, description="peak learning rate; default: "
                                        "the model family's (webworld.train.defaults)",
                                        json_schema_extra=aliases("--lr"))
    train_layers: int | None = Field(None, ge=0, description="train only the top K transformer "
                                     "layers and the final norm (0: the whole model); default: "
                                     "the model family's (webworld.train.defaults)")
    warmup_steps: int = Field(10, ge=0, description="optimiser steps of linear learning-rate "
                                                    "warm-up", json_schema_extra=aliases("--warmup"))
    weight_decay: float = Field(0.0, ge=0, description="AdamW's decoupled weight decay")
    adam_epsilon: float = Field(1e-8, gt=0, description="AdamW's epsilon")
    grad_clip: float = Field(1.0, gt=0, description="clip each optimiser step's gradient to "
                                                    "this global norm")
    precision: Literal["auto", "fp32", "bf16"] = Field(
        "auto", description="sampling compute: bf16 (auto on CUDA) or fp32; weights, optimiser "
                            "and the log-probs of every ratio are always fp32")
    measure_drift: bool = Field(True, description="after each optimiser step, score its "
                                "minibatch again: how far the step moved the policy")
    max_step_kl: float = Field(0.1, gt=0, description="warn when one optimiser step moves the "
                               "policy further than this: KL(before || after) over the whole "
                               "vocabulary, nats per reply token")
    micro_batch_tokens: int = Field(16384, ge=256, description="tokens per forward/backward pass "
                                                              "(whole episodes)")
    generation_batch: int | None = Field(None, ge=1, description="prompts per generation "
                                         "forward pass; default: envs on a GPU (every episode "
                                         "waiting answered at once), 16 on a CPU")
    seed: int = Field(0, description="seeds the tiny model's weights, the task draws and the "
                                     "sampling")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto: CUDA when there "
                                                                       "is one")
    checkpoint_every: int = Field(5, ge=1, description="rollout batches between checkpoints")
    keep_checkpoints: int = Field(2, ge=1, description="checkpoints kept (the newest)")
    milestones: list[int] = Field([], description="rollout batches after which the policy is "
                                  "also kept, in milestones/step-N/ (for evals along the way: "
                                  "a recipe's held-out curve)")
    loss: LossConfig = Field(default_factory=LossConfig, description="loss settings ([loss] in "
                             "TOML, --loss-<field> as flags)")

    @model_validator(mode="after")
    def _milestones_within_the_run(self) -> RLConfig:
        outside = [m for m in self.milestones if not 1 <= m <= self.steps]
        if outside:
            raise ValueError(f"milestones {outside} are not rollout batches of the run "
                             f"(1 to steps, {self.steps})")
        return self

    @model_validator(mode="after")
    def _curriculum_needs_a_start(self) -> RLConfig:
        if self.curriculum and self.from_goal < 1:
            raise ValueError("curriculum widens from_goal: start it at 1 or more")
        if self.curriculum and self.async_lag:
            raise ValueError("curriculum runs synchronously (async_lag 0): each batch's level "
                             "follows the last batch's success")
        return self


def read_rl_toml(file: Path) -> dict[str, Any]:
    """A TOML file's settings (keys are RLConfig's fields, ``[loss]`` its loss's), unchecked."""
    try:
        return tomllib.loads(Path(file).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the config file: {exc.strerror}", str(file)) from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"not valid TOML: {exc}", str(file)) from None


def load_rl_config(file: Path | None, flags: dict[str, Any]) -> RLConfig:
    """The TOML file's settings, then the flags that were given (None means not given)."""
    base = read_rl_toml(file) if file is not None else {}
    loss = {**base.pop("loss", {}), **flags.pop("loss", {})}
    merged = {**base, **{k: v for k, v in flags.items() if v is not None}, "loss": loss}
    return validate_config(merged, str(file) if file else "flags")


def validate_config(data: dict[str, Any], where: str) -> RLConfig:
    try:
        return RLConfig.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"bad RL settings: {validation_problems(exc)}", where) from None


def saved_config(out: Path) -> RLConfig:
    path = out / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UsageError("no readable config.json: not an RL run folder", str(path)) from None
    return validate_config(data, str(path))
