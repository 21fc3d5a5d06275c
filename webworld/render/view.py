"""From (site, state) to the data a page template prints, and the HTML itself.

:func:`page_context` builds the typed context of :mod:`webworld.render.context` (the data
contract between the server and a site's templates, ours or an LLM site coder's): views of
the *visible* elements only, with the value each widget shows where the state knows it.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import zlib
from typing import TYPE_CHECKING, Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from webworld import contract
from webworld.errors import WebworldError
from webworld.render.context import (
    REGIONS,
    AlertView,
    BlockView,
    DayCell,
    ElementView,
    EnterSubmit,
    EntryView,
    FieldView,
    FormGroupView,
    FormView,
    HeroView,
    HiddenInput,
    ItemView,
    LayoutView,
    Mirror,
    MonthView,
    OptionView,
    PageContext,
    PageView,
    Regions,
    SiteView,
    ThemeView,
    Urls,
    View,
)
from webworld.render.plan import (
    OVERLAY_KINDS,
    PagePlan,
    Use,
    has_options,
    option_text,
    visible_ids,
)
from webworld.spec.models import Action, Element
from webworld.spec.semantics import Machine, State

if TYPE_CHECKING:
    from webworld.render.layouts import Layout
    from webworld.render.site import Site

FOOTER_YEAR = "2026"


class RenderError(WebworldError):
    """A page cannot be rendered (unknown page, broken template)."""


class PageSandbox(SandboxedEnvironment):
    """Jinja2's sandbox, where a view shows templates its fields only (not pydantic's
    methods): a template reads data, whoever wrote it."""

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, View):
            return attr in _field_names(type(obj))
        return super().is_safe_attribute(obj, attr, value)


@functools.cache
def _field_names(view: type[View]) -> frozenset[str]:
    return frozenset(view.model_fields)


def make_environment(site: Site) -> SandboxedEnvironment:
    """A sandboxed Jinja2 environment over the site's own templates."""
    return PageSandbox(
        loader=jinja2.FileSystemLoader(str(site.root / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_page(site: Site, env: SandboxedEnvironment, machine: Machine, state: State, *,
                base: str = "", error: str | None = None) -> str:
    """The HTML of the page the state is on."""
    context = page_context(site, machine, state, base=base, error=error)
    name = site.manifest.get("pages", {}).get(state.page, f"pages/{state.page}.html")
    try:
        template = env.get_template(name)
    except jinja2.TemplateNotFound:
        raise RenderError(f"no template {name!r} for page {state.page!r}",
                          str(site.root / "templates")) from None
    return template.render(context.template_names())


# --- the context -------------------------------------------------------------------------


def page_context(site: Site, machine: Machine, state: State, *, base: str,
                 error: str | None = None) -> PageContext:
    """What the template of the page ``state`` is on gets; ``error`` is a refused action's
    message to show."""
    spec = site.spec
    plan = site.plan.pages.get(state.page)
    if plan is None:
        raise RenderError(f"state is on page {state.page!r}, which the spec does not have",
                          str(site.root))
    page = plan.page
    builder = _Views(plan, machine, state, base)
    visible = visible_ids(page, machine, state)
    shown = set(visible)
    elements: dict[str, ElementView] = {}
    regions: dict[str, list[ElementView]] = {name: [] for name in REGIONS}
    for name, ids in plan.regions.items():
        for eid in ids:
            if eid in shown:
                view = builder.tree(eid, shown, elements, name)
                regions.setdefault(name, []).append(view)
    _assign_variants(regions)
    if page.terminal:
        for view in regions["back"]:
            view.variant = "primary"
    for eid, bi in plan.listing_block.items():
        if eid in elements:
            _merge_listing(elements[eid], page.content[bi])

    groups = []
    for group in plan.form_groups:
        fields = [elements[e] for e in group.fields if e in shown]
        buttons = [elements[e] for e in group.buttons if e in shown]
        if fields or buttons:
            for i, b in enumerate(buttons):
                b.variant = "primary" if i == 0 else "secondary"
            groups.append(FormGroupView(title=group.title, fields=fields, buttons=buttons,
                                        alert=False))

    alert = None
    if error:
        blocking = [v for v in regions["overlays"] if v.blocking]
        if blocking:
            alert = AlertView(text=error, where="overlay", overlay=blocking[-1].id)
        elif groups:
            groups[0].alert = True
            alert = AlertView(text=error, where="form", overlay="")
        else:
            alert = AlertView(text=error, where="main", overlay="")

    item, summary = _chosen_item(site, machine, state, page.id, page.role)

    theme, layout = site.theme, site.layout
    # where a site has a layout of its own, its results decide how result lists show
    listing = theme.listing if layout.classic else (
        "table" if layout.results == "table" else "cards")
    trail = site.plan.trails.get(page.id, [page.id])
    titles = {p.id: p.title for p in spec.pages}
    crumbs = ["Home" if pid == spec.home else titles.get(pid, pid) for pid in trail]
    hero = None
    if plan.hero_block is not None:
        block = page.content[plan.hero_block]
        hero = HeroView(title=block.title, text=block.text)
    consumed = set(plan.listing_block.values()) | (
        {plan.hero_block} if plan.hero_block is not None else set())
    facts = {f.key.lower(): f.value for f in item.fields} if item else {}
    content = [_block(_agreeing(b, facts)) for i, b in enumerate(page.content) if i not in consumed]
    heading = page.title
    if page.id == spec.home and " — " in heading:
        heading = heading.split(" — ", 1)[1]
    doc_title = page.title if spec.name in page.title else f"{page.title} · {spec.name}"
    return PageContext(
        site=_site_info(site),
        theme=ThemeView(name=theme.name, label=theme.label, layout=theme.layout,
                        listing=listing, mode=theme.mode, density=theme.density),
        layout=_layout_view(layout),
        page=PageView(id=page.id, title=page.title, role=page.role, terminal=page.terminal,
                      heading=heading, doc_title=doc_title, crumbs=crumbs,
                      is_home=page.id == spec.home, about=_about(site, machine, state, page.id)),
        base=base,
        transition=spec.transition,
        urls=Urls(**{
            name: contract.STATIC_URL.format(base=base, path=path) + f"?v={site.static_version}"
            for name, path in (("css", "theme.css"), ("js", "site.js"), ("icon", "favicon.svg"))
        }),
        body_class=" ".join([
            f"theme-{theme.name}", f"layout-{theme.layout}",
            f"listing-{theme.listing if layout.classic else layout.listing}",
            f"mode-{theme.mode}", f"density-{theme.density}", f"role-{_css_word(page.role)}",
            *layout.body_classes(),
        ]),
        elements=elements,
        regions=Regions(**regions),
        form_groups=groups,
        forms=[
            FormView(id=contract.form_id(a.id), url=contract.ACTION_URL.format(base=base, action=a.id),
                     action=a.id, label=a.label)
            for a in page.actions
        ],
        content=content,
        hero=hero,
        alert=alert,
        item=item,
        summary=summary,
        summary_in_form=bool(summary) and bool(groups),
    )


def _layout_view(layout: Layout) -> LayoutView:
    return LayoutView(name=layout.name, results=layout.results, listing=layout.listing,
                      filters=layout.filters, nav=layout.nav, sections=layout.sections,
                      sidebar=layout.sidebar)


def _about(site: Site, machine: Machine, state: State, page_id: str) -> str:
    """What a results page is about: the query searched for or the category picked."""
    for name, how in site.plan.query_vars.get(page_id, []):
        if name not in machine.index:
            continue
        value = machine.value(state, name)
        if value is None or isinstance(value, (bool, tuple)):
            continue
        text = option_text(value)
        return f"Results for “{text}”" if how == "search" else f"Category: {text}"
    return ""


SUMMARY_ROLES = frozenset({"booking", "checkout", "cart", "purchase", "payment", "review", "order"})


def _chosen_item(site: Site, machine: Machine, state: State, page_id: str, role: str
                 ) -> tuple[ItemView | None, ItemView | None]:
    """The item picked from a result list: shown as the subject of a detail page, or as
    an order summary on booking / checkout pages."""
    plan = site.plan
    names = plan.item_vars.get(page_id, [])
    summary_names = [] if names else (
        [v for vs in plan.item_vars.values() for v in vs] if role in SUMMARY_ROLES else [])
    for var_names, is_item in ((names, True), (summary_names, False)):
        for name in var_names:
            if name not in machine.index:
                continue
            value = machine.value(state, name)
            if value is None or value == () or isinstance(value, bool):
                continue
            title = option_text(value[-1] if isinstance(value, tuple) else value)
            card = plan.catalog.get(title, {})
            view = ItemView(title=title, subtitle=card.get("subtitle", ""), thumb=_thumb(title),
                            fields=_fields(card))
            return (view, None) if is_item else (None, view)
    return None, None


def _css_word(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()) or "page"


def _site_info(site: Site) -> SiteView:
    spec = site.spec
    words = [w for w in spec.name.replace("-", " ").split() if w[:1].isalnum()]
    initials = "".join(w[0] for w in words[:2]).upper() or "W"
    tagline = spec.theme[:1].upper() + spec.theme[1:] if spec.theme else ""
    logo = zlib.crc32(spec.id.encode()) % 4
    return SiteView(
        name=spec.name,
        world_id=spec.id,
        tagline=tagline,
        initials=initials,
        logo=logo,
        year=FOOTER_YEAR,
        footer=[
            f"{spec.name} is an independent {spec.theme or 'online'} service.",
            "Customer support: Monday to Friday, 9:00 to 18:00.",
            "Payments are processed securely. Prices include taxes where applicable.",
        ],
    )


def _assign_variants(regions: dict[str, list[ElementView]]) -> None:
    buttons = [v for v in regions["actions"] if v.kind == "button"]
    going = [v for v in buttons if v.navigates]
    plain = [v for v in going if not v.icon]  # "Reserve" rather than "Save to trips"
    if going:
        (plain or going)[0].variant = "primary"
    for view in buttons:
        if not view.navigates:
            view.variant = "ghost"
    nav_buttons = [v for v in regions["nav"] if v.kind == "button"]
    for i, view in enumerate(nav_buttons):
        view.variant = "primary" if i == len(nav_buttons) - 1 and i > 0 else "nav"
    for view in regions["search"] + regions["tabpanel"]:
        if view.kind == "button":
            view.variant = "primary"
    for view in regions["back"]:
        view.variant = "back"
    for view in regions["links"]:
        view.variant = "link"
    for overlay in regions["overlays"]:
        buttons = [c for c in overlay.children if c.kind in ("button", "link")]
        for i, view in enumerate(buttons):
            view.variant = "primary" if i == 0 and len(buttons) > 1 else "secondary"
        if len(buttons) == 1:
            buttons[0].variant = "primary"


def _merge_listing(view: ElementView, block: Any) -> None:
    """Result links get the details of the content card with the same title."""
    items = {item.get("title", ""): item for item in block.items}
    columns: list[str] = []
    for ov in view.options:
        item = items.get(ov.value, {})
        ov.subtitle = item.get("subtitle", "")
        ov.fields = _fields(item)
        for f in ov.fields:
            if f.key not in columns:
                columns.append(f.key)
    for ov in view.options:  # table rows need one cell per column
        have = {f.key: f for f in ov.fields}
        ov.fields = [have.get(c, FieldView(key=c, value="", cls="plain")) for c in columns]
    view.columns = [c[:1].upper() + c[1:] for c in columns]
    view.text = block.title


def _thumb(text: str) -> int:
    return zlib.crc32(text.encode()) % 8


def _fields(item: dict[str, str]) -> list[FieldView]:
    """An item's facts, its title and subtitle aside."""
    return [FieldView(key=k, value=v, cls=_field_class(k)) for k, v in item.items()
            if k not in ("title", "subtitle")]


def _field_class(key: str) -> str:
    key = key.lower()
    if "price" in key or "fee" in key or "cost" in key or "total" in key:
        return "price"
    if "rating" in key or "stars" in key:
        return "rating"
    return "plain"


def _agreeing(block: Any, facts: dict[str, Any]) -> Any:
    """A details table on an item's page states the item's own facts where the two overlap
    (its rating in the page head and in the table are one number)."""
    if not facts or block.kind != "table":
        return block
    rows = [{**row, "value": facts.get(str(row["field"]).lower(), row.get("value"))}
            if "field" in row else row for row in block.items]
    return block.model_copy(update={"items": rows})


def _block(block: Any) -> BlockView:
    items = []
    columns: list[str] = []
    for item in block.items:
        for key in item:
            if key not in columns:
                columns.append(key)
        title = item.get("title", "") or item.get("text", "") or item.get("field", "")
        items.append(EntryView(title=title, subtitle=item.get("subtitle", ""), fields=_fields(item),
                               thumb=_thumb(title), text=item.get("text", "") or ", ".join(
                                   str(v) for v in item.values())))
    rows = [[item.get(c, "") for c in columns] for item in block.items]
    return BlockView(kind=block.kind, title=block.title, text=block.text, entries=items,
                     columns=[c[:1].upper() + c[1:] for c in columns], rows=rows,
                     pairs=columns == ["field", "value"])


_ICONS = (("share", "share"), ("close", "x"), ("search", "search"), ("cart", "cart"),
          ("basket", "cart"), ("sign in", "user"), ("log in", "user"), ("account", "user"),
          ("help", "help"), ("save to", "heart"), ("wishlist", "heart"), ("favourite", "heart"),
          ("filter", "filter"))


def _icon(label: str) -> str:
    low = label.lower()
    for word, icon in _ICONS:
        if word in low:
            return icon
    return ""


class _Views:
    """Builds element views for one (page, state)."""

    def __init__(self, plan: PagePlan, machine: Machine, state: State, base: str) -> None:
        self.plan, self.machine, self.state, self.base = plan, machine, state, base

    # -- helpers --
    def url(self, action: Action) -> str:
        return contract.ACTION_URL.format(base=self.base, action=action.id)

    def current(self, eid: str) -> Any:
        var = self.plan.value_var(eid)
        if var is None or var not in self.machine.index:
            return None
        return self.machine.value(self.state, var)

    def guards_hold(self, action: Action) -> bool:
        return all(self.machine.holds(g, self.state) for g in action.guards if g.var is not None)

    def pick_trigger(self, eid: str) -> Use | None:
        triggers = [u for u in self.plan.uses.get(eid, []) if u.trigger]
        for use in triggers:
            if self.guards_hold(use.action):
                return use
        return triggers[0] if triggers else None

    def tree(self, eid: str, shown: set[str], out: dict[str, ElementView], region: str
             ) -> ElementView:
        view = self.element(self.plan.elements[eid])
        view.region = region
        out[eid] = view
        for child in self.plan.children.get(eid, []):
            if child in shown:
                view.children.append(self.tree(child, shown, out, region))
        return view

    # -- element views --
    def element(self, el: Element) -> ElementView:
        view = ElementView(id=el.id, kind=el.kind, label=el.label, dom_id=f"ww-el-{el.id}",
                           placeholder=el.placeholder or "", icon=_icon(el.label),
                           blocking=el.blocking, title_id=f"ww-el-{el.id}-title")
        kind = el.kind
        if kind in OVERLAY_KINDS:
            view.text = _overlay_text(el)
        elif has_options(el) and kind != "select":
            self.choices(el, view)
        elif kind in ("button", "link"):
            self.clickable(el, view)
        elif kind in ("text_input", "search_box"):
            self.text(el, view)
        elif kind == "select":
            self.select(el, view)
        elif kind == "checkbox":
            self.checkbox(el, view)
        elif kind == "slider":
            self.slider(el, view)
        return view

    def clickable(self, el: Element, view: ElementView) -> None:
        use = self.pick_trigger(el.id)
        if use is None:
            view.disabled = True
            return
        action = use.action
        view.form = contract.form_id(action.id)
        view.navigates = bool(action.navigate) and not action.is_back
        if el.kind == "link" and not action.params:
            view.href = self.url(action)

    def text(self, el: Element, view: ElementView) -> None:
        uses = [u for u in self.plan.uses.get(el.id, []) if u.step.op == "type"]
        uses.sort(key=lambda u: u.param is None)
        if uses:
            owner = uses[0]
            view.form = contract.form_id(owner.action.id)
            view.name = owner.param or ""
            seen = {owner.action.id}
            for other in uses[1:]:
                if other.action.id not in seen and other.param:
                    seen.add(other.action.id)
                    view.mirrors.append(Mirror(name=other.param, source=el.id,
                                               form=contract.form_id(other.action.id)))
        for use in self.plan.uses.get(el.id, []):
            if use.step.op == "key_press" and use.trigger:
                view.enter_submit = EnterSubmit(form=contract.form_id(use.action.id),
                                                label=use.action.label)
                if not view.form:
                    view.form = contract.form_id(use.action.id)
                break

    def select(self, el: Element, view: ElementView) -> None:
        uses = [u for u in self.plan.uses.get(el.id, []) if u.step.op == "select"]
        owner = self._bind_owner(uses, view)
        current = self.current(el.id)
        view.unset = current is None
        view.value = "" if current is None else option_text(current)
        for i, option in enumerate(el.options):
            use = self.plan.binding(el.id, option)
            ov = _option(view, i, option)
            ov.selected = option == view.value and not view.unset
            if use is not None and owner is not None and use.action.id != owner.action.id:
                ov.form = contract.form_id(use.action.id)
            view.options.append(ov)

    def checkbox(self, el: Element, view: ElementView) -> None:
        var = self.plan.check_var(el.id)
        if var is not None and var in self.machine.index:
            view.checked = self.machine.value(self.state, var) is True
        for use in self.plan.uses.get(el.id, []):
            fid = contract.form_id(use.action.id)
            if use.trigger and use.step.op == "check" and not view.check_form:
                view.check_form = fid
            elif use.trigger and use.step.op == "uncheck" and not view.uncheck_form:
                view.uncheck_form = fid
            elif not use.trigger and not view.form:
                view.form = fid
                view.required = use.step.op == "check"

    def slider(self, el: Element, view: ElementView) -> None:
        lo = el.min if el.min is not None else 0
        hi = el.max if el.max is not None else max(lo + 10, 10)
        view.min, view.max, view.step = lo, hi, el.step or 1
        current = self.current(el.id)
        inside = isinstance(current, int) and not isinstance(current, bool) and lo <= current <= hi
        view.unset = not inside
        view.value = str(current if inside else lo)
        self._bind_owner(self.plan.uses.get(el.id, []), view)

    @staticmethod
    def _bind_owner(uses: list[Use], view: ElementView) -> Use | None:
        """The widget belongs to the form of the action it triggers (else its first use):
        its ``form`` and parameter ``name``, and ``submit_form`` when changing it submits."""
        owner = next((u for u in uses if u.trigger), uses[0] if uses else None)
        if owner is not None:
            fid = contract.form_id(owner.action.id)
            view.form = fid
            view.name = owner.param or ""
            if owner.trigger:
                view.submit_form = fid
        return owner

    def choices(self, el: Element, view: ElementView) -> None:
        """radio, tabs, hover menu, date picker, result links: one control per option."""
        current = self.current(el.id)
        view.unset = current is None
        view.value = "" if current is None else option_text(current)
        holders: dict[tuple[str, str], str] = {}
        for i, option in enumerate(el.options):
            ov = _option(view, i, option)
            ov.selected = not view.unset and option == view.value
            use = self.plan.binding(el.id, option)
            if use is None:
                ov.disabled = True
            else:
                fid = contract.form_id(use.action.id)
                ov.form = fid
                ov.name = use.param or ""
                if use.trigger:
                    ov.submit = True
                elif el.kind != "radio" and use.param:
                    key = (fid, use.param)
                    if key not in holders:
                        holders[key] = f"{view.dom_id}-value-{len(holders)}"
                        view.hidden_inputs.append(HiddenInput(
                            dom_id=holders[key], name=use.param, form=fid, value=view.value))
                    ov.pick = holders[key]
            view.options.append(ov)
        if el.kind == "tabs" and view.options and not any(o.selected for o in view.options):
            view.options[0].selected = True  # a tab strip always shows one tab
        if el.kind == "date_picker":
            self.date_picker(el, view)

    def date_picker(self, el: Element, view: ElementView) -> None:
        uses = self.plan.uses.get(el.id, [])
        typed = [u for u in uses if u.step.op == "type"]
        if typed:
            view.typed = True
            view.form = contract.form_id(typed[0].action.id)
            view.name = typed[0].param or ""
        for use in uses:
            if use.step.op == "key_press" and use.trigger:
                view.typed = True
                view.enter_submit = EnterSubmit(form=contract.form_id(use.action.id),
                                                label=use.action.label)
                view.form = view.form or contract.form_id(use.action.id)
                break
        view.months = _months(view.options)


def _option(view: ElementView, i: int, option: str) -> OptionView:
    return OptionView(value=option, label=option, dom_id=f"{view.dom_id}-{i}",
                      thumb=_thumb(option))


def _months(options: list[OptionView]) -> list[MonthView]:
    """Calendar grids (Monday first) for the months that hold the options; options that
    are not ISO dates go in a month-less list."""
    by_month: dict[tuple[int, int], dict[int, OptionView]] = {}
    loose = []
    for ov in options:
        try:
            day = dt.date.fromisoformat(ov.value)
        except ValueError:
            loose.append(ov)
            continue
        ov.label = f"{day.strftime('%A')}, {day.day} {day.strftime('%B %Y')}"
        ov.day = day.day
        by_month.setdefault((day.year, day.month), {})[day.day] = ov
    months = []
    cal = calendar.Calendar(firstweekday=0)
    for (year, month) in _month_span(sorted(by_month)):
        days = by_month.get((year, month), {})
        weeks = []
        for week in cal.monthdayscalendar(year, month):
            weeks.append([DayCell(day=d, option=days.get(d)) for d in week])
        months.append(MonthView(title=dt.date(year, month, 1).strftime("%B %Y"), weeks=weeks,
                                id=f"{year:04d}-{month:02d}"))
    if loose:
        months.append(MonthView(title="Other dates", weeks=[], id="other", loose=loose))
    return months


def _month_span(keys: list[tuple[int, int]], limit: int = 3) -> list[tuple[int, int]]:
    """Every month from the first to the last that holds an option (as a real calendar
    pages through them), or only those months when the span is longer than ``limit``."""
    if not keys:
        return []
    (y0, m0), (y1, m1) = keys[0], keys[-1]
    span = (y1 - y0) * 12 + (m1 - m0) + 1
    if span > limit:
        return keys
    return [(y0 + (m0 - 1 + i) // 12, (m0 - 1 + i) % 12 + 1) for i in range(span)]


def _overlay_text(el: Element) -> str:
    label = el.label.lower()
    if el.kind == "cookie_banner":
        return ("We use cookies and similar technologies to keep this site secure, remember "
                "your preferences and understand how the site is used. You can accept all "
                "cookies or allow only the essential ones.")
    if el.kind == "permission_prompt":
        if "location" in label:
            return "This site wants to know your location to show results near you."
        if "notification" in label:
            return "This site wants to show you notifications."
        return "This site is asking for a permission."
    if "share" in label:
        return "Copy the link to this page or send it to a friend."
    if "confirm" in label or "sure" in label:
        return "Please confirm to continue."
    return ""
