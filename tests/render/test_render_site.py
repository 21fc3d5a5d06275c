"""Site directories: format, determinism, atomic writes, clear load errors, the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pytest

from webworld.errors import SpecLoadError, WebworldError
from webworld.render import (
    SITE_FORMAT,
    THEMES,
    choose_theme,
    load_site,
    make_environment,
    render_page,
    render_site,
)
from webworld.render import site as site_module
from webworld.spec.io import load_spec, spec_to_json
from webworld.spec.semantics import Machine

SPECS = Path(__file__).parents[2] / "fsm_specs"


@pytest.fixture(scope="module")
def spec():
    return load_spec(SPECS / "online_bookstore_medium_s1.json")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_site_layout_and_manifest(spec, tmp_path: Path) -> None:
    root = render_site(spec, tmp_path / "site", theme="ember")
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest == {
        "format": SITE_FORMAT, "world_id": spec.id, "name": spec.name, "theme": "ember",
        "spec": "spec.json", "pages": {p.id: f"pages/{p.id}.html" for p in spec.pages},
        "transition": "navigate", "generator": "webworld.render/2",
    }
    assert (root / "spec.json").read_text() == spec_to_json(spec)
    for rel in ("templates/layout.html", "templates/widgets.html", "static/theme.css",
                "static/site.js"):
        assert (root / rel).is_file(), rel
    page = (root / "templates" / "pages" / "results.html").read_text()
    assert '{% extends "layout.html" %}' in page and '{% import "widgets.html" as w %}' in page
    site = load_site(root)
    assert site.theme is THEMES["ember"] and site.spec == spec


def test_same_spec_and_theme_give_identical_bytes(spec, tmp_path: Path) -> None:
    a = _files(render_site(spec, tmp_path / "a", theme="ledger"))
    b = _files(render_site(spec, tmp_path / "b", theme="ledger"))
    assert a == b
    c = _files(render_site(spec, tmp_path / "c", theme="aurora"))
    assert c["static/theme.css"] != a["static/theme.css"]
    site = load_site(tmp_path / "a")
    env, machine = make_environment(site), Machine(spec)
    state = machine.initial_state()
    assert render_page(site, env, machine, state) == render_page(
        load_site(tmp_path / "b"), make_environment(site), machine, state)
    assert render_site(spec, tmp_path / "d") and json.loads(
        (tmp_path / "d" / "manifest.json").read_text())["theme"] == choose_theme(spec)


def test_render_is_atomic_a_failed_render_keeps_the_old_site(spec, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    render_site(spec, out, theme="harbor")
    before = _files(out)
    with pytest.raises(WebworldError, match="unknown theme 'nope'"):
        render_site(spec, out, theme="nope")
    assert _files(out) == before

    calls = []

    def half_then_fail(plan, *, home=False):  # fail after some page templates are written
        calls.append(plan.page.id)
        if len(calls) > 3:
            raise OSError("disk full")
        return original(plan, home=home)

    original = site_module.page_template
    monkeypatch.setattr(site_module, "page_template", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        render_site(spec, out, theme="midnight")
    assert _files(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"], "no temporary directory is left"
    monkeypatch.undo()
    render_site(spec, out, theme="midnight")
    assert json.loads((out / "manifest.json").read_text())["theme"] == "midnight"
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_load_site_errors_name_the_file(spec, tmp_path: Path) -> None:
    with pytest.raises(WebworldError, match="no such site directory") as err:
        load_site(tmp_path / "missing")
    assert str(tmp_path / "missing") in str(err.value)

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(WebworldError, match="missing manifest.json") as err:
        load_site(empty)
    assert str(err.value).startswith(str(empty / "manifest.json") + ": ")

    root = render_site(spec, tmp_path / "site", theme="harbor")
    manifest = root / "manifest.json"
    good = manifest.read_text()
    manifest.write_text(good[:40])
    with pytest.raises(WebworldError, match=r"malformed JSON at line \d+, column \d+") as err:
        load_site(root)
    assert str(manifest) in str(err.value)

    manifest.write_text(good.replace(SITE_FORMAT, "webworld-site/9"))
    with pytest.raises(WebworldError, match="unknown site format 'webworld-site/9'"):
        load_site(root)

    manifest.write_text(good.replace('"theme": "harbor"', '"theme": "neon"'))
    with pytest.raises(WebworldError, match="unknown theme 'neon'"):
        load_site(root)

    manifest.write_text(good)
    (root / "spec.json").write_text('{"version": "1.0", "id": "x"}')
    with pytest.raises(SpecLoadError) as err:
        load_site(root)
    assert str(root / "spec.json") in str(err.value) and "schema error" in str(err.value)

    (root / "spec.json").write_text(spec_to_json(spec))
    (root / "templates" / "pages" / "detail.html").unlink()
    with pytest.raises(WebworldError, match="template of page 'detail' is missing") as err:
        load_site(root)
    assert str(root / "templates" / "pages" / "detail.html") in str(err.value)


def test_sandbox_refuses_unsafe_template_code(spec, tmp_path: Path) -> None:
    root = render_site(spec, tmp_path / "site", theme="harbor")
    page = root / "templates" / "pages" / "home.html"
    page.write_text('{% extends "layout.html" %}{% block main %}'
                    "{{ ''.__class__.__mro__ }}{% endblock %}")
    site = load_site(root)
    machine = Machine(spec)
    with pytest.raises(jinja2.exceptions.SecurityError):
        render_page(site, make_environment(site), machine, machine.initial_state())
    page.write_text("{{ site.__init__.__globals__ }}")
    with pytest.raises(jinja2.exceptions.SecurityError):
        render_page(site, make_environment(site), machine, machine.initial_state())


def test_environment_is_strict_and_escapes(spec, tmp_path: Path) -> None:
    root = render_site(spec, tmp_path / "site", theme="harbor")
    site = load_site(root)
    env = make_environment(site)
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    with pytest.raises(jinja2.exceptions.UndefinedError):
        env.from_string("{{ nothing }}").render()


def test_themes_are_many_distinct_and_cover_every_switch(spec) -> None:
    assert len(THEMES) >= 8
    themes = list(THEMES.values())
    assert len({(t.bg, t.primary, t.font_heading) for t in themes}) == len(themes)
    assert {t.layout for t in themes} == {"topnav", "sidebar"}
    assert {t.listing for t in themes} == {"cards", "table"}
    assert {t.mode for t in themes} == {"light", "dark"}
    assert {t.density for t in themes} == {"dense", "airy"}
    assert choose_theme(spec) == choose_theme(spec.model_copy())
    chosen = {choose_theme(load_spec(p)) for p in sorted(SPECS.glob("*.json"))}
    assert len(chosen) >= 3, "worlds get different looks"


@pytest.mark.parametrize("transition", ["navigate", "swap"])
def test_a_page_says_how_the_site_moves_and_has_a_live_region(spec, tmp_path: Path,
                                                              transition: str) -> None:
    site = load_site(render_site(spec.model_copy(update={"transition": transition}),
                                 tmp_path / "site"))
    assert json.loads((site.root / "manifest.json").read_text())["transition"] == transition
    html = render_page(site, make_environment(site), Machine(site.spec),
                       Machine(site.spec).initial_state(None))
    assert f'data-ww-transition="{transition}"' in html
    assert 'data-ww-announce aria-live="polite"' in html


def test_an_item_s_facts_agree_wherever_they_show(tmp_path: Path) -> None:
    """The detail page of a chosen item states its rating once: the page head (the item's
    card) and the details table show the same value."""
    from webworld.propose.procedural import generate
    from webworld.spec.graph import explore_states

    spec = generate("pet adoption", "easy", 9001).spec
    site = load_site(render_site(spec, tmp_path / "site"))
    machine = Machine(spec)
    checked = 0
    for state in explore_states(spec).states:
        if state.page != "detail":
            continue
        html = render_page(site, make_environment(site), machine, state)
        item = next(b for p in spec.pages for b in p.content if b.kind == "cards").items
        titles = [i["title"] for i in item if i["title"] in html]
        if len(titles) != 1:
            continue
        card = next(i for i in item if i["title"] == titles[0])
        rating = next(v for k, v in card.items() if "rating" in k)
        assert html.count(rating) >= 2, (titles[0], rating)  # head and table agree
        others = {v for i in item for k, v in i.items() if "rating" in k} - {rating}
        assert not any(o in html for o in others)
        checked += 1
    assert checked
