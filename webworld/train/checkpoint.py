"""Checkpoints of an RL run: ``<out>/checkpoints/step-NNNNNN/`` holds the policy (a model
folder any loader takes), the optimiser, the counters, and in asynchronous runs the recent
weight versions the rollouts still need. A checkpoint is written next to its place and moved
in whole, so a killed run always finds complete ones. ``<out>/milestones/step-NNNNNN/`` holds
the policy alone at the batches the run was asked to keep (``milestones``), never deleted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch

from webworld.fsio import replace_dir, staging_dir
from webworld.train.models import save_policy


def checkpoints(out: Path) -> list[Path]:
    folder = out / "checkpoints"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.startswith("step-") and
                  (p / "state.json").is_file())


def latest(out: Path) -> Path | None:
    found = checkpoints(out)
    return found[-1] if found else None


def save_checkpoint(out: Path, step: int, model: Any, tokenizer: Any, learner_state: dict[str, Any],
                    snapshots: dict[int, dict[str, torch.Tensor]], keep: int) -> Path:
    final = out / "checkpoints" / f"step-{step:06d}"
    with staging_dir(final) as tmp:
        save_policy(model, tokenizer, tmp / "model")
        torch.save(learner_state, tmp / "learner.pt")
        if snapshots:
            torch.save(snapshots, tmp / "snapshots.pt")
        (tmp / "state.json").write_text(json.dumps({"step": step}), encoding="utf-8")
        replace_dir(tmp, final)
    for old in checkpoints(out)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def milestone_dir(out: Path, step: int) -> Path:
    """Where the policy after rollout batch ``step`` is kept (a model folder)."""
    return out / "milestones" / f"step-{step:06d}"


def load_checkpoint(folder: Path) -> tuple[int, dict[str, Any], dict[int, dict[str, torch.Tensor]]]:
    """(step, learner state, weight snapshots); the model is ``folder / "model"``."""
    step = json.loads((folder / "state.json").read_text(encoding="utf-8"))["step"]
    learner = torch.load(folder / "learner.pt", weights_only=False)
    snaps = folder / "snapshots.pt"
    return step, learner, torch.load(snaps, weights_only=True) if snaps.is_file() else {}
