"""What the RL experiments on the button board share: the board and its start policy per seed,
one resumable `webworld train rl` run, and the numbers read off its metrics.

A board (``webworld.train.sanity``) is one page of K buttons and a task naming one; the start
policy knows the reply format and presses a button at random. Each run is a `webworld train
rl` command in a subprocess with one torch thread, resumable (``--resume``) and recorded with
its wall time in ``experiment.json`` next to its metrics.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webworld.fsio import atomic_write_json  # noqa: E402


def rel(path: Path) -> str:
    return os.path.relpath(path, ROOT)


def prepare_board(work: Path, seed: int, buttons: int, model: str, warm_steps: int) -> Path:
    """``work/board-k<K>-s<seed>/``: the built board and ``start-<model>/``, made once."""
    import torch

    from webworld.train.sanity import board_spec, build_board, format_warm_start

    root = work / f"board-k{buttons}-s{seed}"
    if not (root / ".built").is_file():
        build_board(root, board_spec(seed, buttons))
        (root / ".built").touch()
    start = root / f"start-{model}"
    if not (start / "config.json").is_file():
        torch.set_num_threads(1)
        format_warm_start(root, start, model=model, steps=warm_steps, seed=seed)
    return root


def train_rl(out: Path, board: Path, flags: list[str]) -> dict:
    """Run (or resume, or just read) ``webworld train rl`` into ``out``: its command, wall time
    and metrics rows."""
    command = ["train", "rl", "--worlds", rel(board), "--split", "all", "--env", "fast",
               "--out", rel(out), *flags]
    log = out / "experiment.json"
    if not ((out / "model" / "config.json").is_file() and log.is_file()):
        resume = ["--resume"] if (out / "checkpoints").is_dir() else []
        started = time.perf_counter()
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        subprocess.run([sys.executable, "-c", "from webworld.cli.main import app; app()",
                        *command, *resume], check=True, cwd=ROOT, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        earlier = json.loads(log.read_text())["wall"] if log.is_file() else 0.0
        atomic_write_json(log, {"command": "webworld " + " ".join(command),
                                "wall": earlier + time.perf_counter() - started})
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    config = json.loads((out / "config.json").read_text())
    return {"rows": rows, "config": config, **json.loads(log.read_text())}


def final_success(rows: list[dict], last: int = 3) -> float:
    """Mean rollout success of the last ``last`` batches."""
    tail = rows[-last:]
    return sum(r["success_rate"] for r in tail) / max(len(tail), 1)


def area_under_curve(rows: list[dict]) -> float:
    """Mean rollout success over all batches (the area under the curve, normalised)."""
    return sum(r["success_rate"] for r in rows) / max(len(rows), 1)


def batches_to(rows: list[dict], level: float, window: int = 3) -> int | None:
    """The first batch where the mean success of the last ``window`` batches reaches ``level``."""
    for end in range(window, len(rows) + 1):
        if final_success(rows[:end], window) >= level:
            return rows[end - 1]["step"]
    return None


def mean_interval(values: list[float], *, rates: bool = True) -> tuple[float, float, float]:
    """Mean and a 95% t-interval over seeds (min and max when there are fewer than 2), kept
    within [0, 1] for ``rates`` (a difference of rates may be below 0)."""
    import statistics

    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    t = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78}.get(len(values), 2.26)
    half = t * statistics.stdev(values) / len(values) ** 0.5
    if not rates:
        return mean, mean - half, mean + half
    return mean, max(0.0, mean - half), min(1.0, mean + half)
