"""The device calls that carry a GPU kit to a lent machine and run experiments/gpu_run.py there.

A call carries the repo's own files and at most 64 MiB in all, and the repo grows (results are
committed), so which kit files ride in which call is computed here, not written by hand:

    python3 scripts/carry_plan.py --plan learning --kit gpu_kit/learning.tar.xz \\
        --sft-delta gpu_kit/sft-delta --seeds 0 1 2 --budget 540

Every argument that names a path under gpu_kit/ is carried and rewritten to its place under
/tmp/kit on the device (``gpu_kit`` itself: /tmp/kit); ``--carry PATH`` carries a path
gpu_run.py is not told of (the kit plan's worlds, data and bench in gpu_kit/); the SmolLM2
weight parts and the wheels always ride. Items are packed
into as few calls as fit, at most 8 paths each (a folder too large for one call goes as its
large files and a tar of the rest; a file too large for one is cut into pieces, under
gpu_kit/.carry/, which the device joins again). Each call copies what it
carried to /tmp/kit; the last one also runs gpu_run.py. Send them back to back (the machine
goes back after 30 s idle). Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KIT = "gpu_kit"
DEVICE_KIT = "/tmp/kit"
CALL_BYTES = 64 * 2**20  # what one call carries, the repo's own files included
MARGIN = 2**20  # the repo may grow between planning and sending (a commit, a results file)
PIECES = ".carry"  # where a file too large for one call is cut (under gpu_kit/, git-ignored)
MAX_PATHS = 8  # paths a call may carry


@dataclass
class Item:
    """A path under gpu_kit/ that rides in one call, or a piece of a file cut to fit."""
    path: str  # relative to the repo root
    size: int
    joins: str | None = None  # a piece: the file it is a piece of


def bundle_folder(path: str) -> str | None:
    """The gpu_kit/ folder whose small files the bundle ``path`` holds (None: no bundle)."""
    prefix, suffix = f"{KIT}/{PIECES}/", ".bundle.tar"
    if path.startswith(prefix) and path.endswith(suffix):
        return f"{KIT}/{path[len(prefix):-len(suffix)]}"
    return None


def repo_bytes(root: Path) -> int:
    """What every call carries anyway: tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=root, capture_output=True, check=True).stdout.split(b"\0")
    return sum((root / name.decode()).stat().st_size for name in listed
               if name and (root / name.decode()).is_file())


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def items_of(root: Path, path: str, room: int) -> list[Item]:
    """``path`` as items of at most ``room`` bytes each: whole, or a folder's large files
    (cut where one is larger than a call) and one bundle of the rest."""
    full = root / path
    if size_of(full) <= room:
        return [Item(path, size_of(full))]
    if full.is_dir():
        files = sorted(p for p in full.rglob("*") if p.is_file())
        large = [f for f in files if f.stat().st_size > room // MAX_PATHS]
        return [*(i for f in large for i in items_of(root, str(f.relative_to(root)), room)),
                *bundled(root, path, [f for f in files if f not in large], room)]
    pieces = root / KIT / PIECES / path.removeprefix(f"{KIT}/")
    pieces.parent.mkdir(parents=True, exist_ok=True)
    data, out = full.read_bytes(), []
    for stale in pieces.parent.glob(f"{pieces.name}.piece-*"):
        stale.unlink()
    for index, start in enumerate(range(0, len(data), room)):
        piece = pieces.with_name(f"{pieces.name}.piece-{index:02d}")
        piece.write_bytes(data[start:start + room])
        out.append(Item(str(piece.relative_to(root)), piece.stat().st_size, joins=path))
    return out


def bundled(root: Path, folder: str, files: list[Path], room: int) -> list[Item]:
    """``files`` of ``folder`` in one tar under gpu_kit/.carry/, as items (none if there are
    no files; pieces if the tar is larger than a call)."""
    import tarfile

    if not files:
        return []
    bundle = root / KIT / PIECES / f"{folder.removeprefix(f'{KIT}/')}.bundle.tar"
    bundle.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(bundle, "w") as tar:
        for file in files:
            tar.add(file, arcname=str(file.relative_to(root / folder)))
    return items_of(root, str(bundle.relative_to(root)), room)


def packed(items: list[Item], room: int) -> list[list[Item]]:
    """First fit, largest first: as few calls as the items fit in, at most
    :data:`MAX_PATHS` a call."""
    calls: list[list[Item]] = []
    for item in sorted(items, key=lambda i: -i.size):
        call = next((c for c in calls if sum(i.size for i in c) + item.size <= room
                     and len(c) < MAX_PATHS), None)
        if call is None:
            calls.append(call := [])
        call.append(item)
    return calls


def on_device(path: str) -> str:
    return f"{DEVICE_KIT}/{path.removeprefix(f'{KIT}/')}"


def copy_command(call: list[Item]) -> str:
    """Put what ``call`` carried under /tmp/kit, at its place below gpu_kit/."""
    carried = " ".join(shlex.quote(i.path.removeprefix(f"{KIT}/")) for i in call)
    return f"mkdir -p {DEVICE_KIT} && (cd {KIT} && cp -r --parents {carried} {DEVICE_KIT}/)"


def join_command(calls: list[list[Item]]) -> str | None:
    """In the last call, once every call has carried its share: each cut file whole again,
    then each bundle unpacked where its files belong."""
    items = [i for call in calls for i in call]
    joined = sorted({i.joins for i in items if i.joins})
    pieces = {j: on_device(f"{KIT}/{PIECES}/{j.removeprefix(f'{KIT}/')}") for j in joined}
    steps = [f"mkdir -p {shlex.quote(str(Path(on_device(j)).parent))} && cat "
             f"{shlex.quote(pieces[j])}.piece-* > {shlex.quote(on_device(j))}" for j in joined]
    for bundle in sorted({i.joins or i.path for i in items} - {None}):
        folder = bundle_folder(bundle)
        if folder:
            steps.append(f"mkdir -p {shlex.quote(on_device(folder))} && tar xf "
                         f"{shlex.quote(on_device(bundle))} -C {shlex.quote(on_device(folder))}")
    return " && ".join(steps) or None


def plan_calls(root: Path, flags: list[str], repo: int) -> tuple[list[list[Item]], str]:
    """The calls' items and gpu_run.py's command with its kit paths on the device."""
    room = CALL_BYTES - repo - MARGIN
    if room <= 0:
        raise SystemExit(f"the repo's own files ({repo / 1e6:.1f} MB) leave no room in a call")
    weights = sorted(str(p.relative_to(root)) for p in (root / KIT / "smollm2").glob("part-*"))
    wheels = f"{KIT}/wheels.tar.xz"
    missing = [p for p in [wheels, *weights] if not (root / p).exists()] or \
        ([] if weights else [f"{KIT}/smollm2/part-*"])
    if missing:
        raise SystemExit(f"{', '.join(missing)}: not there; run `bash scripts/gpu_kit.sh` first")
    carried = [flags[i + 1] for i, f in enumerate(flags[:-1]) if f == "--carry"]
    flags = [f for i, f in enumerate(flags) if f != "--carry" and (i == 0 or flags[i - 1] != "--carry")]
    named = [f for f in flags if f.startswith(f"{KIT}/")]
    for path in [*named, *carried]:
        if not (root / path).exists():
            raise SystemExit(f"{path}: not there (made by scripts/gpu_kit.sh or an experiment)")
    # a piece of a file is only whole on the device once every call has carried its pieces
    calls = packed([i for p in [wheels, *weights, *named, *carried]
                    for i in items_of(root, p, room)], room)
    run = ["python3", "experiments/gpu_run.py", "--wheels", on_device(wheels),
           "--gguf-parts", *map(on_device, weights),
           *[on_device(f) if f in named else DEVICE_KIT if f == KIT else f for f in flags],
           "--out", '"$OUT"']
    return calls, " ".join(a if a == '"$OUT"' else shlex.quote(a) for a in run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     usage="carry_plan.py GPU_RUN_FLAGS ...")
    _, flags = parser.parse_known_args()
    repo = repo_bytes(ROOT)
    calls, run = plan_calls(ROOT, flags, repo)
    print(f"{len(calls)} calls (the repo's own files: {repo / 1e6:.1f} MB a call):")
    last = " && ".join(c for c in (join_command(calls), run) if c)
    for number, call in enumerate(calls, 1):
        command = copy_command(call) + (f" && {last}" if number == len(calls) else "")
        print(f"  {number}. carry {json.dumps(sorted(i.path for i in call))} "
              f"({sum(i.size for i in call) / 1e6:.1f} MB)")
        print(f"     {command}")
        if len(command) > 2000:
            print("     (longer than a call's 2,000 characters: name folders, not files)",
                  file=sys.stderr)
    print(f"A later call on the warm machine, carrying nothing: {run} (with --budget the "
          "device time left, less a minute)")


if __name__ == "__main__":
    main()
