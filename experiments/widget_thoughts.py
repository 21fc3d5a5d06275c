"""Thoughts that name the control each gesture clicks: does SFT on them help SmolLM2 through
a date picker on new sites?

Until `webworld/data/thoughts.py` named each gesture's own control, both clicks of a date
picker (open the calendar, click the day) were taught with the thought of the field they set
("I select “2027-03-27” for Date"), a name that is on neither button; 8 of the 40 held-out
failures of the best row (`sft-shuffled`, grounded by name) left the verified path at a date
picker. Here learning.py's worlds are exported again with the current thoughts and
name_finding.py's SFT from SmolLM2 with ids in no page order (the same recipe, seed and bf16
compute: about 70 minutes on 2 cores) is trained on that export, then asked the held-out turns
and played on the held-out worlds, as is and grounded by name, against name_finding.py's run
on the old export. Then the same SFT with each epoch's dates moved to other days of their
month (`--vary-dates`: 28 training turns pick a day, among 8 dates, and the run above still
clicked the wrong day in 6 held-out episodes), played on the held-out worlds the same two ways.
Last, the first run grounded again once grounding stopped trusting a thought that misreads
the task (its wrong days came from thoughts quoting “the task's 2027-04-28” for 2027-04-21).
Writes docs/learning_thoughts.md.

    .venv/bin/python experiments/widget_thoughts.py   # after learning.py's worlds, data_scale.py

Each stage resumes (a rerun skips what is done); the record (no weights) is kept in
experiments/results/widget-thoughts/.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import name_finding  # noqa: E402
from learning import held_out_rows, turn_row  # noqa: E402
from stages import ROOT, Stages, keep_record, record_parser, rel, require, stage_rows, write_keeping_reading  # noqa: E402, E501

from webworld.fsio import atomic_write_json  # noqa: E402

WORK = ROOT / "runs" / "thoughts"
RECORD = ROOT / "experiments" / "results" / "widget-thoughts"
RECORDED = ("stages.json", "eval/*.json", "eval/*.jsonl", "*/sft_summary.json", "changed.json")
DOC = ROOT / "docs" / "learning_thoughts.md"
WORLDS = name_finding.BASE / "worlds" / "trajectories"  # learning.py's training worlds
OLD_DATA = name_finding.BASE / "data"  # learning.py's export, made before the change
BEFORE = name_finding.RECORD  # name_finding.py's record: the same SFT on the old export
RUN = "sft-shuffled"
GROUNDED = f"{RUN}-grounded"
DATES = "sft-dates"  # the same recipe with --vary-dates (held-out episodes only: the turns
# sample holds 3 date clicks of 160)
CHECKED = f"{RUN}-grounded-checked"  # grounded again once grounding stopped trusting a thought
# that misreads the task (webworld/eval/grounding.py), the first grounded rows are kept
CHECKED_LABEL = "the same, grounded by name, misread thoughts not trusted"
LOOPS = f"{RUN}-grounded-loops"  # the checked grounding, and loops broken (webworld/eval/loops.py)
LOOPS_LABEL = "the same, loops broken"


def export(stages: Stages, work: Path) -> Path:
    data = work / "data"
    stages.run("export (compact)", ["export", rel(WORLDS), "--out", rel(data), "--format", "sft",
                                    "--observation", "compact"], data / "manifest.json")
    return data


def changed_chats(old: Path, new: Path, out: Path) -> dict[str, int]:
    """How many training chats the new export words differently: the same chats in the same
    order (the export is deterministic), so only their assistant turns can differ."""
    def replies(path: Path) -> list[str]:
        return [json.loads(line)["messages"][-1]["content"] for line in path.open()]

    before, after = replies(old / "sft" / "train.jsonl"), replies(new / "sft" / "train.jsonl")
    if len(before) != len(after):
        raise SystemExit(f"{rel(new)}: {len(after)} training chats, the old export has "
                         f"{len(before)}; not the same worlds")
    counts = {"chats": len(after), "changed": sum(a != b for a, b in zip(before, after))}
    atomic_write_json(out, counts)
    return counts


def train_and_play(stages: Stages, work: Path, data: Path, run: str, *extra: str,
                   turns: bool = True) -> None:
    """SFT ``run`` (learning.py's shuffled recipe plus ``extra`` flags) on ``data``, then its
    held-out episodes (and with ``turns`` held-out turns), grounded by name (the row the
    targets read, first: a session may end between the two) and as is."""
    out = work / run
    stages.run(f"sft {run}", ["train", "sft", "--data", rel(data), "--model", "smollm2", "--out",
                              rel(out), "--shuffle-ids", "--precision", "bf16", *extra],
               out / "sft_summary.json")
    model = out / "model"
    for name, flags in ((f"{run}-grounded", ["--ground-names"]), (run, [])):
        if turns:
            name_finding.ask_turns(stages, work / "eval" / f"turns-heldout-{name}.json",
                                   name_finding.HELDOUT_TURNS, model, flags)
        name_finding.play_heldout(stages, work / "eval" / f"heldout-{name}.jsonl", model, flags)


def date_rows(record: Path) -> list[str]:
    """Held-out episodes whose task picks a date, solved before and after, per policy."""
    from webworld.eval.results import Rate, read_results

    rows = ["| policy | export | episodes that pick a date | solved [95% CI] |", "|---|---|---|---|"]
    checked = ((CHECKED, CHECKED_LABEL), (LOOPS, LOOPS_LABEL))
    for folder, export_label, run, recipe, more in (
            (BEFORE, "old thoughts", RUN, "SFT, ids shuffled", ()),
            (record, "thoughts name each click", RUN, "SFT, ids shuffled", checked),
            (record, "thoughts name each click", DATES, "SFT, ids shuffled, dates varied", ())):
        for name, label in ((run, recipe), (f"{run}-grounded", "the same, grounded by name"),
                            *more):
            records = [r for r in read_results(folder / "eval" / f"heldout-{name}.jsonl")
                       if "date" in r["intent"].lower()]
            shown = Rate(name, len(records), sum(r["success"] for r in records)).shown() \
                if records else "not run yet"
            rows.append(f"| {label} | {export_label} | {len(records) or ''} | {shown} |")
    return rows


def sft_note(run: Path) -> str:
    """``: N optimiser steps, train loss ..., validation loss per epoch ...`` of an SFT run's
    summary, or nothing before it has one."""
    path = run / "sft_summary.json"
    if not path.is_file():
        return " (not run yet)"
    summary = json.loads(path.read_text())
    return (f": {summary['steps']} optimiser steps, train loss {summary['train_loss']:.3f}, "
            "validation loss per epoch " + ", ".join(f"{v:.3f}" for v in summary["validation_losses"]))


def write_page(record: Path, doc: Path) -> None:
    from webworld.eval.turns import KINDS

    stages = json.loads((record / "stages.json").read_text())
    counts = json.loads(path.read_text()) if (path := record / "changed.json").is_file() else {}
    # held_out_rows reads WORK/eval/NAME.jsonl; an absolute NAME is read where it is
    policies = [("SFT, ids shuffled, old thoughts", str(BEFORE / "eval" / f"heldout-{RUN}")),
                ("the same, grounded by name", str(BEFORE / "eval" / f"heldout-{GROUNDED}")),
                ("SFT, ids shuffled, thoughts name each click", f"heldout-{RUN}"),
                ("the same, grounded by name", f"heldout-{GROUNDED}"),
                (CHECKED_LABEL, f"heldout-{CHECKED}"),
                (LOOPS_LABEL, f"heldout-{LOOPS}"),
                ("SFT, ids shuffled, thoughts name each click, dates varied", f"heldout-{DATES}"),
                ("the same, grounded by name", f"heldout-{DATES}-grounded")]
    turns = [(label, folder / "eval" / f"turns-heldout-{name}.json")
             for folder, thoughts in ((BEFORE, "old thoughts"), (record, "thoughts name each click"))
             for name, label in ((RUN, f"SFT, ids shuffled, {thoughts}"),
                                 (GROUNDED, "the same, grounded by name"))]
    lines = [
        "# Thoughts that name each click: SFT through a date picker", "",
        "Made by `experiments/widget_thoughts.py` on this repo's 2-core CPU (record: "
        f"`{rel(record)}/`). learning.py's training worlds exported again with "
        "`webworld/data/thoughts.py` naming the control each gesture clicks: "
        + (f"{counts['changed']} of {counts['chats']} training chats are worded differently "
           "(the date picker's two clicks), the rest are byte for byte the old export's. "
           if counts else "")
        + "The same SFT as `name_finding.py`'s `sft-shuffled` (learning.py's recipe from "
        f"SmolLM2, `--shuffle-ids`, bf16, seed 0) on it{sft_note(record / RUN)}. Then that "
        "recipe with `--vary-dates` (`webworld/data/augment.py`: every epoch the date a "
        "task asks for moves to another day of its month, in task, calendar and reply)"
        f"{sft_note(record / DATES)}. Greedy, fast env, seed 0; the old rows are "
        "name_finding.py's.", "",
        "## Held-out episodes", "",
        *held_out_rows(record, policies), "",
        "## Held-out episodes that pick a date", "",
        *date_rows(record), "",
        "## Held-out turns", "",
        "| policy | turns of | turns | answered as recorded [95% CI] | well-formed | "
        + " | ".join(KINDS) + " |", "|---|" + "---|" * (4 + len(KINDS)),
        *[turn_row([label, "held-out worlds"], path) for label, path in turns], "",
        *stage_rows(stages), ""]
    write_keeping_reading(doc, "\n".join(lines))
    print(f"wrote {doc}")


def main() -> None:
    parser = record_parser(WORK, RECORD, DOC)
    args = parser.parse_args()
    if not args.table_only:
        require((WORLDS, OLD_DATA, name_finding.HELDOUT_TURNS),
                "experiments/learning.py and experiments/data_scale.py")
        args.work.mkdir(parents=True, exist_ok=True)
        stages = Stages(args.work, after=lambda: keep_record(args.work, args.record, RECORDED))
        data = export(stages, args.work)
        changed_chats(OLD_DATA, data, args.work / "changed.json")
        keep_record(args.work, args.record, RECORDED)
        train_and_play(stages, args.work, data, RUN)
        train_and_play(stages, args.work, data, DATES, "--vary-dates", turns=False)
        name_finding.play_heldout(stages, args.work / "eval" / f"heldout-{CHECKED}.jsonl",
                                  args.work / RUN / "model", ["--ground-names"])
        name_finding.play_heldout(stages, args.work / "eval" / f"heldout-{LOOPS}.jsonl",
                                  args.work / RUN / "model", ["--ground-names", "--break-loops"])
    write_page(args.record, args.doc)


if __name__ == "__main__":
    main()
