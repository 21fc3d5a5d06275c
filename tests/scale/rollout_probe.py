"""Play every task instance's verified path on a vector env and keep what the policy would
read: run locally and on a Ray cluster, the two must agree exactly, even when a Ray worker
is killed (SIGKILL) in the middle of an episode.

    python -m tests.scale.rollout_probe WORLDS_DIR OUT.json   # on the cluster at RAY_ADDRESS
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from webworld.rl.tasks import load_worlds
from webworld.train.rollout import make_vector_env


def play(vec: Any, instances: list[Any], kill_at: int | None = None) -> list[list[Any]]:
    """Each slot plays one instance's verified path; every step's observation and outcome.
    ``kill_at`` n: kill the first Ray worker's process after the n-th step call."""
    seen: list[list[Any]] = []
    calls = 0
    for start in range(0, len(instances), vec.num_envs):
        batch = dict(enumerate(instances[start:start + vec.num_envs]))
        reset = vec.reset_slots(batch, {i: 7 + i for i in batch})
        lines = {i: [[obs, info]] for i, (obs, info) in reset.items()}
        for k in range(max(len(inst.oracle[0]) for inst in batch.values())):
            acts = {i: inst.oracle[0][k] for i, inst in batch.items() if k < len(inst.oracle[0])}
            for i, step in vec.step_slots(acts).items():
                lines[i].append(list(step))
            calls += 1
            if calls == kill_at:
                os.kill(vec.worker_pids()[0], signal.SIGKILL)
        seen += [lines[i] for i in sorted(lines)]
    return json.loads(json.dumps(seen, default=str))


def probe(worlds_dir: Path, ray: str | None, kill_at: int | None = None) -> list[list[Any]]:
    worlds = load_worlds(worlds_dir / "sites", worlds_dir / "trajectories")
    instances = [i for i in worlds.instances() if i.oracle]
    vec = make_vector_env(worlds, "live", None, 2, "compact", None, ray, 2 if ray else None)
    try:
        seen = play(vec, instances, kill_at)
        if kill_at is not None:
            assert vec.respawns == 1, f"{vec.respawns} workers replaced, expected 1"
        return seen
    finally:
        vec.close()


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(json.dumps(probe(Path(sys.argv[1]), "auto", kill_at=2)))
