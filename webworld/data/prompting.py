"""The one place that formats a policy's input and output.

SFT export and the RL environment both build prompts here, so a policy trained on the
exported data reads exactly what it will read when it acts. A turn is three messages:

* ``system``: :data:`SYSTEM_PROMPT`, the action grammar;
* ``user``: :func:`user_message`, the task, the URL, the actions so far and the page;
* ``assistant``: :func:`assistant_message`, ``Thought: ...`` then ``Action: <action>``.

:func:`parse_action` reads the action back out of a model's reply with a small tokenizer
(nothing is ever evaluated). The grammar and the quoting are those of
``webworld.browser.actions`` (single- or double-quoted strings with backslash escapes,
or bare integers), kept here without its Playwright import so prompting stays light;
``tests/data/test_prompting.py`` checks the two agree.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# Action name -> number of string arguments (the first is always the element id).
ACTION_ARITY: dict[str, int] = {
    "click": 1,
    "fill": 2,
    "press": 2,
    "select_option": 2,
    "hover": 1,
    "check": 1,
    "uncheck": 1,
    "drag": 2,
}

SYSTEM_PROMPT = """\
You are a web agent. You complete a task on a website by acting on its page one step at a time.

Each turn you get the task, the current URL, the actions you already took and the page as an \
accessibility tree. Every element you can act on starts with its id in brackets, \
e.g. [12] button 'Search'.

Reply with exactly two lines:
Thought: <one short sentence on what to do next and why>
Action: <one action>

Actions (ids and text are quoted strings):
click('bid')                  click the element, e.g. click('12')
fill('bid', 'text')           replace the text of an input with text, e.g. fill('7', 'tea')
press('bid', 'Key')           press a key while the element has focus, e.g. press('7', 'Enter')
select_option('bid', 'option')  choose an option of a list by its text, e.g. select_option('9', 'Paperback')
hover('bid')                  move the pointer over the element (opens hover menus)
check('bid')                  tick a checkbox
uncheck('bid')                clear a checkbox
drag('bid', 'value')          move a slider to a value, e.g. drag('15', '120')

Use only ids that appear in the current page. One action per turn."""

_CALL = re.compile(r"^\s*([a-z_]+)\s*\((.*)\)\s*$", re.S)
_ARG = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+))\s*(?:,|$)""", re.S)
_ACTION_LINE = re.compile(r"^\s*[*_`>#-]*\s*action\s*[*_`]*\s*:\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)
_BARE_CALL = re.compile(r"\b(" + "|".join(ACTION_ARITY) + r")\s*\(.*\)", re.MULTILINE)


class ActionCall(NamedTuple):
    """A parsed action: ``fill('7', 'tea')`` is ``ActionCall("fill", ("7", "tea"))``."""

    name: str
    args: tuple[str, ...]

    @property
    def bid(self) -> str:
        return self.args[0]

    def __str__(self) -> str:
        return format_action(self.name, *self.args)


def format_action(name: str, *args: str) -> str:
    """The canonical text of an action: ``fill('7', 'it\\'s')`` (single quotes, backslash escapes)."""
    return f"{name}({', '.join(_quote(a) for a in args)})"


def _quote(text: str) -> str:
    return "'" + str(text).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def user_message(intent: str, observation_text: str, url: str, history: list[str], *,
                 max_observation_chars: int | None = None) -> str:
    """What the policy reads before acting. ``history`` holds the earlier actions, oldest first."""
    if max_observation_chars is not None and len(observation_text) > max_observation_chars:
        observation_text = observation_text[:max_observation_chars].rstrip() + "\n... (page cut)"
    done = "\n".join(f"{i}. {a}" for i, a in enumerate(history, 1)) if history else "none yet"
    return (f"Task: {intent.strip()}\n"
            f"URL: {url}\n"
            f"Previous actions:\n{done}\n"
            f"Page:\n{observation_text.rstrip()}")


def assistant_message(thought: str, action: str) -> str:
    """What the policy must produce: ``Thought: ...`` and ``Action: <action>`` on two lines."""
    thought = " ".join(thought.split())  # one line, so the Action line stays the second
    return f"Thought: {thought}\nAction: {action.strip()}"


def prompt_messages(intent: str, observation_text: str, url: str, history: list[str], *,
                    max_observation_chars: int | None = None) -> list[dict[str, str]]:
    """The messages a policy is given at one step (system and user)."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_message(intent, observation_text, url, history,
                                                 max_observation_chars=max_observation_chars)},
    ]


def step_messages(intent: str, observation_text: str, url: str, history: list[str],
                  thought: str, action: str, *,
                  max_observation_chars: int | None = None) -> list[dict[str, str]]:
    """One supervised turn: system, user, and the assistant reply to learn."""
    return [*prompt_messages(intent, observation_text, url, history,
                             max_observation_chars=max_observation_chars),
            {"role": "assistant", "content": assistant_message(thought, action)}]


def parse_call(text: str) -> ActionCall | None:
    """Parse one action call (``click('12')``); ``None`` unless it follows the grammar exactly.

    Arguments are quoted strings or bare integers (``click(12)`` is ``click('12')``);
    keyword arguments, expressions and unknown names are refused.
    """
    text = text.strip(" \t`*")
    if text.endswith(";"):
        text = text[:-1].rstrip()
    match = _CALL.match(text)
    if not match or match.group(1) not in ACTION_ARITY:
        return None
    name, rest = match.group(1), match.group(2)
    args: list[str] = []
    pos = 0
    while pos < len(rest.rstrip()):
        arg = _ARG.match(rest, pos)
        if not arg or arg.end() == pos:
            return None
        single, double, number = arg.groups()
        args.append(number if number is not None else
                    _unescape(single if single is not None else double))
        pos = arg.end()
    if len(args) != ACTION_ARITY[name] or not args[0].strip():
        return None
    return ActionCall(name, tuple(args))


def parse_action(text: str) -> str | None:
    """The action of a model reply, in canonical form, or ``None`` if there is no valid one.

    Reads the last ``Action: ...`` line; a reply without one may still be a bare call
    (``click('12')``). Never evaluates anything.
    """
    for candidate in reversed(_ACTION_LINE.findall(text)):
        call = parse_call(candidate)
        if call is not None:
            return str(call)
    if not _ACTION_LINE.search(text):
        for match in reversed(list(_BARE_CALL.finditer(text))):
            call = parse_call(match.group(0))
            if call is not None:
                return str(call)
    return None
