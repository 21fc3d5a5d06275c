"""The gymnasium face of webworld's environments, shared by the live and the fast one.

:class:`WebEnv` is a ``gymnasium.Env`` over one :class:`~webworld.rl.episode.Episode`;
:class:`WebVectorEnv` is a ``gymnasium.vector.VectorEnv`` over N of them (next-step or
same-step autoreset). Subclasses say how a page is made and how coroutines are driven:
on the browser's event loop (live, N pages stepped concurrently) or inline (fast).

``reset(seed=..., options={"task": ..., "intent": ...})``: the task is an instance id,
``<world>/<task>``, or a :class:`~webworld.rl.tasks.TaskInstance`; by default one is drawn
from the environment's split with the seeded generator, and so is the phrasing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Coroutine, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from pydantic import ValidationError

from webworld.errors import UsageError, validation_problems
from webworld.rl.episode import EnvConfig, Episode
from webworld.rl.spaces import action_space, observation_space
from webworld.rl.tasks import TaskInstance, World, WorldSet, load_worlds


def run_inline(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never waits on anything (the fast env's) without a loop."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("the coroutine waited on something; it needs an event loop")


def make_config(config: EnvConfig | dict[str, Any] | None, overrides: dict[str, Any]) -> EnvConfig:
    base = config.model_dump() if isinstance(config, EnvConfig) else dict(config or {})
    try:
        return EnvConfig.model_validate({k: v for k, v in {**base, **overrides}.items()
                                         if v is not None})
    except ValidationError as exc:
        raise UsageError(f"bad environment settings: {validation_problems(exc)}") from None


def load_world_set(worlds: WorldSet | None, sites: Any, trajectories: Any, source: str,
                   dataset: Any, world_ids: list[str] | None) -> WorldSet:
    if worlds is not None:
        return worlds
    return load_worlds(sites, trajectories, source=source, dataset=dataset, worlds=world_ids)


class TaskSampler:
    """Task instances of one split, drawn with a seeded generator."""

    def __init__(self, worlds: WorldSet, split: str | None) -> None:
        self.worlds, self.split = worlds, split
        self.instances = worlds.instances(split)
        if not self.instances:
            have = sorted({w.split or "none" for w in worlds.worlds.values() if w.instances})
            raise UsageError(f"no task instances in split {split!r}; worlds have splits "
                             f"{', '.join(have)}")

    def pick(self, rng: np.random.Generator, options: dict[str, Any] | None
             ) -> tuple[World, TaskInstance, str]:
        options = options or {}
        task = options.get("task")
        if isinstance(task, TaskInstance):
            inst = task
        elif task is not None:
            inst = self.worlds.instance(str(task))
        else:
            inst = self.instances[int(rng.integers(len(self.instances)))]
        intent = options.get("intent") or inst.intents[int(rng.integers(len(inst.intents)))]
        return self.worlds.world(inst.world_id), inst, str(intent)


class WebEnv(gymnasium.Env, ABC):
    """One episode at a time; see the module doc for ``reset`` options."""

    metadata = {"render_modes": ["ansi", "rgb_array"]}

    def __init__(self, worlds: WorldSet, split: str | None, config: EnvConfig,
                 render_mode: str | None = None) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise UsageError(f"unknown render mode {render_mode!r}; choose from "
                             f"{', '.join(self.metadata['render_modes'])}")
        self.worlds, self.config, self.render_mode = worlds, config, render_mode
        self.sampler = TaskSampler(worlds, split)
        self.observation_space = observation_space(screenshot=config.screenshot)
        self.action_space = action_space()
        self.episode: Episode | None = None
        self._last_obs: dict[str, Any] | None = None
        self._next_pick: tuple[World, TaskInstance, str] | None = None

    @abstractmethod
    def _drive(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coro`` to its end: on the browser's loop (live) or inline (fast)."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        assert self.episode is not None
        pick = self._next_pick if seed is None and not options and self._next_pick else \
            self.sampler.pick(self.np_random, options)
        obs, info = self._drive(self.episode.reset(*pick))
        # Draw the next episode's task now (the same draw reset() would make) so the live
        # env can load its page while this episode runs.
        self._next_pick = self.sampler.pick(self.np_random, None)
        self._drive(self.episode.prepare(*self._next_pick[:2]))
        self._last_obs = obs
        return obs, info

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        assert self.episode is not None
        result = self._drive(self.episode.step(action))
        self._last_obs = result[0]
        return result

    def render(self) -> Any:
        if self.render_mode is None or self._last_obs is None:
            return None
        if self.render_mode == "ansi":
            obs = self._last_obs
            return f"Task: {obs['goal']}\nURL: {obs['url']}\n{obs['axtree']}"
        return self._rgb_frame()

    def element_box(self, bid: str) -> tuple[float, float, float, float] | None:
        """(x, y, width, height) of element ``bid`` on the page last observed, in CSS
        pixels of the viewport (what a trace outlines on a screenshot)."""
        return element_box(self.episode.seen if self.episode else None, bid)

    def _rgb_frame(self) -> Any:
        raise UsageError("this environment has no screenshots (render_mode='ansi' shows the text)")


class WebVectorEnv(VectorEnv, ABC):
    """N episodes stepped together, each with its own seeded task draws."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, worlds: WorldSet, split: str | None, config: EnvConfig,
                 episodes: list[Episode], autoreset_mode: AutoresetMode | str) -> None:
        mode = AutoresetMode(autoreset_mode) if isinstance(autoreset_mode, str) else autoreset_mode
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.worlds, self.config, self.episodes = worlds, config, episodes
        self.sampler = TaskSampler(worlds, split)
        self.num_envs = len(episodes)
        self.single_observation_space = observation_space(screenshot=config.screenshot)
        self.single_action_space = action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._rngs = [seeding.np_random()[0] for _ in episodes]
        self._needs_reset = [False] * self.num_envs
        self._next: list[tuple[World, TaskInstance, str]] = [None] * self.num_envs  # type: ignore

    def _prepare_next(self, slots: Any) -> None:
        """Draw each slot's next task now, so a live page can load it in the background."""
        slots = list(slots)
        for i in slots:
            self._next[i] = self.sampler.pick(self._rngs[i], None)
        self._gather([self.episodes[i].prepare(*self._next[i][:2]) for i in slots])

    @abstractmethod
    def _gather(self, coros: list[Coroutine[Any, Any, Any]]) -> list[Any]:
        """Run ``coros``: concurrently on the browser loop (live) or in turn (fast)."""

    def reset(self, *, seed: int | Sequence[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        seeds = _seeds(seed, self.num_envs)
        for i, s in enumerate(seeds):
            if s is not None:
                self._rngs[i] = seeding.np_random(s)[0]
        picks = [self.sampler.pick(rng, options) for rng in self._rngs]
        results = self._gather([ep.reset(*p) for ep, p in zip(self.episodes, picks)])
        self._prepare_next(range(self.num_envs))
        self._needs_reset = [False] * self.num_envs
        infos: dict[str, Any] = {}
        for i, (_, info) in enumerate(results):
            infos = self._add_info(infos, info, i)
        return self._batch([obs for obs, _ in results]), infos

    def step(self, actions: Sequence[str]) -> tuple[dict[str, Any], np.ndarray, np.ndarray,
                                                     np.ndarray, dict[str, Any]]:
        if len(actions) != self.num_envs:
            raise UsageError(f"{len(actions)} actions for {self.num_envs} environments")
        mode = self.metadata["autoreset_mode"]
        coros = []
        restarted = [i for i in range(self.num_envs)
                     if self._needs_reset[i] and mode == AutoresetMode.NEXT_STEP]
        for i, (ep, action) in enumerate(zip(self.episodes, actions)):
            if i in restarted:
                coros.append(_as_step(ep.reset(*self._next[i])))
            else:
                coros.append(ep.step(action))
        results = list(self._gather(coros))
        self._prepare_next(restarted)
        if mode == AutoresetMode.SAME_STEP:
            results = self._same_step_resets(results)
        self._needs_reset = [bool(r[2] or r[3]) for r in results]
        infos: dict[str, Any] = {}
        for i, r in enumerate(results):
            infos = self._add_info(infos, r[4], i)
        return (self._batch([r[0] for r in results]),
                np.array([r[1] for r in results], dtype=np.float64),
                np.array([r[2] for r in results], dtype=np.bool_),
                np.array([r[3] for r in results], dtype=np.bool_), infos)

    # --- slot by slot: what a trainer playing groups of episodes per task uses ---------------

    def reset_slots(self, tasks: dict[int, Any], seeds: dict[int, int]
                    ) -> dict[int, tuple[dict[str, Any], dict[str, Any]]]:
        """Start ``tasks[i]`` (an instance or its id) in slot i, seeded, all at once; other
        slots are left as they are. No autoreset and no page loaded ahead."""
        for i, seed in seeds.items():
            self._rngs[i] = seeding.np_random(seed)[0]
        picks = {i: self.sampler.pick(self._rngs[i], {"task": t}) for i, t in tasks.items()}
        results = self._gather([self.episodes[i].reset(*p) for i, p in picks.items()])
        for i in picks:
            self._needs_reset[i] = False
        return dict(zip(picks, results))

    def step_slots(self, actions: dict[int, str]
                   ) -> dict[int, tuple[dict[str, Any], float, bool, bool, dict[str, Any]]]:
        """Step only the slots given, concurrently; an ended slot waits for ``reset_slots``."""
        results = self._gather([self.episodes[i].step(a) for i, a in actions.items()])
        for i, r in zip(actions, results):
            self._needs_reset[i] = bool(r[2] or r[3])
        return dict(zip(actions, results))

    def _same_step_resets(self, results: list[Any]) -> list[Any]:
        """Ended episodes start again at once; their last observation goes in ``info``."""
        ended = [i for i, r in enumerate(results) if r[2] or r[3]]
        if not ended:
            return results
        fresh = self._gather([self.episodes[i].reset(*self._next[i]) for i in ended])
        self._prepare_next(ended)
        for i, (obs, info) in zip(ended, fresh):
            obs_end, reward, term, trunc, info_end = results[i]
            results[i] = (obs, reward, term, trunc,
                          {**info, "final_obs": obs_end, "final_info": info_end})
        return results

    def _batch(self, observations: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in observations[0]:
            values = [o[key] for o in observations]
            out[key] = np.stack(values) if key == "screenshot" else tuple(values)
        return out


async def _as_step(reset: Coroutine[Any, Any, Any]) -> tuple[Any, float, bool, bool, Any]:
    obs, info = await reset
    return obs, 0.0, False, False, info


def element_box(seen: Any, bid: str) -> tuple[float, float, float, float] | None:
    node = seen.node(bid) if seen is not None else None
    box = node.get("bbox") if node else None
    return tuple(box) if box else None  # type: ignore[return-value]


def _seeds(seed: int | Sequence[int] | None, n: int) -> list[int | None]:
    if seed is None:
        return [None] * n
    if isinstance(seed, int):
        return [seed + i for i in range(n)]
    if len(seed) != n:
        raise UsageError(f"{len(seed)} seeds for {n} environments")
    return list(seed)
