"""Variations of a recorded SFT turn that say the same thing in other words, so a small model
trained on a few sites learns to read a page and a task rather than remember them.

A turn is the three messages of :mod:`webworld.data.prompting` (system, user, assistant).
Measured on SmolLM2 after SFT on 30 worlds (`docs/learning.md`): asked validation turns with
their ids renumbered, it answered 14% as recorded against 61% with the sites' own ids; and a
world's tasks draw their typed values from a few dozen names and emails, which it recalled
instead of copying the task's. Each function here takes one such shortcut away:

* :func:`relabel_ids`: the element ids renumbered (page order kept);
* :func:`vary_value`: the value a ``fill`` types, which the task gives, replaced by a new one
  of its kind everywhere in the turn.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from webworld.browser.actions import ACTION_ARITY, parse_call, parse_reply
from webworld.browser.observe import parse_line
from webworld.data.prompting import page_line
from webworld.propose.content import make_faker, persona

Chat = list[dict[str, str]]

# an element id where a turn shows one: a page line's "[12] " and an action's first argument
_LINE_ID = re.compile(r"^(\s*)\[(\d+)\] ", re.MULTILINE)
_CALL_ID = re.compile(r"\b(" + "|".join(ACTION_ARITY) + r")\('(\d+)'")


def _replace_in_turn(chat: Chat, change: Callable[[str], str]) -> Chat:
    return [m if m["role"] == "system" else {**m, "content": change(m["content"])} for m in chat]


def relabel_ids(chat: Chat, rng: random.Random) -> Chat:
    """``chat`` with its element ids renumbered: the ids of the user message and the reply
    mapped in order onto a random increasing draw from 1..3N (N the largest id), page lines,
    history and action alike. A site's ids follow its layout, so a model trained on a few
    sites can answer by remembered number; renumbered turns say the same thing with ids that
    only reading the page gives. The system prompt is kept."""
    turn = "\n".join(m["content"] for m in chat if m["role"] != "system")
    ids = sorted({int(m.group(2)) for m in _LINE_ID.finditer(turn)}
                 | {int(m.group(2)) for m in _CALL_ID.finditer(turn)})
    if not ids:
        return chat
    new = dict(zip(ids, sorted(rng.sample(range(1, 3 * ids[-1] + 1), len(ids))), strict=True))

    def renumber(text: str) -> str:
        text = _LINE_ID.sub(lambda m: f"{m.group(1)}[{new[int(m.group(2))]}] ", text)
        return _CALL_ID.sub(lambda m: f"{m.group(1)}('{new[int(m.group(2))]}'", text)

    return _replace_in_turn(chat, renumber)


def vary_value(chat: Chat, rng: random.Random) -> Chat:
    """``chat`` with the text its reply types (``fill``), when the task's line gives it,
    replaced by a new value of the same field (a persona's name, email, password ... drawn
    with ``rng``; other words for a search or a message) wherever it stands as a whole in
    the turn. Other turns are returned as they are."""
    action = parse_call(parse_reply(chat[-1]["content"]) or "")
    user = next(m["content"] for m in chat if m["role"] == "user")
    value = action.arg if action is not None and action.name == "fill" else None
    if not value or value not in user.split("\n", 1)[0]:
        return chat
    line = page_line(user, action.bid)
    new = _new_value((parse_line(line)[3] if line else None) or "", value, rng)
    whole = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)")
    return _replace_in_turn(chat, lambda text: whole.sub(lambda _: new, text))


def _new_value(label: str, value: str, rng: random.Random) -> str:
    """A value for the field ``label`` that is not ``value``."""
    fake = make_faker(rng)
    fields = {f.label.lower(): f.valid for f in persona(fake).values()}
    if label.lower() == "message":
        return fake.sentence(nb_words=8)
    drawn = fields.get(label.lower()) or " ".join(fake.words(max(1, len(value.split()))))
    return drawn if drawn != value else drawn + " " + fake.word()
