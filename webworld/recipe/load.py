"""Reading a recipe: its TOML, the ``--set key.path=value`` overrides, and errors that name the
file, the key and its line."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from webworld.errors import UsageError
from webworld.recipe.model import Recipe

TABLE = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?")
LEADING_KEY = re.compile(r"^([a-z0-9_]+(?:\.[a-z0-9_]+)*): ")
KEY = re.compile(r"^\s*([A-Za-z0-9_.\-\"']+)\s*=")


def load_recipe(path: Path, overrides: list[str] | None = None) -> Recipe:
    """The recipe in ``path`` with ``overrides`` (``key.path=value``, a TOML value or a bare
    string) applied; a :class:`UsageError` naming the file, key and line otherwise."""
    text = _read(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"not valid TOML: {exc}", str(path)) from None
    for override in overrides or []:
        apply_override(data, override)
    data.setdefault("name", path.stem)
    try:
        return Recipe.model_validate(data)
    except ValidationError as exc:
        raise UsageError(problems(exc, key_lines(text)), str(path)) from None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError("no such recipe file", str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the recipe: {exc}", str(path)) from None


def apply_override(data: dict[str, Any], override: str) -> None:
    """Set ``key.path=value`` in the parsed recipe; a list index is a number in the path
    (``rl.0.steps``), ``*`` every item of a list (``rl.*.steps``)."""
    key, sep, raw = override.partition("=")
    if not sep or not key.strip():
        raise UsageError("--set takes key.path=value", override)
    parts = key.strip().split(".")
    _set(data, parts, _value(raw.strip()), override, [])


def _value(raw: str) -> Any:
    """A TOML value (number, bool, string, list, inline table); otherwise the text itself."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _set(node: Any, parts: list[str], value: Any, override: str, done: list[str]) -> None:
    head, rest = parts[0], parts[1:]
    where = ".".join([*done, head])
    if isinstance(node, list):
        indices = range(len(node)) if head == "*" else [_index(head, len(node), where, override)]
        for i in indices:
            if rest:
                _set(node[i], rest, value, override, [*done, str(i)])
            else:
                node[i] = value
        return
    if not isinstance(node, dict):
        raise UsageError(f"{'.'.join(done)} is a value, not a section: cannot set {where}",
                         f"--set {override}")
    if not rest:
        node[head] = value
        return
    _set(node.setdefault(head, {}), rest, value, override, [*done, head])


def _index(part: str, length: int, where: str, override: str) -> int:
    if not part.isdigit() or int(part) >= length:
        raise UsageError(f"{where}: no such item (the list has {length})", f"--set {override}")
    return int(part)


def problems(exc: ValidationError, lines: dict[tuple[str, ...], int]) -> str:
    """Each problem as ``key.path: message (line N)``, in one line."""
    shown = []
    for error in exc.errors():
        loc = tuple(map(str, error["loc"]))
        message = error["msg"].removeprefix("Value error, ")
        named = LEADING_KEY.match(message)
        if not loc and named:  # a check of the whole recipe names its key first
            loc, message = tuple(named.group(1).split(".")), message[named.end():]
        first = message.split(" ", 1)[0]  # a section's check names the key in it first
        line = _line_of((*loc, first), lines) if (*loc, first) in lines else _line_of(loc, lines)
        shown.append(f"{'.'.join(loc) or '(top)'}: {message}" + (f" (line {line})" if line else ""))
    return "; ".join(shown)


def _line_of(loc: tuple[str, ...], lines: dict[tuple[str, ...], int]) -> int | None:
    for end in range(len(loc), 0, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Where each key and table of a TOML text is: its path (list items by index) -> line."""
    found: dict[tuple[str, ...], int] = {}
    arrays: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        if (match := TABLE.match(line)) is not None:
            table = _table_path(_dotted(match.group(2)), arrays, array=match.group(1) == "[[")
            found.setdefault(table, number)
        elif (match := KEY.match(line)) is not None:
            found.setdefault((*table, *_dotted(match.group(1))), number)
    return found


def _dotted(name: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in name.split("."))


def _table_path(names: tuple[str, ...], arrays: dict[tuple[str, ...], int], *, array: bool
                ) -> tuple[str, ...]:
    """A table header's path: each array table on the way by its current item's index."""
    path: tuple[str, ...] = ()
    for i, name in enumerate(names):
        path = (*path, name)
        last = i == len(names) - 1
        if last and array:
            arrays[names] = arrays.get(names, -1) + 1
            path = (*path, str(arrays[names]))
        elif names[:i + 1] in arrays:
            path = (*path, str(arrays[names[:i + 1]]))
    return path
