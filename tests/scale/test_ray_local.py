"""`webworld build --ray local`, as docs/scale.md shows it, from a shell that never set
RAY_AUTH_MODE: the cluster the build starts requires its token, and the driver has it
(in a loopback-only network namespace, like tests/scale/test_ray_cluster.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scale.test_ray_cluster import _netns_ok

pytestmark = pytest.mark.skipif(not _netns_ok(), reason="needs `unshare -n` and `ip` (a "
                                "network namespace) to keep Ray on loopback")

BUILD = [sys.executable, "-m", "webworld", "build", "--theme", "hotel", "--profile", "easy",
         "--max-shortest", "1", "--max-instances", "1", "--max-longer", "0",
         "--ray", "local", "--ray-workers", "1", "--workers", "1"]


@pytest.mark.timeout(600)  # a Ray start on a loaded 2-core machine takes a minute or more
def test_build_on_a_local_ray_cluster_needs_no_auth_mode_in_the_shell(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS")}
    script = 'ip link set lo up && exec "$@"'
    proc = subprocess.run(["unshare", "-n", "bash", "-c", script, "bash", *BUILD], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=540)
    shown = proc.stdout + proc.stderr
    assert proc.returncode == 0, shown[-3000:]
    assert "AuthenticationError" not in shown and "Traceback" not in shown
    [verified] = (tmp_path / "trajectories").glob("*/verified.jsonl")
    assert verified.read_text().count("\n") >= 1
    assert (tmp_path / "datasets" / "webworld" / "README.md").is_file()
