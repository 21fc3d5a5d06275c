"""Reading an AutoWebWorld ``fsm.json``: its shape checked, every part kept with its location.

The format (AutoWebWorld, arXiv 2602.14296): ``meta`` (initial page, terminal pages,
complexity profile), ``pages`` with a ``signature_schema`` of typed variables and
``actions`` (``from`` / ``to``, ``is_navigation``, ``parameters``, ``preconditions``,
``effects``, ``gui_procedure``). Problems become findings, never exceptions.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webworld.interop.autowebworld.findings import finding
from webworld.spec.io import json_path
from webworld.spec.validate import Finding

Loc = tuple[Any, ...]

CONDS = frozenset({"eq", "neq", "not_null", "exists", "length_gt", "in", "oneof",
                   "gt", "gte", "lt", "lte"})
EFFECT_OPS = frozenset({"set", "inc", "clear", "append_unique"})
GUI_OPS = frozenset({"click", "hover", "type_text", "type", "key_press", "drag"})
_PATH = re.compile(r"^\$\.([A-Za-z_][A-Za-z0-9_]*)$")


@dataclass
class Step:
    op: str
    selector: str
    loc: Loc
    text: str | None = None
    key: str | None = None
    to_value: Any = None
    container: str | None = None
    options: list[tuple[str, str]] = field(default_factory=list)  # (value, selector)


@dataclass
class Pre:
    var: str
    cond: str
    value: Any
    loc: Loc


@dataclass
class Eff:
    op: str
    var: str
    loc: Loc
    value: Any = None
    value_ref: str | None = None
    value_expr: str | None = None
    by: Any = 1


@dataclass
class SrcAction:
    id: str
    page: str
    navigates: bool
    to: str
    params: dict[str, Any]
    pres: list[Pre]
    effs: list[Eff]
    steps: list[Step]
    loc: Loc


@dataclass
class SrcPage:
    id: str
    schema: dict[str, str]
    actions: list[SrcAction]
    loc: Loc


@dataclass
class Source:
    path: str
    app: str
    initial: str
    terminals: list[str]
    pages: list[SrcPage]
    profile: dict[str, Any]
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def page(self, page_id: str) -> SrcPage:
        return next(p for p in self.pages if p.id == page_id)


class _Reader:
    """Walks the decoded JSON; ``want`` checks a type and records a ``bad-shape`` finding."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def note(self, code: str, loc: Loc, message: str) -> None:
        self.findings.append(finding(code, loc, message))

    def want(self, obj: Any, key: str, kind: type | tuple[type, ...], loc: Loc,
             default: Any = ...) -> Any:
        if not isinstance(obj, dict) or key not in obj:
            if default is ...:
                self.note("bad-shape", loc + (key,), f"missing field {key!r}")
                return None
            return default
        value = obj[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            self.note("bad-shape", loc + (key,),
                      f"expected {_json_kind(names)}, got {json.dumps(value)[:60]}")
            return None if default is ... else default
        return value

    def is_object(self, raw: Any, loc: Loc, what: str) -> bool:
        if not isinstance(raw, dict):
            self.note("bad-shape", loc, f"expected {what} object")
        return isinstance(raw, dict)

    def keyword(self, raw: dict, key: str, known: frozenset[str], code: str, what: str,
                loc: Loc) -> str | None:
        """A string field that must be one of ``known``; None when missing or unknown."""
        value = self.want(raw, key, str, loc)
        if value is not None and value not in known:
            self.note(code, loc + (key,),
                      f"unknown {what} {value!r} (known: {', '.join(sorted(known))})")
            return None
        return value

    def var(self, path: Any, loc: Loc) -> str | None:
        match = _PATH.match(path) if isinstance(path, str) else None
        if match is None:
            hint = " (nested paths are not supported)" if isinstance(path, str) and \
                path.count(".") > 1 else ""
            self.note("bad-path", loc, f"{json.dumps(path)} is not a path of the form "
                                       f"$.name{hint}")
            return None
        return ident(match.group(1))


def ident(name: str) -> str:
    """A source variable name as a webworld identifier (``CATEGORY_anchor`` -> ``category_anchor``)."""
    out = re.sub(r"[^a-z0-9_]", "_", name.lower())
    return out if out[:1].isalpha() else f"v_{out}"


def _json_kind(names: str) -> str:
    return (names.replace("dict", "an object").replace("list", "an array")
            .replace("str", "a string").replace("bool", "true/false").replace("int", "an integer"))


def load_source(path: str | Path) -> Source:
    """Read and check one ``fsm.json``; unreadable files give a single located finding."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return _broken(path, "bad-json", "no such file")
    except UnicodeDecodeError as exc:
        return _broken(path, "bad-json", f"not UTF-8 text (byte {exc.start})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _broken(path, "bad-json", f"malformed JSON at line {exc.lineno}, column "
                                         f"{exc.colno}: {exc.msg}")
    return parse_source(data, str(path))


def _broken(path: Path, code: str, message: str) -> Source:
    return Source(str(path), "", "", [], [], {}, [finding(code, (), message)])


def parse_source(data: Any, where: str = "<fsm>") -> Source:
    r = _Reader()
    if not isinstance(data, dict):
        r.note("bad-shape", (), "expected a JSON object with `meta` and `pages`")
        return Source(where, "", "", [], [], {}, r.findings)
    meta = r.want(data, "meta", dict, ()) or {}
    app = r.want(meta, "app", str, ("meta",), default="") or ""
    initial = r.want(meta, "initial_page_id", str, ("meta",)) or ""
    terminals_raw = r.want(meta, "terminal_pages", list, ("meta",)) or []
    profile = r.want(meta, "complexity_profile", dict, ("meta",), default={}) or {}
    pages = [p for i, raw in enumerate(r.want(data, "pages", list, ()) or [])
             if (p := _page(r, raw, ("pages", i))) is not None]
    terminals = []
    for i, t in enumerate(terminals_raw):
        if isinstance(t, str):
            terminals.append(t)
        else:
            r.note("bad-shape", ("meta", "terminal_pages", i), "expected a page id string")
    _check_ids(r, pages, initial, terminals)
    return Source(where, app, initial, terminals, pages, profile, r.findings)


def _page(r: _Reader, raw: Any, loc: Loc) -> SrcPage | None:
    if not r.is_object(raw, loc, "a page"):
        return None
    pid = r.want(raw, "id", str, loc)
    schema: dict[str, str] = {}
    for key, kind in (r.want(raw, "signature_schema", dict, loc, default={}) or {}).items():
        if isinstance(kind, str):
            schema[ident(key)] = kind
        else:
            r.note("unsupported-type", loc + ("signature_schema", key),
                   f"variable {key!r} has a nested schema; only flat typed variables "
                   "are supported")
    actions = [a for j, raw_a in enumerate(r.want(raw, "actions", list, loc, default=[]) or [])
               if (a := _action(r, raw_a, pid or "", loc + ("actions", j))) is not None]
    return SrcPage(pid, schema, actions, loc) if pid else None


def _action(r: _Reader, raw: Any, page: str, loc: Loc) -> SrcAction | None:
    if not r.is_object(raw, loc, "an action"):
        return None
    aid = r.want(raw, "id", str, loc)
    source = r.want(raw, "from", str, loc, default=page)
    if source and source != page:
        r.note("from-mismatch", loc + ("from",),
               f"action {aid!r} is listed on page {page!r} but says from {source!r}; it "
               f"stays on {page!r}")
    navigates = r.want(raw, "is_navigation", bool, loc, default=False)
    to = r.want(raw, "to", str, loc, default=page) or page
    params = r.want(raw, "parameters", dict, loc, default={}) or {}
    pres = [p for k, c in enumerate(r.want(raw, "preconditions", list, loc, default=[]) or [])
            if (p := _pre(r, c, loc + ("preconditions", k))) is not None]
    effs = [e for k, e_raw in enumerate(r.want(raw, "effects", list, loc, default=[]) or [])
            if (e := _eff(r, e_raw, loc + ("effects", k))) is not None]
    steps = [s for k, s_raw in enumerate(r.want(raw, "gui_procedure", list, loc) or [])
             if (s := _step(r, s_raw, loc + ("gui_procedure", k))) is not None]
    if aid is not None and not steps and not any(f.path.startswith(
            json_path(loc + ("gui_procedure",))) for f in r.findings):
        r.note("bad-shape", loc + ("gui_procedure",), f"action {aid!r} has no GUI steps")
    if aid is None or not steps:
        return None
    return SrcAction(aid, page, bool(navigates), to, params, pres, effs, steps, loc)


def _pre(r: _Reader, raw: Any, loc: Loc) -> Pre | None:
    if not r.is_object(raw, loc, "a precondition"):
        return None
    var = r.var(raw.get("path"), loc + ("path",))
    cond = r.keyword(raw, "cond", CONDS, "unknown-cond", "cond", loc)
    if var is None or cond is None:
        return None
    return Pre(var, cond, raw.get("value"), loc)


def _eff(r: _Reader, raw: Any, loc: Loc) -> Eff | None:
    if not r.is_object(raw, loc, "an effect"):
        return None
    op = r.keyword(raw, "op", EFFECT_OPS, "unknown-effect-op", "effect op", loc)
    var = r.var(raw.get("path"), loc + ("path",))
    ref = r.want(raw, "value_ref", str, loc, default=None)
    expr = r.want(raw, "value_expr", str, loc, default=None)
    if op is None or var is None:
        return None
    by = raw.get("by", raw.get("value", 1)) if op == "inc" else 1
    return Eff(op, var, loc, raw.get("value"), ref, expr, by)


def _step(r: _Reader, raw: Any, loc: Loc) -> Step | None:
    if not r.is_object(raw, loc, "a GUI step"):
        return None
    op = r.keyword(raw, "op", GUI_OPS, "unknown-gui-op", "GUI op", loc)
    selector = r.want(raw, "selector", str, loc, default="") or ""
    if op is None or (not selector and op != "key_press"):
        if op is not None:
            r.note("bad-shape", loc + ("selector",), f"a {op} step needs a selector")
        return None
    step = Step("type_text" if op == "type" else op, selector, loc,
                text=r.want(raw, "text", str, loc, default=None),
                key=r.want(raw, "key", str, loc, default=None), to_value=raw.get("to_value"))
    ui = r.want(raw, "ui_elements", dict, loc, default=None)
    if ui:
        step.container = r.want(ui, "container", str, loc + ("ui_elements",), default=None)
        for k, opt in enumerate(r.want(ui, "options", list, loc + ("ui_elements",),
                                       default=[]) or []):
            if isinstance(opt, dict) and isinstance(opt.get("selector"), str) \
                    and opt.get("value") is not None:
                step.options.append((str(opt["value"]), opt["selector"]))
            else:
                r.note("bad-shape", loc + ("ui_elements", "options", k),
                       "expected {\"value\": ..., \"selector\": \"...\"}")
    return step


def _check_ids(r: _Reader, pages: list[SrcPage], initial: str, terminals: list[str]) -> None:
    ids: dict[str, Loc] = {}
    for page in pages:
        if page.id in ids:
            r.note("duplicate-id", page.loc + ("id",), f"page id {page.id!r} is used twice")
        ids.setdefault(page.id, page.loc)
    if initial and initial not in ids:
        r.note("dangling-page", ("meta", "initial_page_id"), _no_page(initial, ids))
    for i, t in enumerate(terminals):
        if t not in ids:
            r.note("dangling-page", ("meta", "terminal_pages", i), _no_page(t, ids))
    actions: set[str] = set()
    for page in pages:
        for action in page.actions:
            if action.id in actions:
                r.note("duplicate-id", action.loc + ("id",),
                       f"action id {action.id!r} is used twice")
            actions.add(action.id)
            if action.navigates and action.to not in ids:
                r.note("dangling-page", action.loc + ("to",), _no_page(action.to, ids))
            elif not action.navigates and action.to != page.id:
                r.note("navigation-flag", action.loc + ("is_navigation",),
                       f"action {action.id!r} says to {action.to!r} but is_navigation is "
                       "false: it stays on the page, as AutoWebWorld's explorer does")


def _no_page(pid: str, ids: dict[str, Loc]) -> str:
    close = difflib.get_close_matches(pid, list(ids), n=1)
    return f"no page {pid!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
