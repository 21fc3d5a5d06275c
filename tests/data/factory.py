"""Records shaped exactly as webworld.data.records, with real PNG screenshots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image

from webworld.data.records import FailureRecord, VerifiedStep, VerifiedTrajectory

# world id -> (theme, screenshot size, number of trajectories)
WORLDS: dict[str, tuple[str, tuple[int, int], int]] = {
    "bookshop_easy_s0": ("online bookstore", (64, 48), 3),
    "flights_easy_s0": ("flight booking", (80, 40), 2),
    "hotels_easy_s0": ("hotel booking", (50, 70), 4),
}

# (op, element, element_label, value, action template, fsm_action, fsm_label, fsm_index)
_STEPS: list[tuple[str, str, str, str | None, str, str, str, int]] = [
    ("type", "search", "Search books", "dune", "fill('{bid}', 'dune')", "search", "Search books", 0),
    ("key_press", "search", "Search books", None, "press('{bid}', 'Enter')", "search",
     "Search books", 0),
    ("click", "result_links", "Open book", "Dune", "click('{bid}')", "open_item", "Open a book", 1),
    ("select", "format", "Format", "Paperback", "select_option('{bid}', 'Paperback')",
     "choose_format", "Choose format", 2),
    ("drag", "quantity", "Quantity", "2", "drag('{bid}', '2')", "set_quantity", "Set quantity", 3),
    ("check", "gift", "Gift wrap", None, "check('{bid}')", "check_gift", "Check gift wrap", 4),
    ("click", "add", "Add to cart", None, "click('{bid}')", "add_to_cart", "Add to cart", 5),
]


# Worlds whose screenshots are written as the verifier writes them (zlib's fastest level,
# webworld.browser.capture); the others as Playwright's page.screenshot() did (default level).
FAST_PNG_WORLDS = {"hotels_easy_s0"}


def write_png(path: Path, size: tuple[int, int], shade: int, *, fast: bool = False) -> None:
    """A striped picture (so deflate levels differ), ``shade`` making it unique."""
    path.parent.mkdir(parents=True, exist_ok=True)
    width, height = size
    pixels = bytes(v for y in range(height) for x in range(width)
                   for v in ((shade + x * 7) % 256, (y * 13) % 256, (x * y + shade) % 256))
    Image.frombytes("RGB", size, pixels).save(path, format="PNG", compress_level=1 if fast else 6)


def make_trajectory(world: str, t: int, world_dir: Path | None) -> VerifiedTrajectory:
    """Trajectory ``t`` of ``world``; its screenshots are written under ``world_dir`` if given."""
    theme, size, _ = WORLDS[world]
    tid = f"{world}-buy-{t}"
    n_steps = 3 + (t % 3) * 2  # 3, 5 or 7 steps
    steps: list[VerifiedStep] = []
    for i, (op, el, label, value, action, fsm, fsm_label, fsm_i) in enumerate(_STEPS[:n_steps]):
        bid = str(10 + i)
        shot = f"images/{tid}/{i}.png"
        if world_dir is not None:
            write_png(world_dir / shot, size, shade=t * 10 + i, fast=world in FAST_PNG_WORLDS)
        steps.append({
            "index": i, "fsm_index": fsm_i, "fsm_action": fsm, "fsm_label": fsm_label,
            "op": op, "element": el, "element_label": label, "value": value,
            "action": action.format(bid=bid), "bid": bid,
            "bbox": [10.0 * i, 20.5, 100.0, 30.0] if i % 2 == 0 else None,
            "observation": {
                "url": f"http://127.0.0.1:8000/w/{world}/page/p{i}",
                "axtree": "\n".join([f"RootWebArea '{theme} page {i}'",
                                     f"  [{bid}] {op} '{label}'",
                                     "  [99] link 'Home'"]),
                "screenshot": shot,
            },
            "page": f"p{i + 1}",
        })
    return {
        "id": tid, "world_id": world, "task_id": "buy",
        "intent": f"Buy Dune as a paperback, 2 copies (task {t})",
        "slots": {"title": "Dune", "format": "Paperback", "copies": 2},
        "length": steps[-1]["fsm_index"] + 1, "shortest_length": 2, "theme": theme,
        "viewport": list(size), "steps": steps, "final_state": {"cart": ["Dune"]},
        "seconds": 1.5,
    }


def make_failure(world: str, n: int, failure: str) -> FailureRecord:
    return {"id": f"{world}-fail-{n}", "world_id": world, "task_id": "buy", "failure": failure,
            "step": 2, "fsm_action": "open_item", "message": "boom", "seconds": 0.4}


def dump(records: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def make_traj_root(root: Path) -> dict[str, list[VerifiedTrajectory]]:
    """Three worlds; the first has a truncated last line, two have failures.jsonl."""
    made: dict[str, list[VerifiedTrajectory]] = {}
    for w, (_, _, count) in WORLDS.items():
        wdir = root / w
        wdir.mkdir(parents=True)
        trajs = [make_trajectory(w, t, wdir) for t in range(count)]
        made[w] = trajs
        text = dump(trajs)
        if w == "bookshop_easy_s0":  # a run killed mid-write
            text += json.dumps(make_trajectory(w, 99, wdir))[:150]
        (wdir / "verified.jsonl").write_text(text)
        (wdir / "candidates.jsonl").write_text("{}\n")
    (root / "bookshop_easy_s0" / "failures.jsonl").write_text(dump([
        make_failure("bookshop_easy_s0", 0, "element_covered"),
        make_failure("bookshop_easy_s0", 1, "state_mismatch"),
        make_failure("bookshop_easy_s0", 2, "element_covered")]))
    (root / "hotels_easy_s0" / "failures.jsonl").write_text(dump([
        make_failure("hotels_easy_s0", 0, "navigation_timeout")]))
    return made
