"""Fuzz the spec pipeline: N mutated copies of the shipped specs (and one 50 MB file)
through load / validate / improve / explore, as the CLI runs them.

    .venv/bin/python scripts/fuzz_specs.py --cases 10000 --seed 0 [--workers 2] [--keep DIR]

Prints the outcomes per mutation kind, the slowest cases and the wall time. Every case must
end as ``rejected`` (an error naming the place: JSON path, line / column or byte),
``invalid`` (every finding has a JSON path) or ``valid``; ``uncaught``, ``hang`` and
``unlocated`` cases are written to --keep (to replay with `webworld validate FILE`) and make
the exit status 1. Cases are the same bytes for the same seed on every machine
(tests/spec/fuzzing.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchkit import load_note, make_console, progress_bar  # noqa: E402

from tests.spec.fuzzing import KINDS, Outcome, big_case, make_case, run_case  # noqa: E402

BAD = ("uncaught", "hang", "unlocated")
OUTCOMES = ("rejected", "invalid", "valid", *BAD)


def one(args: tuple[int, int, str]) -> tuple[int, str, Outcome, bytes | None]:
    """Run case ``index`` in a worker process; its bytes come back only when it failed."""
    seed, index, folder = args
    case = make_case(seed, index) if index >= 0 else None
    data = case.data if case else big_case()
    path = Path(folder) / f"case-{index}.json"
    path.write_bytes(data)
    outcome = run_case(path)
    path.unlink()
    return index, case.mutation if case else "50-MB file", outcome, \
        data if outcome.outcome in BAD else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=Path("fuzz-failures"))
    args = parser.parse_args()
    console = make_console()
    counts: Counter = Counter()
    slowest: list[tuple[float, int, str, str]] = []
    failures = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp, \
            ProcessPoolExecutor(args.workers) as pool, progress_bar(console) as bar:
        task = bar.add_task(f"{args.cases:,} cases + one 50 MB file", total=args.cases + 1)
        jobs = [(args.seed, i, tmp) for i in [-1, *range(args.cases)]]
        for index, kind, outcome, data in pool.map(one, jobs, chunksize=8):
            counts[kind, outcome.outcome] += 1
            slowest = sorted([*slowest, (outcome.seconds, index, kind, outcome.outcome)])[-5:]
            if data is not None:
                failures += 1
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / f"case-{index}-{kind}.json").write_bytes(data)
                console.print(f"[red]{outcome.outcome}[/] case {index} ({kind}, {outcome.stage}): "
                              f"{outcome.detail[:400]}")
            bar.advance(task)
    console.print(_table(counts, args))
    console.print("slowest: " + ", ".join(f"case {i} ({k}, {o}) {s:.1f}s" for s, i, k, o in
                                          reversed(slowest)))
    console.print(f"wall time {time.perf_counter() - started:.0f}s with {args.workers} workers; "
                  f"{load_note()}")
    sys.exit(1 if failures else 0)


def _table(counts: Counter, args: argparse.Namespace) -> Table:
    table = Table("mutation", *OUTCOMES, "cases",
                  title=f"spec fuzzing: {args.cases:,} cases (seed {args.seed}) + one 50 MB file")
    for kind in [*KINDS, "50-MB file"]:
        row = [counts[kind, o] for o in OUTCOMES]
        table.add_row(kind, *map(str, row), str(sum(row)))
    totals = [sum(counts[k, o] for k in [*KINDS, "50-MB file"]) for o in OUTCOMES]
    table.add_row("all", *map(str, totals), str(sum(totals)), style="bold")
    return table


if __name__ == "__main__":
    main()
