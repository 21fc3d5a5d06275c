"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path
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


# --- rendered worlds, served on loopback (render / serve / verify tests) -------------------


class World:
    """A generated, rendered and explored world in a temp folder."""

    def __init__(self, root, theme_name: str, profile: str = "easy", seed: int = 0,
                 site_theme: str | None = None, **caps: int) -> None:
        from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
        from webworld.propose.procedural import generate
        from webworld.render.site import render_site

        self.spec = generate(theme_name, profile, seed).spec
        self.site_dir = render_site(self.spec, root / "sites" / self.spec.id, theme=site_theme)
        self.traj_root = root / "trajectories"
        config = ExploreConfig(**{"max_shortest": 1, "max_longer": 0, "max_instances": 1,
                                  **caps})
        self.explored = explore_world(self.spec, config)
        write_candidates(self.explored, self.traj_root / self.spec.id)

    @property
    def world_dir(self):
        return self.traj_root / self.spec.id


@pytest.fixture(scope="session")
def bookstore(tmp_path_factory) -> World:
    """An easy bookstore world, rendered and explored once per test session (read-only)."""
    return World(tmp_path_factory.mktemp("bookstore"), "online bookstore")


@pytest.fixture(scope="session")
def button_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-button board (webworld.train.sanity), built and verified, with a start policy that
    presses a button at random in ``start/``: one per test session, for every worker."""
    import torch

    from tests.rl.conftest import shared
    from webworld.train.sanity import board_spec, build_board, format_warm_start

    def make(root: Path) -> None:
        torch.set_num_threads(1)
        build_board(root, board_spec(seed=0, buttons=4))
        format_warm_start(root, root / "start", seed=0)
    return shared(tmp_path_factory, "board", make)
