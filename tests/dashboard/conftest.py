"""A workspace as the other commands leave it, built once per session: a shipped world
built and verified in Chromium (one candidate sabotaged, so one real failure), the largest
shipped spec on its own, an export, eval results (oracle with traces, random) and two
training-run logs; and the dashboard serving it on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.rl.conftest import SHIPPED, shared
from webworld.cli.main import app
from webworld.dashboard.app import create_app
from webworld.dashboard.worlds import Folders
from webworld.data.export import export_dataset
from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
from webworld.render.site import render_site
from webworld.serve.runner import LiveServer
from webworld.spec.io import load_spec, save_spec
from webworld.train.metrics import MetricsLog
from webworld.verify.runner import verify_worlds

BUILT = "flight_booking_easy_s0"


def largest_shipped() -> Path:
    """The shipped spec with the most pages and actions."""
    def size(path: Path) -> tuple[int, int]:
        spec = load_spec(path)
        return len(spec.pages), sum(len(p.actions) for p in spec.pages)
    return max(sorted(SHIPPED.glob("*.json")), key=size)


@dataclass
class Workspace:
    root: Path

    @property
    def folders(self) -> Folders:
        return Folders.under(self.root)

    def failed_id(self) -> str:
        line = (self.root / "trajectories" / BUILT / "failures.jsonl").read_text().splitlines()[0]
        return json.loads(line)["id"]

    def verified(self) -> list[dict]:
        path = self.root / "trajectories" / BUILT / "verified.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]


def _sabotage_one(world_dir: Path) -> None:
    """The first candidate expects a wrong page after its last action: the verifier must
    report a state mismatch for it (and only it)."""
    path = world_dir / "candidates.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first["steps"][-1]["expected"]["page"] = first["steps"][0]["page"]
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")


def _make(root: Path) -> None:
    spec = load_spec(SHIPPED / f"{BUILT}.json")
    save_spec(spec, root / "fsm_specs" / f"{BUILT}.json")
    shutil.copy(largest_shipped(), root / "fsm_specs" / largest_shipped().name)
    render_site(spec, root / "sites" / BUILT)
    config = ExploreConfig(max_instances=1, max_shortest=1, max_longer=0)
    write_candidates(explore_world(spec, config), root / "trajectories" / BUILT)
    _sabotage_one(root / "trajectories" / BUILT)
    stats = verify_worlds([root / "sites" / BUILT], root / "trajectories", workers=2)
    assert stats[0].failed == 1 and stats[0].verified >= 2, stats[0].to_dict()
    export_dataset(root / "trajectories", root / "datasets" / "webworld")
    runner = CliRunner()
    for args in (["--policy", "oracle", "--traces", "1", "--out", str(root / "runs" / "oracle.jsonl")],
                 ["--policy", "random", "--out", str(root / "runs" / "random.jsonl")]):
        result = runner.invoke(app, ["eval", "--suite", str(root), "-n", "1", *args])
        assert result.exit_code == 0, result.output
    for name, slope in (("gspo-demo", 0.1), ("vespo-demo", 0.2)):
        _training_log(root / "runs" / name, slope)


def _training_log(out: Path, slope: float) -> None:
    """What `webworld train rl` logs, through its own writer."""
    out.mkdir(parents=True)
    (out / "config.json").write_text(json.dumps({"algo": out.name.split("-")[0], "steps": 5}))
    log = MetricsLog(out, resume_step=0)
    for step in range(1, 6):
        log.write({"step": step, "success_rate": min(1.0, slope * step), "reward_mean": slope * step,
                   "episode_steps": 6 - step / 2, "loss": 1 / step, "ess": 0.9, "lag_mean": 0.0,
                   "step_kl": 0.01 * step, "updates": [{"lr": 1e-4, "step_kl": 0.01 * step}],
                   "wall": 10.0 * step})
    log.close()


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(shared(tmp_path_factory, "dashboard", _make))


@pytest.fixture
def copy_of(workspace: Workspace, tmp_path: Path) -> Workspace:
    """A private copy, for tests that change files."""
    shutil.copytree(workspace.root, tmp_path / "ws", symlinks=True)
    return Workspace(tmp_path / "ws")


def serve(folders: Folders) -> LiveServer:
    return LiveServer(create_app(folders)).start()


@pytest.fixture(scope="session")
def board(workspace: Workspace) -> Iterator[str]:
    """The dashboard on the shared workspace: its base URL."""
    server = serve(workspace.folders)
    yield server.url.rstrip("/")
    server.stop()
