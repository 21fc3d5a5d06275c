"""Results files and their statistics: Wilson and Newcombe intervals, failure reasons, a
results file cut off mid-line by a kill."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from webworld.errors import UsageError
from webworld.eval.results import (
    ResultsFile,
    compare,
    failure_reason,
    newcombe,
    rates,
    read_results,
    sign_test,
    wilson,
)


def test_wilson_interval_matches_known_values() -> None:
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(10, 10)
    assert lo == pytest.approx(0.7225, abs=1e-4) and hi == 1.0
    lo, hi = wilson(50, 100)
    assert (lo, hi) == (pytest.approx(0.4038, abs=1e-4), pytest.approx(0.5962, abs=1e-4))
    assert wilson(0, 0) == (0.0, 1.0)


def test_newcombe_difference_interval() -> None:
    d, lo, hi = newcombe((56, 70), (48, 80))  # Newcombe (1998), example (a): 0.8 vs 0.6
    assert d == pytest.approx(-0.2) and lo == pytest.approx(-0.3339, abs=2e-3)
    assert hi == pytest.approx(-0.0524, abs=2e-3)
    d, lo, hi = newcombe((5, 10), (5, 10))
    assert d == 0 and lo < 0 < hi


@pytest.mark.parametrize("kwargs, reason", [
    ({"success": True, "terminated": True, "truncated": False, "error_codes": []}, ""),
    ({"success": False, "terminated": True, "truncated": False, "error_codes": [""]}, "wrong page"),
    ({"success": False, "terminated": True, "truncated": False, "error_codes": [""],
      "miniwob": True}, "wrong answer"),
    ({"success": False, "terminated": False, "truncated": True,
      "error_codes": ["syntax", "syntax", ""]}, "unparsable reply"),
    ({"success": False, "terminated": False, "truncated": True,
      "error_codes": ["unknown_id", "", "unknown_id", ""]}, "unknown id"),
    ({"success": False, "terminated": False, "truncated": True,
      "error_codes": ["covered", "covered"]}, "invalid action"),
    ({"success": False, "terminated": False, "truncated": True,
      "error_codes": ["syntax", "", ""]}, "step limit"),
    ({"success": False, "terminated": False, "truncated": False, "error_codes": [],
      "env_error": "server gone"}, "env error"),
])
def test_failure_reasons(kwargs: dict, reason: str) -> None:
    assert failure_reason(**kwargs) == reason


def _record(key: str, success: bool, suite: str = "s", task: str = "t") -> dict:
    return {"key": key, "suite": suite, "task": task, "world": "w", "archetype": "shop",
            "kind": "", "success": success, "steps": 3, "time_s": 1.0, "failure": "",
            "errors": [], "policy": "p"}


def test_a_line_cut_by_a_kill_is_dropped_and_the_file_repaired(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    results = ResultsFile(path)
    results.append(_record("a", True))
    results.append(_record("b", False))
    results.close()
    with path.open("a") as handle:
        handle.write('{"key": "c", "suc')  # killed mid-write
    assert [r["key"] for r in read_results(path)] == ["a", "b"]
    assert path.read_text().endswith("\n") and path.read_text().count("\n") == 2
    path.write_text('{"key": "a"}\nnot json\n')
    with pytest.raises(UsageError, match="line 2 is not JSON"):
        read_results(path)


def test_rates_and_compare_on_shared_episodes() -> None:
    a = [_record(f"k{i}", i < 2) for i in range(10)]
    b = [_record(f"k{i}", i < 9) for i in range(10)] + [_record("only-b", True)]
    (rate,) = rates(a, lambda r: r["suite"])
    assert (rate.episodes, rate.successes, rate.shown()) == (10, 2, "20.0% [5.7, 51.0]")
    overall = compare(a, b)[0]
    assert overall.group == "all" and overall.b.episodes == 10  # only-b is not compared
    d, lo, hi = overall.difference
    assert d == pytest.approx(0.7) and lo > 0
    # paired: b alone solved k2..k8, a alone none; p = 2 / 2**7
    assert (overall.won, overall.lost, overall.sign_test) == (7, 0, pytest.approx(2 / 128))
    flipped = compare(b, a)[0]
    assert (flipped.won, flipped.lost, flipped.sign_test) == (0, 7, pytest.approx(2 / 128))
    with pytest.raises(UsageError, match="share no episode"):
        compare(a, [_record("x", True)])
    assert json.loads(json.dumps(a[0]))["key"] == "k0"


def test_the_sign_test_is_the_exact_two_sided_binomial() -> None:
    assert sign_test(0, 0) == 1.0 and sign_test(3, 3) == 1.0
    assert sign_test(5, 1) == pytest.approx(2 * 7 / 64)  # 2 * P(X <= 1), X ~ B(6, 1/2)
    assert sign_test(1, 5) == sign_test(5, 1)


def test_one_run_writes_a_results_file_at_a_time(tmp_path: Path) -> None:
    """A second run on the same file is refused while the first lives, allowed once it died."""
    path = tmp_path / "eval.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from webworld.eval.results import ResultsFile; f = ResultsFile(Path(sys.argv[1])); "
         "print('held', flush=True); time.sleep(60)", str(path)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(UsageError, match="another run is writing"):
            ResultsFile(path)
    finally:
        holder.kill()
        holder.wait()
    ResultsFile(path).close()  # the kernel let the lock go with the killed run
