"""Natural-language task intents from templates: ``"Buy {selected_item}"`` -> ``"Buy Dune"``."""

from __future__ import annotations

import hashlib
import re

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


def fill(template: str, values: dict[str, object]) -> str:
    """Replace ``{name}`` with its value; unknown names are left as written."""

    def sub(match: re.Match[str]) -> str:
        value = values.get(match.group(1), match.group(0))
        return "" if value is None else str(value)

    return PLACEHOLDER.sub(sub, template)


def placeholders(template: str) -> set[str]:
    return set(PLACEHOLDER.findall(template))


def pick_template(templates: list[str], key: str) -> str:
    """A stable choice of phrasing per trajectory, so phrasings vary across a dataset."""
    digest = int(hashlib.sha1(key.encode()).hexdigest(), 16)
    return templates[digest % len(templates)]
