"""Page layouts: how a site arranges its pages, chosen per world like its theme.

A layout only moves things around: result lists as a grid of cards, full-width rows or a
table; sort and filter controls above the results or in a panel beside them; the header's
link groups inline or as an open mega-menu; tab strips or an accordion; the site sidebar
left or right. It never changes which elements, options, forms or actions a page has, so
the FSM and the DOM contract are the same in every layout.

Worlds of generator versions 1 and 2 get the *classic* layout, derived from their theme:
the markup and stylesheet they had before layouts existed, byte for byte (held-out results
were measured on them).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from webworld.render.themes import Theme
from webworld.spec.models import WorldSpec

FIRST_LAYOUT_GENERATOR = 3
"""The first generator version whose worlds get a layout of their own (older: classic)."""

CHOICES: dict[str, tuple[str, ...]] = {
    "results": ("grid", "list", "table"),
    "filters": ("top", "left"),
    "nav": ("bar", "mega"),
    "sections": ("tabs", "accordion"),
    "sidebar": ("left", "right"),
}
"""Every layout field and its variants, the first of each being the classic one."""

_LISTING = {"grid": "cards", "list": "list", "table": "table"}


@dataclass(frozen=True)
class Layout:
    """One arrangement of a site's pages; ``classic`` marks today's markup exactly (no
    layout classes on <body>, the stylesheet of generator versions 1 and 2)."""

    results: Literal["grid", "list", "table"] = "grid"
    filters: Literal["top", "left"] = "top"
    nav: Literal["bar", "mega"] = "bar"
    sections: Literal["tabs", "accordion"] = "tabs"
    sidebar: Literal["left", "right"] = "left"
    classic: bool = False

    def __post_init__(self) -> None:
        for name, variants in CHOICES.items():
            if getattr(self, name) not in variants:
                raise ValueError(f"layout {name} must be one of {', '.join(variants)}, "
                                 f"not {getattr(self, name)!r}")

    @property
    def listing(self) -> str:
        """The ``listing`` argument of the result-list macros: cards, list or table."""
        return _LISTING[self.results]

    @property
    def name(self) -> str:
        """'classic', or the variants joined: 'list-left-mega-accordion-right'."""
        if self.classic:
            return "classic"
        return "-".join(getattr(self, f) for f in CHOICES)

    def body_classes(self) -> list[str]:
        """Classes of <body> the stylesheet's layout rules key on (none when classic)."""
        if self.classic:
            return []
        return [f"{f}-{getattr(self, f)}" for f in CHOICES]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def classic_layout(theme: Theme) -> Layout:
    """The layout a site had before layouts existed: its theme's listing, the rest as then."""
    return Layout(results="table" if theme.listing == "table" else "grid", classic=True)


def choose_layout(spec: WorldSpec, theme: Theme) -> Layout:
    """The layout a world gets by default: classic before generator version 3, else a stable
    hash of its id and seed (a key of its own, so independent of the theme's hash)."""
    if spec.provenance.generator_version < FIRST_LAYOUT_GENERATOR:
        return classic_layout(theme)
    key = f"layout:{spec.id}:{spec.provenance.seed}".encode()
    digest = hashlib.sha256(key).digest()
    picked = {name: variants[int.from_bytes(digest[2 * i:2 * i + 2], "big") % len(variants)]
              for i, (name, variants) in enumerate(CHOICES.items())}
    return Layout(**picked)


def layout_from_dict(data: Any) -> Layout:
    """A layout as a manifest records it; ValueError says what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("expected an object")
    known = {f.name for f in fields(Layout)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}")
    if not isinstance(data.get("classic", False), bool):
        raise ValueError("field 'classic' must be true or false")
    return Layout(**data)


def parse_layout(name: str) -> Layout:
    """A layout from its :attr:`Layout.name` ('list-left-mega-accordion-right'); 'classic'
    needs a theme, so it is not accepted here (see :func:`classic_layout`)."""
    parts = name.split("-")
    if len(parts) != len(CHOICES):
        raise ValueError(f"a layout name has {len(CHOICES)} parts "
                         f"({'-'.join(CHOICES)}), got {name!r}")
    return Layout(**dict(zip(CHOICES, parts, strict=True)))  # type: ignore[arg-type]
