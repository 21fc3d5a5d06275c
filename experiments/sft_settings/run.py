"""SFT settings for a model family, by measurement: learning rate x trained top layers, each a
short `webworld train sft` run from the same start on the same batches, scored by the validation
loss it reaches and the wall time it took; writes its REPORT.md beside this script.

    .venv/bin/python experiments/sft_settings/run.py --data runs/smollm2/data     # SmolLM2, ~1 h
    .venv/bin/python experiments/sft_settings/run.py --data runs/smollm2/data --grid 1e-3:8 \
        1e-3:8:30:bf16 --out experiments/sft_settings/precision.md  # fp32 against bf16 compute

Runs are resumable stages (a rerun skips the finished ones). The validation split is cut to
``--validation`` turns (every validation world alike) so scoring stays cheap.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
from pathlib import Path

from webworld.study import Stages, write_keeping_reading

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def rel(path: Path) -> str:
    return os.path.relpath(path, ROOT)


def sweep_data(data: Path, target: Path, validation: int, seed: int) -> Path:
    """The export's training chats and a seeded sample of its validation chats."""
    if (target / "sft" / "validation.jsonl").is_file():
        return target
    (target / "sft").mkdir(parents=True, exist_ok=True)
    shutil.copy(data / "manifest.json", target / "manifest.json")
    shutil.copy(data / "sft" / "train.jsonl", target / "sft" / "train.jsonl")
    lines = (data / "sft" / "validation.jsonl").read_text(encoding="utf-8").splitlines()
    random.Random(seed).shuffle(lines)
    (target / "sft" / "validation.jsonl").write_text("\n".join(lines[:validation]) + "\n",
                                                     encoding="utf-8")
    return target


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True, help="a compact SFT export")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "sft_sweep")
    parser.add_argument("--out", type=Path, default=HERE / "REPORT.md")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--validation", type=int, default=64)
    parser.add_argument("--grid", nargs="*", default=["1e-4:8", "3e-5:8", "3e-4:8", "1e-4:4",
                                                      "3e-4:4", "3e-4:0", "1e-3:8", "1e-3:8:90"],
                        help="learning rate:trained top layers (0: the whole model)"
                             "[:steps[:precision, fp32 or bf16]]")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    data = sweep_data(args.data, args.work / "data", args.validation, 0)
    stages = Stages(args.work, ROOT)
    results = []
    for cell in args.grid:
        lr, layers, *more = cell.split(":")
        steps = int(more[0]) if more and more[0] else args.steps
        precision = more[1] if len(more) > 1 else "fp32"
        out = args.work / (f"{args.model}-lr{lr}-top{layers}" + (f"-{steps}" if more else "")
                           + ("" if precision == "fp32" else f"-{precision}"))
        stages.run(cell, ["train", "sft", "--data", rel(data), "--model", args.model, "--out",
                          rel(out), "--max-steps", str(steps), "--lr", lr,
                          "--train-layers", layers, "--seed", "0", "--precision", precision],
                   out / "sft_summary.json")
        summary = json.loads((out / "sft_summary.json").read_text())
        results.append((lr, layers, steps, precision, summary, stages.log[cell]["wall"]))
    rows = ["| learning rate | trained layers | steps | compute | validation loss | "
            "train loss (mean) | wall (s) |", "|---|---|---|---|---|---|---|"]
    for lr, layers, steps, precision, summary, wall in results:
        shown = "whole model" if layers == "0" else f"top {layers}"
        rows.append(f"| {lr} | {shown} | {steps} | {precision} | "
                    f"{summary['validation_losses'][-1]:.3f} | {summary['train_loss']:.3f} | "
                    f"{wall:.0f} |")
    command = (f"webworld train sft --data {rel(data)} --model {args.model} --max-steps "
               f"STEPS --lr LR --train-layers K --seed 0 --precision P")
    lines = [f"# SFT settings: {args.model}", "",
             f"Made by `experiments/sft_settings/run.py` on {platform.machine()} CPU "
             f"({os.cpu_count()} cores): optimiser steps of 8 chats ({args.steps} unless the table "
             f"says more) from the same start and the same batches, then the validation loss on "
             f"{args.validation} "
             f"validation turns (data: `{rel(args.data)}`). Wall time includes loading and "
             "saving.", "", *rows, "", "Command of each run:", "", f"    {command}", ""]
    write_keeping_reading(args.out, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
