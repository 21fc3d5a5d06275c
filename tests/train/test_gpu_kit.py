"""The GPU kit's command (experiments/gpu_run.py) in its CPU smoke mode: every stage a lent GPU
machine runs (SFT, RL with progress rewards and the curriculum on the fast env, eval before and
after) goes through with the tiny policy, and the tables come out. The trainer and the fast env
import without FastAPI, Playwright, Ray, datasets, TRL or openai, which the device does not have."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
import torch

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


@pytest.fixture(scope="module")
def kit(flight: Built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kit as scripts/gpu_kit.sh packs one: worlds with their snapshots, their SFT export."""
    kit = tmp_path_factory.mktemp("kit")
    shutil.copytree(flight.root, kit / "worlds", ignore=shutil.ignore_patterns("*.lock"))
    export_dataset(kit / "worlds" / "trajectories", kit / "data", formats={"sft"},
                   splits=(1.0, 0.0, 0.0), observation="compact", progress=False)
    return kit


def gpu_run(kit: Path, tmp_path: Path, *flags: str) -> dict:
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "experiments/gpu_run.py", "--smoke", "--kit", str(kit),
                           "--out", str(out), "--work", str(tmp_path / "work"), *flags],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (out / "gpu_run.log").stat().st_size > 0
    results = json.loads((out / "gpu_results.json").read_text())
    assert all(s["exit"] == 0 for s in results["stages"]), results["stages"]
    assert "not run" not in (out / "gpu_results.md").read_text()
    return results


# ~50 s alone: seven stages, each a `webworld` process loading torch
def test_the_gpu_run_goes_through_in_smoke_mode(kit: Path, tmp_path: Path) -> None:
    results = gpu_run(kit, tmp_path)
    assert [s["stage"] for s in results["stages"]] == [
        "python and torch", "sft", "eval after SFT", "rl vespo progress",
        "eval after SFT + RL (progress, 2 batches)", "rl vespo success",
        "eval after SFT + RL (success, 2 batches)"]
    for reward in ("progress", "success"):
        assert len(results["rl"][reward]) == 2
        assert all("from_goal" in m for m in results["rl"][reward])
    assert "after SFT + RL (success, 2 batches)" in results["eval"]


def test_the_learning_runs_go_through_in_smoke_mode(kit: Path, tmp_path: Path) -> None:
    shutil.copytree(kit / "worlds", tmp_path / "kit" / "worlds", symlinks=True)
    shutil.copytree(kit / "data", tmp_path / "kit" / "data")
    shutil.copytree(kit / "worlds", tmp_path / "kit" / "heldout", symlinks=True)  # stands in
    # two calls, as on a device: the SFT alone, then the rest (the tables show both calls)
    gpu_run(tmp_path / "kit", tmp_path, "--plan", "learning", "--until", "sft")
    # the second call gets the kit as scripts/gpu_kit.sh packs it: one xz archive
    with tarfile.open(tmp_path / "kit.tar.xz", "w:xz") as archive:
        for part in ("worlds", "data", "heldout"):
            archive.add(tmp_path / "kit" / part, part)
    results = gpu_run(tmp_path / "kit.tar.xz", tmp_path, "--plan", "learning", "--seeds", "1",
                      "2", "--rl-lr", "3e-4",  # tiny's own rate is 1e-4
                      "--bring-back", "rl-progress-s2")  # an RL policy outlives the lease
    runs = [f"(progress reward, seed {s}, 2 batches)" for s in (1, 2)] + \
        [f"(success reward, seed {s}, 2 batches)" for s in (1, 2)]
    # the training worlds first (what RL adds there is the question), then held-out
    evals = [f"eval after SFT + RL {r} on {suite}" for suite in ("training worlds", "held-out")
             for r in runs[0::2] + runs[1::2]]
    assert [s["stage"] for s in results["stages"]] == [
        "python and torch", "sft, ids relabelled", "python and torch",
        *(f"rl {r} seed {s}" for s in (1, 2) for r in ("progress", "success")),
        "eval zero shot on held-out",
        "eval after SFT, ids relabelled on training worlds",
        "eval after SFT, ids relabelled on held-out", *evals,
        "bring back rl-progress-s2: delta", "bring back rl-progress-s2: parts"]
    assert list((tmp_path / "out").glob("rl-progress-s2.delta.tar.part-*"))
    assert [len(results["rl"][run]) for run in ("progress s1", "success s1", "success s2")] == \
        [2, 2, 2]
    assert all(results["eval"].values())
    with tarfile.open(tmp_path / "out" / "results.tar.gz") as packed:
        names = set(packed.getnames())
    # laid out as experiments/learning.py's work folder, for its GPU rows
    assert {"rl-start.txt", "rl-progress-s2/metrics.jsonl", "rl-success-s1/model/config.json",
            "sft-relabel/sft_summary.json", "eval/heldout-zero-shot.jsonl",
            "eval/train-sft-relabel.jsonl", "eval/heldout-rl-success-s2.jsonl"} <= names, names
    assert len([n for n in names if n.startswith("eval/")]) == 11
    page = tmp_path / "learning_on_gpu.md"
    done = subprocess.run([sys.executable, "experiments/learning_gpu.py", "--from-device",
                           str(tmp_path / "out"), "--record", str(tmp_path / "record"), "--doc",
                           str(page), "--deltas", str(tmp_path / "deltas")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "deltas" / "rl-progress-s2-delta" / "delta.safetensors").is_file()
    text = page.read_text()
    assert "not run yet" not in text and "still running" not in text
    # RL practised the tasks its training-world evals score (their worlds, from its config)
    assert "RL practised these ten worlds' tasks, the ones scored here" in text
    # two smoke batches without a group to learn from stay at the warm-up's first rate: half
    assert "Highest learning rate the RL runs stepped at: 0.00015 " in text
    for row in ("| SmolLM2 zero shot |", "| after SFT, ids relabelled |",
                "| after SFT + RL, success reward (seed 2) |", "| after SFT + RL (progress reward) |",
                "progress reward (2 seeds, 2 batches, "):
        assert row in text, row


@pytest.mark.slow  # ~4.5 min on 2 busy cores: ten stages, each a process loading torch
def test_rounds_of_corrections_go_through_in_smoke_mode(kit: Path, tmp_path: Path) -> None:
    """--plan dagger: each round plays the policy on the training worlds, relabels every round's
    episodes so far, trains SFT on them from the policy and scores the new one held out."""
    shutil.copytree(kit / "worlds", tmp_path / "kit" / "worlds", symlinks=True)
    shutil.copytree(kit / "data", tmp_path / "kit" / "data")
    shutil.copytree(kit / "worlds", tmp_path / "kit" / "heldout", symlinks=True)  # stands in
    results = gpu_run(tmp_path / "kit", tmp_path, "--plan", "dagger", "--rounds", "2")
    stages = results["stages"]
    assert [s["stage"] for s in stages] == [
        "python and torch", "sft, ids relabelled",
        *(stage for r in (1, 2) for stage in (
            f"eval round {r - 1} policy on training worlds", f"corrections round {r}",
            f"sft round {r}", f"eval round {r} policy on held-out"))]
    relabelled = [s["command"] for s in stages if s["stage"].startswith("corrections")]
    assert [c.count("--results") for c in relabelled] == [1, 2]  # every round's episodes
    assert "train-dagger-r1.jsonl" in relabelled[1]  # the second round played round 1's policy
    with tarfile.open(tmp_path / "out" / "results.tar.gz") as packed:
        counts = json.load(packed.extractfile("data-r2/corrections.json"))
    assert counts["corrections"] > 0


@pytest.mark.slow  # ~3.5 min on 2 busy cores: fifteen stages, each a process loading torch
def test_sft_on_more_worlds_goes_through_in_smoke_mode(kit: Path, tmp_path: Path) -> None:
    """--plan scale: both SFT runs train on the kit's export plus the extra one (carried as
    .tar.xz) for the same steps, side by side; then each is scored held out, on validation
    turns and on the training worlds, and its summary and scores come back packed."""
    shutil.copytree(kit / "worlds", tmp_path / "kit" / "worlds", symlinks=True)
    shutil.copytree(kit / "data", tmp_path / "kit" / "data")
    shutil.copy(kit / "data" / "sft" / "train.jsonl",  # one world: no validation split of its own
                tmp_path / "kit" / "data" / "sft" / "validation.jsonl")
    shutil.copytree(kit / "worlds", tmp_path / "kit" / "heldout", symlinks=True)  # stands in
    sys.path.insert(0, str(ROOT / "experiments"))
    from gpu_run import HELDOUT_TURNS

    extra = tmp_path / "extra.tar.xz"
    with tarfile.open(extra, "w:xz") as tar:
        for part in ("manifest.json", "sft"):
            tar.add(kit / "data" / part, arcname=part)
        tar.add(kit / "data" / "sft" / "train.jsonl", arcname=HELDOUT_TURNS)  # stands in
    runs = ("sft-scale", "sft-scale-shuffled")
    results = gpu_run(tmp_path / "kit", tmp_path, "--plan", "scale", "--extra-data", str(extra),
                      "--scale-runs", *runs, "--bring-back", runs[1])
    assert [s["stage"] for s in results["stages"]] == [
        "python and torch", *(f"sft {r}" for r in runs),
        *(f"eval {r} on {suite}" for suite in ("held-out", "training worlds") for r in runs),
        *(f"turns {r}{v}" for r in runs for v in ("", "-relabelled", "-moved", "-renamed")),
        *(f"turns held-out {r}" for r in runs),
        f"bring back {runs[1]}: delta", f"bring back {runs[1]}: parts"]
    sfts = [s for s in results["stages"] if s["stage"].startswith("sft")]
    assert all("--extra-data" in s["command"] and "--max-steps 2" in s["command"] for s in sfts)
    assert "--vary-values" in sfts[1]["command"] and "--vary-values" not in sfts[0]["command"]
    assert "--shuffle-ids" in sfts[1]["command"] and "--relabel-ids" not in sfts[1]["command"]
    chats = len((kit / "data" / "sft" / "train.jsonl").read_text().splitlines())
    with tarfile.open(tmp_path / "out" / "results.tar.gz") as packed:
        names = set(packed.getnames())
        summary = json.load(packed.extractfile("sft-scale/sft_summary.json"))
    assert summary["train_chats"] == 2 * chats  # the kit's and the extra export's
    assert {f"eval/{kind}-{r}.jsonl" for kind in ("heldout", "train") for r in runs} <= names
    assert {f"eval/turns-{r}-moved.json" for r in runs} <= names
    assert {f"eval/turns-heldout-{r}.json" for r in runs} <= names
    # the run trained there comes back in parts, and is the same model here once applied
    sys.path.insert(0, str(ROOT / "experiments"))
    from policy_delta import apply, receive

    from webworld.train.models import load_policy

    assert list((tmp_path / "out").glob(f"{runs[1]}.delta.tar.part-*"))
    receive(tmp_path / "out", runs[1], tmp_path / "delta")
    apply(tmp_path / "delta", tmp_path / "here")
    there, _ = load_policy(str(tmp_path / "work" / runs[1] / "model"))
    here, _ = load_policy(str(tmp_path / "here" / "model"))
    for (name, a), b in zip(there.state_dict().items(), here.state_dict().values(), strict=True):
        torch.testing.assert_close(b, a, rtol=1e-3, atol=1e-3, msg=name)  # fp16 in transit


def test_the_scaled_sft_takes_the_recipes_steps_or_the_epochs_asked(kit: Path) -> None:
    sys.path.insert(0, str(ROOT / "experiments"))
    from gpu_run import scale_budget

    chats = len((kit / "data" / "sft" / "train.jsonl").read_text().splitlines())
    recipe = argparse.Namespace(sft_epochs=None, sft_batch=8)
    assert scale_budget(recipe, kit / "data", smoke=False) == [
        "--max-steps", str(max(200, round(-(-chats // 8) * 3)))]
    assert scale_budget(recipe, kit / "data", smoke=True) == ["--max-steps", "2"]
    asked = argparse.Namespace(sft_epochs=3.0, sft_batch=32)
    assert scale_budget(asked, kit / "data", smoke=True) == ["--epochs", "3.0", "--batch-size", "32"]


def test_the_learning_runs_start_from_a_carried_sft_delta(kit: Path, tmp_path: Path) -> None:
    """The CPU's SFT run, packed as its difference from the base, is rebuilt there and no SFT
    is trained."""
    sys.path.insert(0, str(ROOT / "experiments"))
    from policy_delta import pack

    from webworld.train.models import load_policy, save_policy, train_top_layers

    model, tokenizer = load_policy("tiny")
    with torch.no_grad():
        for p in train_top_layers(model, 1):
            p.add_(0.01)
    save_policy(model, tokenizer, tmp_path / "cpu-sft" / "model")
    pack(tmp_path / "cpu-sft", tmp_path / "delta", "tiny")
    results = gpu_run(kit, tmp_path, "--plan", "learning", "--until", "sft", "--sft-delta",
                      str(tmp_path / "delta"))
    assert [s["stage"] for s in results["stages"]] == ["python and torch",
                                                       "sft of the CPU run, from its delta"]
    rebuilt, _ = load_policy(str(tmp_path / "work" / "sft-relabel" / "model"))
    top = rebuilt.get_decoder().layers[-1].mlp.up_proj.weight
    torch.testing.assert_close(top, model.get_decoder().layers[-1].mlp.up_proj.weight,
                               rtol=1e-3, atol=1e-4)


def test_a_stage_past_its_limit_is_killed_with_its_children_and_the_run_goes_on(
        tmp_path: Path) -> None:
    from experiments.gpu_run import Runner

    runner = Runner(tmp_path / "log", dict(os.environ), budget_s=60)
    pid_file = tmp_path / "child.pid"
    spawn = (f"import subprocess, time; child = subprocess.Popen(['sleep', '60']); "
             f"open({str(pid_file)!r}, 'w').write(str(child.pid)); time.sleep(60)")
    started = time.perf_counter()
    assert runner.run_side_by_side([]) == []  # nothing to run: nothing run
    assert runner.run("stuck", [sys.executable, "-c", spawn], limit_s=2) == 124
    assert time.perf_counter() - started < 20
    time.sleep(0.5)
    status = Path(f"/proc/{pid_file.read_text()}/status")  # the grandchild went with it
    assert not status.exists() or "zombie" in status.read_text()
    assert runner.run("next", [sys.executable, "-c", "print('ran')"]) == 0
    assert [r["exit"] for r in runner.rows] == [124, 0]
    assert "killed after 2 s" in (tmp_path / "log").read_text()


def test_every_scale_run_can_be_asked_of_the_device() -> None:
    """gpu_run.py lists its --scale-runs choices by hand (the device's python reads them before
    any of webworld is installed there): each of data_scale.py's runs must be one."""
    sys.path.insert(0, str(ROOT / "experiments"))
    from data_scale import SCALE_RUNS

    usage = subprocess.run([sys.executable, str(ROOT / "experiments" / "gpu_run.py"), "--help"],
                           capture_output=True, text=True, check=True).stdout
    offered = re.search(r"--scale-runs \{([^}]*)\}", usage)
    assert offered is not None, usage
    assert set(offered.group(1).split(",")) == set(SCALE_RUNS)
