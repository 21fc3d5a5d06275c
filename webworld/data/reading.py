"""Reading ``verified.jsonl`` / ``failures.jsonl`` and checking each line against records.py.

The shapes are checked against the TypedDicts of :mod:`webworld.data.records` themselves
(read through ``typing.get_type_hints``), so a field added there is checked here too.
Extra keys are kept. A last line that does not parse is a run killed mid-write and is
skipped (:attr:`JsonlRead.partial_line` says which); any other bad line is a
:class:`RecordError` naming the file and line.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webworld.browser.actions import parse_call
from webworld.data.records import FailureRecord, VerifiedTrajectory
from webworld.errors import WebworldError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class RecordError(WebworldError):
    """A trajectory / failure file, or a line of one, that cannot be used."""


@dataclass
class JsonlRead:
    """Where the usable part of a JSONL file ends, and what was skipped at its end."""

    end: int = 0                      # bytes up to the end of the last usable line
    partial_line: int | None = None   # 1-based number of a skipped trailing partial line


def iter_jsonl(path: Path, read: JsonlRead, limit: int | None = None
               ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)``; fill ``read`` as it goes.

    ``limit`` reads only the first ``limit`` bytes (a second pass sees exactly what the
    first pass saw, even if a verifier is still appending).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RecordError(f"cannot read: {exc.strerror or exc}", str(path)) from None
    if limit is not None:
        data = data[:limit]
    lines = data.split(b"\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    offset = 0
    for i, raw in enumerate(lines):
        start, offset = offset, offset + len(raw) + 1
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            if i == last:
                read.partial_line = i + 1
                read.end = start
                return
            raise RecordError(f"not a JSON line ({_reason(exc)})", f"{path}:{i + 1}") from None
        if not isinstance(obj, dict):
            raise RecordError(f"expected a JSON object, got {type(obj).__name__}",
                              f"{path}:{i + 1}")
        read.end = min(offset, len(data))
        yield i + 1, obj


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return "not UTF-8"


# --- shape checks -------------------------------------------------------------------------


def check_shape(value: Any, tp: Any, where: str = "") -> None:
    """Raise ``ValueError("<json path>: <what>")`` unless ``value`` matches the annotation."""
    origin = typing.get_origin(tp)
    if tp is object or tp is Any:
        return
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in typing.get_args(tp):
            try:
                return check_shape(value, option, where)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError(errors[-1] if len(errors) == 1 else
                         f"{where or 'value'}: expected {_name(tp)}, got {_got(value)}")
    if tp is type(None):
        if value is not None:
            raise ValueError(f"{where or 'value'}: expected null, got {_got(value)}")
        return
    if typing.is_typeddict(tp):
        if not isinstance(value, dict):
            raise ValueError(f"{where or 'value'}: expected an object, got {_got(value)}")
        for key, sub in typing.get_type_hints(tp).items():
            if key not in value:
                if key in tp.__optional_keys__:  # NotRequired: newer records have it
                    continue
                raise ValueError(f"{_join(where, key)}: missing")
            check_shape(value[key], sub, _join(where, key))
        return
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"{where or 'value'}: expected a list, got {_got(value)}")
        (item,) = typing.get_args(tp) or (object,)
        for i, v in enumerate(value):
            check_shape(v, item, f"{where}[{i}]")
        return
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{where or 'value'}: expected an object, got {_got(value)}")
        return
    ok = {
        str: lambda v: isinstance(v, str),
        int: lambda v: isinstance(v, int) and not isinstance(v, bool),
        float: lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        bool: lambda v: isinstance(v, bool),
    }.get(tp)
    if ok is None:
        raise TypeError(f"check_shape does not know {tp!r}")
    if not ok(value):
        raise ValueError(f"{where or 'value'}: expected {_name(tp)}, got {_got(value)}")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _got(value: Any) -> str:
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"


# --- one world ------------------------------------------------------------------------------


def check_trajectory(traj: dict[str, Any], world_dir: Path, where: str) -> None:
    """Shape, and what the export relies on: steps exist, actions parse, screenshots (where
    the step has one) are PNGs."""
    try:
        check_shape(traj, VerifiedTrajectory)
    except ValueError as exc:
        raise RecordError(str(exc), where) from None
    if traj["world_id"] != world_dir.name:
        raise RecordError(f"world_id {traj['world_id']!r} is not the folder's name "
                          f"{world_dir.name!r}", where)
    if not traj["steps"]:
        raise RecordError(f"trajectory {traj['id']!r} has no steps", where)
    root = world_dir.resolve()
    for n, step in enumerate(traj["steps"]):
        call = parse_call(step["action"])
        if call is None:
            raise RecordError(f"steps[{n}].action {step['action']!r} does not follow the "
                              "action grammar of webworld.browser.actions", where)
        if call.bid != step["bid"]:
            raise RecordError(f"steps[{n}].action {step['action']!r} targets {call.bid!r} "
                              f"but bid is {step['bid']!r}", where)
        if step["observation"]["screenshot"] is None:
            continue  # verified with --no-screenshots: a text-only step
        shot = (world_dir / step["observation"]["screenshot"]).resolve()
        if not shot.is_relative_to(root):
            raise RecordError(f"steps[{n}].observation.screenshot points outside the world "
                              f"folder: {step['observation']['screenshot']}", where)
        try:
            with shot.open("rb") as handle:
                magic = handle.read(8)
        except OSError:
            # the usual cause: `--no-screenshots` of an older webworld, whose records still
            # named them (records now say null: a text-only step)
            hint = "; verified with --no-screenshots by an older webworld? Verify again " \
                f"(move {world_dir / 'verified.jsonl'} away first): its records then export " \
                "as a text-only dataset" if not (world_dir / "images").is_dir() else ""
            raise RecordError(f"steps[{n}].observation.screenshot: no such file {shot}{hint}",
                              where) from None
        if magic != PNG_MAGIC:
            raise RecordError(f"steps[{n}].observation.screenshot is not a PNG: {shot}", where)


def iter_verified(world_dir: Path, read: JsonlRead, limit: int | None = None
                  ) -> Iterator[tuple[int, VerifiedTrajectory]]:
    """Checked trajectories of one world (duplicate ids included; the caller decides)."""
    path = world_dir / "verified.jsonl"
    for lineno, obj in iter_jsonl(path, read, limit):
        check_trajectory(obj, world_dir, f"{path}:{lineno}")
        yield lineno, typing.cast(VerifiedTrajectory, obj)


def read_failures(world_dir: Path) -> tuple[list[FailureRecord], JsonlRead]:
    """The failure records of a world (none when ``failures.jsonl`` is absent)."""
    path = world_dir / "failures.jsonl"
    read = JsonlRead()
    if not path.is_file():
        return [], read
    records = []
    for lineno, obj in iter_jsonl(path, read):
        try:
            check_shape(obj, FailureRecord)
        except ValueError as exc:
            raise RecordError(str(exc), f"{path}:{lineno}") from None
        records.append(typing.cast(FailureRecord, obj))
    return records, read
