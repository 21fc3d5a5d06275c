"""Recipes: the tour run end to end (real build in Chromium, SFT and RL of `tiny`, an eval),
a run killed inside RL resuming to the same records, bad recipes as one line naming the key,
and the shipped recipe of record validating."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from webworld.cli.main import app
from webworld.eval.suites import resolve_suite
from webworld.recipe.load import load_recipe
from webworld.recipe.runner import RunFolder, plan_stages

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "recipes" / "tour.toml"
# the tour kept small for 2 cores: one task instance per task, a few SFT steps, two RL
# batches of 2 x 2 short episodes (a checkpoint after each), one eval episode per task
SMALL = ["worlds.0.workers=2", "worlds.0.max_instances=1", "worlds.0.max_longer=0",
         "sft.max_steps=4", "sft.checkpoint_every=2", "rl.0.steps=2", "rl.0.tasks_per_step=2",
         "rl.0.group_size=2", "rl.0.max_new_tokens=24", "rl.0.warmup_steps=0",
         "rl.0.checkpoint_every=1", "rl.0.measure_drift=false", "rl.0.milestones=[1]",
         "evals.0.suite=worlds", "evals.0.fast=true", "evals.0.episodes=1", "evals.0.traces=0",
         "evals.0.max_steps=2", "evals.0.milestones=true"]
STAGES = ["build easy", "snapshots", "export", "sft main", "rl tour s0", "eval heldout-rl-s0-b1",
          "eval heldout-rl-s0"]


def webworld(*args: str) -> list[str]:
    return [sys.executable, "-c", "from webworld.cli.main import app; app()", *args]


def run_tour(out: Path) -> subprocess.CompletedProcess[str]:
    sets = [part for s in SMALL for part in ("--set", s)]
    return subprocess.run(webworld("recipe", "run", str(TOUR), "--out", str(out), *sets),
                          capture_output=True, text=True, cwd=out.parent)


def stage_log(run: Path) -> dict[str, dict]:
    return json.loads((run / "stages.json").read_text())


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tour") / "run"
    done = run_tour(out)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


LONG = pytest.mark.timeout(1800)  # a hang guard: a build, SFT, RL and an eval on 2 cores


@LONG
def test_the_tour_recipe_runs_every_stage_and_reports(tour: Path) -> None:
    log = stage_log(tour)
    assert list(log) == STAGES
    assert all(entry.get("ended", True) and entry["wall"] > 0 for entry in log.values()), log
    assert log["sft main"]["command"].startswith("webworld train sft --data ")
    assert "--from-goal 1" in log["rl tour s0"]["command"]
    verified = lines(next((tour / "worlds" / "trajectories").glob("*/verified.jsonl")))
    assert verified
    assert json.loads((tour / "sft-main" / "sft_summary.json").read_text())["steps"] == 4
    assert [row["step"] for row in lines(tour / "rl-tour-s0" / "metrics.jsonl")] == [1, 2]
    results = lines(tour / "eval" / "heldout-rl-s0.jsonl")
    planned = resolve_suite(str(tour / "worlds")).plan(1, 0)  # one episode per task instance
    assert sorted(r["key"] for r in results) == sorted(p.key for p in planned)
    # the policy after batch 1 of 2, kept and scored on the same episodes: the curve's point
    milestone = tour / "rl-tour-s0" / "milestones" / "step-000001"
    assert (milestone / "config.json").is_file() and f"hf:{milestone}" in \
        log["eval heldout-rl-s0-b1"]["command"]
    along = lines(tour / "eval" / "heldout-rl-s0-b1.jsonl")
    assert sorted(r["key"] for r in along) == sorted(p.key for p in planned)
    report = (tour / "REPORT.md").read_text()
    assert "heldout-rl-s0" in report and "## Stages" in report
    for name in STAGES:
        assert f"| {name} |" in report
    assert "rl-tour-s0" in report and (tour / "curves.png").stat().st_size > 0
    along = report.split("## Along training", 1)[1]
    assert "| seed | batch 1 | batch 2 (end) |" in along
    assert f"| 0 | {_percent(lines(tour / 'eval' / 'heldout-rl-s0-b1.jsonl'))} | " \
           f"{_percent(results)} |" in along


def _percent(records: list[dict]) -> str:
    return f"{100 * sum(bool(r['success']) for r in records) / len(records):.1f}%"


@LONG
def test_a_finished_recipe_runs_no_stage_again(tour: Path) -> None:
    before = stage_log(tour)
    done = run_tour(tour)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "0 stages run, 7 already done" in done.stdout
    assert stage_log(tour) == before


@LONG
def test_a_recipe_killed_inside_rl_resumes_to_the_same_records(tour: Path, tmp_path: Path
                                                              ) -> None:
    run = tmp_path / "run"
    shutil.copytree(tour, run, symlinks=True,
                    ignore=shutil.ignore_patterns("rl-*", "eval", "REPORT.md", "curves.png"))
    log = stage_log(tour)
    (run / "stages.json").write_text(json.dumps(
        {k: v for k, v in log.items() if not k.startswith(("rl ", "eval "))}))
    sets = [part for s in SMALL for part in ("--set", s)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(webworld("recipe", "run", str(TOUR), "--out", str(run), *sets),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          env=env, cwd=tmp_path) as process:
        assert process.stdout is not None
        for line in process.stdout:  # the first RL batch is checkpointed, the second played
            if line.strip().startswith("batch 2/2"):
                process.send_signal(signal.SIGKILL)
                break
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert stage_log(run)["rl tour s0"]["ended"] is False
    assert list((run / "rl-tour-s0" / "checkpoints").iterdir())
    done = run_tour(run)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "4 already done" in done.stdout  # build, snapshots, export, SFT
    resumed = stage_log(run)
    assert list(resumed) == STAGES and all(e.get("ended", True) for e in resumed.values())
    assert [r["step"] for r in lines(run / "rl-tour-s0" / "metrics.jsonl")] == [1, 2]
    keys = [r["key"] for r in lines(run / "eval" / "heldout-rl-s0.jsonl")]
    assert sorted(keys) == sorted(r["key"] for r in lines(tour / "eval" / "heldout-rl-s0.jsonl"))


BAD = {
    "unknown key": ('[[worlds]]\nname = "w"\nthemes = ["bank"]\n[sft]\nlearnig_rate = 0.1\n',
                    "sft.learnig_rate: Extra inputs are not permitted (line 5)"),
    "wrong type": ('[[worlds]]\nname = "w"\nthemes = ["bank"]\n[sft]\nmax_steps = "many"\n',
                   "sft.max_steps: Input should be a valid integer"),
    "out of range": ('[[worlds]]\nname = "w"\nthemes = ["bank"]\n\n[sft]\nlearning_rate = -1\n',
                     "sft.learning_rate: Input should be greater than 0 (line 6)"),
    "a key the recipe fills": ('[[worlds]]\nname = "w"\nthemes = ["bank"]\n[sft]\n'
                               'data = "mine"\n', "sft: data is filled by the recipe"),
    "second list item": ('[[worlds]]\nname = "a"\nthemes = ["bank"]\n[[worlds]]\nname = "b"\n'
                         'themes = ["shop"]\nprofile = "huge"\n', "worlds.1.profile: Input "
                         "should be 'easy', 'medium' or 'hard' (line 7)"),
    "a reference": ('[[worlds]]\nname = "w"\nthemes = ["bank"]\n[[evals]]\nname = "e"\n'
                    'policy = "rl:nope"\n', "evals.0.policy: no RL run named 'nope'"),
    "a milestone past the run": ('[[worlds]]\nname = "w"\nthemes = ["bank"]\n[[rl]]\nname = "r"\n'
                                 'model = "tiny"\nsteps = 4\nmilestones = [2, 5]\n',
                                 "rl.0: milestones [5] are not rollout batches of "
                                 "the run (1 to steps, 4) (line 8)"),
    "milestones of a run that keeps none": (
        '[[worlds]]\nname = "w"\nthemes = ["bank"]\n[[rl]]\nname = "r"\nmodel = "tiny"\n'
        '[[evals]]\nname = "e"\npolicy = "rl:r"\nmilestones = true\n',
        "evals.0.milestones: only an rl:<run> policy whose run keeps milestones"),
    "bad TOML": ('[[worlds]\nname = "w"\n', "not valid TOML"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_recipe_gets_one_line_naming_the_key(case: str, tmp_path: Path) -> None:
    text, expected = BAD[case]
    recipe = tmp_path / "bad.toml"
    recipe.write_text(text)
    result = CliRunner().invoke(app, ["recipe", "run", str(recipe), "--out", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())  # the console may wrap a long line
    assert f"{recipe}: " in message and expected in message, result.output
    assert "Traceback" not in result.output and not (tmp_path / "r").exists()


def test_a_bad_override_names_itself(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["recipe", "check", str(TOUR), "--set", "rl.3.steps=2"])
    assert result.exit_code == 2
    assert "--set rl.3.steps=2: rl.3: no such item (the list has 1)" in " ".join(result.output.split())
    result = CliRunner().invoke(app, ["recipe", "check", str(TOUR), "--set", "rl.0.steps=0"])
    assert result.exit_code == 2 and "rl.0.steps: Input should be greater than or equal to 1" \
        in " ".join(result.output.split())


def test_overrides_reach_every_item_of_a_list() -> None:
    recipe = load_recipe(ROOT / "recipes" / "smollm2.toml", ["rl.*.steps=2", "sft.max_steps=4"])
    assert [run.steps for run in recipe.rl] == [2, 2, 2] and recipe.sft is not None
    assert recipe.sft.max_steps == 4


def test_the_recipe_of_record_validates_and_plans_its_stages(tmp_path: Path) -> None:
    recipe = load_recipe(ROOT / "recipes" / "smollm2.toml")
    stages = [s.name for s in plan_stages(recipe, RunFolder(tmp_path), print)]
    assert stages[:6] == ["build easy", "build medium", "snapshots", "export", "train-worlds",
                          "sft shuffled"]
    assert [s for s in stages if s.startswith("rl ")] == [
        "rl success s0", "rl success s1", "rl success s2", "rl progress s0", "rl progress s1",
        "rl progress s2", "rl progress-live s0"]
    assert {"eval train-rl-success-s2", "eval heldout-rl-progress-s1",
            "eval miniwob-rl-progress-s1", "eval heldout-zero-shot"} <= set(stages)
    assert not tmp_path.exists() or not any(tmp_path.iterdir())  # planning writes nothing


@pytest.mark.parametrize("name", ["tour.toml", "smollm2.toml", "smollm2-dense.toml",
                                  "smollm2-wide-rl.toml"])
def test_every_recorded_command_is_one_the_cli_takes(name: str, tmp_path: Path) -> None:
    """What stages.json records as a stage's equivalent command parses as `webworld` would."""
    from tests.test_readme import usage_problem

    stages = plan_stages(load_recipe(ROOT / "recipes" / name), RunFolder(tmp_path), print)
    commands = [s.command for s in stages if s.command.startswith("webworld ")]
    assert len(commands) >= len(stages) - 1  # all but the train-worlds links
    assert [problem for c in commands if (problem := usage_problem(c, whole=True))] == []
