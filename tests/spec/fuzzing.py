"""A seeded mutation fuzzer over the shipped specs, and the check every case must pass.

A case is the bytes of a spec file: a shipped spec with one kind of damage (a deleted key,
a wrong type, a huge or negative number, an emptied or enormous list, odd unicode, a
duplicate id, a cycle), or a truncated or non-UTF-8 file. :func:`run_case` takes it the way
the CLI does (``load_spec``, then ``validate``, ``improve`` and ``explore``) under a time
budget and says how it ended; the only acceptable endings are a located rejection, an
invalid spec whose every finding names its place, or a valid spec.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import re
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webworld.errors import WebworldError
from webworld.explore.candidates import ExploreConfig, explore_world
from webworld.propose.improve import improve
from webworld.spec.io import load_spec
from webworld.spec.validate import validate

SHIPPED = Path(__file__).resolve().parents[2] / "fsm_specs"
STATE_BUDGET = 5_000
CASE_BUDGET_S = 60.0
# where a message names its place: a JSON path, a line and column, or a byte offset
LOCATED = re.compile(r"\$[.\[]|\$(?:\s|:|$)|line \d+|byte \d+")
ODD_TEXT = ["\u202eevil\u202c", "a\u200db\u200dc", "🙂" * 40, "\ud800", "\x00", "e\u0301\u0301\u0301",
            "", " ", "\ufeff", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "\n\t\r", "{x}", "{{ 7*7 }}", "<script>x</script>"]
WRONG_VALUES: list[Any] = [None, True, False, 0, -1, 1.5, "", "x", [], {}, [1, "a"], {"a": 1}]
ID_LISTS = ("pages", "actions", "elements", "variables", "tasks", "params")


@dataclass
class Case:
    index: int
    mutation: str
    data: bytes


@dataclass
class Outcome:
    outcome: str      # rejected | invalid | valid | uncaught | hang | unlocated
    stage: str        # load | validate | improve | explore | done
    detail: str
    seconds: float


@functools.cache
def shipped() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(p.read_text(encoding="utf-8")) for p in sorted(SHIPPED.glob("*.json")))


# --- mutations ----------------------------------------------------------------------------------

Slot = tuple[Any, Any]  # (container, key or index)


def slots(doc: Any) -> list[Slot]:
    """Every (container, key) of the document, depth first."""
    out: list[Slot] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            out.append((node, key))
            stack.append(value)
    return out


def _pick(rng: random.Random, doc: Any, want: Callable[[Any], bool]) -> Slot | None:
    found = [(c, k) for c, k in slots(doc) if want(c[k])]
    return rng.choice(found) if found else None


def _delete_key(rng: random.Random, doc: Any) -> None:
    dicts = [c[k] for c, k in slots(doc) if isinstance(c[k], dict) and c[k]] + [doc]
    node = rng.choice(dicts)
    node.pop(rng.choice(list(node)))


def _wrong_type(rng: random.Random, doc: Any) -> None:
    container, key = rng.choice(slots(doc))
    old = container[key]
    container[key] = rng.choice([v for v in WRONG_VALUES if type(v) is not type(old)])


def _huge_number(rng: random.Random, doc: Any) -> None:
    slot = _pick(rng, doc, lambda v: isinstance(v, int | float) and not isinstance(v, bool)) \
        or rng.choice(slots(doc))
    slot[0][slot[1]] = rng.choice([10 ** 30, 2 ** 63, 1e308, 10 ** 9, 2 ** 31])


def _negative_number(rng: random.Random, doc: Any) -> None:
    slot = _pick(rng, doc, lambda v: isinstance(v, int | float) and not isinstance(v, bool)) \
        or rng.choice(slots(doc))
    slot[0][slot[1]] = rng.choice([-1, -(10 ** 9), -(2 ** 63), -0.5])


def _empty_list(rng: random.Random, doc: Any) -> None:
    slot = _pick(rng, doc, lambda v: isinstance(v, list) and bool(v))
    if slot:
        slot[0][slot[1]] = []


ENORMOUS = 2_000  # items an enormous list grows to (kept under ~2 MB of JSON)


def _enormous_list(rng: random.Random, doc: Any) -> None:
    slot = _pick(rng, doc, lambda v: isinstance(v, list) and bool(v))
    if slot:
        items = slot[0][slot[1]]
        size = max(1, len(json.dumps(items)) // len(items))
        count = max(len(items) + 1, min(ENORMOUS, 2_000_000 // size))
        slot[0][slot[1]] = [copy.deepcopy(items[i % len(items)]) for i in range(count)]


def _odd_unicode(rng: random.Random, doc: Any) -> None:
    for _ in range(rng.randint(1, 4)):
        slot = _pick(rng, doc, lambda v: isinstance(v, str))
        if slot:
            slot[0][slot[1]] = rng.choice(ODD_TEXT) if rng.random() < 0.7 else \
                slot[0][slot[1]] + rng.choice(ODD_TEXT)


def _duplicate_id(rng: random.Random, doc: Any) -> None:
    slot = _pick(rng, doc, lambda v: isinstance(v, list) and len(v) >= 1
                 and all(isinstance(x, dict) and ("id" in x or "name" in x) for x in v))
    if slot:
        items = slot[0][slot[1]]
        twin = copy.deepcopy(rng.choice(items))
        if len(items) > 1 and rng.random() < 0.5:
            key = "id" if "id" in twin else "name"
            items[rng.randrange(len(items))][key] = twin[key]  # rename one onto another
        else:
            items.insert(rng.randrange(len(items) + 1), twin)


def _cycle(rng: random.Random, doc: Any) -> None:
    """A page navigating to itself or back to home, or elements each other's parents."""
    pages = [p for p in doc.get("pages", []) if isinstance(p, dict)]
    if not pages:
        return
    page = rng.choice(pages)
    elements = [e for e in page.get("elements", []) if isinstance(e, dict) and "id" in e]
    if len(elements) >= 2 and rng.random() < 0.4:
        a, b = rng.sample(elements, 2)
        a["parent"], b["parent"] = b["id"], a["id"]
    elif elements and rng.random() < 0.5:
        element = rng.choice(elements)
        element["parent"] = element["id"]
    for action in page.get("actions", []):
        if isinstance(action, dict) and rng.random() < 0.5:
            action["navigate"] = rng.choice([page.get("id"), doc.get("home")])


MUTATORS: dict[str, Callable[[random.Random, Any], None]] = {
    "delete-key": _delete_key, "wrong-type": _wrong_type, "huge-number": _huge_number,
    "negative-number": _negative_number, "empty-list": _empty_list,
    "enormous-list": _enormous_list, "odd-unicode": _odd_unicode, "duplicate-id": _duplicate_id,
    "cycle": _cycle,
}
KINDS = (*MUTATORS, "truncated", "non-utf8")


def make_case(seed: int, index: int) -> Case:
    """Case ``index`` of the run seeded ``seed``: the same bytes on every machine."""
    rng = random.Random(f"{seed}:{index}")
    kind = KINDS[index % len(KINDS)]
    doc = copy.deepcopy(rng.choice(shipped()))
    if kind in MUTATORS:
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            MUTATORS[kind](rng, doc)
    data = json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    if kind == "truncated":
        data = data[:rng.randrange(len(data))]
    elif kind == "non-utf8":
        at = rng.randrange(len(data))
        data = data[:at] + rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80\x80"]) + data[at:]
    return Case(index, kind, data)


def big_case(megabytes: int = 50) -> bytes:
    """A valid shipped spec padded to ``megabytes`` with a huge description."""
    doc = copy.deepcopy(shipped()[0])
    doc["description"] = "x" * (megabytes << 20)
    return json.dumps(doc).encode()


# --- the check ----------------------------------------------------------------------------------


class Hang(Exception):
    pass


@contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in this (main) thread after ``seconds`` of wall time."""
    def expire(signum: int, frame: object) -> None:
        raise Hang(f"over {seconds:.0f}s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_case(path: Path, budget_s: float = CASE_BUDGET_S) -> Outcome:
    """Load, validate, improve and explore the spec file at ``path`` like the CLI does."""
    started, stage = time.perf_counter(), "load"

    def done(outcome: str, detail: str) -> Outcome:
        return Outcome(outcome, stage, detail, time.perf_counter() - started)

    try:
        with budget(budget_s):
            spec = load_spec(path)
            stage = "validate"
            report = validate(spec, state_budget=STATE_BUDGET)
            unplaced = [f for f in report.findings if not f.path.startswith("$")]
            if unplaced:
                return done("unlocated", f"finding without a path: {unplaced[0]}")
            stage = "improve"
            result = improve(spec, state_budget=STATE_BUDGET, max_iterations=4)
            stage = "explore"
            if result.report.valid:
                explore_world(result.spec, ExploreConfig(state_budget=STATE_BUDGET))
            stage = "done"
            return done("valid" if report.valid else "invalid", f"{len(report.findings)} findings")
    except Hang as exc:
        return done("hang", str(exc))
    except WebworldError as exc:
        located = bool(LOCATED.search(exc.message)) and str(path) in str(exc)
        return done("rejected" if located else "unlocated", str(exc)[:300])
    except Exception as exc:  # noqa: BLE001 - exactly what the fuzzer looks for
        return done("uncaught", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}")
