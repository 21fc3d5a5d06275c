"""SFT, then RL (VESPO), on training worlds; success on the held-out worlds before SFT, after
SFT and after RL, with wall times and the commands; writes docs/train_vespo.md.

    .venv/bin/python experiments/train_vespo.py            # what docs/ shows
    .venv/bin/python experiments/train_vespo.py --quick    # a smoke run (3 worlds, few steps)

Every stage is a `webworld` command, skipped when its output is there, and the long ones
resume from their checkpoints: rerun the script after a kill. The policy is ``tiny`` (a
random-init 1.4M-parameter transformer with the package's own tokenizer) by default:
SmolLM2-135M does not train in two hours on 2 CPU cores (``--model smollm2`` on a GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stages import Stages, rel, write_keeping_reading  # noqa: E402

from webworld.eval.results import Rate, read_results  # noqa: E402

# training themes: one per archetype, none of the held-out archetypes (coworking,
# government_form, pet_adoption: webworld/data/heldout.json)
THEMES = ["online bookstore", "flight booking", "hotel booking", "online bank", "email inbox",
          "discussion forum", "recipe site", "job board", "real estate", "food delivery",
          "doctor clinic", "online courses", "event tickets", "car rental", "project tracker",
          "music streaming", "news portal", "public library", "support desk", "fitness gym"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "train_vespo")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "train_vespo.md")
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sft-epochs", type=float, default=8.0)
    parser.add_argument("--rl-steps", type=int, default=30)
    parser.add_argument("--rl-tasks", type=int, default=4, help="task instances per batch (x G=4)")
    parser.add_argument("--rl-from-goal", type=int, default=2,
                        help="RL episodes start this many steps before the goal (0: whole tasks)")
    parser.add_argument("--eval-episodes", type=int, default=1)
    parser.add_argument("--table-only", action="store_true", help="write docs from what ran")
    args = parser.parse_args()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    stages = Stages(work)
    themes = THEMES[:3] if args.quick else THEMES
    if args.table_only:
        return write_table(args, stages, themes)
    worlds = work / "worlds"
    build = ["build", "--profile", "easy", "--seed", str(args.seed),
             "--specs-out", rel(worlds / "specs"), "--sites-out", rel(worlds / "sites"),
             "--out", rel(worlds / "trajectories"), "--dataset-out", rel(work / "dataset-full")]
    for theme in themes:
        build += ["--theme", theme]
    stages.run("build worlds", build, worlds / "sites")
    stages.run("export (compact)", ["export", rel(worlds / "trajectories"), "--out",
                                    rel(work / "dataset"), "--format", "sft", "--observation",
                                    "compact", "--seed", str(args.seed)],
               work / "dataset" / "sft" / "train.jsonl")
    stages.run("fast-env snapshots", ["env", "snapshot", "--sites", rel(worlds / "sites")],
               worlds / ".snapshots")
    (worlds / ".snapshots").touch()
    heldout = work / "heldout"
    evaluate = ["eval", "--suite", "heldout", "--heldout-dir", rel(heldout), "-n",
                str(args.eval_episodes), "--seed", str(args.seed), "--observation", "compact",
                "--traces", "0", "--workers", "4"]
    base = work / "base-model"
    if not base.is_dir():  # the random-init policy, saved so `hf:` can load it
        from webworld.train.models import load_policy, save_policy

        save_policy(*load_policy(args.model, seed=args.seed), base)
    sft = work / "sft"
    stages.run("SFT", ["train", "sft", "--data", rel(work / "dataset"), "--model", args.model,
                       "--out", rel(sft), "--epochs", str(1 if args.quick else args.sft_epochs),
                       "--lr", "1e-3", "--batch-size", "16", "--max-length", "1024",
                       "--seed", str(args.seed)], sft / "model")
    stages.run("eval after SFT", [*evaluate, "--policy", f"hf:{rel(sft / 'model')}", "--out",
                                  rel(work / "eval-sft.jsonl")], work / "eval-sft.jsonl")
    rl = work / "rl"
    rl_args = ["train", "rl", "--algo", "vespo", "--model", rel(sft / "model"), "--worlds",
               rel(worlds), "--env", "fast", "--out", rel(rl), "--steps",
               str(3 if args.quick else args.rl_steps), "--tasks", str(args.rl_tasks), "-G", "4", "-N", "2",
               "--lr", "3e-4", "--seed", str(args.seed), "--checkpoint-every", "5",
               "--from-goal", str(args.rl_from_goal), "--temperature", "0.5"]
    if (rl / "checkpoints").is_dir():
        rl_args.append("--resume")
    stages.run("RL (VESPO)", rl_args, rl / "model")
    stages.run("eval after RL", [*evaluate, "--policy", f"hf:{rel(rl / 'model')}", "--out",
                                 rel(work / "eval-rl.jsonl")], work / "eval-rl.jsonl")
    # the random-init policy last: its replies are the longest (never a stop token)
    stages.run("eval before SFT", [*evaluate, "--policy", f"hf:{rel(base)}", "--out",
                                   rel(work / "eval-base.jsonl")], work / "eval-base.jsonl")
    write_table(args, stages, themes)


def write_table(args: argparse.Namespace, stages: Stages, themes: list[str]) -> None:
    work = args.work
    rows = ["| policy | held-out episodes | success [95% CI] | mean steps | unparsable steps |",
            "|---|---|---|---|---|"]
    for label, name, stage in (("before SFT (random init)", "eval-base", "eval before SFT"),
                               ("after 1 SFT epoch (an earlier, shorter run)", "eval-sft-1epoch",
                                "eval after SFT (1 epoch)"),
                               ("after SFT", "eval-sft", "eval after SFT"),
                               ("after SFT + RL (VESPO)", "eval-rl", "eval after RL")):
        records = read_results(work / f"{name}.jsonl")
        if not records and name == "eval-sft-1epoch":
            continue
        if not records:
            rows.append(f"| {label} | not run yet | | | |")
            continue
        if stage not in stages.log:
            label += " (stopped part way; the rerun resumes it)"
        rate = Rate("heldout", len(records), sum(r["success"] for r in records))
        steps = sum(r["steps"] for r in records)
        syntax = sum(e["code"] == "syntax" for r in records for e in r["errors"])
        rows.append(f"| {label} | {rate.episodes} | {rate.shown()} | "
                    f"{steps / max(len(records), 1):.1f} | {syntax}/{steps} |")
    sft_file, rl_file = work / "sft" / "sft_summary.json", work / "rl" / "metrics.jsonl"
    sft = json.loads(sft_file.read_text()) if sft_file.is_file() else {}
    rl_rows = [json.loads(x) for x in rl_file.read_text().splitlines()] if rl_file.is_file() else []
    first, last = rl_rows[:5], rl_rows[-5:]

    def mean(rows: list[dict], key: str) -> float:
        return sum(r[key] for r in rows) / max(len(rows), 1)

    lines = [
        "# SFT then RL (VESPO) on training worlds, scored on the held-out worlds", "",
        f"Made by `experiments/train_vespo.py{' --quick' if args.quick else ''}` (seed "
        f"{args.seed}) on {platform.machine()} CPU ({os.cpu_count()} cores), {platform.system()}; "
        f"policy `{args.model}`; {len(themes)} easy training worlds (one per archetype, none of "
        "the held-out archetypes); compact observations; held-out suite: "
        "`webworld/eval/heldout.json` (live sites in Chromium).", "",
        *rows, "",
        f"SFT: {sft.get('steps')} steps, train loss {sft.get('train_loss', 0):.3f}, validation "
        f"loss per "
        f"epoch {', '.join(f'{v:.3f}' for v in sft.get('validation_losses', []))}.", "",
        f"RL (fast env, training worlds): success rate of the rollouts, first 5 batches "
        f"{mean(first, 'success_rate'):.3f}, last 5 batches {mean(last, 'success_rate'):.3f} "
        f"({len(rl_rows)} batches of {4 * args.rl_tasks} episodes). "
        "Curves: `runs/train_vespo/rl/curves.png`, "
        "copied to `docs/train_vespo_curves.png`.", "",
        "| stage | wall (s) | command |", "|---|---|---|",
        *[f"| {name} | {s['wall']:.0f} | `{s['command']}` |" for name, s in stages.log.items()],
        ""]
    write_keeping_reading(args.out, "\n".join(lines))
    curves = work / "rl" / "curves.png"
    if curves.is_file():
        (args.out.parent / "train_vespo_curves.png").write_bytes(curves.read_bytes())
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
