"""Does renaming the named choice teach SmolLM2 to find a task's words on a new page? A CPU
check of `--rename-choices` before a GPU lease trains on it (data_scale.py's
``sft-scale-names``): learning.py's SFT policy fine-tuned for a few steps on its own export,
once with ids relabelled (the control: as many more steps, as it was trained) and once with
named choices renamed as well, each then asked the held-out worlds' turns and the validation
turns with their named choices renamed. Then a probe of why (the misses' thoughts name the
right element): the export rewritten so each id follows its element's name, fine-tuned alike
and asked the held-out turns rewritten the same way. Last, learning.py's SFT from SmolLM2
again with ids in no page order (``--shuffle-ids``, bf16 compute: about 75 minutes on 2 cores
with AMX), asked the same turns and played on the held-out worlds. Writes
docs/learning_names.md.

    .venv/bin/python experiments/name_finding.py        # after learning.py and data_scale.py
    .venv/bin/python experiments/name_finding.py --shuffled-only   # after learning.py's export

Each stage resumes (a rerun skips what is done); the record (no weights) is kept in
experiments/results/name-finding/.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data_scale  # noqa: E402
from learning import HELDOUT, TURNS_SAMPLE, turn_row  # noqa: E402
from stages import ROOT, Stages, keep_record, record_parser, rel, require, stage_rows, write_keeping_reading  # noqa: E402, E501

WORK = ROOT / "runs" / "names"
RECORD = ROOT / "experiments" / "results" / "name-finding"
RECORDED = ("stages.json", "eval/*.json", "eval/*.jsonl", "*/sft_summary.json")
DOC = ROOT / "docs" / "learning_names.md"
BASE = data_scale.BASE  # learning.py's run: its export and SFT
START = BASE / "sft-relabel"  # learning.py's SFT run RL starts from
HELDOUT_TURNS = data_scale.WORK / "heldout-data" / "sft" / "test.jsonl"  # data_scale.py's export
FINE_TUNES = {"ft-control": ["--relabel-ids"], "ft-renamed": ["--relabel-ids", "--rename-choices"],
              "ft-ids-last": [], "ft-shuffled": []}  # their exports are rewritten (below)
LABELS = {"sft-relabel": "learning.py's SFT, ids relabelled",
          "ft-control": "+ steps, ids relabelled (control)",
          "ft-renamed": "+ steps, ids relabelled, named choices renamed"}
FORMAT_LABEL = "+ steps, ids relabelled, ids after names"
# SFT from SmolLM2 as learning.py's `sft-relabel` (its recipe: data, steps, seed), ids in no
# page order instead; asked as `sft-relabel` was, and played on the held-out worlds
SHUFFLED = "sft-shuffled"
SHUFFLED_LABEL = "SFT from SmolLM2, ids in no page order"
# the same policy's replies grounded by the element their thought quotes (`--ground-names`)
GROUNDED, GROUNDED_LABEL = f"{SHUFFLED}-grounded", f"{SHUFFLED_LABEL}, grounded by name"
BASELINE = ROOT / "experiments" / "results" / "learning-gpu"  # `sft-relabel`'s held-out episodes
# what each policy is asked: held-out worlds' turns as exported, validation turns renamed
ASKED = {"heldout": ("held-out worlds", HELDOUT_TURNS, []),
         "renamed": ("validation worlds, named choices renamed",
                     BASE / "data" / "sft" / "validation.jsonl", ["--rename-choices"])}


def fine_tune(stages: Stages, work: Path, name: str, steps: int, lr: str,
              data: Path = BASE / "data") -> Path:
    out = work / name
    stages.run(f"fine-tune {name}", [
        "train", "sft", "--data", rel(data), "--model", rel(START / "model"),
        "--out", rel(out), "--max-steps", str(steps), "--lr", lr, "--seed", "0",
        *FINE_TUNES[name]], out / "sft_summary.json")
    return out


# --- a probe of the format: ids after names, the reply quoting the target's line -------------
# Not webworld's format (webworld/data/prompting.py): chats of the export rewritten so that a
# page line reads ``menuitem 'Europe' [3]`` and the thought ends with the line it acts on, so
# the id is written right after the name it follows on the page (copied forward).

PAGE_ID = re.compile(r"^(\s*)\[(\d+)\] (.*)$", re.MULTILINE)
ID_FIRST = "starts with its id in brackets, e.g. [12] button 'Search'."
ID_LAST = "ends with its id in brackets, e.g. button 'Search' [12]."


def ids_after_names(chat: list[dict[str, str]]) -> list[dict[str, str]]:
    from webworld.browser.actions import parse_call, parse_reply
    from webworld.data.prompting import assistant_message, page_line

    system, user, reply = (m["content"] for m in chat)
    action = parse_reply(reply) or ""
    call = parse_call(action)
    line = page_line(user, call.bid) if call is not None else None
    thought = reply.split("\n", 1)[0].removeprefix("Thought: ")
    if line is not None:
        quoted = PAGE_ID.sub(r"\3 [\2]", line)
        thought = f"{thought.rstrip('.')}: {quoted}."
    return [{"role": "system", "content": system.replace(ID_FIRST, ID_LAST)},
            {"role": "user", "content": PAGE_ID.sub(r"\1\3 [\2]", user)},
            {"role": "assistant", "content": assistant_message(thought, action)}]


Rewrite = Callable[[list[dict[str, str]], random.Random], list[dict[str, str]]]


def rewrite_export(data: Path, out: Path, splits: dict[str, tuple[Path, Rewrite]]) -> Path:
    """``splits`` (name: chats file and how to rewrite each chat) into ``out`` as an export
    (with ``data``'s manifest), once: a fine-tune of fewer steps than chats sees each chat
    once, so an augmentation drawn here is as good as one drawn every epoch."""
    from webworld.eval.turns import read_turns
    from webworld.fsio import atomic_write_text

    if (out / ".done").is_file():
        return out
    (out / "sft").mkdir(parents=True, exist_ok=True)
    shutil.copy(data / "manifest.json", out / "manifest.json")
    rng = random.Random(0)
    for split, (path, rewrite) in splits.items():
        chats = [[{"role": m["role"], "content": m["content"]} for m in c]
                 for c in read_turns(path, None, 0)]
        atomic_write_text(out / "sft" / f"{split}.jsonl", "".join(
            json.dumps({"messages": rewrite(c, rng)}) + "\n" for c in chats))
    (out / ".done").touch()
    return out


def probe_format(stages: Stages, work: Path, steps: int, lr: str) -> None:
    """The fine-tune on the rewritten export, then the rewritten held-out turns asked."""
    from webworld.data.augment import relabel_ids

    sft = BASE / "data" / "sft"
    as_is = lambda chat, rng: ids_after_names(chat)  # noqa: E731
    data = rewrite_export(BASE / "data", work / "ids-last-data", {
        "train": (sft / "train.jsonl", lambda chat, rng: ids_after_names(relabel_ids(chat, rng))),
        "validation": (sft / "validation.jsonl", as_is)})
    heldout = rewrite_export(BASE / "data", work / "ids-last-heldout",
                             {"test": (HELDOUT_TURNS, as_is)})
    model = fine_tune(stages, work, "ft-ids-last", steps, lr, data) / "model"
    ask_turns(stages, work / "eval" / "turns-heldout-ft-ids-last.json",
              heldout / "sft" / "test.jsonl", model)
    # ids in no page order: only copying gives them (webworld's format otherwise)
    data = rewrite_export(BASE / "data", work / "shuffled-data", {
        "train": (sft / "train.jsonl", lambda chat, rng: relabel_ids(chat, rng, ordered=False)),
        "validation": (sft / "validation.jsonl", lambda chat, rng: chat)})
    model = fine_tune(stages, work, "ft-shuffled", steps, lr, data) / "model"
    ask_turns(stages, work / "eval" / "turns-heldout-ft-shuffled.json", HELDOUT_TURNS, model)


def format_rows(record: Path, rewritten: Path) -> list[str]:
    """Held-out turns of the control and the format probe (asked ``rewritten``, the held-out
    turns rewritten): all, named, and the misses that found the element but not its id."""
    from webworld.eval.results import Rate

    rows = ["| policy | page lines | turns | answered as recorded [95% CI] | named | missed | "
            "thought names the right element, id another's (next or previous line's) |",
            "|---|---|---|---|---|---|---|"]
    for name, label, lines in (
            ("ft-control", LABELS["ft-control"], "`[3] menuitem 'Europe'`"),
            ("ft-shuffled", "+ steps, ids relabelled in no page order", "`[3] menuitem 'Europe'`"),
            ("ft-ids-last", FORMAT_LABEL, "`menuitem 'Europe' [3]`, the thought quoting it")):
        path = record / "eval" / f"turns-heldout-{name}.json"
        # the probe's cells read the turns asked (run folders, not the record): without them
        # the row is left as "not run yet", and the page keeps the row it had
        if not path.is_file() or (name == "ft-ids-last" and not rewritten.is_file()):
            rows.append(f"| {label} | {lines} | not run yet | | | | |")
            continue
        if name != "ft-ids-last":  # webworld's format: `webworld eval turns` reads it
            rows.append(f"| {label} | {lines} | {copy_cells(path)} |")
            continue
        got = json.loads(path.read_text())
        wrong_id = quoted_right_line(path, rewritten)
        rows.append(f"| {label} | {lines} | {got['turns']} | "
                    f"{Rate(name, got['turns'], got['correct']).shown()} | "
                    f"{named_share(path, HELDOUT_TURNS)} | {got['turns'] - got['correct']} | "
                    f"{wrong_id[0]} ({wrong_id[1]}) |")
    return rows


def copy_cells(path: Path) -> str:
    """Cells of a `webworld eval turns` result: turns, answered as recorded, named, missed,
    and the misses that found the element but not its id (next or previous line's)."""
    from webworld.eval.results import Rate

    got = json.loads(path.read_text())
    right, named = got["by_kind"]["named"]
    found, beside = found_not_copied(got)
    return " | ".join([str(got["turns"]), Rate("all", got["turns"], got["correct"]).shown(),
                       Rate("named", named, right).shown(), str(got["turns"] - got["correct"]),
                       f"{found} ({beside})"])


def shuffled_rows(record: Path) -> list[str]:
    """`sft-shuffled` against `sft-relabel`: its training, the held-out turns, the
    validation turns with ids shuffled, and the held-out episodes."""
    from learning import held_out_rows

    policies = [("sft-relabel", LABELS["sft-relabel"]), (SHUFFLED, SHUFFLED_LABEL)]

    def copy_table(asked: str, rows: list[tuple[str, str]]) -> list[str]:
        paths = {name: record / "eval" / f"turns-{asked}-{name}.json" for name, _ in rows}
        return ["| policy | turns | answered as recorded [95% CI] | named | missed | thought "
                "names the right element, id another's (next or previous page line's) |",
                "|---|---|---|---|---|---|",
                *[f"| {label} | " + (copy_cells(paths[name]) if paths[name].is_file() else
                                     "not run yet | | | |") + " |" for name, label in rows]]

    return [
        shuffled_line(record / SHUFFLED / "sft_summary.json"), "",
        "Held-out turns, as exported:", "",
        *copy_table("heldout", [*policies, (GROUNDED, GROUNDED_LABEL)]), "",
        "Validation turns with ids shuffled (`webworld eval turns --shuffle-ids`): a policy "
        "that counts down the page rather than copying ids falls here, and a wrong id copied "
        "from the next line is a line away, not a number away.", "",
        *copy_table("shuffled", policies), "",
        "Held-out episodes (53, greedy, fast env; `sft-relabel`'s from the first GPU "
        "lease, this run's on this CPU):", "",
        *held_out_rows(BASELINE, [(LABELS["sft-relabel"], "heldout-sft-relabel")]),
        *held_out_rows(record, [(SHUFFLED_LABEL, f"heldout-{SHUFFLED}"),
                                (GROUNDED_LABEL, f"heldout-{GROUNDED}")])[2:]]


def shuffled_line(summary: Path) -> str:
    if not summary.is_file():
        return f"`{SHUFFLED}/`: not trained yet."
    sft = json.loads(summary.read_text())
    return (f"`{SHUFFLED}/`: {sft['steps']} optimiser steps of batch "
            f"{sft['settings']['batch_size']} over {sft['train_chats']} chats, learning rate "
            f"{sft['settings']['learning_rate']}, top {sft['settings']['train_layers']} layers, "
            f"{sft['settings'].get('precision', 'fp32')} compute, {sft['seconds']:.0f} s on 2 "
            f"cores, validation loss per epoch "
            f"{', '.join(f'{v:.3f}' for v in sft['validation_losses'])} (`sft-relabel`, fp32: "
            "0.182, 0.155, 0.143).")


QUOTED = re.compile(r": (?P<line>.*) \[(?P<bid>\d+)\]\.$")  # a rewritten thought's end


def quoted_right_line(result: Path, asked: Path) -> tuple[int, int]:
    """Misses of the rewritten turns whose thought quotes the recorded element's line, name
    and all, followed by another id; and those of them whose id is a neighbour's (±1)."""
    from webworld.eval.turns import read_turns

    pages = {(c[1]["content"].split("\n", 1)[0], c[2]["content"].rsplit("Action: ", 1)[1]):
             c[1]["content"] for c in read_turns(asked, None, 0)}
    found = beside = 0
    for miss in json.loads(result.read_text())["misses"]:
        quoted = QUOTED.search(miss["thought"])
        recorded = re.search(r"'(\d+)'", miss["recorded"])
        if quoted is None or recorded is None:
            continue
        user = pages[(miss["task"], miss["recorded"])]
        if f"\n{quoted['line']} [{recorded[1]}]" in user and quoted["bid"] != recorded[1]:
            found += 1
            beside += abs(int(quoted["bid"]) - int(recorded[1])) == 1
    return found, beside


def named_share(result: Path, asked: Path) -> str:
    """Named turns answered as recorded, for a result of rewritten turns: each turn's kind
    read from the turns as exported (the same sample, the same order), as `webworld eval
    turns` reads it there."""
    from webworld.browser.actions import parse_reply
    from webworld.eval.results import Rate
    from webworld.eval.turns import read_turns, turn_kind

    got = json.loads(result.read_text())
    kinds = {(c[1]["content"].split("\n", 1)[0], parse_reply(c[2]["content"])):
             turn_kind(c[1]["content"], parse_reply(c[2]["content"]))
             for c in read_turns(asked, TURNS_SAMPLE, 0)}
    named = sum(kind == "named" for kind in kinds.values())
    missed = sum(kinds.get((m["task"], m["recorded"])) == "named" for m in got["misses"])
    return Rate("named", named, named - missed).shown()


def ask(stages: Stages, work: Path, name: str, model: Path) -> None:
    for what, (_, chats, flags) in ASKED.items():
        ask_turns(stages, work / "eval" / f"turns-{what}-{name}.json", chats, model, flags)


def ask_turns(stages: Stages, result: Path, chats: Path, model: Path,
              flags: list[str] = ()) -> None:
    stages.run(f"eval {result.stem}", [
        "eval", "turns", rel(chats), "--policy", f"hf:{rel(model)}", "-n", str(TURNS_SAMPLE),
        "--seed", "0", "--out", rel(result), *flags], result)


def sft_shuffled(stages: Stages, work: Path) -> None:
    """learning.py's SFT recipe from SmolLM2 with ``--shuffle-ids`` for ``--relabel-ids``;
    then the held-out turns, the held-out episodes, and the validation turns with ids
    shuffled, asked of it and of `sft-relabel`; last the held-out turns and episodes with
    its replies grounded by the names their thoughts quote (`--ground-names`)."""
    out = work / SHUFFLED
    stages.run(f"sft {SHUFFLED}", ["train", "sft", "--data", rel(BASE / "data"), "--model",
                                   "smollm2", "--out", rel(out), "--shuffle-ids", "--precision",
                                   "bf16"], out / "sft_summary.json")
    model = out / "model"
    ask_turns(stages, work / "eval" / f"turns-heldout-{SHUFFLED}.json", HELDOUT_TURNS, model)
    for name, policy in (("sft-relabel", START / "model"), (SHUFFLED, model)):
        if not policy.is_dir():  # learning.py's run went with its machine: its ask is recorded
            continue
        ask_turns(stages, work / "eval" / f"turns-shuffled-{name}.json",
                  BASE / "data" / "sft" / "validation.jsonl", policy, ["--shuffle-ids"])
    for name, flags in ((SHUFFLED, []), (GROUNDED, ["--ground-names"])):
        play_heldout(stages, work / "eval" / f"heldout-{name}.jsonl", model, flags)
        if not flags:  # the grounded ask of the same turns, before the grounded episodes
            ask_turns(stages, work / "eval" / f"turns-heldout-{GROUNDED}.json", HELDOUT_TURNS,
                      model, ["--ground-names"])


def play_heldout(stages: Stages, episodes: Path, model: Path, flags: list[str] = ()) -> None:
    """The held-out suite's episodes played by ``model`` in the fast env, greedy, seed 0."""
    stages.run(f"eval {episodes.stem}", [
        "eval", "--suite", "heldout", "--heldout-dir", rel(HELDOUT), "-n", "1",
        "--policy", f"hf:{rel(model)}", "--workers", "8", "--traces", "0", "--seed", "0",
        "--out", rel(episodes), "--fast", *flags], episodes)


def grounding_row(label: str, path: Path) -> str:
    """Missed turns, those whose thought found the element but whose id is another's, and
    those of them off by one line."""
    if not path.is_file():
        return f"| {label} | not run yet | | |"
    got = json.loads(path.read_text())
    if any("thought" not in m for m in got["misses"]):
        return f"| {label} | {got['turns'] - got['correct']} | not recorded (an older eval) | |"
    found, beside = found_not_copied(got)
    return f"| {label} | {got['turns'] - got['correct']} | {found} | {beside} |"


def found_not_copied(got: dict) -> tuple[int, int]:
    """Of a `webworld eval turns` result's misses: those whose thought names the recorded
    element while the action acts on another, and those of them on a neighbouring line
    (results older than ``lines_apart``: a neighbouring id, the next line where ids follow
    the page)."""
    def apart(miss: dict) -> int:
        if "lines_apart" in miss:
            return miss["lines_apart"]
        ids = (int(line[1:line.index("]")]) for line in (miss["answered_element"],
                                                          miss["recorded_element"]))
        return abs(next(ids) - next(ids))

    found = [m for m in got["misses"] if m["right_thought_wrong_id"]]
    return len(found), sum(apart(m) == 1 for m in found)


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
        "## Probes: where the id comes from", "",
        "Two more fine-tunes of the same length from the same start, each asked the held-out "
        "turns. **Ids in no page order:** the training chats' ids relabelled onto a random "
        "draw in random order (`relabel_ids(ordered=False)`), so no count down the page comes "
        "close; asked as exported. **Ids after names:** the export and the held-out turns "
        "rewritten (by this script, not webworld's format): each page line's id moved after the "
        "line (`menuitem 'Europe' [3]`, the system prompt saying so) and each thought ending "
        "with the line it acts on, so the id is written right after the name it follows on the "
        "page; the start was trained on the other format. Named turns are those `webworld eval "
        "turns` calls named in the turns as exported.", "",
        *format_rows(record, WORK / "ids-last-heldout" / "sft" / "test.jsonl"), "",
        "## SFT from SmolLM2 with ids in no page order", "",
        "The probes above changed a policy trained 3 epochs on page-ordered ids. Here "
        "learning.py's SFT recipe runs again from SmolLM2 (its export, steps, rate, layers and "
        "seed) with `--shuffle-ids` for `--relabel-ids`: every epoch each chat's ids are "
        "renumbered in no page order, so only copying an id from its line gives it.", "",
        *shuffled_rows(record), "",
        *stage_rows(stages), ""]
    write_keeping_reading(doc, "\n".join(lines))
    print(f"wrote {doc}")


def main() -> None:
    parser = record_parser(WORK, RECORD, DOC)
    parser.add_argument("--steps", type=int, default=100, help="fine-tuning optimiser steps")
    parser.add_argument("--lr", default="3e-4", help="fine-tuning peak learning rate")
    parser.add_argument("--shuffled-only", action="store_true",
                        help="only the SFT with ids shuffled and its asks (the fine-tunes are "
                             "in the record; needs learning.py's export, not its SFT run)")
    args = parser.parse_args()
    if not args.table_only:
        needs = (BASE / "data", HELDOUT_TURNS) if args.shuffled_only else \
            (START / "model", HELDOUT_TURNS)
        require(needs, "experiments/learning.py and experiments/data_scale.py")
        args.work.mkdir(parents=True, exist_ok=True)
        # the record follows each stage, so a session that ends mid-run keeps what finished
        stages = Stages(args.work, after=lambda: keep_record(args.work, args.record, RECORDED))
        if not args.shuffled_only:
            ask(stages, args.work, "sft-relabel", START / "model")
            for name in ("ft-control", "ft-renamed"):
                ask(stages, args.work, name,
                    fine_tune(stages, args.work, name, args.steps, args.lr) / "model")
            probe_format(stages, args.work, args.steps, args.lr)
        sft_shuffled(stages, args.work)
    write_page(args.record, args.doc, args.steps, args.lr)


if __name__ == "__main__":
    main()
