"""The one place that formats a policy's input and output.

SFT export and the RL environment both build prompts here, so a policy trained on the
exported data reads exactly what it will read when it acts. A turn is three messages:

* ``system``: :data:`SYSTEM_PROMPT`, the action grammar;
* ``user``: :func:`user_message`, the task, the URL, the actions so far and the page;
* ``assistant``: :func:`assistant_message`, ``Thought: ...`` then ``Action: <action>``.

The action grammar itself (and reading an action back out of a model's reply, never by
evaluating it) is :mod:`webworld.browser.actions`, the one action language of webworld.
"""

from __future__ import annotations

from webworld.browser.actions import (
    ACTION_ARITY,
    BrowserAction,
    format_action,
    parse_call,
    parse_reply,
)
from webworld.browser.observe import parse_line, quote

__all__ = ["ACTION_ARITY", "BrowserAction", "SYSTEM_PROMPT", "TOOL_SYSTEM_PROMPT", "assistant_message",
           "format_action", "history_entry", "page_line", "parse_call", "parse_reply", "prompt_messages",
           "step_messages", "user_message"]

MAX_LABEL_CHARS = 60  # of an element's name in a history line

SYSTEM_PROMPT = """\
You are a web agent. You complete a task on a website by acting on its page one step at a time.

Each turn you get the task, the current URL, the actions you already took and the page as an \
accessibility tree. Every element you can act on starts with its id in brackets, \
e.g. [12] button 'Search'.

Reply with exactly two lines:
Thought: <one short sentence on what to do next and why>
Action: <one action>

Name the element you act on by its role and its name in double quotes, as the page shows \
them: button "Search" for [12] button 'Search'. When several elements of the page have that \
role and name, give the id of the one you mean instead: '12'.

Actions (E is the element; text is in single quotes):
click(E)                  click the element, e.g. click(link "Books")
fill(E, 'text')           replace the text of an input with text, e.g. fill(textbox "Search", 'tea')
press(E, 'Key')           press Enter or Escape on the element, e.g. press(textbox "Search", 'Enter')
select_option(E, 'option')  choose an option of a list by its text, e.g. select_option(combobox "Format", 'Paperback')
hover(E)                  move the pointer over the element (opens hover menus)
check(E)                  tick a checkbox
uncheck(E)                clear a checkbox
drag(E, 'value')          move a slider to a value, e.g. drag(slider "Price", '120')

Enter submits a text field's form or presses a button or link; Escape closes open menus \
and calendars. Act only on elements of the current page. One action per turn."""


# The same agent for tool-calling trainers (TRL's GRPOTrainer with webworld.interop.trl): the
# actions are the tools the chat template lists, so the grammar above is not repeated.
TOOL_SYSTEM_PROMPT = """\
You are a web agent. You complete a task on a website by acting on its page one step at a time.

After the task you get the current URL and the page as an accessibility tree. Every element you \
can act on starts with its id in brackets, e.g. [12] button 'Search'. Act by calling one tool \
per turn on an element of the current page, named by its role and its name as the page shows \
them, button "Search", or, when several elements have that role and name, by its id, "12"; \
each tool returns the page that follows, or why the action failed. Stop calling tools when the \
site shows the task done."""


def user_message(intent: str, observation_text: str, url: str, history: list[str], *,
                 error: str | None = None, max_observation_chars: int | None = None) -> str:
    """What the policy reads before acting. ``history`` holds the earlier actions, oldest
    first; ``error`` is why the last one failed (an environment sets it; the dataset, made
    of steps that worked, never has one)."""
    if max_observation_chars is not None and len(observation_text) > max_observation_chars:
        observation_text = observation_text[:max_observation_chars].rstrip() + "\n... (page cut)"
    done = "\n".join(f"{i}. {a}" for i, a in enumerate(history, 1)) if history else "none yet"
    failed = f"Last action failed: {' '.join(error.split())}\n" if error else ""
    return (f"Task: {intent.strip()}\n"
            f"URL: {url}\n"
            f"Previous actions:\n{done}\n"
            f"{failed}"
            f"Page:\n{observation_text.rstrip()}")


def task_of(message: str) -> str:
    """The task a :func:`user_message` gives ("" for text that is not one)."""
    first = message.split("\n", 1)[0]
    return first.removeprefix("Task: ").strip() if first.startswith("Task: ") else ""


def history_entry(action: str, page_text: str) -> str:
    """An earlier action as the prompt lists it: the action, then the element it acted on as
    the page it was taken on showed it, ``click('4')  [button 'Accept all cookies']``. Ids
    alone mean nothing once the page has changed. ``page_text`` is that page's observation
    text (full or compact: the element lines are the same); an action that names no element
    on it (unparsable, an unknown id) is listed as it is."""
    call = parse_call(action)
    line = page_line(page_text, call.bid) if call is not None and call.bid else None
    if line is None:
        return action
    _, _, role, name, _ = parse_line(line)
    if name:
        name = name if len(name) <= MAX_LABEL_CHARS else name[:MAX_LABEL_CHARS - 3] + "..."
        return f"{action}  [{role} {quote(name)}]"
    return f"{action}  [{role}]"


def page_line(page_text: str, bid: str) -> str | None:
    """The line of ``page_text`` (an observation, or a user message holding one) that shows
    element ``bid``, stripped; None when no line does."""
    marker = f"[{bid}] "
    return next((line.strip() for line in page_text.splitlines()
                 if line.lstrip().startswith(marker)), None)


def assistant_message(thought: str, action: str) -> str:
    """What the policy must produce: ``Thought: ...`` and ``Action: <action>`` on two lines."""
    thought = " ".join(thought.split())  # one line, so the Action line stays the second
    return f"Thought: {thought}\nAction: {action.strip()}"


def thought_of(reply: str) -> str:
    """The text of a reply's ``Thought:`` line ("" without one)."""
    return next((line.split(":", 1)[1].strip() for line in reply.splitlines()
                 if line.startswith("Thought:")), "")


def prompt_messages(intent: str, observation_text: str, url: str, history: list[str], *,
                    error: str | None = None, max_observation_chars: int | None = None
                    ) -> list[dict[str, str]]:
    """The messages a policy is given at one step (system and user)."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_message(intent, observation_text, url, history,
                                                 error=error,
                                                 max_observation_chars=max_observation_chars)},
    ]


def step_messages(intent: str, observation_text: str, url: str, history: list[str],
                  thought: str, action: str, *,
                  max_observation_chars: int | None = None) -> list[dict[str, str]]:
    """One supervised turn: system, user, and the assistant reply to learn."""
    return [*prompt_messages(intent, observation_text, url, history,
                             max_observation_chars=max_observation_chars),
            {"role": "assistant", "content": assistant_message(thought, action)}]
