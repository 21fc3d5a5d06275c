"""The README's tiny example as written, default settings throughout (slow: about 5 minutes on
2 cores): one easy world, its compact SFT export, SFT of `tiny`, then `train rl --from-goal 1`,
whose rollout success must rise."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TOUR = [
    ["build", "--theme", "online bookstore", "--profile", "easy"],
    ["export", "trajectories", "--out", "datasets/compact", "--format", "sft",
     "--observation", "compact"],
    ["train", "sft", "--data", "datasets/compact", "--model", "tiny", "--out", "runs/sft"],
    ["train", "rl", "--model", "runs/sft/model", "--worlds", ".", "--from-goal", "1",
     "--out", "runs/rl"],
]


def test_the_readme_tiny_example_learns(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for args in TOUR:
        assert "webworld " + " ".join(f'"{a}"' if " " in a else a for a in args) in \
            " ".join(readme.split()), args  # the README shows exactly these commands
        done = subprocess.run([sys.executable, "-c", "from webworld.cli.main import app; app()",
                               *args], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(x) for x in (tmp_path / "runs/rl/metrics.jsonl").read_text().splitlines()]
    success = [r["success_rate"] for r in rows]
    third = len(success) // 3
    assert statistics.fmean(success[-third:]) > statistics.fmean(success[:third]) + 0.1, success
