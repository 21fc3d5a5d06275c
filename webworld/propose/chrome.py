"""Pages as dense as real sites' (generator version 3), without more for a task to do.

Real pages carry tens of links a task never needs: a navigation bar, sidebars, a footer,
long result lists. The spec expresses them with two things, so that they add edges to the
state graph and only a few states:

- **Site furniture**: elements with an ``area`` (header, sidebar, footer): groups of links
  whose actions go to one of two furniture pages (a section page, a spotlight of popular
  entries) or home, and *reset* the state (every variable but the cookie answer back to its
  start value), as starting over from a site's menu does. From any state a furniture link
  leads to one of a few fixed states (page, topic), whose only ways on are Back (home) and
  more furniture.
- **Display entries**: a result list shows 10 to 40 entries over two pages (Next /
  Previous); the task's entries are among the first page's, the others open a preview page
  (role ``preview``) whose only way on is Back. One state per entry shown, none downstream.

Profiles count neither (``counted_actions``, ``counted_pages``): a medium world has the
flows, pages and path lengths it had, and its pages the density of a real site's.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass

from faker import Faker

from webworld.propose import content, patterns
from webworld.propose.builder import SpecBuilder, effect, param, slug
from webworld.spec.archetypes import Archetype
from webworld.spec.graph import explore_states
from webworld.spec.models import (
    FURNITURE_ROLES,
    Action,
    Condition,
    ContentBlock,
    Effect,
    Element,
    GuiStep,
    Page,
    Variable,
    WorldSpec,
)
from webworld.spec.semantics import Machine, empty_value, initial_value


COMPANY_LINKS = ("About us", "Careers", "Press", "Contact us")
POLICY_LINKS = ("Accessibility", "Privacy policy", "Terms of use", "Cookie settings", "Sitemap")
ACCOUNT_LINKS = ("My profile", "Messages", "Saved items", "Account help")


@dataclass(frozen=True)
class Density:
    """How much a profile's pages carry besides what their tasks need."""

    per_page: int  # entries on one page of a result list (two pages per list)
    sections: int  # section links of the navigation bar, besides Home
    company: int  # footer: links about the company (of COMPANY_LINKS)
    help_links: int  # footer: the site kind's own help links
    policies: int  # footer: policy links (of POLICY_LINKS)
    popular: int  # sidebar: popular entries
    promotions: int  # sidebar: offers
    browse: bool  # sidebar: a link per category
    account: bool  # navigation bar: the account menu


DENSITY: dict[str, Density] = {
    "easy": Density(10, 4, 2, 3, 3, 4, 1, False, False),
    "medium": Density(12, 6, 4, 6, 5, 6, 2, True, True),
    "hard": Density(16, 6, 4, 6, 5, 8, 3, True, True),
}


def counted_actions(page: Page, furniture_pages: set[str]) -> int:
    """The actions a profile counts on ``page``: not furniture (links of an area), not the
    display entries that open one of ``furniture_pages``."""
    areas = {e.id for e in page.elements if e.area is not None}
    return sum(1 for a in page.actions
               if a.trigger.element not in areas and a.navigate not in furniture_pages)


def counted_pages(spec: WorldSpec) -> int:
    """The pages a profile counts: not the furniture pages."""
    return sum(1 for p in spec.pages if p.role not in FURNITURE_ROLES)


# --- display entries: long, paged result lists ---------------------------------------------


def paged_results(b: SpecBuilder, rng: random.Random, fake: Faker, arch: Archetype,
                  results: str, detail: str, entry_var: str | None,
                  lists: dict[str | None, tuple[list[str], list[str]]], per_page: int) -> str:
    """Result lists of ``results``, one per value of ``entry_var`` (a ``None`` key: one list
    whatever was searched), each ``(targets, others)``: ``targets`` open ``detail`` (the
    task's entries, all on the first page), ``others`` a preview page. Two pages of
    ``per_page`` entries with Next / Previous; returns the variable of the chosen target."""
    pages = max(math.ceil((len(t) + len(o)) / per_page) for t, o in lists.values())
    patterns.paging(b, results, pages)
    page_var = next(v for v in reversed(b.variables) if v.startswith(f"{results}_page_no"))
    item_var = b.variable("selected_item", "enum",
                          values=[i for targets, _ in lists.values() for i in targets])
    preview = b.page("item_preview", f"{arch.entity.capitalize()} preview", "preview")
    preview_var = b.variable("previewed_item", "enum",
                             values=[i for _, others in lists.values() for i in others])
    b.back(preview, results, "Back to results")
    b.own(preview, preview_var)
    b.content(preview, ContentBlock(
        kind="text", title="Not available online",
        text=f"This {arch.entity} cannot be chosen online at the moment. Back to the results "
             f"to see what can."))
    noun = arch.entity
    for key, (targets, others) in lists.items():
        entries = _interleave(rng, targets, others, per_page)
        shown_for = [Condition(var=entry_var, op="eq", value=key)] if key and entry_var else []
        suffix = f"_{slug(key)}" if key else ""
        for n in range(pages):
            chunk = entries[n * per_page:(n + 1) * per_page]
            if not chunk:
                continue
            shown = shown_for + [Condition(var=page_var, op="eq", value=n + 1)]
            links = b.element(results, "link", f"Open {noun}", base=f"results{suffix}_p{n + 1}",
                              options=chunk, visible_when=shown)
            # one list, two actions: the task's entries open the detail, the others a preview
            for verb, base, chosen, var, target in (
                    ("Open", f"open_item{suffix}", [i for i in chunk if i in targets], item_var,
                     detail),
                    ("Preview", f"preview{suffix}_p{n + 1}",
                     [i for i in chunk if i not in targets], preview_var, preview)):
                if chosen:
                    b.action(results, base, f"{verb} {patterns.article(noun)}",
                             [GuiStep(op="click", element=links, value="{item}")],
                             params=[param("item", chosen, noun.capitalize())], guards=shown,
                             effects=[effect("set_param", var, param_name="item")],
                             navigate=target)
            b.content(results, content.catalog_cards(rng, arch, chunk, fake, key))
    b.own(detail, item_var)
    return item_var


def _interleave(rng: random.Random, targets: list[str], others: list[str], per_page: int
                ) -> list[str]:
    """``others`` in order, with each target at a random place among the first page's."""
    first = list(others[:per_page - len(targets)])
    for item in targets:
        first.insert(rng.randint(0, len(first)), item)
    return first + list(others[per_page - len(targets):])


# --- site furniture ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Group:
    """One link group: where it sits, its label, its links' topics, and the page and
    variable a link opens and sets."""

    element: str
    area: str
    label: str
    topics: tuple[str, ...]
    target: str
    var: str = "site_topic"


@dataclass(frozen=True)
class Browse:
    """A world whose results page lists a category picked from a menu: the sidebar links
    to the same lists."""

    results: str
    var: str
    categories: tuple[str, ...]


SECTION_PAGES = {  # page id -> (title, heading, text), {site} the site's name
    "site_section": ("Sections", "Coming soon",
                     "This part of {site} is being refreshed. Meanwhile, everything we offer is "
                     "a click away in the menu."),
    "site_help": ("Help and information", "How can we help?",
                  "Everything about {site} in one place: who we are, how it works and who to "
                  "ask. Our team answers every message within a working day."),
    "site_account": ("Your account", "Sign in to continue",
                     "Sign in to see this part of your account. Your details stay private and "
                     "are never shared."),
}


def furnish_site(spec: WorldSpec, arch: Archetype, profile: str, rng: random.Random,
                 listed: Iterable[str], browse: Browse | None = None) -> None:
    """Add the navigation bar, sidebar and footer to every page of ``spec`` but its success
    pages, with the pages they lead to. ``listed`` are the entries the world's lists already
    show (the spotlight shows others: one card per entry)."""
    density = DENSITY[profile]
    changeable = _changeable_vars(spec)
    keep = {v.name for v in spec.variables if v.name.startswith("cookie_consent")}
    spotlight = _spotlight_page(spec, arch, density, rng, listed)
    groups = _groups(arch, density, spotlight.content[0].items, browse)
    topics = [t for g in groups if g.var == "site_topic" for t in g.topics]
    spec.variables += [
        Variable(name="site_topic", type="enum", values=list(dict.fromkeys(topics)),
                 description="the section or help topic a site link opened"),
        Variable(name="spotlight_item", type="enum",
                 values=[card["title"] for card in spotlight.content[0].items],
                 description="the popular entry a sidebar link opened"),
    ]
    targets = {g.target for g in groups}
    new_pages = [_section_page(spec, pid, *texts) for pid, texts in SECTION_PAGES.items()
                 if pid in targets] + [spotlight]
    spec.pages += new_pages
    for page in new_pages:
        changeable[page.id] = {"spotlight_item" if page is spotlight else "site_topic"}
    cookie_guard = [Condition(var=v, op="exists", message="Please answer the cookie banner first.")
                    for v in sorted(keep)]
    for page in spec.pages:
        if page.terminal:
            continue
        reset = [_reset(spec.variable(v)) for v in sorted(changeable.get(page.id, set()) - keep)]
        guards = cookie_guard if page.id == spec.home else []
        _add_home_link(spec, page, reset, guards)
        for group in groups:
            _add_group(page, group, reset, guards)


def _back(page_id: str, home: str, var: str) -> tuple[Element, Action]:
    return (Element(id="back", kind="link", label="Home"),
            Action(id=f"{page_id}__back", label="Home",
                   gui=[GuiStep(op="click", element="back")], navigate=home, is_back=True,
                   effects=[Effect(op="clear", var=var)]))


def _section_page(spec: WorldSpec, page_id: str, title: str, heading: str, text: str) -> Page:
    element, action = _back(page_id, spec.home, "site_topic")
    return Page(id=page_id, title=title, role="section", elements=[element], actions=[action],
                content=[ContentBlock(kind="text", title=heading,
                                      text=text.format(site=spec.name))])


def _spotlight_page(spec: WorldSpec, arch: Archetype, density: Density, rng: random.Random,
                    listed: Iterable[str]) -> Page:
    """Popular entries the lists do not show: the chosen one as the subject, all as cards."""
    shown = set(listed)
    pool = [i for c in arch.categories for i in arch.catalog_items(c, more=True) if i not in shown]
    cards = content.catalog_cards(rng, arch, rng.sample(pool, density.popular),
                                  content.make_faker(rng))
    cards.title = f"Popular {arch.entity_plural}"
    element, action = _back("spotlight", spec.home, "spotlight_item")
    return Page(id="spotlight", title=f"Popular {arch.entity_plural}", role="preview",
                elements=[element], actions=[action], content=[cards])


def _groups(arch: Archetype, density: Density, popular: list[dict[str, str]],
            browse: Browse | None) -> list[_Group]:
    groups = [
        _Group("site_sections", "header", "Sections", arch.sections[:density.sections],
               "site_section"),
    ]
    if density.account:
        groups.append(_Group("account_menu", "header", "Your account", ACCOUNT_LINKS,
                             "site_account"))
    if density.browse and browse is not None:
        groups.append(_Group("browse_links", "sidebar", f"Browse {arch.entity_plural}",
                             browse.categories, browse.results, browse.var))
    groups += [
        _Group("popular_links", "sidebar", f"Popular {arch.entity_plural}",
               tuple(card["title"] for card in popular), "spotlight", "spotlight_item"),
        _Group("offer_links", "sidebar", "Offers", arch.promotions[:density.promotions],
               "site_section"),
        _Group("company_links", "footer", "Company", COMPANY_LINKS[:density.company],
               "site_help"),
        _Group("help_links", "footer", "Help", arch.footer_links[:density.help_links],
               "site_help"),
        _Group("policy_links", "footer", "Policies", POLICY_LINKS[:density.policies],
               "site_help"),
    ]
    return [g for g in groups if g.topics]


def _add_home_link(spec: WorldSpec, page: Page, reset: list[Effect], guards: list[Condition]
                   ) -> None:
    """"Home" first in the navigation bar: the sections group's first option."""
    page.actions.append(Action(
        id=f"{page.id}__site_home", label="Home",
        gui=[GuiStep(op="click", element="site_sections", value="Home")],
        guards=list(guards), effects=list(reset), navigate=spec.home))


def _add_group(page: Page, group: _Group, reset: list[Effect], guards: list[Condition]
               ) -> None:
    options = (["Home"] if group.element == "site_sections" else []) + list(group.topics)
    page.elements.append(Element(id=group.element, kind="link", label=group.label,
                                 options=options, area=group.area))  # type: ignore[arg-type]
    effects = [e for e in reset if e.var != group.var] + [
        Effect(op="set_param", var=group.var, param="topic")]
    page.actions.append(Action(
        id=f"{page.id}__{group.element}", label=f"{group.label}: open a link",
        gui=[GuiStep(op="click", element=group.element, value="{topic}")],
        params=[param("topic", list(group.topics), group.label)],
        guards=list(guards), effects=effects, navigate=group.target))


def _reset(var: Variable) -> Effect:
    """Back to the start value: ``clear`` where that is the empty value, else ``set``."""
    start = initial_value(var)
    if start == empty_value(var):
        return Effect(op="clear", var=var.name)
    return Effect(op="set", var=var.name, value=start)  # type: ignore[arg-type]


def _changeable_vars(spec: WorldSpec) -> dict[str, set[str]]:
    """Per page: the variables some reachable state on it holds away from their start value
    (what a link that starts over must reset there)."""
    graph = explore_states(spec)
    machine: Machine = graph.machine
    start = machine.initial_state().values
    names = [v.name for v in machine.variables]
    out: dict[str, set[str]] = {}
    for state in graph.states:
        moved = out.setdefault(state.page, set())
        moved.update(n for n, now, was in zip(names, state.values, start) if now != was)
    return out
