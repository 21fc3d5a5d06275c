"""Worlds as the build left them: ``fsm_specs/<id>.json``, ``sites/<id>/`` and
``trajectories/<id>/`` (candidates, verified, failures, stats, screenshots).

A gallery card needs only small files (the spec, two stats files, one directory listing),
so a page of cards costs the same with 100 worlds as with 3; trajectories are parsed only
on a world's own pages, once per change of their file.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webworld.dashboard.reading import (
    NotFound,
    StampCache,
    Unreadable,
    has,
    inside,
    read_json_or,
    read_lines,
    safe_name,
)
from webworld.errors import SpecLoadError
from webworld.spec.io import load_spec
from webworld.spec.models import WorldSpec

PAGE_IN_URL = re.compile(r"/page/([A-Za-z0-9_\-]+)")


@dataclass(frozen=True)
class Folders:
    """Where the dashboard reads; each may be absent."""

    specs: Path
    sites: Path
    trajectories: Path
    datasets: Path
    runs: Path

    @classmethod
    def under(cls, root: Path) -> Folders:
        """The build's layout; ``specs/`` (a held-out folder's) when there is no ``fsm_specs/``."""
        specs = root / "fsm_specs"
        if not specs.is_dir() and (root / "specs").is_dir():
            specs = root / "specs"
        return cls(specs, root / "sites", root / "trajectories", root / "datasets", root / "runs")


@dataclass
class WorldCard:
    id: str
    name: str
    archetype: str
    profile: str
    theme: str               # the site's visual theme
    pages: int | None
    states: int | None
    tasks: int | None
    candidates: int | None
    verified: int | None
    failed: int | None
    screenshot: str | None   # path under trajectories/<id>/
    problem: str = ""        # why the spec could not be read, if it could not

    @property
    def verified_share(self) -> float | None:
        if not self.candidates or self.verified is None:
            return None
        return self.verified / self.candidates


@dataclass
class WorldTrajectories:
    """One world's verified and failed trajectories, parsed once per change."""

    verified: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    candidates: dict[str, dict[str, Any]]
    notes: list[str] = field(default_factory=list)

    def by_id(self, trajectory_id: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(verified record, failure record) of an id; at least one, else NotFound."""
        verified = next((r for r in self.verified if r.get("id") == trajectory_id), None)
        failure = next((r for r in self.failures if r.get("id") == trajectory_id), None)
        if verified is None and failure is None:
            raise NotFound(trajectory_id)
        return verified, failure

    def failure_groups(self) -> dict[str, list[dict[str, Any]]]:
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in self.failures:
            groups[str(record.get("failure", "unknown"))].append(record)
        return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))

    def task_paths(self) -> dict[str, list[str]]:
        """An example path (spec action ids) per task: its shortest verified trajectory,
        else its shortest candidate."""
        paths: dict[str, list[str]] = {}
        for record in sorted(self.verified, key=lambda r: r.get("length", 0)):
            actions = [s["fsm_action"] for s in record.get("steps", []) if "fsm_action" in s]
            paths.setdefault(str(record.get("task_id")), list(dict.fromkeys(actions)))
        for cand in sorted(self.candidates.values(), key=lambda c: c.get("length", 0)):
            paths.setdefault(str(cand.get("task_id")),
                             [s["action"] for s in cand.get("steps", []) if "action" in s])
        return paths


class WorldCatalog:
    def __init__(self, folders: Folders, cache: StampCache) -> None:
        self.folders, self.cache = folders, cache

    # --- which worlds there are ----------------------------------------------------------

    def ids(self, query: str = "") -> list[str]:
        found: set[str] = set()
        found |= {p[:-5] for p in _names(self.folders.specs) if p.endswith(".json")}
        found |= {p for p in _names(self.folders.sites)
                  if (self.folders.sites / p / "manifest.json").is_file()}
        found |= {p for p in _names(self.folders.trajectories)
                  if (self.folders.trajectories / p).is_dir()}
        query = query.strip().lower()
        return sorted(w for w in found if _is_safe(w) and query in w.lower())

    def watched(self, world: str | None = None) -> list[Path]:
        """The files whose change should refresh a page of these worlds."""
        roots = [self.folders.specs, self.folders.sites, self.folders.trajectories]
        if world is None:  # the gallery: worlds come and go, and finish verifying
            return roots + [self.folders.trajectories / w / name for w in self.ids()
                            for name in ("verify_stats.json", "explore_stats.json")]
        t = self.folders.trajectories / world
        return [*roots, self.spec_path(world), t / "verified.jsonl", t / "failures.jsonl",
                t / "verify_stats.json", t / "explore_stats.json", t / "candidates.jsonl"]

    # --- one world -------------------------------------------------------------------------

    def spec_path(self, world: str) -> Path:
        own = self.folders.specs / f"{world}.json"
        return own if own.is_file() else self.folders.sites / world / "spec.json"

    def exists(self, world: str) -> bool:
        return _is_safe(world) and any(p.exists() for p in (
            self.folders.specs / f"{world}.json", self.folders.sites / world / "manifest.json",
            self.folders.trajectories / world))

    def require(self, world: str) -> str:
        if not self.exists(safe_name(world)):
            raise NotFound(world)
        return world

    def card(self, world: str) -> WorldCard:
        return self.cache.get("card", self.folders.trajectories / world, self._card_deps(world),
                              lambda: self._build_card(world))

    def spec(self, world: str) -> WorldSpec:
        path = self.spec_path(world)
        if not path.is_file():
            raise NotFound(f"{world} has no spec")

        def load() -> WorldSpec:
            try:
                return load_spec(path)
            except SpecLoadError as exc:
                raise Unreadable(exc.args[0] if exc.args else str(exc), path) from None
        return self.cache.get("spec", path, [path], load)

    def trajectories(self, world: str) -> WorldTrajectories:
        folder = self.folders.trajectories / world
        files = [folder / "verified.jsonl", folder / "failures.jsonl", folder / "candidates.jsonl"]
        return self.cache.get("trajectories", folder, files, lambda: _load_trajectories(*files))

    def page_screenshots(self, world: str) -> dict[str, str]:
        """A screenshot of each page some verified step saw: page id -> path under the
        world's trajectories folder."""
        shots: dict[str, str] = {}
        for record in self.trajectories(world).verified:
            for step in record.get("steps", []):
                obs = step.get("observation") or {}
                found = PAGE_IN_URL.search(str(obs.get("url", "")))
                if found and obs.get("screenshot"):
                    shots.setdefault(found.group(1), str(obs["screenshot"]))
        return shots

    def image(self, world: str, relative: str) -> Path:
        """A screenshot file of a world, never a file outside its folder."""
        path = inside(self.folders.trajectories / self.require(world), relative)
        if path.suffix.lower() != ".png" or not path.is_file():
            raise NotFound(relative)
        return path

    # --- helpers ---------------------------------------------------------------------------

    def _card_deps(self, world: str) -> list[Path]:
        t = self.folders.trajectories / world
        return [self.spec_path(world), self.folders.sites / world / "manifest.json",
                t / "verify_stats.json", t / "explore_stats.json", t / "images"]

    def _build_card(self, world: str) -> WorldCard:
        t = self.folders.trajectories / world
        spec, problem = _spec_summary(self.spec_path(world))
        manifest = read_json_or(self.folders.sites / world / "manifest.json", {})
        verify = read_json_or(t / "verify_stats.json", {})
        explore = read_json_or(t / "explore_stats.json", {})
        provenance = spec.get("provenance") or {}
        return WorldCard(
            id=world, name=str(spec.get("name") or manifest.get("name") or world),
            archetype=str(provenance.get("archetype") or "-"),
            profile=str(provenance.get("profile") or "-"),
            theme=str(manifest.get("theme") or "-"),
            pages=_count(spec.get("pages")), states=_int(explore.get("states")),
            tasks=_count(spec.get("tasks")),
            candidates=_int(verify.get("candidates", explore.get("candidates"))),
            verified=_int(verify.get("verified")), failed=_int(verify.get("failed")),
            screenshot=_first_screenshot(t / "images"), problem=problem)


def _is_safe(name: str) -> bool:
    try:
        safe_name(name)
    except NotFound:
        return False
    return True


def _names(folder: Path) -> list[str]:
    try:
        return [entry.name for entry in os.scandir(folder)]
    except OSError:
        return []


def _spec_summary(path: Path) -> tuple[dict[str, Any], str]:
    """The raw spec JSON (cards need a few counts, not a validated model)."""
    if not path.is_file():
        return {}, ""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        return {}, f"{path.name}: not readable JSON ({exc})"
    return (data, "") if isinstance(data, dict) else ({}, f"{path.name}: not a JSON object")


def _first_screenshot(images: Path) -> str | None:
    """The first step's screenshot of the first trajectory (the home page, usually)."""
    names = sorted(_names(images))
    for name in names[:5]:
        shots = sorted(n for n in _names(images / name) if n.endswith(".png"))
        if shots:
            return f"images/{name}/{shots[0]}"
    return None


def _with_steps(record: dict[str, Any]) -> bool:
    return has(record, id=str, steps=list) and all(isinstance(s, dict) for s in record["steps"])


def _load_trajectories(verified: Path, failures: Path, candidates: Path) -> WorldTrajectories:
    v = read_lines(verified, _with_steps)
    f = read_lines(failures, lambda r: has(r, id=str, failure=str))
    c = read_lines(candidates, _with_steps)
    notes = [f"{path.name}: {note}" for path, lines in ((verified, v), (failures, f),
                                                        (candidates, c)) for note in lines.notes]
    return WorldTrajectories(v.records, f.records,
                             {str(r.get("id")): r for r in c.records}, notes)


def _count(value: Any) -> int | None:
    return len(value) if isinstance(value, list) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
