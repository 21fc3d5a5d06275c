"""Reading what other commands are writing: tolerant JSON Lines, a cache keyed by file
stamps, and path joins that cannot leave their folder."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}$")


class NotFound(Exception):
    """What the request names does not exist (or is not ours to show): a 404 page."""


class Unreadable(Exception):
    """A file exists but cannot be used (not JSON, wrong shape): a clear page, not a 500."""

    def __init__(self, message: str, where: Path | str) -> None:
        super().__init__(f"{where}: {message}")
        self.message, self.where = message, str(where)


Shape = Callable[[dict[str, Any]], bool]


@dataclass
class Lines:
    """The records of a JSON Lines file, and what could not be read."""

    records: list[dict[str, Any]] = field(default_factory=list)
    partial_tail: bool = False          # a last line without its newline (being written)
    bad_lines: list[int] = field(default_factory=list)    # 1-based: not a JSON object
    odd_lines: list[int] = field(default_factory=list)    # 1-based: an object of another shape

    @property
    def notes(self) -> list[str]:
        out = []
        if self.partial_tail:
            out.append("the last line is incomplete (still being written, or cut by a kill); "
                       "it is left out")
        for numbers, what in ((self.bad_lines, "are not JSON objects"),
                              (self.odd_lines, "lack the fields this file's records have")):
            if numbers:
                shown = ", ".join(map(str, numbers[:5])) + (" ..." if len(numbers) > 5 else "")
                out.append(f"{len(numbers)} line(s) {what} and are left out (line {shown})")
        return out


def has(record: dict[str, Any], **types: type | tuple[type, ...]) -> bool:
    """Each named field present with one of its types (a bool counts as a number only if
    ``bool`` is named)."""
    for key, wanted in types.items():
        value, allowed = record.get(key), wanted if isinstance(wanted, tuple) else (wanted,)
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            return False
    return True


def read_lines(path: Path, shape: Shape | None = None) -> Lines:
    """Every complete line that is a JSON object (of ``shape``); never modifies the file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Lines()
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc), path) from None
    end = data.rfind(b"\n") + 1
    out = Lines(partial_tail=bool(data[end:].strip()))
    for number, line in enumerate(data[:end].decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            out.bad_lines.append(number)
        elif shape is not None and not shape(record):
            out.odd_lines.append(number)
        else:
            out.records.append(record)
    return out


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFound(str(path)) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise Unreadable(f"not valid JSON ({exc})", path) from None
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc), path) from None


def read_json_or(path: Path, default: T) -> Any | T:
    """A small JSON file that may be absent or half-written (then ``default``)."""
    try:
        return read_json(path)
    except (NotFound, Unreadable):
        return default


def file_stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def stamp_of(paths: Iterable[Path]) -> str:
    """Changes whenever one of ``paths`` appears, goes, grows or is rewritten."""
    return format(hash(tuple(file_stamp(p) for p in paths)) & 0xFFFFFFFFFFFF, "x")


class StampCache:
    """Parsed files, re-read only when their stamps change (a gallery page reads 24 worlds'
    summaries, not 100 specs, on every visit)."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._items: dict[tuple[str, Path], tuple[Any, Any]] = {}

    def get(self, kind: str, path: Path, deps: list[Path], build: Callable[[], T]) -> T:
        stamp = tuple(file_stamp(p) for p in deps)
        hit = self._items.get((kind, path))
        if hit is not None and hit[0] == stamp:
            return hit[1]
        value = build()
        if len(self._items) >= self.size:
            self._items.pop(next(iter(self._items)))
        self._items[(kind, path)] = (stamp, value)
        return value


def inside(root: Path, *parts: str) -> Path:
    """``root/parts...``, refused (NotFound) if it resolves outside ``root``: no ``..``,
    absolute parts or symlinks out of the served folders."""
    base = root.resolve()
    target = base.joinpath(*parts).resolve()
    if not target.is_relative_to(base) or any(os.path.isabs(p) for p in parts):
        raise NotFound("/".join(parts))
    return target


def safe_name(name: str) -> str:
    """A world id or file name as it may appear in a URL."""
    if not SAFE_NAME.match(name):
        raise NotFound(name)
    return name
