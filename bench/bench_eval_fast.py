"""An eval's slots in the fast env: one snapshot copy per world set, shared by every slot's
FastEnv (webworld/rl/fast/env.py::snapshots), against one copy per slot (each slot loading its
own, as before the sharing), the baseline measured in the same run.

    .venv/bin/python bench/bench_eval_fast.py                    # the shipped worlds, built once
    .venv/bin/python bench/bench_eval_fast.py --suite runs/heldout --slots 8 32

Each mode runs in a process of its own, so its peak memory is its own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit import load_note, make_console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
WORLDS = ["flight_booking", "online_bookstore"]

MAKE_SLOTS = """
import json, resource, sys, time
from pathlib import Path
from webworld.rl.fast.env import FastEnv
from webworld.rl.tasks import load_worlds
root, slots, shared = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "shared"
started = time.perf_counter()
worlds = load_worlds(root / "sites", root / "trajectories")
envs = [FastEnv(worlds if shared else load_worlds(root / "sites", root / "trajectories"),
                split=None, build=False) for _ in range(slots)]
for i, env in enumerate(envs):
    env.reset(seed=i)
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(root: Path, slots: int, mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", MAKE_SLOTS, str(root), str(slots), mode],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", type=Path, default=None,
                        help="a folder with sites/ (snapshotted) and trajectories/; default: "
                             "the shipped worlds, built in --keep")
    parser.add_argument("--keep", type=Path, default=None, help="where to build them")
    parser.add_argument("--slots", type=int, nargs="+", default=[8, 32])
    args = parser.parse_args()
    console = make_console()
    root = args.suite
    if root is None:
        from bench_env import prepare

        root = args.keep or Path(tempfile.mkdtemp(prefix="bench-eval-fast-"))
        prepare(root, WORLDS, console)
    table = Table("slots", "one copy per slot: s", "MB", "shared: s", "MB", "time ratio",
                  "memory ratio", title=f"eval slots in the fast env ({root})")
    for slots in args.slots:
        own, shared = (measure(root, slots, mode) for mode in ("own", "shared"))
        table.add_row(str(slots), f"{own['seconds']:.2f}", f"{own['peak_mb']:,.0f}",
                      f"{shared['seconds']:.2f}", f"{shared['peak_mb']:,.0f}",
                      f"{own['seconds'] / shared['seconds']:.1f}x",
                      f"{own['peak_mb'] / shared['peak_mb']:.1f}x")
    console.print(table)
    console.print(f"[dim]{load_note()}[/]")


if __name__ == "__main__":
    main()
