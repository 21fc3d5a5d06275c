"""`webworld export`: verified trajectories -> JSONL, Parquet, HF datasets, SFT chats, card."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich.table import Table

from webworld.cli.console import out
from webworld.cli.errors import reports_errors
from webworld.cli.options import TRAJECTORIES_DIR
from webworld.data.export import FORMATS, ExportSummary, export_dataset
from webworld.data.splits import SPLITS
from webworld.errors import UsageError
from webworld.pipeline import DATASET_DIR as DATASETS_DIR

ExportFormat = StrEnum("ExportFormat", {f: f for f in FORMATS})  # type: ignore[misc]


@reports_errors
def export_cmd(
    traj_root: Path = typer.Argument(TRAJECTORIES_DIR,
                                     help="Folder of <world>/verified.jsonl (the verifier's output)."),
    out_dir: Path = typer.Option(DATASETS_DIR, "--out", "-o",
                                 help="Export folder; an earlier export there is replaced."),
    formats: list[ExportFormat] = typer.Option(None, "--format", "-f",
                                               help="Repeat for several (default: all)."),
    seed: int = typer.Option(0, "--seed", "-s", help="Which worlds go to which split."),
    worlds: list[str] = typer.Option(None, "--world", "-w",
                                     help="Export only this world (repeatable; default: all)."),
    splits: str = typer.Option("0.8,0.1,0.1", "--splits",
                               help="Train, validation, test fractions of the worlds."),
    observation: str = typer.Option("full", "--observation",
                                    help="Page text in the SFT prompts: full or compact "
                                         "(train and act in the same mode)."),
    actions: str = typer.Option("named", "--actions",
                                help="How SFT replies act: named (by role and name where "
                                     "that picks the element out, else by id) or ids."),
) -> None:
    """Turn verified trajectories into datasets, split by world, with a dataset card."""
    chosen = {f.value for f in formats} if formats else set(FORMATS)
    summary = export_dataset(traj_root, out_dir, formats=chosen, splits=_fractions(splits),
                             seed=seed, worlds=worlds or None, observation=observation,
                             actions=actions, console=out)
    print_summary(summary)


def _fractions(text: str) -> tuple[float, float, float]:
    try:
        parts = tuple(float(p) for p in text.split(","))
    except ValueError:
        parts = ()
    if len(parts) != 3:
        raise UsageError(f"--splits takes three numbers like 0.8,0.1,0.1, got {text!r}")
    return parts  # type: ignore[return-value]


def print_summary(summary: ExportSummary) -> None:
    table = Table("world", "split", "theme", "transition", "trajectories", "steps",
                  "mean FSM length", "failures", title="webworld export")
    for w in sorted(summary.worlds.values(), key=lambda w: (w.split is None, w.world_id)):
        failures = ", ".join(f"{k} {v}" for k, v in w.failures.items()) or "-"
        table.add_row(w.world_id, w.split or "[dim]left out[/]", w.theme, w.transition,
                      str(w.trajectories), str(w.steps), f"{w.mean_length:.2f}", failures)
    table.add_section()
    for split in SPLITS:
        s = summary.splits[split]
        worlds = f"{len(s.worlds)} world{'s' * (len(s.worlds) != 1)}"
        table.add_row(worlds, split, "", "", str(s.trajectories), str(s.steps), "", "")
    out.print(table)
    for note in summary.notes:
        out.print(f"[yellow]note:[/] {note}")
    files = ", ".join(summary.formats)
    acts = "by role and name where that is unique" if summary.actions == "named" else "by id"
    out.print(f"{summary.named_steps} of {summary.steps} steps' elements have a unique role and "
              f"name; the SFT replies act {acts}")
    out.print(f"{summary.trajectories} trajectories, {summary.steps} steps from "
              f"{sum(1 for w in summary.worlds.values() if w.split)} worlds in "
              f"{summary.seconds:.1f}s; wrote {files} and README.md to {summary.out_dir}")
