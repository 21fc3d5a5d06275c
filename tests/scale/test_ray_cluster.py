"""A real two-node Ray cluster with token authentication in a loopback-only namespace (started
once, every check in it): a client without the token is refused; `webworld verify --ray` writes
the records of a local run, and a worker killed mid-run loses and repeats nothing; RL rollouts
on Ray read exactly what a local env shows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import World
from tests.rl.conftest import flight  # noqa: F401 (a pytest fixture)
from tests.scale.rollout_probe import probe
from webworld.eval.policies import make_eval_policy
from webworld.eval.runner import EvalConfig, EvalRun
from webworld.eval.suites import resolve_suite
from webworld.verify.runner import verify_worlds

CLUSTER = Path(__file__).with_name("cluster.sh")
ROOT = Path(__file__).resolve().parents[2]


def _netns_ok() -> bool:
    try:
        return subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                              capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


pytestmark = pytest.mark.skipif(not _netns_ok(), reason="needs `unshare -n` and `ip` (a "
                                "network namespace) to keep Ray on loopback")

# a client without the cluster's token must be refused; meanwhile webworld's own runs (which have
# it) verify, killing one worker as soon as the first record is on disk, and roll out and evaluate
KILL_ONE = r"""
set -euo pipefail
(env -u RAY_AUTH_TOKEN RAY_AUTH_MODE=disabled timeout 120 "$PYTHON" -c "
import ray
ray.init(address='$RAY_ADDRESS', log_to_driver=False)
print('got in:', ray.get(ray.remote(lambda: 1).remote()))
" >"$REFUSED" 2>&1) & refused=$!  # its refusal takes Ray's retries: wait for it at the end
"$@" & run=$!
for _ in $(seq 600); do
    [ -s "$VERIFIED" ] && break
    kill -0 $run 2>/dev/null || break
    sleep 0.1
done
victim=$(pgrep -f '^ray::VerifyWorker' | head -1 || true)
if [ -n "$victim" ]; then kill -9 "$victim" && echo "$victim" > "$KILLED"; fi
wait $run
cd "$ROOT" && "$PYTHON" -m tests.scale.rollout_probe "$FLIGHT" "$ROLLOUT"
"$PYTHON" -m webworld eval --policy oracle --suite "$FLIGHT" -n 2 --traces 0 --out "$EVAL" \
    --ray auto --workers 2
if wait $refused; then echo "a client without the token got in" >&2; exit 7; fi
"""


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def without_timing(rows: list[dict]) -> dict[str, dict]:
    return {r["id"]: {k: v for k, v in r.items() if k != "seconds"} for r in rows}


@pytest.mark.slow  # minutes of Ray on 2 cores; test_ray_local.py starts a cluster by default
@pytest.mark.timeout(900)  # two nodes, three runs: minutes on a loaded 2-core machine
def test_two_node_cluster_matches_local_runs_and_survives_a_killed_worker(
        tmp_path: Path, flight) -> None:  # noqa: F811
    world = World(tmp_path / "local", "online bookstore", max_instances=2)
    assert len(world.explored.candidates) >= 6  # enough chunks for a kill to land mid-run
    ray_root = tmp_path / "ray"
    shutil.copytree(tmp_path / "local", ray_root)
    verify_worlds([world.site_dir], world.traj_root, workers=2)

    ray_dir = ray_root / "trajectories" / world.spec.id
    killed, rollout = tmp_path / "killed", tmp_path / "rollout.json"
    command = [sys.executable, "-m", "webworld", "verify", world.spec.id,
               "--sites", str(ray_root / "sites"), "--trajectories", str(ray_root / "trajectories"),
               "--ray", "auto", "--ray-workers", "2", "-w", "1"]
    env = {"PATH": "/usr/sbin:/usr/bin:/bin", "HOME": str(tmp_path), "VERIFIED":
           str(ray_dir / "verified.jsonl"), "KILLED": str(killed), "ROOT": str(ROOT),
           "PYTHON": sys.executable, "FLIGHT": str(flight.root), "ROLLOUT": str(rollout),
           "EVAL": str(tmp_path / "eval-ray.jsonl"), "REFUSED": str(tmp_path / "refused.log")}
    done = subprocess.run(["unshare", "-n", "bash", str(CLUSTER), sys.executable, "bash", "-c",
                           KILL_ONE, "kill-one", *command],
                          capture_output=True, text=True, timeout=840, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    refused = (tmp_path / "refused.log").read_text()
    assert "got in" not in refused and "auth" in refused.lower(), refused[-2000:]
    assert killed.is_file(), "no worker was running to be killed"

    local = records(world.world_dir / "verified.jsonl")
    remote = records(ray_dir / "verified.jsonl")
    assert len({r["id"] for r in remote}) == len(remote)  # nothing twice
    assert without_timing(remote) == without_timing(local)  # nothing lost, the same rows
    assert not (ray_dir / "failures.jsonl").read_text()
    assert json.loads(rollout.read_text()) == probe(flight.root, None)
    local_eval = tmp_path / "eval.jsonl"
    suite = resolve_suite(str(flight.root))
    EvalRun(suite, make_eval_policy("oracle", suite.worlds), local_eval,
            EvalConfig(episodes=2, traces=0)).run()
    on_ray = records(tmp_path / "eval-ray.jsonl")
    assert all(r["success"] for r in on_ray)
    assert {r["key"]: r["actions"] for r in on_ray} == \
        {r["key"]: r["actions"] for r in records(local_eval)}
    for row in remote:
        for step in row["steps"]:
            shot = step["observation"]["screenshot"]
            assert same_picture(ray_dir / shot, world.world_dir / shot), shot


def same_picture(a: Path, b: Path) -> bool:
    """Equal up to a few pixels: a CSS transition can be caught a frame apart on any two
    runs (a checkbox's tick), local or not."""
    from PIL import Image, ImageChops

    one, two = Image.open(a).convert("RGB"), Image.open(b).convert("RGB")
    if one.size != two.size:
        return False
    changed = np.asarray(ImageChops.difference(one, two)).any(axis=2).sum()
    return changed <= 0.001 * one.size[0] * one.size[1]
