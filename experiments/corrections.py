"""DAgger corrections for learning.py's SFT policy: its own greedy episodes on the ten training
worlds (and those of the RL policies trained from it, which err near it), replayed in the fast
env and relabelled with the verified action wherever they erred on a verified path
(`webworld train corrections`); SFT goes on from the policy on those chats and as many of the
export's own; then the policy before and after, greedy, fast env, on the training worlds and
on the held-out suite. Writes docs/learning_corrections.md.

    .venv/bin/python experiments/corrections.py               # after learning.py --until sft
    .venv/bin/python experiments/corrections.py --table-only  # the page from the record

The episodes are the committed evals of the GPU leases (experiments/results/learning-gpu*/),
so the corrections are the same bytes on any machine. Every stage is skipped when its output
is there, and SFT and the evals resume: rerun after a kill.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from learning import Evals, held_out_rows, policy_rows  # noqa: E402
from stages import ROOT, Stages, keep_record, rel, write_keeping_reading  # noqa: E402

RESULTS = ROOT / "experiments" / "results"
RECORD = RESULTS / "corrections"
RECORDED = ("stages.json", "eval/train-sft-*.jsonl", "eval/heldout-sft-*-fast.jsonl",
            "data-corrected/corrections.json", "sft-corrected/sft_summary.json")
DOC = ROOT / "docs" / "learning_corrections.md"
START = "sft-relabel"  # learning.py's SFT of record
# one epoch over the corrections and as many of the export's chats, at half the family's
# SFT rate (the policy is trained already; 1e-3 was its peak)
SFT_FLAGS = ["--relabel-ids", "--epochs", "1", "--min-steps", "100", "--lr", "5e-4"]
POLICIES = [("after SFT", START), ("after SFT, then corrections", "sft-corrected")]


def episodes() -> list[Path]:
    """The evaluated episodes the corrections come from: every policy of the GPU leases on
    the training worlds (copies of one file counted once)."""
    seen, out = set(), []
    for path in sorted(RESULTS.glob("learning-gpu*/eval/train-*.jsonl")):
        if path.read_bytes() not in seen:
            seen.add(path.read_bytes())
            out.append(path)
    return out


def run(work: Path, stages: Stages) -> None:
    data, worlds = work / "data-corrected", work / "train-worlds"
    stages.run("corrections", ["train", "corrections",
                               *[a for p in episodes() for a in ("--results", rel(p))],
                               "--worlds", rel(worlds), "--data", rel(work / "data"),
                               "--out", rel(data)], data / "corrections.json")
    sft = work / "sft-corrected"
    stages.run("SFT with corrections", ["train", "sft", "--data", rel(data), "--model",
                                        rel(work / START / "model"), "--out", rel(sft),
                                        *SFT_FLAGS], sft / "model")
    evals = Evals(stages, work, quick=False)
    for _, name in POLICIES:
        policy = f"hf:{rel(work / name / 'model')}"
        evals.run(f"train-{name}", rel(worlds), policy, "--fast")
        evals.run(f"heldout-{name}-fast", "heldout", policy, "--fast")


def changed(record: Path, before: str, after: str) -> str:
    """Episodes the corrections won and lost: results file ``after`` against ``before``."""
    from webworld.eval.results import read_results

    first, second = ({(r["task"], r["episode"]): r["success"]
                      for r in read_results(record / "eval" / f"{name}.jsonl")}
                     for name in (before, after))
    both = first.keys() & second.keys()
    won = sum(second[k] and not first[k] for k in both)
    lost = sum(first[k] and not second[k] for k in both)
    return f"of {len(both)} episodes, {won} won and {lost} lost" if both else "not run yet"


def write_page(record: Path, doc: Path) -> None:
    stages = json.loads((record / "stages.json").read_text())
    counts_path = record / "data-corrected" / "corrections.json"
    counts = json.loads(counts_path.read_text()) if counts_path.is_file() else {}
    summary_path = record / "sft-corrected" / "sft_summary.json"
    sft = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    names = [(label, f"train-{name}") for label, name in POLICIES]
    held = [(label, f"heldout-{name}-fast") for label, name in POLICIES]
    ran = [f"| {name} | {int(s['wall'])} | `{s['command']}` |" for name, s in stages.items()
           if name in ("corrections", "SFT with corrections") or any(
               n in name for _, n in names + held)]
    lines = [
        "# DAgger corrections for SmolLM2 after SFT", "",
        "Made by `experiments/corrections.py` (from `experiments/results/corrections/`). After "
        "SFT, most held-out failures are loops: the policy repeats an action on a page it did not "
        "change, a history it never saw in the export (every chat there has a history of right "
        "actions). `webworld train corrections` replays a policy's evaluated episodes in the "
        "fast env and, wherever one stood on a page of its task's verified path in the same "
        "true state after erring there or earlier, writes the chat with the policy's own "
        "history answered with the verified action (DAgger: Ross, Gordon and Bagnell 2011).", "",
        f"Episodes relabelled: the GPU leases' greedy evals of the SFT policy and of nine RL "
        f"policies from it on the ten training worlds ({counts.get('from_episodes', '-')} "
        f"corrected turns, {counts.get('corrections', '-')} distinct), beside "
        f"{counts.get('original', '-')} chats of the export drawn at random. SFT from the "
        f"policy: `{' '.join(SFT_FLAGS)}`"
        + (f", {sft['steps']} steps in {sft['seconds']:.0f} s on this machine's CPU, validation "
           f"loss {', '.join(f'{v:.3f}' for v in sft['validation_losses'])} (before: 0.143)"
           if sft else "") + ".", "",
        "Greedy, fast env, on the CPU.", "",
        "## Held-out worlds", "",
        *held_out_rows(record, held), "",
        f"Corrections against SFT alone: {changed(record, *(n for _, n in held))}.", "",
        "## Training worlds, whole tasks (the worlds the corrections came from)", "",
        *policy_rows(record, names, ["policy", "episodes", "success [95% CI]",
                                     "failure reasons"], lambda records: []), "",
        f"Corrections against SFT alone: {changed(record, *(n for _, n in names))}.", "",
        "## Stages", "", "| stage | wall (s) | command |", "|---|---|---|", *ran, ""]
    write_keeping_reading(doc, "\n".join(lines))
    print(f"wrote {doc}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "learning")
    parser.add_argument("--table-only", action="store_true", help="the page from the record")
    args = parser.parse_args()
    if not args.table_only:
        stages = Stages(args.work, after=lambda: keep_record(args.work, RECORD, RECORDED))
        run(args.work, stages)
    write_page(RECORD, DOC)


if __name__ == "__main__":
    main()
