"""`webworld eval turns`: per-turn accuracy of a model on recorded turns, against a real
OpenAI-compatible endpoint on loopback that answers some turns as recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.agents.scripted_llm import Reply, Script, create_scripted_app
from webworld.cli.main import app
from webworld.data.prompting import assistant_message, prompt_messages
from webworld.eval.turns import turn_kind
from webworld.serve.runner import LiveServer

runner = CliRunner()

PAGE = ("RootWebArea 'Shop'\n[1] button 'Accept all cookies'\n[2] link 'Studios'\n"
        "[3] link 'Hot desks'\n[4] textbox 'Email', value=''\n[5] combobox 'Size', value='S'")
TASK = "Book a room in the Studios section for ada@example.com in size M."


def _chat(action: str, turn: int = 0) -> list[dict[str, str]]:
    return [*prompt_messages(TASK, PAGE, f"https://shop.webworld.test/?turn={turn}", []),
            {"role": "assistant", "content": assistant_message("Next.", action)}]


def test_a_turn_is_split_by_what_its_answer_needs() -> None:
    user = _chat("click('1')")[1]["content"]
    assert turn_kind(user, "click('2')") == "named"        # 'Studios' is in the task
    assert turn_kind(user, "click('3')") == "unnamed"      # 'Hot desks' is not
    assert turn_kind(user, "click('1')") == "unnamed"      # the cookie banner
    assert turn_kind(user, "fill('4', 'ada@example.com')") == "value"
    assert turn_kind(user, "select_option('5', 'M')") == "value"


RECORDED = ["click('2')", "click('1')", "fill('4', 'ada@example.com')", "click('3')",
            "select_option('5', 'M')", "click('2')"]


def _scripted_scores(tmp_path: Path, *flags: str) -> tuple[dict, str]:
    """The scores and output of `eval turns` on :data:`RECORDED`'s turns, an endpoint answering
    by the recorded action: right, the id of a line the thought does not name, a wrong value
    or no action."""
    recorded = RECORDED
    data = tmp_path / "validation.jsonl"
    chats = [_chat(a, i) for i, a in enumerate(recorded)]
    data.write_text("".join(json.dumps({"messages": c}) + "\n" for c in chats))
    # the endpoint answers by the recorded action: right, wrong id, wrong value or no action
    answers = {"click('2')": "Thought: go\nAction: click('2')",
               "click('1')": "Thought: I click “Accept all cookies”.\nAction: click('3')",
               "fill('4', 'ada@example.com')": "Thought: type\nAction: fill('4', 'ada')",
               "click('3')": "I do not know",
               "select_option('5', 'M')": "Thought: pick\nAction: select_option('5', 'M')"}
    by_prompt = {c[1]["content"]: answers[a] for c, a in zip(chats, recorded, strict=True)}
    script = Script(responder=lambda body: Reply(by_prompt[body["messages"][-1]["content"]]))
    config = tmp_path / "webworld.toml"
    config.write_text(f'[llm]\nmax_retries = 0\ncache_dir = "{tmp_path / "cache"}"\n')
    with LiveServer(create_scripted_app(script)) as server:
        result = runner.invoke(app, ["eval", "turns", str(data), "--policy", "openai:scripted-model",
                                     "--out", str(tmp_path / "scores.json"),
                                     "--llm-base-url", f"{server.url}/v1", "--llm-api-key", "k",
                                     "--llm-config", str(config), *flags])
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / "scores.json").read_text()), result.output


def test_the_model_s_answers_are_scored_against_the_recorded_actions(tmp_path: Path) -> None:
    scores, output = _scripted_scores(tmp_path)
    assert (scores["turns"], scores["correct"], scores["well_formed"]) == (6, 3, 5)
    assert scores["by_kind"] == {"value": [1, 2], "named": [2, 2], "unnamed": [0, 2]}
    assert "answered as recorded" in output and "grounding" not in output
    # each miss names the task and both elements, so a reader sees what was confused
    misses = {m["recorded"]: m for m in scores["misses"]}
    assert sorted(misses) == ["click('1')", "click('3')", "fill('4', 'ada@example.com')"]
    assert misses["click('1')"]["answered"] == "click('3')"
    assert misses["click('1')"]["recorded_element"] == "[1] button 'Accept all cookies'"
    assert misses["click('1')"]["answered_element"] == "[3] link 'Hot desks'"
    assert misses["click('3')"]["answered"] is None and TASK in misses["click('3')"]["task"]
    # the banner was named in the thought and another element's id acted on; a wrong value on
    # the right element is not such a miss
    assert misses["click('1')"]["thought"] == "I click “Accept all cookies”."
    assert scores["right_thought_wrong_id"] == 1
    assert "thought names the right element (the id acted on is another's): 1/3" in output
    # how far down the page the element acted on is from the recorded one: lines, not ids
    assert misses["click('1')"]["lines_apart"] == 2 and misses["click('3')"]["lines_apart"] is None
    assert scores["right_thought_next_line"] == 0


def test_grounding_by_name_acts_on_the_element_the_thought_quotes(tmp_path: Path) -> None:
    scores, output = _scripted_scores(tmp_path, "--study", "ground_names")
    # the cookie banner's turn, named in the thought and acted on by a neighbour's id, is won;
    # the wrong value and the reply without an action stay misses
    assert (scores["turns"], scores["correct"], scores["well_formed"]) == (6, 4, 5)
    assert scores["ground_names"] is True and scores["grounding_moved"] == 1
    assert sorted(m["recorded"] for m in scores["misses"]) == ["click('3')",
                                                               "fill('4', 'ada@example.com')"]
    assert "grounding by name moved 1 of 6 actions" in output


def test_lines_apart_counts_page_lines_whatever_the_ids() -> None:
    from webworld.eval.turns import lines_apart

    user = _chat("click('2')")[1]["content"].replace("[2] ", "[40] ").replace("[3] ", "[7] ")
    assert lines_apart(user, "[40] link 'Studios'", "[7] link 'Hot desks'") == 1
    assert lines_apart(user, "[7] link 'Hot desks'", "[1] button 'Accept all cookies'") == 2
    assert lines_apart(user, "[7] link 'Hot desks'", None) is None


def test_a_file_that_is_not_an_sft_export_is_named_with_its_line(tmp_path: Path) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text(json.dumps({"messages": _chat("click('1')")}) + "\n" + '{"text": "hi"}\n')
    result = runner.invoke(app, ["eval", "turns", str(data), "--policy", "hf:/no/such/model"])
    assert result.exit_code != 0
    assert "bad.jsonl" in result.output and "line 2" in result.output
    assert "Traceback" not in result.output


def _reader(body: dict) -> Reply:  # finds 'Studios', the task's section, on the page it is shown
    page = body["messages"][-1]["content"].split("Page:")[1]
    line = next(x for x in page.splitlines() if "'Studios'" in x)
    return Reply(f"Thought: go\nAction: click('{line.strip()[1:].split(']')[0]}')")


def _rememberer(body: dict) -> Reply:  # answers the id, and place, it saw in training
    return Reply("Thought: go\nAction: click('2')")


def _correct_with(switch: str, tmp_path: Path) -> dict[tuple[str, bool], int]:
    """Turns each model answers as recorded, asked as exported and with ``--study switch``."""
    data = tmp_path / "validation.jsonl"
    data.write_text("".join(json.dumps({"messages": _chat("click('2')", i)}) + "\n"
                            for i in range(6)))
    config = tmp_path / "webworld.toml"
    config.write_text(f'[llm]\nmax_retries = 0\ncache_dir = "{tmp_path / "cache"}"\n')
    correct = {}
    for name, responder in (("reader", _reader), ("rememberer", _rememberer)):
        for changed in (False, True):
            out = tmp_path / f"{name}-{changed}.json"
            with LiveServer(create_scripted_app(Script(responder=responder, models=[name]))) as server:
                result = runner.invoke(app, [
                    "eval", "turns", str(data), "--policy", f"openai:{name}", "--out", str(out),
                    "--llm-base-url", f"{server.url}/v1", "--llm-api-key", "k",
                    "--llm-config", str(config), *(["--study", switch] if changed else [])])
            assert result.exit_code == 0, result.output
            scores = json.loads(out.read_text())
            assert scores[switch] is changed
            correct[name, changed] = scores["correct"]
    return correct


@pytest.mark.parametrize("switch", ["relabel_ids", "shuffle_ids"])
def test_renumbered_ids_tell_a_model_that_reads_from_one_that_remembers(
        switch: str, tmp_path: Path) -> None:
    correct = _correct_with(switch, tmp_path)
    assert correct["reader", False] == correct["reader", True] == correct["rememberer", False] == 6
    assert correct["rememberer", True] < 3  # '2' is rarely Studios' number once renumbered


def test_moved_choices_tell_a_model_that_reads_from_one_that_picks_a_place(tmp_path: Path) -> None:
    correct = _correct_with("move_choices", tmp_path)
    assert correct["reader", False] == correct["reader", True] == correct["rememberer", False] == 6
    assert correct["rememberer", True] == 0  # 'Studios' moved to where 'Hot desks' stood


def test_a_model_the_endpoint_does_not_serve_is_an_error_not_a_zero(tmp_path: Path) -> None:
    data = tmp_path / "validation.jsonl"
    data.write_text(json.dumps({"messages": _chat("click('2')")}) + "\n")
    config = tmp_path / "webworld.toml"
    config.write_text(f'[llm]\nmax_retries = 0\ncache_dir = "{tmp_path / "cache"}"\n')
    with LiveServer(create_scripted_app(Script())) as server:
        result = runner.invoke(app, ["eval", "turns", str(data), "--policy", "openai:no-such-model",
                                     "--out", str(tmp_path / "scores.json"),
                                     "--llm-base-url", f"{server.url}/v1", "--llm-api-key", "k",
                                     "--llm-config", str(config)])
    assert result.exit_code != 0 and "answered no turn" in result.output
    assert "no-such-model" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "scores.json").exists()
