"""webworld/study.py and the helpers the studies in experiments/ share: a page keeps the
reading a person wrote, a stage runs once and logs its wall time, and the numbers read off
RL metrics and seeds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from webworld.eval.results import mean_interval
from webworld.study import READING, Stages, write_keeping_reading
from webworld.train.metrics import area_under_curve, batches_to, final_success


def test_a_rewritten_page_keeps_the_reading_under_the_marker(tmp_path: Path) -> None:
    page = tmp_path / "REPORT.md"
    write_keeping_reading(page, "# Table\n\n| a | 1 |\n")
    assert page.read_text().endswith(READING + "\n\nReading: (to write)\n")
    page.write_text(page.read_text().replace("(to write)", "the 1 is a fluke"))
    write_keeping_reading(page, "# Table\n\n| a | 2 |\n")
    assert page.read_text() == f"# Table\n\n| a | 2 |\n{READING}\n\nReading: the 1 is a fluke\n"


def test_a_stage_runs_once_and_a_failed_one_is_logged_as_not_ended(tmp_path: Path) -> None:
    stages = Stages(tmp_path, tmp_path)
    schema = tmp_path / "schema.json"
    stages.run("schema", ["spec", "schema", "--out", str(schema)], schema)
    logged = json.loads((tmp_path / "stages.json").read_text())["schema"]
    assert json.loads(schema.read_text())["title"] and logged["wall"] > 0
    assert logged["command"] == f"webworld spec schema --out {schema}" and "ended" not in logged
    schema.write_text("{}")
    Stages(tmp_path, tmp_path).run("schema", ["spec", "schema", "--out", str(schema)], schema)
    assert schema.read_text() == "{}"  # done: not run again
    with pytest.raises(subprocess.CalledProcessError):
        stages.run("bad", ["validate", str(tmp_path / "missing.json")], tmp_path / "never")
    assert json.loads((tmp_path / "stages.json").read_text())["bad"]["ended"] is False


def test_the_numbers_of_an_rl_run_and_of_seeds() -> None:
    rows = [{"step": i + 1, "success_rate": r} for i, r in enumerate([0.0, 0.5, 1.0, 1.0, 1.0])]
    assert final_success(rows) == 1.0 and final_success(rows, last=5) == pytest.approx(0.7)
    assert area_under_curve(rows) == pytest.approx(0.7) and area_under_curve([]) == 0.0
    assert batches_to(rows, 0.8) == 4 and batches_to(rows, 1.0) == 5
    assert batches_to(rows[:3], 0.9) is None
    mean, low, high = mean_interval([0.5, 0.7])
    assert (mean, low, high) == (pytest.approx(0.6), 0.0, 1.0)  # t=12.71 over 2 seeds, clamped
    mean, low, high = mean_interval([0.5, 0.6, 0.7], rates=False)
    assert mean == pytest.approx(0.6) and high - mean == pytest.approx(4.30 * 0.1 / 3 ** 0.5)
    assert mean_interval([0.3]) == (0.3, 0.3, 0.3)
