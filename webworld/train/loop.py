"""An RL run, synchronous or asynchronous.

Synchronous (``async_lag = 0``): play a rollout batch with the current policy, learn from it
in ``minibatches`` optimiser steps, repeat. Asynchronous (``async_lag = K``): a rollout
thread with its own copy of the policy plays batch b with the weights of version
``max(0, b - 1 - K)`` (version v = v batches learnt), so it runs up to K batches ahead of
the learner; the lag is fixed by the schedule, not by thread timing, so an asynchronous run
is as reproducible (and resumable) as a synchronous one.
"""

from __future__ import annotations

import copy
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from webworld.fsio import atomic_write_json
from webworld.rl.tasks import WorldSet, load_worlds
from webworld.train.batch import EpisodeRecord
from webworld.train.checkpoint import latest, load_checkpoint, milestone_dir, save_checkpoint
from webworld.train.config import RLConfig
from webworld.train.defaults import rl_learning_rate, train_layers
from webworld.train.engine import SamplingSettings, TransformersEngine, default_batch
from webworld.train.learner import Learner
from webworld.train.metrics import MetricsLog, plot_curves
from webworld.train.models import (
    load_policy,
    policy_observation,
    resolve_device,
    resolve_precision,
    save_policy,
)
from webworld.train.rollout import RolloutBatch, make_vector_env, plan_batch, play_batch


@dataclass
class RunResult:
    out: Path
    steps: int
    rows: list[dict[str, Any]]
    seconds: float


def load_training_worlds(config: RLConfig) -> WorldSet:
    from webworld.errors import UsageError

    sites, trajectories = config.worlds / "sites", config.worlds / "trajectories"
    if not sites.is_dir():
        raise UsageError("no sites/ folder here (a `webworld build` output has one)",
                         str(config.worlds))
    return load_worlds(sites, trajectories if trajectories.is_dir() else None)


class RLRun:
    def __init__(self, config: RLConfig, *, on_step: Callable[[dict[str, Any]], None] | None = None
                 ) -> None:
        self.config, self.on_step = config, on_step
        self.device = resolve_device(config.device)
        self.split = None if config.split == "all" else config.split
        self.worlds = load_training_worlds(config)
        self.instances = self.worlds.instances(self.split)
        self.start_step, self.snapshots = 0, {}
        found = latest(config.out)
        source, learner_state = config.model, None
        if found is not None:
            self.start_step, learner_state, self.snapshots = load_checkpoint(found)
            source = str(found / "model")
        # the curriculum's level: steps before the goal each episode starts at
        self.from_goal = (learner_state or {}).get("from_goal", config.from_goal)
        self.longest_path = max((len(i.oracle[0]) for i in self.instances if i.oracle), default=0)
        # fp32 weights always: the learner's master copy (bf16 is a sampling compute mode)
        self.model, self.tokenizer = load_policy(source, seed=config.seed, device=self.device,
                                                 dtype=torch.float32)
        if config.learning_rate is None:  # the family's default, recorded in config.json
            config = config.model_copy(update={"learning_rate": rl_learning_rate(self.model)})
        if config.train_layers is None:
            config = config.model_copy(update={"train_layers": train_layers(self.model)})
        if config.observation is None:
            config = config.model_copy(update={"observation": policy_observation(source,
                                                                                 "compact")})
        self.config = config
        self.learner = Learner(self.model, self._pad_id(), config)
        if learner_state is not None:
            self.learner.load_state_dict(learner_state)
        sampling = SamplingSettings(config.max_new_tokens, config.temperature,
                                    config.generation_batch or
                                    default_batch(self.device, config.envs),
                                    precision=resolve_precision(config.precision, self.device))
        # synchronous: rollouts use the learner's own weights; asynchronous: a copy of them
        rollout_model = self.model if config.async_lag == 0 else copy.deepcopy(self.model)
        self.engine = TransformersEngine(rollout_model, self.tokenizer, sampling)
        self.engine.version = self.learner.version

    def _pad_id(self) -> int:
        tok = self.tokenizer
        return tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id

    def run(self) -> RunResult:
        config, started = self.config, time.perf_counter()
        config.out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(config.out / "config.json", config.model_dump(mode="json"))
        log = MetricsLog(config.out, self.start_step)
        vec = make_vector_env(self.worlds, config.env, self.split,
                              min(config.envs, config.tasks_per_step * config.group_size),
                              config.observation, config.max_episode_steps, config.ray,
                              config.ray_workers, reward=config.reward)
        try:
            batches = self._sync_batches(vec) if config.async_lag == 0 else \
                self._async_batches(vec)
            for batch, sync_seconds in batches:
                learn_started = time.perf_counter()
                stats = self.learner.update(batch.episodes, batch.index)
                learn_seconds = time.perf_counter() - learn_started
                if config.async_lag:
                    self._publish(self.learner.version)
                row = step_row(batch, stats, self.learner, learn_seconds, sync_seconds,
                               time.perf_counter() - started)
                row["from_goal"] = self.from_goal
                self._widen(row["success_rate"])
                warning = drift_warning(row, config.max_step_kl)
                if warning:
                    row["warning"] = warning
                log.write(row)
                if self.on_step is not None:
                    self.on_step(row)
                if batch.index % config.checkpoint_every == 0 or batch.index == config.steps:
                    save_checkpoint(config.out, batch.index, self.model, self.tokenizer,
                                    {**self.learner.state_dict(), "from_goal": self.from_goal},
                                    self._kept_snapshots(), config.keep_checkpoints)
                if batch.index in config.milestones:
                    save_policy(self.model, self.tokenizer, milestone_dir(config.out, batch.index))
        finally:
            self._halt()
            vec.close()
            log.close()
        save_policy(self.model, self.tokenizer, config.out / "model")
        plot_curves(log.rows, config.out / "curves.png",
                    f"{config.algo}, N={config.minibatches}, async={config.async_lag}, "
                    f"{config.model}, {config.env} env")
        return RunResult(config.out, len(log.rows), log.rows, time.perf_counter() - started)

    def _widen(self, success: float) -> None:
        """The curriculum: one step further from the goal once a batch succeeds often enough,
        until every episode is its whole task."""
        c = self.config
        if c.curriculum and success >= c.curriculum_threshold and \
                self.from_goal < self.longest_path:
            self.from_goal += 1

    # --- where rollout batches come from -------------------------------------------------------

    def _plan(self, index: int):
        c = self.config
        return plan_batch(self.instances, index, c.seed, c.tasks_per_step, c.group_size)

    def _sync_batches(self, vec: Any):
        for index in range(self.start_step + 1, self.config.steps + 1):
            self.engine.version = self.learner.version
            yield play_batch(vec, self.engine, self._plan(index), index, self.config.seed,
                             self.from_goal), 0.0

    def _async_batches(self, vec: Any):
        """Batches from a rollout thread running up to K versions ahead of the learner."""
        self._stop, self._published = False, threading.Condition()
        self._publish(self.learner.version)
        ready: queue.Queue = queue.Queue(maxsize=self.config.async_lag)
        worker = threading.Thread(target=self._produce, args=(vec, ready), daemon=True)
        worker.start()
        for _ in range(self.start_step + 1, self.config.steps + 1):
            item = ready.get()
            if isinstance(item, BaseException):
                raise item
            yield item
        worker.join()

    def _produce(self, vec: Any, ready: queue.Queue) -> None:
        try:
            for index in range(self.start_step + 1, self.config.steps + 1):
                wanted = max(0, index - 1 - self.config.async_lag)
                sync_started = time.perf_counter()
                with self._published:
                    self._published.wait_for(lambda v=wanted: v in self.snapshots or self._stop)
                    if self._stop:
                        return
                    weights = self.snapshots[wanted]
                if self.engine.version != wanted:
                    self.engine.load_weights(weights, wanted)
                sync_seconds = time.perf_counter() - sync_started
                ready.put((play_batch(vec, self.engine, self._plan(index), index,
                                      self.config.seed, self.config.from_goal), sync_seconds))
        except BaseException as exc:  # the learner raises it in the main thread
            ready.put(exc)

    def _halt(self) -> None:
        """Tell a waiting rollout thread to stop (the run ended or failed)."""
        self._stop = True
        if self.config.async_lag:
            with self._published:
                self._published.notify_all()

    def _publish(self, version: int) -> None:
        """Make the learner's weights at ``version`` available to the rollout thread."""
        weights = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
        with self._published:
            self.snapshots[version] = weights
            for old in [v for v in self.snapshots if v < version - self.config.async_lag]:
                del self.snapshots[old]
            self._published.notify_all()

    def _kept_snapshots(self) -> dict[int, dict[str, torch.Tensor]]:
        """The versions a resumed run's rollouts will still ask for (asynchronous runs)."""
        if not self.config.async_lag:
            return {}
        with self._published:
            return dict(self.snapshots)


def step_row(batch: RolloutBatch, stats: dict[str, float], learner: Learner,
             learn_seconds: float, sync_seconds: float, wall: float) -> dict[str, Any]:
    eps: list[EpisodeRecord] = batch.episodes
    n = max(len(eps), 1)
    steps = sum(len(e.turns) for e in eps)
    lags = [learner.version - 1 - e.version for e in eps]
    return {
        "step": batch.index, "version": learner.version,
        "optimizer_steps": learner.optimizer_steps, "episodes": len(eps),
        "success_rate": sum(e.success for e in eps) / n,
        "reward_mean": sum(e.reward for e in eps) / n,
        "episode_steps": steps / n,
        "refused_steps": sum(e.errors for e in eps) / max(steps, 1),
        "policy_tokens": sum(e.policy_tokens for e in eps),
        "prompt_tokens": sum(e.prompt_tokens for e in eps),
        "lag_mean": sum(lags) / n, "lag_max": max(lags, default=0),
        **{k: round(v, 8) for k, v in stats.items() if k != "updates"},
        "updates": [{k: round(v, 8) for k, v in u.items()} for u in stats.get("updates", [])],
        "time_rollout": round(batch.seconds, 3), "time_env": round(batch.env_seconds, 3),
        "time_learn": round(learn_seconds, 3), "time_sync": round(sync_seconds, 4),
        "wall": round(wall, 2),
    }


def drift_warning(row: dict[str, Any], max_kl: float) -> str:
    """What the log says when an optimiser step moved the policy too far from the rollouts."""
    moved = [(n, u) for n, u in enumerate(row.get("updates", []), 1)
             if u.get("step_kl", 0.0) > max_kl]
    if not moved:
        return ""
    n, worst = max(moved, key=lambda m: m[1]["step_kl"])
    return (f"{len(moved)} of {len(row['updates'])} optimiser step(s) moved the policy too far "
            f"(update {n}: KL {worst['step_kl']:.3g} nats/token > {max_kl:g}, "
            f"|log pi/mu| p99 {worst['step_log_ratio_abs_p99']:.3g}); lower the learning rate")
