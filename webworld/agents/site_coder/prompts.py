"""What the site coder tells the model: the style-guide request, the page-template request
(the template contract, this page's data in sample states, the widget macros) and the
repair messages."""

from __future__ import annotations

import json
import re
from typing import Any

from webworld import contract
from webworld.agents.site_coder.evaluate import format_problems
from webworld.agents.site_coder.style import FONTS, MAX_EXTRA_CSS_CHARS, StyleGuide
from webworld.render import assets
from webworld.render.context import PageContext, describe_context
from webworld.render.site import Site, page_template
from webworld.render.themes import THEMES
from webworld.render.view import page_context
from webworld.spec.models import WorldSpec
from webworld.spec.semantics import Machine, State

SYSTEM = ("You are a front-end developer on a website generator. The site's data, layout and "
          "widget macros are fixed; you write what the site looks like. Reply with one JSON "
          "object only.")

_MACRO = re.compile(r"{%-?\s*macro\s+(\w+)\(([^)]*)\)")
MACRO_NOTES = {
    "element": "renders ANY element view by its kind, with its children, putting data-ww-id "
               "on the right node; the safe default for every element. Pass layout.listing "
               "for result lists: w.element(v, layout.listing)",
    "button": "a button or link view (kind button, or link without options)",
    "text_input": "a labelled text field", "search_box": "a search field",
    "select": "a native <select>", "checkbox": "a labelled checkbox", "radio": "a radio group",
    "slider": "a range input", "date_picker": "a date field with its calendar popup",
    "tabs": "a tab strip; a call macro: {% call w.tabs(v, layout.sections) %}panel "
            "content{% endcall %} (an accordion when layout.sections is 'accordion')",
    "hover_menu": "a menu button with its items (the layout renders nav menus)",
    "option_links": "a result list (a link view with options) as cards, list rows or a "
                    "table (pass layout.listing)",
    "site_sidebar": "the layout renders regions.sidebar; do not call",
    "overlay": "a modal / cookie banner / permission prompt (the layout renders these)",
    "region_overlays": "the layout renders the overlays; do not call",
    "region_nav": "the layout renders regions.nav; do not call",
    "link_group": "a titled list of site links (a link view with options in regions.header, "
                  "regions.sidebar or regions.footer: the layout renders these)",
    "region_search": "regions.search in a search bar",
    "region_tabs": "regions.tabs with regions.tabpanel and the content blocks inside the "
                   "first tab's panel",
    "region_toolbar": "regions.toolbar (sort / filter controls) in a toolbar",
    "region_listing": "regions.listing as result sections (cards, list rows or table)",
    "region_results": "regions.toolbar and regions.listing as layout.filters has them: the "
                      "toolbar above the results, or a filter panel left of them",
    "region_form": "form_groups as form cards (shows the alert of a group with g.alert) and "
                   "an optional summary card",
    "region_actions": "a row of element views (regions.actions, regions.back, ...)",
    "region_links": "regions.links as a 'See also' list",
    "region_feedback": "regions.feedback",
    "page_head": "breadcrumbs with the back views, the title (or the chosen item), the "
                 "action views, the summary card and the alert when alert.where == 'main'",
    "hero": "the home page hero: title, text, the search and action views, the main alert",
    "confirmation": "the success card of a terminal page: content, back views, main alert",
    "crumbs": "breadcrumbs plus the back views", "facts": "a <dl> of fields",
    "summary_card": "the chosen item as an order summary", "alert_box": 'role="alert" box',
    "icon": "an inline SVG icon by name (search, chevron, calendar, check, x, share, user, "
            "cart, heart, help, alert, back, filter, phone, pin, cookie)",
    "brand": "the site logo and name (the layout prints it)",
    "block": "one content block", "blocks": "all content blocks",
    "hidden_inputs": "hidden inputs of a view (the element macros already include them)",
    "choice_attrs": "attributes of one option button (submit / pick / disabled)",
}


def macro_catalogue() -> str:
    lines = []
    for name, args in _MACRO.findall(assets.WIDGETS_HTML):
        args = " ".join(args.split())
        lines.append(f"- w.{name}({args}): {MACRO_NOTES.get(name, '')}".rstrip(": "))
    return "\n".join(lines)


def css_classes() -> list[str]:
    return sorted(set(re.findall(r"\.([a-zA-Z][\w-]*)", assets.css.BASE_CSS)))


def _dom_rules() -> str:
    doc = contract.__doc__ or ""
    start = doc.find("DOM rules\n")
    return doc[start:].strip() if start >= 0 else doc.strip()


def style_messages(spec: WorldSpec, base_theme: str | None) -> list[dict[str, str]]:
    pages = "\n".join(f"- {p.title} (role {p.role}{', success page' if p.terminal else ''})"
                      for p in spec.pages)
    builtin = "\n".join(f"- {t.name}: {t.layout}, {t.listing}, {t.mode}, {t.density}, primary "
                        f"{t.primary}, background {t.bg}" for t in THEMES.values())
    forced = ""
    if base_theme:
        t = THEMES[base_theme]
        forced = (f"\nThe site must keep the structure of the built-in theme {t.name!r}: "
                  f"layout {t.layout!r}, listing {t.listing!r}.\n")
    user = f"""Design the look of the website "{spec.name}" ({spec.theme}).

Pages:
{pages}

Choose a palette (hex colours, readable contrast: text on bg and surface, primary_text on
primary, header_text on header_bg), fonts (body and headings, from: {", ".join(FONTS)}; no
web fonts), layout (topnav: navigation across the top; sidebar: a side column), listing
(result lists as cards or as a table), mode (light / dark), density (dense / airy), corner
radius, heading weight, and a label for the look.
{forced}
Built-in looks, for reference (make this site's own):
{builtin}

extra_css: optional, at most {MAX_EXTRA_CSS_CHARS} characters of extra rules appended to
the site's stylesheet, using these classes and CSS variables (var(--primary), var(--surface),
var(--radius), ...). Rules: no @import, no @font-face, no url(), no other hosts, no
backslashes, nothing that hides controls (display:none, visibility:hidden,
pointer-events:none), no selectors on data-ww-* attributes.
Classes of the stylesheet: {" ".join(css_classes())}

Reply with JSON: {{"label", "palette": {{"bg", "surface", "surface_alt", "text", "muted",
"border", "primary", "primary_text", "accent", "header_bg", "header_text", "hero_from",
"hero_to"}}, "font_body", "font_heading", "heading_weight", "radius", "nav_uppercase",
"layout", "listing", "mode", "density", "extra_css"}}."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _trim(view: dict[str, Any], keep_options: int = 4) -> dict[str, Any]:
    """A view for the prompt: empty fields dropped, long option lists cut, children by id."""
    out: dict[str, Any] = {}
    kind = view.get("kind")
    noise = set() if kind == "slider" else {"min", "max", "step"}
    if kind not in ("select", "slider", "radio", "tabs", "hover_menu", "date_picker", "link"):
        noise.add("unset")
    for key, value in view.items():
        if key in noise:
            continue
        if key == "children":
            if value:
                out["children"] = [c["id"] for c in value]
        elif key == "options":
            if value:
                out["options"] = [_trim(o) for o in value[:keep_options]]
                if len(value) > keep_options:
                    out["options_more"] = f"{len(value) - keep_options} more options like these"
        elif key == "months":
            if value:
                out["months"] = f"{len(value)} month grid(s) (the date_picker macro draws them)"
        elif (value is not False and value is not None and value != "" and value != []) or (
                key in ("id", "kind", "label")):
            out[key] = value
    return out


def _context_summary(ctx: PageContext) -> dict[str, Any]:
    regions = ctx.regions.model_dump(include={name for name, views in ctx.regions if views})
    return {
        "regions": {k: [v["id"] for v in vs] for k, vs in regions.items()},
        "form_groups": [{"title": g.title, "fields": [f.id for f in g.fields],
                         "buttons": [b.id for b in g.buttons]} for g in ctx.form_groups],
        "forms": [f.id for f in ctx.forms],
        "content": [{"kind": b.kind, "title": b.title, "entries": len(b.entries)}
                    for b in ctx.content],
        "hero": ctx.hero and ctx.hero.model_dump(),
        "item": ctx.item and {"title": ctx.item.title, "fields": [f.key for f in ctx.item.fields]},
        "summary": ctx.summary and {"title": ctx.summary.title},
        "summary_in_form": ctx.summary_in_form,
        "about": ctx.page.about,
    }


def page_messages(site: Site, machine: Machine, samples: list[State], page_id: str,
                  style: StyleGuide | None, base: str) -> list[dict[str, str]]:
    """The request for one page template: the contract, the page's data, the macros."""
    spec = site.spec
    page = spec.page(page_id)
    contexts = [page_context(site, machine, s, base=base) for s in samples]
    picked, shown_ids = [], set()
    for ctx in contexts:  # the first state, then those that show more elements
        new = set(ctx.elements) - shown_ids
        if not picked or new:
            picked.append(ctx)
            shown_ids |= new
        if len(picked) >= 3:
            break
    views: dict[str, dict[str, Any]] = {}
    for ctx in picked:
        for eid, v in ctx.elements.items():
            if eid not in views:
                views[eid] = _trim(v.model_dump())
    states = "\n".join(f"State {i}: " + json.dumps(_context_summary(ctx), ensure_ascii=False)
                       for i, ctx in enumerate(picked, 1))
    first = contexts[0]
    look = (f'The look: "{style.label}", {style.mode}, {style.density}; extra CSS rules:\n'
            f"{style.extra_css or '(none)'}" if style else "The look: a built-in theme.")
    plan = site.plan.pages[page_id]
    reference = page_template(plan, home=page_id == spec.home)
    others = ", ".join(f"{p.id} ({p.title})" for p in spec.pages if p.id != page_id)
    what = ", ".join([f"id {page.id}", f"role {page.role}"]
                     + (["a success page that ends a task"] if page.terminal else [])
                     + (["the home page"] if page_id == spec.home else []))
    user = f"""Write the Jinja2 template of the page "{page.title}" ({what}) of the site
"{spec.name}" ({spec.theme}). Other pages: {others}.

# How a page template works
- Start with {{% extends "layout.html" %}} and {{% import "widgets.html" as w %}}; put the
  whole page body in {{% block main %}}...{{% endblock %}} (anything outside is not shown).
- layout.html already renders <head>, the header with the brand, regions.nav and
  regions.header, the sidebar of regions.sidebar, every overlay of regions.overlays (with the
  alert when alert.where == "overlay"), the footer with regions.footer and one hidden <form>
  per action (forms). Do not render those again.
- Every element view in `elements` that is not in regions.nav, regions.header,
  regions.sidebar, regions.footer or regions.overlays (or a child of one of them) must be
  rendered EXACTLY ONCE, and hidden elements not at all.
  Render each top-level view of the other regions once, e.g. with w.element(v) or a
  region macro; an element's macro renders its children, so never render a child again.
  Iterate over the regions (they hold only the visible views) instead of naming ids; if you
  name an element, guard it: {{% if "x" in elements %}}...{{% endif %}}.
- regions.form holds the same views as form_groups: render form_groups (w.region_form) OR
  regions.form, never both. regions.tabpanel belongs inside the first tab's panel
  (w.region_tabs does that).
- Take every URL, form id, input name and option value from the views (v.form, v.name,
  v.href, o.value, forms...). Never write them by hand.
- When `alert` is set, its text must appear exactly once in an element with role="alert"
  (w.alert_box(alert.text)): where "main" in the page body, "form" in the group with
  g.alert (w.region_form does it), "overlay" is done by the layout. No alert otherwise.
- Pages are served with a strict Content-Security-Policy: no style="" attributes, no
  <style>, no <script>, no on*="" handlers, no javascript: URLs, no external resources,
  no links except to views' href. Style with the stylesheet's classes.
- Templates run in Jinja2's sandbox with StrictUndefined: use only the context keys and
  view fields below; no attributes starting with "_", no range(), no * or ** operators,
  no numbers above 1000.
- Make it look like a real, polished page of this site: headings, short copy that fits the
  page, and the page's content blocks (content, hero, item, summary) laid out well.

# The context every page template gets (webworld.render.context.PageContext)
The fields of PageContext are the template's top-level names; every other view is read by
its fields as attributes (v.label, o.selected); `elements` is a dict (element id -> view).
Every field always exists: "" / false / [] / None mean "none". Views have no methods.
{describe_context()}

# DOM rules the rendered page must follow (the macros follow them for you)
{_dom_rules()}

# Macros of widgets.html (call them as w.<name>)
{macro_catalogue()}

# This page
page: {json.dumps(first.page.model_dump(), ensure_ascii=False)}
theme: {json.dumps(first.theme.model_dump(), ensure_ascii=False)}
layout: {json.dumps(first.layout.model_dump(), ensure_ascii=False)}
{look}
Stylesheet classes you can use: {" ".join(css_classes())}

What the context holds in sample states (regions, form groups and blocks by element id):
{states}

Element views, one per line (fields that are empty / false are left out here but always
exist in the real view):
{chr(10).join(f"{eid}: {json.dumps(v, ensure_ascii=False)}" for eid, v in views.items())}

# A minimal correct template of this page (the built-in renderer's; design your own)
{reference}
Reply with JSON: {{"template": "<the complete template>"}}."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def repair_message(problems: list[str], legend: list[str], round_: int, rounds: int) -> str:
    return (f"(Repair round {round_} of {rounds}.) Your template was rendered in several "
            "states of the site and checked. Problems:\n"
            f"{format_problems(problems, legend)}\n\n"
            "Fix every problem and reply with the complete corrected template as JSON: "
            '{"template": "..."}.')


