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
    parser.add_argument("--steps", type=int, default=10, help="rollout batches per run")
    parser.add_argument("--tasks", type=int, default=4, help="task instances per batch (x G=4)")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parallel", type=int, default=1)
    args = parser.parse_args()
    if args.quick:
        args.steps = 2
    runs = [(a, s, f) for s, f in SETTINGS for a in ALGOS]
    with ThreadPoolExecutor(args.parallel) as pool:
        results = list(pool.map(lambda r: run_one(args, *r), runs))
    write_report(args, results)


def final_success(rows: list[dict], last: int = 4) -> float:
    tail = rows[-last:]
    return sum(r["success_rate"] for r in tail) / max(len(tail), 1)


def write_report(args: argparse.Namespace, results: list[dict]) -> None:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    start = results[0]["rows"][0]["success_rate"] if results[0]["rows"] else 0.0
    table = ["| algorithm | " + " | ".join(s for s, _ in SETTINGS) + " |",
             "|---|" + "---|" * len(SETTINGS)]
    for algo in ALGOS:
        cells = []
        for setting, _ in SETTINGS:
            r = next(x for x in results if x["algo"] == algo and x["setting"] == setting)
            lag = max((row["lag_max"] for row in r["rows"]), default=0)
            cells.append(f"{final_success(r['rows']):.3f}" + (f" (lag {lag})" if lag else ""))
        table.append(f"| {algo} | " + " | ".join(cells) + " |")
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
             f"{args.lr}. Cell: mean rollout success rate over the last 4 batches (the first "
             f"batch, before any update, had {start:.3f}). N = optimiser steps per rollout "
             "batch; async K=4: rollouts played by the policy 4 versions behind the learner.",
             "", *table, "", "![success per rollout batch](staleness.png)", "",
             f"Wall time of all {len(results)} runs: {wall:.0f} s ({args.parallel} at once).", "",
             "Commands:", "", *[f"    {r['command']}" for r in results], ""]
    (docs / "staleness.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {docs / 'staleness.md'}")


if __name__ == "__main__":
    main()
