"""The spec pipeline under fuzzing: 120 mutated copies of the shipped specs
(scripts/fuzz_specs.py runs 10,000), truncated and non-UTF-8 files and a 50 MB file never
raise an uncaught exception, never hang, and every rejection names its place."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.spec import fuzzing
from tests.spec.fuzzing import KINDS, big_case, make_case, run_case
from webworld.cli.main import app

CASES = 120


@pytest.fixture
def small_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """Enormous lists of 300 items and BFS budgets of 1,500 states here (the script's are
    2,000 and 5,000): the same code paths, in a fraction of the time."""
    monkeypatch.setattr(fuzzing, "ENORMOUS", 300)
    monkeypatch.setattr(fuzzing, "STATE_BUDGET", 1_500)


def test_mutated_specs_end_as_located_rejections_findings_or_valid(tmp_path: Path,
                                                                   small_lists: None) -> None:
    outcomes: Counter = Counter()
    for index in range(CASES):
        case = make_case(7, index)
        path = tmp_path / f"case-{index}.json"
        path.write_bytes(case.data)
        result = run_case(path, budget_s=60)
        assert result.outcome in ("rejected", "invalid", "valid"), (case.mutation, result)
        outcomes[case.mutation, result.outcome] += 1
    assert {kind for kind, _ in outcomes} == set(KINDS)  # every kind of damage ran
    ended = Counter(outcome for _, outcome in outcomes.elements())
    assert ended["rejected"] and ended["invalid"] and ended["valid"], ended
    assert {o for k, o in outcomes if k in ("truncated", "non-utf8")} == {"rejected"}


def test_cases_are_the_same_bytes_for_the_same_seed() -> None:
    assert [make_case(3, i).data for i in range(30)] == [make_case(3, i).data for i in range(30)]
    assert make_case(3, 5).data != make_case(4, 5).data


@pytest.mark.parametrize(("name", "data", "words"), [
    ("truncated", make_case(0, KINDS.index("truncated")).data, ["malformed JSON at line"]),
    ("not-utf8", b'{"id": "\xff\xfe"}', ["not UTF-8", "byte"]),
    ("empty", b"", ["malformed JSON at line 1"]),
])
def test_cli_gives_one_located_line_for_broken_files(tmp_path: Path, name: str, data: bytes,
                                                     words: list[str]) -> None:
    path = tmp_path / f"{name}.json"
    path.write_bytes(data)
    for command in ("validate", "improve", "explore"):
        result = CliRunner().invoke(app, [command, str(path)])
        assert result.exit_code == 2, (command, result.output)
        assert "Traceback" not in result.output and str(path) in result.output
        assert all(w in result.output for w in words), (command, result.output)


def test_a_50_mb_spec_is_read_and_checked_within_budget(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(big_case(50))
    assert path.stat().st_size > 50 << 20
    result = run_case(path, budget_s=120)
    assert result.outcome == "valid", result
