"""Where failed episodes first leave the oracle's path.

Each failed episode of a results file is read against the oracle's episode with the same key
(`webworld eval --policy oracle` on the same suite and seed: the same task instances), action
by action as the prompt's history lists them (``click('4')  [button 'Accept all cookies']``,
:func:`webworld.data.prompting.history_entry`): element ids differ between pages and runs,
so an action is compared by its verb, the element's role and name, and its value. The first
action that differs is put in one :data:`KINDS` bucket. No browser, no model: it reads two
results files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from webworld.browser.actions import parse_call
from webworld.browser.observe import parse_line
from webworld.errors import UsageError

KINDS = (
    "no action on an element",      # unparsable, an unknown id, no label in the history
    "the right element, another value",
    "the right element, another action",
    "a sibling, the task naming the right one",  # the element's role, another name
    "a sibling the task names",     # ... the one picked mentioned by the task, not the right one
    "a sibling, neither named",     # ... the task names neither: which button its verb needs
    "an element of another role",
    "the oracle's whole path",      # no difference: it went on where the oracle had ended
)


@dataclass(frozen=True)
class Acted:
    """One history entry: the verb, its value, and the element as its page showed it."""

    verb: str
    value: str | None
    role: str | None
    name: str | None

    def __str__(self) -> str:
        value = f" {self.value!r}" if self.value is not None else ""
        return f"{self.verb} {self.role} {self.name!r}{value}" if self.role else self.verb


def acted(entry: str) -> Acted:
    """``click('5')  [button 'Rocco the boxer']`` as an :class:`Acted`."""
    call_text, _, label = entry.partition("  [")
    call = parse_call(call_text.strip())
    if call is None:
        return Acted(call_text.strip(), None, None, None)
    if not label.endswith("]"):
        return Acted(call.name, call.arg, None, None)
    _, _, role, name, _ = parse_line(label[:-1])
    return Acted(call.name, call.arg, role, name)


@dataclass(frozen=True)
class Divergence:
    key: str
    step: int           # 1-based: the first action that differs
    kind: str
    want: Acted | None  # the oracle's action there (None: its path had ended)
    got: Acted


def first_divergence(record: dict[str, Any], oracle: dict[str, Any]) -> Divergence:
    """Where ``record``'s actions first differ from ``oracle``'s, and how."""
    got, want = record.get("actions") or [], oracle.get("actions") or []
    for i, (g_entry, w_entry) in enumerate(zip(got, want, strict=False)):
        g, w = acted(g_entry), acted(w_entry)
        if g != w:
            return Divergence(record["key"], i + 1, kind_of(g, w, record.get("intent", "")), w, g)
    if len(got) > len(want):
        return Divergence(record["key"], len(want) + 1, KINDS[7], None, acted(got[len(want)]))
    return Divergence(record["key"], len(got), KINDS[7], None, Acted("stopped", None, None, None))


def kind_of(got: Acted, want: Acted, intent: str) -> str:
    if got.role is None:
        return KINDS[0]
    if (got.role, got.name) == (want.role, want.name):
        return KINDS[1] if got.verb == want.verb else KINDS[2]
    if got.role == want.role:
        if _named(want, intent):
            return KINDS[3]
        return KINDS[4] if _named(got, intent) else KINDS[5]
    return KINDS[6]


def _named(element: Acted, intent: str) -> bool:
    return bool(element.name) and element.name.casefold() in intent.casefold()


def divergences(results: Iterable[dict[str, Any]], oracle: Iterable[dict[str, Any]]
                ) -> list[Divergence]:
    """The first divergence of every failed episode of ``results`` that the oracle ran too."""
    by_key = {r["key"]: r for r in oracle}
    failed = [r for r in results if not r["success"]]
    if not by_key or not any(r["key"] in by_key for r in failed):
        raise UsageError("the oracle's results share no failed episode's key with these "
                         "(run `webworld eval --policy oracle` on the same suite and seed)")
    return [first_divergence(r, by_key[r["key"]]) for r in failed if r["key"] in by_key]


def summary(found: list[Divergence]) -> tuple[Counter, Counter]:
    """How many failures left the path each way, and the commonest (oracle's, policy's) pairs."""
    kinds = Counter(d.kind for d in found)
    pairs = Counter((str(d.want) if d.want else "-", str(d.got)) for d in found
                    if d.kind != KINDS[0])
    return kinds, pairs
