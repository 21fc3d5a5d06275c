"""The catalog vocabulary of every archetype: items under the right category, facets that fit."""

from __future__ import annotations

import dataclasses
import hashlib
import re

import pytest

from webworld.spec.archetypes import ARCHETYPES, Archetype

ALL = sorted(ARCHETYPES.values(), key=lambda a: a.key)
PRICE_SORT = re.compile(r"price|cheap|cost|fare|fee|\$", re.I)
RATING = re.compile(r"\b(rating|rated|stars?|reviews?|helpful)\b", re.I)
PRICE = re.compile(r"[$€£¥]|\d\s*%")
# The footer links every site gets from the generator itself.
GENERIC_FOOTER = frozenset({"About us", "Careers", "Press", "Contact us", "Accessibility",
                            "Privacy policy", "Terms of use", "Cookie settings", "Sitemap"})
# sha256 over (key, category, catalog_items(category)) of every archetype, as the catalog was
# before catalog_more: worlds of generator versions 1 and 2 are built from exactly these.
CATALOG_DIGEST = "0da57550505093758e3a0900e1b2837074f24e22082fe41b5931efed4a005944"


def _ids(arch: Archetype) -> str:
    return arch.key


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_catalog_covers_exactly_the_categories(arch: Archetype) -> None:
    assert [name for name, _ in arch.catalog] == list(arch.categories)
    for name, items in arch.catalog:
        assert len(set(items)) == len(items) >= 6, name
        assert arch.catalog_items(name) == items


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_no_item_under_two_categories(arch: Archetype) -> None:
    names = [item for _, items in arch.catalog for item in items]
    assert len(names) == len(set(names)), [n for n in set(names) if names.count(n) > 1]
    for name, items in arch.catalog:
        assert all(arch.category_of(item) == name for item in items)


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_new_item_names_are_short_and_plain(arch: Archetype) -> None:
    """Names a page can quote: no quotes or braces; new ones (not reused items) short."""
    for _, items in arch.catalog:
        for item in items:
            assert not set(item) & set("\"“”{}"), item
            assert item in arch.items or len(item) < 40, item


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_filters_and_sorts(arch: Archetype) -> None:
    assert 4 <= len(arch.filters) <= 6 and len(set(arch.filters)) == len(arch.filters)
    assert 3 <= len(arch.sorts) <= 5 and len(set(arch.sorts)) == len(arch.sorts)
    assert not set(arch.filters) & set(arch.categories)


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_no_price_sort_without_prices(arch: Archetype) -> None:
    if arch.price_range is None:
        assert not [s for s in arch.sorts if PRICE_SORT.search(s)]


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_no_rating_sort_without_a_rating_field(arch: Archetype) -> None:
    if not any(RATING.search(f) for f in arch.detail_fields):
        assert not [s for s in arch.sorts if RATING.search(s)]


def test_flights_sort_by_fare_and_time_not_rating() -> None:
    flights = ARCHETYPES["flights"]
    assert "In stock only" not in flights.filters
    assert not any(RATING.search(s) for s in flights.sorts)


def test_existing_items_are_placed_where_they_belong() -> None:
    """The items today's worlds show keep their obvious category."""
    expected = [
        ("shop", "Sapiens", "History"), ("shop", "Educated", "Biography"),
        ("shop", "Dune", "Fiction"), ("shop", "The Silent Patient", "Fiction"),
        ("shop", "Circe", "Fiction"), ("flights", "Tokyo to Seoul", "Asia"),
        ("flights", "Sydney to Auckland", "Oceania"), ("hotel", "Palm Court Resort", "Beachfront"),
        ("bank", "30-Year Fixed Mortgage", "Mortgages"), ("gym", "Aqua Aerobics", "Aquatics"),
        ("support_desk", "Request a refund", "Billing"),
        ("news", "Opinion: why libraries still matter", "Opinion"),
    ]
    for key, item, category in expected:
        assert ARCHETYPES[key].category_of(item) == category, (key, item)


def test_unknown_lookups_are_empty() -> None:
    shop = ARCHETYPES["shop"]
    assert shop.catalog_items("Gardening") == ()
    assert shop.catalog_items("Gardening", more=True) == ()
    assert shop.category_of("Not a book") is None


def test_archetypes_stay_hashable() -> None:
    assert len({hash(a) for a in ALL}) == len(ALL)


def _more(arch: Archetype) -> dict[str, tuple[str, ...]]:
    return dict(arch.catalog_more)


def test_catalog_items_without_more_is_the_old_catalog() -> None:
    digest = hashlib.sha256()
    for arch in ALL:
        for category in arch.categories:
            digest.update(repr((arch.key, category, arch.catalog_items(category))).encode())
    assert digest.hexdigest() == CATALOG_DIGEST


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_catalog_more_covers_exactly_the_categories(arch: Archetype) -> None:
    assert [name for name, _ in arch.catalog_more] == list(arch.categories)
    for name, items in arch.catalog:
        more = _more(arch)[name]
        assert len(more) >= 12 and len(items + more) >= 18, name
        assert arch.catalog_items(name) == items
        assert arch.catalog_items(name, more=True) == items + more


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_no_name_repeats_within_an_archetype(arch: Archetype) -> None:
    names = [item for _, items in arch.catalog + arch.catalog_more for item in items]
    assert len(names) == len(set(names)), [n for n in set(names) if names.count(n) > 1]
    assert not set(names) & set(arch.categories)


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_category_of_finds_every_item(arch: Archetype) -> None:
    for name in arch.categories:
        assert all(arch.category_of(item) == name
                   for item in arch.catalog_items(name, more=True)), name


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_more_item_names_are_short_plain_and_new(arch: Archetype) -> None:
    """Quotable names; none of them an item the catalog leaves uncategorised (old worlds show
    those, and category_of must keep answering None for them)."""
    for _, items in arch.catalog_more:
        for item in items:
            assert len(item) < 60 and not set(item) & set("\"“”{}"), item
            assert item not in arch.items, item


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_sections_footer_links_and_promotions(arch: Archetype) -> None:
    sections, footer = set(arch.sections), set(arch.footer_links)
    assert len(arch.sections) == len(sections) == 6
    assert len(arch.footer_links) == len(footer) == 6
    assert len(arch.promotions) == len(set(arch.promotions)) == 3
    assert not sections & (set(arch.categories) | set(arch.info_pages) | footer)
    assert not footer & (set(arch.info_pages) | GENERIC_FOOTER)
    assert all(0 < len(line) < 70 for line in arch.promotions), arch.promotions


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_links_do_not_double_a_flow_start(arch: Archetype) -> None:
    """A section or footer link named like a flow's start button would make two targets of
    one label on the same page."""
    starts = {flow.start for flow in arch.flows}
    assert not (set(arch.sections) | set(arch.footer_links)) & starts


@pytest.mark.parametrize("arch", ALL, ids=_ids)
def test_no_prices_in_promotions_without_prices(arch: Archetype) -> None:
    if arch.price_range is None:
        assert not [line for line in arch.promotions if PRICE.search(line)]


def test_new_fields_default_to_empty() -> None:
    """An archetype without the denser vocabulary reads as it did before it existed."""
    shop = dataclasses.replace(ARCHETYPES["shop"], catalog_more=(), sections=(),
                               footer_links=(), promotions=())
    assert shop.catalog_items("History", more=True) == shop.catalog_items("History")
    assert shop.category_of("Sapiens") == "History"
    assert shop.category_of("Postwar") is None
    fields = {f.name: f.default for f in dataclasses.fields(Archetype)}
    assert all(fields[name] == () for name in
               ("catalog_more", "sections", "footer_links", "promotions"))
