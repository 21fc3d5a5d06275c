"""The GPU kit's command (experiments/gpu_run.py) in its CPU smoke mode: every stage a lent GPU
machine runs (SFT, RL with progress rewards and the curriculum on the fast env, eval before and
after) goes through with the tiny policy, and the tables come out. The trainer and the fast env
import without FastAPI, Playwright or Ray, which the device does not have."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.rl.conftest import Built
from webworld.data.export import export_dataset

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ("fastapi", "starlette", "uvicorn", "playwright", "ray")


def test_the_trainer_and_the_fast_env_import_without_server_browser_or_ray() -> None:
    probe = f"""
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ImportError("blocked " + name)
sys.meta_path.insert(0, Blocked())
import webworld.cli.main, webworld.train.loop, webworld.train.sft, webworld.rl.fast.env
import webworld.eval.runner
print("imported")
"""
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.strip() == "imported", done.stderr[-2000:]


@pytest.mark.slow  # ~70 s: five stages, each a `webworld` process loading torch
def test_the_gpu_run_goes_through_in_smoke_mode(flight: Built, tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    shutil.copytree(flight.root, kit / "worlds", ignore=shutil.ignore_patterns("*.lock"))
    export_dataset(kit / "worlds" / "trajectories", kit / "data", formats={"sft"},
                   splits=(1.0, 0.0, 0.0), observation="compact", progress=False)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "experiments/gpu_run.py", "--smoke", "--kit", str(kit),
                           "--out", str(out), "--work", str(tmp_path / "work")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((out / "gpu_results.json").read_text())
    assert [s["stage"] for s in results["stages"]] == [
        "python and torch", "sft", "rl vespo", "eval after SFT", "eval after SFT + RL"]
    assert all(s["exit"] == 0 for s in results["stages"])
    assert len(results["rl"]) == 2 and all("from_goal" in m for m in results["rl"])
    table = (out / "gpu_results.md").read_text()
    assert "| after SFT + RL |" in table and "/" in table
    assert (out / "gpu_run.log").stat().st_size > 0
