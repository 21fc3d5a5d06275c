"""The build as a library call: one easy world from a theme to a dataset, in real Chromium,
written where `webworld build` writes by default, and git ignores all of it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from pydantic import ValidationError

from webworld.pipeline import DEFAULT_THEMES, BuildConfig, BuildEvent, build_worlds

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"max_shortest": 1, "max_instances": 1, "max_longer": 0, "workers": 2}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture
def scratch_clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree holding this checkout's .gitignore and the shipped files of the
    folders the build writes to, committed; the working folder of the test."""
    tracked = _git(ROOT, "ls-files", ".gitignore", "fsm_specs", "sites", "trajectories",
                   "datasets").split()
    assert "fsm_specs/online_bookstore_medium_s1.json" in tracked  # the README's tour spec
    for name in tracked:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "shipped")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_build_worlds_makes_a_dataset_and_leaves_git_status_clean(scratch_clone: Path) -> None:
    events: list[BuildEvent] = []
    result = build_worlds(BuildConfig(themes=["hotel"], profile="easy", **SMALL),
                          progress=events.append)
    [row] = result.rows
    assert row.world == "hotel_easy_s0" and row.archetype and row.pages > 1
    assert row.states > 0 and row.candidates > 0
    assert row.verified + sum(row.failures.values()) == row.candidates
    assert row.verified > 0 and result.dataset == Path("datasets/webworld")
    verified = (scratch_clone / "trajectories" / row.world / "verified.jsonl").read_text()
    assert len(verified.splitlines()) == row.verified == result.trajectories
    assert (scratch_clone / "fsm_specs" / f"{row.world}.json").is_file()
    assert (scratch_clone / "sites" / row.world / "manifest.json").is_file()
    assert (scratch_clone / "datasets" / "webworld" / "README.md").is_file()
    first = json.loads(verified.splitlines()[0])
    assert (scratch_clone / "trajectories" / row.world / first["steps"][0]["observation"]
            ["screenshot"]).is_file()
    stages = [e.stage for e in events]
    assert stages.index("propose") < stages.index("render") < stages.index("explore") \
        < stages.index("verify") < stages.index("export")
    assert [e.done for e in events if e.stage == "verify"][-1] == row.candidates
    assert result.seconds > 0
    # every path the build wrote by default is one git ignores
    assert _git(scratch_clone, "status", "--porcelain", "--untracked-files=all") == ""


def test_build_without_verification_stops_after_exploring(tmp_path: Path) -> None:
    config = BuildConfig(themes=["hotel"], profile="easy", verify=False, specs_out=tmp_path / "a",
                         sites_out=tmp_path / "b", out=tmp_path / "c",
                         dataset_out=tmp_path / "d", **SMALL)
    [row] = build_worlds(config).rows
    assert (tmp_path / "c" / row.world / "candidates.jsonl").is_file()
    assert not (tmp_path / "c" / row.world / "verified.jsonl").exists()
    assert not (tmp_path / "d").exists() and row.verified == 0


def test_the_config_builds_the_default_themes_unless_given_specs(tmp_path: Path) -> None:
    assert BuildConfig().sources() == DEFAULT_THEMES
    spec = tmp_path / "w.json"
    spec.write_text("{}")
    assert BuildConfig(specs=[tmp_path]).sources() == [spec]
    assert BuildConfig(themes=["bank"], specs=[spec]).sources() == ["bank", spec]
    with pytest.raises(ValidationError, match="themez"):
        BuildConfig(themez=["bank"])
    assert all(f.description for f in BuildConfig.model_fields.values())
