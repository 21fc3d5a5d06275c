"""The action language a policy speaks, BrowserGym style: one grammar, one set of rules.

    click('12')  fill('7', 'tea')  press('7', 'Enter')  select_option('5', 'Paperback')
    hover('3')  check('9')  uncheck('9')  drag('4', '3')   # drag a slider to 3
    click(button "Add to cart")  fill(textbox "Email", 'a@b.c')   # by role and name

An element is named by its id or, as Playwright's ``get_by_role`` and the accessibility tree
name it, by its role and accessible name: a bare role word, then the name in double quotes
(the observation prints ``[12] button 'Add to cart'``; the double quotes tell the name from
the id form's single-quoted arguments). :func:`resolve_target` finds the one element of the
observation with that role and name, the same way for the live and the fast environment.

Everything that reads or judges an action lives here, with no browser import, so the
dataset export, the prompt format, the live environment (a real page) and the fast
environment (no browser) use the very same code:

* :func:`parse_action` reads one call with a small tokenizer (never evaluated) and raises
  :class:`ActionSyntaxError` with the reason; :func:`parse_reply` finds the action in a
  model's ``Thought: ... / Action: ...`` reply.
* :func:`check_action` applies the rules an action must meet on the element it names
  (right kind of element, enabled, a valid option / key / slider value), from the facts
  the observation recorded. Whether the element is covered is decided where the layout
  is known (the page, or the fast environment's capture of it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from webworld.errors import WebworldError

# Action name -> number of arguments, the element id included.
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
KEYS: tuple[str, ...] = ("Enter", "Escape")
"""Keys ``press`` accepts: Enter submits a field's form or activates a button or link;
Escape closes open calendars and menus. Other keys have browser-specific effects."""
MAX_FILL_CHARS = 1000

_CALL = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.S)
_ARG = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+))\s*(?:,|$)""", re.S)
_ACTION_LINE = re.compile(r"^\s*[*_`>#-]*\s*action\s*[*_`]*\s*:\s*(.*?)\s*$",
                          re.IGNORECASE | re.MULTILINE)
_BARE_CALL = re.compile(r"\b(" + "|".join(ACTION_ARITY) + r")\s*\(.*\)", re.MULTILINE)
_NAMED = re.compile(r'\s*([a-z]+)\s+"((?:[^"\\]|\\.)*)"\s*(?:,|$)', re.S)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ActionSyntaxError(WebworldError):
    """A string that is not an action of the language."""


@dataclass(frozen=True)
class BrowserAction:
    """A parsed action: ``fill('7', 'tea')`` is ``BrowserAction("fill", "7", "tea")``;
    ``click(button "Pay")`` is ``BrowserAction("click", "", role="button", label="Pay")``
    until :func:`resolve_target` gives it the id."""

    name: str
    bid: str
    arg: str | None = None
    role: str | None = None   # a named target: the element's role and accessible name
    label: str | None = None

    @property
    def args(self) -> tuple[str, ...]:
        return (self.bid,) if self.arg is None else (self.bid, self.arg)

    def __str__(self) -> str:
        if self.role is not None and not self.bid:
            return format_named(self.name, self.role, self.label or "", self.arg)
        return format_action(self.name, *self.args)


def format_action(name: str, *args: str) -> str:
    """The canonical text of an action: ``fill('7', 'it\\'s')`` (single quotes, backslash escapes)."""
    return f"{name}({', '.join(_quote(a) for a in args)})"


def format_named(name: str, role: str, label: str, arg: str | None = None) -> str:
    """The canonical text of a named action: ``fill(textbox "Email", 'a@b.c')``."""
    return f"{name}({named_target(role, label)}" + ("" if arg is None else f", {_quote(arg)}") + ")"


def named_target(role: str, label: str) -> str:
    """``button "Add to cart"``: an element by role and name, as the action language writes it."""
    return f'{role} "' + str(label).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _quote(text: str) -> str:
    return "'" + str(text).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.S)


def parse_action(text: str) -> BrowserAction:
    """``"fill('7', 'tea')"`` -> ``BrowserAction("fill", "7", "tea")``, or ActionSyntaxError.

    Arguments are quoted strings or bare integers (``click(12)`` is ``click('12')``);
    surrounding backticks / asterisks and a trailing ``;`` are tolerated; keyword
    arguments, expressions and unknown names are refused.
    """
    shown = " ".join(str(text).split())[:80]
    body = str(text).strip(" \t\r\n`*")
    if body.endswith(";"):
        body = body[:-1].rstrip()
    match = _CALL.match(body)
    if not match:
        raise ActionSyntaxError(f"not an action: {shown!r}; write one call such as click('12')")
    name, rest = match.group(1), match.group(2)
    if name not in ACTION_ARITY:
        raise ActionSyntaxError(f"unknown action {name!r}; use one of {', '.join(ACTION_ARITY)}")
    args: list[str] = []
    pos = 0
    named = _NAMED.match(rest)
    if named:
        role, label = named.group(1), _unescape(named.group(2))
        args.append("")
        pos = named.end()
    while pos < len(rest.rstrip()):
        arg = _ARG.match(rest, pos)
        if not arg or arg.end() == pos:
            raise ActionSyntaxError(f"cannot read the arguments of {shown!r}; arguments are "
                                    "quoted strings such as '12'")
        single, double, number = arg.groups()
        args.append(number if number is not None else
                    _unescape(single if single is not None else double))
        pos = arg.end()
    if len(args) != ACTION_ARITY[name]:
        raise ActionSyntaxError(f"{name} takes {ACTION_ARITY[name]} argument(s), got {len(args)}")
    arg = args[1] if len(args) > 1 else None
    if named:
        if not label.strip():
            raise ActionSyntaxError(f"{name} names a {role} with an empty name; use its id")
        return BrowserAction(name, "", arg, role=role, label=label)
    if not args[0].strip():
        raise ActionSyntaxError(f"{name} needs an element id, got an empty one")
    return BrowserAction(name, args[0], arg)


def parse_call(text: str) -> BrowserAction | None:
    """:func:`parse_action`, but ``None`` instead of an error."""
    try:
        return parse_action(text)
    except ActionSyntaxError:
        return None


def read_reply(reply: str) -> BrowserAction:
    """The action of a model reply (the last valid ``Action: ...`` line; a reply without
    one may be a bare call). Raises ActionSyntaxError naming what was wrong."""
    lines = _ACTION_LINE.findall(reply)
    error: ActionSyntaxError | None = None
    for candidate in reversed(lines):
        try:
            return parse_action(candidate)
        except ActionSyntaxError as exc:
            error = error or exc
    if not lines:
        for match in reversed(list(_BARE_CALL.finditer(reply))):
            call = parse_call(match.group(0))
            if call is not None:
                return call
        try:
            return parse_action(reply)
        except ActionSyntaxError as exc:
            error = exc
    raise error or ActionSyntaxError("no action in the reply")


def parse_reply(reply: str) -> str | None:
    """The action of a model reply in canonical form, or ``None`` if there is no valid one."""
    try:
        return str(read_reply(reply))
    except ActionSyntaxError:
        return None


# --- the rules an action must meet on its element ------------------------------------------

TEXT_ROLES = frozenset({"textbox", "searchbox", "spinbutton"})
CHECKABLE_ROLES = frozenset({"checkbox", "radio", "switch"})
PRESSABLE_TAGS = frozenset({"A", "BUTTON"})


class ActionRefused(WebworldError):
    """An action the page cannot carry out; ``code`` says why (see :data:`ERROR_CODES`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


ERROR_CODES: tuple[str, ...] = (
    "syntax",        # not an action of the language
    "unknown_id",    # no element with that id in the current observation
    "wrong_element", # the action does not apply to that kind of element
    "disabled",      # the element is disabled
    "bad_value",     # an option, key, text or slider value the element does not take
    "covered",       # another element lies over it (an overlay, an open menu)
    "browser",       # the browser refused the action for another reason
    "no_match",      # no element of the page has the role and name the action gives
    "ambiguous",     # several elements have that role and name: an id is needed
    "navigation",    # the action's next page did not come (a load past its deadline, a
                     # swap the server never answered); the page shown is the one left
)


def describe(node: dict[str, Any]) -> str:
    """``12 (button 'Pay')``: how an error names an element of the observation."""
    name = " ".join(str(node.get("name") or "").split())[:60]
    return f"{node['bid']} ({node['role']}" + (f" {_quote(name)})" if name else ")")


def resolve_target(action: BrowserAction, nodes: list[dict[str, Any]]) -> BrowserAction:
    """``action`` with the id of the one element of ``nodes`` (an observation's) that has its
    role and accessible name; an action by id comes back as it is. Raises ActionRefused
    (``no_match`` / ``ambiguous``) when none or several have them."""
    if action.role is None or action.bid:
        return action
    label = " ".join(str(action.label).split())
    hits = [n for n in nodes if n["role"] == action.role
            and " ".join(str(n.get("name") or "").split()) == label]
    target = named_target(action.role, label)
    if not hits:
        raise ActionRefused("no_match", f"no element {target} on this page; "
                                        f"{_nearest_names(action.role, label, nodes)}")
    if len(hits) > 1:
        ids = ", ".join(_quote(n["bid"]) for n in hits[:6])
        raise ActionRefused("ambiguous", f"{len(hits)} elements are {target} (ids {ids}); "
                                         "use the id of the one meant")
    return BrowserAction(action.name, hits[0]["bid"], action.arg)


def _nearest_names(role: str, label: str, nodes: list[dict[str, Any]], most: int = 5) -> str:
    """What a refused name could have been: the page's names of ``role``, the closest to
    ``label`` first, so a policy that recalled a name from another site reads this one's."""
    names = dict.fromkeys(" ".join(str(n.get("name") or "").split()) for n in nodes
                          if n["role"] == role)
    names.pop("", None)
    if not names:
        return f"the page has no {role} with a name; use an id in brackets"
    closest = sorted(names, key=lambda name: -SequenceMatcher(None, label, name).ratio())
    shown = ", ".join(named_target(role, name) for name in closest[:most])
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return f"this page has {shown}{more}"


def check_action(action: BrowserAction, node: dict[str, Any] | None) -> None:
    """Raise :class:`ActionRefused` unless ``action`` may be tried on ``node`` (the
    observation's record of the element, or None when the id is not on the page)."""
    if node is None:
        raise ActionRefused("unknown_id", f"no element with id {_quote(action.bid)} on this page; "
                                          "use an id in brackets from the current page")
    role, tag = node["role"], node.get("tag", "")
    name = action.name
    if node.get("disabled") and name != "hover":
        raise ActionRefused("disabled", f"element {describe(node)} is disabled")
    if name == "click" and (tag == "SELECT" or role == "slider"):
        how = "select_option" if tag == "SELECT" else "drag"
        raise ActionRefused("wrong_element", f"click does not choose a value of {describe(node)}; "
                                             f"use {how}")
    if name == "fill":
        _check_fill(action, node)
    elif name == "press":
        _check_press(action, node)
    elif name == "select_option":
        _check_select(action, node)
    elif name in ("check", "uncheck"):
        if role not in CHECKABLE_ROLES or tag != "INPUT":
            raise ActionRefused("wrong_element", f"{name} needs a checkbox or radio button; element "
                                                 f"{describe(node)} is not one")
        if name == "uncheck" and node.get("type") == "radio":
            raise ActionRefused("wrong_element", f"a radio button cannot be unchecked ({describe(node)}); "
                                                 "choose another option instead")
    elif name == "drag":
        _check_drag(action, node)


def _check_fill(action: BrowserAction, node: dict[str, Any]) -> None:
    if node["role"] not in TEXT_ROLES:
        raise ActionRefused("wrong_element", f"fill needs a text field; element {describe(node)} "
                                             "is not one")
    if node.get("readonly"):
        raise ActionRefused("wrong_element", f"element {describe(node)} is read-only")
    text = action.arg or ""
    if _CONTROL.search(text):
        raise ActionRefused("bad_value", "fill takes one line of text without control characters")
    if len(text) > MAX_FILL_CHARS:
        raise ActionRefused("bad_value", f"fill takes at most {MAX_FILL_CHARS} characters, "
                                         f"got {len(text)}")


def _check_press(action: BrowserAction, node: dict[str, Any]) -> None:
    if action.arg not in KEYS:
        raise ActionRefused("bad_value", f"press takes the key {' or '.join(KEYS)}, "
                                         f"not {_quote(action.arg or '')}")
    if action.arg == "Enter" and node["role"] not in TEXT_ROLES and \
            node.get("tag") not in PRESSABLE_TAGS:
        raise ActionRefused("wrong_element", f"press Enter needs a text field, button or link; "
                                             f"element {describe(node)} is none of these")


def _check_select(action: BrowserAction, node: dict[str, Any]) -> None:
    if node.get("tag") != "SELECT":
        raise ActionRefused("wrong_element", f"select_option needs a list (combobox); element "
                                             f"{describe(node)} is not one")
    options = node.get("options") or []
    chosen = next((o for o in options if o["text"] == action.arg), None)
    if chosen is None:
        names = ", ".join(_quote(o["text"]) for o in options if not o["disabled"])
        raise ActionRefused("bad_value", f"list {describe(node)} has no option "
                                         f"{_quote(action.arg or '')}; its options are {names}")
    if chosen["disabled"]:
        raise ActionRefused("bad_value", f"option {_quote(chosen['text'])} of {describe(node)} "
                                         "cannot be chosen")


def slider_values(node: dict[str, Any]) -> tuple[float, float, float]:
    """(min, max, step) of a slider node."""
    low, high = float(node.get("min", 0)), float(node.get("max", 100))
    step = float(node.get("step") or 1)
    return low, high, step if step > 0 else 1.0


def _check_drag(action: BrowserAction, node: dict[str, Any]) -> None:
    if node["role"] != "slider":
        raise ActionRefused("wrong_element", f"drag needs a slider; element {describe(node)} "
                                             "is not one")
    low, high, step = slider_values(node)
    try:
        value = float(action.arg or "")
    except ValueError:
        value = float("nan")
    on_grid = low <= value <= high and abs((value - low) / step - round((value - low) / step)) < 1e-9
    if not on_grid:
        raise ActionRefused("bad_value", f"slider {describe(node)} takes values from {_num(low)} "
                                         f"to {_num(high)} in steps of {_num(step)}, "
                                         f"not {_quote(action.arg or '')}")


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)
