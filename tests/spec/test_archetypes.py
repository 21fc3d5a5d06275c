"""The catalog vocabulary of every archetype: items under the right category, facets that fit."""

from __future__ import annotations

import re

import pytest

from webworld.spec.archetypes import ARCHETYPES, Archetype

ALL = sorted(ARCHETYPES.values(), key=lambda a: a.key)
PRICE_SORT = re.compile(r"price|cheap|cost|fare|fee|\$", re.I)
RATING = re.compile(r"\b(rating|rated|stars?|reviews?|helpful)\b", re.I)


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
    assert shop.category_of("Not a book") is None


def test_archetypes_stay_hashable() -> None:
    assert len({hash(a) for a in ALL}) == len(ALL)
