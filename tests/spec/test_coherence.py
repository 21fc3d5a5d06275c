"""The coherence check: each kind of contradiction, planted in a world that has none, is found
where it was planted; the world before the plant has no finding."""

from __future__ import annotations

from typing import Any

import pytest

from webworld.spec.archetypes import ARCHETYPES
from webworld.spec.coherence import header_kind, value_fits
from webworld.spec.models import WorldSpec
from webworld.spec.validate import validate

COHERENCE_CODES = {"column-kind", "foreign-facet", "miscategorised-item", "fact-mismatch"}
"""The codes this file plants (tests/spec/test_validate.py plants the others)."""
FLIGHTS = ARCHETYPES["flights"]
EUROPE, ASIA = "Europe", "Asia"


def _listing(category: str, items: list[str]) -> dict[str, Any]:
    return {"id": f"links_{category.lower()}", "kind": "link", "label": "Open flight",
            "options": items,
            "visible_when": [{"var": "category", "op": "eq", "value": category}]}


def _open(category: str, items: list[str]) -> dict[str, Any]:
    return {"id": f"open_{category.lower()}", "label": "Open a flight",
            "gui": [{"op": "click", "element": f"links_{category.lower()}", "value": "{item}"}],
            "params": [{"name": "item", "domain": items}],
            "guards": [{"var": "category", "op": "eq", "value": category}],
            "effects": [{"op": "set_param", "var": "item", "param": "item"}],
            "navigate": "done"}


def flight_site() -> WorldSpec:
    """A coherent flight site: browse a region, each region lists its own flights, whose
    facts are of their columns' kinds and the same in the two places they are shown."""
    europe, asia = (list(FLIGHTS.catalog_items(c)[:2]) for c in (EUROPE, ASIA))
    cards = {c: {"kind": "cards", "title": f"{c} flights", "items": [
        {"title": t, "subtitle": "Daily", "price": "$129.00", "stops": "1",
         "departure": "08:15", "duration": "2h 30m"} for t in items]}
        for c, items in ((EUROPE, europe), (ASIA, asia))}
    return WorldSpec.model_validate({
        "id": "coherent_flights", "name": "Coherent Air", "theme": "flight booking",
        "home": "home", "provenance": {"archetype": "flights"},
        "variables": [{"name": "category", "type": "enum", "values": [EUROPE, ASIA]},
                      {"name": "item", "type": "enum", "values": europe + asia},
                      {"name": "results_filter", "type": "bool", "initial": False}],
        "pages": [
            {"id": "home", "title": "Home", "content": [cards[EUROPE]],
             "elements": [{"id": "menu", "kind": "hover_menu", "label": "Browse regions",
                           "options": [EUROPE, ASIA]}],
             "actions": [{"id": "browse", "label": "Browse a region",
                          "gui": [{"op": "hover", "element": "menu"},
                                  {"op": "click", "element": "menu", "value": "{c}"}],
                          "params": [{"name": "c", "domain": [EUROPE, ASIA]}],
                          "effects": [{"op": "set_param", "var": "category", "param": "c"}],
                          "navigate": "results"}]},
            {"id": "results", "title": "Flights", "role": "results",
             "content": [cards[EUROPE], cards[ASIA]],
             "elements": [_listing(EUROPE, europe), _listing(ASIA, asia),
                          {"id": "filter", "kind": "checkbox", "label": FLIGHTS.filters[0]},
                          {"id": "back", "kind": "link", "label": "Home"}],
             "actions": [_open(EUROPE, europe), _open(ASIA, asia),
                         {"id": "filter_on", "label": "Filter",
                          "gui": [{"op": "check", "element": "filter"}],
                          "effects": [{"op": "set", "var": "results_filter", "value": True}]},
                         {"id": "back", "label": "Home", "is_back": True, "navigate": "home",
                          "gui": [{"op": "click", "element": "back"}]}]},
            {"id": "done", "title": "Flight chosen", "terminal": True},
        ],
        "tasks": [{"id": "open", "goal": {"page": "done"}, "slots": ["category", "item"],
                   "intents": ["open a flight in {category}"]}],
    })


def coherence_findings(spec: WorldSpec) -> list[tuple[str, str]]:
    report = validate(spec)
    assert report.valid, report.errors
    return [(f.code, f.path) for f in report.findings if f.code in COHERENCE_CODES]


def test_the_coherent_site_has_no_finding() -> None:
    assert coherence_findings(flight_site()) == []


def test_a_rating_in_the_stops_column() -> None:
    spec = flight_site()
    spec.page("results").content[1].items[0]["stops"] = "4.3 / 5"
    assert coherence_findings(spec) == [
        ("column-kind", "$.pages[1].content[1].items[0].stops")]


def test_a_company_in_a_details_table_s_time_row() -> None:
    spec = flight_site()
    spec.page("results").content.append(spec.page("results").content[0].model_copy(
        update={"kind": "table", "items": [{"field": "Departure", "value": "Acme Ltd"}]}))
    assert coherence_findings(spec) == [("column-kind", "$.pages[1].content[2].items[0].value")]


def test_a_shop_filter_on_a_flight_site() -> None:
    spec = flight_site()
    spec.page("results").elements[2].label = "In stock only"
    assert coherence_findings(spec) == [("foreign-facet", "$.pages[1].elements[2]")]


def test_a_sort_by_price_where_nothing_has_a_price() -> None:
    spec = flight_site()
    spec.provenance.archetype = "email"
    inbox = ARCHETYPES["email"]
    spec.page("results").elements[2].label = inbox.filters[0]
    spec.page("home").elements[0].options = list(inbox.categories[:2])  # drop flight regions
    spec.page("results").elements.append(spec.page("results").elements[2].model_copy(update={
        "id": "sort", "kind": "select", "label": "Sort by",
        "options": [inbox.sorts[0], "Price: low to high"]}))
    assert ("foreign-facet", "$.pages[1].elements[4]") in coherence_findings(spec)


def test_a_region_menu_offering_a_book_genre() -> None:
    spec = flight_site()
    spec.page("home").elements[0].options = [EUROPE, ASIA, "Fiction"]
    assert ("foreign-facet", "$.pages[0].elements[0]") in coherence_findings(spec)


def test_flights_of_asia_listed_under_europe() -> None:
    spec = flight_site()
    spec.page("results").elements[1].visible_when = []  # Asia's list shows under Europe too
    assert coherence_findings(spec) == [("miscategorised-item", "$.pages[1].elements[1]")]


def test_an_item_whose_card_names_another_category() -> None:
    spec = flight_site()
    spec.page("results").content[0].items[0]["category"] = ASIA
    found = coherence_findings(spec)
    assert found == [("miscategorised-item", "$.pages[1].elements[0]")]


def test_one_flight_with_two_prices() -> None:
    spec = flight_site()
    spec.page("results").content[0].items[1]["price"] = "$99.00"
    assert coherence_findings(spec) == [("fact-mismatch", "$.pages[1].content[0].items[1].price")]


@pytest.mark.parametrize(("header", "value", "fits"), [
    ("Rating", "4.3 / 5", True), ("Guest rating", "Excellent", False),
    ("Stops", "1", True), ("Stops", "4.3 / 5", False), ("Price", "$12.49", True),
    ("Price", "twelve", False), ("Departure", "08:15", True), ("Duration", "2h 30m", True),
    ("Cooking duration", "Smith Ltd", False), ("Received time", "14:45", True),
])
def test_header_kinds(header: str, value: str, fits: bool) -> None:
    kind = header_kind(header)
    assert kind is not None
    assert value_fits(kind, value) is fits


def test_headers_of_no_known_kind_are_not_judged() -> None:
    assert header_kind("Publisher") is None and header_kind("Luggage size") is None


def test_the_coherence_codes_are_warnings() -> None:
    # a v1 world keeps validating as it did (generation retries on errors only)
    spec = flight_site()
    spec.page("results").elements[2].label = "In stock only"
    spec.page("results").content[1].items[0]["stops"] = "4.3 / 5"
    report = validate(spec)
    assert report.valid and {f.severity for f in report.findings} == {"warning"}
    assert {f.code for f in report.findings} == {"foreign-facet", "column-kind"}
