"""Short per-step thoughts for SFT targets, written from the step's own fields only.

A thought says what the step does and why, using nothing but the step (GUI op, target
label, value, the FSM action's label, the name of the element the gesture acts on), the
task's intent and whether the step is the last. It quotes the element acted on: where one
FSM step takes several gestures (a date picker: open the calendar, click the day), each
gesture's thought names its own control and what it is for, so a policy learns the name
with the id it points at (and ``--study ground_names`` reads the thought it was taught). A claim
that *the task* asks for a value is made only when the value appears in the intent. The
phrasing varies between steps but is a pure function of the inputs
(a SHA-256 of them picks the template), so exports are byte-identical run to run.
"""

from __future__ import annotations

import hashlib
import re

from webworld.browser.actions import parse_call
from webworld.browser.observe import parse_line
from webworld.data.prompting import page_line
from webworld.data.records import VerifiedStep

# {label}: the target's label, {value}: typed text / option, {goal}: the FSM action's
# label in lower case ("search books"), {key}: the key pressed.
_TEMPLATES: dict[str, list[str]] = {
    "click": [
        "To {goal}, I click “{label}”.",
        "Next I need to {goal}, so I click “{label}”.",
        "I click “{label}” to {goal}.",
        "“{label}” is how I {goal} here, so I click it.",
    ],
    "click_value": [
        "I click “{value}” under “{label}” to {goal}.",
        "To {goal}, I click “{value}” in “{label}”.",
        "“{value}” is listed under “{label}”; I click it to {goal}.",
    ],
    "click_value_asked": [
        "The task is about “{value}”, so I click it under “{label}”.",
        "The task mentions “{value}”; I click it in “{label}” to {goal}.",
        "I need “{value}” for this task, so I click it under “{label}”.",
    ],
    "type": [
        "I type “{value}” into “{label}” to {goal}.",
        "To {goal}, I fill “{label}” with “{value}”.",
        "“{label}” needs “{value}”, so I type it in to {goal}.",
    ],
    "type_asked": [
        "The task gives “{value}”, so I type it into “{label}”.",
        "I enter “{value}” in “{label}”, as the task asks.",
        "To {goal}, I type the task's “{value}” into “{label}”.",
    ],
    "select": [
        "I choose “{value}” in the {label} list to {goal}.",
        "To {goal}, I pick “{value}” for {label}.",
        "I set {label} to “{value}” to {goal}.",
    ],
    "select_asked": [
        "The task needs “{value}”, so I pick it in the {label} list.",
        "The task asks for “{value}”; I choose it for {label}.",
        "I select “{value}” for {label}, as the task says.",
    ],
    "key_press": [
        "I press {key} in “{label}” to {goal}.",
        "To {goal}, I press {key} on “{label}”.",
        "Pressing {key} in “{label}” will {goal}.",
    ],
    "hover": [
        "To {goal}, I first hover over “{label}”.",
        "I move the pointer over “{label}” so its choices show, then I can {goal}.",
        "“{label}” opens on hover; I point at it to {goal}.",
    ],
    "drag": [
        "I drag the {label} slider to {value} to {goal}.",
        "To {goal}, I move the {label} slider to {value}.",
    ],
    "drag_asked": [
        "The task wants {value}, so I set the {label} slider to {value}.",
        "I move the {label} slider to {value}, as the task asks.",
    ],
    "check": [
        "I tick “{label}” to {goal}.",
        "To {goal}, I check “{label}”.",
        "“{label}” has to be ticked to {goal}, so I check it.",
    ],
    "uncheck": [
        "I clear “{label}” to {goal}.",
        "To {goal}, I uncheck “{label}”.",
    ],
    "other": [
        "I use “{label}” to {goal}.",
        "To {goal}, I act on “{label}”.",
    ],
    # a gesture inside a widget: {target} is the control it acts on ("Open calendar for
    # date", "Friday, 5 March 2027"), {label} the field it sets
    "part": [
        "To set {label} to “{value}”, I click “{target}”.",
        "I click “{target}” to set {label} to “{value}”.",
        "“{target}” is how I set {label} to “{value}”, so I click it.",
    ],
    "part_asked": [
        "The task gives “{value}” for {label}, so I click “{target}”.",
        "I click “{target}” to set {label} to the task's “{value}”.",
        "For the task's “{value}” in {label}, I click “{target}”.",
    ],
}

# When the action's label only repeats the target ("Check gift wrap" on “Gift wrap”),
# "to {goal}" says nothing: templates without {goal} are used, or these.
_PLAIN: dict[str, list[str]] = {
    "click": ["I click “{label}”.", "Next, I click “{label}”."],
    "click_value": ["I click “{value}” under “{label}”.", "I pick “{value}” in “{label}”."],
    "type": ["I type “{value}” into “{label}”.", "I fill “{label}” with “{value}”."],
    "select": ["I choose “{value}” in the {label} list.", "I set {label} to “{value}”."],
    "key_press": ["I press {key} in “{label}”.", "Now I press {key} on “{label}”."],
    "hover": ["I hover over “{label}” first.", "I move the pointer over “{label}”."],
    "drag": ["I move the {label} slider to {value}.", "I drag the {label} slider to {value}."],
    "check": ["I tick “{label}”.", "I check the “{label}” box."],
    "uncheck": ["I clear “{label}”.", "I untick “{label}”."],
    "other": ["I use “{label}”."],
}

_LAST = [
    " That should complete the task.",
    " This is the last step.",
    " That finishes the task.",
]


def make_thought(*, op: str, element_label: str, value: str | None, fsm_label: str,
                 intent: str, is_last: bool, target: str | None = None) -> str:
    """One or two sentences for one step; same inputs, same words. ``target``: the name of
    the element the gesture acts on, where it is neither ``element_label`` nor ``value``."""
    label = " ".join((element_label or "").split()) or "the control"
    value = " ".join(value.split()) if value else ""
    target = " ".join(target.split()) if target else ""
    goal = _lower_first(" ".join((fsm_label or "").split()).rstrip(".")) or "continue"
    asked = bool(value) and _mentions(intent, value)
    kind = _template_kind(op, value, asked)
    part = bool(target and value) and target.casefold() not in (label.casefold(), value.casefold())
    if part:
        kind = "part_asked" if asked else "part"
    templates = _TEMPLATES[kind]
    if (not part and _words(label)
            and (_words(label) <= _words(goal) or _words(goal) <= _words(label))):
        templates = [t for t in templates if "{goal}" not in t] or _PLAIN[kind.removesuffix("_asked")]
    # the target joins the hash only where it is used: every other step keeps its old words
    pick = _stable_index((op, label, value, goal, intent, str(is_last)) + ((target,) if part else ()))
    text = templates[pick % len(templates)].format(
        label=label, value=value, goal=goal, key=value or "Enter", target=target)
    if is_last:
        text += _LAST[(pick // 7) % len(_LAST)]
    return text


def _claim_pattern(template: str) -> re.Pattern[str]:
    """A ``*_asked`` template as a pattern whose group ``value`` is the value it claims."""
    parts = re.split(r"(\{\w+\})", template)
    pattern, seen = "", False
    for part in parts:
        if part == "{value}":
            pattern += "(?P=value)" if seen else "(?P<value>.+?)"
            seen = True
        else:
            pattern += ".+?" if re.fullmatch(r"\{\w+\}", part) else re.escape(part)
    return re.compile(pattern)


_CLAIMS = [_claim_pattern(t) for kind, templates in _TEMPLATES.items() if kind.endswith("_asked")
           for t in templates]


def task_claims(thought: str) -> list[str]:
    """The values ``thought`` says the task asks for, in the words of the templates that make
    that claim (only where the intent holds the value). A trained policy's thought that claims
    one its task lacks has misread the task."""
    return [m.group("value") for pattern in _CLAIMS if (m := pattern.search(thought))]


def misreads_task(thought: str, intent: str) -> bool:
    """Whether ``thought`` claims the task asks for a value that ``intent`` does not hold."""
    return any(not _mentions(intent, value) for value in task_claims(thought))


def thought_for_step(step: VerifiedStep, intent: str, is_last: bool) -> str:
    """:func:`make_thought` for a verified step (the key of a key press comes from its action)."""
    value = step.get("value")
    if step["op"] == "key_press" and not value:
        call = parse_call(step["action"])
        value = call.args[1] if call is not None and len(call.args) > 1 else None
    return make_thought(op=step["op"], element_label=step["element_label"], value=value,
                        fsm_label=step["fsm_label"], intent=intent, is_last=is_last,
                        target=clicked_name(step))


def clicked_name(step: VerifiedStep) -> str | None:
    """The name of the element the step's gesture clicks, as its observation shows it (None
    for other gestures: a field typed into is the step's own target)."""
    call = parse_call(step["action"])
    if call is None or call.name != "click":
        return None
    axtree = (step.get("observation") or {}).get("axtree", "")
    line = page_line(axtree, step.get("bid", "")) if axtree and step.get("bid") else None
    return parse_line(line)[3] if line else None


def _template_kind(op: str, value: str, asked: bool) -> str:
    if op == "click":
        if not value:
            return "click"
        return "click_value_asked" if asked else "click_value"
    if op in ("type", "select", "drag"):
        if not value:
            return "click" if op != "drag" else "other"
        return f"{op}_asked" if asked else op
    if op in ("key_press", "hover", "check", "uncheck"):
        return op
    return "other"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _mentions(intent: str, value: str) -> bool:
    pattern = r"(?<!\w)" + re.escape(value) + r"(?!\w)"
    return re.search(pattern, intent, re.IGNORECASE) is not None


def _lower_first(text: str) -> str:
    if not text or (len(text) > 1 and text[1].isupper()):  # keep acronyms: "VIP lounge"
        return text
    return text[0].lower() + text[1:]


def _stable_index(parts: tuple[str, ...]) -> int:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")
