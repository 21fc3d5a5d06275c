"""Benchmark of scale-out: verification and RL rollouts in one process vs on a Ray cluster.

Run from the project root (needs `scripts/setup.sh dev`, which installs Ray)::

    .venv/bin/python bench/bench_scale.py            # 2 worlds, ~40 candidates, ~32 episodes
    .venv/bin/python bench/bench_scale.py --quick    # a smoke run
    .venv/bin/python bench/bench_scale.py --address HEAD:6379   # a real cluster (see README)

Without ``--address`` the script re-runs itself in a loopback-only network namespace
(``unshare -n``: Ray binds the host's interface otherwise) and starts a local cluster there
with ``ray start``: first a head node, then a second node joins (each ``--num-cpus 1``, so
one worker actor per node). The same run measures, on the same candidates and episodes:

* ``verify``: verified trajectories per second: ``verify_worlds`` in this process with C
  browser contexts, then ``verify_worlds_on_ray`` on the cluster with 1 node and with 2
  nodes (one actor per node, C contexts each). Each run writes to fresh folders; every
  run must verify the same ids.
* ``rollout``: RL rollout episodes per second: every task instance's verified path played
  on a live vector env of S slots (local ``LiveVectorEnv`` vs ``RayVectorEnv`` with its
  slots over the nodes' actors), as the trainer drives it (``reset_slots`` / ``step_slots``).

Building the worlds and starting the nodes are outside every timing. A verify run's wall
time includes starting its server(s) and Chromium(s) (actors included); a rollout run's
leaves out making the vector env (its actors, servers and Chromiums), shown as start-up.
On a 2-core machine a second node adds no cores, so the point is that Ray's overhead is
small and the numbers honest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchkit import load_note, make_console  # noqa: E402
from rich.table import Table  # noqa: E402

from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates  # noqa: E402
from webworld.propose.procedural import generate  # noqa: E402
from webworld.render.site import render_site  # noqa: E402
from webworld.rl.tasks import WorldSet, load_worlds  # noqa: E402
from webworld.train.rollout import make_vector_env  # noqa: E402
from webworld.verify.runner import verify_worlds  # noqa: E402

THEMES = ("online bookstore", "hotel booking")
IN_NETNS = "WEBWORLD_BENCH_NETNS"


@dataclass
class Row:
    what: str
    where: str
    count: int
    seconds: float
    startup: float | None  # None: inside the wall time

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0


def build(root: Path, caps: dict[str, int]) -> list[Path]:
    sites = []
    for theme in THEMES:
        spec = generate(theme, "medium", 0).spec
        sites.append(render_site(spec, root / "sites" / spec.id))
        write_candidates(explore_world(spec, ExploreConfig(**caps)), root / "candidates" / spec.id)
    return sites


def fresh_trajectories(root: Path, name: str, sites: list[Path]) -> Path:
    out = root / "runs" / name
    for site in sites:
        (out / site.name).mkdir(parents=True)
        shutil.copy(root / "candidates" / site.name / "candidates.jsonl", out / site.name)
    return out


def verified_ids(traj: Path) -> set[str]:
    import json

    return {json.loads(line)["id"] for f in traj.glob("*/verified.jsonl")
            for line in f.read_text().splitlines()}


def bench_verify(root: Path, sites: list[Path], name: str, contexts: int,
                 ray: str | None, actors: int | None) -> tuple[Row, set[str]]:
    traj = fresh_trajectories(root, name, sites)
    started = time.perf_counter()
    if ray is None:
        stats = verify_worlds(sites, traj, workers=contexts)
    else:
        from webworld.scale.verify import verify_worlds_on_ray

        stats = verify_worlds_on_ray(sites, traj, address=ray, contexts=contexts, actors=actors)
    seconds = time.perf_counter() - started  # with the server's / the actors' start-up
    return Row("verify (trajectories/s)", name, sum(s.verified for s in stats), seconds,
               None), verified_ids(traj)


def play_paths(vec: Any, episodes: list[Any]) -> int:
    """Every episode plays its instance's verified path; the steps taken."""
    steps = 0
    for start in range(0, len(episodes), vec.num_envs):
        batch = dict(enumerate(episodes[start:start + vec.num_envs]))
        vec.reset_slots(batch, {i: start + i for i in batch})
        for k in range(max(len(inst.oracle[0]) for inst in batch.values())):
            acts = {i: inst.oracle[0][k] for i, inst in batch.items() if k < len(inst.oracle[0])}
            steps += len(vec.step_slots(acts))
    return steps


def bench_rollout(worlds: WorldSet, name: str, slots: int, episodes: int, ray: str | None,
                  actors: int | None) -> Row:
    instances = [i for i in worlds.instances() if i.oracle]
    plan = [instances[k % len(instances)] for k in range(episodes)]
    t0 = time.perf_counter()
    vec = make_vector_env(worlds, "live", None, slots, "compact", None, ray, actors)
    startup = time.perf_counter() - t0
    try:
        started = time.perf_counter()
        play_paths(vec, plan)
        seconds = time.perf_counter() - started
    finally:
        vec.close()
    return Row("rollout (episodes/s)", name, len(plan), seconds, startup)


class LocalCluster:
    """`ray start` nodes on this machine (inside the namespace), stopped on exit."""

    def __init__(self) -> None:
        self.ray = str(Path(sys.executable).with_name("ray"))
        self.tmp = tempfile.mkdtemp(prefix="ray-ww-")  # short: socket paths <= 107 bytes
        self.address = f"127.0.0.1:{6390 + os.getpid() % 1000}"
        self.common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1",
                       "--disable-usage-stats"]
        os.environ.update(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")

    def _start(self, *args: str) -> None:
        done = subprocess.run([self.ray, "start", *args, *self.common], capture_output=True,
                              text=True)
        if done.returncode:
            raise SystemExit(f"ray start failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")

    def head(self) -> str:
        self._start("--head", "--port", self.address.split(":")[1], "--temp-dir", self.tmp,
                    "--include-dashboard", "false")
        return self.address

    def add_node(self) -> None:
        self._start("--address", self.address)
        time.sleep(2)  # let the head see the new node before the next placement

    def stop(self) -> None:
        subprocess.run([self.ray, "stop", "--force"], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


def reconnect() -> None:
    """A new node joined: the driver connects afresh so placement sees it."""
    import ray

    if ray.is_initialized():
        ray.shutdown()


def in_namespace(argv: list[str]) -> int:
    """Re-run this script in a loopback-only network namespace."""
    script = 'ip link set lo up && exec "$@"'
    env = {**os.environ, IN_NETNS: "1"}
    try:
        return subprocess.run(["unshare", "-n", "sh", "-c", script, "sh", sys.executable,
                               __file__, *argv], env=env).returncode
    except FileNotFoundError:
        print("bench_scale needs `unshare` (util-linux) for a loopback-only namespace, or "
              "--address of a running cluster", file=sys.stderr)
        return 2


def table(rows: list[Row]) -> Table:
    out = Table("work", "where", "count", "wall s", "rate", "vs 1 process", "start-up s",
                title="webworld scale-out")
    base = {r.what: r.rate for r in rows if r.where == "1 process"}
    for r in rows:
        ratio = r.rate / base[r.what] if base.get(r.what) else 0.0
        out.add_row(r.what, r.where, str(r.count), f"{r.seconds:.1f}", f"{r.rate:.2f}",
                    f"{ratio:.2f}x", "in wall" if r.startup is None else f"{r.startup:.1f}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--contexts", type=int, default=2, help="browser contexts per process")
    parser.add_argument("--address", help="a running Ray cluster (default: start one here)")
    args = parser.parse_args(argv)
    if args.address is None and not os.environ.get(IN_NETNS):
        return in_namespace(sys.argv[1:] if argv is None else argv)
    console = make_console()
    caps = {"max_shortest": 1, "max_longer": 0, "max_instances": 2 if args.quick else 5}
    episodes = 8 if args.quick else 32
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        root = Path(tmp)
        console.print("building 2 worlds ...")
        sites = build(root, caps)
        warm = fresh_trajectories(root, "warm-up", sites)
        verify_worlds(sites, warm, workers=args.contexts)  # warm-up; its records feed rollouts
        worlds = load_worlds(root / "sites", warm)
        row, ids = bench_verify(root, sites, "1 process", args.contexts, None, None)
        rows.append(row)
        rows.append(bench_rollout(worlds, "1 process", 2 * args.contexts, episodes, None, None))
        cluster = None if args.address else LocalCluster()
        try:
            layouts = [(args.address, "cluster", None)] if args.address else []
            if cluster is not None:
                layouts = [(cluster.head(), "Ray, 1 node", 1), ("add", "Ray, 2 nodes", 2)]
            for address, name, actors in layouts:
                if address == "add":
                    cluster.add_node()
                    reconnect()
                    address = cluster.address
                row, got = bench_verify(root, sites, name, args.contexts, address, actors)
                if got != ids:
                    raise SystemExit(f"{name}: verified {len(got)} ids, 1 process {len(ids)}: "
                                     "the runs disagree")
                rows.append(row)
                rows.append(bench_rollout(worlds, name, 2 * args.contexts, episodes, address,
                                          actors))
        finally:
            reconnect()
            if cluster is not None:
                cluster.stop()
    rows.sort(key=lambda r: r.what, reverse=True)
    console.print(table(rows))
    console.print(f"{len(ids)} verified ids, equal in every run; {args.contexts} browser "
                  f"contexts per process, {2 * args.contexts} env slots; "
                  f"{os.cpu_count()} CPUs; {load_note()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
