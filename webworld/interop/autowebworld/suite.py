"""A folder of AutoWebWorld ``fsm.json`` files as an eval suite (``--suite autowebworld:DIR``):
each file imported, rendered, explored and verified once, cached beside the files."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from webworld.errors import UsageError

CACHE = ".webworld"


def fsm_files(paths: list[Path]) -> list[Path]:
    """The files named, plus every ``fsm.json`` under each folder named (sorted)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("fsm.json") if CACHE not in p.parts))
        elif path.exists():
            found.append(path)
        else:
            raise UsageError("no such file or folder", str(path))
    if not found:
        raise UsageError("no fsm.json files found", ", ".join(map(str, paths)))
    return found


def _digest(files: list[Path], root: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def build_suite_worlds(src: Path, *, workers: int = 2) -> Path:
    """``src/.webworld/<digest>/`` with ``sites/`` and ``trajectories/`` of every usable file
    (unusable ones are named in the error); made in a partial folder and moved in whole, so
    a killed build is redone, not half-used."""
    from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
    from webworld.interop.autowebworld.translate import import_fsm
    from webworld.render.site import render_site
    from webworld.spec.io import save_spec
    from webworld.verify.runner import verify_worlds

    if not src.is_dir():
        raise UsageError("autowebworld:DIR needs a folder of fsm.json files", str(src))
    files = fsm_files([src])
    done = src / CACHE / _digest(files, src)
    if (done / "sites").is_dir():
        return done
    work = done.parent / f".{done.name}.partial"
    shutil.rmtree(work, ignore_errors=True)
    try:
        work.mkdir(parents=True)
    except OSError as exc:
        raise UsageError(f"cannot write the suite's build folder: {exc.strerror}",
                         str(work)) from None
    results = [import_fsm(f) for f in files]
    bad = [r.source.path for r in results if not r.ok]
    if bad:
        raise UsageError("unusable fsm.json (run `webworld import autowebworld` on it to see "
                         "why): " + ", ".join(bad))
    site_dirs = []
    for result in results:
        spec = result.spec
        assert spec is not None
        save_spec(spec, work / "specs" / f"{spec.id}.json")
        site_dirs.append(render_site(spec, work / "sites" / spec.id))
        write_candidates(explore_world(spec, ExploreConfig()), work / "trajectories" / spec.id)
    verify_worlds(site_dirs, work / "trajectories", workers=workers)
    work.replace(done)
    return done
