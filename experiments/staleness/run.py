"""The staleness experiment, a miniature of the VESPO paper's claim, where on-policy learning
works: VESPO, GSPO, GRPO and SAPO with N = 1, 4, 16 optimiser steps per rollout batch and fully
asynchronous rollouts (K versions behind), 3 seeds each, on the button board of
``webworld.train.sanity`` scaled up (8 buttons: chance is 1/8); writes its REPORT.md and
staleness.png beside this script.

    .venv/bin/python experiments/staleness/run.py             # 48 runs, about an hour on 2 cores
    .venv/bin/python experiments/staleness/run.py --quick     # 2 batches per run

Every run of a seed starts from the same start policy (it knows the reply format and presses a
button at random) on the same board, with the default learning rate and warm-up of the
policy family; only the algorithm and the staleness differ. Each run is a resumable
`webworld train rl` folder under ``--work``.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from webworld.eval.results import mean_interval
from webworld.fsio import atomic_write_bytes
from webworld.study import rl_run, write_keeping_reading
from webworld.train.metrics import area_under_curve, final_success
from webworld.train.sanity import prepare_board

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

ALGOS = ("vespo", "gspo", "grpo", "sapo")
SETTINGS = (("N=1", ["-N", "1"]), ("N=4", ["-N", "4"]), ("N=16", ["-N", "16"]),
            ("async K=4", ["-N", "1", "--async", "4"]))


def start_policy(board: Path, model: str) -> str:
    """The board's start policy, as the command line names it (from the repo root)."""
    return os.path.relpath(board / f"start-{model}", ROOT)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "staleness")
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--buttons", type=int, default=8)
    parser.add_argument("--warm-steps", type=int, default=120)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=40, help="rollout batches per run")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args()
    if args.quick:
        args.steps = 2
    boards = {s: prepare_board(args.work, s, args.buttons, args.model, args.warm_steps)
              for s in args.seeds}
    runs = [(a, setting, flags, s) for setting, flags in SETTINGS for a in ALGOS
            for s in args.seeds]
    with ThreadPoolExecutor(args.parallel) as pool:
        results = list(pool.map(lambda r: run_one(args, boards, *r), runs))
    write_report(args, results)


def run_one(args: argparse.Namespace, boards: dict[int, Path], algo: str, setting: str,
            flags: list[str], seed: int) -> dict:
    out = args.work / f"{algo}-{setting.replace(' ', '_').replace('=', '')}-s{seed}"
    common = ["--algo", algo, "--model", start_policy(boards[seed], args.model),
              "--steps", str(args.steps), "--tasks", str(args.tasks), "-G", str(args.group_size),
              "--envs", str(args.tasks * args.group_size), "--temperature",
              f"{args.temperature:g}", "--max-new-tokens", str(args.max_new_tokens), "--seed",
              str(seed), "--checkpoint-every", "10"]
    return {"algo": algo, "setting": setting, "seed": seed,
            **rl_run(out, boards[seed], [*common, *flags], ROOT)}


def cells(results: list[dict], algo: str, setting: str) -> list[dict]:
    return [r for r in results if r["algo"] == algo and r["setting"] == setting]


def table(results: list[dict], cell) -> list[str]:  # type: ignore[no-untyped-def]
    lines = ["| algorithm | " + " | ".join(s for s, _ in SETTINGS) + " |",
             "|---|" + "---|" * len(SETTINGS)]
    for algo in ALGOS:
        lines.append(f"| {algo} | " + " | ".join(cell(cells(results, algo, s))
                                                  for s, _ in SETTINGS) + " |")
    return lines


def interval(values: list[float]) -> str:
    mean, low, high = mean_interval(values)
    return f"{mean:.2f} [{low:.2f}, {high:.2f}]"


def learnt_mean(runs: list[dict], key: str) -> str:
    """Mean of a per-batch statistic over the batches that learnt anything, over the seeds."""
    values = [row[key] for r in runs for row in r["rows"]
              if row.get("learned_episodes") and key in row]
    return f"{statistics.fmean(values):.3f}" if values else "-"


def write_report(args: argparse.Namespace, results: list[dict]) -> None:
    last = 5 if args.steps >= 10 else 1

    def success(runs: list[dict]) -> str:
        lag = max((row["lag_max"] for r in runs for row in r["rows"]), default=0)
        text = interval([final_success(r["rows"], last) for r in runs])
        return text + (f" (lag {lag})" if lag else "")

    start = statistics.fmean(r["rows"][0]["success_rate"] for r in results if r["rows"])
    sections = [
        "# Staleness: VESPO, GSPO, GRPO, SAPO at N = 1, 4, 16 and asynchronous", "",
        f"Made by `experiments/staleness/run.py{' --quick' if args.quick else ''}` on "
        f"{platform.machine()} CPU ({os.cpu_count()} cores), one torch thread per run, "
        f"{args.parallel} runs at once. Task family: the button board of "
        f"`webworld.train.sanity` with {args.buttons} buttons (chance 1/{args.buttons}); "
        f"seeds {', '.join(map(str, args.seeds))}, each its own board and start policy "
        f"({args.warm_steps} format warm-start steps on replies pressing a button at random). "
        f"Every run: policy `{args.model}`, {args.steps} rollout batches of {args.tasks} x "
        f"G={args.group_size} episodes, the family's default learning rate "
        f"({results[0]['config']['learning_rate']:g}) and warm-up "
        f"({results[0]['config']['warmup_steps']} optimiser steps), "
        f"sampling temperature {args.temperature:g}, fast env. N = optimiser steps per "
        "rollout batch (the batch cut into N minibatches); async K=4: a rollout thread plays "
        "with the weights 4 versions behind the learner (the realised lag is shown). First "
        f"batch (the start policy): success {start:.3f} on average.", "",
        f"Final success (mean of the last {last} batches), mean over seeds [95% t-interval]:",
        "", *table(results, success), "",
        "Area under the success curve (mean success over all batches), over seeds:", "",
        *table(results, lambda runs: interval([area_under_curve(r["rows"]) for r in runs])),
        "", "![success per rollout batch, mean over seeds](staleness.png)", "",
        "How far the learner's policy was from the one that played, over the batches with a "
        "nonzero advantage: normalised effective sample size of the sequence weights "
        "W = pi/mu (1 = on-policy),", "", *table(results, lambda r: learnt_mean(r, "ess")), "",
        "and the p99 of the token |log pi/mu| seen by the loss:", "",
        *table(results, lambda r: learnt_mean(r, "log_ratio_abs_p99")), "",
        f"Wall time of all {len(results)} runs: {sum(r['wall'] for r in results):.0f} s.", "",
        "Command of each run (`--algo`, `--seed`, `-N` / `--async` vary):", "",
        f"    {results[0]['command']}", ""]
    atomic_write_bytes(HERE / "staleness.png", plot(args, results))
    write_keeping_reading(HERE / "REPORT.md", "\n".join(sections))
    print(f"wrote {HERE / 'REPORT.md'}")


def plot(args: argparse.Namespace, results: list[dict]) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(SETTINGS), figsize=(16, 3.8), sharey=True)
    for ax, (setting, _) in zip(axes, SETTINGS):
        for algo in ALGOS:
            runs = cells(results, algo, setting)
            steps = min(len(r["rows"]) for r in runs)
            mean = [statistics.fmean(r["rows"][i]["success_rate"] for r in runs)
                    for i in range(steps)]
            ax.plot(range(1, steps + 1), mean, label=algo, marker="o", markersize=2)
        ax.set_title(setting)
        ax.set_xlabel(f"rollout batch ({args.tasks * args.group_size} episodes)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"rollout success, mean of {len(args.seeds)} seeds")
    axes[-1].legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return buffer.getvalue()


if __name__ == "__main__":
    main()
