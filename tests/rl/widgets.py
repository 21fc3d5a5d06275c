"""A hand-made world with every client-side widget behaviour the fast env models.

The procedural worlds rarely combine them on one page: tabs and calendar days that only
*pick* (a hidden field) before a submit button, a text field shared by two forms (a
mirrored field), a typed date field submitted with Enter, a menu whose items pick, and
non-submitting checkbox, slider and list controls, and a blocking dialog over them all.
"""

from __future__ import annotations

from typing import Any

from webworld.spec.models import WorldSpec

DATES = ["2026-12-01", "2026-12-02", "2026-12-03"]


def _el(id: str, kind: str, label: str, **kw: Any) -> dict[str, Any]:
    return {"id": id, "kind": kind, "label": label, **kw}


def _step(op: str, element: str, value: str | None = None, **kw: Any) -> dict[str, Any]:
    return {"op": op, "element": element, **({"value": value} if value else {}), **kw}


def _param(name: str, domain: list, label: str) -> dict[str, Any]:
    return {"name": name, "domain": domain, "label": label}


def _set(var: str, param: str) -> dict[str, Any]:
    return {"op": "set_param", "var": var, "param": param}


def _terminal(id: str, title: str) -> dict[str, Any]:
    return {"id": id, "title": title, "terminal": True,
            "content": [{"kind": "text", "title": title, "text": "All done."}]}


def make_widget_world() -> WorldSpec:
    return WorldSpec.model_validate({
        "id": "widget_lab", "name": "Widget Lab", "theme": "travel agency", "home": "home",
        "variables": [
            {"name": "category", "type": "enum", "values": ["Books", "Music"]},
            {"name": "section", "type": "enum", "values": ["Info", "Book"]},
            {"name": "day", "type": "enum", "values": DATES},
            {"name": "size", "type": "enum", "values": ["Small", "Large"]},
            {"name": "guests", "type": "int", "min": 0, "max": 3},
            {"name": "traveller", "type": "enum", "values": ["Ada Lovelace", "Bob"]},
            {"name": "order", "type": "enum", "values": ["Newest", "Oldest"]},
            {"name": "arrival", "type": "enum", "values": DATES},
            {"name": "help_open", "type": "bool"},
        ],
        "pages": [
            {"id": "home", "title": "Widget Lab", "elements": [
                _el("browse", "hover_menu", "Browse", options=["Books", "Music"]),
                _el("sort", "hover_menu", "Sort by", options=["Newest", "Oldest"]),
                _el("apply_sort", "button", "Apply sort"),
                _el("section", "tabs", "Sections", options=["Info", "Book"]),
                _el("day", "date_picker", "Travel day", options=DATES),
                _el("full_name", "text_input", "Full name"),
                _el("size", "select", "Room size", options=["Small", "Large"]),
                _el("agree", "checkbox", "I accept the terms"),
                _el("guests", "slider", "Guests", min=1, max=3, step=1),
                _el("book", "button", "Book now"),
                _el("save_name", "button", "Save my name"),
                _el("arrive", "date_picker", "Arrival", options=DATES),
                _el("help", "button", "Help"),
                _el("help_dialog", "modal", "How booking works", blocking=True,
                    visible_when=[{"var": "help_open", "op": "eq", "value": True}]),
                _el("close_help", "button", "Close", parent="help_dialog"),
            ], "actions": [
                {"id": "open_help", "label": "Open help", "gui": [_step("click", "help")],
                 "effects": [{"op": "set", "var": "help_open", "value": True}]},
                {"id": "close_help_dialog", "label": "Close help",
                 "gui": [_step("click", "close_help")],
                 "effects": [{"op": "set", "var": "help_open", "value": False}]},
                {"id": "browse_category", "label": "Browse a category",
                 "gui": [_step("hover", "browse"), _step("click", "browse", "{c}")],
                 "params": [_param("c", ["Books", "Music"], "Category")],
                 "effects": [_set("category", "c")], "navigate": "results"},
                {"id": "sort_results", "label": "Sort",
                 "gui": [_step("hover", "sort"), _step("click", "sort", "{o}"),
                         _step("click", "apply_sort")],
                 "params": [_param("o", ["Newest", "Oldest"], "Order")],
                 "effects": [_set("order", "o")], "navigate": "sorted"},
                {"id": "book_trip", "label": "Book a trip",
                 "gui": [_step("select", "section", "{s}"), _step("select", "day", "{d}"),
                         _step("type", "full_name", "{n}"), _step("select", "size", "{z}"),
                         _step("check", "agree"), _step("drag", "guests", "{g}"),
                         _step("click", "book")],
                 "params": [_param("s", ["Info", "Book"], "Section"), _param("d", DATES, "Day"),
                            _param("n", ["Ada Lovelace", "Bob"], "Name"),
                            _param("z", ["Small", "Large"], "Size"), _param("g", [1, 2, 3], "Guests")],
                 "guards": [{"param": "n", "op": "in", "value": ["Ada Lovelace"],
                             "message": "We only know Ada Lovelace."}],
                 "effects": [_set("section", "s"), _set("day", "d"), _set("traveller", "n"),
                             _set("size", "z"), _set("guests", "g")], "navigate": "booked"},
                {"id": "remember_name", "label": "Save my name",
                 "gui": [_step("type", "full_name", "{who}"), _step("click", "save_name")],
                 "params": [_param("who", ["Ada Lovelace", "Bob"], "Name")],
                 "effects": [_set("traveller", "who")]},
                {"id": "set_arrival", "label": "Set arrival",
                 "gui": [_step("type", "arrive", "{a}"), _step("key_press", "arrive", key="Enter")],
                 "params": [_param("a", DATES, "Arrival")],
                 "effects": [_set("arrival", "a")], "navigate": "arrived"},
            ]},
            {"id": "results", "title": "Results", "terminal": True,
             "content": [{"kind": "text", "title": "Results", "text": "Here they are."}]},
            _terminal("booked", "Trip booked"),
            _terminal("sorted", "Sorted"),
            _terminal("arrived", "Arrival saved"),
        ],
        "tasks": [
            {"id": "browse", "goal": {"page": "results"}, "slots": ["category"],
             "intents": ["Browse {category}."]},
            {"id": "book", "goal": {"page": "booked"}, "slots": ["day", "size", "guests"],
             "intents": ["Book a {size} room on {day} for {guests}."]},
            {"id": "sort", "goal": {"page": "sorted"}, "slots": ["order"],
             "intents": ["Sort by {order}."]},
            {"id": "arrive", "goal": {"page": "arrived"}, "slots": ["arrival"],
             "intents": ["Set the arrival to {arrival}."]},
        ],
    })
