"""From a spec GUI step to the concrete browser gestures that perform it.

A spec step names an element and an option (``select`` "Paperback" on ``format``); the
DOM contract (webworld.contract) says where that is. Some steps take two gestures: a
date picker opens its calendar, then a day is clicked.
"""

from __future__ import annotations

from dataclasses import dataclass

from webworld import contract
from webworld.spec.models import WorldSpec


@dataclass(frozen=True)
class Gesture:
    action: str          # an action name of webworld.browser.actions
    selector: str        # CSS selector of the target under the DOM contract
    arg: str | None = None


def gestures(spec: WorldSpec, page_id: str, step: dict) -> list[Gesture]:
    """The gestures for one GUI step of a candidate (``{"op", "element", "value"?, "key"?}``)."""
    op, el, value = step["op"], step["element"], step.get("value")
    whole = contract.element_selector(el)
    if op == "click":
        return [Gesture("click", contract.value_selector(el, value) if value else whole)]
    if op == "type":
        return [Gesture("fill", whole, value or "")]
    if op == "key_press":
        return [Gesture("press", whole, step.get("key") or "Enter")]
    if op in ("hover", "check", "uncheck"):
        return [Gesture(op, whole)]
    if op == "drag":
        return [Gesture("drag", whole, value)]
    return _select(_kind(spec, page_id, el), el, value or "")


def _select(kind: str, el: str, value: str) -> list[Gesture]:
    if kind == "select":
        return [Gesture("select_option", contract.element_selector(el), value)]
    if kind == "date_picker":
        toggle = f'{contract.element_selector(el)} [{contract.PART_ATTR}="toggle"]'
        return [Gesture("click", toggle), Gesture("click", contract.value_selector(el, value))]
    return [Gesture("click", contract.value_selector(el, value))]  # radio, tabs, menus


def _kind(spec: WorldSpec, page_id: str, element_id: str) -> str:
    page = spec.page(page_id)
    return next((e.kind for e in page.elements if e.id == element_id), "select")


def element_label(spec: WorldSpec, page_id: str, element_id: str) -> str:
    page = spec.page(page_id)
    return next((e.label for e in page.elements if e.id == element_id), element_id)
