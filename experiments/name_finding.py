"""Does renaming the named choice teach SmolLM2 to find a task's words on a new page? A CPU
check of `--rename-choices` before a GPU lease trains on it (data_scale.py's
``sft-scale-names``): learning.py's SFT policy fine-tuned for a few steps on its own export,
once with ids relabelled (the control: as many more steps, as it was trained) and once with
named choices renamed as well, each then asked the held-out worlds' turns and the validation
turns with their named choices renamed. Writes docs/learning_names.md.

    .venv/bin/python experiments/name_finding.py        # after learning.py and data_scale.py

Each stage resumes (a rerun skips what is done); the record (no weights) is kept in
experiments/results/name-finding/.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data_scale  # noqa: E402
from learning import TURNS_SAMPLE, turn_row  # noqa: E402
from stages import ROOT, Stages, keep_record, rel, write_keeping_reading  # noqa: E402

WORK = ROOT / "runs" / "names"
RECORD = ROOT / "experiments" / "results" / "name-finding"
RECORDED = ("stages.json", "eval/*.json", "*/sft_summary.json")
DOC = ROOT / "docs" / "learning_names.md"
BASE = data_scale.BASE  # learning.py's run: its export and SFT
START = BASE / "sft-relabel"  # learning.py's SFT run RL starts from
HELDOUT_TURNS = data_scale.WORK / "heldout-data" / "sft" / "test.jsonl"  # data_scale.py's export
FINE_TUNES = {"ft-control": ["--relabel-ids"], "ft-renamed": ["--relabel-ids", "--rename-choices"]}
LABELS = {"sft-relabel": "learning.py's SFT, ids relabelled",
          "ft-control": "+ steps, ids relabelled (control)",
          "ft-renamed": "+ steps, ids relabelled, named choices renamed"}
# what each policy is asked: held-out worlds' turns as exported, validation turns renamed
ASKED = {"heldout": ("held-out worlds", HELDOUT_TURNS, []),
         "renamed": ("validation worlds, named choices renamed",
                     BASE / "data" / "sft" / "validation.jsonl", ["--rename-choices"])}


def fine_tune(stages: Stages, work: Path, name: str, steps: int, lr: str) -> Path:
    out = work / name
    stages.run(f"fine-tune {name}", [
        "train", "sft", "--data", rel(BASE / "data"), "--model", rel(START / "model"),
        "--out", rel(out), "--max-steps", str(steps), "--lr", lr, "--seed", "0",
        *FINE_TUNES[name]], out / "sft_summary.json")
    return out


def ask(stages: Stages, work: Path, name: str, model: Path) -> None:
    for what, (_, chats, flags) in ASKED.items():
        result = work / "eval" / f"turns-{what}-{name}.json"
        stages.run(f"eval {result.stem}", [
            "eval", "turns", rel(chats), "--policy", f"hf:{rel(model)}", "-n", str(TURNS_SAMPLE),
            "--seed", "0", "--out", rel(result), *flags], result)


def grounding_row(label: str, path: Path) -> str:
    """Missed turns, those whose thought found the element but whose id is another's, and
    those of them off by one line."""
    if not path.is_file():
        return f"| {label} | not run yet | | |"
    got = json.loads(path.read_text())
    if any("thought" not in m for m in got["misses"]):
        return f"| {label} | {got['turns'] - got['correct']} | not recorded (an older eval) | |"
    found = [m for m in got["misses"] if m["right_thought_wrong_id"]]
    beside = sum(abs(bid(m["answered_element"]) - bid(m["recorded_element"])) == 1 for m in found)
    return f"| {label} | {got['turns'] - got['correct']} | {len(found)} | {beside} |"


def bid(line: str) -> int:
    return int(line[1:line.index("]")])


def write_page(record: Path, doc: Path, steps: int, lr: str) -> None:
    from webworld.eval.turns import KINDS

    stages = json.loads((record / "stages.json").read_text())
    summaries = {name: json.loads(path.read_text()) for name in FINE_TUNES
                 if (path := record / name / "sft_summary.json").is_file()}
    header = ("| policy | turns of | turns | answered as recorded [95% CI] | well-formed | "
              + " | ".join(KINDS) + " |")
    lines = [
        "# Does renaming named choices teach SmolLM2 to find them?", "",
        "Made by `experiments/name_finding.py` on this repo's 2-core CPU (record: "
        f"`{rel(record)}/`). Held-out episodes fail most where the task names one of several "
        "siblings and the policy picks another (`docs/learning_scale.md`, `webworld eval "
        "diverge`). `--rename-choices` gives the named element new words in task and page every "
        "epoch. Here learning.py's SFT policy (`sft-relabel`, 3 epochs) is trained "
        f"{steps} more optimiser steps of 8 chats (learning rate {lr}, seed 0) on its own export, "
        "with and without renaming, and each is asked "
        f"{TURNS_SAMPLE} turns (seed 0) with their verified history (`webworld eval turns`): "
        "the held-out worlds' verified steps (`data_scale.py`'s export), and the validation "
        "worlds' with named choices renamed. The control separates renaming from the extra "
        "steps.", "",
        *[f"- `{name}`: train loss {s['train_loss']:.3f}, validation loss "
          f"{s['validation_losses'][-1]:.3f}" for name, s in summaries.items()], "",
        header, "|---|" + "---|" * (4 + len(KINDS)),
        *[turn_row([label, what_label], record / "eval" / f"turns-{what}-{name}.json")
          for what, (what_label, _, _) in ASKED.items() for name, label in LABELS.items()], "",
        "## Found, then not copied", "",
        "The held-out turns each policy missed, by what its reply's thought says: how many name "
        "the recorded element (“Europe”) while the action acts on another element, and how many "
        "of those act on the line next to it (ids are the page's order there).", "",
        "| policy | missed turns | thought names the right element, id another's | of which "
        "the next or previous line's |", "|---|---|---|---|",
        *[grounding_row(label, record / "eval" / f"turns-heldout-{name}.json")
          for name, label in LABELS.items()], "",
        "## Stages", "", "| stage | wall (s) | command |", "|---|---|---|",
        *[f"| {name} | {int(s['wall'])} | `{s['command']}` |" for name, s in stages.items()], ""]
    write_keeping_reading(doc, "\n".join(lines))
    print(f"wrote {doc}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--record", type=Path, default=RECORD)
    parser.add_argument("--doc", type=Path, default=DOC)
    parser.add_argument("--steps", type=int, default=100, help="fine-tuning optimiser steps")
    parser.add_argument("--lr", default="3e-4", help="fine-tuning peak learning rate")
    parser.add_argument("--table-only", action="store_true", help="the page from the record")
    args = parser.parse_args()
    if not args.table_only:
        for needed in (START / "model", HELDOUT_TURNS):
            if not needed.exists():
                raise SystemExit(f"{rel(needed)}: not here; run experiments/learning.py and "
                                 "experiments/data_scale.py first")
        args.work.mkdir(parents=True, exist_ok=True)
        stages = Stages(args.work)
        ask(stages, args.work, "sft-relabel", START / "model")
        for name in FINE_TUNES:
            ask(stages, args.work, name, fine_tune(stages, args.work, name, args.steps, args.lr) / "model")
        keep_record(args.work, args.record, RECORDED)
    write_page(args.record, args.doc, args.steps, args.lr)


if __name__ == "__main__":
    main()
