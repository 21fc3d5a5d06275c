"""Complexity profiles, with the AutoWebWorld paper's ranges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ProfileName = Literal["easy", "medium", "hard"]


@dataclass(frozen=True)
class Profile:
    name: ProfileName
    pages: tuple[int, int]
    actions_per_page: tuple[int, int]
    terminals: int
    path_length: tuple[int, int]
    swap_share: float  # of new worlds whose site updates in place (the rest navigate)


PROFILES: dict[str, Profile] = {
    "easy": Profile("easy", (10, 15), (3, 5), 3, (4, 6), 0.75),
    "medium": Profile("medium", (15, 25), (4, 6), 5, (6, 8), 0.75),
    "hard": Profile("hard", (25, 35), (4, 6), 5, (6, 8), 0.8),
}
