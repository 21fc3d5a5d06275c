"""The held-out worlds: a versioned manifest that no training split may contain.

``heldout.json`` (beside this file) names every world by what regenerates it: the theme,
profile and seed of the procedural proposer, and the visual theme ("look") its site is
rendered in. Three kinds, so a score says what a policy survived:

* ``new-archetype``: themes whose archetype (``held_out_archetypes``) is never trained on;
* ``new-world``: archetypes seen in training, at seeds reserved for evaluation (>= 9000);
* ``new-look``: one of those very specs again, rendered in other visual themes.

:func:`materialise` makes the specs, sites and tasks (explored, then verified in Chromium
so the oracle has its paths) the same bytes on any machine. :func:`held_out_worlds` is
what the splits use to keep these worlds out of ``train`` wherever they turn up.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from webworld.errors import UsageError
from webworld.spec.models import WorldSpec

MANIFEST = Path(__file__).with_name("heldout.json")
Kind = Literal["new-archetype", "new-world", "new-look"]


class HeldoutWorld(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    kind: Kind
    theme: str
    profile: str
    seed: int = Field(ge=9000, description="seeds from 9000 up are reserved for evaluation")
    look: str = Field(description="the visual theme the site is rendered in")
    base: str | None = Field(None, description="new-look: the world whose spec it re-renders")


class HeldoutManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    held_out_archetypes: list[str]
    explore: dict[str, int] = Field(description="explorer caps for the tasks (ExploreConfig)")
    worlds: list[HeldoutWorld]

    def world(self, world_id: str) -> HeldoutWorld:
        for w in self.worlds:
            if w.id == world_id:
                return w
        raise UsageError(f"no held-out world {world_id!r}; have {', '.join(self.ids())}")

    def ids(self) -> list[str]:
        return [w.id for w in self.worlds]


@cache
def load_manifest(path: Path = MANIFEST) -> HeldoutManifest:
    try:
        return HeldoutManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"bad held-out manifest: {exc}", str(path)) from None


def manifest_bytes(manifest: HeldoutManifest) -> bytes:
    """The canonical form of the manifest file (sorted keys, two-space indent)."""
    return (json.dumps(manifest.model_dump(mode="json", exclude_none=True), indent=2,
                       sort_keys=True, ensure_ascii=False) + "\n").encode()


def is_held_out(spec: WorldSpec, manifest: HeldoutManifest | None = None) -> bool:
    """Whether ``spec`` is a held-out world, or of an archetype kept for evaluation."""
    manifest = manifest or load_manifest()
    return spec.id in manifest.ids() or spec.provenance.archetype in manifest.held_out_archetypes


def held_out_worlds(specs: Iterable[WorldSpec]) -> set[str]:
    """The ids of ``specs`` that no training split may hold."""
    return {s.id for s in specs if is_held_out(s)}


# --- making the worlds ---------------------------------------------------------------------------

@dataclass
class Materialised:
    root: Path

    @property
    def specs(self) -> Path:
        return self.root / "specs"

    @property
    def sites(self) -> Path:
        return self.root / "sites"

    @property
    def trajectories(self) -> Path:
        return self.root / "trajectories"


def heldout_spec(entry: HeldoutWorld) -> WorldSpec:
    """The spec of one held-out world, exactly as the manifest names it."""
    from webworld.propose.procedural import generate

    spec = generate(entry.theme, entry.profile, entry.seed).spec
    if entry.kind == "new-look":
        spec = spec.model_copy(update={"id": entry.id})
    if entry.kind != "new-look" and spec.id != entry.id:
        raise UsageError(f"held-out world {entry.id}: the proposer now names it {spec.id}; "
                         "the manifest and the proposer disagree (bump the manifest version)")
    return spec


def materialise(out: Path, only: list[str] | None = None, *, workers: int = 2,
                progress: object = None) -> Materialised:
    """Specs, sites, candidates and verified trajectories of the held-out worlds in ``out``.
    They are made in a folder beside it and moved in when all verified, so a killed run
    leaves no half-made world behind."""
    from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
    from webworld.render.site import render_site
    from webworld.spec.io import save_spec
    from webworld.verify.runner import verify_worlds

    manifest = load_manifest()
    entries = [manifest.world(w) for w in only] if only else manifest.worlds
    out = Path(out)
    work = Materialised(out.parent / f".{out.name}.partial")
    shutil.rmtree(work.root, ignore_errors=True)
    config = ExploreConfig(**manifest.explore)
    site_dirs = []
    for entry in entries:
        spec = heldout_spec(entry)
        save_spec(spec, work.specs / f"{spec.id}.json")
        site_dirs.append(render_site(spec, work.sites / spec.id, theme=entry.look))
        write_candidates(explore_world(spec, config), work.trajectories / spec.id)
    stats = verify_worlds(site_dirs, work.trajectories, workers=workers, progress=progress)
    broken = [f"{s.world_id}: {s.failed} of {s.candidates}" for s in stats if s.failed]
    if broken:
        raise UsageError("held-out tasks failed verification: " + "; ".join(broken), str(work.root))
    made = Materialised(out)
    for entry in entries:
        for part in (Path("specs") / f"{entry.id}.json", Path("sites") / entry.id,
                     Path("trajectories") / entry.id):
            target = out / part
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():
                shutil.rmtree(target)
            (work.root / part).replace(target)
    shutil.rmtree(work.root, ignore_errors=True)
    return made
