"""A site directory: the self-contained output of rendering one world.

```
<site>/manifest.json          format, world_id, name, theme, layout, spec, pages, generator
<site>/spec.json              the spec (canonical JSON)
<site>/templates/layout.html  page frame (header, nav, main, footer, overlays, forms)
<site>/templates/widgets.html Jinja2 macros, one per widget kind
<site>/templates/pages/<page_id>.html   one per page: extends layout, imports widgets
<site>/static/theme.css, <site>/static/site.js
```

The server loads it with :func:`load_site` and renders each request with
:func:`webworld.render.view.render_page`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from webworld.errors import WebworldError
from webworld.fsio import dumps_json, replace_dir, staging_dir
from webworld.render import assets
from webworld.render.layouts import Layout, choose_layout, classic_layout, layout_from_dict
from webworld.render.plan import PagePlan, SitePlan
from webworld.render.themes import THEMES, Theme, choose_theme
from webworld.spec.io import load_spec, spec_to_json
from webworld.spec.models import WorldSpec

SITE_FORMAT = "webworld-site/1"
GENERATOR = "webworld.render/2"


class SiteError(WebworldError):
    """A site directory that cannot be loaded or written."""


@dataclass
class Site:
    root: Path
    manifest: dict[str, Any]
    spec: WorldSpec
    theme: Theme
    layout: Layout

    @cached_property
    def plan(self) -> SitePlan:
        """Structural layout of every page (computed once per loaded site)."""
        return SitePlan(self.spec)

    @cached_property
    def static_version(self) -> str:
        """A hash of the static files: pages link ``theme.css?v=<hash>``, so browsers may
        keep them for good and a changed file is fetched anew."""
        import hashlib

        digest = hashlib.sha256()
        static = self.root / "static"
        for path in sorted(static.rglob("*")) if static.is_dir() else []:
            if path.is_file():
                digest.update(path.relative_to(static).as_posix().encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()[:12]


# --- writing -------------------------------------------------------------------------------


_REGION_CALLS = {
    "search": "{{ w.region_search(regions.search) }}",
    "tabs": "{{ w.region_tabs(regions.tabs, regions.tabpanel, content, layout.listing, "
            "layout.sections) }}",
    "toolbar": "{{ w.region_toolbar(regions.toolbar) }}",
    "results": "{{ w.region_results(regions.toolbar, regions.listing, layout) }}",
    "listing": "{{ w.region_listing(regions.listing, layout.listing) }}",
    "form": "{{ w.region_form(form_groups, alert, summary if summary_in_form else none) }}",
    "actions": "{{ w.region_actions(regions.actions) }}",
    "back": "{{ w.region_actions(regions.back) }}",
    "links": "{{ w.region_links(regions.links) }}",
    "feedback": "{{ w.region_feedback(regions.feedback) }}",
    "tabpanel": "{{ w.region_actions(regions.tabpanel) }}",
}
_BODY_ORDER = ("search", "tabs", "toolbar", "listing", "form", "actions", "back", "links",
               "feedback", "tabpanel")
"""Regions in page order; the layout prints ``nav`` and ``overlays``."""


def page_template(plan: PagePlan, *, home: bool = False) -> str:
    """One page's template: a head that fits the page (home hero, success confirmation,
    or title with breadcrumbs), then every other region the page has, in a fixed order.
    The template does not depend on the site's layout: the calls pass ``layout`` on."""
    page = plan.page
    has = {name for name, ids in plan.regions.items() if ids}
    if page.terminal:
        head = ["{{ w.confirmation(page, content, regions.back, alert) }}"]
        done, content_shown = {"back"}, True
    elif home:
        head = ["{{ w.hero(page, hero, regions.search, regions.actions, alert) }}"]
        done, content_shown = {"search", "actions"}, False
    else:
        head = ["{{ w.page_head(page, regions.back, regions.actions, alert, item, summary, "
                "summary_in_form) }}"]
        done, content_shown = {"back", "actions"}, False
    body = []
    if not content_shown and "tabs" not in has:
        body.append("{{ w.blocks(content, layout.listing) }}")
    refine = {"toolbar", "listing"} <= has  # filters and results: one call, for "left"
    for name in _BODY_ORDER:
        if name not in has or name in done or (name == "tabpanel" and "tabs" in has):
            continue
        if refine and name == "listing":
            continue
        call = _REGION_CALLS["results" if refine and name == "toolbar" else name]
        if name == "tabs" and content_shown:  # the content is already on the page
            call = call.replace("content,", "[],")
        body.append(call)
    return "\n".join([
        f"{{# {page.id}: {page.title} (role {page.role}) #}}",
        '{% extends "layout.html" %}',
        '{% import "widgets.html" as w %}',
        "{% block main %}",
        *head,
        *body,
        "{% endblock %}",
    ]) + "\n"


def has_furniture(spec: WorldSpec) -> bool:
    """Whether the spec has site furniture (elements with an ``area``)."""
    return any(e.area is not None for p in spec.pages for e in p.elements)


def _site_files(spec: WorldSpec, theme: Theme, layout: Layout) -> Iterator[tuple[str, str]]:
    """Every file of the site as (relative path, text), the manifest last."""
    plan = SitePlan(spec)
    yield "spec.json", spec_to_json(spec)
    yield "templates/layout.html", assets.LAYOUT_HTML
    yield "templates/widgets.html", assets.WIDGETS_HTML
    # a classic site without furniture keeps the sheet (and so the ?v= hash its pages link)
    # it had before furniture and layouts existed
    frame = not layout.classic or has_furniture(spec)
    yield "static/theme.css", assets.theme_css(theme, frame=frame)
    yield "static/site.js", assets.SITE_JS
    yield "static/favicon.svg", assets.favicon_svg(spec, theme)
    pages = {}
    for page in spec.pages:
        rel = f"pages/{page.id}.html"
        pages[page.id] = rel
        yield f"templates/{rel}", page_template(plan.pages[page.id], home=page.id == spec.home)
    manifest = {
        "format": SITE_FORMAT,
        "world_id": spec.id,
        "name": spec.name,
        "theme": theme.name,
        "layout": layout.as_dict(),
        "spec": "spec.json",
        "pages": pages,
        "transition": spec.transition,
        "generator": GENERATOR,
    }
    if layout == classic_layout(theme):  # implied by its absence: older sites' manifest as was
        del manifest["layout"]
    yield "manifest.json", dumps_json(manifest)


def render_site(spec: WorldSpec, out_dir: Path, *, theme: str | None = None,
                layout: Layout | None = None) -> Path:
    """Write the site directory for ``spec`` at ``out_dir``, atomically: it is built in a
    temporary directory next to it and renamed over the old one only when complete.
    ``layout`` forces one (else :func:`~webworld.render.layouts.choose_layout`)."""
    out_dir = Path(out_dir)
    name = theme or choose_theme(spec)
    if name not in THEMES:
        raise SiteError(f"unknown theme {name!r} (choose from {', '.join(sorted(THEMES))})")
    chosen = layout or choose_layout(spec, THEMES[name])
    with staging_dir(out_dir) as tmp:
        for rel, text in _site_files(spec, THEMES[name], chosen):
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o755)
        replace_dir(tmp, out_dir)
    return out_dir


# --- reading -------------------------------------------------------------------------------


def load_site(site_dir: Path) -> Site:
    """Open a rendered site; every problem names the file it is about."""
    root = Path(site_dir)
    if not root.is_dir():
        raise SiteError("no such site directory" if not root.exists()
                        else "not a directory, expected a rendered site", str(root))
    manifest_path = root / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SiteError("missing manifest.json (is this a rendered site?)",
                        str(manifest_path)) from None
    except UnicodeDecodeError as exc:
        raise SiteError(f"not UTF-8 text (byte {exc.start})", str(manifest_path)) from None
    except json.JSONDecodeError as exc:
        raise SiteError(f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                        str(manifest_path)) from None
    if not isinstance(manifest, dict):
        raise SiteError("expected a JSON object", str(manifest_path))
    fmt = manifest.get("format")
    if fmt != SITE_FORMAT:
        raise SiteError(f"unknown site format {fmt!r} (this webworld reads {SITE_FORMAT!r})",
                        str(manifest_path))
    for key, kind in (("spec", str), ("theme", str), ("pages", dict)):
        if not isinstance(manifest.get(key), kind):
            raise SiteError(f"field {key!r} is missing or not a {kind.__name__}",
                            str(manifest_path))
    theme = THEMES.get(manifest["theme"])
    if theme is None:
        raise SiteError(f"unknown theme {manifest['theme']!r} (known: "
                        f"{', '.join(sorted(THEMES))})", str(manifest_path))
    layout = classic_layout(theme)  # a site written before layouts existed
    if "layout" in manifest:
        try:
            layout = layout_from_dict(manifest["layout"])
        except (TypeError, ValueError) as exc:
            raise SiteError(f"field 'layout' is not a layout: {exc}", str(manifest_path)) from None
    spec = load_spec(root / manifest["spec"])  # SpecLoadError names the spec file
    missing = [p.id for p in spec.pages if p.id not in manifest["pages"]]
    if missing:
        raise SiteError(f"pages {missing} of the spec have no template", str(manifest_path))
    for page_id, rel in sorted(manifest["pages"].items()):
        path = root / "templates" / str(rel)
        if not path.is_file():
            raise SiteError(f"template of page {page_id!r} is missing", str(path))
    for rel in ("templates/layout.html", "static/theme.css", "static/site.js"):
        if not (root / rel).is_file():
            raise SiteError("missing file of the site", str(root / rel))
    return Site(root=root, manifest=manifest, spec=spec, theme=theme, layout=layout)
