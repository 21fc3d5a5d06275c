"""The README's tiny example, run as written (default settings throughout): one easy world,
its compact SFT export, `train sft --model tiny`, `train rl --from-goal 1`; writes
docs/tiny_tour.md with the rollout success per batch and the wall time of every stage.

    .venv/bin/python experiments/tiny_tour.py    # about 5 min on 2 cores, 6 more to compare
    .venv/bin/python experiments/tiny_tour.py --theme "car rental"

Each stage is a `webworld` command, skipped when its output is there (rerun after a kill).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rl_runs import ROOT, rel  # noqa: E402  (experiments/ is on the path)
from stages import Stages, write_keeping_reading  # noqa: E402

MEANS = ("sequence", "token")  # VESPO's vespo_reduction


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--theme", default="online bookstore")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "tiny_tour")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "tiny_tour.md")
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2],
                        help="seeds of the comparison of VESPO's two means (none: skip it)")
    args = parser.parse_args()
    work = args.work
    worlds, data = work / "worlds", work / "compact"
    stages = Stages(work)
    stages.run("build", ["build", "--theme", args.theme, "--profile", "easy",
                         "--specs-out", rel(worlds / "specs"), "--sites-out",
                         rel(worlds / "sites"), "--out", rel(worlds / "trajectories"),
                         "--dataset-out", rel(work / "dataset")], worlds / "trajectories")
    stages.run("export", ["export", rel(worlds / "trajectories"), "--out", rel(data),
                          "--format", "sft", "--observation", "compact"], data / "manifest.json")
    stages.run("sft", ["train", "sft", "--data", rel(data), "--model", "tiny", "--out",
                       rel(work / "sft")], work / "sft" / "model" / "config.json")
    stages.run("rl", ["train", "rl", "--model", rel(work / "sft" / "model"), "--worlds",
                      rel(worlds), "--from-goal", "1", "--out", rel(work / "rl")],
               work / "rl" / "model" / "config.json")
    comparison = compare_means(work, worlds, stages, args.seeds)
    write_report(args, work, stages.log, comparison)


def compare_means(work: Path, worlds: Path, stages: Stages, seeds: list[int]) -> list[str]:
    """The RL stage again with VESPO's two means (per episode, the default; over all tokens of
    the batch, the paper's), paired by seed: a table of rollout success, first to last third."""
    lines = ["| seed | " + " | ".join(f"{m} mean: success first -> last third (max entropy)"
                                      for m in MEANS) + " |", "|---|---|---|"]
    for seed in seeds:
        cells = []
        for mean in MEANS:
            config = work / f"vespo-{mean}.toml"
            config.write_text(f'[loss]\nvespo_reduction = "{mean}"\n')
            out = work / "compare" / f"{mean}-s{seed}"
            stages.run(f"rl, {mean} mean, seed {seed}",
                       ["train", "rl", "--config", rel(config), "--model",
                        rel(work / "sft" / "model"), "--worlds", rel(worlds), "--from-goal", "1",
                        "--out", rel(out), "--seed", str(seed)], out / "model" / "config.json")
            rows = _rows(out)
            first, last = _thirds([r["success_rate"] for r in rows])
            entropy = max(r["entropy"] for r in rows)
            cells.append(f"{first:.2f} -> {last:.2f} ({last - first:+.2f}; {entropy:.1f})")
        lines.append(f"| {seed} | " + " | ".join(cells) + " |")
    return lines


def _rows(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]


def _thirds(values: list[float]) -> tuple[float, float]:
    third = max(len(values) // 3, 1)
    return statistics.fmean(values[:third]), statistics.fmean(values[-third:])


def write_report(args: argparse.Namespace, work: Path, log: dict, comparison: list[str]
                 ) -> None:
    rows = _rows(work / "rl")
    config = json.loads((work / "rl" / "config.json").read_text())
    sft = json.loads((work / "sft" / "sft_summary.json").read_text())
    success = [r["success_rate"] for r in rows]
    third = max(len(success) // 3, 1)
    first, last = _thirds(success)
    warned = sum(bool(r.get("warning")) for r in rows)
    docs = args.out.parent
    shutil.copyfile(work / "rl" / "curves.png", docs / "tiny_tour_curves.png")
    lines = [
        "# The README's tiny example", "",
        f"Made by `experiments/tiny_tour.py` on {platform.machine()} CPU ({os.cpu_count()} "
        f"cores): theme {args.theme!r}, profile easy, default settings throughout. SFT: "
        f"{sft['steps']} steps (learning rate {sft['settings']['learning_rate']:g}), "
        f"{sft['train_chats']} chats, train loss {sft['train_loss']:.3f}. RL: {config['algo']}, "
        f"{config['steps']} rollout batches of {config['tasks_per_step']} x "
        f"G={config['group_size']} episodes, learning rate {config['learning_rate']:g} (warm-up "
        f"{config['warmup_steps']}), temperature {config['temperature']:g}, observation "
        f"{config['observation']}, each episode starting 1 step before the goal of its "
        "verified path.", "",
        f"Rollout success: {first:.2f} over the first {third} batches, {last:.2f} over the "
        f"last {third}; drift warnings: {warned}.", "",
        "| batch | " + " | ".join(str(r["step"]) for r in rows) + " |",
        "|---|" + "---|" * len(rows),
        "| success | " + " | ".join(f"{s:.2f}" for s in success) + " |", "",
        "![curves of the RL run](tiny_tour_curves.png)", "",
        "VESPO's mean, per episode (the default) against the paper's over all tokens of the "
        "batch: the RL stage again for each, same SFT policy, paired by seed.", "",
        *comparison, "",
        "| stage | wall (s) | command |", "|---|---|---|",
        *[f"| {name} | {entry['wall']:.0f} | `{entry['command']}` |"
          for name, entry in log.items()], ""]
    write_keeping_reading(args.out, "\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
