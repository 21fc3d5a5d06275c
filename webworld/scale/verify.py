"""`webworld verify --ray`: candidates verified by worker actors, recorded by the driver.

The driver cuts the pending candidates into small chunks and hands one at a time to each
idle worker. A worker (:class:`VerifyWorker`) serves its copy of the sites on its own
loopback, replays the chunk in its own Chromium (``contexts`` pages at once) with the same
:func:`webworld.verify.replay.verify_candidate` as the single-process path, and returns the
records with their screenshots. The driver writes them through the same
:class:`~webworld.verify.runner.VerifySink`, so the files are those of a local run. A chunk
whose worker dies goes back to the queue and a new worker takes the dead one's place; the
sink ignores an id it already has, so nothing appears twice.
"""

from __future__ import annotations

import asyncio
from collections import deque
from pathlib import Path
from typing import Any

from webworld.errors import WebworldError
from webworld.scale.cluster import (
    close_workers,
    cluster_cpus,
    connect,
    died,
    pack_dir,
    unpack_dirs,
)
from webworld.verify.replay import Endpoint, ReplayConfig
from webworld.verify.runner import Progress, VerifySink, WorldJob, WorldStats, load_candidates

CHUNK = 2  # candidates per worker call: small, so work balances and a lost call costs little
MAX_LOST_CHUNKS = 8  # worker deaths tolerated in one run before giving up


class VerifyWorker:
    """One Ray actor: the sites on its own loopback server, one Chromium, ``contexts`` tabs."""

    def __init__(self, bundles: list[bytes], contexts: int, config: ReplayConfig) -> None:
        from webworld.render.site import load_site
        from webworld.rl.runtime import Runtime
        from webworld.serve.multi import WORLD_PREFIX, create_multi_app
        from webworld.serve.runner import LiveServer

        self.tmp, dirs = unpack_dirs(bundles, "webworld-verify-")
        self.sites = {s.spec.id: s for s in map(load_site, dirs)}
        app = create_multi_app([s.root for s in self.sites.values()])
        self.server = LiveServer(app).start()
        self.endpoints = {w: Endpoint(self.server.url + WORLD_PREFIX.format(world=w),
                                      app.state.truth_token) for w in self.sites}
        self.config, self.contexts = config, contexts
        self.runtime = Runtime()
        self.tabs = self.runtime.run(self._open_tabs())

    async def _open_tabs(self) -> list[Any]:
        from webworld.browser.launch import new_context
        from webworld.browser.tab import BrowserTab
        from webworld.verify.runner import screenshot_cache

        shots = screenshot_cache(self.config)
        tabs = []
        for _ in range(self.contexts):
            tabs.append(await BrowserTab.open(await new_context(self.runtime.browser),
                                              self.config, shots=shots))
        return tabs

    def close(self) -> None:
        self.runtime.close()
        self.server.stop()
        self.tmp.cleanup()

    def verify(self, world_id: str, candidates: list[dict[str, Any]]) -> list[tuple]:
        """Each candidate's (record, failure, {screenshot path: bytes})."""
        return self.runtime.run(self._verify(world_id, candidates))

    async def _verify(self, world_id: str, candidates: list[dict[str, Any]]) -> list[tuple]:
        import httpx

        from webworld.verify.replay import Truth, verify_candidate

        site = self.sites[world_id]
        out: dict[str, tuple] = {}
        queue = deque(candidates)
        world_dir = Path(self.tmp.name) / "out" / world_id

        async def drain(tab: Any, truth: Truth) -> None:
            while queue:
                cand = queue.popleft()
                record, failure = await verify_candidate(tab, site.spec, cand, truth,
                                                         self.config, world_dir, site.theme.name)
                out[cand["id"]] = (record, failure, _take_images(world_dir, record))

        async with httpx.AsyncClient(timeout=10) as client:
            truth = Truth(self.endpoints[world_id], client)
            await asyncio.gather(*(drain(tab, truth) for tab in self.tabs))
        return [out[c["id"]] for c in candidates]


def _take_images(world_dir: Path, record: dict | None) -> dict[str, bytes]:
    """The record's screenshots, read and removed from the worker's scratch folder."""
    if record is None:
        return {}
    images = {}
    for step in record["steps"]:
        shot = step["observation"]["screenshot"]
        path = world_dir / shot if shot else None  # None: verified without screenshots
        if path is not None and path.is_file():
            images[shot] = path.read_bytes()
            path.unlink()
    return images


def verify_worlds_on_ray(site_dirs: list[Path], traj_root: Path, *, address: str,
                         contexts: int = 2, actors: int | None = None,
                         config: ReplayConfig | None = None, retry_failed: bool = False,
                         progress: Progress | None = None) -> list[WorldStats]:
    """Like :func:`webworld.verify.runner.verify_worlds`, on the Ray cluster at ``address``."""
    from webworld.render.site import load_site

    ray = connect(address)
    config = config or ReplayConfig()
    sites = [load_site(d) for d in site_dirs]
    jobs = [WorldJob(s.spec, None, traj_root / s.spec.id, s.theme.name,
                     load_candidates(traj_root / s.spec.id)) for s in sites]
    sink = VerifySink(jobs, retry_failed=retry_failed)
    try:
        chunks = deque(_chunks(sink.pending()))
        if chunks:
            bundles = ray.put([pack_dir(s.root) for s in sites])
            count = min(actors or cluster_cpus(ray), len(chunks))
            _drive(ray, chunks, lambda: _spawn(ray, bundles, contexts, config), count, sink,
                   progress)
    finally:
        stats = sink.close()
    return stats


def _chunks(pending: list[tuple[WorldJob, dict]]) -> list[tuple[WorldJob, list[dict]]]:
    out: list[tuple[WorldJob, list[dict]]] = []
    for job, cand in pending:
        if out and out[-1][0] is job and len(out[-1][1]) < CHUNK:
            out[-1][1].append(cand)
        else:
            out.append((job, [cand]))
    return out


def _spawn(ray: Any, bundles: Any, contexts: int, config: ReplayConfig) -> Any:
    actor = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(VerifyWorker)
    return actor.remote(bundles, contexts, config)


def _drive(ray: Any, chunks: deque, spawn: Any, count: int, sink: VerifySink,
           progress: Progress | None) -> None:
    """Keep every worker busy with one chunk until none is left; a dead worker's chunk
    goes back to the front of the queue and a new worker replaces it."""
    idle = [spawn() for _ in range(count)]
    running: dict[Any, tuple[Any, tuple[WorldJob, list[dict]]]] = {}
    lost = 0
    try:
        while chunks or running:
            while idle and chunks:
                worker, chunk = idle.pop(), chunks.popleft()
                running[worker.verify.remote(chunk[0].spec.id, chunk[1])] = (worker, chunk)
            [done], _ = ray.wait(list(running), num_returns=1)
            worker, (job, cands) = running.pop(done)
            try:
                outcomes = ray.get(done)
            except died(ray) as exc:
                lost += 1
                if lost > MAX_LOST_CHUNKS:
                    raise WebworldError(f"{lost} Ray workers died; the last: "
                                        f"{str(exc).splitlines()[0]}") from None
                chunks.appendleft((job, cands))
                idle.append(spawn())
                continue
            except ray.exceptions.RayTaskError as exc:
                raise WebworldError(f"a Ray worker failed verifying {job.spec.id}: "
                                    f"{str(exc.cause or exc).splitlines()[0]}") from None
            idle.append(worker)
            for record, failure, images in outcomes:
                _write_images(job.world_dir, images)
                ok = sink.add(job.spec.id, record, failure)
                if progress:
                    progress(job.spec.id, ok)
    finally:
        for worker, _ in running.values():
            ray.kill(worker)
        close_workers(ray, idle)


def _write_images(world_dir: Path, images: dict[str, bytes]) -> None:
    from webworld.fsio import atomic_write_bytes

    for rel, data in images.items():
        atomic_write_bytes(world_dir / rel, data)
