"""experiments/learning.py's page rows: every SFT run scored on the training worlds keeps its
row beside RL's start, and each SFT summary says which compute it ran in."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.learning import SFT_BEFORE_RL, compute, rl_start, training_rows
from tests.experiments.test_corrections_page import results


def test_training_rows_show_every_scored_sft_run_and_rl_start(tmp_path: Path) -> None:
    results(tmp_path / "eval" / "train-sft-relabel.jsonl", [True, False, False, True])
    results(tmp_path / "eval" / "train-sft-shuffled.jsonl", [True, True, True, False])
    results(tmp_path / "eval" / "train-rl-progress-s0.jsonl", [True, True, False, False])
    rows = "\n".join(training_rows(tmp_path, [0, 1]))
    assert rl_start(tmp_path) == SFT_BEFORE_RL[0] == "sft-shuffled"
    assert "| after SFT, ids relabelled | 50.0%" in rows  # an earlier start keeps its row
    assert "| after SFT, ids shuffled (RL's start) | 75.0%" in rows
    assert "| after SFT + RL (progress reward) | 50.0%" in rows and "| not run yet |" in rows
    # paired against RL's start (ids shuffled), not the earlier start: t2 lost, none won
    assert "of 4; won 0, lost 1 (p = 1) |" in rows, rows


def test_a_run_not_scored_is_shown_only_when_rl_starts_from_it(tmp_path: Path) -> None:
    (tmp_path / "rl-start.txt").write_text("sft-relabel\n")
    rows = "\n".join(training_rows(tmp_path, [0]))
    assert "| after SFT, ids relabelled (RL's start) | - | - |" in rows
    assert "ids shuffled" not in rows


def test_the_page_shows_grounded_held_out_rows_apart(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from argparse import Namespace

    from experiments import learning

    results(tmp_path / "eval" / "heldout-sft-shuffled.jsonl", [True, False, False, False],
            "new-world")
    results(tmp_path / "eval" / "heldout-sft-shuffled-grounded.jsonl", [True, True, False, False],
            "new-world")
    doc = tmp_path / "docs" / "learning.md"
    doc.parent.mkdir()
    monkeypatch.setattr(learning, "DOCS", doc.parent)
    learning.write_doc(Namespace(quick=False, seeds=[0]), tmp_path, learning.Stages(tmp_path))
    page = doc.read_text()
    assert "| after SFT, ids shuffled | 4 | 25.0%" in page
    assert "| after SFT, ids shuffled, grounded by name | 4 | 50.0%" in page
    assert "| after SFT + RL, progress reward (seed 0), grounded by name | not run yet |" in page


def test_compute_is_fp32_for_summaries_from_before_auto_was_resolved() -> None:
    assert compute({"precision": "auto"}) == compute({}) == "fp32"
    assert compute({"precision": "bf16"}) == "bf16"


def test_a_recorded_run_with_all_its_batches_is_finished_without_its_weights(tmp_path: Path
                                                                             ) -> None:
    import json

    from experiments.learning import rl_curves

    for seed, batches in ((0, 3), (1, 2)):  # the record keeps metrics and config, no model
        run = tmp_path / f"rl-progress-s{seed}"
        run.mkdir()
        (run / "config.json").write_text(json.dumps({"steps": 3}))
        (run / "metrics.jsonl").write_text("".join(
            json.dumps({"success_rate": 0.5, "from_goal": 1, "time_rollout": 900,
                        "time_learn": 900}) + "\n" for _ in range(batches)))
    lines = "\n".join(rl_curves(tmp_path, [0, 1], tmp_path / "curves.png"))
    # seed 1 did 2 of its 3 batches; the hours add up over both runs' batches
    assert "- progress reward (2 seeds, 1 unfinished, 2 batches, 2.5 h of" in lines, lines
    with (tmp_path / "rl-progress-s1" / "metrics.jsonl").open("a") as metrics:
        metrics.write(json.dumps({"success_rate": 1.0, "from_goal": 2}) + "\n")
    lines = "\n".join(rl_curves(tmp_path, [0, 1], tmp_path / "curves.png"))
    assert "- progress reward (2 seeds, 3 batches, 2.5 h of" in lines, lines


def test_a_run_folder_made_again_takes_the_records_finished_evals(tmp_path: Path) -> None:
    """On a new machine the record's scores come back, each with its stage, so neither the
    eval nor the training of its policy runs again; a cut-short or already-run eval does not."""
    import json

    from experiments.learning import Evals, Stages

    record, work = tmp_path / "record", tmp_path / "work"
    results(record / "eval" / "train-rl-success-s0.jsonl", [True, False])
    results(record / "eval" / "heldout-rl-success-s0.jsonl", [True])  # cut short
    results(record / "eval" / "train-sft.jsonl", [True])
    (record / "eval" / "turns-zero-shot.json").write_text('{"correct": 2}')
    ended = {"command": "webworld eval", "wall": 5.0}
    (record / "stages.json").write_text(json.dumps({
        "build easy": ended, "eval train-rl-success-s0": ended, "eval turns-zero-shot": ended,
        "eval heldout-rl-success-s0": {**ended, "ended": False}, "eval train-sft": ended}))
    results(work / "eval" / "train-sft.jsonl", [False, False])  # this folder's own, kept
    (work / "stages.json").write_text(json.dumps({"eval train-sft": {"command": "x", "wall": 1}}))
    evals = Evals(Stages(work), work, quick=False)

    assert evals.restore(record) == ["train-rl-success-s0", "turns-zero-shot"]
    assert evals.done("train-rl-success-s0") and not evals.done("heldout-rl-success-s0")
    log = json.loads((work / "stages.json").read_text())
    assert set(log) == {"eval train-rl-success-s0", "eval turns-zero-shot", "eval train-sft"}
    assert log["eval train-sft"]["wall"] == 1
    assert (work / "eval" / "turns-zero-shot.json").read_text() == '{"correct": 2}'
    assert '"success": false' in (work / "eval" / "train-sft.jsonl").read_text()

    class Trained(Exception):
        """Raised where `webworld train rl` would make the policy."""

    def train() -> None:
        raise Trained  # stands for `webworld train rl`: the policy would be made here

    evals.run("train-rl-success-s0", "suite", "hf:rl", before=train)  # done: nothing trained
    with pytest.raises(Trained):
        evals.run("heldout-rl-success-s0", "heldout", "hf:rl", before=train)


def test_held_out_rl_rows_follow_the_seed_scored_or_trained(tmp_path: Path) -> None:
    from experiments.learning import held_out_seed

    assert held_out_seed(tmp_path, [0, 1, 2]) == 0
    for reward in ("success", "progress"):
        (tmp_path / f"rl-{reward}-s1" / "model").mkdir(parents=True)
        (tmp_path / f"rl-{reward}-s1" / "model" / "config.json").write_text("{}")
    assert held_out_seed(tmp_path, [0, 1, 2]) == 1
    results(tmp_path / "eval" / "heldout-rl-progress-s2.jsonl", [True])
    assert held_out_seed(tmp_path, [0, 1, 2]) == 2


def test_each_rl_seed_is_paired_with_the_training_of_its_start_it_came_from(tmp_path: Path
                                                                          ) -> None:
    """The SFT start trained again (another machine: other validation losses) is a start of
    its own: its evals get "-2", the runs trained from it are paired with it, and the gain
    over seeds is each run's over its own start."""
    import json

    from experiments.learning import start_suffix, started_from

    sft = tmp_path / "sft-shuffled"
    sft.mkdir()

    def trained(losses: list[float]) -> None:
        (sft / "sft_summary.json").write_text(json.dumps({"validation_losses": losses}))

    trained([0.2, 0.15])
    assert start_suffix(tmp_path, sft, "rl-success-s0", "rl-progress-s0") == ""
    trained([0.19, 0.16])  # the same recipe trained again elsewhere
    assert start_suffix(tmp_path, sft) == "-2"
    assert start_suffix(tmp_path, sft, "rl-success-s1") == "-2"
    assert started_from(tmp_path, "rl-success-s0") == ""
    assert started_from(tmp_path, "rl-success-s1") == "-2"
    assert started_from(tmp_path, "rl-success-s2") is None
    trained([0.2, 0.15])  # the first training's losses again: the first start
    assert start_suffix(tmp_path, sft) == ""

    results(tmp_path / "eval" / "train-sft-shuffled.jsonl", [False, False, True, True])
    results(tmp_path / "eval" / "train-sft-shuffled-2.jsonl", [True, True, True, False])
    results(tmp_path / "eval" / "train-rl-success-s0.jsonl", [True, False, True, True])
    results(tmp_path / "eval" / "train-rl-success-s1.jsonl", [True, True, True, True])
    rows = "\n".join(training_rows(tmp_path, [0, 1, 2]))
    assert "| after SFT, ids shuffled (RL's start) | 50.0% [15.0, 85.0] of 4 | 75.0% " \
           "[30.1, 95.4] of 4 (training 2) | - |" in rows, rows
    # seed 0 won t0 against the first training; seed 1 won t3 against the second (it would
    # have won t0 and t1 against the first)
    assert "of 4; won 1, lost 0 (p = 1) | 100.0% [51.0, 100.0] of 4; won 1, lost 0 (p = 1) " \
           "| not run yet |" in rows, rows
    assert "| RL's gain over its start (success reward), points | +25.0 | +25.0 | - | " \
           "+25.0 [+25.0, +25.0] |" in rows, rows
