"""The README is what a newcomer needs (what webworld is, the two commands, a tour, where to
read on) within 200 lines; the reference it links to is there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_is_short_and_every_page_it_links_exists() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for heading in ("## The two commands", "## A five-minute tour"):
        assert heading in readme
    links = re.findall(r"\]\(([^)#]+\.md)\)", readme)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link
    for page in ("docs/specs.md", "docs/sites.md", "docs/environments.md", "docs/training.md",
                 "docs/scale.md", "docs/dashboard.md", "docs/llm.md", "docs/robustness.md",
                 "docs/layout.md"):
        assert page in links, page
