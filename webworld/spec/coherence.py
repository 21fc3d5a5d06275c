"""Coherence: what a site says agrees with its header, its archetype and its items.

Four kinds of contradiction, each located at the content cell or element that makes it:

- ``column-kind``: a column whose value is not of its header's kind ("Stops: 4.3 / 5").
- ``foreign-facet``: a filter, sort or category menu the archetype has no use for ("In stock
  only" on a flight site, "Price: low to high" in an email inbox).
- ``miscategorised-item``: an item a page lists under a category it does not belong to.
- ``fact-mismatch``: one item's fact differs between two places of the site.

Headers of no known kind, and worlds of no known archetype, are not judged: the check says
nothing rather than guess. The validator (:mod:`webworld.spec.validate`) turns what this
module yields into findings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from webworld.spec.archetypes import ARCHETYPES, Archetype
from webworld.spec.graph import StateGraph
from webworld.spec.models import ContentBlock, Element, Page, WorldSpec

PROSE = frozenset({"title", "subtitle", "text", "description"})
"""Card keys that name or describe an item rather than state a fact of it."""
NOT_FACTS = PROSE | {"category", "field", "value"}
"""Card keys that are not facts of a column (``category`` is judged on its own)."""

GENERIC_SORTS = frozenset({"Most relevant", "Relevance", "Featured", "Recommended"})
"""Sort options any listing may offer."""


@dataclass(frozen=True)
class Incoherence:
    """One contradiction: its code, where it is (a spec location) and what it says."""

    code: str
    loc: tuple[Any, ...]
    message: str


# --- column-kind: a value of the kind its header names -----------------------------------

_RATING = r"\d(\.\d+)?\s*(/\s*(5|10)|stars?|★)?|★{1,5}"
_MONEY = r"(from\s+)?[$€£]\s?\d[\d,]*(\.\d\d)?(\s?/\s?\w+)?|free"
_TIME = r"\d{1,2}:\d\d(\s?[ap]\.?m\.?)?"
_DATE = r"\d{4}-\d\d-\d\d|[a-z]{3,9}\.? \d{1,2}(, \d{4})?|\d{1,2} [a-z]{3,9}\.?( \d{4})?"
VALUE_KINDS: dict[str, re.Pattern[str]] = {
    "rating": re.compile(_RATING),
    "price": re.compile(_MONEY),
    "count": re.compile(r"\d+|nonstop|none"),
    "time": re.compile(_TIME),
    "date": re.compile(_DATE),
    "moment": re.compile(f"{_TIME}|{_DATE}|({_DATE}),? {_TIME}"),
    "duration": re.compile(r"\d+\s?h(\s?\d+\s?m)?|\d+\s?(m|min|mins|minutes|hours?)"),
}
"""Each kind of column value, matched whole and case-blind."""

_HEADER_WORDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("rating", frozenset({"rating", "stars", "score"})),
    ("duration", frozenset({"duration"})),
    ("price", frozenset({"price", "fare", "cost", "fee", "total", "rent", "amount"})),
    ("time", frozenset({"time"})),
    ("date", frozenset({"date"})),
    ("moment", frozenset({"departure", "arrival", "departs", "arrives", "check"})),
    ("count", frozenset({"stops", "pages", "beds", "bedrooms", "baths", "bathrooms",
                         "credits", "seats", "passengers", "guests", "rooms"})),
)


def header_kind(header: str) -> str | None:
    """The kind of value a column header promises, or None when it promises none we know."""
    words = set(re.findall(r"[a-z]+", header.lower()))
    for kind, cue in _HEADER_WORDS:
        if words & cue:
            return kind
    return None


def value_fits(kind: str, value: str) -> bool:
    return VALUE_KINDS[kind].fullmatch(value.strip().lower()) is not None


def _cells(block: ContentBlock) -> Iterator[tuple[int, str, str, str]]:
    """(row, key in the row, header, value) of every fact cell of a cards or table block: a
    table of ``field`` / ``value`` rows is headed by each row's field."""
    for k, item in enumerate(block.items):
        if "field" in item and "value" in item:
            if not item["field"].rstrip().endswith("?"):  # a FAQ's question heads no column
                yield k, "value", item["field"], item["value"]
            continue
        for key, value in item.items():
            if key not in NOT_FACTS:
                yield k, key, key, value


def column_kinds(spec: WorldSpec) -> Iterator[Incoherence]:
    for i, page in enumerate(spec.pages):
        for j, block in enumerate(page.content):
            if block.kind not in ("cards", "table"):
                continue
            for k, key, header, value in _cells(block):
                kind = header_kind(header)
                if kind is not None and value.strip() and not value_fits(kind, value):
                    yield Incoherence(
                        "column-kind", ("pages", i, "content", j, "items", k, key),
                        f"{header!r} on page {page.id!r} promises a {kind}, "
                        f"but reads {value!r}")


# --- foreign-facet: filters, sorts and category menus of this kind of site ---------------


def archetype_of(spec: WorldSpec) -> Archetype | None:
    return ARCHETYPES.get(spec.provenance.archetype)


def _facet_controls(page: Page, arch: Archetype) -> Iterator[tuple[int, Element, list[str],
                                                                   frozenset[str]]]:
    """(index, element, the words it offers, the words it may offer) of a page's filters,
    sorts and category menus."""
    categories = frozenset(arch.categories)
    for k, el in enumerate(page.elements):
        if page.role == "results" and el.kind == "checkbox":
            yield k, el, [el.label], frozenset(arch.filters)
        elif el.kind == "select" and el.label.lower().startswith("sort"):
            yield k, el, list(el.options), frozenset(arch.sorts) | GENERIC_SORTS
        elif el.kind in ("hover_menu", "select") and categories & set(el.options):
            yield k, el, list(el.options), categories


def foreign_facets(spec: WorldSpec) -> Iterator[Incoherence]:
    arch = archetype_of(spec)
    if arch is None:
        return
    for i, page in enumerate(spec.pages):
        for k, el, offered, allowed in _facet_controls(page, arch):
            for word in offered:
                if word not in allowed:
                    yield Incoherence(
                        "foreign-facet", ("pages", i, "elements", k),
                        f"{el.label!r} on page {page.id!r} offers {word!r}, which a "
                        f"{arch.title.lower()} site does not have")


# --- miscategorised-item: a listing under a category holds that category's items ---------


def _declared_categories(spec: WorldSpec) -> dict[str, str]:
    """Item title -> the category a card of it names (``category``), wherever it is."""
    return {item.get("title", ""): item["category"]
            for page in spec.pages for block in page.content if block.kind == "cards"
            for item in block.items if "category" in item}


def _category_vars(spec: WorldSpec, arch: Archetype | None) -> list[str]:
    """Enum variables whose values are categories of the archetype (or named for them)."""
    known = set(arch.categories) if arch is not None else set()
    return [v.name for v in spec.variables if v.type == "enum" and v.values and (
        all(str(x) in known for x in v.values) or "category" in v.name)]


def miscategorised_items(spec: WorldSpec, graph: StateGraph) -> Iterator[Incoherence]:
    """In every reachable state, a visible result list holds only items of the category the
    state has chosen (one finding per list, naming what is out of place). Site furniture
    (a link group of the header, sidebar or footer) is the site's, not the category's."""
    arch = archetype_of(spec)
    category_vars = _category_vars(spec, arch)
    if not category_vars:
        return
    declared, machine = _declared_categories(spec), graph.machine
    pages = {p.id: (i, p) for i, p in enumerate(spec.pages)}
    misplaced: dict[tuple[int, int], dict[str, tuple[str, str]]] = {}
    for state in graph.states:
        i, page = pages[state.page]
        chosen = [machine.value(state, v) for v in category_vars]
        chosen = [c for c in chosen if isinstance(c, str)]
        if not chosen:
            continue
        for k, el in enumerate(page.elements):
            if el.kind != "link" or not el.options or el.area is not None or \
                    not all(machine.holds(c, state) for c in el.visible_when):
                continue
            for item in el.options:
                home = declared.get(item) or (arch.category_of(item) if arch else None)
                if home is not None and home not in chosen:
                    misplaced.setdefault((i, k), {}).setdefault(item, (chosen[0], home))
    for (i, k), items in misplaced.items():
        what = "; ".join(f"{item!r} (in {home!r}) under {under!r}"
                         for item, (under, home) in items.items())
        yield Incoherence("miscategorised-item", ("pages", i, "elements", k),
                          f"the list {spec.pages[i].elements[k].label!r} on page "
                          f"{spec.pages[i].id!r} shows {what}")


# --- fact-mismatch: an item says the same wherever it appears ---------------------------


def fact_mismatches(spec: WorldSpec) -> Iterator[Incoherence]:
    first: dict[tuple[str, str], tuple[str, str]] = {}  # (item, fact) -> (value, page)
    for i, page in enumerate(spec.pages):
        for j, block in enumerate(page.content):
            if block.kind != "cards":
                continue
            for k, item in enumerate(block.items):
                title = item.get("title", "")
                for key, value in item.items():
                    if key in PROSE:
                        continue
                    earlier = first.setdefault((title, key.lower()), (value, page.id))
                    if earlier[0] != value:
                        yield Incoherence(
                            "fact-mismatch", ("pages", i, "content", j, "items", k, key),
                            f"{title!r} has {key} {value!r} on page {page.id!r} but "
                            f"{earlier[0]!r} on page {earlier[1]!r}")


def static_incoherences(spec: WorldSpec) -> Iterator[Incoherence]:
    """The checks that read the spec alone."""
    yield from column_kinds(spec)
    yield from foreign_facets(spec)
    yield from fact_mismatches(spec)
