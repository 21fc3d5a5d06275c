"""The held-out worlds: a versioned manifest that no training split may contain.

``heldout.json`` (beside this file) names every world by what regenerates it: the theme,
profile and seed of the procedural proposer, and the visual theme ("look") its site is
rendered in. Three kinds, so a score says what a policy survived:

* ``new-archetype``: themes whose archetype (``held_out_archetypes``) is never trained on;
* ``new-world``: archetypes seen in training, at seeds reserved for evaluation (>= 9000);
* ``new-look``: one of those very specs again, rendered in other visual themes.

Which worlds are held out is data-split knowledge: :func:`held_out_worlds` is what the splits
(:mod:`webworld.data.splits`, the export, the RL task sets) use to keep these worlds out of
``train`` wherever they turn up. :mod:`webworld.eval.heldout` makes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
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
    generator_version: int = Field(1, ge=1, description="the offline proposer's version that "
                                   "makes it (webworld.propose.procedural.GENERATOR_VERSIONS); "
                                   "1 for the suite of record, so its numbers stay comparable")


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
    """The canonical form of the manifest file (sorted keys, two-space indent, no defaults)."""
    return (json.dumps(manifest.model_dump(mode="json", exclude_defaults=True), indent=2,
                       sort_keys=True, ensure_ascii=False) + "\n").encode()


def is_held_out(spec: WorldSpec, manifest: HeldoutManifest | None = None) -> bool:
    """Whether ``spec`` is a held-out world, or of an archetype kept for evaluation."""
    manifest = manifest or load_manifest()
    return spec.id in manifest.ids() or spec.provenance.archetype in manifest.held_out_archetypes


def held_out_worlds(specs: Iterable[WorldSpec]) -> set[str]:
    """The ids of ``specs`` that no training split may hold."""
    return {s.id for s in specs if is_held_out(s)}
