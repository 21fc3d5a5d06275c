"""Ray workers unpack the sites into a scratch folder of their own: a worker's close removes
it, and one killed outright (SIGKILL, the OOM killer) leaves it to the next worker that starts
on the machine."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from webworld.scale import cluster


def test_a_killed_worker_s_scratch_folder_is_swept_by_the_next(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid now names no process
    dead = tmp_path / "tmp" / f"webworld-test-{cluster._owner(gone.pid)}a"
    alive = tmp_path / "tmp" / f"webworld-test-{cluster._owner(os.getppid())}b"
    other = tmp_path / "tmp" / f"webworld-env-{cluster._owner(gone.pid)}c"  # not this prefix
    for folder in (dead, alive, other):
        folder.mkdir()
    site = tmp_path / "site"
    site.mkdir()
    (site / "spec.json").write_text("{}")
    scratch, dirs = cluster.unpack_dirs([cluster.pack_dir(site)], "webworld-test-")
    assert not dead.exists() and alive.exists() and other.exists()
    assert (dirs[0] / "spec.json").read_text() == "{}"
    assert Path(scratch.name).name.startswith(f"webworld-test-{cluster._owner(os.getpid())}")
    scratch.cleanup()
    assert not Path(scratch.name).exists()
