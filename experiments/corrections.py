"""DAgger corrections for learning.py's SFT policy: its own greedy episodes on the ten training
worlds (and those of the RL policies trained from it, which err near it), replayed in the fast
env and relabelled with the verified action wherever they erred on a verified path
(`webworld train corrections`); SFT goes on from the policy on those chats and as many of the
export's own; then the new policy, greedy, fast env, on the training worlds and on the
held-out suite, beside the policy before (its GPU lease's evals). Writes
docs/learning_corrections.md.

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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from learning import Evals, held_out_rows, policy_rows  # noqa: E402
from stages import ROOT, Stages, keep_record, rel, write_keeping_reading  # noqa: E402

RESULTS = ROOT / "experiments" / "results"
RECORD = RESULTS / "corrections"
RECORDED = ("stages.json", "eval/*-sft-corrected*.jsonl", "data-corrected/corrections.json",
            "sft-corrected/sft_summary.json")
# the policy before the corrections: the first GPU lease's greedy evals of these weights (a CPU
# eval of the same weights played its first 32 training-world episodes action for action alike)
BASELINE = RESULTS / "learning-gpu"
DOC = ROOT / "docs" / "learning_corrections.md"
START = "sft-relabel"  # learning.py's SFT of record
# one epoch over the corrections and as many of the export's chats, at half the family's
# SFT rate (the policy is trained already; 1e-3 was its peak)
SFT_FLAGS = ["--relabel-ids", "--epochs", "1", "--min-steps", "100", "--lr", "5e-4"]
NEW = "sft-corrected"


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
    policy = f"hf:{rel(sft / 'model')}"
    evals.run(f"train-{NEW}", rel(worlds), policy, "--fast")
    evals.run(f"heldout-{NEW}-fast", "heldout", policy, "--fast")


def changed(before: Path, after: Path) -> str:
    """Episodes the corrections won and lost: results file ``after`` against ``before``."""
    from webworld.eval.results import read_results

    first, second = ({(r["task"], r["episode"]): r["success"] for r in read_results(path)}
                     for path in (before, after))
    both = first.keys() & second.keys()
    won = sum(second[k] and not first[k] for k in both)
    lost = sum(first[k] and not second[k] for k in both)
    return f"of {len(both)} episodes, {won} won and {lost} lost" if both else "not run yet"


def compared(rows: Callable[[Path, list[tuple[str, str]]], list[str]], baseline: Path,
             record: Path, suite: str) -> list[str]:
    """One table of the policy before (from the record ``baseline``) and after the
    corrections, and the episodes that changed."""
    first, second = f"{suite}-{START}", f"{suite}-{NEW}" + ("-fast" if suite == "heldout" else "")
    before = rows(baseline, [("after SFT (GPU lease)", first)])
    after = rows(record, [("after SFT, then corrections", second)])
    files = (baseline / "eval" / f"{first}.jsonl", record / "eval" / f"{second}.jsonl")
    return [*before, *after[2:], "", f"Corrections against SFT alone: {changed(*files)}."]


def training_table(folder: Path, policies: list[tuple[str, str]]) -> list[str]:
    return policy_rows(folder, policies, ["policy", "episodes", "success [95% CI]",
                                          "failure reasons"], lambda records: [])


def write_page(record: Path, doc: Path, baseline: Path = BASELINE) -> None:
    stages = json.loads((record / "stages.json").read_text())
    counts_path = record / "data-corrected" / "corrections.json"
    counts = json.loads(counts_path.read_text()) if counts_path.is_file() else {}
    summary_path = record / "sft-corrected" / "sft_summary.json"
    sft = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    ran = [f"| {name} | {int(s['wall'])} | `{s['command']}` |" for name, s in stages.items()
           if name in ("corrections", "SFT with corrections") or NEW in name]
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
        "Greedy, fast env. The policy after the corrections ran on the CPU; the one before on "
        f"a GPU lease (`{rel(baseline / 'eval')}`): greedy decoding of these weights is the same there "
        "(a CPU eval played its first 32 training-world episodes action for action alike).", "",
        "## Held-out worlds", "",
        *compared(held_out_rows, baseline, record, "heldout"), "",
        "## Training worlds, whole tasks (the worlds the corrections came from)", "",
        *compared(training_table, baseline, record, "train"), "",
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
