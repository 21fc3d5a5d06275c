"""An independent reading of AutoWebWorld's FSM semantics, for parity checks of the importer
(its tests, and experiments/autowebworld_import).

Written from the format's description (page-scoped signatures with typed defaults,
carry-over of shared variables on navigation, preconditions, effects in order, and
interceptor fields that must be answered first), straight over the source JSON: no code is
shared with the importer. Open-ended values get the importer's documented meanings in the
simplest form: an item is an option its dropdown lists (else one token, like typed text),
``now()`` a date, ``append`` adds the object. Terminal pages are not expanded, as in
webworld's explorer.
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any

TOKEN = "x"


def _default(type_text: str) -> Any:
    t = type_text.replace(" ", "").lower()
    if "null" in t and not t.startswith("array"):
        return None
    if t.startswith("array"):
        return ()
    if t.startswith("boolean"):
        return False
    if t.startswith(("integer", "number")):
        return 1 if t.startswith("integer>=1") else 0
    return ""


def _name(path: str) -> str:
    return path[2:].lower()


def _resolve(ref: Any, params: dict[str, Any]) -> Any:
    if isinstance(ref, str) and ref.startswith("{") and ref.endswith("}"):
        value = params.get(ref[1:-1], TOKEN)
        return TOKEN if isinstance(value, str) and value.startswith("{") else value
    return ref


def _holds(sig: dict[str, Any], pre: dict[str, Any], params: dict[str, Any]) -> bool:
    left, cond = sig.get(_name(pre["path"])), pre["cond"]
    right = _resolve(pre.get("value"), params)
    if cond in ("not_null", "exists"):
        return left not in (None, ())
    if cond in ("eq", "neq"):
        if isinstance(left, tuple) and right is None:
            same = left == ()  # an empty list and null are one state
        else:
            same = type(left) is type(right) and left == right
        return same == (cond == "eq")
    if cond == "length_gt":
        return isinstance(left, (str, tuple)) and len(left) > int(right or 0)
    if cond in ("in", "oneof"):
        return left in (right or [])
    if not isinstance(left, int) or isinstance(left, bool):
        return False
    return {"gt": left > right, "gte": left >= right, "lt": left < right,
            "lte": left <= right}[cond]


def _value(eff: dict[str, Any], sig: dict[str, Any], params: dict[str, Any]) -> Any:
    if "value_ref" in eff:
        ref = eff["value_ref"]
        return sig.get(_name(ref)) if ref.startswith("$.") else _resolve(ref, params)
    expr = eff.get("value_expr")
    if expr is None:
        return eff.get("value")
    if expr.startswith("{"):
        return TOKEN
    if expr.startswith('"'):
        return json.loads(expr)
    if expr == "now()":
        return "date"
    if expr == "gen_id()":
        return TOKEN
    if not expr.startswith("append("):
        return None  # an expression with no finite meaning stores nothing
    found = re.search(r'"(?:name|title|id)"\s*:\s*(\$\.\w+)', expr)
    return ("append", sig.get(_name(found.group(1))) if found else "new")


def _apply(sig: dict[str, Any], effects: list[dict[str, Any]], params: dict[str, Any]
           ) -> dict[str, Any]:
    sig = dict(sig)
    for eff in effects:
        key, op = _name(eff["path"]), eff["op"]
        cur = sig.get(key)
        if op == "set":
            value = _value(eff, sig, params)
            if isinstance(value, tuple) and value[:1] == ("append",):
                item = value[1] if value[1] is not None else "none"
                value = cur if item in (cur or ()) else tuple(cur or ()) + (item,)
            sig[key] = value
        elif op == "append_unique":
            item = _value(eff, sig, params)
            sig[key] = cur if item in (cur or ()) else tuple(cur or ()) + (item,)
        elif op == "inc":
            sig[key] = (cur or 0) + int(eff.get("by", eff.get("value", 1)))
        elif op == "clear":
            sig[key] = () if isinstance(cur, tuple) else None if cur is None or \
                isinstance(cur, str) else False if isinstance(cur, bool) else 0
    return sig


def _interceptors(schema: dict[str, str]) -> list[str]:
    return [k.lower() for k, t in schema.items() if "null" in t.lower() and
            "captcha" not in k.lower() and
            any(w in k.lower() for w in ("accepted", "permission", "granted"))]


def _answers(action: dict[str, Any]) -> bool:
    return any(e["op"] == "set" and "captcha" not in e["path"].lower() and
               any(w in e["path"].lower() for w in ("accepted", "permission", "granted"))
               for e in action.get("effects", []))


def _firings(actions: list[dict[str, Any]]):
    """Each action once per value of its ``{..._ANY}`` parameters: the options its dropdown
    lists, else one token."""
    for action in actions:
        params = action.get("parameters", {})
        listed = [o["value"] for s in action.get("gui_procedure", [])
                  for o in s.get("ui_elements", {}).get("options", [])]
        anys = [k for k, v in params.items() if isinstance(v, str) and v.endswith("_ANY}")]
        if not anys or not listed:
            yield action, params
            continue
        for value in listed:
            yield action, {**params, **{k: value for k in anys}}


def shortest_to_terminals(fsm: dict[str, Any], *, max_states: int = 200_000) -> dict[str, int]:
    """Fewest actions from the initial page to each reachable terminal page."""
    pages = {p["id"]: p for p in fsm["pages"]}
    schemas = {pid: {k.lower(): t for k, t in p.get("signature_schema", {}).items()}
               for pid, p in pages.items()}
    terminals = set(fsm["meta"]["terminal_pages"])

    def start(pid: str, carried: dict[str, Any]) -> dict[str, Any]:
        base = {k: _default(t) for k, t in schemas[pid].items()}
        return {**base, **{k: v for k, v in carried.items() if k in base}}

    def key(pid: str, sig: dict[str, Any]) -> tuple[str, str]:
        return pid, json.dumps(sorted(sig.items(), key=lambda kv: kv[0]), default=str)

    first = fsm["meta"]["initial_page_id"]
    queue = deque([(first, start(first, {}), 0)])
    seen = {key(first, queue[0][1])}
    found: dict[str, int] = {}
    while queue and len(seen) < max_states:
        pid, sig, depth = queue.popleft()
        if pid in terminals:
            found.setdefault(pid, depth)
            continue
        blocked = any(sig.get(f) is None for f in _interceptors(schemas[pid]))
        for action, params in _firings(pages[pid].get("actions", [])):
            if blocked and not _answers(action):
                continue
            if not all(_holds(sig, c, params) for c in action.get("preconditions", [])):
                continue
            nxt_sig = _apply(sig, action.get("effects", []), params)
            nxt = pid
            if action.get("is_navigation"):
                nxt = action["to"]
                nxt_sig = start(nxt, nxt_sig)
            k = key(nxt, nxt_sig)
            if k not in seen:
                seen.add(k)
                queue.append((nxt, nxt_sig, depth + 1))
    return found
