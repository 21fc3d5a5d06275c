"""Replay in real Chromium against real servers on loopback; failures are classified."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import World
from webworld.browser.actions import parse_action
from webworld.verify.replay import ReplayConfig
from webworld.verify.runner import verify_worlds

FAST = ReplayConfig(action_timeout_ms=1500, navigation_timeout_ms=5000)  # failures come fast
STEADY = ReplayConfig()  # paths that must verify: the defaults, robust on a loaded machine


def records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path, "online bookstore")


def copy_world(src: World, dest: Path) -> World:
    """A private copy of a rendered world, to break its templates."""
    clone = object.__new__(World)
    clone.spec, clone.explored = src.spec, src.explored
    clone.site_dir = dest / "sites" / src.spec.id
    clone.traj_root = dest / "trajectories"
    shutil.copytree(src.site_dir, clone.site_dir)
    (clone.traj_root / src.spec.id).mkdir(parents=True)
    shutil.copy(src.world_dir / "candidates.jsonl", clone.world_dir / "candidates.jsonl")
    return clone


def test_known_trajectories_replay_and_record_observations(world: World) -> None:
    stats = verify_worlds([world.site_dir], world.traj_root, workers=2, config=STEADY)
    verified = records(world.world_dir / "verified.jsonl")
    assert stats[0].verified == len(verified) == len(world.explored.candidates)
    for traj in verified:
        fsm_steps = {s["fsm_index"] for s in traj["steps"]}
        assert fsm_steps == set(range(traj["length"]))
        goal = next(t for t in world.spec.tasks if t.id == traj["task_id"]).goal.page
        assert traj["final_state"]["page"] == goal
        for step in traj["steps"]:
            parse_action(step["action"])
            assert f"[{step['bid']}]" in step["observation"]["axtree"]
            png = world.world_dir / step["observation"]["screenshot"]
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert step["bbox"] and step["bbox"][2] > 0
    assert (world.world_dir / "verify_stats.json").is_file()


def first_candidate_step(world: World, op: str, kind: str | None = None) -> dict:
    """The first candidate step whose trigger is ``op`` on an element of ``kind``."""
    for cand in world.explored.candidates:
        for step in cand["steps"]:
            trigger = step["gui"][-1]
            page = world.spec.page(step["page"])
            el = next(e for e in page.elements if e.id == trigger["element"])
            if trigger["op"] == op and (kind is None or el.kind == kind):
                return step
    raise AssertionError(f"no {op} step on a {kind}")


def edit(world: World, name: str, old: str, new: str) -> None:
    """Break a rendered template on purpose (``name`` under templates/)."""
    path = world.site_dir / "templates" / name
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def failures_of(world: World) -> list[dict]:
    verify_worlds([world.site_dir], world.traj_root, workers=2, config=FAST)
    return records(world.world_dir / "failures.jsonl")


def test_missing_element_is_classified(bookstore: World, tmp_path: Path) -> None:
    world = copy_world(bookstore, tmp_path)
    element = first_candidate_step(world, "click", "button")["gui"][-1]["element"]
    edit(world, "widgets.html", 'data-ww-id="{{ el.id }}"',
         f"data-ww-id=\"{{{{ 'gone' if el.id == '{element}' else el.id }}}}\"")
    failed = [f for f in failures_of(world) if element in f["message"]]
    assert failed and {f["failure"] for f in failed} == {"element_missing"}


def test_covering_overlay_is_classified(bookstore: World, tmp_path: Path) -> None:
    world = copy_world(bookstore, tmp_path)
    css = world.site_dir / "static" / "theme.css"
    css.write_text(css.read_text() + "\n.test-cover{position:fixed;inset:0;z-index:2147483647}\n")
    edit(world, "layout.html", "</body>", '<div class="test-cover"></div></body>')
    failed = failures_of(world)
    assert failed and {f["failure"] for f in failed} == {"element_covered"}
    assert all("is covered by another element" in f["message"] for f in failed)


def test_wrong_form_target_is_classified(bookstore: World, tmp_path: Path) -> None:
    world = copy_world(bookstore, tmp_path)
    step = first_candidate_step(world, "click", "button")
    others = [a.id for a in world.spec.page(step["page"]).actions if a.id != step["action"]]
    wrong = others[0]
    edit(world, "layout.html", 'action="{{ f.url }}"',
         f"action=\"{{{{ f.url.replace('/act/{step['action']}', '/act/{wrong}') }}}}\"")
    failed = [f for f in failures_of(world) if f["fsm_action"] == step["action"]]
    assert failed and {f["failure"] for f in failed} == {"state_mismatch"}


def test_killed_run_resumes_without_loss_or_duplicates(world: World) -> None:
    world_dir = world.world_dir
    candidates = records(world_dir / "candidates.jsonl")
    verify_worlds([world.site_dir], world.traj_root, workers=1, config=STEADY)
    done = (world_dir / "verified.jsonl").read_text().splitlines()
    assert len(done) == len(candidates)
    # simulate a kill mid-write: keep two whole records and half of the third
    (world_dir / "verified.jsonl").write_text("\n".join(done[:2]) + "\n" + done[2][:40])
    stats = verify_worlds([world.site_dir], world.traj_root, workers=2, config=STEADY)
    again = records(world_dir / "verified.jsonl")
    ids = [r["id"] for r in again]
    assert len(ids) == len(set(ids)) == len(candidates)
    assert stats[0].skipped == 2


def _outcomes(world_dir: Path) -> int:
    """Candidates recorded so far, verified or failed (a loaded machine fails a few)."""
    files = [world_dir / "verified.jsonl", world_dir / "failures.jsonl"]
    return sum(f.read_text().count("\n") for f in files if f.exists())


def _stop_part_way(cmd: list[str], world_dir: Path, how: signal.Signals) -> subprocess.Popen:
    """Run ``cmd`` and send it ``how`` once three more candidates have been recorded."""
    wanted = _outcomes(world_dir) + 3
    # as a terminal starts it: an xdist worker ignores SIGINT, and its children would inherit
    # that (Python then installs no Ctrl-C handler at all)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if _outcomes(world_dir) >= wanted:
            proc.send_signal(how)
            break
        time.sleep(0.05)
    proc.wait(timeout=30)  # Ctrl-C stops the run at once, not after the last candidate
    return proc


def test_real_kill_mid_run_then_resume(tmp_path: Path) -> None:
    """Ctrl-C, then SIGKILL, a `webworld verify` process part-way; run it again, lose nothing."""
    world = World(tmp_path, "hotel booking", max_instances=3, max_shortest=2)
    exe = Path(sys.executable).parent / "webworld"
    cmd = [str(exe), "verify", "--sites", str(tmp_path / "sites"), "--trajectories",
           str(world.traj_root), "--workers", "2"]
    verified = world.world_dir / "verified.jsonl"
    interrupted = _stop_part_way(cmd, world.world_dir, signal.SIGINT)
    said = interrupted.stderr.read()
    assert interrupted.returncode == 130, ("the run ended before Ctrl-C, or ignored it "
                                           f"({_outcomes(world.world_dir)} recorded)", said[-800:])
    assert "stopped by Ctrl-C" in said and "Traceback" not in said, said
    assert _outcomes(world.world_dir) < len(world.explored.candidates)
    killed = _stop_part_way(cmd, world.world_dir, signal.SIGKILL)
    assert killed.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    before = {r["id"] for r in records(verified)}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    after = [r["id"] for r in records(verified)] + [
        r["id"] for r in records(world.world_dir / "failures.jsonl")]
    assert len(after) == len(set(after)) == len(world.explored.candidates)
    assert before <= set(after)
