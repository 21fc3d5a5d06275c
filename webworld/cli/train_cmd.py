"""`webworld train sft` (supervised warm start on an export's sft/ split) and `webworld train rl`
(GSPO / VESPO / GRPO / SAPO against the worlds, live or fast, synchronous or asynchronous)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from webworld.cli.config_options import Given, config_options
from webworld.cli.console import err, out
from webworld.cli.errors import reports_errors
from webworld.cli.options import RayInsecure
from webworld.errors import UsageError
from webworld.train.config import RLConfig
from webworld.train.sft import SFTSettings

train_app = typer.Typer(help="Train a policy: SFT warm start, then RL against the worlds.",
                        no_args_is_help=True)


@train_app.command("sft")
@reports_errors
@config_options(SFTSettings)
def sft_cmd(given: Given[SFTSettings]) -> None:
    """Supervised warm start on the verified steps (loss on the assistant reply only)."""
    from webworld.train.sft import run_sft

    result = run_sft(given.settings(), progress=True)
    vals = ", ".join(f"{v:.4f}" for v in result.validation_losses) or "no validation split"
    loss = f"train loss {result.train_loss:.4f}" if math.isfinite(result.train_loss) else \
        "no step left to take (resumed at its last checkpoint)"
    out.print(f"SFT: {result.steps} steps in {result.seconds:.0f} s, {loss}, validation loss "
              f"per epoch: {vals}")
    out.print(f"model: {result.model_dir}")


@train_app.command("corrections")
@reports_errors
def corrections_cmd(
    results: list[Path] = typer.Option(..., "--results", help="`webworld eval` results files "
                                       "of the policy (repeat the option for several)."),
    worlds: Path = typer.Option(..., "--worlds", help="The evaluated worlds: a folder with "
                                "sites/ and trajectories/ (their fast-env snapshots built)."),
    data: Path = typer.Option(..., "--data", help="The export the policy's SFT trained on."),
    out_dir: Path = typer.Option(..., "--out", help="The new export folder (replaced)."),
    original: float = typer.Option(1.0, "--original", min=0.0, help="The export's own "
                                   "training chats kept, as a multiple of the corrections."),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """DAgger: SFT chats that correct a policy's evaluated episodes from verified paths.

    The verified action at every page a policy's evaluated episodes reached on a
    verified path, with its own history, as SFT chats beside the export's (train sft on the
    new export from the policy)."""
    import json

    from webworld.eval.results import read_results
    from webworld.rl.fast.env import FastEnv
    from webworld.rl.tasks import load_worlds, verified_paths
    from webworld.train.corrections import corrected_export, corrections

    missing = [str(p) for p in results if not p.is_file()]
    if missing:
        raise UsageError("no such results file", ", ".join(missing))
    if not (data / "sft" / "train.jsonl").is_file():
        raise UsageError("not an SFT export (no sft/train.jsonl)", str(data))
    manifest = json.loads((data / "manifest.json").read_text()) \
        if (data / "manifest.json").is_file() else {}
    loaded = load_worlds(worlds / "sites", worlds / "trajectories")
    # the pages as the export shows them (an hf policy reads and was evaluated on compact)
    env = FastEnv(loaded, split=None, max_steps=10_000,
                  observation=manifest.get("observation", "compact"))
    paths = verified_paths(worlds / "trajectories", loaded.worlds)
    rows = [row for path in results for row in read_results(path)]
    usable = [row for row in rows if row.get("task") in paths]
    if not usable:
        raise UsageError(f"none of the {len(rows)} episodes is of a task with a verified path "
                         "in these worlds", str(worlds))
    counts = corrected_export(data, out_dir, list(corrections(env, usable, paths)),
                              original=original, seed=seed)
    out.print(f"{len(usable)} episodes ({len(rows) - len(usable)} of other worlds left out): "
              f"{counts['corrections']} corrections, {counts['original']} chats of the export "
              f"-> {out_dir / 'sft' / 'train.jsonl'}")


@train_app.command("rl")
@reports_errors
@config_options(RLConfig)
def rl_cmd(
    given: Given[RLConfig],
    config_file: Path = typer.Option(None, "--config", help="A TOML file of settings (keys: "
                                     "the flags' names with underscores, [loss] for --loss-*; "
                                     "flags win)."),
    ray_insecure: bool = RayInsecure,
    resume: bool = typer.Option(False, "--resume", help="Go on from the run folder's last "
                                                        "checkpoint, with its settings."),
) -> None:
    """Multi-turn RL with groups of episodes per task; metrics, TensorBoard, curves.png."""
    from webworld.train.checkpoint import latest
    from webworld.train.config import read_rl_toml, saved_config
    from webworld.train.loop import RLRun

    base = read_rl_toml(config_file) if config_file is not None else {}
    config = given.settings(base, str(config_file))
    if resume:
        saved = saved_config(config.out)
        config = given.settings(saved.model_dump(mode="json"), str(config.out / "config.json"))
    elif latest(config.out) is not None:
        raise UsageError("this run folder holds checkpoints: pass --resume, or choose another "
                         "--out", str(config.out))
    if config.warmup_steps * 2 > config.steps * config.minibatches:
        err.print(f"[yellow]warning[/]: the warm-up ({config.warmup_steps} optimiser steps) is "
                  f"over half of this run's {config.steps * config.minibatches}: most of it "
                  "learns below the peak rate (--warmup sets it)")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[status]}"), TimeElapsedColumn(), console=err) as bar:
        run = RLRun(config)
        task = bar.add_task(f"{config.algo} rollout batches", total=config.steps,
                            completed=run.start_step, status="")

        def show(row: dict[str, Any]) -> None:
            drift = f" kl {row['step_kl']:.2g}" if "step_kl" in row else ""
            bar.update(task, completed=row["step"],
                       status=f"success {row['success_rate']:.2f} reward "
                              f"{row['reward_mean']:.2f}{drift}")
            if row.get("warning"):
                err.print(f"[yellow]warning[/]: batch {row['step']}: {row['warning']}")

        run.on_step = show
        result = run.run()
    last = result.rows[-1] if result.rows else {}
    out.print(f"{config.algo}: {result.steps} rollout batches, last success rate "
              f"{last.get('success_rate', 0):.3f}, {result.seconds:.0f} s this session")
    out.print(f"run folder: {result.out} (metrics.jsonl, tb/, curves.png, model/)")
