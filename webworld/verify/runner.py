"""Verify many candidates in parallel: N browser contexts, append-only, resumable.

Outputs per world folder: ``verified.jsonl``, ``failures.jsonl``, ``images/`` and
``verify_stats.json``. Re-running skips every candidate already recorded (verified or
failed) and never writes a record twice; a killed run loses at most the trajectories
that were in flight.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Browser, async_playwright

from webworld.browser.capture import ScreenshotCache
from webworld.browser.launch import launch_browser, new_context
from webworld.browser.tab import BrowserTab
from webworld.errors import WebworldError
from webworld.fsio import atomic_write_json
from webworld.spec.models import WorldSpec
from webworld.verify.replay import Endpoint, ReplayConfig, Truth, verify_candidate
from webworld.verify.store import JsonlStore


@dataclass
class WorldJob:
    """One world to verify: its spec, where it is served, where its records go."""

    spec: WorldSpec
    endpoint: Endpoint | None  # None on a Ray driver: each worker serves its own copy
    world_dir: Path
    theme: str
    candidates: list[dict[str, Any]]


@dataclass
class WorldStats:
    world_id: str
    candidates: int = 0
    skipped: int = 0
    verified: int = 0
    failed: int = 0
    steps: int = 0
    failures: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data = dict(vars(self))
        data["failures"] = dict(self.failures)
        data["verified_per_second"] = round(self.verified / self.seconds, 3) if self.seconds else 0
        return data


Progress = Callable[[str, bool], None]
"""Called after each candidate with its world id and whether it verified."""


def load_candidates(world_dir: Path) -> list[dict[str, Any]]:
    path = world_dir / "candidates.jsonl"
    if not path.is_file():
        raise WebworldError("no candidates: run `webworld explore` first", str(path))
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise WebworldError(f"malformed JSON at line {n}: {exc.msg}", str(path)) from None
    return out


class VerifySink:
    """Where outcomes land: each world's append-only stores and its stats. Used by the
    single-process runner and by the Ray driver (webworld.scale.verify), so both write the
    same files the same way."""

    def __init__(self, jobs: list[WorldJob], *, retry_failed: bool = False) -> None:
        if retry_failed:  # failed candidates run again: start their log afresh
            for j in jobs:
                (j.world_dir / "failures.jsonl").unlink(missing_ok=True)
        self.jobs = {j.spec.id: j for j in jobs}
        self.stores = {j.spec.id: (JsonlStore(j.world_dir / "verified.jsonl"),
                                   JsonlStore(j.world_dir / "failures.jsonl")) for j in jobs}
        self.stats = {j.spec.id: WorldStats(j.spec.id, candidates=len(j.candidates))
                      for j in jobs}
        self.started = time.perf_counter()

    def pending(self) -> list[tuple[WorldJob, dict[str, Any]]]:
        """Every candidate not yet recorded (verified or failed), in the jobs' order."""
        todo = []
        for job in self.jobs.values():
            verified, failed = self.stores[job.spec.id]
            for cand in job.candidates:
                if cand["id"] in verified.ids or cand["id"] in failed.ids:
                    self.stats[job.spec.id].skipped += 1
                else:
                    todo.append((job, cand))
        return todo

    def add(self, world_id: str, record: dict | None, failure: dict | None) -> bool:
        """Record one outcome (once: a repeated id is ignored); True when it verified."""
        verified, failed = self.stores[world_id]
        st = self.stats[world_id]
        if record is not None:
            if record["id"] not in verified.ids:
                verified.append(dict(record))
                st.verified += 1
                st.steps += len(record["steps"])
            return True
        if failure["id"] not in failed.ids:
            failed.append(dict(failure))
            st.failed += 1
            st.failures[failure["failure"]] += 1
        return False

    def close(self) -> list[WorldStats]:
        for verified, failed in self.stores.values():
            verified.close()
            failed.close()
        elapsed = time.perf_counter() - self.started
        for world_id, st in self.stats.items():
            st.seconds = elapsed
            atomic_write_json(self.jobs[world_id].world_dir / "verify_stats.json", st.to_dict())
        return list(self.stats.values())


async def verify_jobs(jobs: list[WorldJob], *, workers: int = 4,
                      config: ReplayConfig | None = None, retry_failed: bool = False,
                      progress: Progress | None = None) -> list[WorldStats]:
    """Verify every job's candidates with ``workers`` contexts of one Chromium."""
    config = config or ReplayConfig()
    shots = screenshot_cache(config)
    sink = VerifySink(jobs, retry_failed=retry_failed)
    queue: asyncio.Queue[tuple[WorldJob, dict[str, Any]]] = asyncio.Queue()
    for item in sink.pending():
        queue.put_nowait(item)
    try:
        async with async_playwright() as pw, httpx.AsyncClient(timeout=10) as client:
            browser = await launch_browser(pw)
            try:
                await asyncio.gather(*(_worker(browser, queue, client, config, sink, progress,
                                               shots) for _ in range(max(1, workers))))
            finally:
                await browser.close()
    finally:
        stats = sink.close()
    return stats


def screenshot_cache(config: ReplayConfig) -> ScreenshotCache | None:
    """The run's screenshots by page (shared by its contexts), where the run takes them."""
    return ScreenshotCache() if config.screenshots and config.reuse_screenshots else None


async def _worker(browser: Browser, queue: asyncio.Queue, client: httpx.AsyncClient,
                  config: ReplayConfig, sink: VerifySink, progress: Progress | None,
                  shots: ScreenshotCache | None) -> None:
    context = await new_context(browser)
    tab = await BrowserTab.open(context, config, shots=shots)
    truths: dict[str, Truth] = {}
    try:
        while not queue.empty():
            job, cand = queue.get_nowait()
            truth = truths.setdefault(job.spec.id, Truth(job.endpoint, client))
            record, failure = await verify_candidate(tab, job.spec, cand, truth, config,
                                                     job.world_dir, job.theme)
            ok = sink.add(job.spec.id, record, failure)
            if progress:
                progress(job.spec.id, ok)
    finally:
        await context.close()


def verify_worlds(site_dirs: list[Path], traj_root: Path, *, workers: int = 4,
                  config: ReplayConfig | None = None, retry_failed: bool = False,
                  progress: Progress | None = None) -> list[WorldStats]:
    """Serve the sites on loopback, then verify each world's candidates."""
    # imported here: the server stack is only needed when a run actually verifies
    from webworld.render.site import load_site
    from webworld.serve.multi import WORLD_PREFIX, create_multi_app
    from webworld.serve.runner import LiveServer

    sites = [load_site(d) for d in site_dirs]
    app = create_multi_app([s.root for s in sites])
    token = app.state.truth_token
    with LiveServer(app) as server:
        jobs = [WorldJob(site.spec,
                         Endpoint(server.url + WORLD_PREFIX.format(world=site.spec.id), token),
                         traj_root / site.spec.id, site.theme.name,
                         load_candidates(traj_root / site.spec.id))
                for site in sites]
        return asyncio.run(verify_jobs(jobs, workers=workers, config=config,
                                       retry_failed=retry_failed, progress=progress))
