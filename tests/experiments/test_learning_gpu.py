"""A lent GPU's learning runs come back as experiments/learning.py's results: an RL run cut at
its time limit keeps the evals of its last checkpoint under the run's name, with its batches."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from experiments.learning_gpu import import_call


def device_call(out: Path, files: dict[str, str]) -> None:
    out.mkdir()
    (out / "gpu_results.json").write_text('{"stages": []}')
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
