"""Does SFT read new sites better from more worlds? learning.py's export (30 worlds, 24 of
them for training, 2 task instances per task) plus 30 more worlds of the same themes and
profiles at new seeds, 4 task instances each (more values and choices per task), for SFT from
SmolLM2 with the same optimiser steps as learning.py's recipe on its export alone: the data
grows, the compute does not. Runs
side by side on a GPU, ids relabelled (``sft-scale``), with values varied and choices moved
besides (``sft-scale-aug``), and, for later leases, with the choices renamed too
(``sft-scale-names``), the ids in no page order instead (``sft-scale-shuffled``) or the
whole model trained rather than its top 8 layers (``sft-scale-whole``); each on
the held-out worlds, 160 validation turns and the
ten training worlds, against learning.py's SFT run (ids relabelled, CPU) evaluated on a GPU
lease. Writes docs/learning_scale.md.

    .venv/bin/python experiments/data_scale.py          # here: the worlds, export and kit part
    python3 scripts/carry_plan.py --plan scale --kit gpu_kit/learning.tar.xz \
        --extra-data gpu_kit/scale-data.tar.xz          # the device calls (gpu_run.py there)
    .venv/bin/python experiments/data_scale.py --from-device DIR   # a call's files_at folder
    .venv/bin/python experiments/data_scale.py --table-only        # the page from the record

A later lease's runs (more epochs at a GPU's batch: gpu_run.py --scale-runs sft-scale-aug
sft-scale-shuffled --sft-epochs 3 --sft-batch 32) go to a record and page of their own
(--record, --doc).

The builds took 564 and 548 s side by side on 2 cores (this script runs them one after the
other). Every stage is skipped when its output is there: rerun after a kill.
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corrections import training_table  # noqa: E402
from learning import EASY, HELDOUT, MEDIUM, TURNS_SAMPLE, held_out_rows, turn_row  # noqa: E402
from stages import ROOT, Stages, keep_record, rel, write_keeping_reading  # noqa: E402

from webworld.fsio import atomic_write_json  # noqa: E402
from webworld.train.defaults import SFT_EPOCHS, SFT_MIN_STEPS, sft_steps  # noqa: E402

WORK = ROOT / "runs" / "scale"
BASE = ROOT / "runs" / "learning"  # learning.py's run: its export and SFT of record
RESULTS = ROOT / "experiments" / "results"
RECORD = RESULTS / "data-scale"
BASELINE = RESULTS / "learning-gpu"  # learning.py's SFT run evaluated on the first GPU lease
ORACLE = RESULTS / "learning" / "eval" / "heldout-oracle-fast.jsonl"  # the paths failures leave
DOC = ROOT / "docs" / "learning_scale.md"
KIT = ROOT / "gpu_kit" / "scale-data.tar.xz"
# the extra worlds: learning.py's themes and profiles at seeds of their own (learning.py's are 1
# and 2, the held-out suite's >= 9000), twice its task instances per task
EXTRA = [("easy", 3, EASY), ("medium", 4, MEDIUM)]
EXPLORE = ["--max-instances", "4", "--max-shortest", "1", "--max-longer", "1"]
# the SFT runs and their flags (besides the data, the model and the steps); the third takes
# the names of the choices away too (held-out failures start on the sibling of a named
# element: docs/learning_scale.md)
# the fourth shuffles the ids out of page order instead (held-out misses name the right
# element and act on a neighbour's id: docs/learning_names.md); the fifth trains the whole
# model, not its top 8 layers, at the rate docs/sft_settings.md measured for it: pointing at
# the right line may need the lower layers' attention too
AUGMENTED = ["--relabel-ids", "--vary-values", "--move-choices"]
SCALE_RUNS = {"sft-scale": ["--relabel-ids"], "sft-scale-aug": AUGMENTED,
              "sft-scale-names": [*AUGMENTED, "--rename-choices"],
              "sft-scale-shuffled": ["--shuffle-ids", *AUGMENTED[1:]],
              "sft-scale-whole": [*AUGMENTED, "--train-layers", "0", "--lr", "3e-4"]}
LABELS = {"sft-scale": "more worlds, ids relabelled",
          "sft-scale-aug": "more worlds, ids relabelled, values varied, choices moved",
          "sft-scale-names": "more worlds, ids relabelled, values varied, choices moved and "
                             "renamed",
          "sft-scale-shuffled": "more worlds, ids shuffled (no page order), values varied, "
                                "choices moved",
          "sft-scale-whole": "more worlds, ids relabelled, values varied, choices moved, "
                             "whole model trained (lr 3e-4)"}
RECORDED = ("stages.json", "data.json", "eval/turns-sft-relabel*.json",
            "eval/turns-heldout-*.json")
# the validation turns as exported, with ids renumbered, with named choices moved
# (learning.py's names for its rows)
TURN_VARIANTS = {"": [], "-relabelled": ["--relabel-ids"], "-moved": ["--move-choices"],
                 "-renamed": ["--rename-choices"]}
ASKED = {"": "as exported", "-relabelled": "ids relabelled", "-moved": "named choices moved",
         "-renamed": "named choices renamed"}


def train_turns(data: Path) -> int:
    with (data / "sft" / "train.jsonl").open(encoding="utf-8") as lines:
        return sum(1 for line in lines if line.strip())


def recipe_steps(data: Path) -> int:
    """learning.py's SFT steps on the export ``data`` alone (3 epochs of batch 8): the
    scaled runs take as many, over more chats."""
    return sft_steps(train_turns(data), 8, SFT_EPOCHS, SFT_MIN_STEPS)


def build_args(work: Path, profile: str, seed: int, themes: list[str]) -> list[str]:
    worlds = work / "worlds"
    return ["build", "--profile", profile, "--seed", str(seed), *EXPLORE,
            "--specs-out", rel(worlds / "specs"), "--sites-out", rel(worlds / "sites"),
            "--out", rel(worlds / "trajectories"), "--dataset-out", rel(work / f"dataset-{profile}"),
            *[a for t in themes for a in ("--theme", t)]]


def prepare(work: Path, stages: Stages) -> None:
    """The extra worlds, their export (every world in the training split: validation stays
    learning.py's) packed for the device, and the CPU's per-turn check of learning.py's SFT
    policy."""
    worlds, data = work / "worlds", work / "data"
    for profile, seed, themes in EXTRA:
        stages.run(f"build {profile} s{seed}", build_args(work, profile, seed, themes),
                   worlds / "trajectories")
    stages.run("export", ["export", rel(worlds / "trajectories"), "--out", rel(data), "--format",
                          "sft", "--observation", "compact", "--splits", "1,0,0"], data / "sft")
    counts = {"base": {"worlds": world_count(BASE / "data"), "turns": train_turns(BASE / "data")},
              "extra": {"worlds": world_count(data), "turns": train_turns(data)},
              "steps": recipe_steps(BASE / "data")}
    atomic_write_json(work / "data.json", counts)
    # the held-out worlds' verified steps as turns (all in the export's test split): how a
    # policy answers pages with names it never saw, one verified step at a time
    heldout_data = work / "heldout-data"
    stages.run("export held-out", ["export", rel(HELDOUT / "trajectories"), "--out",
                                   rel(heldout_data), "--format", "sft", "--observation",
                                   "compact", "--splits", "1,0,0"], heldout_data / "sft")
    if not KIT.is_file():
        pack_kit(data, heldout_data, KIT)
    turns = work / "eval" / "turns-heldout-sft-relabel.json"
    stages.run(f"eval {turns.stem}", [
        "eval", "turns", rel(heldout_data / "sft" / "test.jsonl"), "--policy",
        f"hf:{rel(BASE / 'sft-relabel' / 'model')}", "-n", str(TURNS_SAMPLE), "--seed", "0",
        "--out", rel(turns)], turns)
    for variant, flags in TURN_VARIANTS.items():
        turns = work / "eval" / f"turns-sft-relabel{variant}.json"
        stages.run(f"eval {turns.stem}", [
            "eval", "turns", rel(BASE / "data" / "sft" / "validation.jsonl"), "--policy",
            f"hf:{rel(BASE / 'sft-relabel' / 'model')}", "-n", str(TURNS_SAMPLE), "--seed", "0",
            "--out", rel(turns), *flags], turns)


def pack_kit(data: Path, heldout_data: Path, kit: Path) -> None:
    """The device's part of this experiment: the extra export, and the held-out turns as
    ``HELDOUT_TURNS`` (gpu_run.py's scale plan asks each SFT run them)."""
    from gpu_run import HELDOUT_TURNS

    partial = kit.with_name(kit.name + ".partial")
    with tarfile.open(partial, "w:xz") as tar:
        for part in ("manifest.json", "sft"):
            tar.add(data / part, arcname=part)
        tar.add(heldout_data / "sft" / "test.jsonl", arcname=HELDOUT_TURNS)
    partial.replace(kit)


def world_count(data: Path) -> int:
    return len(json.loads((data / "manifest.json").read_text())["splits"]["train"]["worlds"])


def import_call(device: Path, record: Path, work: Path, deltas: Path,
                replace: bool = False) -> None:
    """The device call's results into the record, beside what the CPU stages recorded; a run
    it brought back (``gpu_run.py --bring-back``) as its delta in ``deltas`` (for the next
    lease to carry) and as a model folder in the work folder."""
    from learning_gpu import import_call as import_results
    from policy_delta import apply, receive_all

    import_results(device, record, replace)
    keep_record(work, record, RECORDED)
    for name, delta in receive_all(device, deltas).items():
        apply(delta, work / name)
        print(f"{name}: its model in {rel(work / name / 'model')}")


def sft_line(record: Path, name: str) -> str:
    path = record / name / "sft_summary.json"
    if not path.is_file():
        return f"- {LABELS[name]} (`{name}/`): not run yet"
    sft = json.loads(path.read_text())
    settings = sft["settings"]
    return (f"- {LABELS[name]} (`{name}/`): {sft['steps']} optimiser steps of batch "
            f"{settings['batch_size']} over {sft['train_chats']} chats, learning rate "
            f"{settings['learning_rate']}, top {settings['train_layers']} layers, "
            f"{sft['seconds']:.0f} s, validation loss "
            f"{', '.join(f'{v:.3f}' for v in sft['validation_losses'])}")


def divergence_rows(runs: list[tuple[str, Path]], oracle: Path = ORACLE) -> list[str]:
    """Where each run's failed held-out episodes first left the oracle's path
    (`webworld eval diverge`), a column per run (results files not there yet: no column)."""
    from webworld.eval.diverge import KINDS, divergences, summary
    from webworld.eval.results import read_results

    paths = {label: path for label, path in runs if path.is_file()}
    if not paths or not oracle.is_file():
        return ["not run yet"]
    oracle_records = read_results(oracle)  # read once, for every run
    kinds = {label: summary(divergences(read_results(path), oracle_records))[0]
             for label, path in paths.items()}
    return ["| failures first leaving the path on | " + " | ".join(kinds) + " |",
            "|---|" + "---|" * len(kinds),
            *(f"| {kind} | " + " | ".join(str(k[kind]) for k in kinds.values()) + " |"
              for kind in KINDS),
            "| failed episodes | " + " | ".join(str(k.total()) for k in kinds.values()) + " |"]


def recorded_runs(record: Path) -> list[str]:
    """The scale runs ``record`` holds results of (every one before any came back)."""
    held = [name for name in SCALE_RUNS
            if (record / name).is_dir() or any((record / "eval").glob(f"*-{name}.*"))]
    return held or list(SCALE_RUNS)


def write_page(record: Path, doc: Path, baseline: Path = BASELINE) -> None:
    from webworld.eval.turns import KINDS

    counts = json.loads((record / "data.json").read_text())
    base, extra = counts["base"], counts["extra"]
    results = record / "gpu_results.json"
    stages = json.loads(results.read_text())["stages"] if results.is_file() else []
    device = next((s.get("last_line", "") for s in stages if s["stage"] == "python and torch"),
                  "not run yet")
    before = "learning.py's SFT, ids relabelled (CPU; GPU lease's evals)"
    runs = [(LABELS[name], name) for name in recorded_runs(record)]

    def table(rows, prefix: str) -> list[str]:  # type: ignore[no-untyped-def]
        return [*rows(baseline, [(before, f"{prefix}-sft-relabel")]),
                *rows(record, [(label, f"{prefix}-{name}") for label, name in runs])[2:]]

    lines = [
        "# More worlds for SFT: does SmolLM2 read new sites better?", "",
        "Made by `experiments/data_scale.py` (from `experiments/results/data-scale/`). "
        f"learning.py's export: {base['turns']} training turns of {base['worlds']} worlds (2 "
        f"task instances per task). Added: {extra['turns']} turns of {extra['worlds']} new "
        "worlds, the same themes and profiles at new seeds with 4 task instances per task "
        f"(`{' '.join(EXPLORE)}`). learning.py's recipe takes {counts['steps']} optimiser "
        "steps of batch 8 (3 epochs of its export); a scaled run at as many steps sees each "
        "chat less than once where the recipe saw each three times: more data at the same "
        f"compute. Both start from SmolLM2. Device: `{device}`. Greedy, fast env.", "",
        *[sft_line(record, name) for _, name in runs], "",
        "## Held-out worlds", "",
        *table(held_out_rows, "heldout"), "",
        "Where each failed episode first left the oracle's path (`webworld eval diverge "
        f"RESULTS {rel(ORACLE)}`): the first action that differs, by kind.", "",
        *divergence_rows([(before, baseline / "eval" / "heldout-sft-relabel.jsonl"),
                          *((label, record / "eval" / f"heldout-{name}.jsonl")
                            for label, name in runs)]), "",
        "## Validation turns", "",
        f"{TURNS_SAMPLE} recorded turns of learning.py's three validation worlds (seed 0), each "
        "asked with its verified history (`webworld eval turns`); learning.py's SFT policy asked "
        "on this machine's CPU.", "",
        "| policy | turns asked | turns | answered as recorded [95% CI] | well-formed | "
        + " | ".join(KINDS) + " |", "|---|" + "---|" * (4 + len(KINDS)),
        *[turn_row([label, asked], record / "eval" / f"turns-{name}{variant}.json")
          for variant, asked in ASKED.items()
          for label, name in [(before, "sft-relabel"), *runs]], "",
        f"{TURNS_SAMPLE} recorded turns of the held-out worlds (seed 0; `webworld export` of "
        "their verified tasks, all in its test split), asked the same way: pages and names no "
        "training world had.", "",
        "| policy | turns asked | turns | answered as recorded [95% CI] | well-formed | "
        + " | ".join(KINDS) + " |", "|---|" + "---|" * (4 + len(KINDS)),
        *[turn_row([label, "held-out worlds"], record / "eval" / f"turns-heldout-{name}.json")
          for label, name in [(before, "sft-relabel"), *runs]], "",
        "## Training worlds, whole tasks", "",
        "The ten training worlds learning.py's evals score (in every run's data):", "",
        *table(training_table, "train"), "",
        "## Stages", "", "| where | stage | wall (s) | command |", "|---|---|---|---|",
        *[f"| CPU | {name} | {int(s['wall'])} | `{s['command']}` |"
          for name, s in json.loads((record / "stages.json").read_text()).items()],
        *[f"| GPU | {s['stage']} | {s['wall_s']:.0f} | `{s['command'].split(' app()', 1)[-1]}` |"
          for s in stages], ""]
    write_keeping_reading(doc, "\n".join(lines))
    print(f"wrote {doc}")


def main() -> None:
    from learning_gpu import device_options

    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--table-only", action="store_true", help="the page from the record")
    device_options(parser, "scale", RECORD, DOC)
    args = parser.parse_args()
    if args.from_device:
        import_call(args.from_device, args.record, args.work, args.deltas, args.replace)
    elif not args.table_only:
        args.work.mkdir(parents=True, exist_ok=True)
        prepare(args.work, Stages(args.work))
        keep_record(args.work, args.record, RECORDED)
    write_page(args.record, args.doc)


if __name__ == "__main__":
    main()
