"""Candidate trajectories: every task instance of a world with its paths, as records.

A *task instance* is a task with its slot values fixed (e.g. buy "Dune" in paperback);
every reachable combination of slot values at the goal is one instance. A candidate is
one path for one instance, with the expected true state after each step. The verifier
replays candidates in a browser; only those that verify become data.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from webworld.explore.intents import fill, pick_template
from webworld.explore.paths import enumerate_paths
from webworld.fsio import atomic_write_json, atomic_write_jsonl
from webworld.spec.graph import DEFAULT_STATE_BUDGET, Label, StateGraph, explore_states
from webworld.spec.models import Action, Condition, Task, WorldSpec
from webworld.spec.semantics import Machine, State


class ExploreConfig(BaseModel):
    """Caps on the enumeration. Anything a cap cuts is counted in the stats."""

    model_config = ConfigDict(extra="forbid")

    state_budget: int = Field(DEFAULT_STATE_BUDGET, ge=1)
    max_depth: int | None = Field(None, ge=1, description="BFS depth limit")
    extra_steps: int = Field(1, ge=0, description="longer alternatives: up to this many more steps")
    max_shortest: int = Field(32, ge=1, description="shortest paths kept per task instance")
    max_longer: int = Field(1, ge=0, description="longer alternatives kept per task instance")
    max_instances: int = Field(48, ge=1, description="task instances kept per task")


@dataclass
class TaskStats:
    instances: int = 0
    instances_kept: int = 0
    shortest_length: int | None = None
    candidates: int = 0
    shortest: int = 0
    longer: int = 0
    cut_shortest: int = 0
    cut_longer: int = 0


@dataclass
class ExploreResult:
    world_id: str
    candidates: list[dict[str, Any]]
    states: int
    edges: int
    truncated_by: str | None
    tasks: dict[str, TaskStats] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def cuts(self) -> list[str]:
        """Human-readable list of everything a cap cut (empty when nothing was cut)."""
        out = [f"state graph cut by {self.truncated_by}"] if self.truncated_by else []
        for task, st in self.tasks.items():
            if st.instances_kept < st.instances:
                out.append(f"{task}: kept {st.instances_kept} of {st.instances} instances "
                           "(--max-instances)")
            if st.cut_shortest:
                out.append(f"{task}: shortest paths capped in {st.cut_shortest} instances "
                           "(--max-shortest)")
            if st.cut_longer:
                out.append(f"{task}: longer paths capped in {st.cut_longer} instances "
                           "(--max-longer)")
        return out

    def stats(self) -> dict[str, Any]:
        return {
            "world_id": self.world_id,
            "states": self.states,
            "edges": self.edges,
            "truncated_by": self.truncated_by,
            "candidates": len(self.candidates),
            "seconds": round(self.seconds, 3),
            "tasks": {k: vars(v) for k, v in self.tasks.items()},
            "cuts": self.cuts,
        }


def explore_world(spec: WorldSpec, config: ExploreConfig | None = None) -> ExploreResult:
    """Enumerate candidate trajectories for every task of ``spec``."""
    config = config or ExploreConfig()
    started = time.perf_counter()
    graphs: dict[str | None, StateGraph] = {}
    result = ExploreResult(spec.id, [], 0, 0, None)
    for task in spec.tasks:
        if task.start not in graphs:
            graphs[task.start] = explore_states(spec, start=task.start,
                                                budget=config.state_budget,
                                                max_depth=config.max_depth)
        graph = graphs[task.start]
        result.tasks[task.id] = _explore_task(spec, graph, task, config, result.candidates)
    main = graphs.get(None) or next(iter(graphs.values()), None)
    if main is None:
        main = explore_states(spec, budget=config.state_budget, max_depth=config.max_depth)
    result.states, result.edges = len(main.states), main.edges
    result.truncated_by = next((g.truncated_by for g in graphs.values() if g.truncated), None)
    result.seconds = time.perf_counter() - started
    return result


def task_instances(graph: StateGraph, task: Task) -> dict[tuple, set[int]]:
    """Goal states grouped by the values of the task's slots, in a stable order."""
    binds = [Condition(var=k, op="eq", value=v) for k, v in task.bindings.items()]
    goal = graph.matching(task.goal.page, task.goal.conditions + binds)
    groups: dict[tuple, set[int]] = defaultdict(set)
    for sid in goal:
        key = tuple(_jsonable(graph.machine.value(graph.states[sid], s)) for s in task.slots)
        groups[key].add(sid)
    return dict(sorted(groups.items(), key=lambda kv: json.dumps(kv[0], default=str)))


def spread(items: list, k: int) -> list:
    """``k`` items evenly spread over ``items`` (all of them when there are few)."""
    if len(items) <= k:
        return list(items)
    return [items[(i * len(items)) // k] for i in range(k)]


def _explore_task(spec: WorldSpec, graph: StateGraph, task: Task, config: ExploreConfig,
                  out: list[dict[str, Any]]) -> TaskStats:
    stats = TaskStats()
    instances = task_instances(graph, task)
    stats.instances = len(instances)
    chosen = spread(list(instances.items()), config.max_instances)
    stats.instances_kept = len(chosen)
    for key, targets in chosen:
        found = enumerate_paths(graph, targets, extra_steps=config.extra_steps,
                                max_shortest=config.max_shortest, max_longer=config.max_longer)
        if found is None:
            continue
        slots = dict(zip(task.slots, key))
        stats.shortest_length = min(stats.shortest_length or found.shortest_length,
                                    found.shortest_length)
        stats.shortest += found.shortest_count
        stats.longer += len(found.paths) - found.shortest_count
        stats.cut_shortest += found.cut_shortest
        stats.cut_longer += found.cut_longer
        for states, labels in found.paths:
            out.append(candidate(spec, graph, task, slots, states, labels,
                                 found.shortest_length))
            stats.candidates += 1
    return stats


def candidate(spec: WorldSpec, graph: StateGraph, task: Task, slots: dict[str, Any],
              states: list[int], labels: list[Label], shortest: int) -> dict[str, Any]:
    """One candidate trajectory record (JSON-ready)."""
    machine = graph.machine
    signature = json.dumps([[a, list(p)] for a, p in labels], separators=(",", ":"))
    digest = hashlib.sha1(f"{spec.id}|{task.id}|{signature}".encode()).hexdigest()[:12]
    cid = f"{task.id}-{digest}"
    values = {**{k: v for k, v in slots.items()}, **task.bindings}
    return {
        "id": cid,
        "world_id": spec.id,
        "task_id": task.id,
        "slots": slots,
        "intent": fill(pick_template(task.intents, cid), values),
        "start": machine.describe(graph.states[states[0]]),
        "length": len(labels),
        "shortest_length": shortest,
        "steps": [
            step_record(machine, i, label, _changes(machine, graph.states[a], graph.states[b]))
            for i, (label, a, b) in enumerate(zip(labels, states, states[1:]))
        ],
    }


def _changes(machine: Machine, before: State, after: State) -> dict[str, Any]:
    """The expected state after a step, as the page plus the variables that changed."""
    changed = {
        var.name: _jsonable(new)
        for var, old, new in zip(machine.variables, before.values, after.values)
        if old != new or type(old) is not type(new)
    }
    return {"page": after.page, "changes": changed}


def expected_states(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The full expected state after every step of a candidate record."""
    current = {"page": record["start"]["page"], "vars": dict(record["start"]["vars"])}
    out = []
    for step in record["steps"]:
        current = {"page": step["expected"]["page"],
                   "vars": {**current["vars"], **step["expected"]["changes"]}}
        out.append(current)
    return out


def step_record(machine: Machine, index: int, label: Label, expected: dict[str, Any]
                ) -> dict[str, Any]:
    action_id, params = label
    page, action = machine.actions[action_id]
    bound = dict(params)
    return {
        "index": index,
        "page": page,
        "action": action_id,
        "label": action.label,
        "op": action.trigger.op,
        "element": action.trigger.element,
        "params": bound,
        "gui": gui_steps(action, bound),
        "expected": expected,
    }


def gui_steps(action: Action, params: dict[str, Any]) -> list[dict[str, Any]]:
    """The action's gestures with parameter values filled in."""
    out = []
    for step in action.gui:
        item: dict[str, Any] = {"op": step.op, "element": step.element}
        if step.value is not None:
            item["value"] = fill(step.value, params)
        if step.key:
            item["key"] = step.key
        if step.target:
            item["target"] = step.target
        out.append(item)
    return out


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def write_candidates(result: ExploreResult, out_dir: str | Path) -> Path:
    """``<out_dir>/candidates.jsonl`` and ``explore_stats.json``, each written atomically."""
    out_dir = Path(out_dir)
    path = atomic_write_jsonl(out_dir / "candidates.jsonl", result.candidates)
    atomic_write_json(out_dir / "explore_stats.json", result.stats())
    return path
