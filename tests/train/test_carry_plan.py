"""scripts/carry_plan.py: the device calls that carry a GPU kit fit a call (64 MiB with the
repo's own files, 8 paths), and what they copy to the device is the kit, byte for byte, with
files too large for a call cut and joined again and a large folder's small files bundled."""

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
    kit_file(root, "gpu_kit/wheels.tar.xz", 30_000)
    for part, size in (("aa", 50_000), ("ab", 50_000), ("ac", 2_000)):
        kit_file(root, f"gpu_kit/smollm2/part-{part}", size)
    kit_file(root, "gpu_kit/learning.tar.xz", 15_000)
    kit_file(root, "gpu_kit/sft-delta/delta.safetensors", 150_000)  # larger than a call
    for n in range(10):  # more small files than a call's 8 paths
        kit_file(root, f"gpu_kit/sft-delta/small-{n}.json", 2_000)
    calls, run = carry.plan_calls(root, ["--plan", "learning", "--kit", "gpu_kit/learning.tar.xz",
                                         "--sft-delta", "gpu_kit/sft-delta", "--seeds", "0"],
                                  repo=20_000)
    for call in calls:
        assert sum(i.size for i in call) <= 80_000 and len(call) <= carry.MAX_PATHS
    device = tmp_path / "device"
    for call in calls:  # each call's copy, then the last call's joins
        subprocess.run(["bash", "-c", carry.copy_command(call)], cwd=root, check=True)
    subprocess.run(["bash", "-c", carry.join_command(calls)], cwd=root, check=True)
    for path in (root / "gpu_kit").rglob("*"):
        if path.is_file() and ".carry" not in path.parts:
            assert (device / path.relative_to(root / "gpu_kit")).read_bytes() == path.read_bytes()
    assert f"--sft-delta {device}/sft-delta" in run and f"--kit {device}/learning.tar.xz" in run
    assert f"--gguf-parts {device}/smollm2/part-aa {device}/smollm2/part-ab" in run


def test_a_missing_kit_part_is_named(carry, tmp_path: Path) -> None:
    kit_file(tmp_path, "gpu_kit/wheels.tar.xz", 10)
    kit_file(tmp_path, "gpu_kit/smollm2/part-aa", 10)
    with pytest.raises(SystemExit, match="gpu_kit/scale-data.tar.xz: not there"):
        carry.plan_calls(tmp_path, ["--extra-data", "gpu_kit/scale-data.tar.xz"], repo=10)
    with pytest.raises(SystemExit, match="leave no room"):
        carry.plan_calls(tmp_path, [], repo=200_000)
