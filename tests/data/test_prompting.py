"""The policy's input and output format, and reading actions back without eval."""

from __future__ import annotations

import pytest
from trl.data_utils import is_conversational

from webworld.browser import actions
from webworld.data.prompting import (
    ACTION_ARITY,
    SYSTEM_PROMPT,
    ActionCall,
    assistant_message,
    format_action,
    parse_action,
    parse_call,
    prompt_messages,
    step_messages,
    user_message,
)

ACTIONS = ["click('12')", "fill('7', 'tea')", "press('7', 'Enter')",
           "select_option('9', 'Paperback')", "hover('3')", "check('4')", "uncheck('4')",
           "drag('15', '120')"]


def test_system_prompt_documents_every_action() -> None:
    for name in ACTION_ARITY:
        assert f"{name}('bid'" in SYSTEM_PROMPT
    assert "Thought:" in SYSTEM_PROMPT and "Action:" in SYSTEM_PROMPT


def test_user_message_has_task_url_history_and_page() -> None:
    text = user_message("Buy Dune", "[1] button 'Go'", "http://x/page/home",
                        ["fill('7', 'dune')", "press('7', 'Enter')"])
    assert text.splitlines() == [
        "Task: Buy Dune", "URL: http://x/page/home", "Previous actions:",
        "1. fill('7', 'dune')", "2. press('7', 'Enter')", "Page:", "[1] button 'Go'"]
    assert "none yet" in user_message("t", "p", "u", [])
    cut = user_message("t", "x" * 100, "u", [], max_observation_chars=10)
    assert "x" * 11 not in cut and cut.endswith("(page cut)")


def test_assistant_message_is_two_lines() -> None:
    assert assistant_message("I go\non.", "click('1')") == "Thought: I go on.\nAction: click('1')"


@pytest.mark.parametrize("action", ACTIONS)
def test_round_trip(action: str) -> None:
    assert parse_action(assistant_message("Because.", action)) == action
    assert str(parse_call(action)) == action


@pytest.mark.parametrize("reply, expected", [
    ("Thought: ok\nAction: click('12')", "click('12')"),
    ("thought: ok\n**Action:** `fill('7', \"it's\")`", "fill('7', 'it\\'s')"),
    ("Action: click(12)", "click('12')"),                       # bare integer id
    ("Action: drag('4', 3)", "drag('4', '3')"),
    ("I will do it.\nclick('5')", "click('5')"),                # no Action line: a bare call
    ("Action: click('1')\nAction: hover('2')", "hover('2')"),   # the last one counts
    ("Action: nonsense\nAction: check('3')", "check('3')"),
    ("Action:   select_option( '9' , 'A, B' )  ", "select_option('9', 'A, B')"),
])
def test_parse_action_accepts(reply: str, expected: str) -> None:
    assert parse_action(reply) == expected


@pytest.mark.parametrize("reply", [
    "", "Thought: nothing to do", "Action: click('12', 'x')", "Action: fill('7')",
    "Action: open('/etc/passwd')", "Action: __import__('os').system('true')",
    "Action: click(bid)", "Action: click('1' + '2')", "Action: click(bid='1')",
    "Action: click('')", "Action: click(True)", "Action: click('1' '2')", "Action: Click('1')",
    "Action: click('1'); click('2')",
])
def test_parse_action_refuses(reply: str) -> None:
    assert parse_action(reply) is None


def test_parse_never_evaluates(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    def boom(*a, **k):
        raise AssertionError("evaluated")
    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    assert parse_action("Action: fill('1', \"__import__('os')\")") == "fill('1', '__import__(\\'os\\')')"


def test_action_call() -> None:
    call = parse_call("fill('7', 'tea')")
    assert call == ActionCall("fill", ("7", "tea")) and call.bid == "7"
    assert format_action("fill", "7", "it's") == "fill('7', 'it\\'s')"
    assert parse_call(format_action("fill", "7", "a'b\"c\\")).args == ("7", "a'b\"c\\")


def test_messages_roles_and_conversational_format() -> None:
    msgs = step_messages("Buy Dune", "[1] link 'Dune'", "http://x", [], "I open it.", "click('1')")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant"]
    assert msgs[0]["content"] == SYSTEM_PROMPT
    assert msgs[:2] == prompt_messages("Buy Dune", "[1] link 'Dune'", "http://x", [])
    assert msgs[2]["content"] == "Thought: I open it.\nAction: click('1')"
    assert is_conversational({"messages": msgs})


@pytest.mark.parametrize("text", [
    *ACTIONS, "click(12)", "fill('7', \"it's\")", "fill('7', 'a\\\\b \\'q\\'')", "drag('4', 3)",
    "click('1', )", "click('1' '2')", "fill('7')", "scroll('1')", "click(bid)", "click('1') + 1",
])
def test_same_grammar_as_the_browser(text: str) -> None:
    """prompting mirrors webworld.browser.actions (which imports Playwright): they must agree."""
    try:
        theirs = actions.parse_action(text)
    except actions.ActionSyntaxError:
        theirs = None
    ours = parse_call(text)
    if theirs is None or ours is None:
        assert theirs is None and ours is None, (theirs, ours)
    else:
        assert (ours.name, ours.args) == (theirs.name, (theirs.bid,) + (
            (theirs.arg,) if theirs.arg is not None else ()))
        assert str(ours) == str(theirs)
