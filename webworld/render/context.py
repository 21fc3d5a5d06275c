"""The data a page template gets: typed views, the contract between the server and a site's
templates (ours or an LLM site coder's).

:func:`webworld.render.view.page_context` builds a :class:`PageContext`; its fields are the
template's top-level names (``page``, ``regions``, ``elements``, ...), and every nested view
is a model whose fields the template reads as attributes (``el.navigates``, ``el.columns``).
A context never carries the raw state: only views of the *visible* elements, with the value
each widget shows where the state knows it. Every field always exists (templates run with
``StrictUndefined``); "" / False / [] / None mean "none".

The site coder's prompt describes the context from these models (:func:`describe_context`),
so what a model is told and what a template gets cannot drift apart.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from webworld.spec.models import BlockKind, ElementKind

REGIONS = ("overlays", "nav", "header", "sidebar", "footer", "back", "search", "tabs",
           "tabpanel", "listing", "toolbar", "form", "actions", "links", "feedback")
"""The regions of a page, in the order the renderer's page templates print them."""


class View(BaseModel):
    """A view handed to templates; mutable while the page's views are assembled."""

    model_config = ConfigDict(extra="forbid")


# --- element views ---------------------------------------------------------------------------


class FieldView(View):
    """One fact of an item (a card's or a table row's cell)."""

    key: str = Field(description="the fact's name, e.g. 'price'")
    value: str | None = Field(description="the fact as shown")
    cls: Literal["price", "rating", "plain"] = Field(description="how to style the value")


class OptionView(View):
    """One choice of an option container (select, radio, tabs, menu, date picker, result list)."""

    value: str = Field(description="the option as submitted (and as data-ww-value)")
    label: str = Field(description="the option as shown (a date picker's: the spelled-out day)")
    dom_id: str = Field(description="id attribute of the option's control")
    selected: bool = Field(False, description="the state has this option chosen")
    form: str = Field("", description="form id the option submits or belongs to")
    name: str = Field("", description="parameter name the option's value is sent as")
    submit: bool = Field(False, description="choosing it submits `form` at once")
    pick: str = Field("", description="dom_id of the hidden input choosing it fills in "
                      "(data-ww-pick), when it does not submit")
    disabled: bool = Field(False, description="no action chooses this option")
    subtitle: str = Field("", description="a result list item's subtitle")
    fields: list[FieldView] = Field(default_factory=list, description="a result list item's "
                                    "facts, one per column of the list")
    thumb: int = Field(0, description="placeholder picture variant, 0-7")
    day: int | None = Field(None, description="day of the month of a date picker's ISO-date "
                            "option, else None")


class HiddenInput(View):
    """A hidden input holding an option container's chosen value for a form."""

    dom_id: str = Field(description="its id (an option's `pick` points here)")
    name: str = Field(description="parameter name")
    form: str = Field(description="form id")
    value: str = Field(description="the value it holds now")


class Mirror(View):
    """A hidden input that copies a text field's value into a second form."""

    name: str = Field(description="parameter name in that form")
    form: str = Field(description="form id")
    source: str = Field(description="element id whose value is copied (data-ww-mirror)")


class EnterSubmit(View):
    """A text field whose Enter key submits a form."""

    form: str = Field(description="form id Enter submits")
    label: str = Field(description="the action's label (for a visible submit button)")


class DayCell(View):
    """One cell of a month grid."""

    day: int = Field(description="day of the month, 0 outside it")
    option: OptionView | None = Field(description="the option of that day, or None when "
                                      "the day cannot be chosen")


class MonthView(View):
    """A calendar month of a date picker (Monday first)."""

    id: str = Field(description="'YYYY-MM', or 'other' for options that are not ISO dates")
    title: str = Field(description="e.g. 'March 2026'")
    weeks: list[list[DayCell]] = Field(description="rows of 7 cells (empty for 'other')")
    loose: list[OptionView] = Field(default_factory=list, description="options without a "
                                    "place in the grid (not ISO dates)")


class ElementView(View):
    """A visible element of the page, with what its widget shows and which form it feeds."""

    id: str = Field(description="the spec's element id (the data-ww-id attribute)")
    kind: ElementKind = Field(description="the element's kind (picks its macro)")
    label: str = Field(description="the element's label")
    dom_id: str = Field(description="id attribute of its control")
    placeholder: str = Field("", description="placeholder text of a field")
    variant: Literal["primary", "secondary", "ghost", "nav", "back", "link"] = Field(
        "secondary", description="button style (the btn-<variant> class)")
    icon: str = Field("", description="icon name fitting the label (w.icon), or ''")
    region: str = Field("", description="the region it is in (a child: its parent's)")
    form: str = Field("", description="form id it submits or belongs to")
    name: str = Field("", description="parameter name its value is sent as")
    href: str = Field("", description="URL of a link that needs no parameters")
    submit_form: str = Field("", description="form id a change submits at once "
                             "(data-ww-submit)")
    check_form: str = Field("", description="checkbox: form id checking it submits")
    uncheck_form: str = Field("", description="checkbox: form id unchecking it submits")
    checked: bool = Field(False, description="checkbox: checked in this state")
    required: bool = Field(False, description="checkbox: must be checked to submit its form")
    disabled: bool = Field(False, description="no action can use it in this state")
    value: str = Field("", description="the value the widget shows in this state")
    unset: bool = Field(True, description="the state has no value for it yet")
    min: int = Field(0, description="slider: lowest value")
    max: int = Field(0, description="slider: highest value")
    step: int = Field(1, description="slider: step")
    options: list[OptionView] = Field(default_factory=list, description="one per choice")
    children: list[ElementView] = Field(default_factory=list, description="visible elements "
                                        "inside it (an overlay's, a menu's, a tab panel's)")
    hidden_inputs: list[HiddenInput] = Field(default_factory=list, description="hidden "
                                             "inputs its options fill in")
    mirrors: list[Mirror] = Field(default_factory=list, description="hidden inputs copying "
                                  "its text into other forms")
    enter_submit: EnterSubmit | None = Field(None, description="the form Enter submits, or None")
    months: list[MonthView] = Field(default_factory=list, description="date picker: the "
                                    "calendar months holding its options")
    typed: bool = Field(False, description="date picker: the date is typed, not only picked")
    blocking: bool = Field(False, description="overlay: blocks the page until dismissed")
    title_id: str = Field(description="id for an overlay's title (aria-labelledby)")
    text: str = Field("", description="an overlay's body text; a result list's heading")
    navigates: bool = Field(False, description="button / link: its action goes to another "
                            "page (not back)")
    columns: list[str] = Field(default_factory=list, description="result list: the table "
                               "column headings after the title, one per option field")


# --- page parts ------------------------------------------------------------------------------


class SiteView(View):
    """The site as a whole (brand, footer)."""

    name: str = Field(description="the site's name")
    world_id: str = Field(description="the spec's id")
    tagline: str = Field(description="the theme, capitalised")
    initials: str = Field(description="one or two letters for the logo mark")
    logo: int = Field(description="logo shape, 0-3")
    year: str = Field(description="the year in the footer")
    footer: list[str] = Field(description="three footer lines: about, service, payments")


class ThemeView(View):
    """The look the site is rendered in."""

    name: str = Field(description="the theme's name")
    label: str = Field(description="the theme's display name")
    layout: Literal["topnav", "sidebar"] = Field(description="navigation across the top or "
                                                 "in a side column")
    listing: Literal["cards", "table"] = Field(description="result lists as cards or a table: "
                                               "the theme's, or where the site has a layout of "
                                               "its own its results as cards or a table "
                                               "(layout.listing tells list rows apart too)")
    mode: Literal["light", "dark"] = Field(description="light or dark colours")
    density: Literal["dense", "airy"] = Field(description="spacing")


class LayoutView(View):
    """How the site arranges its pages (never what they hold): chosen per world, like the
    theme. Pass `listing` to the result-list macros and the view itself to region macros
    that take it; the layout itself already follows `nav` and `sidebar`."""

    name: str = Field(description="'classic' (the theme's arrangement, as sites had before "
                      "layouts), or the choices joined, e.g. 'list-left-mega-accordion-right'")
    results: Literal["grid", "list", "table"] = Field(description="result lists as a grid of "
                                                      "cards, full-width rows (thumbnail left, "
                                                      "text right) or a table")
    listing: Literal["cards", "list", "table"] = Field(description="the `listing` argument of "
                                                       "w.element / w.region_listing / w.blocks "
                                                       "for `results`")
    filters: Literal["top", "left"] = Field(description="sort and filter controls (regions."
                                            "toolbar) in a bar above the results, or in a "
                                            "filter panel in a column left of them "
                                            "(w.region_results does both)")
    nav: Literal["bar", "mega"] = Field(description="the header's link groups (regions.header) "
                                        "inline in the header, or as an always-open mega-menu "
                                        "panel under it, one titled column per group")
    sections: Literal["tabs", "accordion"] = Field(description="tab strips as tabs, or as an "
                                                   "accordion of disclosure buttons with the "
                                                   "selected one's panel under it (pass it to "
                                                   "w.region_tabs / w.tabs)")
    sidebar: Literal["left", "right"] = Field(description="the side of the main column the "
                                              "site sidebar (regions.sidebar) is on")


class PageView(View):
    """The page the state is on."""

    id: str = Field(description="the spec's page id")
    title: str = Field(description="the page's title in the spec")
    role: str = Field(description="archetype role, e.g. results, detail, checkout")
    terminal: bool = Field(description="a success page that ends a task")
    heading: str = Field(description="the page's h1 text")
    doc_title: str = Field(description="the <title> text")
    crumbs: list[str] = Field(description="breadcrumb titles from home; the last is this page")
    is_home: bool = Field(description="the site's home page")
    about: str = Field(description="what a results page shows, e.g. 'Results for “x”', or ''")


class Urls(View):
    """Addresses of the site's static files."""

    css: str = Field(description="the stylesheet")
    js: str = Field(description="site.js")
    icon: str = Field(description="the favicon")


class Regions(View):
    """Views of the visible top-level elements, by where they go on the page."""

    overlays: list[ElementView] = Field(description="modals, cookie banners, permission "
                                        "prompts (the layout renders them)")
    nav: list[ElementView] = Field(description="menus and account buttons of the header "
                                   "(the layout renders them)")
    header: list[ElementView] = Field(description="the site's navigation bar: section links "
                                      "and menus (the layout renders them)")
    sidebar: list[ElementView] = Field(description="link lists beside the page's main column "
                                       "(the layout renders them)")
    footer: list[ElementView] = Field(description="the footer's link lists (the layout "
                                      "renders them)")
    back: list[ElementView] = Field(description="buttons and links that go back")
    search: list[ElementView] = Field(description="search fields and their buttons")
    tabs: list[ElementView] = Field(description="tab strips")
    tabpanel: list[ElementView] = Field(description="elements shown inside the selected tab")
    listing: list[ElementView] = Field(description="result lists (links with options)")
    toolbar: list[ElementView] = Field(description="sort and filter controls of a result list")
    form: list[ElementView] = Field(description="fields and buttons of the page's forms (the "
                                    "same views as form_groups)")
    actions: list[ElementView] = Field(description="the page's other buttons")
    links: list[ElementView] = Field(description="links to related pages")
    feedback: list[ElementView] = Field(description="'was this helpful' controls")


class FormGroupView(View):
    """A card of form fields with their buttons."""

    title: str = Field(description="the group's heading")
    fields: list[ElementView] = Field(description="its visible fields")
    buttons: list[ElementView] = Field(description="its visible buttons, the first primary")
    alert: bool = Field(description="the refused-action alert is shown in this group")


class FormView(View):
    """The hidden <form> of one action of the page (the layout prints them)."""

    id: str = Field(description="form id, what views' `form` fields name")
    url: str = Field(description="the URL it posts to")
    action: str = Field(description="the spec's action id")
    label: str = Field(description="the action's label")


class EntryView(View):
    """One item of a content block (a card, a list line, a table row)."""

    title: str = Field(description="its title (or text, or field name)")
    subtitle: str = Field(description="its subtitle")
    fields: list[FieldView] = Field(description="its other facts")
    thumb: int = Field(description="placeholder picture variant, 0-7")
    text: str = Field(description="its text, or all its values joined")


class BlockView(View):
    """A content block of the page (seeded by the spec)."""

    kind: BlockKind = Field(description="what the block is")
    title: str = Field(description="its heading")
    text: str = Field(description="its paragraph")
    entries: list[EntryView] = Field(description="its items")
    columns: list[str] = Field(description="table headings, one per key of the items")
    rows: list[list[str | None]] = Field(description="table cells, one row per item")
    pairs: bool = Field(description="a two-column field / value table")


class HeroView(View):
    """The home page's hero block."""

    title: str = Field(description="the hero's heading")
    text: str = Field(description="the hero's lead text")


class AlertView(View):
    """The message of a refused action."""

    text: str = Field(description="the message")
    where: Literal["main", "form", "overlay"] = Field(description="where it is shown: the "
                                                      "page body, the form group with `alert`, "
                                                      "or the open overlay")
    overlay: str = Field(description="element id of that overlay, or ''")


class ItemView(View):
    """An item chosen from a result list."""

    title: str = Field(description="the item's title")
    subtitle: str = Field(description="its subtitle")
    thumb: int = Field(description="placeholder picture variant, 0-7")
    fields: list[FieldView] = Field(description="its facts")


class PageContext(View):
    """Everything a page template gets; the fields are the template's top-level names."""

    site: SiteView = Field(description="the site (brand, footer)")
    theme: ThemeView = Field(description="the look")
    layout: LayoutView = Field(description="the arrangement of the page's parts")
    page: PageView = Field(description="this page")
    base: str = Field(description="the URL prefix the site is mounted under")
    transition: Literal["navigate", "swap"] = Field(description="how site.js moves between "
                                                    "pages: load a page or swap in place")
    urls: Urls = Field(description="static files")
    body_class: str = Field(description="classes of <body> (theme, layout, listing, mode, "
                            "density, role; and unless the layout is classic one per "
                            "layout choice: results-list, filters-left, nav-mega, "
                            "sections-accordion, sidebar-right, ...)")
    elements: dict[str, ElementView] = Field(description="element id -> view of every visible "
                                             "element, children included")
    regions: Regions = Field(description="views of the visible top-level elements by region")
    form_groups: list[FormGroupView] = Field(description="form cards (the same views as "
                                             "regions.form)")
    forms: list[FormView] = Field(description="one hidden form per action of the page")
    content: list[BlockView] = Field(description="the page's content blocks")
    hero: HeroView | None = Field(description="the home page's hero, or None")
    alert: AlertView | None = Field(description="a refused action's message, or None")
    item: ItemView | None = Field(description="the item chosen from a result list, on the page "
                                  "that list leads to, or None")
    summary: ItemView | None = Field(description="the chosen item as an order summary on "
                                     "booking / checkout pages, or None")
    summary_in_form: bool = Field(description="the form region shows the summary (else the "
                                  "page head)")

    def template_names(self) -> dict[str, Any]:
        """The top-level names a template renders with (the views themselves, not copies)."""
        return {name: getattr(self, name) for name in type(self).model_fields}


# --- the context described, for a model writing templates -------------------------------------


def _type_name(annotation: Any) -> str:
    """A short type for the prompt: ``str``, ``list[OptionView]``, ``ItemView | None``."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return " | ".join(repr(a) for a in typing.get_args(annotation))
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(_type_name(a) for a in typing.get_args(annotation))
        return f"{origin.__name__}[{args}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def _views_in(annotation: Any) -> list[type[View]]:
    if isinstance(annotation, type) and issubclass(annotation, View):
        return [annotation]
    return [v for a in typing.get_args(annotation) for v in _views_in(a)]


def _field_line(name: str, info: FieldInfo) -> str:
    return f"  - {name}: {_type_name(info.annotation)}: {info.description}"


def context_views(root: type[View] = PageContext) -> list[type[View]]:
    """Every view type reachable from ``root``, ``root`` first, each once."""
    order: list[type[View]] = []
    todo = [root]
    while todo:
        view = todo.pop(0)
        if view in order:
            continue
        order.append(view)
        for info in view.model_fields.values():
            todo.extend(_views_in(info.annotation))
    return order


def describe_context() -> str:
    """The template context, field by field, from the models themselves."""
    blocks = []
    for view in context_views():
        lines = [_field_line(name, info) for name, info in view.model_fields.items()]
        blocks.append("\n".join([f"{view.__name__}: {(view.__doc__ or '').strip()}", *lines]))
    return "\n".join(blocks)
