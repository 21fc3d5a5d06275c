"""Reading and writing spec files with errors that point at the problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from webworld.errors import SpecLoadError
from webworld.fsio import atomic_write_text, dumps_json
from webworld.spec.models import SPEC_VERSION, WorldSpec


def json_path(loc: tuple[Any, ...]) -> str:
    """``("pages", 3, "actions", 0)`` -> ``$.pages[3].actions[0]``."""
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _describe(error: dict[str, Any]) -> str:
    path = json_path(tuple(p for p in error["loc"] if not _is_union_tag(p)))
    got = error.get("input")
    shown = "" if error["type"] == "missing" else f" (got {json.dumps(got)[:60]})"
    return f"{path}: {error['msg']}{shown}"


def _is_union_tag(part: Any) -> bool:
    # pydantic inserts the tried union member ("bool", "list[...]") into the location
    return isinstance(part, str) and ("[" in part or part in {"bool", "int", "str"})


def parse_spec(data: Any, where: str = "<spec>") -> WorldSpec:
    """Validate decoded JSON as a spec; schema errors list JSON paths and expectations."""
    if not isinstance(data, dict):
        raise SpecLoadError(f"expected a JSON object at $, got {type(data).__name__}", where)
    version = data.get("version", SPEC_VERSION)
    if version != SPEC_VERSION:
        raise SpecLoadError(
            f"$.version: unsupported spec version {version!r} (this webworld reads "
            f"{SPEC_VERSION!r})",
            where,
        )
    try:
        return WorldSpec.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        lines = [_describe(e) for e in errors[:10]]
        more = f"\n  ... and {len(errors) - 10} more" if len(errors) > 10 else ""
        raise SpecLoadError(
            f"{len(errors)} schema error(s):\n  " + "\n  ".join(lines) + more, where
        ) from None


def loads_spec(text: str, where: str = "<spec>") -> WorldSpec:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecLoadError(
            f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", where
        ) from None
    return parse_spec(data, where)


def load_spec(path: str | Path) -> WorldSpec:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecLoadError("no such file", str(path)) from None
    except IsADirectoryError:
        raise SpecLoadError("is a directory, expected a spec JSON file", str(path)) from None
    except UnicodeDecodeError as exc:
        raise SpecLoadError(f"not UTF-8 text (byte {exc.start})", str(path)) from None
    return loads_spec(text, str(path))


def spec_to_json(spec: WorldSpec) -> str:
    """Canonical bytes of a spec: defaults omitted, version always first."""
    data = {"version": spec.version, **spec.model_dump(mode="json", exclude_defaults=True)}
    return dumps_json(data)


def save_spec(spec: WorldSpec, path: str | Path) -> Path:
    return atomic_write_text(path, spec_to_json(spec))


def spec_schema() -> dict[str, Any]:
    schema = WorldSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"urn:webworld:worldspec:{SPEC_VERSION}"
    return schema
