"""Visual themes: palette, typography and layout choices; any spec renders in any theme.

A theme only changes how a site looks (CSS custom properties, body classes and two
structural switches: top navigation vs sidebar, listings as cards vs tables). It never
changes which elements, options or forms a page has, so the DOM contract holds in all
of them. Fonts are system stacks only (no downloads).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Literal

from webworld.spec.models import WorldSpec

SANS = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Liberation Sans", sans-serif'
HUMANIST = '"Segoe UI", "Trebuchet MS", "Lucida Grande", "DejaVu Sans", Verdana, sans-serif'
GROTESK = '"Helvetica Neue", Helvetica, Arial, "Liberation Sans", sans-serif'
SERIF = 'Georgia, "Iowan Old Style", "Palatino Linotype", "DejaVu Serif", serif'
OLDSTYLE = '"Book Antiqua", Palatino, "Times New Roman", "Liberation Serif", serif'
MONO = 'ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace'
NARROW = '"Arial Narrow", "Roboto Condensed", "Liberation Sans Narrow", "Helvetica Neue", sans-serif'


@dataclass(frozen=True)
class Theme:
    """One look. Colours are CSS colour strings; ``radius`` is in px."""

    name: str
    label: str
    layout: Literal["topnav", "sidebar"]
    listing: Literal["cards", "table"]
    mode: Literal["light", "dark"]
    density: Literal["dense", "airy"]
    # palette
    bg: str
    surface: str
    surface_alt: str
    text: str
    muted: str
    border: str
    primary: str
    primary_text: str
    accent: str
    header_bg: str
    header_text: str
    hero_from: str
    hero_to: str
    danger: str = "#c0392b"
    success: str = "#1e8e3e"
    # typography and shape
    font_body: str = SANS
    font_heading: str = SANS
    heading_weight: int = 700
    base_size: int = 16
    radius: int = 8
    nav_uppercase: bool = False

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


_THEMES = [
    Theme(
        name="harbor", label="Harbor", layout="topnav", listing="cards", mode="light",
        density="airy", bg="#f5f7fb", surface="#ffffff", surface_alt="#eef2f8",
        text="#1b2433", muted="#5b6678", border="#dbe1ea", primary="#1f5fd1",
        primary_text="#ffffff", accent="#f2a33a", header_bg="#ffffff", header_text="#1b2433",
        hero_from="#1f5fd1", hero_to="#3fa0e8", font_body=SANS, font_heading=SANS, radius=10,
    ),
    Theme(
        name="midnight", label="Midnight", layout="sidebar", listing="table", mode="dark",
        density="dense", bg="#0f1420", surface="#171e2e", surface_alt="#1f2840",
        text="#e6eaf3", muted="#98a2b8", border="#2b3550", primary="#6d8bff",
        primary_text="#0b1020", accent="#38d0b4", header_bg="#121826", header_text="#e6eaf3",
        hero_from="#28346b", hero_to="#16324a", danger="#ff6b6b", success="#3ddc97",
        font_body=SANS, font_heading=GROTESK, base_size=14, radius=6,
    ),
    Theme(
        name="meadow", label="Meadow", layout="topnav", listing="cards", mode="light",
        density="airy", bg="#f4f8f2", surface="#ffffff", surface_alt="#e8f1e4",
        text="#1f2b1d", muted="#5d6b59", border="#d5e2cf", primary="#2f7d32",
        primary_text="#ffffff", accent="#e0794a", header_bg="#2f7d32", header_text="#ffffff",
        hero_from="#2f7d32", hero_to="#8bbf4a", font_body=HUMANIST, font_heading=HUMANIST,
        radius=14,
    ),
    Theme(
        name="ledger", label="Ledger", layout="sidebar", listing="table", mode="light",
        density="dense", bg="#f7f6f2", surface="#ffffff", surface_alt="#f0ede4",
        text="#14213d", muted="#5c6475", border="#ddd8cb", primary="#14213d",
        primary_text="#ffffff", accent="#c9a227", header_bg="#14213d", header_text="#f3f0e6",
        hero_from="#14213d", hero_to="#2d4270", font_body=SANS, font_heading=SERIF,
        heading_weight=600, base_size=14, radius=4,
    ),
    Theme(
        name="ember", label="Ember", layout="topnav", listing="table", mode="dark",
        density="airy", bg="#161412", surface="#211e1b", surface_alt="#2b2723",
        text="#f1ece6", muted="#b0a699", border="#3a342e", primary="#ff7a2f",
        primary_text="#1a0f06", accent="#ffc15e", header_bg="#0f0d0c", header_text="#f1ece6",
        hero_from="#5a2a12", hero_to="#2a1a10", danger="#ff6b5b", success="#5fd38d",
        font_body=GROTESK, font_heading=NARROW, radius=6, nav_uppercase=True,
    ),
    Theme(
        name="blossom", label="Blossom", layout="sidebar", listing="cards", mode="light",
        density="airy", bg="#fdf6f9", surface="#ffffff", surface_alt="#fbe8f0",
        text="#2d1b26", muted="#7a6170", border="#f0d6e2", primary="#c2185b",
        primary_text="#ffffff", accent="#7c4dff", header_bg="#fff0f6", header_text="#2d1b26",
        hero_from="#c2185b", hero_to="#f06292", font_body=HUMANIST, font_heading=SERIF,
        radius=16,
    ),
    Theme(
        name="graphite", label="Graphite", layout="topnav", listing="table", mode="light",
        density="dense", bg="#f2f2f2", surface="#ffffff", surface_alt="#e9e9e9",
        text="#111111", muted="#5f5f5f", border="#d0d0d0", primary="#d62828",
        primary_text="#ffffff", accent="#111111", header_bg="#111111", header_text="#ffffff",
        hero_from="#222222", hero_to="#444444", font_body=GROTESK, font_heading=GROTESK,
        heading_weight=800, base_size=14, radius=0, nav_uppercase=True,
    ),
    Theme(
        name="aurora", label="Aurora", layout="sidebar", listing="cards", mode="dark",
        density="airy", bg="#120f1f", surface="#1c1830", surface_alt="#262042",
        text="#ece8ff", muted="#a49cc7", border="#342c57", primary="#a78bfa",
        primary_text="#160f2e", accent="#22d3ee", header_bg="#17132a", header_text="#ece8ff",
        hero_from="#5b21b6", hero_to="#0e7490", danger="#fb7185", success="#4ade80",
        font_body=SANS, font_heading=SANS, heading_weight=800, radius=12,
    ),
    Theme(
        name="sandstone", label="Sandstone", layout="topnav", listing="cards", mode="light",
        density="dense", bg="#faf6ef", surface="#fffdf8", surface_alt="#f3ebdc",
        text="#3b2f22", muted="#7a6a55", border="#e6dac5", primary="#9c4a1a",
        primary_text="#fffaf2", accent="#3f7d6e", header_bg="#f3ebdc", header_text="#3b2f22",
        hero_from="#b8652f", hero_to="#d9a45b", font_body=SERIF, font_heading=OLDSTYLE,
        heading_weight=700, base_size=15, radius=6,
    ),
    Theme(
        name="nordic", label="Nordic", layout="sidebar", listing="table", mode="light",
        density="airy", bg="#eef2f5", surface="#ffffff", surface_alt="#e3e9ee",
        text="#22313f", muted="#627282", border="#d3dce4", primary="#2b6e8f",
        primary_text="#ffffff", accent="#e76f51", header_bg="#22313f", header_text="#e9eff4",
        hero_from="#2b6e8f", hero_to="#5fa8c7", font_body=HUMANIST, font_heading=GROTESK,
        heading_weight=600, radius=8,
    ),
    Theme(
        name="terminal", label="Terminal", layout="topnav", listing="table", mode="dark",
        density="dense", bg="#0b0f0c", surface="#111813", surface_alt="#18221b",
        text="#d7f5dd", muted="#8fb197", border="#24362a", primary="#3ddc84",
        primary_text="#06140b", accent="#f4d35e", header_bg="#080b09", header_text="#d7f5dd",
        hero_from="#0f3d22", hero_to="#0b1f14", danger="#ff6b6b", success="#3ddc84",
        font_body=MONO, font_heading=MONO, base_size=14, radius=3,
    ),
]

THEMES: dict[str, Theme] = {t.name: t for t in _THEMES}
"""Every theme by name, in a fixed order."""


def choose_theme(spec: WorldSpec) -> str:
    """The theme a world gets by default: a stable hash of its id and seed."""
    key = f"{spec.id}:{spec.provenance.seed}".encode()
    digest = int.from_bytes(hashlib.sha256(key).digest()[:8], "big")
    names = sorted(THEMES)
    return names[digest % len(names)]
