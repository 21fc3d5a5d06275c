"""The typed template context: the shipped templates read only what the types declare, the
sandbox shows templates the views' fields and nothing else, and every field is described."""

from __future__ import annotations

from pathlib import Path

import jinja2
import jinja2.meta
import jinja2.nodes as jn
import pytest
from jinja2.sandbox import SecurityError

from webworld.render import assets, load_site, make_environment, page_context, render_site
from webworld.render.context import PageContext, context_views
from webworld.render.plan import SitePlan
from webworld.render.site import page_template
from webworld.spec.io import load_spec
from webworld.spec.semantics import Machine

EXAMPLES = sorted((Path(__file__).parents[2] / "fsm_specs").glob("*.json"))
NOT_VIEWS = {"loop", "w", "caller"}
"""Names whose attributes are Jinja2's or macros, not the context's."""


def shipped_templates() -> dict[str, str]:
    """The layout, the widgets and every page template the renderer writes for the examples."""
    sources = {"layout.html": assets.LAYOUT_HTML, "widgets.html": assets.WIDGETS_HTML}
    for path in EXAMPLES:
        spec = load_spec(path)
        plan = SitePlan(spec)
        for page in spec.pages:
            sources[f"{spec.id}/{page.id}"] = page_template(plan.pages[page.id],
                                                            home=page.id == spec.home)
    return sources


def test_shipped_templates_read_only_declared_fields() -> None:
    env = jinja2.Environment()
    fields = {name for view in context_views() for name in view.model_fields}
    top_level = set(PageContext.model_fields)
    read: set[str] = set()
    for name, source in shipped_templates().items():
        tree = env.parse(source)
        for node in tree.find_all(jn.Getattr):
            if not (isinstance(node.node, jn.Name) and node.node.name in NOT_VIEWS):
                read.add(node.attr)
        if name != "widgets.html":  # the macros get their data as arguments
            undeclared = jinja2.meta.find_undeclared_variables(tree) - NOT_VIEWS
            assert undeclared <= top_level, (name, undeclared - top_level)
    assert {"navigates", "columns"} & fields == {"navigates", "columns"}
    assert {"columns", "enter_submit", "months", "weeks", "option"} <= read
    assert read <= fields, f"read by a template but in no view type: {sorted(read - fields)}"


@pytest.mark.parametrize("view", context_views(), ids=lambda v: v.__name__)
def test_every_field_of_the_context_is_described(view) -> None:
    assert view.__doc__ and view.__doc__.strip()
    bare = [name for name, info in view.model_fields.items() if not info.description]
    assert bare == [], f"{view.__name__}: fields without a description: {bare}"


@pytest.fixture(scope="module")
def bookstore(tmp_path_factory: pytest.TempPathFactory):
    spec = load_spec(next(p for p in EXAMPLES if p.stem == "online_bookstore_medium_s1"))
    site = load_site(render_site(spec, tmp_path_factory.mktemp("b") / "site"))
    machine = Machine(spec)
    return site, make_environment(site), page_context(site, machine, machine.initial_state(),
                                                      base="")


def test_sandbox_shows_a_view_its_fields_only(bookstore) -> None:
    site, env, ctx = bookstore
    names = ctx.template_names()
    banner = "{{ elements.cookie_banner.label }}|{{ elements['cookie_banner']['blocking'] }}"
    assert env.from_string(banner).render(names) == f"{ctx.elements['cookie_banner'].label}|True"
    assert env.from_string("{{ page.title }}").render(names) == ctx.page.title
    for source in ("{{ page.model_dump() }}", "{{ regions.model_copy() }}",
                   "{{ page.model_config }}", "{{ elements.cookie_banner.model_dump_json() }}"):
        with pytest.raises((SecurityError, jinja2.UndefinedError)):
            env.from_string(source).render(names)
