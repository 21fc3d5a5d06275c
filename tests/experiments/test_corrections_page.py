"""experiments/corrections.py's page, from a record and the baseline's: each policy's rows,
the episodes the corrections won and lost against SFT alone, where the corrections came from."""

from __future__ import annotations

import json
from pathlib import Path

from experiments.corrections import episodes, write_page


def results(path: Path, successes: list[bool], kind: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({
        "task": f"w/t{i}", "episode": 0, "key": f"suite/w/t{i}#0", "suite": "suite", "world": "w",
        "archetype": "shop", "steps": 3, "time_s": 1.0, "success": ok, "kind": kind, "actions": [],
        "failure": "" if ok else "step limit", "reward": float(ok)}) + "\n"
        for i, ok in enumerate(successes)))


def test_the_page_shows_both_policies_and_what_the_corrections_changed(tmp_path: Path) -> None:
    record, base, doc = tmp_path / "record", tmp_path / "gpu", tmp_path / "page.md"
    results(base / "eval" / "train-sft-relabel.jsonl", [True, False, False, True])
    results(record / "eval" / "train-sft-corrected.jsonl", [True, True, True, False])
    results(base / "eval" / "heldout-sft-relabel.jsonl", [False, False], "new-world")
    results(record / "eval" / "heldout-sft-corrected-fast.jsonl", [True, False], "new-world")
    (record / "data-corrected").mkdir()
    (record / "data-corrected" / "corrections.json").write_text(json.dumps(
        {"corrections": 7, "original": 7, "from_episodes": 9}))
    (record / "stages.json").write_text(json.dumps(
        {"corrections": {"command": "webworld train corrections", "wall": 4.2},
         "eval train-sft-corrected": {"command": "webworld eval", "wall": 60.0},
         "eval train-sft-relabel": {"command": "webworld eval (the baseline)", "wall": 1.0},
         "SFT": {"command": "webworld train sft (an earlier stage)", "wall": 9.0}}))
    write_page(record, doc, base)
    page = doc.read_text()
    assert "| after SFT, then corrections | 4 | 75.0%" in page
    assert "| after SFT (GPU lease) | 4 | 50.0%" in page
    assert "| after SFT (GPU lease) | 2 | 0.0%" in page  # held-out
    assert "of 4 episodes, 2 won and 1 lost" in page  # training worlds
    assert "of 2 episodes, 1 won and 0 lost" in page  # held-out
    assert "9 corrected turns, 7 distinct" in page
    assert "| corrections | 4 |" in page
    assert "an earlier stage" not in page and "the baseline" not in page


def test_the_corrections_come_from_each_distinct_results_file_once() -> None:
    files = episodes()
    assert files and len({f.read_bytes() for f in files}) == len(files)
    assert all(f.name.startswith("train-") for f in files)
