"""A small, safe RFC 6902 JSON Patch (and RFC 6901 JSON Pointer) for model-written fixes.

What a model writes is data: operations are applied to a deep copy of plain JSON values
(dicts, lists, scalars); nothing is evaluated. Every failure is a :class:`PatchError`
that says which operation failed and why, so the message can go back to the model.

Also converts the validator's JSON paths (``$.pages[3].actions[0]``) to JSON Pointers
(``/pages/3/actions/0``) and back, and checks whether a path points into a document.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from typing import Any

MAX_OPS = 1000
OPS = ("add", "remove", "replace", "move", "copy", "test")


class PatchError(ValueError):
    """An operation that cannot be applied (bad pointer, missing member, failed test)."""


# --- JSON Pointer (RFC 6901) -----------------------------------------------------------


def parse_pointer(pointer: str) -> list[str]:
    """``"/pages/0/id"`` -> ``["pages", "0", "id"]``; ``""`` is the whole document."""
    if not isinstance(pointer, str):
        raise PatchError(f"a JSON Pointer must be a string, got {type(pointer).__name__}")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"JSON Pointer {pointer!r} must start with '/' (e.g. /pages/0/id)")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def to_pointer(parts: Sequence[str | int]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _index(items: list[Any], token: str, *, end_ok: bool) -> int:
    if end_ok and token == "-":
        return len(items)
    if not re.fullmatch(r"0|[1-9][0-9]*", token):
        raise PatchError(f"{token!r} is not an array index")
    index = int(token)
    limit = len(items) if end_ok else len(items) - 1
    if index > limit:
        raise PatchError(f"index {index} is out of range (the array has {len(items)} items)")
    return index


def _child(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise PatchError(f"member {token!r} does not exist")
        return node[token]
    if isinstance(node, list):
        return node[_index(node, token, end_ok=False)]
    raise PatchError(f"cannot descend into a {type(node).__name__} with {token!r}")


def get_pointer(doc: Any, pointer: str) -> Any:
    node = doc
    for token in parse_pointer(pointer):
        node = _child(node, token)
    return node


def _parent(doc: Any, pointer: str) -> tuple[Any, str]:
    tokens = parse_pointer(pointer)
    if not tokens:
        raise PatchError("this operation needs a path below the document root")
    node = doc
    for token in tokens[:-1]:
        node = _child(node, token)
    if not isinstance(node, (dict, list)):
        raise PatchError(f"the parent of {pointer!r} is a {type(node).__name__}, not a "
                         "container")
    return node, tokens[-1]


# --- the operations --------------------------------------------------------------------


def _add(doc: Any, pointer: str, value: Any) -> Any:
    if pointer == "":
        return value
    parent, token = _parent(doc, pointer)
    if isinstance(parent, dict):
        parent[token] = value
    else:
        parent.insert(_index(parent, token, end_ok=True), value)
    return doc


def _remove(doc: Any, pointer: str) -> tuple[Any, Any]:
    parent, token = _parent(doc, pointer)
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"member {token!r} does not exist")
        return doc, parent.pop(token)
    return doc, parent.pop(_index(parent, token, end_ok=False))


def _replace(doc: Any, pointer: str, value: Any) -> Any:
    if pointer == "":
        return value
    parent, token = _parent(doc, pointer)
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"member {token!r} does not exist (use add to create it)")
        parent[token] = value
    else:
        parent[_index(parent, token, end_ok=False)] = value
    return doc


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, but true is not 1; objects ignore key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _field(op: dict[str, Any], name: str) -> Any:
    if name not in op:
        raise PatchError(f"missing {name!r}")
    return op[name]


def _apply_one(doc: Any, op: dict[str, Any]) -> Any:
    kind, path = op.get("op"), _field(op, "path")
    if kind == "add":
        return _add(doc, path, copy.deepcopy(_field(op, "value")))
    if kind == "remove":
        return _remove(doc, path)[0]
    if kind == "replace":
        return _replace(doc, path, copy.deepcopy(_field(op, "value")))
    if kind == "move":
        source = _field(op, "from")
        if path == source:
            return doc
        if path.startswith(source + "/"):
            raise PatchError("cannot move a value into one of its own children")
        doc, value = _remove(doc, source)
        return _add(doc, path, value)
    if kind == "copy":
        return _add(doc, path, copy.deepcopy(get_pointer(doc, _field(op, "from"))))
    if kind == "test":
        actual = get_pointer(doc, path)
        if not json_equal(actual, _field(op, "value")):
            raise PatchError(f"test failed: the value is {_short(actual)}, not "
                             f"{_short(op['value'])}")
        return doc
    raise PatchError(f"unknown op {kind!r} (use one of {', '.join(OPS)})")


def apply_patch(doc: Any, ops: Sequence[dict[str, Any]], *, max_ops: int = MAX_OPS) -> Any:
    """Apply ``ops`` to a deep copy of ``doc``; all or nothing."""
    if len(ops) > max_ops:
        raise PatchError(f"{len(ops)} operations, more than the limit of {max_ops}")
    out = copy.deepcopy(doc)
    for n, op in enumerate(ops):
        if not isinstance(op, dict):
            raise PatchError(f"operation {n} is not an object")
        try:
            out = _apply_one(out, op)
        except PatchError as exc:
            raise PatchError(f"operation {n} ({op.get('op')} {op.get('path')!r}): "
                             f"{exc}") from None
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


# --- the validator's JSON paths ----------------------------------------------------------

_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def parse_json_path(path: str) -> list[str | int] | None:
    """``$.pages[3].actions[0]`` -> ``["pages", 3, "actions", 0]``, strictly: None if any
    part of the text is not a step. A binding key (any text) after ``.bindings.`` stays
    whole. JSON Pointers (``/pages/3``) are accepted too."""
    if not isinstance(path, str):
        return None
    path = path.strip()
    if path.startswith("/") or path == "":
        try:
            return [int(t) if t.isdigit() else t for t in parse_pointer(path)]
        except PatchError:
            return None
    if not path.startswith("$"):
        return None
    head, sep, key = path[1:].partition(".bindings.")
    parts: list[str | int] = []
    pos = 0
    while pos < len(head):
        match = _STEP.match(head, pos)
        if match is None:
            return None
        name, index = match.groups()
        parts.append(name if name is not None else int(index))
        pos = match.end()
    return [*parts, "bindings", key] if sep and key else (None if sep else parts)


def resolves(doc: Any, parts: Sequence[str | int]) -> bool:
    """Does the path exist in ``doc`` (plain JSON)?"""
    node = doc
    for part in parts:
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False
    return True


def path_to_pointer(path: str) -> str | None:
    """``$.pages[3].navigate`` -> ``/pages/3/navigate`` (None if not a path)."""
    parts = parse_json_path(path)
    return None if parts is None else to_pointer(parts)
