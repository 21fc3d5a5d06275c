"""experiments/learning.py's runs on a lent GPU: what `experiments/gpu_run.py --plan learning`
brought back, kept in experiments/results/learning-gpu/ (committed, no weights) and shown in
docs/learning_on_gpu.md with learning.py's own tables.

    .venv/bin/python experiments/learning_gpu.py --from-device DIR   # a call's files_at folder
    .venv/bin/python experiments/learning_gpu.py                      # the page again, from the record

An RL run cut at its limit was evaluated at its last checkpoint (results named ``-bN``): its
evals are kept under the run's name and the batches it learnt from in ``cut.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from learning import REWARDS, held_out_rows, rl_curves, training_rows  # noqa: E402
from stages import ROOT, write_keeping_reading  # noqa: E402

from webworld.fsio import atomic_write_text  # noqa: E402

RECORD = ROOT / "experiments" / "results" / "learning-gpu"
CPU_RECORD = ROOT / "experiments" / "results" / "learning"  # learning.py's, with live rows
DOC = ROOT / "docs" / "learning_on_gpu.md"
CUT = re.compile(r"(?P<run>.+-rl-\w+-s\d+)-b(?P<batches>\d+)\.jsonl")


def same_machine(record: Path, out: Path) -> bool:
    """Whether the call in ``out`` ran on the machine whose results ``record`` holds: a warm
    machine's list of stages only grows, so the record's stages begin the call's."""
    recorded = record / "gpu_results.json"
    if not recorded.is_file():
        return True
    before = json.loads(recorded.read_text())["stages"]
    return json.loads((out / "gpu_results.json").read_text())["stages"][:len(before)] == before


def import_call(out: Path, record: Path, replace: bool = False) -> None:
    """A call's results archive and tables into ``record``, replacing what was there (a warm
    machine's work folder only grows, so its latest archive holds everything). A call of
    another lease would lose the record's runs: it needs a record of its own, or ``replace``."""
    archive = out / "results.tar.gz"
    if not archive.is_file():
        raise SystemExit(f"{archive}: no results archive (is this a gpu_run.py --plan learning "
                         "call's files_at folder?)")
    if not replace and not same_machine(record, out):
        raise SystemExit(f"{out}: a call of another lease than {record}'s; importing it would "
                         "drop that lease's results. Give it a record and a page of its own "
                         "(--record DIR --doc PAGE), or --replace.")
    shutil.rmtree(record, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(record, filter="data")
    shutil.copy(out / "gpu_results.json", record / "gpu_results.json")
    for path in (record / "eval").glob("*.jsonl"):
        if path.stat().st_size == 0:
            path.unlink()  # cut before its first episode: not run
    cut: dict[str, int] = {}
    for path in sorted((record / "eval").glob("*-b*.jsonl"),
                       key=lambda p: int(CUT.fullmatch(p.name)["batches"])):
        match = CUT.fullmatch(path.name)
        final = path.with_name(f"{match['run']}.jsonl")
        if final.is_file() and match["run"] not in cut:
            path.unlink()  # the run finished: its final model's evals are there
            continue
        path.replace(final)  # the highest checkpoint wins (sorted by batches)
        cut[match["run"]] = int(match["batches"])
    atomic_write_text(record / "cut.json", json.dumps(cut, indent=1, sort_keys=True) + "\n")


def seeds_of(record: Path) -> list[int]:
    return sorted({int(p.name.rsplit("-s", 1)[1]) for p in record.glob("rl-*-s*") if p.is_dir()})


def fast_equals_live(cpu_record: Path) -> list[str]:
    """Whether the held-out suite plays the same in the fast env as in Chromium: random and
    oracle, seeded, episode by episode (`webworld eval --suite runs/heldout --fast ...` against
    learning.py's live rows)."""
    from webworld.eval.results import read_results

    lines = []
    for policy in ("random", "oracle"):
        live, fast = (read_results(cpu_record / "eval" / f"heldout-{policy}{end}.jsonl")
                      for end in ("", "-fast"))
        if not live or not fast:
            continue
        played = {(r["task"], r["episode"]): (r["actions"], r["success"]) for r in live}
        same = sum(played.get((r["task"], r["episode"])) == (r["actions"], r["success"])
                   for r in fast)
        lines.append(f"{policy}: the same actions and outcome in {same} of {len(live)} episodes "
                     f"({sum(r['success'] for r in fast)} successes)")
    command = ("`webworld eval --suite runs/heldout --fast --policy POLICY -n 1 --seed 0 "
               "--traces 0 --out runs/learning/eval/heldout-POLICY-fast.jsonl`")
    return [f"The fast env against Chromium on the held-out suite ({command}, against "
            f"learning.py's live rows): {'; '.join(lines)}.", ""] if lines else []


def played(record: Path, stage: dict) -> int:
    """How many episodes the eval ``stage`` left in the record (under its imported name)."""
    name = Path(stage["command"].split(" --out ", 1)[1].split()[0]).name
    match = CUT.fullmatch(name)
    path = record / "eval" / (f"{match['run']}.jsonl" if match else name)
    return len(path.read_text().splitlines()) if path.is_file() else 0


def cut_evals(record: Path, stages: list[dict]) -> list[str]:
    """The evals whose last try was cut at its limit: their rows hold the episodes played, and
    those cut before their first episode are named as not run."""
    last = {s["stage"]: s for s in stages if s["stage"].startswith("eval ")}
    cut = [(name[5:], played(record, s)) for name, s in last.items() if s["exit"] == 124]
    some, none = [n for n, count in cut if count], [n for n, count in cut if not count]
    return [*([f"Cut at the call's time limit, so over the episodes played by then (the rows' "
               f"episode counts): {'; '.join(some)}.", ""] if some else []),
            *([f"Cut before their first episode (not run): {'; '.join(none)}.", ""]
              if none else [])]


def zero_shot_on_cpu(record: Path) -> list[str]:
    """Where the device left SmolLM2 zero shot out (``--skip zero-shot``), learning.py's live
    row on the CPU."""
    from webworld.eval.results import Rate, read_results

    cpu = read_results(CPU_RECORD / "eval" / "heldout-zero-shot.jsonl")
    if (record / "eval" / "heldout-zero-shot.jsonl").is_file() or not cpu:
        return []
    rate = Rate("zero shot", len(cpu), sum(r["success"] for r in cpu))
    return [f"SmolLM2 zero shot ran on the CPU, in Chromium (`docs/learning.md`), not here: "
            f"{rate.shown()} of {len(cpu)}.", ""]


def peak_rl_lr(record: Path) -> str:
    """The highest rate the RL runs' batches logged: the peak (``gpu_run.py --rl-lr``, else
    the family's) once past the warm-up."""
    rates = {json.loads(line)["lr"] for path in record.glob("rl-*/metrics.jsonl")
             for line in path.read_text().splitlines() if line.strip()}
    return f"{max(rates):g}" if rates else "-"


def rl_tasks(record: Path) -> str:
    """Which tasks the RL runs practised, from their packed configs (runs before configs were
    packed practised the whole training split)."""
    worlds = {Path(json.loads(path.read_text())["worlds"]).name
              for path in record.glob("rl-*/config.json")}
    if not worlds:
        return "the tasks of the whole training split"
    if worlds == {"train-worlds"}:
        return "these ten worlds' tasks, the ones scored here"
    return "the tasks of " + ", ".join(f"`{w}`" for w in sorted(worlds))


def where_sft_ran(stages: list[dict]) -> str:
    """Where the SFT the RL started from was trained: here, or on the CPU (carried as a
    delta, experiments/policy_delta.py)."""
    carried = any(s["stage"] == "sft of the CPU run, from its delta" for s in stages)
    return ", trained on the CPU and carried as its delta" if carried else ""


def shown(path: Path) -> str:
    """``path`` as the page names it: from the repo's root where it is inside."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def write_page(record: Path, doc: Path) -> None:
    results = json.loads((record / "gpu_results.json").read_text())
    stages = results["stages"]
    device = next((s.get("last_line", "") for s in stages if s["stage"] == "python and torch"), "")
    seeds = seeds_of(record) or [0]  # no RL run yet: its rows say so
    cut = json.loads((record / "cut.json").read_text())
    sft = json.loads((record / "sft-relabel" / "sft_summary.json").read_text())
    rl = [(f"after SFT + RL, {reward} reward (seed {s})", f"heldout-rl-{reward}-s{s}")
          for reward in REWARDS for s in seeds]
    plot = doc.with_name(doc.stem + "_curves.png")
    curves = ["## RL curves", "", f"![rollout success per batch]({plot.name})", "",
              f"Highest learning rate the RL runs stepped at: {peak_rl_lr(record)} (after a "
              "2-step warm-up; `gpu_run.py --rl-lr` sets the peak).", "",
              *rl_curves(record, seeds, plot, "cut at the call's limit"), ""] if seeds_of(record) else []
    lines = [
        "# SmolLM2-135M trained on webworld's worlds, on a GPU", "",
        "Made by `experiments/gpu_run.py --plan learning` on a lent device machine "
        f"(`{device}`), from the kit of `bash scripts/gpu_kit.sh learning`: the training "
        "worlds and compact export of `experiments/learning.py` and the held-out worlds with "
        "their fast-env snapshots. Every episode ran in the fast env (the device has no "
        "browser); `docs/learning.md` has the CPU runs and the live held-out rows. The page is "
        f"written by `experiments/learning_gpu.py` from `{shown(record)}/`.", "",
        f"SFT, ids relabelled (`sft-relabel/`{where_sft_ran(stages)}): {sft['steps']} "
        f"optimiser steps, learning rate "
        f"{sft['settings']['learning_rate']}, top {sft['settings']['train_layers']} layers, "
        f"validation loss per epoch {', '.join(f'{v:.3f}' for v in sft['validation_losses'])}.",
        "",
        "## Held-out worlds (fast env)", "",
        *fast_equals_live(CPU_RECORD),
        *cut_evals(record, stages),
        *zero_shot_on_cpu(record),
        *held_out_rows(record, [("SmolLM2 zero shot", "heldout-zero-shot"),
                                ("after SFT, ids relabelled", "heldout-sft-relabel"), *rl]), "",
        "## Training worlds, whole tasks", "",
        "Ten worlds of the training split, every task instance once, greedy, fast env; RL "
        f"practised {rl_tasks(record)}:", "",
        *training_rows(record, seeds), "",
        *(["Cut at its time limit and evaluated at its last checkpoint: "
           + ", ".join(f"`{run}` after {n} batches" for run, n in cut.items()), ""]
          if cut else []),
        *curves,
        "## Stages", "", "Stages of one group ran side by side on the one GPU; exit 124: cut at "
        "its limit.", "",
        "| group | stage | wall (s) | exit |", "|---|---|---|---|",
        *[f"| {s.get('together', '-')} | {s['stage']} | {s['wall_s']:.0f} | {s['exit']} |"
          for s in stages], ""]
    write_keeping_reading(doc, "\n".join(lines))
    print(f"wrote {doc}")


def device_options(parser: argparse.ArgumentParser, plan: str, record: Path, doc: Path) -> None:
    """The options of a page made from a device call's files: the call, the record, the page,
    and where the policies it brought back go."""
    parser.add_argument("--from-device", type=Path, default=None,
                        help=f"a gpu_run.py --plan {plan} call's files (gpu_results.json, "
                             "results.tar.gz)")
    parser.add_argument("--record", type=Path, default=record)
    parser.add_argument("--doc", type=Path, default=doc)
    parser.add_argument("--deltas", type=Path, default=ROOT / "gpu_kit",
                        help="where the policies a call brought back go, as <run>-delta/")
    parser.add_argument("--replace", action="store_true",
                        help="import a call of another lease over the record's")


def main() -> None:
    parser = argparse.ArgumentParser()
    device_options(parser, "learning", RECORD, DOC)
    args = parser.parse_args()
    if args.from_device:
        from policy_delta import receive_all

        import_call(args.from_device, args.record, args.replace)
        receive_all(args.from_device, args.deltas)  # runs the call brought back
    write_page(args.record, args.doc)


if __name__ == "__main__":
    main()
