"""`webworld train sft` (supervised warm start on an export's sft/ split) and `webworld train rl`
(GSPO / VESPO / GRPO / SAPO against the worlds, live or fast, synchronous or asynchronous)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from webworld.cli.console import err, out
from webworld.cli.errors import reports_errors
from webworld.cli.options import RayAddress, RayInsecure, RayWorkers
from webworld.errors import UsageError, validation_problems

train_app = typer.Typer(help="Train a policy: SFT warm start, then RL against the worlds.",
                        no_args_is_help=True)


@train_app.command("sft")
@reports_errors
def sft_cmd(
    data: Path = typer.Option(..., "--data", help="An export folder with sft/train.jsonl "
                                                  "(webworld export --formats sft)."),
    extra_data: list[Path] = typer.Option([], "--extra-data", help="Another export (other "
                                          "worlds, same observation mode) whose training chats "
                                          "join --data's; repeatable."),
    model: str = typer.Option("tiny", "--model", help="tiny, smollm2 or a model folder."),
    run_dir: Path = typer.Option(..., "--out", help="The run folder (resumes from its checkpoints)."),
    epochs: float = typer.Option(None, "--epochs", min=0.01, help="Passes over the data "
                                 "(default 3), at least --min-steps optimiser steps."),
    min_steps: int = typer.Option(None, "--min-steps", min=1, help="Optimiser steps at least "
                                  "(default 200)."),
    learning_rate: float = typer.Option(None, "--lr", help="Peak learning rate (default: the "
                                        "model family's)."),
    train_layers: int = typer.Option(None, "--train-layers", min=0, help="Train only the top "
                                     "K transformer layers (0: all; default: the family's)."),
    batch_size: int = typer.Option(8, "--batch-size", min=1),
    max_length: int = typer.Option(2048, "--max-length", min=16),
    max_steps: int = typer.Option(-1, "--max-steps", help="Overrides --epochs when > 0."),
    seed: int = typer.Option(0, "--seed"),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda"),
    precision: str = typer.Option("auto", "--precision", help="Compute: auto (bf16 on a CUDA "
                                  "GPU, else fp32), fp32 or bf16 (autocast over fp32 weights: "
                                  "faster on a CPU with AMX, docs/sft_settings.md)."),
    relabel_ids: bool = typer.Option(False, "--relabel-ids", help="Renumber each chat's element "
                                     "ids at random (in page order) every epoch, so ids are "
                                     "read off the page, not learnt by heart."),
    shuffle_ids: bool = typer.Option(False, "--shuffle-ids", help="Like --relabel-ids, in no "
                                     "page order: no count down the page gives an id, only "
                                     "copying it from its line does."),
    vary_values: bool = typer.Option(False, "--vary-values", help="Replace the value each chat "
                                     "types (the task gives it) with a new one of its field "
                                     "every epoch, so values are copied, not recalled."),
    move_choices: bool = typer.Option(False, "--move-choices", help="Move the element each "
                                      "chat picks (the task names it) to a sibling's place every "
                                      "epoch, so choices are read, not placed."),
    rename_choices: bool = typer.Option(False, "--rename-choices", help="Give the element each "
                                        "chat picks (the task names it) a new name, in task and "
                                        "page, every epoch, so names are found, not recalled."),
    vary_dates: bool = typer.Option(False, "--vary-dates", help="Move the date each chat's task "
                                    "asks for to another day of its month (task, calendar, reply) "
                                    "every epoch, so days are read, not recalled."),
    skip_detours: bool = typer.Option(False, "--skip-detours", help="Leave out the training "
                                      "chats the export marks `detour` (steps a longer path took "
                                      "that its task did without), so only needed steps are "
                                      "taught."),
) -> None:
    """Supervised warm start on the verified steps (loss on the assistant reply only)."""
    from pydantic import ValidationError

    from webworld.train.sft import SFTSettings, run_sft

    try:
        given = {"epochs": epochs, "min_steps": min_steps, "learning_rate": learning_rate,
                 "train_layers": train_layers}
        settings = SFTSettings(data=data, extra_data=extra_data, model=model, out=run_dir,
                               batch_size=batch_size, max_length=max_length, max_steps=max_steps,
                               seed=seed, device=device, precision=precision,
                               relabel_ids=relabel_ids,
                               shuffle_ids=shuffle_ids,
                               vary_values=vary_values, move_choices=move_choices,
                               rename_choices=rename_choices, vary_dates=vary_dates,
                               skip_detours=skip_detours,
                               **{k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        raise UsageError(validation_problems(exc)) from None
    result = run_sft(settings, progress=True)
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
def rl_cmd(
    config_file: Path = typer.Option(None, "--config", help="A TOML file of settings "
                                                            "(flags win)."),
    algo: str = typer.Option(None, "--algo", help="vespo, gspo, gspo-token, grpo or sapo."),
    model: str = typer.Option(None, "--model", help="tiny, smollm2 or a model folder."),
    worlds: Path = typer.Option(None, "--worlds", help="A folder with sites/ and trajectories/."),
    split: str = typer.Option(None, "--split", help="train (default), validation, test or all."),
    env: str = typer.Option(None, "--env", help="fast (default) or live."),
    ray: str = RayAddress,
    ray_workers: int = RayWorkers,
    ray_insecure: bool = RayInsecure,
    observation: str = typer.Option(None, "--observation", help="compact (default) or full."),
    run_dir: Path = typer.Option(None, "--out", help="The run folder (default runs/rl)."),
    steps: int = typer.Option(None, "--steps", help="Rollout batches."),
    tasks_per_step: int = typer.Option(None, "--tasks", help="Task instances per batch."),
    group_size: int = typer.Option(None, "--group-size", "-G", help="Episodes per task instance."),
    minibatches: int = typer.Option(None, "--minibatches", "-N",
                                    help="Optimiser steps per rollout batch."),
    async_lag: int = typer.Option(None, "--async", help="Rollouts run ahead by up to K versions."),
    envs: int = typer.Option(None, "--envs", help="Episodes played at once."),
    from_goal: int = typer.Option(None, "--from-goal", help="Start K steps before the goal "
                                  "(the verified path replayed up to there); 0: whole tasks."),
    curriculum: bool = typer.Option(None, "--curriculum/--no-curriculum", help="Widen "
                                    "--from-goal by one step whenever a batch's success reaches "
                                    "--curriculum-threshold, up to whole tasks."),
    curriculum_threshold: float = typer.Option(None, "--curriculum-threshold"),
    reward: str = typer.Option(None, "--reward", help="success (default) or progress (plus "
                               "the change in distance to the goal, from the true state; "
                               "per-turn credit)."),
    max_new_tokens: int = typer.Option(None, "--max-new-tokens"),
    temperature: float = typer.Option(None, "--temperature", help="Sampling temperature (the "
                                      "policy trained is the tempered one)."),
    learning_rate: float = typer.Option(None, "--lr", help="Peak learning rate (default: the "
                                        "model family's, see docs/learning_rates.md)."),
    warmup_steps: int = typer.Option(None, "--warmup", help="Optimiser steps of linear warm-up."),
    precision: str = typer.Option(None, "--precision", help="Sampling compute: auto (bf16 on "
                                  "CUDA), fp32 or bf16; weights stay fp32."),
    seed: int = typer.Option(None, "--seed"),
    device: str = typer.Option(None, "--device", help="auto, cpu or cuda"),
    checkpoint_every: int = typer.Option(None, "--checkpoint-every"),
    measure_drift: bool = typer.Option(None, "--measure-drift/--no-measure-drift", help="After "
                                       "each optimiser step, score its episodes again: how far "
                                       "the step moved the policy (a forward pass; default on). "
                                       "The updates are the same either way."),
    resume: bool = typer.Option(False, "--resume", help="Go on from the run folder's last "
                                                        "checkpoint, with its settings."),
) -> None:
    """Multi-turn RL with groups of episodes per task; metrics, TensorBoard, curves.png."""
    from webworld.train.checkpoint import latest
    from webworld.train.config import load_rl_config, saved_config, validate_config
    from webworld.train.loop import RLRun

    flags: dict[str, Any] = {
        "algo": algo, "model": model, "worlds": worlds, "split": split, "env": env,
        "ray": ray, "ray_workers": ray_workers,
        "observation": observation, "out": run_dir, "steps": steps,
        "tasks_per_step": tasks_per_step, "group_size": group_size, "minibatches": minibatches,
        "async_lag": async_lag, "envs": envs, "from_goal": from_goal,
        "curriculum": curriculum, "curriculum_threshold": curriculum_threshold, "reward": reward,
        "max_new_tokens": max_new_tokens, "temperature": temperature,
        "learning_rate": learning_rate, "warmup_steps": warmup_steps, "precision": precision,
        "seed": seed, "device": device,
        "checkpoint_every": checkpoint_every, "measure_drift": measure_drift}
    config = load_rl_config(config_file, dict(flags))
    if resume:
        given = {k: v for k, v in flags.items() if v is not None}
        config = validate_config({**saved_config(config.out).model_dump(), **given},
                                 str(config.out / "config.json"))
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
