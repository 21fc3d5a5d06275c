"""The staleness experiment, a miniature of the VESPO paper's claim, on the fast env: success
after a fixed budget of rollout batches for VESPO, GSPO, GRPO and SAPO with N = 1, 4, 16
optimiser steps per rollout batch and fully asynchronous rollouts (K versions behind);
writes docs/staleness.md and docs/staleness.png.

    .venv/bin/python experiments/staleness.py        # after experiments/train_vespo.py made
                                                     # the worlds and the SFT policy
    .venv/bin/python experiments/staleness.py --quick

Every run starts from the same SFT policy (``runs/train_vespo/sft/model``) on the same
training worlds, with the same seed, batches and learning rate; each is a resumable
`webworld train rl` run folder under ``--work`` (one torch thread each; ``--parallel``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from train_vespo import write_keeping_reading  # noqa: E402  (experiments/ is on the path)

from webworld.fsio import atomic_write_bytes, atomic_write_json  # noqa: E402

ALGOS = ("vespo", "gspo", "grpo", "sapo")
SETTINGS = (("N=1", ["-N", "1"]), ("N=4", ["-N", "4"]), ("N=16", ["-N", "16"]),
            ("async K=4", ["-N", "1", "--async", "4"]))


def rel(path: Path) -> str:
    return os.path.relpath(path, ROOT)


def run_one(args: argparse.Namespace, algo: str, setting: str, flags: list[str]) -> dict:
    out = args.work / f"{algo}-{setting.replace(' ', '_').replace('=', '')}"
    command = ["train", "rl", "--algo", algo, "--model", rel(args.policy), "--worlds",
               rel(args.worlds), "--env", "fast", "--out", rel(out), "--steps", str(args.steps),
               "--tasks", str(args.tasks), "-G", "4", "--lr", str(args.lr), "--seed", str(args.seed),
               "--from-goal", str(args.from_goal), "--temperature", str(args.temperature),
               "--checkpoint-every", "5", *flags]
    done = out / "model" / "config.json"
    log = out / "experiment.json"
    if not (done.is_file() and log.is_file()):
        resume = ["--resume"] if (out / "checkpoints").is_dir() else []
        started = time.perf_counter()
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        subprocess.run([sys.executable, "-c", "from webworld.cli.main import app; app()",
                        *command, *resume], check=True, cwd=ROOT, env=env,
                       stdout=subprocess.DEVNULL)
        earlier = json.loads(log.read_text())["wall"] if log.is_file() else 0.0
        atomic_write_json(log, {"command": "webworld " + " ".join(command),
                                "wall": earlier + time.perf_counter() - started})
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    return {"algo": algo, "setting": setting, "rows": rows, **json.loads(log.read_text())}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "staleness")
    parser.add_argument("--policy", type=Path, default=ROOT / "runs/train_vespo/sft/model")
    parser.add_argument("--worlds", type=Path, default=ROOT / "runs/train_vespo/worlds")
    parser.add_argument("--steps", type=int, default=8, help="rollout batches per run")
    parser.add_argument("--temperature", type=float, default=0.5)
    parser.add_argument("--from-goal", type=int, default=2,
                        help="episodes start this many steps before the goal (0: whole tasks)")
    parser.add_argument("--tasks", type=int, default=8, help="task instances per batch (x G=4)")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parallel", type=int, default=1)
    args = parser.parse_args()
    if args.quick:
        args.steps = 2
    runs = [(a, s, f) for s, f in SETTINGS for a in ALGOS]
    with ThreadPoolExecutor(args.parallel) as pool:
        results = list(pool.map(lambda r: run_one(args, *r), runs))
    write_report(args, results)


def final_success(rows: list[dict], last: int) -> float:
    tail = rows[-last:]
    return sum(r["success_rate"] for r in tail) / max(len(tail), 1)


def mean_stat(rows: list[dict], key: str) -> str:
    """Mean of a loss statistic over the batches that learnt anything ('-' if none did)."""
    values = [r[key] for r in rows if r.get("learned_episodes") and key in r]
    return f"{sum(values) / len(values):.3f}" if values else "-"


def cell_table(results: list[dict], cell) -> list[str]:  # type: ignore[no-untyped-def]
    table = ["| algorithm | " + " | ".join(s for s, _ in SETTINGS) + " |",
             "|---|" + "---|" * len(SETTINGS)]
    for algo in ALGOS:
        cells = [cell(next(x for x in results if x["algo"] == algo and x["setting"] == setting))
                 for setting, _ in SETTINGS]
        table.append(f"| {algo} | " + " | ".join(cells) + " |")
    return table


def write_report(args: argparse.Namespace, results: list[dict]) -> None:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    start = results[0]["rows"][0]["success_rate"] if results[0]["rows"] else 0.0
    last = max(args.steps // 2, 1)

    def success(r: dict) -> str:
        lag = max((row["lag_max"] for row in r["rows"]), default=0)
        return f"{final_success(r['rows'], last):.3f}" + (f" (lag {lag})" if lag else "")

    table = cell_table(results, success)
    ess = cell_table(results, lambda r: mean_stat(r["rows"], "ess"))
    drift = cell_table(results, lambda r: mean_stat(r["rows"], "log_ratio_abs_max"))
    fig, axes = plt.subplots(1, len(SETTINGS), figsize=(16, 3.8), sharey=True)
    for ax, (setting, _) in zip(axes, SETTINGS):
        for algo in ALGOS:
            r = next(x for x in results if x["algo"] == algo and x["setting"] == setting)
            ax.plot([row["step"] for row in r["rows"]], [row["success_rate"] for row in r["rows"]],
                    label=algo, marker="o", markersize=2)
        ax.set_title(setting)
        ax.set_xlabel(f"rollout batch ({4 * args.tasks} episodes)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("rollout success rate")
    axes[-1].legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    docs = ROOT / "docs"
    atomic_write_bytes(docs / "staleness.png", buffer.getvalue())
    wall = sum(r["wall"] for r in results)
    lines = ["# Staleness: VESPO, GSPO, GRPO, SAPO at N = 1, 4, 16 and asynchronous", "",
             f"Made by `experiments/staleness.py{' --quick' if args.quick else ''}` (seed "
             f"{args.seed}) on {platform.machine()} CPU ({os.cpu_count()} cores); fast env on the "
             f"training worlds of `experiments/train_vespo.py`; every run starts from its SFT "
             f"policy; {args.steps} rollout batches of {args.tasks} task instances x G=4 episodes, lr "
             f"{args.lr}, sampling temperature {args.temperature}; each episode starts "
             f"{args.from_goal} steps before the goal of its "
             f"verified path (`--from-goal {args.from_goal}`; the policy has "
             f"{2 * args.from_goal} turns), because from the start the SFT policy never "
             "succeeds and every advantage is 0 (at temperature 1 its replies are mostly noise). "
             f"Cell: mean rollout success rate over the last {last} batches (the first "
             f"batch, before any update, had {start:.3f}). N = optimiser steps per rollout "
             "batch; async K=4: rollouts played by the policy 4 versions behind the learner.",
             "", *table, "", "![success per rollout batch](staleness.png)", "",
             "How far the learner's policy drifted from the one that played: normalised "
             "effective sample size of the sequence weights W = pi/mu (1 = on-policy), mean over "
             "the batches with a nonzero advantage:", "", *ess, "",
             "and the largest token |log pi/mu| (mean over those batches):", "", *drift, "",
             f"Wall time of all {len(results)} runs: {wall:.0f} s ({args.parallel} at once).", "",
             "Commands:", "", *[f"    {r['command']}" for r in results], ""]
    write_keeping_reading(docs / "staleness.md", "\n".join(lines))
    print(f"wrote {docs / 'staleness.md'}")


if __name__ == "__main__":
    main()
