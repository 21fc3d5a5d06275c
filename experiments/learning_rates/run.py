"""The learning-rate sweep behind the RL defaults (webworld/train/defaults.py): every algorithm
at N = 1 on the button board (webworld.train.sanity), over learning rates, sampling
temperatures and seeds; writes its REPORT.md beside this script.

    .venv/bin/python experiments/learning_rates/run.py          # tiny, 72 runs (~1.5 h on 2 cores)
    .venv/bin/python experiments/learning_rates/run.py --model smollm2 --lrs 3e-6 1e-5 3e-5 \\
        --temperatures 0.7 --algos vespo --seeds 0 --steps 20 --warm-steps 30
                                     # SmolLM2: REPORT_smollm2.md (hours on a CPU)

Each seed has its own board (labels and the button the task names are drawn from it) and its
own start policy, which knows the reply format and presses a button at random. A run is a
resumable `webworld train rl` folder under ``--work``; the script picks up where it stopped.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from webworld.eval.results import mean_interval
from webworld.study import rl_run, write_keeping_reading
from webworld.train.defaults import RL_LEARNING_RATES
from webworld.train.metrics import area_under_curve, batches_to, final_success
from webworld.train.sanity import prepare_board

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def start_policy(board: Path, model: str) -> str:
    """The board's start policy, as the command line names it (from the repo root)."""
    return os.path.relpath(board / f"start-{model}", ROOT)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--out", type=Path, default=None,
                        help="default: REPORT.md (tiny), else REPORT_<model>.md, beside this script")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "lr_sweep")
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-4, 3e-4, 1e-3])
    parser.add_argument("--temperatures", type=float, nargs="+", default=[1.0, 0.7])
    parser.add_argument("--algos", nargs="+", default=["vespo", "gspo", "grpo", "sapo"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--buttons", type=int, default=4)
    parser.add_argument("--warm-steps", type=int, default=120,
                        help="format warm-start steps of the start policy")
    parser.add_argument("--steps", type=int, default=30, help="rollout batches per run")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args()
    boards = {s: prepare_board(args.work, s, args.buttons, args.model, args.warm_steps)
              for s in args.seeds}
    grid = [(lr, t, a, s) for lr in args.lrs for t in args.temperatures for a in args.algos
            for s in args.seeds]
    with ThreadPoolExecutor(args.parallel) as pool:
        results = list(pool.map(lambda cell: run_cell(args, boards, *cell), grid))
    write_report(args, results)


def run_cell(args: argparse.Namespace, boards: dict[int, Path], lr: float, temperature: float,
             algo: str, seed: int) -> dict:
    out = args.work / args.model / f"{algo}-lr{lr:g}-T{temperature:g}-s{seed}"
    flags = ["--algo", algo, "--model", start_policy(boards[seed], args.model),
             "--steps", str(args.steps), "--tasks", str(args.tasks), "-G", str(args.group_size),
             "--envs", str(args.tasks * args.group_size), "--max-new-tokens",
             str(args.max_new_tokens), "--lr", f"{lr:g}", "--temperature", f"{temperature:g}",
             "--seed", str(seed), "--checkpoint-every", "10"]
    return {"lr": lr, "temperature": temperature, "algo": algo, "seed": seed,
            **rl_run(out, boards[seed], flags, ROOT)}


def cell_text(runs: list[dict], steps: int) -> str:
    final = mean_interval([final_success(r["rows"]) for r in runs])
    reached = [batches_to(r["rows"], 0.9) for r in runs]
    hit = [b for b in reached if b is not None]
    when = f"{statistics.median(hit):.0f}" if hit else "-"
    warned = sum(any(row.get("warning") for row in r["rows"]) for r in runs)
    return (f"{final[0]:.2f} [{final[1]:.2f}, {final[2]:.2f}]; {len(hit)}/{len(runs)} "
            f"reach 0.9 (median batch {when}); {warned} warned")


def write_report(args: argparse.Namespace, results: list[dict]) -> None:
    name = "REPORT.md" if args.model == "tiny" else f"REPORT_{args.model}.md"
    path = args.out or HERE / name
    head = [f"# RL learning rates: {args.model}", "",
            f"Made by `experiments/learning_rates/run.py` on {platform.machine()} CPU ({os.cpu_count()} "
            f"cores), one torch thread per run, {args.parallel} runs at once. Task family: the "
            f"button board (`webworld.train.sanity`): one page of {args.buttons} buttons with "
            "labels drawn from the seed, one task naming one of them; the start policy was "
            f"trained {args.warm_steps} steps on replies pressing a button at random, so it "
            f"knows the format and succeeds at chance (1/{args.buttons}). Each run: "
            f"{args.steps} rollout batches of {args.tasks} x G={args.group_size} episodes, "
            f"N = 1, warm-up {10} optimiser steps, `--max-new-tokens {args.max_new_tokens}`, "
            f"seeds {', '.join(map(str, args.seeds))} (each seed its own board and start "
            "policy). Cell: final success (mean of the last 3 batches) over the seeds, mean "
            "[95% t-interval]; how many runs reach a 3-batch mean of 0.9, and at which batch "
            "(median); how many runs logged a drift warning (an optimiser step that moved the "
            "policy by more than `max_step_kl`, a KL of 0.1 nats per reply token over the "
            "whole vocabulary). The default is the "
            "largest learning rate at which no run of any algorithm warned.", ""]
    sections = [*head]
    for temperature in args.temperatures:
        sections += [f"## {args.model}, sampling temperature {temperature:g}", "",
                     "| lr | " + " | ".join(args.algos) + " |",
                     "|---|" + "---|" * len(args.algos)]
        for lr in args.lrs:
            cells = [cell_text([r for r in results if r["lr"] == lr and r["algo"] == a and
                                r["temperature"] == temperature], args.steps)
                     for a in args.algos]
            sections.append(f"| {lr:g} | " + " | ".join(cells) + " |")
        sections.append("")
    auc = {(lr, t): statistics.fmean(area_under_curve(r["rows"]) for r in results
                                     if r["lr"] == lr and r["temperature"] == t)
           for lr in args.lrs for t in args.temperatures}
    best = max(auc, key=auc.get)
    calm = {t: max((lr for lr in args.lrs if not any(
        row.get("warning") for r in results if r["lr"] == lr and r["temperature"] == t
        for row in r["rows"])), default=None) for t in args.temperatures}
    wall = sum(r["wall"] for r in results)
    sections += ["Area under the success curve, all algorithms and seeds: " +
                 ", ".join(f"lr {lr:g} T {t:g}: {v:.3f}" for (lr, t), v in auc.items()) +
                 f". Highest: lr {best[0]:g} at temperature {best[1]:g}. Largest learning "
                 "rate at which no run warned: " +
                 ", ".join(f"{lr:g} at temperature {t:g}" for t, lr in calm.items()
                           if lr is not None) + ".", "",
                 "Defaults in `webworld/train/defaults.py`: " +
                 ", ".join(f"{k} {v:g}" for k, v in RL_LEARNING_RATES.items()) + ".", "",
                 f"Wall time of the {len(results)} runs: {wall:.0f} s.", "",
                 "Command of each run (`--lr`, `--temperature`, `--algo`, `--seed` vary):", "",
                 f"    {results[0]['command']}", ""]
    write_keeping_reading(path, "\n".join(sections))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
