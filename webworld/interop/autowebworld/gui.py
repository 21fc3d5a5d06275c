"""AutoWebWorld GUI procedures (CSS selectors, clicks, hovers, typing, drags) as webworld
widgets and GUI steps.

Each recognised gesture sequence becomes one widget contract: a date picker (click, year,
month, day, Enter), a dropdown (click, then an option listed in ``ui_elements``), a hover
or click-opened menu, a text field (focus, optional select-all / delete, type, Enter), a
slider drag, a checkbox, a list of items, a button or link. The page's widgets are keyed by
selector, so two actions that use one control share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from webworld.interop.autowebworld import naming
from webworld.interop.autowebworld.findings import finding
from webworld.interop.autowebworld.source import SrcAction, Step
from webworld.spec.models import Element, GuiStep
from webworld.spec.validate import Finding

_DATE_PART = re.compile(r"^\.(year|month|day|hour|minute)-(\d+)$")
SELECT_WIDGETS = frozenset({"dropdown", "sort", "select"})
SLIDER_MAX = 10
CLEARING_KEYS = frozenset({"ctrl+a", "control+a", "meta+a", "delete", "backspace"})


@dataclass
class Widgets:
    """The elements of one page, in first-use order, keyed by webworld id."""

    elements: dict[str, Element] = field(default_factory=dict)
    by_selector: dict[tuple[str, str], str] = field(default_factory=dict)

    def get(self, selector: str, kind: str, label: str, **kw: Any) -> str:
        key = (selector, kind)
        if key in self.by_selector:
            el = self.elements[self.by_selector[key]]
            for option in kw.get("options", []):
                if option not in el.options:
                    el.options.append(option)
            return el.id
        eid = naming.element_id(selector) or "control"
        if eid in self.elements:
            eid = f"{eid}_{kind}"
        n = 2
        while eid in self.elements:
            eid, n = f"{eid}_{n}", n + 1
        self.elements[eid] = Element(id=eid, kind=kind, label=label, **kw)
        self.by_selector[key] = eid
        return eid


@dataclass
class Typing:
    """What a text field of this action receives: ``value`` (a literal or ``{param}``)."""

    value: str
    param: str | None = None        # a parameter the text fills (its domain: [value])
    synthesized: bool = False


@dataclass
class ActionGui:
    steps: list[GuiStep]
    findings: list[Finding]


class Procedure:
    """Translates one action's ``gui_procedure``; ``items`` are its item parameters."""

    def __init__(self, action: SrcAction, widgets: Widgets, *, world: str,
                 items: dict[str, list[str]], listing_param: str | None,
                 typed: dict[str, tuple[str | None, str]], set_value: Any) -> None:
        self.action, self.widgets, self.world = action, widgets, world
        self.items, self.listing_param = items, listing_param
        self.typed = typed             # {placeholder} -> (param carrying the text, the text)
        self.set_value = set_value     # a constant the action's effect stores, if any
        self.widget = str(action.params.get("widget", "")).lower()
        self.out: list[GuiStep] = []
        self.findings: list[Finding] = []
        self.last: str | None = None

    # -- entry -------------------------------------------------------------------------
    def translate(self) -> ActionGui:
        steps = self.action.steps
        i = 0
        while i < len(steps):
            i = self._one(steps, i)
        if self.out and self.out[-1].op in ("type", "hover"):
            self._commit_typing()
        return ActionGui(self.out, self.findings)

    def _one(self, steps: list[Step], i: int) -> int:
        step = steps[i]
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        if step.op == "click" and nxt is not None and _DATE_PART.match(nxt.selector or ""):
            return self._date_picker(steps, i)
        after = steps[i + 2] if i + 2 < len(steps) else None
        if step.op == "click" and nxt is not None and nxt.op == "click" and after is not None \
                and _DATE_PART.match(after.selector or ""):
            self.findings.append(finding(
                "keys-merged", step.loc,
                f"action {self.action.id!r}: the click on {step.selector!r} that opens the "
                "date picker is folded into the choice of the date"))
            return i + 1
        if step.op == "click" and nxt is not None and nxt.selector == step.selector \
                and nxt.op in ("type_text", "drag"):
            return i + 1  # a focus click: the fill / drag that follows focuses the field
        if step.op == "click" and nxt is not None and nxt.op == "type_text":
            self.findings.append(finding(
                "keys-merged", step.loc,
                f"action {self.action.id!r}: the click on {step.selector!r} that opens the "
                "field is folded into the fill (webworld shows the field)"))
            return i + 1
        if step.op == "click" and nxt is not None and nxt.op == "key_press" and \
                (nxt.key or "").lower() in CLEARING_KEYS:
            return self._clearing_keys(steps, i)
        if step.op in ("click", "hover") and nxt is not None and nxt.op == "click" \
                and nxt.selector != step.selector:
            return self._two_step_choice(step, nxt, i)
        if step.op == "type_text":
            return self._type(step, nxt, i)
        if step.op == "drag":
            return self._drag(step, i)
        if step.op == "key_press":
            self._key(step)
            return i + 1
        if step.op == "hover":
            eid = self.widgets.get(step.selector, "hover_menu", naming.label_of(step.selector))
            self._emit(GuiStep(op="hover", element=eid))
            return i + 1
        return self._click(step, i)

    # -- widgets -----------------------------------------------------------------------
    def _date_picker(self, steps: list[Step], i: int) -> int:
        parts: dict[str, int] = {}
        j = i + 1
        own = steps[i].selector + "-"  # the picker's own sub-controls, e.g. #date-picker-hour
        while j < len(steps) and steps[j].op == "click":
            m = _DATE_PART.match(steps[j].selector or "")
            if m:
                parts[m.group(1)] = int(m.group(2))
            elif not steps[j].selector.startswith(own):
                break
            j += 1
        if j < len(steps) and steps[j].op == "key_press" and \
                (steps[j].key or "Enter").lower() == "enter":
            j += 1
        p = self.action.params
        year, month, day = (int(p.get(k, parts.get(k, d))) for k, d in
                            (("year", 2025), ("month", 1), ("day", 1)))
        if "hour" in parts or "minute" in parts:
            self.findings.append(finding(
                "time-folded", steps[i].loc,
                f"action {self.action.id!r}: the hour / minute clicks are folded into the "
                "choice of the date"))
        date = f"{year:04d}-{month:02d}-{day:02d}"
        eid = self.widgets.get(steps[i].selector, "date_picker",
                               naming.label_of(steps[i].selector, "date"), options=[date])
        self._emit(GuiStep(op="select", element=eid, value=date))
        return j

    def _clearing_keys(self, steps: list[Step], i: int) -> int:
        j = i + 1
        while j < len(steps) and steps[j].op == "key_press" and \
                (steps[j].key or "").lower() in CLEARING_KEYS:
            j += 1
        self.findings.append(finding(
            "keys-merged", steps[i].loc,
            f"action {self.action.id!r}: focus click and {j - i - 1} select-all / delete "
            "key(s) folded into the fill that replaces the field's text"))
        return j

    def _two_step_choice(self, first: Step, second: Step, i: int) -> int:
        container = second.container or first.selector
        value = next((v for v, sel in second.options if sel == second.selector), None)
        label = naming.humanize(value) if value is not None else \
            naming.option_label(second.selector, container)
        options = [naming.humanize(v) for v, _ in second.options] or [label]
        listed = [v for v, _ in second.options]
        bound = next((p for p, names in self.items.items() if listed and names == listed), None)
        if bound is not None:  # the option list is the item the action stores
            options, label = listed, f"{{{bound}}}"
        if first.op == "hover" or self.widget == "hover_menu":
            eid = self.widgets.get(container, "hover_menu", naming.label_of(container, "menu"),
                                   options=options)
            self._emit(GuiStep(op="hover", element=eid))
            self._emit(GuiStep(op="click", element=eid, value=label))
        elif second.options or self.widget in SELECT_WIDGETS or \
                any(w in naming.words(container) for w in ("dropdown", "select", "sort")):
            kind = "radio" if self.widget == "radio" else "select"
            eid = self.widgets.get(container, kind, naming.label_of(container, "choose"),
                                   options=options)
            self._emit(GuiStep(op="select", element=eid, value=label))
        else:  # a menu opened by a click (a hamburger / "more" toggle)
            eid = self.widgets.get(container, "hover_menu", naming.label_of(container, "menu"),
                                   options=options)
            self._emit(GuiStep(op="click", element=eid))
            self._emit(GuiStep(op="click", element=eid, value=label))
        return i + 2

    def _type(self, step: Step, nxt: Step | None, i: int) -> int:
        kind = "search_box" if "search" in naming.words(step.selector) else "text_input"
        label = naming.label_of(step.selector, self.action.id)
        eid = self.widgets.get(step.selector, kind, label, placeholder=label)
        self._emit(GuiStep(op="type", element=eid, value=self._text(step)))
        if nxt is not None and nxt.op == "key_press":
            self._emit(GuiStep(op="key_press", element=eid, key=nxt.key or "Enter"))
            return i + 2
        return i + 1

    def _text(self, step: Step) -> str:
        """The typed text: an item parameter, a constant the effect stores, or a realistic
        value for the field (a parameter when the effect stores the text itself)."""
        text = step.text or ""
        name = text[1:-1] if text.startswith("{") and text.endswith("}") else None
        if name in self.items:
            return f"{{{name}}}"
        if len(self.items) == 1:  # a search box: the query is the item looked for
            item = next(iter(self.items))
            if name is None:
                self.findings.append(finding(
                    "items-synthesized", step.loc + ("text",),
                    f"action {self.action.id!r}: the query types the item it finds "
                    f"({{{item}}}) instead of {text!r}"))
            return f"{{{item}}}"
        if name is None:
            return text
        if text in self.typed:  # the effect stores what is typed (as is, or in a template)
            param, literal = self.typed[text]
            return f"{{{param}}}" if param else literal
        if isinstance(self.set_value, (str, int)) and not isinstance(self.set_value, bool):
            return str(self.set_value)
        self.findings.append(finding(
            "text-synthesized", step.loc + ("text",),
            f"action {self.action.id!r}: {text} has no value in the file; it types a "
            "realistic one"))
        return naming.typed_text(self.world, step.selector)

    def _commit_typing(self) -> None:
        last = self.out[-1]
        if last.op == "type":
            self.out.append(GuiStep(op="key_press", element=last.element, key="Enter"))
            self.findings.append(finding(
                "enter-added", self.action.loc + ("gui_procedure",),
                f"action {self.action.id!r} ends by typing; in webworld it commits with Enter"))

    def _drag(self, step: Step, i: int) -> int:
        item = self.listing_param if self.listing_param in self.items else None
        if item is None and ("slider" in self.widget or "slider" in naming.words(step.selector)):
            eid = self.widgets.get(step.selector, "slider",
                                   naming.label_of(step.selector, "range"),
                                   min=0, max=SLIDER_MAX, step=1)
            self._emit(GuiStep(op="drag", element=eid, value=str(_slider_value(step.to_value))))
            return i + 1
        if item is not None:  # scrolling an item into view: pick it in a "Scroll to" list
            eid = self.widgets.get(step.selector, "link", "Scroll to",
                                   options=list(self.items[item]))
            self._emit(GuiStep(op="click", element=eid, value=f"{{{item}}}"))
        else:
            eid = self.widgets.get(step.selector, "button", "Show more")
            self._emit(GuiStep(op="click", element=eid))
        self.findings.append(finding(
            "scroll-as-click", step.loc,
            f"action {self.action.id!r}: the drag that scrolls {step.selector!r} becomes a "
            "click" + (" on the item in a 'Scroll to' list" if item else " on 'Show more'")))
        return i + 1

    def _key(self, step: Step) -> None:
        target = self.last
        if step.selector:
            target = self.widgets.get(step.selector, "text_input", naming.label_of(step.selector))
        if target is None:
            target = self.widgets.get("body", "button", "Page")
        self._emit(GuiStep(op="key_press", element=target, key=step.key or "Enter"))

    def _click(self, step: Step, i: int) -> int:
        sel = step.selector
        ws = naming.words(sel)
        if self.listing_param and self.listing_param in self.items:
            eid = self.widgets.get(sel, "link", naming.label_of(sel, self.action.id),
                                   options=list(self.items[self.listing_param]))
            self._emit(GuiStep(op="click", element=eid, value=f"{{{self.listing_param}}}"))
        elif "checkbox" in ws:
            label = naming.label_of(sel.replace("checkbox", ""), self.action.id)
            eid = self.widgets.get(sel, "checkbox", label)
            self._emit(GuiStep(op="uncheck" if self.set_value is False else "check",
                               element=eid))
        else:
            nav = self.action.navigates and self.action.to != self.action.page
            kind = "link" if nav and any(w in ws for w in ("nav", "back", "home", "logo",
                                                           "breadcrumb", "link")) else "button"
            eid = self.widgets.get(sel, kind, naming.label_of(sel, self.action.id))
            self._emit(GuiStep(op="click", element=eid))
        return i + 1

    def _emit(self, step: GuiStep) -> None:
        self.out.append(step)
        self.last = step.element


def _slider_value(to_value: Any) -> int:
    if isinstance(to_value, (int, float)) and not isinstance(to_value, bool):
        return max(1, min(SLIDER_MAX, int(to_value)))
    return 1 if str(to_value).lower() in ("left", "down", "min") else SLIDER_MAX
