"""Reusable UI patterns, each a small function that adds widgets, state and actions.

Patterns: cookie consent, location permission, search -> results -> detail, hover menu,
filters and sort, list paging, dropdown / radio / date picker / slider choices, checkbox
agreement, multi-field forms with inline validation (login, sign-up, checkout), tabs,
confirm modal, settings toggles. Flows (webworld.propose.flows) chain them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from webworld.propose.builder import SpecBuilder, cond, effect, param, slug
from webworld.spec.models import Condition, GuiStep, Scalar


@dataclass(frozen=True)
class Field:
    """A form field: what the user should type, plus (optionally) a value the form rejects."""

    key: str
    label: str
    valid: str
    invalid: str | None = None
    message: str = ""


@dataclass
class Cursor:
    """Where a flow stands: the current page, and what the next forward action needs."""

    page: str
    guards: list[Condition] = field(default_factory=list)
    parent: str | None = None
    visible_when: list[Condition] = field(default_factory=list)
    slots: list[str] = field(default_factory=list)
    clauses: list[str] = field(default_factory=list)

    def take(self) -> tuple[list[Condition], str | None, list[Condition]]:
        """Hand the pending guards to the next forward action and reset them."""
        out = (self.guards, self.parent, self.visible_when)
        self.guards, self.parent, self.visible_when = [], None, []
        return out


# --- interceptors ---------------------------------------------------------------------


def cookie_consent(b: SpecBuilder, page: str) -> tuple[str, list[str]]:
    """A blocking cookie banner: every other action on ``page`` waits for an answer."""
    var = b.variable("cookie_consent", "enum", values=["accepted", "rejected"])
    banner = b.element(page, "cookie_banner", "We use cookies", base="cookie_banner",
                       blocking=True, visible_when=[Condition(var=var, op="eq", value=None)])
    ids = []
    for label, value in (("Accept all cookies", "accepted"), ("Reject non-essential", "rejected")):
        eid = b.element(page, "button", label, parent=banner)
        act = b.action(page, f"cookies_{value}", label, [GuiStep(op="click", element=eid)],
                       effects=[effect("set", var, value)])
        ids.append(act.id)
    return var, ids


def location_permission(b: SpecBuilder, page: str) -> None:
    """A browser-style location prompt: allow or block (2 actions)."""
    var = b.variable(f"{page}_location", "enum", values=["allowed", "blocked"])
    prompt = b.element(page, "permission_prompt", "Allow this site to use your location?",
                       base="location_prompt", blocking=True,
                       visible_when=[Condition(var=var, op="eq", value=None)])
    for label, value in (("Allow", "allowed"), ("Block", "blocked")):
        eid = b.element(page, "button", label, base=f"location_{value}", parent=prompt)
        b.action(page, f"location_{value}", f"{label} location",
                 [GuiStep(op="click", element=eid)], effects=[effect("set", var, value)])
    b.local(page, var)


# --- navigation and catalog -----------------------------------------------------------


def search_entry(b: SpecBuilder, home: str, results: str, queries: list[str], noun: str
                 ) -> tuple[str, str]:
    """Search box on ``home``: type a query, press Enter, land on ``results``."""
    var = b.variable("search_query", "enum", values=list(queries))
    box = b.element(home, "search_box", f"Search {noun}", base="search",
                    placeholder=f"Search {noun}...")
    b.action(home, "search", f"Search {noun}",
             [GuiStep(op="type", element=box, value="{query}"),
              GuiStep(op="key_press", element=box, key="Enter")],
             params=[param("query", list(queries), "Search terms")],
             effects=[effect("set_param", var, param_name="query")], navigate=results)
    b.own(results, var)
    return var, f'search for "{{{var}}}"'


def browse_entry(b: SpecBuilder, home: str, results: str, categories: list[str]
                 ) -> tuple[str, str]:
    """A hover menu of categories on ``home``: hover, then click a category."""
    var = b.variable("category", "enum", values=list(categories))
    menu = b.element(home, "hover_menu", "Browse categories", base="browse_menu",
                     options=list(categories))
    b.action(home, "browse", "Browse a category",
             [GuiStep(op="hover", element=menu),
              GuiStep(op="click", element=menu, value="{category}")],
             params=[param("category", list(categories), "Category")],
             effects=[effect("set_param", var, param_name="category")], navigate=results)
    b.own(results, var)
    return var, f"browse the {{{var}}} section"


def select_item(b: SpecBuilder, results: str, detail: str, items: list[str], noun: str) -> str:
    """Result cards on ``results``: click one to open its ``detail`` page."""
    var = b.variable("selected_item", "enum", values=list(items))
    links = b.element(results, "link", f"Open {noun}", base="result_links", options=list(items))
    b.action(results, "open_item", f"Open {article(noun)}",
             [GuiStep(op="click", element=links, value="{item}")],
             params=[param("item", list(items), noun.capitalize())],
             effects=[effect("set_param", var, param_name="item")], navigate=detail)
    b.own(detail, var)
    return var


def select_item_by_category(b: SpecBuilder, results: str, detail: str, category_var: str,
                            listings: dict[str, list[str]], noun: str) -> str:
    """One result list per category on ``results``, each shown (and usable) only while its
    category is the one browsed: click an item to open its ``detail`` page."""
    var = b.variable("selected_item", "enum",
                     values=[item for items in listings.values() for item in items])
    for category, items in listings.items():
        shown = [Condition(var=category_var, op="eq", value=category)]
        links = b.element(results, "link", f"Open {noun}", base=f"result_links_{slug(category)}",
                          options=list(items), visible_when=shown)
        b.action(results, f"open_item_{slug(category)}", f"Open {article(noun)}",
                 [GuiStep(op="click", element=links, value="{item}")],
                 params=[param("item", list(items), noun.capitalize())], guards=shown,
                 effects=[effect("set_param", var, param_name="item")], navigate=detail)
    b.own(detail, var)
    return var


# --- forward steps of a flow ----------------------------------------------------------


def forward(b: SpecBuilder, cur: Cursor, label: str, target: str, *, kind: str = "button",
            fields: list[tuple[Field, str]] | None = None) -> None:
    """The action that moves a flow on: a click, or a form submit with typed fields.

    ``fields`` pairs each form field with the variable it fills; invalid values are in
    the parameter domain and rejected by a guard with an inline message.
    """
    guards, parent, visible = cur.take()
    gui, params, effects = [], [], []
    for fld, var in fields or []:
        eid = b.element(cur.page, "text_input", fld.label, base=fld.key,
                        placeholder=fld.label, parent=parent)
        gui.append(GuiStep(op="type", element=eid, value=f"{{{fld.key}}}"))
        domain = [fld.valid] + ([fld.invalid] if fld.invalid else [])
        params.append(param(fld.key, domain, fld.label))
        if fld.invalid:
            guards.append(cond(fld.key, "in", [fld.valid], fld.message, on_param=True))
        effects.append(effect("set_param", var, param_name=fld.key))
        b.own(target, var)
    button = b.element(cur.page, kind, label, parent=parent, visible_when=visible)
    gui.append(GuiStep(op="click", element=button))
    b.action(cur.page, label, label, gui, params=params, guards=guards, effects=effects,
             navigate=target)
    cur.page = target


def field_variable(b: SpecBuilder, fld: Field) -> str:
    values: list[Scalar] = [fld.valid] + ([fld.invalid] if fld.invalid else [])
    return b.variable(fld.key, "enum", values=values)


def choice(b: SpecBuilder, cur: Cursor, name: str, label: str, values: list[str],
           widget: str = "select") -> str:
    """Pick one option (dropdown, radio group or date picker); the flow needs it set."""
    var = b.variable(name, "enum", values=list(values))
    eid = b.element(cur.page, widget, label, base=name, options=list(values))
    b.action(cur.page, f"choose_{name}", f"Choose {label.lower()}",
             [GuiStep(op="select", element=eid, value=f"{{{name}}}")],
             params=[param(name, list(values), label)],
             effects=[effect("set_param", var, param_name=name)])
    b.own(cur.page, var)
    cur.guards.append(cond(var, "exists", message=f"Please choose {article(label.lower())}."))
    cur.slots.append(var)
    return var


def slider(b: SpecBuilder, cur: Cursor, name: str, label: str, top: int = 3) -> str:
    """Drag a slider to a number from 1 to ``top``; 0 means not chosen yet."""
    var = b.variable(name, "int", min=0, max=top, initial=0)
    eid = b.element(cur.page, "slider", label, base=name, min=1, max=top, step=1)
    b.action(cur.page, f"set_{name}", f"Set {label.lower()}",
             [GuiStep(op="drag", element=eid, value=f"{{{name}}}")],
             params=[param(name, list(range(1, top + 1)), label)],
             effects=[effect("set_param", var, param_name=name)])
    b.own(cur.page, var)
    cur.guards.append(cond(var, "gt", 0, f"Please set the {label.lower()}."))
    cur.slots.append(var)
    return var


def checkbox(b: SpecBuilder, cur: Cursor, name: str, label: str, *, required: bool = True,
             page_local: bool = False) -> str:
    """A checkbox (terms, a setting); checking it is required when ``required``."""
    var = b.variable(name, "bool", initial=False)
    eid = b.element(cur.page, "checkbox", label, base=name)
    b.action(cur.page, f"check_{name}", f"Check {label.lower()}",
             [GuiStep(op="check", element=eid)], effects=[effect("set", var, True)])
    if page_local:
        b.local(cur.page, var)
    else:
        b.own(cur.page, var)
    if required:
        cur.guards.append(cond(var, "eq", True, f"Please tick “{label}”."))
    return var


def tabs(b: SpecBuilder, cur: Cursor, name: str, labels: list[str], target: str) -> None:
    """A tab strip; the flow continues inside the ``target`` tab."""
    var = b.variable(name, "enum", values=list(labels))
    eid = b.element(cur.page, "tabs", "Sections", base=name, options=list(labels))
    b.action(cur.page, f"open_{name}", "Switch tab",
             [GuiStep(op="select", element=eid, value="{tab}")],
             params=[param("tab", list(labels), "Tab")],
             effects=[effect("set_param", var, param_name="tab")])
    b.local(cur.page, var)
    shown = Condition(var=var, op="eq", value=target, message=f"Open the {target} tab first.")
    cur.guards.append(shown)
    cur.visible_when.append(shown)


def confirm_modal(b: SpecBuilder, cur: Cursor, opener: str, question: str) -> None:
    """A button opens a modal dialog; the next action is the dialog's confirm button."""
    var = b.variable(f"{cur.page}_dialog", "bool", initial=False)
    guards, _, visible = cur.take()
    open_btn = b.element(cur.page, "button", opener, base="open_dialog", visible_when=visible)
    b.action(cur.page, "open_dialog", opener, [GuiStep(op="click", element=open_btn)],
             guards=guards, effects=[effect("set", var, True)])
    dialog = b.element(cur.page, "modal", question, base="dialog", blocking=True,
                       visible_when=[Condition(var=var, op="eq", value=True)])
    cancel = b.element(cur.page, "button", "Cancel", base="dialog_cancel", parent=dialog)
    b.action(cur.page, "cancel_dialog", "Cancel", [GuiStep(op="click", element=cancel)],
             effects=[effect("set", var, False)])
    b.local(cur.page, var)
    cur.guards.append(Condition(var=var, op="eq", value=True))
    cur.parent = dialog


# --- optional page furniture (pads pages to a realistic number of actions) ------------


def sort_select(b: SpecBuilder, page: str, options: list[str]) -> int:
    cur = Cursor(page)
    choice(b, cur, f"{page}_sort", "Sort by", options)
    _make_local(b, page)
    return 1


def filter_checkbox(b: SpecBuilder, page: str, label: str) -> int:
    """A filter that can be switched on and off (2 actions)."""
    var = b.variable(f"{page}_filter", "bool", initial=False)
    eid = b.element(page, "checkbox", label, base="filter")
    b.action(page, "filter_on", f"Filter: {label}", [GuiStep(op="check", element=eid)],
             effects=[effect("set", var, True)])
    b.action(page, "filter_off", f"Clear filter: {label}", [GuiStep(op="uncheck", element=eid)],
             effects=[effect("set", var, False)])
    b.local(page, var)
    return 2


def paging(b: SpecBuilder, page: str, pages: int = 3) -> int:
    """Next / Previous buttons over ``pages`` result pages (2 actions)."""
    var = b.variable(f"{page}_page_no", "int", min=1, max=pages, initial=1)
    for label, step, guard in (("Next page", 1, cond(var, "lt", pages)),
                               ("Previous page", -1, cond(var, "gt", 1))):
        eid = b.element(page, "button", label)
        b.action(page, label, label, [GuiStep(op="click", element=eid)], guards=[guard],
                 effects=[effect("inc", var, step)])
    b.local(page, var)
    return 2


def info_tabs(b: SpecBuilder, page: str, labels: list[str]) -> int:
    cur = Cursor(page)
    tabs(b, cur, f"{page}_tab", labels, labels[0])
    return 1


def helpful_vote(b: SpecBuilder, page: str) -> int:
    cur = Cursor(page)
    choice(b, cur, f"{page}_helpful", "Was this page helpful?", ["Yes", "No"], widget="radio")
    _make_local(b, page)
    return 1


def share_dialog(b: SpecBuilder, page: str) -> int:
    """Open / close a share dialog (2 actions)."""
    var = b.variable(f"{page}_share", "bool", initial=False)
    opener = b.element(page, "button", "Share", base="share")
    dialog = b.element(page, "modal", "Share this page", base="share_dialog", blocking=True,
                       visible_when=[Condition(var=var, op="eq", value=True)])
    close = b.element(page, "button", "Close", base="share_close", parent=dialog)
    b.action(page, "open_share", "Share", [GuiStep(op="click", element=opener)],
             effects=[effect("set", var, True)])
    b.action(page, "close_share", "Close share dialog", [GuiStep(op="click", element=close)],
             effects=[effect("set", var, False)])
    b.local(page, var)
    return 2


def _make_local(b: SpecBuilder, page: str) -> None:
    """Furniture choices are page-local: move the var just owned to the local list."""
    state = b.pages[page]
    state.local.append(state.owned.pop())


def article(noun: str) -> str:
    """``"account type"`` -> ``"an account type"``."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"

