"""`webworld recipe report DIR`: REPORT.md of a recipe's run folder (or of a record of one: its
results files without the weights), written from the records alone.

Tables: each eval's success with its 95% interval; each RL eval per seed against its baseline
(the same episodes: won, lost, a sign test; the gain) with the mean over seeds and its
t-interval; SFT runs; every stage's wall time and equivalent command. A PNG of the RL runs'
rollout success per batch (matplotlib, from the ``train`` extra)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webworld.errors import UsageError
from webworld.eval.results import Rate, compare, failures, mean_interval, read_results
from webworld.fsio import atomic_write_text
from webworld.recipe.model import Recipe

REPORT = "REPORT.md"
CURVES = "curves.png"
SEEDED = re.compile(r"^(?P<base>.+)-s(?P<seed>\d+)$")


@dataclass(frozen=True)
class SeededEval:
    """An eval scored once per RL seed, and the eval it is paired with."""

    name: str
    seeds: dict[int, str]  # seed -> results name
    baseline: str | None


def write_report(root: Path, recipe: Recipe | None = None) -> Path:
    """Write ``root``/REPORT.md (and curves.png when there are RL metrics); returns its path."""
    if not root.is_dir():
        raise UsageError("no such run folder", str(root))
    recipe = recipe or _recorded_recipe(root)
    title = recipe.name if recipe and recipe.name else root.name
    lines = [f"# Recipe {title}", ""]
    if recipe and recipe.description:
        lines += [recipe.description, ""]
    lines += ["## Evals", "", *eval_rows(root, recipe), ""]
    seeded = seeded_evals(root, recipe)
    if seeded:
        lines += ["## RL over seeds", "", *[row for s in seeded for row in seed_rows(root, s)], ""]
    along = milestone_rows(root, recipe)
    if along:
        lines += ["## Along training", "", *along]
    curves = rl_curves(root)
    if curves:
        lines += ["## RL curves", "", f"![rollout success per batch]({CURVES})", "", *curves, ""]
    sft = sft_lines(root)
    if sft:
        lines += ["## SFT", "", *sft, ""]
    lines += ["## Stages", "", *stage_rows(root), ""]
    return atomic_write_text(root / REPORT, "\n".join(lines))


def _recorded_recipe(root: Path) -> Recipe | None:
    path = root / "recipe.json"
    if not path.is_file():
        return None
    try:
        return Recipe.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        return None  # a recipe of an older version: the report goes by the file names


def _results(root: Path, name: str) -> list[dict[str, Any]]:
    return read_results(root / "eval" / f"{name}.jsonl")


def _rate(records: list[dict[str, Any]]) -> Rate:
    return Rate("", len(records), sum(bool(r["success"]) for r in records))


def eval_names(root: Path) -> list[str]:
    return sorted(p.name.removesuffix(".jsonl") for p in (root / "eval").glob("*.jsonl"))


def eval_rows(root: Path, recipe: Recipe | None) -> list[str]:
    """One row per results file: episodes, success [95% CI], tasks solved, leading failures."""
    rows = ["| eval | policy | suite | episodes | success [95% CI] | tasks with a success | "
            "failure reasons |", "|---|---|---|---|---|---|---|"]
    described = _described(recipe)
    names = eval_names(root)
    if not names:
        return ["No eval results yet."]
    for name in names:
        records = _results(root, name)
        policy, suite = described.get(name, ("", records[0]["suite"] if records else ""))
        if not records:
            rows.append(f"| {name} | {policy} | {suite} | 0 | - | - | - |")
            continue
        tasks = {r["task"] for r in records}
        solved = {r["task"] for r in records if r["success"]}
        reasons = ", ".join(f"{k} {v}" for k, v in failures(records).most_common(3)) or "-"
        rows.append(f"| {name} | {policy} | {suite} | {len(records)} | {_rate(records).shown()} "
                    f"| {len(solved)}/{len(tasks)} | {reasons} |")
    return rows


def _described(recipe: Recipe | None) -> dict[str, tuple[str, str]]:
    """Results name -> (policy, suite) as the recipe names them."""
    if recipe is None:
        return {}
    found = {}
    for ev in recipe.evals:
        run = next((r for r in recipe.rl if r.name == ev.rl_run), None)
        if run is None:
            found[ev.name] = (ev.policy, ev.suite)
        for seed in (ev.seeds or run.seeds) if run else []:
            found[ev.result_name(seed)] = (f"{ev.policy} seed {seed}", ev.suite)
            for step in run.milestones if ev.milestones else []:
                found[ev.result_name(seed, step)] = (f"{ev.policy} seed {seed}, batch {step}",
                                                     ev.suite)
    return found


def milestone_rows(root: Path, recipe: Recipe | None) -> list[str]:
    """Each eval scored at its RL run's milestones: success per seed after each batch kept,
    from its baseline (batch 0) to the run's end, and the mean over seeds."""
    rows: list[str] = []
    runs = {r.name: r for r in recipe.rl} if recipe else {}
    for ev in recipe.evals if recipe else []:
        run = runs.get(ev.rl_run or "")
        if run is None or not ev.milestones:
            continue
        steps = sorted(run.milestones)
        start = f"{ev.baseline} (batch 0)" if ev.baseline else None
        head = ["seed", *([start] if start else []), *(f"batch {s}" for s in steps),
                f"batch {run.steps} (end)"]
        rows += [f"`{ev.name}` along `rl:{run.name}`:", "", "| " + " | ".join(head) + " |",
                 "|" + "---|" * len(head)]
        columns: list[list[float]] = [[] for _ in head[1:]]
        for seed in ev.seeds or run.seeds:
            names = [*([ev.baseline] if ev.baseline else []),
                     *(ev.result_name(seed, s) for s in steps), ev.result_name(seed)]
            cells = []
            for column, name in zip(columns, names, strict=True):
                records = _results(root, name)
                rate = _rate(records).rate if records else None
                if rate is not None:
                    column.append(rate)
                cells.append("-" if rate is None else f"{100 * rate:.1f}%")
            rows.append(f"| {seed} | " + " | ".join(cells) + " |")
        means = [f"{100 * sum(c) / len(c):.1f}%" if c else "-" for c in columns]
        rows += ["| mean | " + " | ".join(means) + " |", ""]
    return rows


def seeded_evals(root: Path, recipe: Recipe | None) -> list[SeededEval]:
    """The evals of RL policies, one results file per seed: the recipe's, or (a record without
    its recipe) every family of ``<name>-s<seed>`` files, unpaired."""
    if recipe is not None:
        runs = {r.name: r for r in recipe.rl}
        return [SeededEval(ev.name, {s: ev.result_name(s) for s in ev.seeds or runs[run].seeds},
                           ev.baseline)
                for ev in recipe.evals if (run := ev.rl_run) is not None and run in runs]
    families: dict[str, dict[int, str]] = {}
    for name in eval_names(root):
        if (match := SEEDED.match(name)) is not None:
            families.setdefault(match["base"], {})[int(match["seed"])] = name
    return [SeededEval(base, dict(sorted(seeds.items())), None)
            for base, seeds in families.items()]


def seed_rows(root: Path, seeded: SeededEval) -> list[str]:
    """An RL eval per seed: success, the paired view against its baseline, the gain; then
    the mean over seeds with its 95% t-interval."""
    baseline = _results(root, seeded.baseline) if seeded.baseline else []
    against = f" against `{seeded.baseline}`" if seeded.baseline else ""
    rows = [f"`{seeded.name}`{against}:", "",
            "| seed | episodes | success [95% CI] | won | lost | sign test p | gain (points) |",
            "|---|---|---|---|---|---|---|"]
    values, gains = [], []
    for seed, name in seeded.seeds.items():
        records = _results(root, name)
        if not records:
            rows.append(f"| {seed} | not run yet | | | | | |")
            continue
        values.append(_rate(records).rate)
        paired = _paired(baseline, records)
        if paired is not None:
            gains.append(paired[3])
        won, lost, p, gain = paired if paired is not None else ("-", "-", "-", None)
        rows.append(f"| {seed} | {len(records)} | {_rate(records).shown()} | {won} | {lost} | "
                    f"{p if isinstance(p, str) else f'{p:.2g}'} | "
                    f"{'-' if gain is None else f'{100 * gain:+.1f}'} |")
    rows += ["", f"Mean over seeds: success {_seed_interval(values, rates=True)}; gain "
             f"{_seed_interval(gains, rates=False)}.", ""]
    return rows


def _paired(baseline: list[dict[str, Any]], records: list[dict[str, Any]]
            ) -> tuple[int, int, float, float] | None:
    """Won, lost, the sign test and the gain in success on the episodes both played."""
    if not {r["key"] for r in baseline} & {r["key"] for r in records}:
        return None
    overall = compare(baseline, records)[0]
    return overall.won, overall.lost, overall.sign_test, overall.b.rate - overall.a.rate


def _seed_interval(values: list[float], *, rates: bool) -> str:
    if not values:
        return "-"
    mean, low, high = mean_interval(values, rates=rates)
    if len(values) == 1:
        return f"{100 * mean:+.1f} points (one seed)" if not rates else \
            f"{100 * mean:.1f}% (one seed)"
    if not rates:
        return f"{100 * mean:+.1f} points [{100 * low:+.1f}, {100 * high:+.1f}]"
    return f"{100 * mean:.1f}% [{100 * low:.1f}, {100 * high:.1f}] over {len(values)} seeds"


def _metrics(run: Path) -> list[dict[str, Any]]:
    path = run / "metrics.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def rl_curves(root: Path) -> list[str]:
    """Rollout success per batch of every RL run: a line each, and the PNG of them all."""
    runs = {p.name: rows for p in sorted(root.glob("rl-*")) if (rows := _metrics(p))}
    if not runs:
        return []
    lines = [f"- `{name}`: {len(rows)} batches, rollout success "
             + ", ".join(f"{r['success_rate']:.2f}" for r in rows) for name, rows in runs.items()]
    _plot(runs, root / CURVES)
    return lines


def _plot(runs: dict[str, list[dict[str, Any]]], path: Path) -> None:
    try:
        import matplotlib
    except ImportError:  # the train extra draws it; the tables need nothing more
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    for name, rows in runs.items():
        ax.plot([r["step"] for r in rows], [r["success_rate"] for r in rows], marker="o",
                label=name)
    ax.set(xlabel="rollout batch", ylabel="rollout success", ylim=(-0.02, 1.02),
           title="RL rollout success per batch")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def sft_lines(root: Path) -> list[str]:
    """One line per SFT run: steps, learning rate, losses."""
    lines = []
    for path in sorted(root.glob("sft*/sft_summary.json")):
        sft = json.loads(path.read_text(encoding="utf-8"))
        settings = sft.get("settings", {})
        validation = ", ".join(f"{v:.3f}" for v in sft.get("validation_losses", [])) or "-"
        train = sft.get("train_loss")
        lines.append(f"- `{path.parent.name}/`: {sft.get('steps')} optimiser steps, learning rate "
                     f"{settings.get('learning_rate')}, train loss "
                     f"{'-' if train is None else f'{train:.3f}'}, validation loss per epoch "
                     f"{validation}.")
    return lines


def stage_rows(root: Path) -> list[str]:
    """Each logged stage: its wall time (whole seconds, every session added up) and command."""
    path = root / "stages.json"
    log = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return ["| stage | wall (s) | command |", "|---|---|---|",
            *[f"| {name}{'' if s.get('ended', True) else ' (not finished)'} | {int(s['wall'])} "
              f"| `{s['command']}` |" for name, s in log.items()]]
