"""Making the held-out worlds of :mod:`webworld.data.heldout`'s manifest for evaluation:
:func:`materialise` makes the specs, sites and tasks (explored, then verified in Chromium so
the oracle has its paths), the same bytes on any machine.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from webworld.data.heldout import HeldoutWorld, load_manifest
from webworld.errors import UsageError
from webworld.spec.models import WorldSpec

DENSE_GENERATOR = 3
"""The generator version of the dense suite (``heldout-dense``): every world of the manifest
at that version, pages as dense as real sites'. The suite of record (``heldout``) keeps each
world's own version, so the numbers measured on it stay comparable."""
SUITES: dict[str, int | None] = {"heldout": None, "heldout-dense": DENSE_GENERATOR}
"""The held-out suites, and the generator version each makes its worlds at (None: the
manifest's)."""


def suite_dir(heldout_dir: Path, suite: str) -> Path:
    """Where a held-out suite's worlds go: ``heldout_dir`` itself for the suite of record,
    a sibling named after the suite for another (``heldout`` -> ``heldout-dense``)."""
    if suite == "heldout":
        return heldout_dir
    return heldout_dir.with_name(heldout_dir.name + suite.removeprefix("heldout"))


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


def heldout_spec(entry: HeldoutWorld, version: int | None = None) -> WorldSpec:
    """The spec of one held-out world, exactly as the manifest names it (at generator
    ``version`` instead of the manifest's when given: the same world, denser)."""
    from webworld.propose.procedural import generate

    spec = generate(entry.theme, entry.profile, entry.seed,
                    version=version or entry.generator_version).spec
    if entry.kind == "new-look":
        spec = spec.model_copy(update={"id": entry.id})
    if entry.kind != "new-look" and spec.id != entry.id:
        raise UsageError(f"held-out world {entry.id}: the proposer now names it {spec.id}; "
                         "the manifest and the proposer disagree (bump the manifest version)")
    return spec


def materialise(out: Path, only: list[str] | None = None, *, workers: int = 2,
                progress: object = None, version: int | None = None) -> Materialised:
    """Specs, sites, candidates and verified trajectories of the held-out worlds in ``out``
    (at generator ``version``, else each world's own). They are made in a folder beside it
    and moved in when all verified, so a killed run leaves no half-made world behind."""
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
        spec = heldout_spec(entry, version)
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
