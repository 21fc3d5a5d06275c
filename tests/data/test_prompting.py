"""The policy's input and output format (the action grammar: tests/browser/test_actions.py)."""

from __future__ import annotations

import re

import pytest
from trl.data_utils import is_conversational

from tests.browser.test_actions import ACTIONS
from webworld.data.prompting import (
    ACTION_ARITY,
    SYSTEM_PROMPT,
    assistant_message,
    parse_call,
    parse_reply,
    prompt_messages,
    step_messages,
    user_message,
)


def test_system_prompt_documents_every_action_and_key() -> None:
    for name in ACTION_ARITY:
        assert f"{name}(E" in SYSTEM_PROMPT
    examples = re.findall(r"e\.g\. (\w+\(.*\))$", SYSTEM_PROMPT, re.M)
    assert len(examples) == 5 and all(parse_call(e).role for e in examples)  # by name, all valid
    assert parse_call("click('12')") is not None and "'12'" in SYSTEM_PROMPT  # ids still taught
    assert "Thought:" in SYSTEM_PROMPT and "Action:" in SYSTEM_PROMPT
    assert "Enter" in SYSTEM_PROMPT and "Escape" in SYSTEM_PROMPT


def test_user_message_has_task_url_history_and_page() -> None:
    text = user_message("Buy Dune", "[1] button 'Go'", "http://x/page/home",
                        ["fill('7', 'dune')", "press('7', 'Enter')"])
    assert text.splitlines() == [
        "Task: Buy Dune", "URL: http://x/page/home", "Previous actions:",
        "1. fill('7', 'dune')", "2. press('7', 'Enter')", "Page:", "[1] button 'Go'"]
    assert "none yet" in user_message("t", "p", "u", [])
    cut = user_message("t", "x" * 100, "u", [], max_observation_chars=10)
    assert "x" * 11 not in cut and cut.endswith("(page cut)")


def test_user_message_names_a_failed_action_only_when_there_is_one() -> None:
    plain = user_message("t", "p", "u", ["click('1')"])
    assert "failed" not in plain
    failed = user_message("t", "p", "u", ["click('1')"], error="element 1 is\ncovered")
    assert "Last action failed: element 1 is covered\nPage:" in failed


def test_assistant_message_is_two_lines() -> None:
    assert assistant_message("I go\non.", "click('1')") == "Thought: I go on.\nAction: click('1')"


@pytest.mark.parametrize("action", ACTIONS)
def test_an_assistant_message_reads_back_as_its_action(action: str) -> None:
    assert parse_reply(assistant_message("Because.", action)) == action


def test_messages_roles_and_conversational_format() -> None:
    msgs = step_messages("Buy Dune", "[1] link 'Dune'", "http://x", [], "I open it.", "click('1')")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant"]
    assert msgs[0]["content"] == SYSTEM_PROMPT
    assert msgs[:2] == prompt_messages("Buy Dune", "[1] link 'Dune'", "http://x", [])
    assert msgs[2]["content"] == "Thought: I open it.\nAction: click('1')"
    assert is_conversational({"messages": msgs})


def test_a_history_line_names_the_element_as_the_page_showed_it() -> None:
    from webworld.data.prompting import history_entry

    page = ("[3] link 'Home'\n  [4] button 'Accept all cookies'\n"
            "[7] textbox 'Search' value=''\n[9] checkbox '' unchecked\n"
            f"[12] link '{'A very long name ' * 6}'")
    assert history_entry("click('4')", page) == "click('4')  [button 'Accept all cookies']"
    assert history_entry("fill('7', 'tea')", page) == "fill('7', 'tea')  [textbox 'Search']"
    assert history_entry("check('9')", page) == "check('9')  [checkbox]"
    assert history_entry("click('12')", page).endswith("...']")
    assert len(history_entry("click('12')", page)) < 90
    for unlabelled in ("click('44')", "clik('4')", "Action: nothing", "noop()"):
        assert history_entry(unlabelled, page) == unlabelled  # no element on the page
    assert history_entry("click('4')", "[14] button 'x'") == "click('4')"  # '4' is not '14'

