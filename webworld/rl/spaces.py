"""The gymnasium spaces of webworld's environments: text in, text out."""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium import spaces

from webworld.browser.launch import VIEWPORT

MAX_PAGE_CHARS = 1_000_000
MAX_ACTION_CHARS = 10_000


class Unicode(spaces.Text):
    """Any string up to ``max_length`` characters (gymnasium's Text accepts only its
    charset; pages and replies hold any character). Samples are printable ASCII."""

    def __init__(self, max_length: int) -> None:
        super().__init__(max_length=max_length, min_length=0,
                         charset=string.ascii_letters + string.digits + string.punctuation + " ")

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"Unicode({self.max_length})"


def observation_space(*, screenshot: bool) -> spaces.Dict:
    """goal, url, accessibility text, last action and its error (and the screenshot)."""
    fields: dict[str, spaces.Space] = {
        "goal": Unicode(MAX_PAGE_CHARS),
        "url": Unicode(MAX_PAGE_CHARS),
        "axtree": Unicode(MAX_PAGE_CHARS),
        "last_action": Unicode(MAX_ACTION_CHARS),
        "last_action_error": Unicode(MAX_ACTION_CHARS),
    }
    if screenshot:
        fields["screenshot"] = spaces.Box(0, 255, (VIEWPORT["height"], VIEWPORT["width"], 3),
                                          dtype=np.uint8)
    return spaces.Dict(fields)


def action_space() -> Unicode:
    """An action of :mod:`webworld.browser.actions`, or a whole ``Thought/Action`` reply."""
    return Unicode(MAX_ACTION_CHARS)
