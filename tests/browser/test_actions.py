"""The one action language: reading actions (never by eval) and the rules on elements."""

from __future__ import annotations

import re

import pytest

from webworld.browser.actions import (
    ACTION_ARITY,
    ActionRefused,
    ActionSyntaxError,
    BrowserAction,
    check_action,
    format_action,
    parse_action,
    parse_call,
    parse_reply,
    read_reply,
    resolve_target,
)
from webworld.browser.observe import named_form

ACTIONS = ["click('12')", "fill('7', 'tea')", "press('7', 'Enter')",
           "select_option('9', 'Paperback')", "hover('3')", "check('4')", "uncheck('4')",
           "drag('15', '120')"]


@pytest.mark.parametrize("action", ACTIONS)
def test_round_trip(action: str) -> None:
    parsed = parse_action(action)
    assert str(parsed) == action and parsed.name in ACTION_ARITY


@pytest.mark.parametrize("reply, expected", [
    ("Thought: ok\nAction: click('12')", "click('12')"),
    ("thought: ok\n**Action:** `fill('7', \"it's\")`", "fill('7', 'it\\'s')"),
    ("Action: click(12)", "click('12')"),                       # bare integer id
    ("Action: drag('4', 3)", "drag('4', '3')"),
    ("I will do it.\nclick('5')", "click('5')"),                # no Action line: a bare call
    ("Action: click('1')\nAction: hover('2')", "hover('2')"),   # the last one counts
    ("Action: nonsense\nAction: check('3')", "check('3')"),
    ("Action:   select_option( '9' , 'A, B' )  ", "select_option('9', 'A, B')"),
    ("click('1');", "click('1')"),
])
def test_replies_are_read(reply: str, expected: str) -> None:
    assert parse_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    "", "Thought: nothing to do", "Action: click('12', 'x')", "Action: fill('7')",
    "Action: open('/etc/passwd')", "Action: __import__('os').system('true')",
    "Action: click(bid)", "Action: click('1' + '2')", "Action: click(bid='1')",
    "Action: click('')", "Action: click(True)", "Action: click('1' '2')", "Action: Click('1')",
    "Action: click('1'); click('2')",
])
def test_replies_are_refused(reply: str) -> None:
    assert parse_reply(reply) is None
    with pytest.raises(ActionSyntaxError):
        read_reply(reply)


@pytest.mark.parametrize("text, reason", [
    ("clik('1')", "unknown action 'clik'"),
    ("click('1', '2')", "click takes 1 argument(s), got 2"),
    ("click(x)", "cannot read the arguments"),
    ("click('')", "needs an element id"),
    ("go somewhere", "not an action"),
])
def test_syntax_errors_say_what_is_wrong(text: str, reason: str) -> None:
    with pytest.raises(ActionSyntaxError, match=re.escape(reason)):
        parse_action(text)


def test_never_evaluates(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    def boom(*a, **k):
        raise AssertionError("evaluated")
    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    assert parse_reply("Action: fill('1', \"__import__('os')\")") == "fill('1', '__import__(\\'os\\')')"


def test_quoting() -> None:
    assert parse_call("fill('7', 'tea')") == BrowserAction("fill", "7", "tea")
    assert format_action("fill", "7", "it's") == "fill('7', 'it\\'s')"
    assert parse_call(format_action("fill", "7", "a'b\"c\\")).args == ("7", "a'b\"c\\")


# --- rules on the element --------------------------------------------------------------------

BUTTON = {"bid": "1", "role": "button", "name": "Pay", "tag": "BUTTON", "type": "submit"}
FIELD = {"bid": "2", "role": "textbox", "name": "Name", "tag": "INPUT", "type": "text"}
LIST = {"bid": "3", "role": "combobox", "name": "Size", "tag": "SELECT",
        "options": [{"text": "Choose…", "disabled": True}, {"text": "Small", "disabled": False}]}
SLIDER = {"bid": "4", "role": "slider", "name": "Guests", "tag": "INPUT", "type": "range",
          "min": "0", "max": "10", "step": "5"}
RADIO = {"bid": "5", "role": "radio", "name": "Yes", "tag": "INPUT", "type": "radio"}


@pytest.mark.parametrize("action, node, code, words", [
    ("click('9')", None, "unknown_id", "no element with id '9'"),
    ("fill('1', 'x')", BUTTON, "wrong_element", "fill needs a text field; element 1 (button 'Pay')"),
    ("click('1')", {**BUTTON, "disabled": True}, "disabled", "element 1 (button 'Pay') is disabled"),
    ("fill('2', 'x')", {**FIELD, "readonly": True}, "wrong_element", "read-only"),
    ("fill('2', 'a\tb')", FIELD, "bad_value", "one line"),
    ("fill('2', '" + "x" * 1001 + "')", FIELD, "bad_value", "at most 1000"),
    ("press('2', 'Tab')", FIELD, "bad_value", "Enter or Escape"),
    ("press('3', 'Enter')", LIST, "wrong_element", "text field, button or link"),
    ("click('3')", LIST, "wrong_element", "use select_option"),
    ("select_option('3', 'Huge')", LIST, "bad_value", "no option 'Huge'; its options are 'Small'"),
    ("select_option('3', 'Choose…')", LIST, "bad_value", "cannot be chosen"),
    ("select_option('2', 'Small')", FIELD, "wrong_element", "needs a list"),
    ("drag('4', '7')", SLIDER, "bad_value", "from 0 to 10 in steps of 5, not '7'"),
    ("drag('4', 'many')", SLIDER, "bad_value", "not 'many'"),
    ("click('4')", SLIDER, "wrong_element", "use drag"),
    ("drag('1', '5')", BUTTON, "wrong_element", "drag needs a slider"),
    ("check('1')", BUTTON, "wrong_element", "checkbox or radio"),
    ("uncheck('5')", RADIO, "wrong_element", "cannot be unchecked"),
])
def test_rules_refuse_with_a_named_reason(action: str, node, code: str, words: str) -> None:
    with pytest.raises(ActionRefused, match=re.escape(words)) as caught:
        check_action(parse_action(action), node)
    assert caught.value.code == code


@pytest.mark.parametrize("action, node", [
    ("click('1')", BUTTON), ("press('1', 'Enter')", BUTTON), ("hover('1')", {**BUTTON, "disabled": True}),
    ("fill('2', 'Ada')", FIELD), ("press('2', 'Escape')", FIELD), ("press('3', 'Escape')", LIST),
    ("select_option('3', 'Small')", LIST), ("drag('4', '10')", SLIDER), ("drag('4', '5.0')", SLIDER),
    ("check('5')", RADIO),
])
def test_rules_allow(action: str, node) -> None:
    check_action(parse_action(action), node)


@pytest.mark.parametrize("text, role, label, arg", [
    ('click(button "Add to cart")', "button", "Add to cart", None),
    ("fill(textbox \"Email\", 'a@b.c')", "textbox", "Email", "a@b.c"),
    ('click(link "Say \\"hi\\"")', "link", 'Say "hi"', None),
])
def test_an_element_named_by_role_and_name(text: str, role: str, label: str, arg) -> None:
    action = parse_action(text)
    assert (action.bid, action.role, action.label, action.arg) == ("", role, label, arg)
    assert parse_action(str(action)) == action


NODES = [{"bid": "1", "role": "button", "name": "Add to cart"},
         {"bid": "2", "role": "link", "name": "Home"}, {"bid": "3", "role": "link", "name": "Home"}]


def test_a_named_element_resolves_to_its_one_id() -> None:
    assert str(resolve_target(parse_action('click(button "Add  to cart")'), NODES)) == "click('1')"
    assert resolve_target(parse_action("click('2')"), NODES) == parse_action("click('2')")


@pytest.mark.parametrize("text, code, words", [
    ('click(link "Home")', "ambiguous", "ids '2', '3'"),
    ('click(button "Home")', "no_match", 'no element button "Home"'),
])
def test_a_name_that_matches_none_or_several_is_refused(text: str, code: str, words: str) -> None:
    with pytest.raises(ActionRefused) as caught:
        resolve_target(parse_action(text), NODES)
    assert caught.value.code == code and words in str(caught.value)


def test_a_refused_name_lists_the_closest_names_the_page_has() -> None:
    nodes = [{"bid": str(i), "role": "button", "name": name} for i, name in
             enumerate(["Reserve a seat", "Back", "Book a table", "Help", "Share", "Print", "Log in"])]
    with pytest.raises(ActionRefused) as caught:
        resolve_target(parse_action('click(button "Book a pass")'), nodes)
    hint = str(caught.value).split("; ", 1)[1]
    assert hint.startswith('this page has button "Book a table"') and hint.endswith("and 2 more")
    with pytest.raises(ActionRefused) as caught:
        resolve_target(parse_action('click(checkbox "Agree")'), NODES)
    assert "the page has no checkbox with a name; use an id" in str(caught.value)


def test_a_named_form_where_the_page_has_one_such_element() -> None:
    page = "[1] button 'Add to cart'\n[2] link 'Home'\n[3] link 'Home'"
    assert named_form("click('1')", page) == 'click(button "Add to cart")'
    assert named_form("click('2')", page) == "click('2')"
