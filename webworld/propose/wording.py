"""The words on a world's pages, written from its archetype and theme: welcome text, blurbs of
the items it lists, answers on its FAQ, help and policy pages, reviews. Seeded (from the world's
generator), so the same theme, profile and seed give the same words; what it draws from is the
archetype's own vocabulary (its entities, items, categories, options and flows), so a pet
shelter talks about pets and shelters, not "reciprocal artificial intelligence"."""

from __future__ import annotations

import random

from webworld.spec.archetypes import Archetype
from webworld.spec.models import ContentBlock

FIRST_NAMES = ("Maya", "Jonas", "Priya", "Leo", "Amara", "Tomás", "Hana", "Owen", "Zoe",
               "Farid", "Ines", "Kai")


def blurb(r: random.Random, arch: Archetype, item: str) -> str:
    """One line under an item's name in a list: what one can choose for it (nothing the
    item's other facts could contradict)."""
    option = r.choice(arch.option.values)
    return r.choice((f"{arch.option.label}: {option}", f"Available: {option}",
                     f"Most chosen: {option}", f"{option} and more"))


def welcome(r: random.Random, arch: Archetype, site: str) -> ContentBlock:
    shown = ", ".join(c.lower() for c in r.sample(arch.categories, min(3, len(arch.categories))))
    verb = r.choice(("Browse", "Explore", "Find"))
    text = (f"{site} is your place for {arch.entity_plural}. {verb} {shown} and more, compare "
            f"{arch.option.label.lower()} options, and choose the "
            f"{arch.choice.label.lower()} that suits you. "
            f"{r.choice(arch.flows).start} takes a minute.")
    return ContentBlock(kind="text", title=f"Welcome to {site}", text=text)


def info_page(r: random.Random, arch: Archetype, site: str, title: str) -> ContentBlock:
    """The copy of an information page, after what its title says it is."""
    lowered = title.lower()
    if "faq" in lowered or "question" in lowered:
        return _faq(r, arch)
    if "review" in lowered or "testimonial" in lowered or "stories" in lowered:
        return _reviews(r, arch)
    if any(w in lowered for w in ("policy", "rules", "terms", "fees", "refund", "returns",
                                  "requirements", "guidelines", "agreement")):
        text = (f"This page explains {title.lower()} at {site}. Each {arch.entity} page lists "
                f"its {arch.option.label.lower()} options before you confirm, and the "
                f"{arch.choice.label.lower()} you pick is shown again on the summary. If "
                f"anything changes after you confirm, we tell you by email.")
        return ContentBlock(kind="text", title=title, text=text)
    if any(w in lowered for w in ("near", "locator", "location", "branch", "venues")):
        places = ", ".join(arch.option.values)
        text = (f"Find us near you: {places}. Allow your location to see the closest one, or "
                f"choose from the list.")
        return ContentBlock(kind="text", title=title, text=text)
    if "about" in lowered:
        text = (f"{site} started with a simple idea: {arch.entity_plural} should be easy to "
                f"find and easy to choose. Today we list {len(arch.items) * 12} "
                f"{arch.entity_plural} across {len(arch.categories)} categories, from "
                f"{arch.categories[0].lower()} to {arch.categories[-1].lower()}.")
        return ContentBlock(kind="text", title=title, text=text)
    item = r.choice(arch.items)
    text = (f"{title}: everything you need to know before you choose a {arch.entity}. "
            f"Start from a {arch.entity} such as {item}, pick its "
            f"{arch.option.label.lower()}, and we guide you through the rest.")
    return ContentBlock(kind="text", title=title, text=text)


def page_text(r: random.Random, arch: Archetype, title: str) -> ContentBlock:
    """A line of help on a page of a flow (a form, a summary, a list)."""
    text = r.choice((
        f"Check the details below before you continue. You can come back and change your "
        f"{arch.option.label.lower()} at any time.",
        f"Fields marked as required must be filled in. Your {arch.choice.label.lower()} is "
        f"kept for next time.",
        f"Questions about {arch.entity_plural}? Our team answers within one working day.",
    ))
    return ContentBlock(kind="text", title="", text=text)


def _faq(r: random.Random, arch: Archetype) -> ContentBlock:
    pairs = [
        {"field": f"How do I choose a {arch.option.label.lower()}?",
         "value": f"Open a {arch.entity} and pick one of: {', '.join(arch.option.values)}."},
        {"field": f"Which {arch.choice.label.lower()} can I use?",
         "value": f"{', '.join(arch.choice.values[:-1])} or {arch.choice.values[-1]}."},
        {"field": f"Can I change my mind after '{r.choice(arch.flows).start}'?",
         "value": "Yes: go back to the page and choose again before you confirm."},
    ]
    return ContentBlock(kind="table", title="Frequently asked questions", items=pairs)


def _reviews(r: random.Random, arch: Archetype) -> ContentBlock:
    lines = []
    for item in r.sample(arch.items, min(3, len(arch.items))):
        name = r.choice(FIRST_NAMES)
        praise = r.choice(("exactly what we hoped for", "a lovely surprise",
                           "worth every minute", "better than the photos"))
        lines.append(f"“{item} was {praise}.” — {name}")
    return ContentBlock(kind="text", title="What people say", text=" ".join(lines))
