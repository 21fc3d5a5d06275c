"""Grounding by name: a reply whose thought quotes one element and whose id points at another
acts on the quoted one; every other reply is left as the model wrote it."""

from __future__ import annotations

import pytest

from webworld.browser.actions import parse_reply
from webworld.data.prompting import assistant_message, prompt_messages
from webworld.errors import UsageError
from webworld.eval.grounding import GroundedPolicy, ground_reply
from webworld.eval.policies import Policy, Reply, ScriptedPolicy
from webworld.eval.turns import RecordedTurn
from webworld.rl.turn import Turn

PAGE = ("RootWebArea 'Flights'\n[1] button 'Browse categories', expanded\n"
        "  [2] menuitem 'North America'\n  [3] menuitem 'Europe'\n[4] link 'Europe'\n"
        "[5] textbox 'Password', value=''\n[6] radio 'HTML', unchecked\n"
        "[7] radio 'Plain text', unchecked\n[8] link 'Help'\n[9] button 'Help'")
USER = prompt_messages("Browse the Europe section and pick HTML.", PAGE, "https://f.webworld.test/",
                       [])[1]["content"]


def grounded(thought: str, action: str) -> str | None:
    moved = ground_reply(assistant_message(thought, action), USER)
    return parse_reply(moved) if moved is not None else None


def test_the_neighbour_s_id_moves_to_the_sibling_the_thought_names() -> None:
    assert grounded("I select “HTML” for Format, as the task says.", "click('7')") == "click('6')"
    # two elements are called Europe: the one of the role pointed at (a menu item) is meant
    assert grounded("The task mentions “Europe”; I click it in “Browse categories”.",
                    "click('2')") == "click('3')"


def test_a_fill_keeps_its_value_on_the_element_named() -> None:
    assert grounded("I type “Deep!90x” into “Password”.", "fill('6', 'Deep!90x')") == \
        "fill('5', 'Deep!90x')"


def test_a_reply_is_left_alone_when_it_names_what_it_acts_on_or_leaves_a_choice() -> None:
    assert grounded("I click “Europe” in “Browse categories”.", "click('3')") is None
    assert grounded("Next I click the second item.", "click('2')") is None  # nothing quoted
    assert grounded("I click “Nowhere”.", "click('2')") is None  # no element so named
    assert grounded("I click “Help”.", "click('2')") is None  # a link and a button: no sibling
    assert ground_reply("I do not know", USER) is None  # no action at all


def test_a_thought_that_misreads_the_task_is_not_trusted() -> None:
    # the thought quotes the task as asking for "Plain text": the task says HTML, so the
    # thought, not the id, is what went wrong
    assert grounded("I select “Plain text” for Format, as the task says.", "click('6')") is None
    assert grounded("I select “Plain text” for Format.", "click('6')") == "click('7')"


def test_an_unknown_id_moves_to_the_one_element_named() -> None:
    assert grounded("I click “Plain text”.", "click('70')") == "click('7')"


class Scripted(Policy):
    """Answers every turn with one reply, as a model that points at the line above would."""

    name = "scripted"

    def act(self, turns: dict[int, Turn]) -> dict[int, Reply]:
        return {i: Reply(assistant_message("I select “HTML”.", "click('7')"), 5, 3) for i in turns}


def test_the_grounded_policy_rewrites_the_action_and_counts_what_it_moved() -> None:
    policy = GroundedPolicy(Scripted())
    turn = RecordedTurn({}, {}, prompt=prompt_messages("Pick HTML.", PAGE, "https://f/", []))
    replies = policy.act({0: turn, 1: turn})
    assert {parse_reply(r.text) for r in replies.values()} == {"click('6')"}
    assert replies[0].completion_tokens == 3  # what the model spent is kept
    assert (policy.moved, policy.replies) == (2, 2) and "grounded" in policy.name


def test_grounding_a_scripted_policy_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--study ground_names grounds a model's replies"):
        GroundedPolicy(ScriptedPolicy("random", None))
