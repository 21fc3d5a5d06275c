"""Ctrl-C: each long command, as a real process, stops mid-work with exit status 130 and the
line saying what was kept, leaves no half-written file, and the same command run again
resumes and finishes. The signal goes to the whole process group, as a terminal sends it
(Chromium and Playwright's driver get it too)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.data.factory import make_traj_root
from tests.rl.conftest import Built
from webworld.data.export import export_dataset

WEBWORLD = [sys.executable, "-m", "webworld"]
HANG_GUARD_S = 120  # a command that ignores the signal would run on: fail instead of waiting
SMALL_BUILD = ["--theme", "hotel", "--profile", "easy", "--workers", "1"]


def start(args: list[str], cwd: Path) -> subprocess.Popen:
    # SIGINT as a terminal leaves it: a test process may ignore it, and a child would inherit
    return subprocess.Popen([*WEBWORLD, *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_until(proc: subprocess.Popen, mid_work: Callable[[], bool]) -> None:
    """Until ``mid_work()`` holds (a file the command writes as it goes); the command must
    still be running then."""
    deadline = time.monotonic() + 600  # a hang guard: a loaded machine is slow, not stuck
    while not mid_work():
        assert proc.poll() is None, f"ended before it was interrupted: {proc.communicate()}"
        assert time.monotonic() < deadline, "never got to the middle of its work"
        time.sleep(0.02)


def interrupt(proc: subprocess.Popen, cwd: Path) -> str:
    """Ctrl-C to the command's process group; its stderr. Exit 130 and no partial file."""
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 130, stderr[-3000:]
    assert "stopped by Ctrl-C" in stderr and "Traceback" not in stderr, stderr[-3000:]
    assert not list(cwd.rglob("*.tmp")), "a half-written output was left"
    return stderr


def finish(args: list[str], cwd: Path) -> str:
    done = subprocess.run([*WEBWORLD, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return done.stdout


def lines(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def recorded(world: Path) -> list[str]:
    return [r["id"] for name in ("verified.jsonl", "failures.jsonl")
            for r in lines(world / name)]


def test_ctrl_c_stops_a_build_while_it_verifies_and_the_rerun_resumes(tmp_path: Path) -> None:
    build = start(["build", *SMALL_BUILD], tmp_path)
    wait_until(build, lambda: any(p.stat().st_size for p in
                                  tmp_path.glob("trajectories/*/verified.jsonl")))
    interrupt(build, tmp_path)
    [world] = (tmp_path / "trajectories").iterdir()
    kept = recorded(world)
    candidates = lines(world / "candidates.jsonl")
    assert 1 <= len(kept) < len(candidates), "interrupted part of the way through verifying"
    # no replay was cut short into a "failure" (a browser closed under it by the Ctrl-C):
    # this small world verifies whole (tests/cli/test_cli.py), so any failure is that
    assert lines(world / "failures.jsonl") == []
    assert not (tmp_path / "datasets").exists()
    finish(["build", *SMALL_BUILD], tmp_path)
    assert set(kept) <= set(recorded(world))
    assert sorted(recorded(world)) == sorted(c["id"] for c in candidates)  # each once
    assert json.loads((world / "verify_stats.json").read_text())["skipped"] == len(kept)
    assert (tmp_path / "datasets" / "webworld" / "README.md").is_file()


@pytest.mark.slow  # the build's and the export's Ctrl-C stay in the default run
def test_ctrl_c_stops_verify_and_the_rerun_resumes(lab: Built, tmp_path: Path) -> None:
    world = tmp_path / "trajectories" / lab.spec.id
    world.mkdir(parents=True)
    shutil.copy(lab.trajectories / lab.spec.id / "candidates.jsonl", world)
    args = ["verify", "--sites", str(lab.sites), "--workers", "1"]
    verify = start(args, tmp_path)
    wait_until(verify, lambda: (world / "verified.jsonl").is_file()
               and (world / "verified.jsonl").stat().st_size > 0)
    interrupt(verify, tmp_path)
    kept = recorded(world)
    assert 1 <= len(kept) < len(lines(world / "candidates.jsonl"))
    finish(args, tmp_path)
    assert sorted(recorded(world)) == sorted(c["id"] for c in lines(world / "candidates.jsonl"))
    assert json.loads((world / "verify_stats.json").read_text())["skipped"] == len(kept)


@pytest.fixture(scope="module")
def sft_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sft")
    make_traj_root(root / "traj")
    export_dataset(root / "traj", root / "export", formats={"sft"}, progress=False)
    return root / "export"


@pytest.mark.slow  # the build's and the export's Ctrl-C stay in the default run
def test_ctrl_c_stops_train_sft_and_the_rerun_resumes(sft_export: Path, tmp_path: Path) -> None:
    args = ["train", "sft", "--data", str(sft_export), "--model", "tiny", "--out", "run",
            "--max-steps", "40", "--checkpoint-every", "1", "--batch-size", "2",
            "--max-length", "1024", "--device", "cpu"]
    sft = start(args, tmp_path)
    saved = tmp_path / "run" / "checkpoints"
    wait_until(sft, lambda: any(saved.glob("checkpoint-*/*")))
    interrupt(sft, tmp_path)
    assert not (tmp_path / "run" / "model").exists()
    finish(args, tmp_path)
    summary = json.loads((tmp_path / "run" / "sft_summary.json").read_text())
    assert summary["steps"] == 40 and summary["resumed_from"] is not None


@pytest.mark.slow  # the build's and the export's Ctrl-C stay in the default run
def test_ctrl_c_stops_train_rl_and_the_rerun_resumes(button_board: Path, tmp_path: Path) -> None:
    args = ["train", "rl", "--model", str(button_board / "start"), "--worlds", str(button_board),
            "--split", "all", "--steps", "12", "--tasks", "2", "-G", "2", "--envs", "4",
            "--max-new-tokens", "32", "--checkpoint-every", "1", "--out", "run"]
    rl = start(args, tmp_path)
    wait_until(rl, lambda: len(lines(tmp_path / "run" / "metrics.jsonl")) >= 1)
    interrupt(rl, tmp_path)
    done = len(lines(tmp_path / "run" / "metrics.jsonl"))
    assert 1 <= done < 12 and not (tmp_path / "run" / "model").exists()
    finish([*args, "--resume"], tmp_path)
    assert [r["step"] for r in lines(tmp_path / "run" / "metrics.jsonl")][-1] == 12


@pytest.mark.slow  # the build's and the export's Ctrl-C stay in the default run
def test_ctrl_c_stops_eval_and_the_rerun_resumes(lab: Built, tmp_path: Path) -> None:
    args = ["eval", "--policy", "random", "--suite", str(lab.root), "-n", "3", "--workers", "1",
            "--out", "r.jsonl"]
    run = start(args, tmp_path)
    wait_until(run, lambda: len(lines(tmp_path / "r.jsonl")) >= 1)
    interrupt(run, tmp_path)
    first = len(lines(tmp_path / "r.jsonl"))
    said = finish(args, tmp_path)
    keys = [r["key"] for r in lines(tmp_path / "r.jsonl")]
    assert len(keys) == len(set(keys)) > first and f"{first} already in" in said


def test_ctrl_c_stops_export_and_leaves_no_half_dataset(tmp_path: Path) -> None:
    make_traj_root(tmp_path / "traj")
    args = ["export", "traj", "--out", "data"]
    export = start(args, tmp_path)
    # the export is made in a hidden folder beside the target, then put in place
    wait_until(export, lambda: any(tmp_path.glob(".data.*.tmp")))
    interrupt(export, tmp_path)
    assert not (tmp_path / "data").exists()
    finish(args, tmp_path)
    assert (tmp_path / "data" / "README.md").is_file()
