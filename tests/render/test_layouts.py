"""Page layouts: chosen per world, they move a page's parts, never change what it holds.

Worlds of generator versions 1 and 2 render byte for byte as they did before layouts (and
site furniture) existed: the digests below were computed with that renderer (commit
c033569) and the same sampling of states.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, deque
from pathlib import Path

import pytest

from webworld import contract
from webworld.propose.procedural import generate
from webworld.render import (
    THEMES,
    SiteError,
    check_page,
    load_site,
    make_environment,
    page_context,
    render_page,
    render_site,
)
from webworld.render.checks import parse_html
from webworld.render.context import describe_context
from webworld.render.layouts import (
    CHOICES,
    Layout,
    choose_layout,
    classic_layout,
    layout_from_dict,
    parse_layout,
)
from webworld.render.plan import visible_ids
from webworld.spec.io import spec_to_json
from webworld.spec.models import WorldSpec
from webworld.spec.semantics import Machine, State

ERROR = "That did not work."
NON_CLASSIC = Layout(results="list", filters="left", nav="mega", sections="accordion",
                     sidebar="right")


def sample_states(machine: Machine, *, dive: bool = False, limit: int = 1500, head: int = 6
                  ) -> list[State]:
    """The first ``head`` states of a BFS, then one per (page, visible elements); ``dive``
    visits states on pages not seen yet first, so that every page is reached (the pinned
    digests were computed without)."""
    start = machine.initial_state()
    seen, queue, picked, looks, pages = {start}, deque([start]), [], set(), {start.page}
    while queue and len(seen) < limit:
        state = queue.popleft()
        look = (state.page, tuple(visible_ids(machine.spec.page(state.page), machine, state)))
        if len(picked) < head or look not in looks:
            picked.append(state)
            looks.add(look)
        for t in machine.transitions(state):
            if t.target not in seen:
                seen.add(t.target)
                if dive and t.target.page not in pages:
                    pages.add(t.target.page)
                    queue.appendleft(t.target)
                else:
                    queue.append(t.target)
    return picked


def base_of(spec: WorldSpec) -> str:
    return f"/w/{spec.id}"


def rendered_pages(spec: WorldSpec, site_dir: Path, *, dive: bool = True, **kw: object
                   ) -> list[tuple[State, str]]:
    """(state, HTML) of the sampled states; every fourth one also with a refused action."""
    site = load_site(render_site(spec, site_dir, **kw))  # type: ignore[arg-type]
    env, machine = make_environment(site), Machine(spec)
    pages = []
    for i, state in enumerate(sample_states(machine, dive=dive)):
        for error in ((None, ERROR) if i % 4 == 0 else (None,)):
            pages.append((state, render_page(site, env, machine, state, base=base_of(spec),
                                             error=error)))
    return pages


# --- the choice --------------------------------------------------------------------------


def world_like(spec: WorldSpec, name: str, seed: int, version: int = 3) -> WorldSpec:
    provenance = spec.provenance.model_copy(update={"seed": seed, "generator_version": version})
    return spec.model_copy(update={"id": f"{name}_medium_s{seed}", "provenance": provenance})


@pytest.fixture(scope="module")
def bookstore_v3() -> WorldSpec:
    return generate("online bookstore", "medium", 0, version=3).spec


@pytest.fixture(scope="module")
def recipes_v3() -> WorldSpec:
    return generate("recipe site", "medium", 0, version=3).spec


def test_the_choice_is_stable_covers_every_variant_and_ignores_the_theme(
        bookstore_v3: WorldSpec) -> None:
    names = ("online_bookstore", "recipe_site", "flight_booking", "bug_tracker",
             "hotel_booking", "news_site", "car_rental", "job_board")
    worlds = [world_like(bookstore_v3, name, seed) for name in names for seed in range(5)]
    chosen = [choose_layout(w, THEMES["harbor"]) for w in worlds]
    assert chosen == [choose_layout(w, THEMES["midnight"]) for w in worlds]  # not the theme's
    assert chosen == [choose_layout(w.model_copy(deep=True), THEMES["harbor"]) for w in worlds]
    assert not any(layout.classic for layout in chosen)
    for field, variants in CHOICES.items():
        seen = Counter(getattr(layout, field) for layout in chosen)
        assert set(seen) == set(variants), (field, seen)
    assert len({layout.name for layout in chosen}) > 10
    # the seed matters, not only the id
    assert {choose_layout(world_like(bookstore_v3, "x", s), THEMES["harbor"]) for s in
            range(12)} != {chosen[0]}


@pytest.mark.parametrize("version", [1, 2])
def test_older_worlds_get_their_themes_classic_layout(bookstore_v3: WorldSpec,
                                                      version: int) -> None:
    world = world_like(bookstore_v3, "old", 3, version)
    for theme in THEMES.values():
        layout = choose_layout(world, theme)
        assert layout == classic_layout(theme)
        assert layout.classic and layout.name == "classic" and layout.body_classes() == []
        assert layout.results == ("table" if theme.listing == "table" else "grid")
        assert (layout.filters, layout.nav, layout.sections, layout.sidebar) == (
            "top", "bar", "tabs", "left")


def test_layout_names_and_dicts_round_trip() -> None:
    assert parse_layout(NON_CLASSIC.name) == NON_CLASSIC
    assert NON_CLASSIC.name == "list-left-mega-accordion-right"
    assert layout_from_dict(NON_CLASSIC.as_dict()) == NON_CLASSIC
    assert NON_CLASSIC.body_classes() == ["results-list", "filters-left", "nav-mega",
                                          "sections-accordion", "sidebar-right"]
    for bad in ("list-left", "rows-left-mega-accordion-right"):
        with pytest.raises(ValueError):
            parse_layout(bad)
    with pytest.raises(ValueError, match="unknown field"):
        layout_from_dict({"results": "list", "colour": "red"})


# --- versions 1 and 2: the bytes they had --------------------------------------------------

PINNED = {  # (theme, profile, seed, version, site theme) -> (theme used, pages, digest)
    ("online bookstore", "medium", 0, 2, None): (
        "meadow", 22, "787bf8918e97a195bc97f0dd68d2837a20d0abfc1bc71d32ab44771bca0dee32"),
    ("online bookstore", "medium", 0, 2, "midnight"): (
        "midnight", 22, "9e8bd69842b7c3182ef5f8216227c795493086d63057585fef0b894e3d29cda6"),
    ("online bookstore", "medium", 0, 2, "harbor"): (
        "harbor", 22, "e6d3c9e32187975035fc462260457874358a910851efa9a7cc1f7af37baa7fbd"),
    ("online bookstore", "medium", 0, 1, None): (
        "meadow", 24, "02f477e34fa5cb50624eb9552dbf17a0a95b72cfb7d490c157b2bbb913bbf8f3"),
    ("recipe site", "medium", 0, 2, None): (
        "harbor", 32, "3f80531916ed4e125cbdc7a22620a861538ee4a4217495a035f9d0b42d77e428"),
}
SPEC_DIGESTS = {  # the specs themselves, so that a changed generator is told apart
    ("online bookstore", 2): "4883f4ed73278971fb1605f303d4faeef6320d9bc0d94553464f91b3cdfdde3b",
    ("online bookstore", 1): "91089c49f2746e84324e72e9fa39234e28a5ddbbb30d02561717e4786feed892",
    ("recipe site", 2): "73bfced77b50def58ad34d087793472a72390b458ecefc055d8d5fb8cd39e408",
}


@pytest.mark.parametrize("key", list(PINNED), ids=lambda k: f"{k[0]}-v{k[3]}-{k[4]}")
def test_older_worlds_render_byte_for_byte_as_before(key: tuple, tmp_path: Path) -> None:
    theme_name, profile, seed, version, site_theme = key
    spec = generate(theme_name, profile, seed, version=version).spec
    spec_digest = hashlib.sha256(spec_to_json(spec).encode()).hexdigest()
    assert spec_digest == SPEC_DIGESTS[theme_name, version], "the generator changed, not the renderer"
    site_dir = tmp_path / "site"
    pages = rendered_pages(spec, site_dir, dive=False, theme=site_theme)
    digest = hashlib.sha256(b"".join(html.encode() + b"\0" for _, html in pages)).hexdigest()
    manifest = json.loads((site_dir / "manifest.json").read_text())
    assert (manifest["theme"], len(pages), digest) == PINNED[key]
    assert "layout" not in manifest  # the manifest as it was: no layout means classic
    assert load_site(site_dir).layout == classic_layout(THEMES[manifest["theme"]])


# --- version 3: every layout meets the contract -----------------------------------------------

VARIANTS = [(field, variant) for field, variants in CHOICES.items() for variant in variants]
MARKERS = {  # what each variant puts on the pages of the two worlds (somewhere)
    ("results", "grid"): 'class="listing listing-cards"',
    ("results", "list"): 'class="listing listing-list"',
    ("results", "table"): 'class="listing listing-table"',
    ("filters", "top"): 'class="toolbar"',
    ("filters", "left"): 'class="filter-panel"',
    ("nav", "bar"): 'class="site-sections"',
    ("nav", "mega"): 'class="mega-menu"',
    ("sections", "tabs"): 'role="tablist"',
    ("sections", "accordion"): 'class="accordion"',
}


def contract_signature(html: str) -> tuple:
    """What a layout must not change: the elements, options, forms and named inputs."""
    nodes = list(parse_html(html).walk())
    ids = sorted(n.get(contract.ELEMENT_ATTR) or "" for n in nodes
                 if n.get(contract.ELEMENT_ATTR) is not None)
    values = sorted(n.get(contract.VALUE_ATTR) or "" for n in nodes
                    if n.get(contract.VALUE_ATTR) is not None)
    forms = sorted(n.get("id") or "" for n in nodes if n.tag == "form")
    inputs = sorted((n.get("name") or "", n.get("form") or "") for n in nodes
                    if n.tag in ("input", "select", "button") and n.get("name"))
    return ids, values, forms, inputs


@pytest.fixture(scope="module")
def default_signatures(bookstore_v3: WorldSpec, recipes_v3: WorldSpec,
                       tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple]]:
    root = tmp_path_factory.mktemp("default")
    return {spec.id: [contract_signature(html) for _, html in
                      rendered_pages(spec, root / spec.id, theme="harbor", layout=Layout())]
            for spec in (bookstore_v3, recipes_v3)}


@pytest.mark.parametrize(("field", "variant"), VARIANTS + [("all", NON_CLASSIC.name)],
                         ids=lambda v: str(v))
def test_every_layout_variant_meets_the_contract(field: str, variant: str,
                                                 bookstore_v3: WorldSpec,
                                                 recipes_v3: WorldSpec,
                                                 default_signatures: dict[str, list[tuple]],
                                                 tmp_path: Path) -> None:
    layout = NON_CLASSIC if field == "all" else Layout(**{field: variant})  # type: ignore[arg-type]
    seen = ""
    for spec in (bookstore_v3, recipes_v3):
        machine = Machine(spec)
        theme = "midnight" if spec is recipes_v3 else "harbor"  # a side-column theme too
        pages = rendered_pages(spec, tmp_path / spec.id, theme=theme, layout=layout)
        assert {s.page for s, _ in pages} == {p.id for p in spec.pages}, "every page"
        for (state, html), signature in zip(pages, default_signatures[spec.id], strict=True):
            assert check_page(html, spec, machine, state, base=base_of(spec)) == [], state.page
            assert contract_signature(html) == signature, (spec.id, state.page)
            body = next(n for n in parse_html(html).walk() if n.tag == "body")
            assert set(layout.body_classes()) <= set((body.get("class") or "").split())
            sidebar, main = html.find('<aside class="site-sidebar"'), html.find('<main id="main"')
            assert sidebar == -1 or (sidebar > main) == (layout.sidebar == "right"), state.page
        seen += "".join(html for _, html in pages)
        manifest = json.loads((tmp_path / spec.id / "manifest.json").read_text())
        assert manifest["layout"] == layout.as_dict()
    assert '<aside class="site-sidebar"' in seen
    for (f, v), marker in MARKERS.items():  # this layout's markup, and not the others'
        assert (marker in seen) == (getattr(layout, f) == v), (f, v)


def test_an_accordion_keeps_the_tab_options_and_opens_the_selected_one(
        recipes_v3: WorldSpec, tmp_path: Path) -> None:
    pages = rendered_pages(recipes_v3, tmp_path / "s", theme="harbor", layout=NON_CLASSIC)
    html = next(h for _, h in pages if 'class="accordion"' in h)
    doc = parse_html(html)
    accordion = next(n for n in doc.walk() if "accordion" == (n.get("class") or ""))
    toggles = [n for n in accordion.walk() if n.get(contract.VALUE_ATTR) is not None]
    expanded = [n for n in toggles if n.get("aria-expanded") == "true"]
    assert len(toggles) > 1 and len(expanded) == 1
    panel = next(n for n in accordion.walk() if n.get("role") == "region")
    assert panel.parent is expanded[0].parent.parent  # right under its button's heading
    assert all(n.tag == "button" for n in toggles)


def test_a_site_records_its_layout_and_the_context_shows_it(recipes_v3: WorldSpec,
                                                            tmp_path: Path) -> None:
    site = load_site(render_site(recipes_v3, tmp_path / "a", layout=NON_CLASSIC))
    assert site.layout == NON_CLASSIC
    machine = Machine(recipes_v3)
    ctx = page_context(site, machine, machine.initial_state(), base="")
    assert ctx.layout.name == NON_CLASSIC.name and ctx.layout.listing == "list"
    assert "results-list" in ctx.body_class and "listing-list" in ctx.body_class
    assert "LayoutView:" in describe_context() and "sections:" in describe_context()
    chosen = load_site(render_site(recipes_v3, tmp_path / "b"))
    assert chosen.layout == choose_layout(recipes_v3, chosen.theme)
    # a site written before layouts existed opens in its theme's classic layout
    manifest_path = tmp_path / "b" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["layout"]
    manifest_path.write_text(json.dumps(manifest))
    assert load_site(tmp_path / "b").layout == classic_layout(chosen.theme)
    manifest["layout"] = {"results": "carousel"}
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(SiteError, match="layout"):
        load_site(tmp_path / "b")


# --- in Chromium: a task path through a non-classic layout verifies --------------------------


def test_a_task_path_verifies_in_a_non_classic_layout(recipes_v3: WorldSpec,
                                                      tmp_path: Path) -> None:
    from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
    from webworld.verify.replay import ReplayConfig
    from webworld.verify.runner import verify_worlds

    site_dir = render_site(recipes_v3, tmp_path / "sites" / recipes_v3.id, theme="midnight",
                           layout=NON_CLASSIC)
    explored = explore_world(recipes_v3, ExploreConfig(max_shortest=1, max_longer=0,
                                                       max_instances=1))
    # the paths through a result list (list rows) and a tab strip (the accordion)
    kinds = {(p.id, e.id): e.kind for p in recipes_v3.pages for e in p.elements}
    keep = [c for c in explored.candidates if c["task_id"] in ("purchase", "settings")]
    used = {kinds[s["page"], g["element"]] for c in keep for s in c["steps"] for g in s["gui"]}
    assert {"tabs", "link"} <= used
    explored.candidates = keep
    world_dir = tmp_path / "trajectories" / recipes_v3.id
    write_candidates(explored, world_dir)
    stats = verify_worlds([site_dir], tmp_path / "trajectories", workers=2,
                          config=ReplayConfig())
    verified = [json.loads(x) for x in (world_dir / "verified.jsonl").read_text().splitlines()]
    assert stats[0].verified == len(verified) == len(keep) == 2
    for traj in verified:
        goal = next(t for t in recipes_v3.tasks if t.id == traj["task_id"]).goal.page
        assert traj["final_state"]["page"] == goal
