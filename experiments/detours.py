"""SFT without the detours of longer paths: does SmolLM2 loop less on new sites?

Explore keeps, for each task instance of learning.py's worlds, one shortest path and one
longer (one FSM action more: a "Was this page helpful?" radio answered on the way, a tab
opened, another option picked before the task's). All verify, so all were taught: at the same
page of the same task, half the chats said "go on" and half "answer the radio". The best SFT
policy's failed held-out episodes repeat an action in 23 of 34 (clicking radio 'Yes' 10 and 13
times, a tab 5). `webworld export` now marks those steps (`detour`, webworld/data/detours.py)
and `train sft --skip-detours` leaves them out. Here learning.py's worlds are exported again
(the same chats as widget_thoughts.py's export, now marked), the same SFT as widget_thoughts.py's
`sft-shuffled` (SmolLM2, `--shuffle-ids`, bf16, seed 0: about 65 minutes on 2 cores) is
trained on the chats that are no detour, and played on the held-out worlds as is and grounded
by name, against widget_thoughts.py's run on all chats. Then the same without detours with
every augmentation that trains reading what a held-out turn must copy (`READING_RUN`): its
misses recall a training site instead (the menu item `Recreation` written “Rerennsics”, a
training persona's password typed for the task's). Writes docs/learning_detours.md.

    .venv/bin/python experiments/detours.py   # after learning.py's build (it exports again)

Each stage resumes (a rerun skips what is done); the record (no weights) is kept in
experiments/results/detours/.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import widget_thoughts  # noqa: E402
from learning import held_out_rows  # noqa: E402
from stages import ROOT, Stages, keep_record, record_parser, rel, require, stage_rows, write_keeping_reading  # noqa: E402, E501

from webworld.fsio import atomic_write_json  # noqa: E402

WORK = ROOT / "runs" / "detours"
RECORD = ROOT / "experiments" / "results" / "detours"
RECORDED = ("stages.json", "eval/*.jsonl", "*/sft_summary.json", "detours.json")
DOC = ROOT / "docs" / "learning_detours.md"
WORLDS = widget_thoughts.WORLDS  # learning.py's training worlds
BEFORE = widget_thoughts.RECORD  # the same SFT on every chat
RUN = "sft-no-detours"
READING_RUN = "sft-reading"  # no detours, and names, values and dates new every epoch
READING_FLAGS = ("--skip-detours", "--rename-choices", "--vary-values", "--vary-dates")
# its grounded row came after grounding stopped trusting a thought that misreads the task
# (the rows above it were grounded before): it compares with widget_thoughts.py's CHECKED row
CHECKED_LABEL = widget_thoughts.CHECKED_LABEL


def count_detours(worlds: Path, data: Path, out: Path) -> dict:
    """The export's training chats and those marked detours, and the detour steps of the
    worlds' longer paths by the FSM action they took (its label)."""
    from webworld.data.detours import detour_steps
    from webworld.data.reading import JsonlRead, iter_verified

    chats = [json.loads(line) for line in (data / "sft" / "train.jsonl").open()]
    labels: Counter[str] = Counter()
    paths = longer = 0
    for world in sorted(p for p in worlds.iterdir() if (p / "verified.jsonl").is_file()):
        by_id = {t["id"]: t for _, t in iter_verified(world, JsonlRead())}
        paths += len(by_id)
        for tid, steps in detour_steps(by_id.values()).items():
            longer += 1
            labels.update({by_id[tid]["steps"][n]["fsm_label"] for n in steps})
    counts = {"training_chats": len(chats), "detour_chats": sum(c["detour"] for c in chats),
              "paths": paths, "longer_paths": longer, "by_action": dict(labels.most_common())}
    atomic_write_json(out, counts)
    return counts


def same_chats(old: Path, new: Path) -> None:
    """The new export's chats are the old one's, word for word (only the marks are new)."""
    def messages(path: Path) -> list[list[dict]]:
        return [json.loads(line)["messages"] for line in path.open()]

    if messages(old / "sft" / "train.jsonl") != messages(new / "sft" / "train.jsonl"):
        raise SystemExit(f"{rel(new)}: its chats differ from {rel(old)}'s; the comparison "
                         "needs the same chats")


def write_page(record: Path, doc: Path) -> None:
    stages = json.loads((record / "stages.json").read_text())
    counts = json.loads(path.read_text()) if (path := record / "detours.json").is_file() else {}
    run = widget_thoughts.RUN
    policies = [("SFT, ids shuffled, every chat", str(BEFORE / "eval" / f"heldout-{run}")),
                ("the same, grounded by name", str(BEFORE / "eval" / f"heldout-{run}-grounded")),
                (CHECKED_LABEL, str(BEFORE / "eval" / f"heldout-{widget_thoughts.CHECKED}")),
                ("SFT, ids shuffled, no detours", f"heldout-{RUN}"),
                ("the same, grounded by name", f"heldout-{RUN}-grounded"),
                ("SFT, ids shuffled, no detours, names, values and dates varied",
                 f"heldout-{READING_RUN}"),
                (CHECKED_LABEL, f"heldout-{READING_RUN}-grounded")]
    kinds = ["| detour (FSM action) | longer paths |", "|---|---|",
             *[f"| {label} | {n} |" for label, n in counts.get("by_action", {}).items()]]
    lines = [
        "# SFT without the detours of longer paths", "",
        "Made by `experiments/detours.py` on this repo's 2-core CPU (record: "
        f"`{rel(record)}/`). learning.py's training worlds, exported as widget_thoughts.py "
        "exports them, now with each step a longer path took that its task did without "
        "marked `detour` (`webworld/data/detours.py`)"
        + (f": {counts['longer_paths']} of {counts['paths']} paths are longer, and "
           f"{counts['detour_chats']} of {counts['training_chats']} training chats are their "
           "detours. " if counts else ". ")
        + "The same SFT as widget_thoughts.py's `sft-shuffled` (learning.py's recipe from "
        "SmolLM2, `--shuffle-ids`, bf16, seed 0) on the chats that are no detour "
        f"(`--skip-detours`){widget_thoughts.sft_note(record / RUN)}. Then that recipe with "
        "every augmentation of `webworld/data/augment.py` that makes a turn's names, values "
        "and dates new each epoch (" + ", ".join(f"`{flag}`" for flag in READING_FLAGS)
        + f"){widget_thoughts.sft_note(record / READING_RUN)}. Greedy, fast env, seed 0; the "
        "rows on every chat are widget_thoughts.py's.", "",
        "## Held-out episodes", "",
        *held_out_rows(record, policies), "",
        "## The detours left out", "", *kinds, "",
        *stage_rows(stages), ""]
    write_keeping_reading(doc, "\n".join(lines))
    print(f"wrote {doc}")


def main() -> None:
    parser = record_parser(WORK, RECORD, DOC)
    args = parser.parse_args()
    if not args.table_only:
        require((WORLDS,), "experiments/learning.py")
        # widget_thoughts.py's export (made again where its folder is gone: 2 minutes)
        old = widget_thoughts.export(Stages(widget_thoughts.WORK), widget_thoughts.WORK)
        args.work.mkdir(parents=True, exist_ok=True)
        stages = Stages(args.work, after=lambda: keep_record(args.work, args.record, RECORDED))
        for run in (RUN, READING_RUN):  # a run played and recorded is not trained again
            stages.restore(args.record, {f"sft {run}": Path(run) / "sft_summary.json", **{
                f"eval heldout-{name}": Path("eval") / f"heldout-{name}.jsonl"
                for name in (run, f"{run}-grounded")}})
        data = widget_thoughts.export(stages, args.work)
        same_chats(old, data)
        count_detours(WORLDS, data, args.work / "detours.json")
        keep_record(args.work, args.record, RECORDED)
        widget_thoughts.train_and_play(stages, args.work, data, RUN, "--skip-detours", turns=False)
        widget_thoughts.train_and_play(stages, args.work, data, READING_RUN, *READING_FLAGS,
                                       turns=False)
    write_page(args.record, args.doc)


if __name__ == "__main__":
    main()
