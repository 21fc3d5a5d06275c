"""Worlds and the task instances an environment samples, by dataset split.

A *task instance* is a task of a world with its slot values fixed (buy "Dune" in
paperback): the unit an episode is about. Instances come from a world's verified
trajectories (which also give the oracle's actions), else from its explored candidates,
else from exploring the spec on the spot. Worlds are split into train / validation /
test exactly as ``webworld export`` splits them (:mod:`webworld.data.splits`, or the
export's own ``manifest.json``), so a held-out world stays held out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import networkx as nx

from webworld.data.heldout import held_out_worlds
from webworld.data.splits import SPLITS, assign_splits
from webworld.errors import UsageError, WebworldError
from webworld.render.site import Site, load_site
from webworld.spec.graph import StateGraph, explore_states
from webworld.spec.models import Condition, Task, WorldSpec
from webworld.spec.semantics import Machine, State

SOURCES = ("verified", "candidates", "spec")


@dataclass(frozen=True)
class TaskInstance:
    """One task with its slot values fixed; what an episode asks the policy to do."""

    id: str                              # "<world>/<task>/<hash of the slots>"
    world_id: str
    task_id: str
    slots: dict[str, Any]
    intents: tuple[str, ...]             # phrasings; an episode picks one
    start_page: str
    shortest_length: int                 # FSM actions on a shortest path
    shortest_steps: int                  # browser actions on a shortest path
    oracle: tuple[tuple[str, ...], ...] = ()  # verified action strings, shortest first

    def info(self) -> dict[str, Any]:
        return {"world": self.world_id, "task": self.task_id, "instance": self.id,
                "slots": dict(self.slots), "shortest_length": self.shortest_length,
                "shortest_steps": self.shortest_steps}


def instance_id(world_id: str, task_id: str, slots: dict[str, Any]) -> str:
    digest = hashlib.sha1(json.dumps(slots, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{world_id}/{task_id}/{digest}"


@dataclass
class World:
    """A rendered world, its spec's machine and its task instances."""

    site: Site
    instances: list[TaskInstance]
    split: str | None = None
    _graphs: dict[str | None, StateGraph] = field(default_factory=dict, repr=False)
    _distances: dict[str, dict[State, int]] = field(default_factory=dict, repr=False)

    @property
    def id(self) -> str:
        return self.site.spec.id

    @property
    def spec(self) -> WorldSpec:
        return self.site.spec

    @cached_property
    def machine(self) -> Machine:
        return Machine(self.spec)

    def task(self, task_id: str) -> Task:
        return next(t for t in self.spec.tasks if t.id == task_id)

    def goal(self, inst: TaskInstance) -> tuple[str, list[Condition]]:
        """The goal page and every condition of the instance (the task's, its slots', its
        bindings')."""
        task = self.task(inst.task_id)
        fixed = {**inst.slots, **task.bindings}
        conds = list(task.goal.conditions) + [
            Condition(var=k, op="eq", value=_scalar(v)) for k, v in fixed.items()]
        return task.goal.page, conds

    def state_graph(self, start: str | None) -> StateGraph:
        if start not in self._graphs:
            self._graphs[start] = explore_states(self.spec, start=start, machine=self.machine)
        return self._graphs[start]

    def distance(self, inst: TaskInstance, state: State) -> int | None:
        """FSM actions from ``state`` to the instance's goal (None when it cannot get there)."""
        if inst.id not in self._distances:
            graph = self.state_graph(self.task(inst.task_id).start)
            page, conds = self.goal(inst)
            goals = graph.matching(page, conds)
            lengths = nx.multi_source_dijkstra_path_length(graph.graph.reverse(copy=False), goals) \
                if goals else {}
            self._distances[inst.id] = {graph.states[i]: d for i, d in lengths.items()}
        return self._distances[inst.id].get(state)

    def potential(self, inst: TaskInstance, state: State) -> float:
        """Phi(s) = -(FSM actions from ``state`` to the goal), the potential of progress
        rewards (potential-based shaping keeps the best policy unchanged: Ng, Harada and
        Russell 1999); a state the goal cannot be reached from is one step further than the
        furthest one that can, so Phi stays bounded."""
        distance = self.distance(inst, state)
        if distance is None:
            distance = max(self._distances[inst.id].values(), default=0) + 1
        return -float(distance)


def _scalar(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def state_from_truth(machine: Machine, truth: dict[str, Any]) -> State:
    """The :class:`State` of a ground-truth reply ``{"page", "vars"}``."""
    values = []
    for var in machine.variables:
        value = truth["vars"].get(var.name)
        values.append(tuple(value) if isinstance(value, list) else value)
    return State(truth["page"], tuple(values))


# --- loading -----------------------------------------------------------------------------------


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if n == len(lines):
                break  # a last line cut by a killed writer: it is redone on resume
            raise WebworldError(f"malformed JSON at line {n}: {exc.msg}", str(path)) from None
    return out


def instances_from_records(spec: WorldSpec, records: list[dict[str, Any]], *, verified: bool
                           ) -> list[TaskInstance]:
    """Group trajectory records (verified or candidate) into task instances."""
    from webworld.verify.gestures import gestures

    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        key = instance_id(spec.id, rec["task_id"], rec["slots"])
        groups.setdefault(key, []).append(rec)
    out = []
    for key, recs in groups.items():
        if verified:
            steps = [len(r["steps"]) for r in recs]
            oracle = tuple(tuple(s["action"] for s in r["steps"])
                           for r in sorted(recs, key=lambda r: (len(r["steps"]), r["id"])))
        else:
            steps = [sum(len(gestures(spec, s["page"], g)) for s in r["steps"] for g in s["gui"])
                     for r in recs]
            oracle = ()
        first = recs[0]
        task = next((t for t in spec.tasks if t.id == first["task_id"]), None)
        if task is None:
            continue
        out.append(TaskInstance(
            id=key, world_id=spec.id, task_id=first["task_id"], slots=dict(first["slots"]),
            intents=tuple(sorted({r["intent"] for r in recs})),
            start_page=task.start or spec.home,
            shortest_length=min(r.get("shortest_length", r["length"]) for r in recs),
            shortest_steps=min(steps), oracle=oracle))
    return sorted(out, key=lambda i: i.id)


def verified_paths(trajectories: Path, world_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """Each task instance's shortest verified path (its steps, as ``oracle[0]`` plays them)."""
    paths: dict[str, list[dict[str, Any]]] = {}
    for world_id in world_ids:
        path = Path(trajectories) / world_id / "verified.jsonl"
        records = _read_jsonl(path) if path.is_file() else []
        for rec in sorted(records, key=lambda r: (len(r["steps"]), r["id"])):
            paths.setdefault(instance_id(world_id, rec["task_id"], rec["slots"]), rec["steps"])
    return paths


def _instances(site: Site, traj_dir: Path | None, source: str) -> list[TaskInstance]:
    spec = site.spec
    world_dir = traj_dir / spec.id if traj_dir is not None else None
    if source == "verified":
        path = world_dir / "verified.jsonl" if world_dir else None
        if path is None or not path.is_file():
            return []
        return instances_from_records(spec, _read_jsonl(path), verified=True)
    if source == "candidates" and world_dir and (world_dir / "candidates.jsonl").is_file():
        return instances_from_records(spec, _read_jsonl(world_dir / "candidates.jsonl"),
                                      verified=False)
    from webworld.explore.candidates import ExploreConfig, explore_world

    result = explore_world(spec, ExploreConfig(max_shortest=1, max_longer=0))
    return instances_from_records(spec, result.candidates, verified=False)


@dataclass
class WorldSet:
    """The worlds an environment serves, each with its split and task instances."""

    worlds: dict[str, World]

    def instances(self, split: str | None = None) -> list[TaskInstance]:
        return [i for w in self.worlds.values() if split in (None, w.split) for i in w.instances]

    def world(self, world_id: str) -> World:
        try:
            return self.worlds[world_id]
        except KeyError:
            raise UsageError(f"no world {world_id!r}; have {', '.join(self.worlds) or 'none'}") from None

    def instance(self, key: str) -> TaskInstance:
        """An instance by id, by ``<world>/<task>`` or by task id alone when one world has
        that task (its first instance: what `webworld env list` shows)."""
        for world in self.worlds.values():
            for inst in world.instances:
                if key == inst.id or key == f"{inst.world_id}/{inst.task_id}":
                    return inst
        by_task = [w for w in self.worlds.values() if any(i.task_id == key for i in w.instances)]
        if len(by_task) == 1:
            return next(i for i in by_task[0].instances if i.task_id == key)
        if by_task:
            raise UsageError(f"task {key!r} is in several worlds ({', '.join(w.id for w in by_task)}"
                             f"); say which: <world>/{key}")
        tasks = sorted({i.task_id for i in self.instances()})
        raise UsageError(f"no task instance {key!r}; tasks here: {', '.join(tasks) or 'none'}")


def load_worlds(sites: Path | list[Path], trajectories: Path | None = None, *,
                source: str = "verified", split_seed: int = 0,
                fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
                dataset: Path | None = None, worlds: list[str] | None = None) -> WorldSet:
    """Load rendered worlds (``sites/<world>/``) and their task instances.

    ``trajectories`` holds ``<world>/verified.jsonl`` (or ``candidates.jsonl`` with
    ``source="candidates"``; ``source="spec"`` explores the spec). Splits follow the
    export: from ``dataset``'s ``manifest.json`` when given, else by ``split_seed`` and
    ``fractions`` over the worlds that have instances.
    """
    if source not in SOURCES:
        raise UsageError(f"unknown task source {source!r}; choose from {', '.join(SOURCES)}")
    loaded: dict[str, World] = {}
    for site_dir in site_dirs(sites, worlds):
        site = load_site(site_dir)
        instances = _instances(site, Path(trajectories) if trajectories else None, source)
        loaded[site.spec.id] = World(site, instances)
    usable = sorted(w for w, world in loaded.items() if world.instances)
    if not usable:
        where = trajectories or sites
        raise UsageError(f"no task instances ({source}) for any of {len(loaded)} world(s)",
                         str(where))
    held_out = held_out_worlds(loaded[w].site.spec for w in usable)
    splits = _manifest_splits(dataset) if dataset else assign_splits(
        usable, fractions, split_seed, held_out=held_out)[0]
    leaked = held_out & set(splits.get("train", ()))
    if leaked:
        raise UsageError(f"the dataset's train split holds held-out world(s) "
                         f"{', '.join(sorted(leaked))} (webworld/data/heldout.json)", str(dataset))
    for split, names in splits.items():
        for name in names:
            if name in loaded:
                loaded[name].split = split
    return WorldSet(loaded)


def site_dirs(sites: Path | list[Path], only: list[str] | None) -> list[Path]:
    if isinstance(sites, list):
        dirs = [Path(s) for s in sites]
    else:
        root = Path(sites)
        if (root / "manifest.json").is_file():
            dirs = [root]
        elif root.is_dir():
            dirs = sorted(d for d in root.iterdir() if (d / "manifest.json").is_file())
        else:
            raise UsageError("no such folder of sites (sites/<world>/manifest.json)", str(root))
    if only:
        names = {d.name for d in dirs}
        missing = sorted(set(only) - names)
        if missing:
            raise UsageError(f"no site for world(s) {', '.join(missing)}", str(sites))
        dirs = [d for d in dirs if d.name in only]
    if not dirs:
        raise UsageError("no rendered sites here (sites/<world>/manifest.json)", str(sites))
    return dirs


def _manifest_splits(dataset: Path) -> dict[str, list[str]]:
    path = Path(dataset) / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        return {s: list(manifest["splits"][s]["worlds"]) for s in SPLITS}
    except (OSError, ValueError, KeyError, TypeError):
        raise UsageError("not a webworld export (no readable manifest.json with splits)",
                         str(path)) from None
