"""Rollouts: groups of G episodes per task instance, played in a vector env, every waiting
episode answered by one batched ``generate``.

Each turn reads the prompt of :mod:`webworld.data.prompting` (through the eval harness's
:class:`~webworld.eval.policies.Turn`, so training and evaluation read the same text) and
keeps the prompt tokens, the reply tokens and their behaviour log-probs. Everything random
is drawn from the run's seed and the batch's index, so a resumed run plays the same episodes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from webworld.errors import UsageError
from webworld.rl.tasks import TaskInstance, WorldSet
from webworld.rl.turn import Turn
from webworld.rl.vector import local_vector_env
from webworld.train.batch import EpisodeRecord, TurnRecord
from webworld.train.engine import Engine


@dataclass
class Planned:
    task: TaskInstance
    group: int
    seed: int


@dataclass
class RolloutBatch:
    index: int                       # 1-based rollout batch
    episodes: list[EpisodeRecord]
    version: int                     # the policy version that played it
    seconds: float                   # wall time of the rollout
    env_seconds: float               # of which in the environment's reset/step


def plan_batch(instances: list[TaskInstance], index: int, seed: int, tasks: int, group_size: int
               ) -> list[Planned]:
    """The batch's task instances (without repeats while there are enough) and their seeds.

    The G episodes of a group share one seed, so they read the same phrasing of the task: the
    group's mean reward is then a baseline for one prompt, and only the policy's samples differ.
    """
    rng = np.random.default_rng([seed, index])
    picked = rng.choice(len(instances), size=tasks, replace=tasks > len(instances))
    planned = []
    for g, i in enumerate(picked.tolist()):
        group_seed = int(rng.integers(2**31))
        planned += [Planned(instances[i], g, group_seed) for _ in range(group_size)]
    return planned


def make_vector_env(worlds: WorldSet, env: str, split: str | None, num_envs: int,
                    observation: str, max_steps: int | None, ray: str | None = None,
                    ray_workers: int | None = None, reward: str = "success") -> Any:
    settings = {"observation": observation, "max_steps": max_steps, "reward": reward}
    if ray:
        from webworld.scale.rollout import RayVectorEnv

        return RayVectorEnv(num_envs, worlds, address=ray, env=env, split=split,
                            workers=ray_workers, **settings)
    return local_vector_env(worlds, env, split, num_envs, **settings)


def lead_in(vec: Any, starting: dict[int, Planned], reset: dict[int, tuple[dict, dict]],
            from_goal: int) -> dict[int, Turn]:
    """Each slot's first turn: after reset, or with ``from_goal`` K after replaying its
    verified path up to K steps before the goal (those steps are in the prompt's history,
    as the dataset shows them)."""
    turns = {i: Turn(obs, info, []) for i, (obs, info) in reset.items()}
    if not from_goal:
        return turns
    paths = {}
    for i, p in starting.items():
        if not p.task.oracle:
            raise UsageError(f"--from-goal needs verified trajectories; {p.task.id} has none "
                             "(run `webworld verify`)")
        path = p.task.oracle[0]
        paths[i] = path[:max(len(path) - from_goal, 0)]
    for k in range(max(len(path) for path in paths.values())):
        stepped = vec.step_slots({i: path[k] for i, path in paths.items() if k < len(path)})
        for i, (obs, _reward, terminated, truncated, info) in stepped.items():
            if terminated or truncated:  # a step limit shorter than the replayed path
                raise UsageError(f"{starting[i].task.id}: the episode ended while replaying "
                                 f"its verified path to {from_goal} steps before the goal "
                                 "(raise --max-episode-steps or --from-goal)")
            turns[i] = turns[i].after(obs, info)
    return turns


@dataclass
class _Playing:
    record: EpisodeRecord
    turn: Turn


def play_batch(vec: Any, engine: Engine, planned: list[Planned], index: int, seed: int,
               from_goal: int = 0) -> RolloutBatch:
    """Play every planned episode, ``vec.num_envs`` at a time; with ``from_goal`` K, each
    starts K steps before the goal of its verified path and has 2K policy turns."""
    started, env_seconds = time.perf_counter(), 0.0
    generator = torch.Generator().manual_seed(int(np.random.default_rng([seed, index, 1])
                                                  .integers(2**63)))
    version = engine.version
    queue, playing, done = list(reversed(planned)), {}, []
    while queue or playing:
        free = [i for i in range(vec.num_envs) if i not in playing][:len(queue)]
        if free:
            starting = {i: queue.pop() for i in free}
            t0 = time.perf_counter()
            reset = vec.reset_slots({i: p.task for i, p in starting.items()},
                                    {i: p.seed for i, p in starting.items()})
            turns = lead_in(vec, starting, reset, from_goal)
            env_seconds += time.perf_counter() - t0
            for i, turn in turns.items():
                p = starting[i]
                playing[i] = _Playing(EpisodeRecord(p.task.id, p.group, p.seed, version), turn)
        slots = sorted(playing)
        replies = engine.generate([playing[i].turn.messages() for i in slots], generator)
        t0 = time.perf_counter()
        stepped = vec.step_slots({i: g.text for i, g in zip(slots, replies)})
        env_seconds += time.perf_counter() - t0
        for i, gen in zip(slots, replies):
            obs, reward, terminated, truncated, info = stepped[i]
            ep = playing[i]
            ep.record.turns.append(TurnRecord(gen.prompt_ids, gen.completion_ids, gen.logprobs,
                                              float(reward)))
            ep.record.errors += bool(info.get("error_code"))
            ep.record.reward += float(reward)
            ep.turn = ep.turn.after(obs, info)
            if terminated or truncated or len(ep.record.turns) == 2 * from_goal:
                ep.record.success = bool(info.get("success", reward > 0))
                done.append(ep.record)
                del playing[i]
    done.sort(key=lambda r: (r.group, r.seed))  # groups together, the same order on any run
    return RolloutBatch(index, done, version, time.perf_counter() - started, env_seconds)
