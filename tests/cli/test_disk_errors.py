"""A full disk or a read-only output folder: one clear line and exit 2, never a traceback,
and nothing half-written; a run stopped by a full disk resumes, once there is space,
without losing or repeating anything.

Each case runs the real `webworld` console script in its own mount namespace, on a tmpfs
that is mounted read-only or made small enough to fill up (`unshare -m`, as root)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import World
from tests.rl.conftest import Built

WEBWORLD = str(Path(sys.executable).parent / "webworld")


def _can_mount() -> bool:
    try:
        probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
                               capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _can_mount(), reason="needs `unshare -m` and tmpfs mounts "
                                "(root in a Linux sandbox; CI has both)")


def in_fs(mount: Path, script: str, *, size: str, seed: Path | None = None,
          read_only: bool = False) -> subprocess.CompletedProcess:
    """Run ``script`` (sh) in ``mount``/out on a fresh tmpfs of ``size`` holding a copy of
    ``seed``, mounted read-only if asked; other processes never see the mount."""
    mount.mkdir(parents=True, exist_ok=True)
    setup = [f"mount -t tmpfs -o size={size} tmpfs {mount}", f"mkdir -p {mount}/out"]
    if seed is not None:
        setup.append(f"cp -r {shlex.quote(str(seed))}/. {mount}/out/")
    if read_only:
        setup.append(f"mount -o remount,ro {mount}")
    body = " && ".join(setup) + f" && cd {mount}/out && {script}"
    return subprocess.run(["unshare", "-m", "sh", "-c", body], capture_output=True, text=True,
                          timeout=600)


def one_clear_line(done: subprocess.CompletedProcess, *words: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def test_read_only_output_folders(bookstore: World, lab: Built, tmp_path: Path) -> None:
    """The lab world is verified (eval and export read it), the bookstore's candidates
    still wait for the verifier."""
    spec = tmp_path / "spec.json"
    spec.write_text(bookstore.spec.model_dump_json())
    seed = tmp_path / "seed"
    shutil.copytree(lab.root / "sites", seed / "sites")
    shutil.copytree(lab.root / "trajectories", seed / "trajectories")
    shutil.copytree(bookstore.site_dir, seed / "sites" / bookstore.spec.id)
    shutil.copytree(bookstore.world_dir, seed / "trajectories" / bookstore.spec.id)
    cases = {
        f"{WEBWORLD} generate --theme bank --out specs": "read-only file system",
        f"{WEBWORLD} render {spec} --out sites2": "read-only file system",
        f"{WEBWORLD} verify --workers 1": "trajectories",
        f"{WEBWORLD} eval --policy random --suite . --fast -n 1 --out r.jsonl": "r.jsonl",
        f"{WEBWORLD} export trajectories --out ds": "read-only file system",
        f"{WEBWORLD} train rl --model tiny --worlds . --split all --steps 1 --tasks 1 -G 2 "
        "--envs 2 --max-new-tokens 4 --out run": "read-only file system",
    }
    for script, word in cases.items():
        done = in_fs(tmp_path / "mnt", script, size="200m", seed=seed, read_only=True)
        one_clear_line(done, word, "write the output to another folder")


def test_a_full_disk_is_one_line_and_leaves_no_half_written_output(bookstore: World,
                                                                   tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(bookstore.spec.model_dump_json())
    done = in_fs(tmp_path / "mnt", f"{WEBWORLD} render {spec} --out sites; ls -A sites",
                 size="16k")
    # `ls` runs after the failure: the site folder was never created, not left half-written
    assert "no space left on the device" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout.strip() == "", done.stdout


def test_verify_stopped_by_a_full_disk_resumes_without_loss(bookstore: World,
                                                            tmp_path: Path) -> None:
    """The disk fills part-way through verifying; once it is grown, the same command ends
    the job: every candidate verified exactly once."""
    seed = tmp_path / "seed"
    shutil.copytree(bookstore.site_dir, seed / "sites" / bookstore.spec.id)
    shutil.copytree(bookstore.world_dir, seed / "trajectories" / bookstore.spec.id)
    used = sum(f.stat().st_size for f in seed.rglob("*") if f.is_file())
    verified = f"trajectories/{bookstore.spec.id}/verified.jsonl"
    mount = tmp_path / "mnt"
    script = (f"{WEBWORLD} verify --workers 1; echo first=$?; wc -l < {verified} || true; "
              f"mount -o remount,size=200m {mount} && {WEBWORLD} verify --workers 1 && "
              f"cat {verified}")
    done = in_fs(mount, script, size=f"{used // 1024 + 400}k", seed=seed)
    assert "first=2" in done.stdout, (done.stdout[-1500:], done.stderr[-1500:])
    assert "no space left on the device" in done.stderr and "Traceback" not in done.stderr
    ids = [json.loads(line)["id"] for line in done.stdout.splitlines() if line.startswith("{")]
    candidates = [json.loads(line)["id"] for line in
                  (bookstore.world_dir / "candidates.jsonl").read_text().splitlines()]
    assert sorted(ids) == sorted(candidates)  # all of them, each once
