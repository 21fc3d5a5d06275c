"""`webworld eval diverge`: where failed episodes first leave the oracle's path, each kind."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from webworld.cli.main import app
from webworld.eval.diverge import KINDS, Acted, acted, divergences, summary

ORACLE = ["hover('1')  [button 'Browse categories']", "click('4')  [menuitem 'Europe']",
          "click('9')  [button 'Boston to Chicago']", "select_option('3', 'Monthly')  "
          "[combobox 'Frequency']", "click('5')  [button 'Track price']"]
INTENT = "Set a price alert for Boston to Chicago: browse the Europe section, choose Monthly."


def episode(key: str, actions: list[str], success: bool = False) -> dict:
    return {"key": key, "success": success, "intent": INTENT, "actions": actions}


def oracle_run(keys: list[str]) -> list[dict]:
    return [episode(k, ORACLE, True) for k in keys]


def test_an_entry_reads_as_verb_value_and_element_as_shown() -> None:
    assert acted("select_option('3', 'Monthly')  [combobox 'Frequency']") == \
        Acted("select_option", "Monthly", "combobox", "Frequency")
    assert acted("click('7')  [button 'It\\'s mine']") == Acted("click", None, "button", "It's mine")
    assert acted("click('99')") == Acted("click", None, None, None)  # an id the page lacked
    assert acted("Thought: no idea").role is None


def test_each_first_difference_lands_in_its_kind() -> None:
    cases = {
        "unparsable": ["I would click"],
        "value": [*ORACLE[:3], "select_option('3', 'Weekly')  [combobox 'Frequency']"],
        "action": ["click('1')  [button 'Browse categories']"],
        "named": [ORACLE[0], "click('3')  [menuitem 'North America']"],
        "flow": [*ORACLE[:4], "click('6')  [button 'Select this flight']"],
        "other role": [ORACLE[0], "click('2')  [link 'Home']"],
        "whole path": [*ORACLE, "click('5')  [button 'Track price']"],
        "id moved only": [ORACLE[0], "click('8')  [menuitem 'Europe']",
                          "click('2')  [button 'Sydney to Auckland']"],
    }
    results = [episode(k, a) for k, a in cases.items()] + [episode("won", ORACLE, True)]
    found = {d.key: d for d in divergences(results, oracle_run([*cases, "won"]))}
    assert "won" not in found  # only failures
    assert {k: d.kind for k, d in found.items()} == {
        "unparsable": KINDS[0], "value": KINDS[1], "action": KINDS[2], "named": KINDS[3],
        "flow": KINDS[5], "other role": KINDS[6], "whole path": KINDS[7],
        "id moved only": KINDS[3]}
    assert found["id moved only"].step == 3  # a new id for the same element is no difference
    assert str(found["named"].want) == "click menuitem 'Europe'"
    kinds, pairs = summary(list(found.values()))
    assert kinds[KINDS[3]] == 2
    assert pairs[("click menuitem 'Europe'", "click menuitem 'North America'")] == 1


def test_a_sibling_the_task_names_when_the_right_one_is_not() -> None:
    oracle = [episode("k", ["click('1')  [button 'Track price']"], True)]
    wrong = [episode("k", ["click('2')  [button 'Boston to Chicago']"])]
    assert divergences(wrong, oracle)[0].kind == KINDS[4]


def test_the_command_prints_the_kinds_and_refuses_unrelated_files(tmp_path: Path) -> None:
    def write(name: str, records: list[dict]) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return path

    results = write("policy.jsonl", [episode("a", [ORACLE[0], "click('3')  [menuitem 'Asia']"])])
    oracle = write("oracle.jsonl", oracle_run(["a"]))
    done = CliRunner().invoke(app, ["eval", "diverge", str(results), str(oracle)])
    assert done.exit_code == 0, done.output
    assert "a sibling, the task naming the right one │ 1" in done.output
    assert "click menuitem 'Asia'" in done.output
    unrelated = write("other.jsonl", oracle_run(["b"]))
    done = CliRunner().invoke(app, ["eval", "diverge", str(results), str(unrelated)])
    assert done.exit_code != 0 and "share no failed episode" in done.output
    assert "Traceback" not in done.output
    done = CliRunner().invoke(app, ["eval", "diverge", str(results), str(tmp_path / "typo.jsonl")])
    assert done.exit_code != 0 and "typo.jsonl: no such results file" in done.output
