"""experiments/widget_thoughts.py: the count of chats the new thoughts reword, and its page
from a record, beside name_finding.py's committed rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.widget_thoughts import changed_chats, write_page


def export(root: Path, replies: list[str]) -> Path:
    (root / "sft").mkdir(parents=True)
    with (root / "sft" / "train.jsonl").open("w") as f:
        for reply in replies:
            f.write(json.dumps({"messages": [{"role": "user", "content": "page"},
                                             {"role": "assistant", "content": reply}]}) + "\n")
    return root


def test_changed_chats_counts_the_reworded_replies(tmp_path: Path) -> None:
    old = export(tmp_path / "old", ["a", "b", "c"])
    new = export(tmp_path / "new", ["a", "B", "c"])
    assert changed_chats(old, new, tmp_path / "changed.json") == {"chats": 3, "changed": 1}
    assert json.loads((tmp_path / "changed.json").read_text())["changed"] == 1
    with pytest.raises(SystemExit, match="not the same worlds"):
        changed_chats(old, export(tmp_path / "short", ["a"]), tmp_path / "x.json")


def test_the_page_shows_the_new_rows_beside_the_old(tmp_path: Path) -> None:
    record = tmp_path / "record"
    (record / "eval").mkdir(parents=True)
    (record / "stages.json").write_text(json.dumps({"sft sft-shuffled": {
        "command": "webworld train sft", "wall": 12.0}}))
    (record / "changed.json").write_text(json.dumps({"chats": 10, "changed": 2}))
    (record / "sft-shuffled").mkdir()
    (record / "sft-shuffled" / "sft_summary.json").write_text(json.dumps(
        {"steps": 1017, "train_loss": 0.16, "validation_losses": [0.19, 0.13]}))
    base = {"suite": "heldout", "policy": "hf:m", "failure": "step limit", "actions": [],
            "kind": "new-world", "world": "w", "task": "t", "steps": 3}
    rows = [{**base, "key": "a", "intent": "Book it, pick the date 2027-04-21.", "success": True},
            {**base, "key": "b", "intent": "Track the price.", "success": False}]
    (record / "eval" / "heldout-sft-shuffled.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows))
    doc = tmp_path / "page.md"
    write_page(record, doc)
    page = doc.read_text()
    assert "2 of 10 training chats" in page
    assert "1017 optimiser steps, train loss 0.160, validation loss per epoch 0.190, 0.130" in page
    assert "`--vary-dates`" in page and "reply) (not run yet)" in page  # its run comes later
    new_row = next(line for line in page.splitlines()
                   if line.startswith("| SFT, ids shuffled, thoughts name each click | 2 |"))
    assert "50.0%" in new_row
    dates = [line for line in page.splitlines() if "| thoughts name each click | 1 |" in line]
    assert len(dates) == 1 and "100.0%" in dates[0]
    assert "| the same, grounded by name, misread thoughts not trusted | not run yet |" in page
    # the old export's rows come from name_finding.py's committed record
    assert "| SFT, ids shuffled, old thoughts | 53 | 11.3%" in page
    assert "| webworld train sft |" not in page and "| sft sft-shuffled | 12 |" in page
