"""CSS text the site coder accepts from a model: hex colours and the extra rules of a style
guide, checked by patterns (no imports, no fonts, no resources, nothing that hides controls)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}){1,2}$")


def hex_colour(value: str) -> str:
    value = value.strip()
    if not _HEX.match(value):
        raise ValueError(f"{value!r} is not a hex colour like #1f5fd1")
    if len(value) == 4:
        value = "#" + "".join(c * 2 for c in value[1:])
    return value.lower()


HexColor = Annotated[str, AfterValidator(hex_colour)]


_CSS_FORBIDDEN = (
    (re.compile(r"\\"), "backslash escapes are not allowed"),
    (re.compile(r"@import", re.I), "@import is not allowed: the stylesheet must be self-contained"),
    (re.compile(r"@font-face", re.I), "@font-face is not allowed: choose fonts from the fixed list"),
    (re.compile(r"\burl\s*\(", re.I),
     "url(...) is not allowed: the site has no image or font files, and a url() would load "
     "something from another origin or request a page of the site"),
    (re.compile(r"\b(?:image-set|image|src|cross-fade)\s*\(", re.I),
     "image-set()/image()/src() are not allowed (they load resources)"),
    (re.compile(r"[a-z][a-z0-9+.-]*://|(?:^|[\s('\"])//", re.I),
     "addresses of other hosts are not allowed"),
    (re.compile(r"expression\s*\(|javascript:|behavior\s*:|-moz-binding", re.I),
     "scripting in CSS is not allowed"),
    (re.compile(r"<"), "'<' is not allowed (no HTML in CSS)"),
    (re.compile(r"data-ww", re.I),
     "selectors on data-ww-* attributes are not allowed (they belong to the test harness)"),
    (re.compile(r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|pointer-events\s*:"
                r"\s*none", re.I),
     "hiding content (display:none, visibility:hidden, pointer-events:none) is not allowed: "
     "every control must stay visible and clickable"),
)


def css_problems(css: str) -> list[str]:
    """Why extra CSS rules are unacceptable (empty when they are fine)."""
    problems = [message for pattern, message in _CSS_FORBIDDEN if pattern.search(css)]
    text = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    if "/*" in text:
        problems.append("a comment is not closed with */")
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            break
    if depth != 0:
        problems.append("the braces { } are not balanced")
    return problems

