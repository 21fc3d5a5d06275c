"""Imported AutoWebWorld worlds in real Chromium: every candidate of the fixtures verifies,
and `webworld eval --suite autowebworld:DIR` scores the oracle 100% on them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from webworld.cli.main import app
from webworld.eval.results import read_results

FIXTURES = Path(__file__).parent / "fixtures"


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.is_file() else []


@pytest.mark.slow  # ~3.5 min: every candidate of two imported worlds in Chromium
def test_imported_worlds_verify_and_the_oracle_scores_100(tmp_path: Path) -> None:
    src = tmp_path / "aww"
    for name, fixture in (("market", "market_fsm.json"), ("chat", "tools_fsm.json")):
        (src / name / "web").mkdir(parents=True)
        shutil.copy(FIXTURES / fixture, src / name / "web" / "fsm.json")
    out = tmp_path / "oracle.jsonl"
    res = CliRunner().invoke(app, ["eval", "--policy", "oracle", "--suite", f"autowebworld:{src}",
                                   "-n", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    (built,) = [p for p in (src / ".webworld").iterdir() if not p.name.startswith(".")]
    for world in ("aww_gadgetry", "aww_chatter"):
        candidates = _lines(built / "trajectories" / world / "candidates.jsonl")
        verified = _lines(built / "trajectories" / world / "verified.jsonl")
        assert candidates and len(verified) == len(candidates), \
            _lines(built / "trajectories" / world / "failures.jsonl")
    records = read_results(out)
    assert {r["world"] for r in records} == {"aww_gadgetry", "aww_chatter"}
    assert len(records) == 5 and all(r["success"] for r in records)  # one per task
    assert "100.0%" in res.output
    # a second run reuses the verified build
    again = CliRunner().invoke(app, ["eval", "--policy", "oracle", "--suite",
                                     f"autowebworld:{src}", "-n", "1",
                                     "--out", str(tmp_path / "again.jsonl")])
    assert again.exit_code == 0 and len(list((src / ".webworld").iterdir())) == 1
