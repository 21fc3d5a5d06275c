"""The steps of a verified path that its task did without.

Explore keeps, for each task instance, its shortest paths and longer ones (up to
``extra_steps`` more FSM actions: a "Was this page helpful?" radio answered on the way, a tab
opened, another option picked before the task's). All of them verify and reach the goal, so
they are good data for evaluation and RL; but a policy cloned from all of them is taught, at
the same page of the same task, the step the task needs and, as often, the detour. In
learning.py's 30 training worlds 198 of 396 paths are longer, 96 of them by a page-helpful
radio; SFT on them played held-out episodes that clicked radio 'Yes' ten times and more.

A longer path's detours are the FSM actions its instance's shortest path does not take (the
same action with the same values counted as often as it comes): what is left over after
matching them off, in path order. A longer path whose instance kept no shortest path has
every step marked: nothing tells which of its actions the task needed.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable

from webworld.data.records import VerifiedTrajectory

FsmAction = tuple[str, tuple[str | None, ...]]  # (spec action id, each browser step's value)


def fsm_actions(traj: VerifiedTrajectory) -> list[tuple[FsmAction, list[int]]]:
    """The path's FSM actions in order, each with the positions of its browser steps."""
    grouped: dict[int, list[int]] = defaultdict(list)
    for n, step in enumerate(traj["steps"]):
        grouped[step["fsm_index"]].append(n)
    return [((traj["steps"][ns[0]]["fsm_action"], tuple(traj["steps"][n]["value"] for n in ns)),
             ns) for _, ns in sorted(grouped.items())]


def instance_key(traj: VerifiedTrajectory) -> tuple[str, str]:
    """A task instance: the task and its slot values."""
    return traj["task_id"], json.dumps(traj["slots"], sort_keys=True, ensure_ascii=False)


def detour_steps(trajectories: Iterable[VerifiedTrajectory]) -> dict[str, frozenset[int]]:
    """For each longer path among ``trajectories`` (one world's), the positions in its
    ``steps`` of the browser steps its detours took; shortest paths are left out."""
    instances: dict[tuple[str, str], list[VerifiedTrajectory]] = defaultdict(list)
    for traj in trajectories:
        instances[instance_key(traj)].append(traj)
    detours: dict[str, frozenset[int]] = {}
    for paths in instances.values():
        shortest = next((t for t in paths if t["length"] <= t["shortest_length"]), None)
        for traj in paths:
            if traj["length"] <= traj["shortest_length"]:
                continue
            if shortest is None:
                detours[traj["id"]] = frozenset(range(len(traj["steps"])))
                continue
            needed = Counter(action for action, _ in fsm_actions(shortest))
            marked: set[int] = set()
            for action, steps in fsm_actions(traj):
                if needed[action] > 0:
                    needed[action] -= 1
                else:
                    marked.update(steps)
            detours[traj["id"]] = frozenset(marked)
    return detours
