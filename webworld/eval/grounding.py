"""Grounding a reply's action by the element its thought names.

A trained policy's replies say what they act on twice: the thought quotes the element's name
(“Europe”, as the export's thoughts do) and the action gives its id. On new sites the two
part ways in one way above all: the thought names the right element and the id is copied
from the line beside it (46e44e0:docs/learning_names.md). ``--study ground_names`` trusts the name: when
the element the id points at is not quoted in the thought, and exactly one element of the
page is (of the same role as the one pointed at, when names alone leave a choice), the
action is moved to that element. A thought that says the task asks for a value the task
does not hold has misread it (a date picker's “the task's 2027-04-28” for a task's
2027-04-21, where the id was the right day's): such a reply is left as it is. It uses
nothing but the reply and the message the policy read, so it works the same on any site;
the rows it gives are reported apart from the replies as the model wrote them.
"""

from __future__ import annotations

import re

from webworld.browser.actions import format_action, parse_call, parse_reply
from webworld.browser.observe import parse_line
from webworld.data.prompting import assistant_message, page_line, task_of, thought_of
from webworld.data.thoughts import misreads_task
from webworld.errors import UsageError
from webworld.eval.policies import Policy, Reply, ScriptedPolicy
from webworld.rl.policies import PageElement, page_elements
from webworld.rl.turn import Turn

QUOTED = re.compile(r"“([^”]+)”")


def named_target(thought: str, page: str, acted_bid: str) -> PageElement | None:
    """The element the thought names in place of ``acted_bid``'s, or None when the thought
    names the element acted on, names none of the page's, or leaves a choice."""
    quoted = {q.strip().casefold() for q in QUOTED.findall(thought)}
    if not quoted:
        return None
    line = page_line(page, acted_bid)
    _, _, acted_role, acted_name, _ = parse_line(line) if line else (0, None, "", None, "")
    if acted_name and acted_name.casefold() in quoted:
        return None
    named = [e for e in page_elements(page) if e.name and e.name.casefold() in quoted]
    siblings = [e for e in named if e.role == acted_role]
    for choice in (siblings, named):
        if len(choice) == 1:
            return choice[0]
    return None


def ground_reply(reply: str, message: str) -> str | None:
    """``reply`` with its action moved to the element its thought names (see the module
    doc), or None when it stays as it is. ``message``: the user message it answers."""
    call = parse_reply(reply)
    action = parse_call(call) if call else None
    if action is None:
        return None
    thought = thought_of(reply)
    if misreads_task(thought, task_of(message)):
        return None
    target = named_target(thought, message, action.bid)
    if target is None:
        return None
    moved = format_action(action.name, target.bid, *([] if action.arg is None else [action.arg]))
    return assistant_message(thought, moved)


class GroundedPolicy(Policy):
    """Another policy's replies, grounded by name; counts the actions it moved."""

    def __init__(self, inner: Policy) -> None:
        if isinstance(inner, ScriptedPolicy):
            raise UsageError("--study ground_names grounds a model's replies: hf:PATH or openai:MODEL, "
                             f"not {inner.name}")
        self.inner, self.name = inner, f"{inner.name}, grounded by name"
        self.moved = self.replies = 0

    def start(self, slot: int, turn: Turn, seed: int) -> None:
        self.inner.start(slot, turn, seed)

    def act(self, turns: dict[int, Turn]) -> dict[int, Reply]:
        replies = self.inner.act(turns)
        for slot, reply in replies.items():
            self.replies += 1
            grounded = ground_reply(reply.text, turns[slot].messages()[-1]["content"])
            if grounded is not None:
                self.moved += 1
                reply.text = grounded
        return replies

    def sample(self, turns: dict[int, Turn], k: int, seed: int) -> dict[int, list[str]]:
        """The inner model's drawn replies, each grounded (webworld.eval.loops draws them)."""
        drawn = self.inner.sample(turns, k, seed)  # type: ignore[attr-defined]
        return {slot: [ground_reply(text, turns[slot].messages()[-1]["content"]) or text
                       for text in texts] for slot, texts in drawn.items()}

    def close(self) -> None:
        self.inner.close()
