"""Where a run's numbers go: ``metrics.jsonl`` (one line per rollout batch, fsynced),
TensorBoard event files (``tb/``) and ``curves.png``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from webworld.fsio import atomic_write_bytes

CURVES = (("success_rate", "success rate"), ("reward_mean", "reward"),
          ("episode_steps", "steps / episode"), ("loss", "loss"),
          ("step_kl", "KL(before || after) of an optimiser step"),
          ("step_log_ratio_abs_p99", "|log pi/mu| p99 after a step"),
          ("entropy", "entropy (nats / reply token)"), ("grad_norm", "gradient norm"),
          ("zero_advantage_groups", "groups with all advantages 0"),
          ("ess", "ESS of the sequence weights"), ("lag_mean", "policy lag (versions)"),
          ("lr", "learning rate"))


class MetricsLog:
    def __init__(self, out: Path, resume_step: int) -> None:
        self.path = out / "metrics.jsonl"
        self.rows = [r for r in read_metrics(self.path) if r["step"] <= resume_step]
        # what a killed run wrote after its last checkpoint is played again: drop it
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in self.rows), encoding="utf-8")
        os.replace(tmp, self.path)
        self.file = self.path.open("a", encoding="utf-8")
        self.tb = _tensorboard(out / "tb", resume_step + 1)

    def write(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        self.file.write(json.dumps(row) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())
        if self.tb is not None:
            for key, value in row.items():
                if isinstance(value, int | float) and key != "step":
                    self.tb.add_scalar(key, value, row["step"])
            # each optimiser step of the batch, at its own global step
            first = row.get("optimizer_steps", 0) - len(row.get("updates", [])) + 1
            for n, update in enumerate(row.get("updates", [])):
                for key, value in update.items():
                    self.tb.add_scalar(f"update/{key}", value, first + n)
            self.tb.flush()

    def close(self) -> None:
        self.file.close()
        if self.tb is not None:
            self.tb.close()


def read_metrics(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut by a kill
    return rows



def final_success(rows: list[dict[str, Any]], last: int = 3) -> float:
    """Mean rollout success of an RL run's last ``last`` batches (rows of metrics.jsonl)."""
    tail = rows[-last:]
    return sum(r["success_rate"] for r in tail) / max(len(tail), 1)


def area_under_curve(rows: list[dict[str, Any]]) -> float:
    """Mean rollout success over all batches (the area under the curve, normalised)."""
    return sum(r["success_rate"] for r in rows) / max(len(rows), 1)


def batches_to(rows: list[dict[str, Any]], level: float, window: int = 3) -> int | None:
    """The first batch where the mean success of the last ``window`` batches reaches
    ``level`` (None: never)."""
    for end in range(window, len(rows) + 1):
        if final_success(rows[:end], window) >= level:
            return rows[end - 1]["step"]
    return None

def _tensorboard(folder: Path, purge_step: int) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is a dependency; a trimmed install still trains
        return None
    return SummaryWriter(str(folder), purge_step=purge_step)


def plot_curves(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """The run's curves, one panel per metric, as a PNG."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 4, figsize=(15, 9))
    for ax, (key, label) in zip(axes.flat, CURVES):
        points = [(r["step"], r[key]) for r in rows if key in r]
        if points:
            ax.plot(*zip(*points), marker="o", markersize=2)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("rollout batch", fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())
