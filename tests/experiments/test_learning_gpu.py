"""A lent GPU's learning runs come back as experiments/learning.py's results: an RL run cut at
its time limit keeps the evals of its last checkpoint under the run's name, with its batches."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from experiments.learning_gpu import import_call


def device_call(out: Path, files: dict[str, str], stages: list[dict] = ()) -> None:
    out.mkdir()
    (out / "gpu_results.json").write_text(json.dumps({"stages": list(stages)}))
    with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))


def test_a_cut_run_is_shown_at_its_last_checkpoint_and_a_finished_one_at_its_end(
        tmp_path: Path) -> None:
    device_call(tmp_path / "out", {
        "eval/train-rl-progress-s0-b3.jsonl": "at 3\n",
        "eval/train-rl-progress-s0-b12.jsonl": "at 12\n",  # sorted as a number, not as text
        "eval/train-rl-success-s0-b2.jsonl": "at 2\n",
        "eval/train-rl-success-s0.jsonl": "final\n",
        "eval/train-sft-relabel.jsonl": "sft\n"})
    record = tmp_path / "record"
    (record / "eval").mkdir(parents=True)
    (record / "eval" / "stale.jsonl").write_text("from an earlier import\n")
    import_call(tmp_path / "out", record)
    kept = {p.name: p.read_text() for p in (record / "eval").iterdir()}
    assert kept == {"train-rl-progress-s0.jsonl": "at 12\n", "train-rl-success-s0.jsonl": "final\n",
                    "train-sft-relabel.jsonl": "sft\n"}
    assert json.loads((record / "cut.json").read_text()) == {"train-rl-progress-s0": 12}
    assert (record / "gpu_results.json").is_file()


def test_a_call_of_another_lease_does_not_replace_the_records_runs(tmp_path: Path) -> None:
    first = [{"stage": "python and torch", "wall_s": 6.6}]
    device_call(tmp_path / "first", {"eval/heldout-sft.jsonl": "first\n"}, first)
    record = tmp_path / "record"
    import_call(tmp_path / "first", record)
    # the same warm machine later: its stages go on from the record's
    device_call(tmp_path / "later", {"eval/heldout-sft.jsonl": "first\n",
                                     "eval/train-sft.jsonl": "later\n"},
                [*first, {"stage": "eval", "wall_s": 30.0}])
    import_call(tmp_path / "later", record)
    assert (record / "eval" / "train-sft.jsonl").read_text() == "later\n"
    # a fresh machine of a later lease
    device_call(tmp_path / "other", {"eval/heldout-rl.jsonl": "other\n"},
                [{"stage": "python and torch", "wall_s": 7.1}])
    with pytest.raises(SystemExit, match="another lease.*--record DIR"):
        import_call(tmp_path / "other", record)
    assert (record / "eval" / "train-sft.jsonl").is_file()
    import_call(tmp_path / "other", record, replace=True)
    assert [p.name for p in (record / "eval").iterdir()] == ["heldout-rl.jsonl"]
