"""The fast environment's page: a captured layout plus what a browser and site.js do to it.

Only a handful of things change on a rendered page between two page loads, and all of
them are written in a few lines of the site's script (:mod:`webworld.render.assets.js`)
or of HTML: field values, checked boxes, selected options, which calendar or menu is
open (``hidden``, ``is-open``, ``aria-expanded``), the picked tab, a slider's shown
value, and which menu the pointer hovers. :class:`PageModel` keeps those in Python and
does to them what the browser would for each gesture of :mod:`webworld.browser.tab`:
the same event order, the same site.js handlers (ported one to one, same names), the
same form submission rules. The observation is the captured rows of the current
configuration with these values put in, written by the one formatter,
:func:`webworld.browser.observe.format_rows`. The parity tests replay trajectories and
random actions in both environments and compare every byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webworld.browser.actions import (ActionRefused, BrowserAction, check_action, resolve_target,
                                      slider_values)
from webworld.browser.observe import CHECKABLE_ROLES, TEXT_ROLES, Observation, clean, format_rows
from webworld.browser.placement import cover_message
from webworld.errors import WebworldError

BLOCKS_IMPLICIT_SUBMIT = frozenset({"text", "search", "url", "tel", "email", "password", "date",
                                    "month", "week", "time", "datetime-local", "number"})


NOT_SUBMITTED = frozenset({"OUTPUT", "FIELDSET", "OBJECT"})  # listed in a form, never sent


class FastEnvGap(WebworldError):
    """The snapshot has no capture of what the episode reached (rebuild it)."""


@dataclass
class Request:
    """A page load a gesture started: ``GET href`` or ``POST`` of a form."""

    method: str
    path: str
    form: dict[str, str] = field(default_factory=dict)


@dataclass
class Layout:
    """One captured page (see :mod:`webworld.rl.fast.capture`), indexed for the model."""

    page: str
    facts: dict[int, dict[str, Any]]
    configs: dict[frozenset[int], dict[str, Any]]
    by_id: dict[str, int]
    radio_groups: dict[tuple[str, str | None], list[int]]
    outputs: dict[int, int]             # range input -> its <output>

    @classmethod
    def from_capture(cls, raw: dict[str, Any]) -> Layout:
        facts = {f["key"]: f for f in raw["facts"]}
        configs = {frozenset(c["popups"]) | frozenset(c["menus"]): _int_keys(c)
                   for c in raw["configs"]}
        by_id = {}
        for f in raw["facts"]:
            if f["id"] and f["id"] not in by_id:
                by_id[f["id"]] = f["key"]
        groups: dict[tuple[str, str | None], list[int]] = {}
        for f in raw["facts"]:
            if f["tag"] == "INPUT" and f["type"] == "radio" and f["name"]:
                groups.setdefault((f["name"], f["form"]), []).append(f["key"])
        outputs = {}
        for f in raw["facts"]:
            for target in f.get("for") or ():
                if target is not None:
                    outputs.setdefault(target, f["key"])
        return cls(raw["page"], facts, configs, by_id, groups, outputs)


class PageModel:
    """One loaded page: its layout and the client-side values a browser would hold."""

    def __init__(self, layout: Layout, url: str, flash: str | None, placeholder: str) -> None:
        self.layout, self.url, self.flash, self.placeholder = layout, url, flash, placeholder
        facts = layout.facts.values()
        self.values = {f["key"]: f["value"] for f in facts if f["value"] is not None}
        self.checked = {f["key"]: f["checked"] for f in facts if f["tag"] == "INPUT"}
        self.selected = {f["key"]: f["selected"] for f in facts if f["tag"] == "SELECT"}
        self.aria_selected = {f["key"]: f["aria_selected"] for f in facts}
        self.expanded = {f["key"]: f["expanded"] for f in facts}
        self.hidden = {f["key"]: f["hidden"] for f in facts}
        self.is_open = {f["key"]: "is-open" in f["classes"] for f in facts}
        self.unset = {f["key"]: f["unset"] for f in facts}
        self.output_text = {f["key"]: f["text"] for f in facts if f["tag"] == "OUTPUT"}
        self.hovered: int | None = None   # the element the pointer rests on after a hover
        self.anchor: int | None = None    # where the viewport was scrolled for that hover

    def fact(self, key: int) -> dict[str, Any]:
        return self.layout.facts[key]

    # --- what the page shows ------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        shown = {k for k, f in self.layout.facts.items()
                 if ("date-popup" in f["classes"] and not self.hidden[k])
                 or ("menu" in f["classes"] and self.is_open[k])}
        hovered_menu = self.fact(self.hovered)["menu"] if self.hovered is not None else None
        if hovered_menu is not None:
            shown.add(hovered_menu)
        found = self.layout.configs.get(frozenset(shown))
        if found is None:
            raise FastEnvGap(f"page {self.layout.page!r}: no capture with elements "
                             f"{sorted(shown)} open together")
        return found

    def observe(self) -> Observation:
        rows = []
        for depth, kind, role, text, facts in self.config()["rows"]:
            if kind == "node":
                facts = self._node(facts)
            elif kind == "text" and facts and facts.get("key") in self.output_text:
                text = self.output_text[facts["key"]]
            if kind == "text" and self.placeholder in (text or ""):
                text = text.replace(self.placeholder, self.flash or "")
            rows.append([depth, kind, role, text, facts])
        nodes = [r[4] for r in rows if r[1] == "node"]
        return Observation(self.url, format_rows(rows), nodes)

    def _node(self, captured: dict[str, Any]) -> dict[str, Any]:
        key, role = captured["key"], captured["role"]
        node = dict(captured, name=clean(captured["name"]))
        if role in CHECKABLE_ROLES and key in self.checked:
            node["checked"] = self.checked[key]
        if captured["tag"] == "SELECT":
            index, options = self.selected[key], captured.get("options") or []
            node["value"] = options[index]["text"] if 0 <= index < len(options) else ""
        elif (role in TEXT_ROLES or role == "slider") and key in self.values:
            node["value"] = self.values[key]
        node["selected"] = self.aria_selected.get(key) == "true"
        node["expanded"] = self.expanded.get(key) or None
        return node

    # --- acting (the rules of webworld.browser.tab) ---------------------------------------------

    def act(self, action: BrowserAction, seen: Observation) -> Request | None:
        """Carry out ``action``; returns the page load it starts, if any. Raises
        :class:`ActionRefused` (the model has then done what the browser would have)."""
        action = resolve_target(action, seen.nodes)  # a role and name -> its id
        node = seen.node(action.bid)
        check_action(action, node)
        assert node is not None
        key = node["key"]
        in_place = False
        if self.hovered is not None:
            menu = self.fact(self.hovered)["menu"]
            in_place = menu is not None and self.fact(key)["menu"] == menu
            if not in_place:
                self.park()
        cover = self._cover(key, in_place)
        if cover:
            raise ActionRefused("covered", cover_message(node, cover))
        request = self._gesture(action, key, node)
        if action.name == "hover":
            if not in_place:
                self.anchor = key
            self.hovered = key
        else:
            self.park()
        return request

    def _cover(self, key: int, in_place: bool) -> list[str] | None:
        config = self.config()
        if in_place:
            menu = self.fact(self.hovered)["menu"]  # type: ignore[index]
            try:
                return config["inplace"][menu][self.anchor][key]
            except KeyError:
                raise FastEnvGap(f"page {self.layout.page!r}: no in-place capture for element "
                                 f"{key} from {self.anchor}") from None
        return config["hits"].get(key)

    def park(self) -> None:
        """The pointer rests at the corner (no menu there: the capture checked)."""
        self.hovered = self.anchor = None
        self.mouseover(None)

    def _gesture(self, action: BrowserAction, key: int, node: dict[str, Any]) -> Request | None:
        name = action.name
        if name == "click":
            return self.click(key)
        if name == "hover":
            self.mouseover(key)
            return None
        if name == "fill":
            request = self.click(key)
            self.values[key] = action.arg or ""
            self.input_event(key)
            return request
        if name == "press":
            return self.press(key, action.arg or "Enter")
        if name == "select_option":
            return self.select(key, action.arg or "")
        if name in ("check", "uncheck"):
            if self.checked.get(key) != (name == "check"):
                return self.click(key)
            return None
        return self.drag(key, float(action.arg or 0))

    # --- gestures -------------------------------------------------------------------------------

    def click(self, key: int) -> Request | None:
        """A real click: the pointer arrives (mouseover), the page's click handler, then
        the element's own behaviour (follow, submit, tick)."""
        self.mouseover(key)
        return self.click_event(key)

    def click_event(self, key: int) -> Request | None:
        self.on_click(key)
        return self.activate(key)

    def activate(self, key: int) -> Request | None:
        """What a click does by the element's nature (HTML), after the page's handlers."""
        f = self.fact(key)
        if f["disabled"]:
            return None
        if f["tag"] == "A" and f.get("href") is not None:
            return Request("GET", f["href"])
        if (f["tag"] == "BUTTON" and f["type"] == "submit") or \
                (f["tag"] == "INPUT" and f["type"] in ("submit", "image")):
            form = self._form(f["form"])
            return self.submit(form, key) if form is not None else None
        if f["tag"] == "INPUT" and f["type"] == "radio":
            if self.checked[key]:
                return None
            for other in self.layout.radio_groups.get((f["name"], f["form"]), [key]):
                self.checked[other] = False
            self.checked[key] = True
            self.input_event(key)
            return self.on_change(key)
        if f["tag"] == "INPUT" and f["type"] == "checkbox":
            self.checked[key] = not self.checked[key]
            self.input_event(key)
            return self.on_change(key)
        return None

    def press(self, key: int, which: str) -> Request | None:
        f = self.fact(key)
        if which == "Escape":
            self.close_popups(None)  # site.js's keydown handler
            if f["tag"] == "INPUT" and f["type"] == "search" and self.values.get(key):
                self.values[key] = ""  # Chromium clears a search field on Escape
                self.input_event(key)
            return None
        if f["tag"] in ("A", "BUTTON"):
            return self.click_event(key)  # Enter activates: a click without the pointer
        return self.implicit_submit(key)

    def implicit_submit(self, key: int) -> Request | None:
        """Enter in a text field: its form's first submit button, else the form itself when
        the field is its only text field (HTML's implicit submission)."""
        form = self._form(self.fact(key)["form"])
        if form is None:
            return None
        members = [self.fact(k) for k in form["elements"] if k in self.layout.facts]
        default = next((m for m in members if (m["tag"] == "BUTTON" and m["type"] == "submit")
                        or (m["tag"] == "INPUT" and m["type"] in ("submit", "image"))), None)
        if default is not None:
            return None if default["disabled"] else self.click_event(default["key"])
        fields = [m for m in members if m["tag"] == "INPUT" and m["type"] in BLOCKS_IMPLICIT_SUBMIT]
        return self.submit(form, None) if len(fields) == 1 else None

    def select(self, key: int, label: str) -> Request | None:
        options = self.fact(key)["options"]
        self.selected[key] = next(i for i, o in enumerate(options) if o["text"] == label)
        self.input_event(key)
        return self.on_change(key)

    def drag(self, key: int, value: float) -> Request | None:
        """Press on the thumb, move to ``value``, release: input and change events when the
        value moved, then the click, then site.js's release timer."""
        self.mouseover(key)
        f = self.fact(key)
        low, high, step = slider_values(dict(f, min=f.get("min") or 0, max=f.get("max") or 100))
        now = float(self.values.get(key) or low)
        request = None
        if value != now:
            self.values[key] = _number(value)
            self.input_event(key)
            request = self.on_change(key)
        after_click = self.click_event(key)
        request = request or after_click
        if request is None and f["submit"] is not None and self.unset[key]:
            self.unset[key] = False
            request = self.submit_form(f["submit"])
        return request

    # --- site.js, handler by handler ----------------------------------------------------------------

    def mouseover(self, key: int | None) -> None:
        menu = self.fact(key)["menu"] if key is not None else None
        for k, f in self.layout.facts.items():
            if "menu-button" not in f["classes"]:
                continue
            if f["menu"] is not None and self.is_open[f["menu"]]:
                continue
            self.expanded[k] = "true" if menu is not None and f["menu"] == menu else "false"

    def on_click(self, key: int) -> None:
        f = self.fact(key)
        if f["toggle_up"] is not None:
            self.toggle_popup(f["toggle_up"])
        elif f["pick_up"] is not None:
            self.pick(f["pick_up"])
        elif f["display_up"] is not None:
            toggle = self.fact(f["display_up"]).get("box_toggle")
            if toggle is not None:
                self.toggle_popup(toggle)
        elif f["menubutton_up"] is not None:
            button = f["menubutton_up"]
            menu = self.fact(button)["menu"]
            opening = not self.is_open[menu]
            self.close_popups(None)
            self.is_open[menu] = opening
            self.expanded[button] = "true" if opening else "false"
        elif f["popup"] is None and f["menu"] is None:
            self.close_popups(None)

    def on_change(self, key: int) -> Request | None:
        f = self.fact(key)
        if f["type"] == "checkbox" and (f["check"] is not None or f["uncheck"] is not None):
            target = f["check"] if self.checked[key] else f["uncheck"]
            if target:
                return self.submit_form(target)
            self.checked[key] = not self.checked[key]
            return None
        if f["submit"] is not None:
            target = f["submit"]
            if f["tag"] == "SELECT":
                index = self.selected[key]
                option = f["options"][index] if 0 <= index < len(f["options"]) else None
                if option is not None and option["form"]:
                    target = option["form"]
            self.unset[key] = False
            return self.submit_form(target)
        return None

    def input_event(self, key: int) -> None:
        if self.fact(key)["type"] == "range" and key in self.layout.outputs:
            self.output_text[self.layout.outputs[key]] = self.values[key]

    def toggle_popup(self, toggle: int) -> None:
        popup = self.fact(toggle)["controls"]
        if popup is None:
            return
        opening = self.hidden[popup]
        self.close_popups(toggle)
        self.hidden[popup] = not opening
        self.expanded[toggle] = "true" if opening else "false"

    def close_popups(self, except_key: int | None) -> None:
        for k, f in self.layout.facts.items():
            if f["part"] == "toggle" and self.expanded.get(k) == "true" and k != except_key:
                self.expanded[k] = "false"
                if f["controls"] is not None:
                    self.hidden[f["controls"]] = True
        for k, f in self.layout.facts.items():
            if "menu" not in f["classes"] or not self.is_open[k]:
                continue
            if except_key is not None and self.fact(except_key)["menu"] == k:
                continue
            self.is_open[k] = False
            if f.get("menu_button") is not None:
                self.expanded[f["menu_button"]] = "false"

    def pick(self, button: int) -> None:
        f = self.fact(button)
        if f["pick"] is not None:
            self.values[f["pick"]] = f["value_of"]
        container = f["container"]
        if container is not None:
            box = self.fact(container)
            for other in box.get("pickers") or ():
                if self.fact(other)["role"] == "tab":
                    self.aria_selected[other] = "true" if other == button else "false"
            if box.get("date_input") is not None:
                self.values[box["date_input"]] = f["value_of"]
        self.close_popups(None)

    # --- forms ------------------------------------------------------------------------------------

    def _form(self, form_id: str | None) -> dict[str, Any] | None:
        key = self.layout.by_id.get(form_id) if form_id else None
        found = self.fact(key) if key is not None else None
        return found if found is not None and found["tag"] == "FORM" else None

    def submit_form(self, form_id: str) -> Request | None:
        """site.js's ``submitForm``: ``requestSubmit()`` with no submitter."""
        form = self._form(form_id)
        return self.submit(form, None) if form is not None else None

    def submit(self, form: dict[str, Any], submitter: int | None) -> Request:
        """The submit event (site.js copies mirrored fields), then the form's data set."""
        for k, f in self.layout.facts.items():
            if f["is_mirror"] and f["form_attr"] == form["id"] and f["mirror"] is not None:
                source = self.fact(f["mirror"])
                if source["value"] is not None:
                    self.values[k] = self._value(f["mirror"])
        data: dict[str, str] = {}
        for k in form["elements"]:
            f = self.layout.facts.get(k)
            if f is None or f["disabled"] or not f["name"] or f["tag"] in NOT_SUBMITTED:
                continue
            value = self._submitted(f, submitter)
            if value is not None:
                data[f["name"]] = value  # the server reads the last value of a name
        return Request(form["method"], form["action"], data)

    def _submitted(self, f: dict[str, Any], submitter: int | None) -> str | None:
        key = f["key"]
        if f["tag"] == "BUTTON" or f["type"] in ("submit", "image", "button", "reset"):
            return (f["value_attr"] or "") if key == submitter else None
        if f["type"] in ("checkbox", "radio"):
            return (f["value_attr"] if f["value_attr"] is not None else "on") \
                if self.checked[key] else None
        if f["tag"] == "SELECT":
            index = self.selected[key]
            option = f["options"][index] if 0 <= index < len(f["options"]) else None
            return option["value"] if option is not None and not option["disabled"] else None
        return self._value(key)

    def _value(self, key: int) -> str:
        f = self.fact(key)
        if f["tag"] == "SELECT":
            index = self.selected[key]
            return f["options"][index]["value"] if 0 <= index < len(f["options"]) else ""
        return self.values.get(key, f["value"] or "")


def _int_keys(config: dict[str, Any]) -> dict[str, Any]:
    """JSON object keys are strings; element keys are ints."""
    return {**config,
            "hits": {int(k): v for k, v in config["hits"].items()},
            "inplace": {int(m): {int(a): {int(k): v for k, v in row.items()}
                                 for a, row in anchors.items()}
                        for m, anchors in config["inplace"].items()}}


def _number(value: float) -> str:
    """A range input's value as the browser writes it (``120``, ``2.5``)."""
    return str(int(value)) if value == int(value) else repr(value)
