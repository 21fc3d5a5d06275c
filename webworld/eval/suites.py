"""What ``webworld eval --suite`` names: the held-out worlds, MiniWoB++ (all of it or some
tasks), or a folder of worlds a user built; each planned as seeded episodes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webworld.data.heldout import load_manifest
from webworld.errors import UsageError
from webworld.eval.heldout import SUITES, materialise, suite_dir
from webworld.rl.tasks import WorldSet, load_worlds


@dataclass(frozen=True)
class Planned:
    """One episode to play: ``key`` is unique in a suite and stable across runs."""

    key: str
    suite: str
    task: str           # MiniWoB task, or the world task's instance id
    episode: int
    seed: int
    world: str = ""
    archetype: str = ""
    kind: str = ""      # held-out kind (new-archetype, new-world, new-look)


def episode_seed(seed: int, task: str, index: int) -> int:
    digest = hashlib.sha256(f"{seed}\x1f{task}\x1f{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


@dataclass
class Suite:
    name: str
    worlds: WorldSet | None = None             # world suites
    miniwob: list[str] = field(default_factory=list)  # MiniWoB++ tasks

    def plan(self, episodes: int, seed: int) -> list[Planned]:
        if episodes < 1:
            raise UsageError("--episodes must be at least 1")
        if self.worlds is None:
            return [Planned(f"{self.name}/{t}#{i}", self.name, t, i, episode_seed(seed, t, i))
                    for t in self.miniwob for i in range(episodes)]
        kinds = {w.id: w.kind for w in load_manifest().worlds}
        out = []
        for inst in self.worlds.instances(None):
            spec = self.worlds.world(inst.world_id).site.spec
            for i in range(episodes):
                out.append(Planned(f"{self.name}/{inst.id}#{i}", self.name, inst.id, i,
                                   episode_seed(seed, inst.id, i), inst.world_id,
                                   spec.provenance.archetype, kinds.get(inst.world_id, "")))
        return out

    def make_env(self, *, max_steps: int | None, observation: str, fast: bool,
                 server: Any = None) -> Any:
        """One environment of this suite (one per worker); ``server`` a shared SiteServer."""
        settings: dict[str, Any] = {"max_steps": max_steps, "observation": observation}
        if self.worlds is None:
            from webworld.rl.miniwob import MiniWoBEnv

            return MiniWoBEnv(self.miniwob[0], **settings)
        if fast:
            from webworld.rl.fast.env import FastEnv

            return FastEnv(self.worlds, split=None, **settings)
        from webworld.rl.live import LiveEnv

        return LiveEnv(self.worlds, split=None, server_url=server.url if server else None,
                       token=server.token if server else None, **settings)


def resolve_suite(name: str, *, heldout_dir: Path = Path("heldout"), workers: int = 2) -> Suite:
    """``heldout``, ``heldout-dense``, ``miniwob``, ``miniwob:TASK,...``, ``autowebworld:DIR`` (a folder of
    AutoWebWorld fsm.json files) or a folder with ``sites/`` and ``trajectories/`` (what
    ``webworld build`` writes)."""
    if name == "miniwob" or name.startswith("miniwob:"):
        from webworld.rl.miniwob_tasks import check_task, miniwob_tasks

        listed = [t.strip() for t in name.partition(":")[2].split(",") if t.strip()]
        return Suite(name, miniwob=[check_task(t) for t in listed] or list(miniwob_tasks()))
    if name.startswith("autowebworld:"):
        from webworld.interop.autowebworld.suite import build_suite_worlds

        root = build_suite_worlds(Path(name.partition(":")[2]), workers=workers)
        return Suite(name, load_worlds(root / "sites", root / "trajectories"))
    if name in SUITES:
        root = suite_dir(heldout_dir, name)
        if not (root / "sites").is_dir():  # made once (`webworld eval heldout`)
            materialise(root, workers=workers, version=SUITES[name])
        return Suite(name, load_worlds(root / "sites", root / "trajectories"))
    root = Path(name)
    if not (root / "sites").is_dir():
        raise UsageError("a suite is heldout, heldout-dense, miniwob, miniwob:TASK,..., "
                         "autowebworld:DIR or a "
                         "folder with sites/ and trajectories/ (what `webworld build` writes)",
                         str(root))
    return Suite(root.name or str(root), load_worlds(root / "sites", root / "trajectories"))
