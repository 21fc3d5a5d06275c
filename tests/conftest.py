"""Shared test fixtures."""

from __future__ import annotations

from typing import Any

import pytest

from webworld.spec.models import WorldSpec


def _act(id: str, gui: list[tuple[str, str, str | None]], **kw: Any) -> dict[str, Any]:
    steps = [{"op": op, "element": el, **({"value": v} if v else {})} for op, el, v in gui]
    return {"id": id, "label": id.replace("_", " ").capitalize(), "gui": steps, **kw}


def _el(id: str, kind: str, **kw: Any) -> dict[str, Any]:
    return {"id": id, "kind": kind, "label": id.replace("_", " ").capitalize(), **kw}


def make_small_world() -> WorldSpec:
    """A tiny valid shop: search from home, add to cart on results, check out from cart.

    No validator findings at all (see tests/spec/test_validate.py); about 30 states.
    """
    items = ["shoes", "hats"]
    back = {"is_back": True, "navigate": "home"}
    return WorldSpec.model_validate({
        "id": "small_shop", "name": "Small shop", "theme": "shop", "home": "home",
        "variables": [
            {"name": "query", "type": "enum", "values": items},
            {"name": "cart", "type": "list", "values": items, "max_length": 2},
        ],
        "pages": [
            {"id": "home", "title": "Home", "elements": [
                _el("search", "search_box"), _el("go", "button"), _el("cart_link", "link")],
             "actions": [
                _act("search", [("type", "search", "{q}"), ("click", "go", None)],
                     params=[{"name": "q", "domain": items}], navigate="results",
                     effects=[{"op": "set_param", "var": "query", "param": "q"}]),
                _act("open_cart", [("click", "cart_link", None)], navigate="cart")]},
            {"id": "results", "title": "Results", "role": "results", "elements": [
                _el("item_pick", "select", options=items), _el("add", "button"),
                _el("back", "link")],
             "actions": [
                _act("add_to_cart", [("select", "item_pick", "{item}"), ("click", "add", None)],
                     params=[{"name": "item", "domain": items}],
                     guards=[{"var": "query", "op": "exists"}],
                     effects=[{"op": "append", "var": "cart", "param": "item"}]),
                _act("results_back", [("click", "back", None)], **back)]},
            {"id": "cart", "title": "Cart", "elements": [
                _el("checkout", "button"), _el("back", "link")],
             "actions": [
                _act("checkout", [("click", "checkout", None)], navigate="done",
                     guards=[{"var": "cart", "op": "length_gt", "value": 0}]),
                _act("cart_back", [("click", "back", None)], **back)]},
            {"id": "done", "title": "Order placed", "terminal": True},
        ],
        "tasks": [{"id": "buy", "goal": {"page": "done", "conditions": [
            {"var": "cart", "op": "length_gt", "value": 0}]},
            "slots": ["query"], "intents": ["Buy some {query}"]}],
    })


@pytest.fixture
def small_world() -> WorldSpec:
    """A fresh copy of :func:`make_small_world` for each test (tests may mutate it)."""
    return make_small_world()
