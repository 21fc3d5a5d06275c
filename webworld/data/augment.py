"""Variations of a recorded SFT turn that say the same thing in other words, so a small model
trained on a few sites learns to read a page and a task rather than remember them.

A turn is the three messages of :mod:`webworld.data.prompting` (system, user, assistant).
Measured on SmolLM2 after SFT on 30 worlds (`experiments/smollm2/REPORT.md`): asked validation turns with
their ids renumbered, it answered 14% as recorded against 61% with the sites' own ids; and a
world's tasks draw their typed values from a few dozen names and emails, which it recalled
instead of copying the task's. Each function here takes one such shortcut away:

* :func:`relabel_ids`: the element ids renumbered (page order kept);
* :func:`vary_value`: the value a ``fill`` types, which the task gives, replaced by a new one
  of its kind everywhere in the turn;
* :func:`move_choice`: the element the reply acts on, when the task names it, moved to the
  place of a sibling of its role (another menu item, radio, tab, list entry). On the held-out
  worlds the relabelled SFT policy's first wrong step was such a sibling (``Pets``, first in
  its menu, for the task's ``Recreation``, second) in 12 of its 48 failed episodes: where
  the choice stood on the training sites answered for reading the task;
* :func:`rename_choice`: that element given a new name, in the task and on the page alike.
  The held-out worlds' items are names no training site had, and most failed held-out
  episodes first went wrong on a sibling of the element the task names
  (`46e44e0:docs/learning_scale.md`, `webworld eval diverge`): a renamed turn is answered only by
  finding the task's name on the page;
* :func:`vary_date`: the day a task asks for moved to another day of its month, in the task,
  the calendar (the day's button and the grid's plain number trade places), the history and
  the thought. learning.py's 30 training worlds pick 8 dates in 28 turns, and the SFT policy
  clicked ``Wednesday, 28 April 2027`` for the task's 2027-04-21 in 6 held-out episodes
  (`46e44e0:docs/learning_thoughts.md`): so few dates are remembered, not read.
"""

from __future__ import annotations

import calendar
import datetime as dt
import random
import re
from collections.abc import Callable

from webworld.browser.actions import ACTION_ARITY, BrowserAction, parse_call, parse_reply
from webworld.browser.observe import parse_line
from webworld.data.prompting import page_line
from webworld.propose.content import make_faker, persona

Chat = list[dict[str, str]]

# an element id where a turn shows one: a page line's "[12] " and an action's first argument
_LINE_ID = re.compile(r"^(\s*)\[(\d+)\] ", re.MULTILINE)
_CALL_ID = re.compile(r"\b(" + "|".join(ACTION_ARITY) + r")\('(\d+)'")


def _replace_in_turn(chat: Chat, change: Callable[[str], str]) -> Chat:
    return [m if m["role"] == "system" else {**m, "content": change(m["content"])} for m in chat]


def relabel_ids(chat: Chat, rng: random.Random, ordered: bool = True) -> Chat:
    """``chat`` with its element ids renumbered: the ids of the user message and the reply
    mapped in order onto a random increasing draw from 1..3N (N the largest id), page lines,
    history and action alike; with ``ordered`` false, onto the draw in random order, so that
    no count down the page comes close to an id. A site's ids follow its layout, so a model
    trained on a few sites can answer by remembered number; renumbered turns say the same
    thing with ids that only reading the page gives. The system prompt is kept."""
    turn = "\n".join(m["content"] for m in chat if m["role"] != "system")
    ids = sorted({int(m.group(2)) for m in _LINE_ID.finditer(turn)}
                 | {int(m.group(2)) for m in _CALL_ID.finditer(turn)})
    if not ids:
        return chat
    drawn = rng.sample(range(1, 3 * ids[-1] + 1), len(ids))
    new = dict(zip(ids, sorted(drawn) if ordered else drawn, strict=True))

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
    line = page_line(user, action.bid) if action.bid else None
    field = action.label if action.role else (parse_line(line)[3] if line else None)
    new = _new_value(field or "", value, rng)
    return _replace_in_turn(chat, lambda text: _whole(value).sub(lambda _: new, text))


# an ISO date standing alone (not part of a longer number or id)
_ISO_DATE = re.compile(r"(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])")
_MONTH_TITLE = re.compile(r"[A-Z][a-z]+ \d{4}")  # a calendar month's heading ("April 2027")


def day_label(day: dt.date) -> str:
    """The accessible name of a calendar day's button (webworld.render.view._months)."""
    return f"{day.strftime('%A')}, {day.day} {day.strftime('%B %Y')}"


def vary_date(chat: Chat, rng: random.Random) -> Chat:
    """``chat`` with the first ISO date its task's line gives moved to another day of the same
    month drawn with ``rng``, wherever the turn shows it: the ISO form (task, field values,
    thought) and the day's button name (page, history, thought). On a page with that month's
    calendar open the day's button and the new day's plain number trade places, so the grid
    still counts 1, 2, 3 ... and the reply still clicks the button it clicked. Days the turn
    shows as other buttons or dates are not drawn. Turns without a date are returned as they
    are."""
    user = next(m["content"] for m in chat if m["role"] == "user")
    found = _ISO_DATE.search(user.split("\n", 1)[0])
    try:
        old = dt.date.fromisoformat(found.group(0)) if found else None
    except ValueError:
        old = None
    if old is None:
        return chat
    turn = "\n".join(m["content"] for m in chat if m["role"] != "system")
    head, marker, page = user.partition(_PAGE)
    rows = page.splitlines()
    button, numbers = _calendar_day(rows, old) if marker else (None, {})
    taken = {old.day} | {d.day for d in _month_days(old) if day_label(d) in turn
                         or d.isoformat() in turn}
    days = numbers or [d.day for d in _month_days(old)]  # with the grid: its plain numbers
    free = [day for day in days if day not in taken]
    if not free:
        return chat
    new = old.replace(day=rng.choice(free))
    if numbers:
        at = numbers[new.day]
        rows[button], rows[at] = (rows[at].replace(f"'{new.day}'", f"'{old.day}'", 1),
                                  rows[button].replace(f"'{day_label(old)}'", f"'{day_label(new)}'", 1))
        chat = [m if m["role"] != "user" else {**m, "content": head + _PAGE + "\n".join(rows)}
                for m in chat]
    return _replace_in_turn(chat, lambda text: _whole(day_label(old)).sub(
        lambda _: day_label(new), _whole(old.isoformat()).sub(lambda _: new.isoformat(), text)))


def _month_days(day: dt.date) -> list[dt.date]:
    return [day.replace(day=d) for d in range(1, calendar.monthrange(day.year, day.month)[1] + 1)]


def _calendar_day(rows: list[str], day: dt.date) -> tuple[int | None, dict[int, int]]:
    """On a page's ``rows``: the index of ``day``'s button and, for the days of its month shown
    as plain numbers at its depth, each day's row index; (None, {}) when the page shows no
    button for ``day``."""
    lines = [parse_line(row) for row in rows]
    button = next((i for i, line in enumerate(lines)
                   if line[1] and line[2] == "button" and line[3] == day_label(day)), None)
    if button is None:
        return None, {}
    title = day.strftime("%B %Y")
    start = next((i for i in range(button, -1, -1) if lines[i][3] == title), button)
    numbers: dict[int, int] = {}
    for i in range(start + 1, len(lines)):
        depth, bid, role, name, _ = lines[i]
        if depth < lines[button][0] or (role == "StaticText" and _MONTH_TITLE.fullmatch(name or "")):
            break  # the dialog or the month ended
        if role == "StaticText" and not bid and depth == lines[button][0] and (name or "").isdigit():
            numbers[int(name)] = i
    return button, numbers


_PAGE = "\nPage:\n"  # where a user message's page starts (webworld.data.prompting)
# actions on an element the task may name: where it stands on the page can be moved
MOVABLE = {"click", "hover", "check", "uncheck"}
# roles whose siblings are the lines next to each other (a radio group), not every line of the
# role: two radio groups of a form are two questions
GROUPED = {"radio", "checkbox"}


def move_choice(chat: Chat, rng: random.Random) -> Chat:
    """``chat`` with the element its reply acts on, where the task's line names it, moved to
    the place of a sibling drawn with ``rng`` (an element of its role: a menu item, radio,
    tab, list entry): the two page lines trade names and the reply acts on the sibling's id.
    Task, history and thought are kept: the answer is still the element the task names, now
    where another one stood. Other turns are returned as they are, and so are names a page
    line would show escaped (quotes, backslashes)."""
    picked = _named_pick(chat)
    if picked is None:
        return chat
    action, head, page, at = picked
    rows = page.splitlines()
    lines = [parse_line(row) for row in rows]
    name = lines[at][3]
    siblings = [i for i in _group(lines, at) if lines[i][3] != name and _plain(lines[i][3] or "")]
    if not siblings:
        return chat
    other = rng.choice(siblings)
    rows[at] = rows[at].replace(f"'{name}'", f"'{lines[other][3]}'", 1)
    rows[other] = rows[other].replace(f"'{lines[other][3]}'", f"'{name}'", 1)
    reply = chat[-1]["content"]
    thought, _, act = reply.rpartition("Action:")
    if action.bid:  # a reply by name still names the same element, now in the other place
        act = act.replace(f"('{action.bid}'", f"('{lines[other][1]}'", 1)
    return [*(m if m["role"] != "user" else {**m, "content": head + _PAGE + "\n".join(rows)}
              for m in chat[:-1]), {**chat[-1], "content": f"{thought}Action:{act}"}]


def _named_pick(chat: Chat) -> tuple[BrowserAction, str, str, int] | None:
    """For a turn whose reply clicks, hovers or checks an element its task's line names (shown
    unescaped): the action, the user message's head and page, and the element's page line
    index; None for any other turn."""
    action = parse_call(parse_reply(chat[-1]["content"]) or "")
    if action is None or action.name not in MOVABLE:
        return None
    user = next(m["content"] for m in chat if m["role"] == "user")
    head, marker, page = user.partition(_PAGE)
    lines = [parse_line(row) for row in page.splitlines()]
    at = next((i for i, line in enumerate(lines) if _acted_on(line, action)), None)
    if not marker or at is None:
        return None
    name = lines[at][3]
    if not name or not _plain(name) or not _whole(name).search(head.split("\n", 1)[0]):
        return None
    return action, head, page, at


def _acted_on(line: tuple, action: BrowserAction) -> bool:
    """The page line (parsed) of the element ``action`` names, by id or by role and name."""
    if line[1] is None:
        return False
    return line[1] == action.bid if action.bid else (line[2], line[3]) == (action.role, action.label)


def rename_choice(chat: Chat, rng: random.Random) -> Chat:
    """``chat`` with the element its reply acts on, where the task's line names it, given a
    new name (as many words as it had, drawn with ``rng``, capitalised as it was, not on the
    page already) wherever the old one stands as a whole in the turn: task, page, history and
    thought. Other turns are returned as they are, and so are names a page line would show
    escaped (quotes, backslashes)."""
    picked = _named_pick(chat)
    if picked is None:
        return chat
    _, _, page, at = picked
    name = parse_line(page.splitlines()[at])[3]
    assert name is not None
    new = _new_name(name, page, rng)
    return _replace_in_turn(chat, lambda text: _whole(name).sub(lambda _: new, text))


def _new_name(name: str, page: str, rng: random.Random) -> str:
    """Words drawn with ``rng`` in the shape of ``name``, found nowhere on ``page``."""
    fake = make_faker(rng)
    words = name.split()
    while True:
        drawn = [w.capitalize() if old[:1].isupper() else w
                 for w, old in zip(fake.words(len(words)), words, strict=True)]
        new = " ".join(drawn)
        if new.casefold() not in page.casefold():
            return new


def _group(lines: list[tuple], at: int) -> list[int]:
    """The indices of the element at ``at`` and its siblings, elements of its role at its
    depth: for a radio or checkbox those of its run of lines (lines nested deeper allowed),
    else all on the page."""
    depth, _, role, _, _ = lines[at]
    start, end = 0, len(lines) - 1
    if role in GROUPED:
        start = end = at
        while start > 0 and (lines[start - 1][0] > depth or lines[start - 1][2] == role):
            start -= 1
        while end + 1 < len(lines) and (lines[end + 1][0] > depth or lines[end + 1][2] == role):
            end += 1
    return [i for i in range(start, end + 1)
            if lines[i][2] == role and lines[i][0] == depth and lines[i][1] and lines[i][3]]


def _plain(name: str) -> bool:
    """A name a page line shows as it is (no escaped quote or backslash)."""
    return "'" not in name and "\\" not in name


def _whole(text: str) -> re.Pattern[str]:
    """``text`` standing as a whole: not inside a longer word."""
    return re.compile(rf"(?<!\w){re.escape(text)}(?!\w)")


def _new_value(label: str, value: str, rng: random.Random) -> str:
    """A value for the field ``label`` that is not ``value``."""
    fake = make_faker(rng)
    fields = {f.label.lower(): f.valid for f in persona(fake).values()}
    if label.lower() == "message":
        return fake.sentence(nb_words=8)
    drawn = fields.get(label.lower()) or " ".join(fake.words(max(1, len(value.split()))))
    return drawn if drawn != value else drawn + " " + fake.word()
