"""RL rollouts on a Ray cluster: the slots of one vector env spread over worker actors.

:class:`RayVectorEnv` has the vector env interface the trainer drives (``num_envs``,
``reset_slots``, ``step_slots``, ``close``): each worker actor holds a
:class:`~webworld.rl.live.LiveVectorEnv` (or the fast env) over its copy of the sites, with
its own server and Chromium, and steps its slots concurrently with the other workers. Only
task ids, seeds, replies and observations cross the network; the policy stays with the
learner. A worker that dies is replaced: the new one replays each of its slots' episodes
(the same task, seed and actions; the environments are deterministic) up to where they
were, and the call is made again, so the trainer sees nothing but a slower step.
"""

from __future__ import annotations

from typing import Any

from webworld.errors import WebworldError
from webworld.rl.env import element_box
from webworld.rl.tasks import World, WorldSet
from webworld.scale.cluster import (
    close_workers,
    cluster_cpus,
    connect,
    died,
    pack_dir,
    unpack_dirs,
)


class EnvWorker:
    """One Ray actor: a vector env of ``num_envs`` slots over its own copy of the worlds."""

    def __init__(self, bundles: list[bytes], instances: dict[str, tuple[list, str | None]],
                 num_envs: int, env: str, split: str | None, observation: str,
                 max_steps: int | None, reward: str = "success") -> None:
        from webworld.render.site import load_site
        from webworld.rl.vector import local_vector_env

        self.tmp, dirs = unpack_dirs(bundles, "webworld-env-")
        worlds = {}
        for site in map(load_site, dirs):
            found, world_split = instances[site.spec.id]
            worlds[site.spec.id] = World(site, found, world_split)
        self.vec = local_vector_env(WorldSet(worlds), env, split, num_envs,
                                    observation=observation, max_steps=max_steps, reward=reward)

    def ready(self) -> bool:
        return True

    def reset_slots(self, tasks: dict[int, str], seeds: dict[int, int]) -> dict[int, tuple]:
        return self.vec.reset_slots(tasks, seeds)

    def step_slots(self, actions: dict[int, str]) -> dict[int, tuple]:
        return self.vec.step_slots(actions)

    def element_box(self, slot: int, bid: str) -> tuple[float, float, float, float] | None:
        return element_box(self.vec.episodes[slot].seen, bid)

    def pid(self) -> int:
        import os

        return os.getpid()

    def close(self) -> None:
        self.vec.close()
        self.tmp.cleanup()


MAX_RESPAWNS = 8  # worker deaths tolerated in the life of one vector env


class RayVectorEnv:
    """``num_envs`` slots over ``workers`` actors (default: one per CPU of the cluster)."""

    def __init__(self, num_envs: int, worlds: WorldSet, *, address: str, env: str = "live",
                 split: str | None = "train", observation: str = "compact",
                 max_steps: int | None = None, workers: int | None = None,
                 reward: str = "success") -> None:
        self.ray = connect(address)
        self.num_envs = num_envs
        count = max(1, min(workers or cluster_cpus(self.ray), num_envs))
        self.sizes = [num_envs // count + (k < num_envs % count) for k in range(count)]
        # global slot -> (worker index, its local slot)
        self.where = [(k, j) for k, size in enumerate(self.sizes) for j in range(size)]
        bundles = self.ray.put([pack_dir(w.site.root) for w in worlds.worlds.values()])
        instances = {w.id: (w.instances, w.split) for w in worlds.worlds.values()}
        actor = self.ray.remote(num_cpus=1, max_restarts=0)(EnvWorker)
        self._spawn = lambda size: actor.remote(bundles, instances, size, env, split,
                                                observation, max_steps, reward)
        self.workers = [self._spawn(size) for size in self.sizes]
        # what each slot has done since its reset: (task id, seed, actions), to replay it
        self.played: dict[int, tuple[str, int, list[str]]] = {}
        self.respawns = 0
        self._call("ready", {k: () for k in range(count)})

    def _split(self, by_slot: dict[int, Any]) -> dict[int, dict[int, Any]]:
        parts: dict[int, dict[int, Any]] = {}
        for slot, value in by_slot.items():
            k, j = self.where[slot]
            parts.setdefault(k, {})[j] = value
        return parts

    def _call(self, method: str, args: dict[int, tuple]) -> dict[int, Any]:
        """``method(*args[k])`` on each worker k at once; a dead worker is replaced (its
        slots replayed) and asked again."""
        refs = {k: getattr(self.workers[k], method).remote(*a) for k, a in args.items()}
        answers = {}
        for k, ref in refs.items():
            while True:
                try:
                    answers[k] = self.ray.get(ref)
                    break
                except died(self.ray) as exc:
                    self._replace(k, exc)
                    ref = getattr(self.workers[k], method).remote(*args[k])
                except self.ray.exceptions.RayTaskError as exc:
                    cause = exc.cause if exc.cause is not None else exc
                    if isinstance(cause, WebworldError):
                        raise cause from None
                    raise WebworldError("a Ray env worker failed: "
                                        f"{str(cause).splitlines()[0]}") from None
        return answers

    def _replace(self, k: int, exc: BaseException) -> None:
        self.respawns += 1
        if self.respawns > MAX_RESPAWNS:
            raise WebworldError(f"{self.respawns} Ray env workers died; the last: "
                                f"{str(exc).splitlines()[0]}") from None
        self.ray.kill(self.workers[k])
        self.workers[k] = worker = self._spawn(self.sizes[k])
        mine = {j: self.played[s] for s, (w, j) in enumerate(self.where)
                if w == k and s in self.played}
        if not mine:
            return
        self.ray.get(worker.reset_slots.remote({j: p[0] for j, p in mine.items()},
                                               {j: p[1] for j, p in mine.items()}))
        for n in range(max(len(p[2]) for p in mine.values())):
            self.ray.get(worker.step_slots.remote({j: p[2][n] for j, p in mine.items()
                                                   if n < len(p[2])}))

    def _merge(self, answers: dict[int, dict[int, Any]]) -> dict[int, Any]:
        back = {pos: slot for slot, pos in enumerate(self.where)}
        return {back[(k, j)]: value for k, part in answers.items() for j, value in part.items()}

    def reset_slots(self, tasks: dict[int, Any], seeds: dict[int, int]) -> dict[int, tuple]:
        ids = {i: getattr(t, "id", t) for i, t in tasks.items()}
        for i, task in ids.items():
            self.played[i] = (task, seeds[i], [])
        split_tasks, split_seeds = self._split(ids), self._split(seeds)
        return self._merge(self._call("reset_slots", {k: (split_tasks[k], split_seeds[k])
                                                      for k in split_tasks}))

    def step_slots(self, actions: dict[int, str]) -> dict[int, tuple]:
        stepped = self._merge(self._call("step_slots", {k: (part,) for k, part
                                                        in self._split(actions).items()}))
        for i, action in actions.items():  # after the call: a replay redoes the steps before
            self.played[i][2].append(action)
        return stepped

    def element_box(self, slot: int, bid: str) -> tuple[float, float, float, float] | None:
        k, j = self.where[slot]
        return self._call("element_box", {k: (j, bid)})[k]

    def worker_pids(self) -> list[int]:
        return list(self._call("pid", {k: () for k in range(len(self.workers))}).values())

    def close(self) -> None:
        close_workers(self.ray, self.workers)
