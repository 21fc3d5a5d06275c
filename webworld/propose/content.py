"""Seeded, realistic page content (names, prices, dates, addresses) from Faker; the words of
the pages come from :mod:`webworld.propose.wording`."""

from __future__ import annotations

import datetime as dt
import random

from faker import Faker

from webworld.propose import wording
from webworld.propose.patterns import Field
from webworld.spec.archetypes import Archetype
from webworld.spec.models import ContentBlock

# Dates are drawn from a fixed window so the same seed gives the same world on any day.
DATE_WINDOW_START = dt.date(2027, 3, 1)


def make_faker(rng: random.Random) -> Faker:
    fake = Faker("en_US")
    fake.seed_instance(rng.randrange(2**31))
    return fake


MESSAGES = (
    "Could you tell me more about availability next month?",
    "I have a question about the cancellation terms.",
    "Is there a discount for returning customers?",
    "Please confirm the details by email, thank you.",
    "Really happy with the service, everything went smoothly.",
    "I would like to change the date if possible.",
)


def persona(fake: Faker) -> dict[str, Field]:
    """The user a world's tasks are written for, with values a form rejects."""
    first, last = fake.first_name(), fake.last_name()
    user = f"{first}.{last}".lower()
    return {
        "full_name": Field("full_name", "Full name", f"{first} {last}"),
        "email": Field("email", "Email", f"{user}@example.com", f"{user}.example.com",
                       "Enter a valid email address."),
        "phone": Field("phone", "Phone", fake.numerify("(555) ###-####"), "12345",
                       "Enter a valid phone number."),
        "address": Field("address", "Street address", fake.street_address()),
        "city": Field("city", "City", fake.city()),
        "username": Field("username", "Username", user),
        "password": Field("password", "Password", f"{fake.word().capitalize()}!{fake.random_int(10, 99)}x",
                          "123", "Password must be at least 8 characters."),
        "message": Field("message", "Message", fake.random_element(MESSAGES)),
    }


def dates(rng: random.Random, n: int = 3) -> list[str]:
    offsets = sorted(rng.sample(range(90), n))
    return [(DATE_WINDOW_START + dt.timedelta(days=o)).isoformat() for o in offsets]


def price(rng: random.Random, price_range: tuple[int, int]) -> str:
    lo, hi = price_range
    return f"${rng.randint(lo, hi)}.{rng.choice(['00', '49', '95', '99'])}"


def item_cards(rng: random.Random, arch: Archetype, items: list[str], fake: Faker) -> ContentBlock:
    cards = []
    for item in items:
        card = {"title": item, "subtitle": wording.blurb(fake.random, arch, item),
                arch.detail_fields[-1].lower(): f"{rng.randint(35, 50) / 10:.1f} / 5"}
        if arch.price_range:
            card["price"] = price(rng, arch.price_range)
        cards.append(card)
    return ContentBlock(kind="cards", title=f"Featured {arch.entity_plural}", items=cards)


def catalog_cards(rng: random.Random, arch: Archetype, items: list[str], fake: Faker,
                  category: str | None = None) -> ContentBlock:
    """Cards of ``items`` that each state their own facts, every one of its field's kind
    (version 2): the detail page shows the same facts, read from the card."""
    cards = []
    for item in items:
        card = {"title": item, "subtitle": wording.blurb(fake.random, arch, item),
                "category": arch.category_of(item) or ""}
        for name in arch.detail_fields:
            card[name.lower()] = _option_value(name, arch, fake) or _detail_value(name, rng, fake)
        if arch.price_range:
            card["price"] = price(rng, arch.price_range)
        cards.append(card)
    title = f"{category} {arch.entity_plural}" if category else \
        f"Featured {arch.entity_plural}"
    return ContentBlock(kind="cards", title=title, items=cards)


def detail_table(rng: random.Random, arch: Archetype, fake: Faker) -> ContentBlock:
    rows = []
    for name in arch.detail_fields:
        drawn = _detail_value(name, rng, fake)  # drawn either way: the world's draws stay
        rows.append({"field": name, "value": _option_value(name, arch, fake) or drawn})
    return ContentBlock(kind="table", title="Details", items=rows)


def _option_value(name: str, arch: Archetype, fake: Faker) -> str | None:
    """A field the archetype's option names (a pet's "Shelter" is a "Shelter location") takes
    one of the option's values, not a made-up company. Drawn from Faker's generator, so the
    world's other draws stay as they were."""
    if name.split()[0].lower() not in arch.option.label.lower():
        return None
    return fake.random.choice(arch.option.values)


def _detail_value(name: str, rng: random.Random, fake: Faker) -> str:
    lowered = name.lower()
    if "rating" in lowered or "stars" in lowered:
        return f"{rng.randint(35, 50) / 10:.1f} / 5"
    if any(w in lowered for w in ("pages", "stops", "size", "beds", "credits")):
        return str(rng.randint(1, 400 if "pages" in lowered else 4))
    if any(w in lowered for w in ("date", "departure", "arrival", "check-in", "time")):
        return f"{rng.randint(6, 21):02d}:{rng.choice(['00', '15', '30', '45'])}"
    if "duration" in lowered:
        return f"{rng.randint(1, 12)}h {rng.choice([0, 15, 30, 45])}m"
    return fake.name() if any(w in lowered for w in ("author", "host", "agent", "doctor",
                                                      "instructor", "artist")) else fake.company()


def confirmation(fake: Faker, title: str) -> list[ContentBlock]:
    ref = fake.bothify("??-#####").upper()
    return [
        ContentBlock(kind="heading", title=title),
        ContentBlock(kind="text", text=f"Thank you! Your reference number is {ref}. "
                                       "A confirmation email is on its way."),
    ]
