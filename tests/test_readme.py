"""The README is what a newcomer needs (what webworld is, the two commands, a tour, where to
read on) within 120 lines; docs/ holds the guides (at most 12 pages at its top), the results
page stays short, and every page or file the README and the guides name is there."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *GUIDES]

TWO_COMMANDS = """```bash
./scripts/run.sh     # set up, then build the offline default: 3 worlds -> verified dataset
./scripts/test.sh    # set up, then run the test suite (what CI runs)
```"""

# a path into the repo written in backticks (`docs/x.md`, `scripts/setup.sh dev`), not a
# placeholder (`experiments/<study>/`) nor a gymnasium id (`webworld/Fast-v0`)
REPO_PATH = re.compile(r"`((?:docs|experiments|recipes|scripts|bench|examples|tests|webworld)/[^`\s]*)")
NOT_A_PATH = re.compile(r"<|-v\d+$")
RECIPE = re.compile(r"recipes/[\w-]+\.toml")
MD_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
FENCE = re.compile(r"```(?:bash|sh)?\n(.*?)```", re.DOTALL)
INLINE_COMMAND = re.compile(r"`(webworld [^`]+)`")


def section(text: str, heading: str) -> str:
    """The text under `heading` up to the next heading of its level or above."""
    start = text.index(heading) + len(heading)
    following = re.search(r"^#{1,2} ", text[start:], flags=re.MULTILINE)
    return text[start:start + following.start()] if following else text[start:]


def test_the_readme_is_short_and_keeps_its_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 120
    for heading in ("## The two commands", "## A five-minute tour"):
        assert heading in readme
    assert TWO_COMMANDS in section(readme, "## The two commands")


def test_the_readme_links_every_guide() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = set(MD_LINK.findall(readme))
    for page in ("docs/specs.md", "docs/sites.md", "docs/environments.md", "docs/training.md",
                 "docs/recipes.md", "docs/learning.md", "docs/scale.md", "docs/dashboard.md",
                 "docs/llm.md", "docs/robustness.md", "docs/layout.md", "experiments/README.md"):
        assert page in links, page


def test_docs_holds_at_most_twelve_guides_and_a_short_results_page() -> None:
    assert 0 < len(GUIDES) <= 12, [p.name for p in GUIDES]
    results = (ROOT / "docs" / "learning.md").read_text(encoding="utf-8")
    assert len(results.splitlines()) <= 150
    for suite in ("held-out", "training worlds", "MiniWoB++"):
        assert suite in results, suite
    assert "webworld recipe run recipes/smollm2.toml" in results


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_and_named_path_of_a_page_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    missing = [link for link in MD_LINK.findall(text)
               if "://" not in link and not (page.parent / link).exists()]
    named = [p for p in REPO_PATH.findall(text) if not NOT_A_PATH.search(p)]
    named += RECIPE.findall(text)
    missing += [path for path in named if not (ROOT / path).exists()]
    assert not missing, missing


def command_lines(text: str) -> Iterator[tuple[str, bool]]:
    """Each `webworld ...` line of a page, and whether it is a code block's (a whole command)
    rather than prose's (which may be a synopsis: `webworld eval turns --study ...`)."""
    for block in FENCE.findall(text):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            if line.strip().startswith("webworld "):
                yield line.strip(), True
    for line in INLINE_COMMAND.findall(FENCE.sub("", text)):
        yield line, False


@cache
def webworld_command() -> Any:  # typer's own click command class
    from typer.main import get_command

    from webworld.cli.main import app

    return get_command(app)


def parse(args: list[str]) -> None:
    """Parse a command line as `webworld` would, down to its command, without running it."""
    command = webworld_command()
    context = command.make_context("webworld", args)
    while hasattr(command, "resolve_command"):  # a group: descend into its sub-command
        rest = [*context._protected_args, *context.args]
        if not rest:
            return
        name, command, rest = command.resolve_command(context, rest)
        context = command.make_context(name, rest, parent=context)


def usage_problem(line: str, whole: bool) -> str | None:
    try:
        parse(shlex.split(line, comments=True)[1:])
    except Exception as exc:  # typer's click raises its own exception classes
        kinds = {cls.__name__ for cls in type(exc).__mro__}
        if "Exit" in kinds:  # --help
            return None
        if "UsageError" not in kinds:
            raise
        if whole or kinds & {"NoSuchOption", "BadOptionUsage"}:
            return f"{exc.format_message()}: {line}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_command_line_of_a_page_parses(page: Path) -> None:
    """The flags a page shows are the CLI's (they are generated from the configs, and drift
    when a setting is renamed)."""
    lines = list(command_lines(page.read_text(encoding="utf-8")))
    problems = [p for line, whole in lines if (p := usage_problem(line, whole))]
    assert not problems, problems
