"""Stage 1 of the site coder: the style guide a model replies with, and the stylesheet made
from it (the nearest built-in theme with the guide's palette and fonts, plus extra rules)."""

from __future__ import annotations

import dataclasses
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from webworld.agents.site_coder.css import HexColor, css_problems, hex_colour
from webworld.render import assets, themes
from webworld.render.themes import THEMES, Theme

MAX_EXTRA_CSS_CHARS = 4_000

FONTS: dict[str, str] = {
    "sans": themes.SANS, "humanist": themes.HUMANIST, "grotesk": themes.GROTESK,
    "serif": themes.SERIF, "oldstyle": themes.OLDSTYLE, "mono": themes.MONO,
    "narrow": themes.NARROW,
}
FontChoice = Literal["sans", "humanist", "grotesk", "serif", "oldstyle", "mono", "narrow"]


class Palette(BaseModel):
    """Colours of the site (CSS custom properties of the theme)."""

    bg: HexColor = Field(description="page background")
    surface: HexColor = Field(description="cards, forms, dialogs")
    surface_alt: HexColor = Field(description="subtle fills: table heads, chips")
    text: HexColor
    muted: HexColor = Field(description="secondary text")
    border: HexColor
    primary: HexColor = Field(description="main buttons and links")
    primary_text: HexColor = Field(description="text on primary")
    accent: HexColor
    header_bg: HexColor
    header_text: HexColor
    hero_from: HexColor = Field(description="hero gradient start")
    hero_to: HexColor = Field(description="hero gradient end")
    danger: HexColor | None = None
    success: HexColor | None = None



class StyleGuide(BaseModel):
    """The look of a site: reply of stage 1."""

    label: str = Field("", max_length=40, pattern=r"^[A-Za-z0-9 ,.'&-]*$",
                       description="a short name for the look (letters, digits, spaces)")
    palette: Palette
    font_body: FontChoice
    font_heading: FontChoice
    heading_weight: int = Field(700, ge=400, le=900)
    radius: int = Field(8, ge=0, le=24, description="corner radius in px")
    nav_uppercase: bool = False
    layout: Literal["topnav", "sidebar"]
    listing: Literal["cards", "table"] = Field(description="result lists as cards or a table")
    mode: Literal["light", "dark"]
    density: Literal["dense", "airy"]
    extra_css: str = Field("", max_length=MAX_EXTRA_CSS_CHARS,
                           description="a few extra CSS rules appended to the stylesheet")

    @field_validator("extra_css")
    @classmethod
    def _safe_css(cls, value: str) -> str:
        problems = css_problems(value)
        if problems:
            raise ValueError("extra_css rejected: " + "; ".join(problems))
        return value.strip()



_DENSITY_VARS = {"dense": "--gap: 12px; --pad: 14px; --section: 22px; --control-h: 36px;",
                 "airy": "--gap: 20px; --pad: 22px; --section: 36px; --control-h: 44px;"}


def _distance(a: str, b: str) -> int:
    try:
        x, y = hex_colour(a), hex_colour(b)
    except ValueError:
        return 3 * 255
    return sum(abs(int(x[i:i + 2], 16) - int(y[i:i + 2], 16)) for i in (1, 3, 5))


def nearest_theme(style: StyleGuide) -> Theme:
    """The built-in theme closest to a style guide: same layout and listing (they shape the
    page), then mode, density and colours."""
    def score(t: Theme) -> float:
        p = style.palette
        colours = sum(_distance(getattr(t, k), getattr(p, k)) for k in ("bg", "primary", "text"))
        return ((t.layout != style.layout) * 1e6 + (t.listing != style.listing) * 1e6
                + (t.mode != style.mode) * 1e4 + (t.density != style.density) * 1e3 + colours)
    return min(THEMES.values(), key=score)


def style_css(base: Theme, style: StyleGuide) -> tuple[Theme, str]:
    """The site's stylesheet: the base theme with the guide's palette and fonts, then the
    extra rules. Returns the customised theme (for the favicon) and the CSS."""
    palette = {k: v for k, v in style.palette.model_dump().items() if v is not None}
    theme = dataclasses.replace(
        base, label=style.label or base.label, mode=style.mode, font_body=FONTS[style.font_body],
        font_heading=FONTS[style.font_heading], heading_weight=style.heading_weight,
        radius=style.radius, nav_uppercase=style.nav_uppercase, **palette)
    css = assets.theme_css(theme)
    if style.density != base.density:
        css += (f"\n/* density: {style.density} */\nbody.density-{base.density} "
                f"{{ {_DENSITY_VARS[style.density]} }}\n")
    if style.extra_css:
        css += f"\n/* style guide: extra rules */\n{style.extra_css}\n"
    return theme, css


