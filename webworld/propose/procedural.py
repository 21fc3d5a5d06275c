"""The offline proposer: theme + profile + seed -> a valid world spec, no API key.

Same inputs, same bytes out: every random choice comes from one seeded generator.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from webworld.errors import UsageError, WebworldError
from webworld.propose import content, patterns, wording
from webworld.propose.builder import SpecBuilder, slug
from webworld.propose.chrome import (
    DENSITY,
    Browse,
    counted_actions,
    counted_pages,
    furnish_site,
    paged_results,
)
from webworld.propose.flows import (
    FlowContext,
    build_flow,
    choose_stages,
    compose_intents,
    step_range,
)
from webworld.propose.patterns import Cursor
from webworld.propose.profiles import PROFILES, Profile
from webworld.propose.versions import GENERATOR_VERSIONS, LATEST_GENERATOR
from webworld.spec.archetypes import CATALOG_FLOWS, Archetype, Flow, match_archetype
from webworld.spec.graph import StateGraph, explore_states
from webworld.spec.models import FURNITURE_ROLES, Condition, Goal, Provenance, Task, WorldSpec
from webworld.spec.validate import validate

MAX_ATTEMPTS = 40


class GenerationError(WebworldError):
    """No spec within the profile could be built for these inputs."""


@dataclass
class Proposal:
    spec: WorldSpec
    notes: list[str] = field(default_factory=list)


def generate(theme: str, profile: str = "medium", seed: int = 0, *,
             version: int = LATEST_GENERATOR) -> Proposal:
    """Build a world for ``theme`` at ``profile`` complexity, deterministically from ``seed``
    (and the generator ``version``: the same inputs, the same bytes, in any later webworld)."""
    prof = get_profile(profile)
    if not theme.strip():
        raise UsageError("theme must not be empty", "--theme")
    if version not in GENERATOR_VERSIONS:
        raise UsageError(f"unknown generator version {version}; choose one of "
                         f"{', '.join(map(str, GENERATOR_VERSIONS))}", "--generator-version")
    match = match_archetype(theme)
    problems: list[str] = []
    for attempt in range(MAX_ATTEMPTS):
        rng = random.Random(f"{theme}|{prof.name}|{seed}|{attempt}")
        spec = _attempt(theme, prof, seed, match.archetype, rng, version)
        graph = None if spec is None else explore_states(spec)  # one BFS for both checks
        problems = [] if spec is None else profile_problems(spec, prof, graph)
        if spec is not None and not problems and validate(spec, graph=graph).valid:
            notes = [match.note] + ([f"attempt {attempt + 1}"] if attempt else [])
            spec.provenance = Provenance(theme=theme, archetype=match.archetype.key,
                                         profile=prof.name, seed=seed, notes=notes,
                                         generator_version=version)
            spec.transition = pick_transition(theme, prof, seed)
            return Proposal(spec, notes)
    raise GenerationError(f"could not build a {prof.name} world for {theme!r} "
                          f"(last problems: {problems or 'flows did not fit'})")


def pick_transition(theme: str, prof: Profile, seed: int) -> str:
    """Most new sites update in place (``swap``), some navigate: drawn from a generator of its
    own, so the rest of a world is what it was before transitions existed."""
    draw = random.Random(f"{theme}|{prof.name}|{seed}|transition").random()
    return "swap" if draw < prof.swap_share else "navigate"


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise UsageError(f"unknown profile {name!r}; choose one of "
                         f"{', '.join(PROFILES)}", "--profile") from None


def profile_problems(spec: WorldSpec, prof: Profile, graph: StateGraph | None = None
                     ) -> list[str]:
    """How the spec misses the profile's ranges (empty when it fits)."""
    out = []
    lo, hi = prof.pages
    pages = counted_pages(spec)
    if not lo <= pages <= hi:
        out.append(f"{pages} pages, want {lo}-{hi}")
    amin, amax = prof.actions_per_page
    furniture = _furniture_pages(spec.pages)
    for page in spec.pages:
        actions = counted_actions(page, furniture)
        if not page.terminal and page.id not in furniture and not amin <= actions <= amax:
            out.append(f"page {page.id} has {actions} actions, want {amin}-{amax}")
    if len(spec.terminals) != prof.terminals:
        out.append(f"{len(spec.terminals)} terminals, want {prof.terminals}")
    shortest = shortest_paths_to_terminals(spec, graph or explore_states(spec))
    lmin, lmax = prof.path_length
    for page_id, length in shortest.items():
        if length is None or not lmin <= length <= lmax:
            out.append(f"shortest path to {page_id} is {length}, want {lmin}-{lmax}")
    return out


def _furniture_pages(pages) -> set[str]:
    return {p.id for p in pages if p.role in FURNITURE_ROLES}


def shortest_paths_to_terminals(spec: WorldSpec, graph=None) -> dict[str, int | None]:
    graph = graph or explore_states(spec)
    best: dict[str, int | None] = {p.id: None for p in spec.terminals}
    for state, depth in zip(graph.states, graph.depth):
        if state.page in best and (best[state.page] is None or depth < best[state.page]):
            best[state.page] = depth
    return best


# --- one attempt ------------------------------------------------------------------------


def _attempt(theme: str, prof: Profile, seed: int, arch: Archetype, rng: random.Random,
             version: int) -> WorldSpec | None:
    fake = content.make_faker(rng)
    cookie = rng.random() < 0.75
    flows = _pick_flows(arch, prof, cookie, rng)
    if flows is None:
        return None
    name = f"{fake.last_name()} {rng.choice(arch.brand_words)}"
    b = SpecBuilder(f"{slug(theme, 30)}_{prof.name}_s{seed}", name, theme)
    home = b.page("home", f"{name} — {arch.title}", "home")
    ctx = FlowContext(b, arch, rng, content.persona(fake), content.dates(rng), home, version)
    cookie_actions = patterns.cookie_consent(b, ctx.home)[1] if cookie else []
    target_pages = rng.randint(*prof.pages)
    catalog = (_catalog(ctx, fake, prof) if any(f.kind in CATALOG_FLOWS for f, _ in flows)
               else None)
    fixed = _page_count(b)
    budget = max(1.0, (target_pages - fixed) / len(flows))
    for flow, steps in flows:
        if not _add_flow(ctx, flow, steps, budget, catalog):
            return None
    if not _fill_pages(ctx, fake, target_pages, prof):
        return None
    _pad_actions(ctx, prof)
    _guard_home(b, ctx.home, cookie_actions)
    _describe_pages(ctx, fake)
    spec = b.build(description=f"{name}: a synthetic {arch.title.lower()} website "
                               f"({prof.name} profile).")
    if version >= 3:
        browse = (Browse(catalog.results, catalog.entry_var, tuple(catalog.categories))
                  if catalog and catalog.categories else None)
        furnish_site(spec, arch, prof.name, rng, catalog.listed if catalog else [], browse)
    return spec


def _page_count(b: SpecBuilder) -> int:
    """The pages a profile counts (display and furniture pages are not)."""
    return sum(1 for s in b.pages.values() if s.page.role not in FURNITURE_ROLES)


def _pick_flows(arch: Archetype, prof: Profile, cookie: bool, rng: random.Random
                ) -> list[tuple[Flow, int]] | None:
    """Choose ``prof.terminals`` flows and a step count for each that fits the path range."""
    lmin, lmax = prof.path_length
    home_slots = prof.actions_per_page[1] - 2 * cookie - 1  # cookie buttons + catalog entry
    order = list(arch.flows)
    rng.shuffle(order)
    chosen: list[tuple[Flow, int]] = []
    for flow in order:
        is_catalog = flow.kind in CATALOG_FLOWS
        if not is_catalog and home_slots <= 0:
            continue
        base = int(cookie) + (2 if is_catalog else 0)
        smin, smax = step_range(flow, arch)
        fits = [s for s in range(smin, smax + 1) if lmin <= base + s <= lmax]
        if not fits or any(f.kind == flow.kind for f, _ in chosen):
            continue
        chosen.append((flow, rng.choice(fits)))
        home_slots -= not is_catalog
        if len(chosen) == prof.terminals:
            return chosen
    return None


@dataclass
class Catalog:
    results: str
    detail: str
    entry_var: str
    entry_clause: str
    item_var: str
    listed: list[str] = field(default_factory=list)  # every entry its lists show
    categories: list[str] = field(default_factory=list)  # browsed from a menu (or none)


def _catalog(ctx: FlowContext, fake, prof: Profile) -> Catalog:
    """home -> (search | browse) -> results -> detail: the shared start of catalog flows."""
    b, arch, rng = ctx.b, ctx.arch, ctx.rng
    results = b.page("results", f"{arch.entity_plural.capitalize()}", "results")
    detail = b.page("detail", f"{arch.entity.capitalize()} details", "detail")
    categories: list[str] = []
    if rng.random() < 0.5:
        queries = rng.sample(arch.queries, 2)
        entry_var, clause = patterns.search_entry(b, ctx.home, results, queries,
                                                  arch.entity_plural)
    else:
        categories = rng.sample(arch.categories, 2)
        entry_var, clause = patterns.browse_entry(b, ctx.home, results, categories)
    b.back(results, ctx.home, "Home")
    if ctx.version >= 3:
        lists = _long_lists(ctx, categories, DENSITY[prof.name].per_page)
        item_var = paged_results(b, rng, fake, arch, results, detail,
                                 entry_var if categories else None, lists,
                                 DENSITY[prof.name].per_page)
        b.back(detail, results, "Back to results")
        b.content(detail, content.detail_table(rng, arch, fake))
        listed = [i for targets, others in lists.values() for i in targets + others]
        return Catalog(results, detail, entry_var, clause, item_var, listed, categories)
    if ctx.version == 1:  # the same three items whatever was searched or browsed
        items = rng.sample(arch.items, 3)
        item_var = patterns.select_item(b, results, detail, items, arch.entity)
        listing = [content.item_cards(rng, arch, items, fake)]
    elif categories:
        listings = {c: rng.sample(arch.catalog_items(c), 3) for c in categories}
        item_var = patterns.select_item_by_category(b, results, detail, entry_var, listings,
                                                    arch.entity)
        listing = [content.catalog_cards(rng, arch, items, fake, category)
                   for category, items in listings.items()]
    else:
        pool = [item for c in arch.categories for item in arch.catalog_items(c)]
        items = rng.sample(pool, 3)
        item_var = patterns.select_item(b, results, detail, items, arch.entity)
        listing = [content.catalog_cards(rng, arch, items, fake)]
    b.back(detail, results, "Back to results")
    for block in listing:
        b.content(results, block)
    b.content(detail, content.detail_table(rng, arch, fake))
    return Catalog(results, detail, entry_var, clause, item_var)


def _long_lists(ctx: FlowContext, categories: list[str], per_page: int
                ) -> dict[str | None, tuple[list[str], list[str]]]:
    """Two pages of entries per list: three the tasks may choose, the rest to show; one
    list per category browsed, or one whatever was searched."""
    arch, rng = ctx.arch, ctx.rng
    if categories:
        pools = {c: list(arch.catalog_items(c, more=True)) for c in categories}
    else:
        pools = {None: [i for c in arch.categories for i in arch.catalog_items(c, more=True)]}
    lists: dict[str | None, tuple[list[str], list[str]]] = {}
    for key, pool in pools.items():
        drawn = rng.sample(pool, min(len(pool), 2 * per_page))
        lists[key] = (drawn[:3], drawn[3:])
    return lists


def _add_flow(ctx: FlowContext, flow: Flow, steps: int, budget: float,
              catalog: Catalog | None) -> bool:
    stages = choose_stages(flow, ctx.arch, steps, budget, ctx.rng)
    if stages is None:
        return False
    if flow.kind in CATALOG_FLOWS and catalog is not None:
        cur = Cursor(catalog.detail, slots=[catalog.entry_var, catalog.item_var],
                     clauses=[catalog.entry_clause])
        goal = flow.goal.replace("{item}", f"{{{catalog.item_var}}}")
    else:
        cur = Cursor(ctx.home)
        goal = flow.goal
    terminal = build_flow(ctx, flow, stages, cur, flow.kind)
    ctx.b.tasks.append(Task(id=flow.kind, goal=Goal(page=terminal), slots=list(cur.slots),
                            intents=compose_intents(goal, cur.clauses)))
    return True


def _fill_pages(ctx: FlowContext, fake, target: int, prof: Profile) -> bool:
    """Add information pages (About, FAQ, ...) until the page count is reached."""
    b, amax = ctx.b, prof.actions_per_page[1]
    titles = list(ctx.arch.info_pages)
    ctx.rng.shuffle(titles)
    if _page_count(b) > prof.pages[1]:
        return False
    while _page_count(b) < target:
        if not titles:
            titles = [f"{t} ({n})" for n, t in enumerate(ctx.arch.info_pages, 2)]
        furniture = _furniture_pages(s.page for s in b.pages.values())
        hosts = [s.page.id for s in b.pages.values()
                 if not s.page.terminal and s.page.id not in furniture and s.page.id != ctx.home
                 and counted_actions(s.page, furniture) < amax - 1]
        if not hosts:
            return False
        host = min(hosts, key=lambda pid: (counted_actions(b.get(pid), furniture), pid))
        title = titles.pop()
        page = b.page(f"info_{title}", title, "info")
        _, gui = b.click(host, "link", title)
        b.action(host, f"open_{title}", title, gui, navigate=page)
        b.back(page, host)
        b.content(page, wording.info_page(fake.random, ctx.arch, b.name, title))
        if "locator" in title.lower() or "near" in title.lower():
            patterns.location_permission(b, page)
    return True


FURNITURE = {
    "results": ("sort", "filter", "paging", "helpful"),
    "detail": ("tabs", "share", "helpful"),
    "info": ("tabs", "helpful", "share"),
}
DEFAULT_FURNITURE = ("helpful", "share", "tabs")


def _pad_actions(ctx: FlowContext, prof: Profile) -> None:
    """Give every non-terminal page a realistic number of optional actions."""
    b, rng = ctx.b, ctx.rng
    amin, amax = prof.actions_per_page
    furniture = _furniture_pages(s.page for s in b.pages.values())
    for state in list(b.pages.values()):
        page = state.page
        if page.terminal or page.id in furniture:
            continue
        want = rng.randint(amin, amax)
        for kind in FURNITURE.get(page.role, DEFAULT_FURNITURE):
            size = 2 if kind in ("filter", "paging", "share") else 1
            count = counted_actions(page, furniture)
            if count >= want or count + size > amax or (kind == "paging"
                                                        and _has(page, "next_page")):
                continue
            _furnish(b, page.id, kind, ctx)
        while counted_actions(page, furniture) < amin:  # single-action furniture always fits
            _furnish(b, page.id, "helpful" if not _has(page, "helpful") else "tabs", ctx)


def _has(page, suffix: str) -> bool:
    return any(e.id.endswith(suffix) for e in page.elements)


def _furnish(b: SpecBuilder, page_id: str, kind: str, ctx: FlowContext) -> None:
    arch = ctx.arch
    if kind == "sort":
        patterns.sort_select(b, page_id, ["Most relevant", "Price: low to high", "Top rated"]
                             if ctx.version == 1 else ["Most relevant", *arch.sorts[:3]])
    elif kind == "filter":
        patterns.filter_checkbox(b, page_id, "In stock only" if ctx.version == 1
                                 else ctx.rng.choice(arch.filters))
    elif kind == "paging":
        patterns.paging(b, page_id)
    elif kind == "share":
        patterns.share_dialog(b, page_id)
    elif kind == "tabs":
        base = f"{page_id}_tab"
        n = sum(1 for v in b.variables if v.startswith(base))
        patterns.info_tabs(b, page_id, ["Overview", "Details", "Questions"] if not n
                           else [f"Section {i}" for i in range(1, 4)])
    else:
        patterns.helpful_vote(b, page_id)


def _guard_home(b: SpecBuilder, home: str, cookie_actions: list[str]) -> None:
    """With a cookie banner, nothing else on the home page works until it is answered."""
    if not cookie_actions:
        return
    var = next(v for v in b.variables if v.startswith("cookie_consent"))
    for action in b.get(home).actions:
        if action.id not in cookie_actions:
            action.guards.insert(0, Condition(var=var, op="exists",
                                              message="Please answer the cookie banner first."))


def _describe_pages(ctx: FlowContext, fake) -> None:
    """Seeded headings and copy for pages that have none yet."""
    for state in ctx.b.pages.values():
        page = state.page
        if page.content:
            continue
        if page.terminal:
            page.content.extend(content.confirmation(fake, page.title))
        elif page.role == "home":
            page.content.append(wording.welcome(fake.random, ctx.arch, ctx.b.name))
        else:
            page.content.append(wording.page_text(fake.random, ctx.arch, page.title))
