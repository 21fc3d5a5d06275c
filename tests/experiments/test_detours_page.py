"""experiments/detours.py: the marked export must hold the same chats as the one it is
compared with, and its page shows the detours left out beside widget_thoughts.py's rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.detours import same_chats, write_page


def export(root: Path, replies: list[str], detours: list[bool]) -> Path:
    (root / "sft").mkdir(parents=True)
    with (root / "sft" / "train.jsonl").open("w") as f:
        for reply, detour in zip(replies, detours, strict=True):
            f.write(json.dumps({"messages": [{"role": "user", "content": "page"},
                                             {"role": "assistant", "content": reply}],
                                "detour": detour}) + "\n")
    return root


def test_the_comparison_needs_the_same_chats(tmp_path: Path) -> None:
    old = export(tmp_path / "old", ["a", "b"], [False, False])
    same_chats(old, export(tmp_path / "marked", ["a", "b"], [False, True]))  # marks may differ
    with pytest.raises(SystemExit, match="its chats differ"):
        same_chats(old, export(tmp_path / "other", ["a", "B"], [False, True]))


def test_the_page_counts_the_detours_and_shows_the_rows(tmp_path: Path) -> None:
    record = tmp_path / "record"
    (record / "eval").mkdir(parents=True)
    (record / "stages.json").write_text(json.dumps({"export (compact)": {
        "command": "webworld export", "wall": 54.0}}))
    (record / "detours.json").write_text(json.dumps({
        "training_chats": 2711, "detour_chats": 159, "paths": 396, "longer_paths": 198,
        "by_action": {"Choose was this page helpful?": 96, "Switch tab": 31}}))
    doc = tmp_path / "page.md"
    write_page(record, doc)
    page = doc.read_text()
    assert "198 of 396 paths are longer, and 159 of 2711 training chats" in page
    assert "| Choose was this page helpful? | 96 |" in page
    assert "(`--skip-detours`) (not run yet)" in page
    assert "| SFT, ids shuffled, no detours | not run yet |" in page
    assert "(`--skip-detours`, `--rename-choices`, `--vary-values`, `--vary-dates`) (not run" in page
    assert "| SFT, ids shuffled, no detours, names, values and dates varied | not run yet |" in page
    assert page.count("| the same, grounded by name, misread thoughts not trusted |") == 2
    # widget_thoughts.py's committed run on every chat is the row to beat
    assert "| SFT, ids shuffled, every chat | 53 | 17.0%" in page
