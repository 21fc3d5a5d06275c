"""Per-turn accuracy: does a policy answer a recorded turn with the recorded action?

An episode's success multiplies its steps' chances (0.6 a step over 8 steps is 2%), so a
policy can learn a lot and still solve nothing. ``webworld eval turns`` asks the policy each
turn of an SFT export (the verified path's history, page and task, as the policy would see
them) and compares its action with the verified one, in the action language's canonical
form; no browser, no env. The turns are split by what the answer needs:

* ``value``: an argument beyond the id (text to type, an option, a slider value);
* ``named``: a click or hover on an element whose label the task's text names;
* ``unnamed``: a click or hover on an element the task does not name (a cookie banner, a
  menu to open, a "next" button): site knowledge rather than reading the task.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webworld.browser.actions import parse_call, parse_reply
from webworld.browser.observe import parse_line
from webworld.data.prompting import page_line, thought_of
from webworld.errors import UsageError
from webworld.rl.turn import Turn

KINDS = ("value", "named", "unnamed")


@dataclass
class RecordedTurn(Turn):
    """A turn of an SFT export: its prompt as recorded (system and user messages)."""

    prompt: list[dict[str, str]] = field(default_factory=list)

    def messages(self) -> list[dict[str, str]]:
        return self.prompt


@dataclass
class TurnScores:
    """How many turns a policy answered with the recorded action, overall and per kind."""

    turns: int = 0
    correct: int = 0
    well_formed: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=lambda: {k: [0, 0] for k in KINDS})
    misses: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # why the policy gave no reply, per turn

    def add(self, kind: str, answer: str | None, recorded: str, user: str = "",
            reply: str = "") -> None:
        self.turns += 1
        self.well_formed += answer is not None
        self.correct += answer == recorded
        self.by_kind[kind][0] += answer == recorded
        self.by_kind[kind][1] += 1
        if answer != recorded:  # what a reader needs to see why: the task and both elements
            wanted, acted = element_line(user, recorded), element_line(user, answer)
            thought = thought_of(reply)
            self.misses.append({
                "kind": kind, "task": user.split("\n", 1)[0], "recorded": recorded,
                "recorded_element": wanted, "answered": answer, "answered_element": acted,
                "thought": thought, "right_thought_wrong_id": acted not in (None, wanted)
                and names_element(thought, wanted), "lines_apart": lines_apart(user, wanted, acted)})

    @property
    def right_thought_wrong_id(self) -> int:
        """Misses whose thought names the recorded element while the action acts on another:
        the element was found, its id not copied from its line."""
        return sum(bool(m["right_thought_wrong_id"]) for m in self.misses)

    @property
    def right_thought_next_line(self) -> int:
        """Of :attr:`right_thought_wrong_id`'s misses, those acting on the page line next to
        the recorded element's (above or below): its id copied from the neighbouring line."""
        return sum(bool(m["right_thought_wrong_id"]) and m["lines_apart"] == 1
                   for m in self.misses)

    def as_dict(self) -> dict[str, Any]:
        return {"turns": self.turns, "correct": self.correct, "well_formed": self.well_formed,
                "by_kind": self.by_kind, "right_thought_wrong_id": self.right_thought_wrong_id,
                "right_thought_next_line": self.right_thought_next_line,
                "errors": self.errors, "misses": self.misses}


def lines_apart(user: str, wanted: str | None, acted: str | None) -> int | None:
    """How many lines of the user message's page separate two elements' lines (1: next to
    each other); None when either is not there. Ids need not follow the page (relabelled in
    no order), lines do."""
    rows = [line.strip() for line in user.splitlines()]
    if wanted not in rows or acted not in rows:
        return None
    return abs(rows.index(wanted) - rows.index(acted))


def names_element(thought: str, line: str | None) -> bool:
    """Whether ``thought`` quotes the name of the element on page line ``line``, as the
    export's thoughts quote names (“Europe”)."""
    name = parse_line(line)[3] if line else None
    return bool(name) and f"“{name}”".casefold() in thought.casefold()


def read_turns(path: Path, sample: int | None, seed: int) -> list[list[dict[str, str]]]:
    """The chats of an SFT export file (system, user, assistant), ``sample`` of them drawn
    with ``seed`` (all when None)."""
    chats = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            messages = json.loads(line)["messages"]
        except (ValueError, KeyError, TypeError):
            raise UsageError(f"line {lineno} is not a chat of an SFT export "
                             "(a JSON object with messages)", str(path)) from None
        if [m.get("role") for m in messages] != ["system", "user", "assistant"]:
            raise UsageError(f"line {lineno}: expected system, user and assistant messages",
                             str(path))
        chats.append(messages)
    if sample is not None and sample < len(chats):
        chats = random.Random(seed).sample(chats, sample)
    return chats


def element_line(user: str, answer: str | None) -> str | None:
    """The page line (of the user message) of the element ``answer`` acts on, if any."""
    action = parse_call(answer) if answer else None
    return page_line(user, action.bid) if action is not None else None


def turn_kind(user: str, recorded: str) -> str:
    """``value``, ``named`` or ``unnamed`` (see the module doc) for the recorded action of a
    turn whose user message is ``user``."""
    action = parse_call(recorded)
    if action is None:
        raise UsageError(f"a recorded reply is not an action: {recorded!r}")
    if action.arg is not None:
        return "value"
    line = element_line(user, recorded)
    name = parse_line(line)[3] if line else None
    return "named" if name and name.lower() in user.split("\n", 1)[0].lower() else "unnamed"


def score_turns(policy: Any, chats: list[list[dict[str, str]]], batch: int = 8,
                progress: Any = None) -> TurnScores:
    """Ask ``policy`` (webworld.eval.policies) every chat's turn, ``batch`` at a time."""
    scores = TurnScores()
    for start in range(0, len(chats), batch):
        part = chats[start:start + batch]
        replies = policy.act({i: RecordedTurn({}, {}, prompt=c[:2]) for i, c in enumerate(part)})
        for i, chat in enumerate(part):
            recorded = parse_reply(chat[2]["content"]) or chat[2]["content"]
            user = chat[1]["content"]
            if replies[i].error:
                scores.errors.append(replies[i].error)
            scores.add(turn_kind(user, recorded), parse_reply(replies[i].text), recorded, user,
                       replies[i].text)
        if progress is not None:
            progress(len(part))
    return scores
