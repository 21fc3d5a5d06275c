"""The GPU kit's command (experiments/gpu_run.py) in its CPU smoke mode: every stage a lent GPU
machine runs (SFT, RL with progress rewards and the curriculum on the fast env, eval before and
after) goes through with the tiny policy, and the tables come out. The trainer and the fast env
import without FastAPI, Playwright, Ray, datasets, TRL or openai, which the device does not have."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.rl.conftest import Built
from webworld.data.export import export_dataset

ROOT = Path(__file__).resolve().parents[2]
# what the device image lacks and the kit does not carry (scripts/gpu_kit.sh)
BLOCKED = ("fastapi", "starlette", "uvicorn", "multipart", "playwright", "ray", "datasets", "trl",
           "openai", "browsergym")


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


# ~50 s alone: seven stages, each a `webworld` process loading torch
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
        "python and torch", "sft", "eval after SFT", "rl vespo progress",
        "eval after SFT + RL (progress, 2 batches)", "rl vespo success",
        "eval after SFT + RL (success, 2 batches)"]
    assert all(s["exit"] == 0 for s in results["stages"]), results["stages"]
    for reward in ("progress", "success"):
        assert len(results["rl"][reward]) == 2
        assert all("from_goal" in m for m in results["rl"][reward])
    table = (out / "gpu_results.md").read_text()
    assert "| after SFT + RL (success, 2 batches) | " in table and "not run" not in table
    assert (out / "gpu_run.log").stat().st_size > 0


def test_a_stage_past_its_limit_is_killed_with_its_children_and_the_run_goes_on(
        tmp_path: Path) -> None:
    from experiments.gpu_run import Runner

    runner = Runner(tmp_path / "log", dict(os.environ), budget_s=60)
    pid_file = tmp_path / "child.pid"
    spawn = (f"import subprocess, time; child = subprocess.Popen(['sleep', '60']); "
             f"open({str(pid_file)!r}, 'w').write(str(child.pid)); time.sleep(60)")
    started = time.perf_counter()
    assert runner.run("stuck", [sys.executable, "-c", spawn], limit_s=2) == 124
    assert time.perf_counter() - started < 20
    time.sleep(0.5)
    status = Path(f"/proc/{pid_file.read_text()}/status")  # the grandchild went with it
    assert not status.exists() or "zombie" in status.read_text()
    assert runner.run("next", [sys.executable, "-c", "print('ran')"]) == 0
    assert [r["exit"] for r in runner.rows] == [124, 0]
    assert "killed after 2 s" in (tmp_path / "log").read_text()
