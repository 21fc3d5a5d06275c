"""scripts/carry_plan.py: the device calls that carry a GPU kit fit a call (64 MiB with the
repo's own files, 8 paths), what they copy to the device is the kit, byte for byte, with files
too large for a call cut and joined again, and the last call runs the recipe there."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def carry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("carry_plan", ROOT / "scripts" / "carry_plan.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "carry_plan", module)  # its dataclass looks itself up
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "CALL_BYTES", 100_000)  # a small call: cuts happen
    monkeypatch.setattr(module, "MARGIN", 0)
    monkeypatch.setattr(module, "DEVICE_KIT", str(tmp_path / "device"))
    return module


def kit_file(root: Path, path: str, size: int) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_bytes(os.urandom(size))


def test_the_calls_fit_and_rebuild_the_kit_on_the_device(carry, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    kit_file(root, "recipes/smollm2.toml", 100)
    kit_file(root, "gpu_kit/wheels.tar.xz", 30_000)
    for part, size in (("aa", 50_000), ("ab", 50_000), ("ac", 2_000)):
        kit_file(root, f"gpu_kit/smollm2/part-{part}", size)
    kit_file(root, "gpu_kit/run.tar.xz", 150_000)  # larger than a call
    calls, run = carry.plan_calls(root, "recipes/smollm2.toml", ["device.device=cuda"], 540,
                                  repo=20_000)
    assert len(calls) >= 4  # 232 kB in calls of 80 kB
    for call in calls:
        assert sum(i.size for i in call) <= 80_000 and len(call) <= carry.MAX_PATHS
    device = tmp_path / "device"
    for call in calls:  # each call's copy, then the last call's joins
        subprocess.run(["bash", "-c", carry.copy_command(call)], cwd=root, check=True)
    subprocess.run(["bash", "-c", carry.join_command(calls)], cwd=root, check=True)
    for path in (root / "gpu_kit").rglob("*"):
        if path.is_file() and ".carry" not in path.parts:
            assert (device / path.relative_to(root / "gpu_kit")).read_bytes() == path.read_bytes()
    parts = " ".join(f"{device}/smollm2/part-{p}" for p in ("aa", "ab", "ac"))
    assert f"cat {parts} > /tmp/site/{carry.GGUF}" in run
    assert f"tar xJf {device}/run.tar.xz -C /tmp/run" in run
    assert "timeout -s INT 540 python3 scripts/carry_plan.py device recipes/smollm2.toml " \
           "/tmp/run --set device.device=cuda;" in run
    assert len(carry.join_command(calls) + run) < 1600  # a call's command: 2,000 characters


def test_a_missing_kit_part_or_recipe_is_named(carry, tmp_path: Path) -> None:
    kit_file(tmp_path, "gpu_kit/wheels.tar.xz", 10)
    kit_file(tmp_path, "gpu_kit/smollm2/part-aa", 10)
    with pytest.raises(SystemExit, match="gpu_kit/run.tar.xz: not there; run `bash scripts/gpu"):
        carry.plan_calls(tmp_path, "recipes/smollm2.toml", [], 540, repo=10)
    kit_file(tmp_path, "gpu_kit/run.tar.xz", 10)
    with pytest.raises(SystemExit, match="recipes/other.toml: no such recipe"):
        carry.plan_calls(tmp_path, "recipes/other.toml", [], 540, repo=10)
    with pytest.raises(SystemExit, match="leave no room"):
        carry.plan_calls(tmp_path, "recipes/other.toml", [], 540, repo=200_000)
