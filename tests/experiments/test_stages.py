"""The experiment scripts' stages: a stage's end copies the run's small results files to the
committed record, weights left behind, and the record mirrors the run folder's paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.stages import Stages, keep_record, write_keeping_reading

PATTERNS = ("stages.json", "eval/*.jsonl", "*/sft_summary.json", "rl-*/metrics.jsonl")


def run_folder(work: Path) -> None:
    for name, text in {"eval/heldout-sft.jsonl": '{"success": true}\n',
                       "sft/sft_summary.json": '{"steps": 3}', "sft/model/model.safetensors": "W",
                       "rl-progress-s0/metrics.jsonl": '{"step": 1}\n',
                       "rl-progress-s0/checkpoints/step-000001/learner.pt": "W"}.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)


def test_the_record_keeps_results_and_leaves_weights(tmp_path: Path) -> None:
    work, record = tmp_path / "work", tmp_path / "record"
    run_folder(work)
    keep_record(work, record, PATTERNS)
    kept = sorted(str(p.relative_to(record)) for p in record.rglob("*") if p.is_file())
    assert kept == ["eval/heldout-sft.jsonl", "rl-progress-s0/metrics.jsonl",
                    "sft/sft_summary.json"]
    (work / "eval" / "heldout-sft.jsonl").write_text('{"success": false}\n')
    keep_record(work, record, PATTERNS)  # a later copy replaces the earlier one
    assert (record / "eval" / "heldout-sft.jsonl").read_text() == '{"success": false}\n'


def test_a_stage_that_ends_calls_its_after_hook_with_the_log_written(tmp_path: Path) -> None:
    work, record = tmp_path / "work", tmp_path / "record"
    work.mkdir()
    stages = Stages(work, after=lambda: keep_record(work, record, PATTERNS))
    stages.run("help", ["--help"], work / "never-there")
    assert json.loads((record / "stages.json").read_text())["help"]["command"] == \
        "webworld --help"


def test_the_record_keeps_the_stages_a_new_run_folder_did_not_run(tmp_path: Path) -> None:
    """A run folder made again on a new machine logs only its own stages; the record's stage
    log keeps the earlier machine's as well, and takes the new wall time of a stage run again."""
    work, record = tmp_path / "work", tmp_path / "record"
    record.mkdir()
    (record / "stages.json").write_text(json.dumps({"sft": {"command": "a", "wall": 10.0},
                                                    "eval": {"command": "b", "wall": 5.0}}))
    work.mkdir()
    (work / "stages.json").write_text(json.dumps({"eval": {"command": "b", "wall": 7.0},
                                                  "sft again": {"command": "c", "wall": 1.0}}))
    keep_record(work, record, PATTERNS)
    assert json.loads((record / "stages.json").read_text()) == {
        "sft": {"command": "a", "wall": 10.0}, "eval": {"command": "b", "wall": 7.0},
        "sft again": {"command": "c", "wall": 1.0}}


def test_a_page_written_again_keeps_measured_rows_whose_results_are_gone(tmp_path: Path) -> None:
    doc = tmp_path / "page.md"
    write_keeping_reading(doc, "\n".join([
        "- after SFT (`sft/`): 1017 optimiser steps.", "- after RL: not run yet", "",
        "| policy | split | success |", "|---|---|---|",
        "| after SFT | validation worlds | 61.3% |", "| after SFT | training worlds | 93.1% |",
        "| after RL | validation worlds | not run yet |", "",
        "| policy | held-out |", "|---|---|", "| after SFT | 5.7% |"]))
    (doc.write_text(doc.read_text().replace("Reading: (to write)", "Reading: by hand")))
    # the record lacks the SFT runs' results now, and has the RL run's
    write_keeping_reading(doc, "\n".join([
        "- after SFT: not run yet", "- after RL (`rl/`): 20 batches.", "",
        "| policy | split | success |", "|---|---|---|",
        "| after SFT | validation worlds | not run yet |",
        "| after SFT | training worlds | not run yet |",
        "| after SFT | held-out worlds | not run yet |",
        "| after RL | validation worlds | 70.0% |", "",
        "| policy | held-out |", "|---|---|", "| after SFT | not run yet |"]))
    text = doc.read_text()
    assert "- after SFT (`sft/`): 1017 optimiser steps." in text
    assert "- after RL (`rl/`): 20 batches." in text
    assert "| after SFT | validation worlds | 61.3% |" in text
    assert "| after SFT | training worlds | 93.1% |" in text
    assert "| after SFT | held-out worlds | not run yet |" in text  # never measured
    assert "| after RL | validation worlds | 70.0% |" in text  # new results replace old rows
    assert "| after SFT | 5.7% |" in text  # each table's rows from the same table
    assert text.count("after SFT | validation") == 1 and "Reading: by hand" in text


def test_a_row_label_two_lines_share_is_not_filled_from_the_other(tmp_path: Path) -> None:
    doc = tmp_path / "page.md"
    table = ["| policy | held-out |", "|---|---|", "| SFT, every chat | 17.0% |"]
    write_keeping_reading(doc, "\n".join([*table, "| the same, grounded | 35.8% |",
                                          "| SFT, no detours | not run yet |",
                                          "| the same, grounded | not run yet |"]))
    write_keeping_reading(doc, "\n".join([*table, "| the same, grounded | 35.8% |",
                                          "| SFT, no detours | 20.8% |",
                                          "| the same, grounded | not run yet |"]))
    text = doc.read_text()
    assert text.count("| the same, grounded | 35.8% |") == 1
    assert "| the same, grounded | not run yet |" in text


def test_a_page_written_again_keeps_the_stages_of_an_earlier_run(tmp_path: Path) -> None:
    from experiments.learning import earlier_stages

    doc = tmp_path / "learning.md"
    doc.write_text("## Stages\n\n| stage | wall (s) | command |\n|---|---|---|\n"
                   "| build easy | 762 | `webworld build` |\n| SFT | 3565 | `webworld train sft` |\n"
                   "| eval old (earlier run) | 59 | `webworld eval` |\n")
    (tmp_path / "work").mkdir()
    stages = Stages(tmp_path / "work")
    stages.log["build easy"] = {"wall": 202, "command": "webworld build"}
    assert earlier_stages(doc, stages) == [  # this record's own stages are its own rows
        "| SFT (earlier run) | 3565 | `webworld train sft` |",
        "| eval old (earlier run) | 59 | `webworld eval` |"]  # marked once


def test_a_stage_cut_short_keeps_its_time_and_runs_again(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    from experiments.stages import stage_rows

    logged: list[tuple[float, bool]] = []
    write = Stages._log

    def spy(self: Stages, name: str, args: list[str], wall: float, *, ended: bool) -> None:
        logged.append((wall, ended))
        write(self, name, args, wall, ended=ended)
    monkeypatch.setattr(Stages, "_log", spy)
    output = tmp_path / "out.json"
    output.write_text("{}")  # output left by the cut run: not enough to skip the stage
    stages = Stages(tmp_path)
    stages.HEARTBEAT_S = 0.05  # a CLI start takes longer: the heartbeat logs while it runs
    with pytest.raises(subprocess.CalledProcessError):
        stages.run("validate", ["validate", str(tmp_path / "missing.json")], output)
    assert logged[0][1] is False and logged[-1][1] is False, logged
    entry = json.loads((tmp_path / "stages.json").read_text())["validate"]
    cut_wall = logged[-1][0]
    assert entry["ended"] is False and entry["wall"] == cut_wall > 0
    assert not Stages(tmp_path).done("validate", output)
    assert "| validate (cut short) |" in "\n".join(stage_rows({"validate": entry}))
    before = len(logged)
    stages.run("validate", ["--help"], output)  # the rerun ends: its time adds to the cut one's
    beats = logged[before:-1]
    assert beats and not any(ended for _, ended in beats) and logged[-1][1] is True, logged
    entry = json.loads((tmp_path / "stages.json").read_text())["validate"]
    assert "ended" not in entry and entry["wall"] > cut_wall
    assert Stages(tmp_path).done("validate", output)


def test_a_folder_made_again_takes_back_a_recorded_run_whole_or_not_at_all(tmp_path: Path
                                                                          ) -> None:
    """An SFT run and its evals come back from the record together (so it is not trained
    again only to be played), never the SFT alone: its plays would then have no model."""
    record, work = tmp_path / "record", tmp_path / "work"
    run_folder(record)
    ended = {"command": "webworld x", "wall": 7.0}
    (record / "stages.json").write_text(json.dumps({"sft": ended, "eval heldout-sft": ended,
                                                    "eval cut": {**ended, "ended": False}}))
    stages = Stages(work)
    run = {"sft": Path("sft/sft_summary.json"), "eval heldout-sft": Path("eval/heldout-sft.jsonl")}
    assert not stages.restore(record, {**run, "eval missing": Path("eval/missing.jsonl")})
    assert not stages.restore(record, {"eval cut": Path("eval/heldout-sft.jsonl")})
    assert not (work / "eval").exists() and stages.log == {}
    assert stages.restore(record, run)
    assert stages.done("sft", work / "sft" / "sft_summary.json")
    assert stages.done("eval heldout-sft", work / "eval" / "heldout-sft.jsonl")
    assert not (work / "sft" / "model").exists()  # scores, never weights
    assert json.loads((work / "stages.json").read_text())["sft"]["wall"] == 7.0
    assert not Stages(work).restore(record, run)  # logged here already: this folder's own
