"""What a page is made of, worked out once from the spec (no state, no HTML).

For every element: the GUI steps that use it (which action, which step, trigger or not,
which parameter), which action owns its control, which action each of its options
submits, and the layout region it goes in. Visibility (the one state-dependent rule the
contract fixes) lives here too, so the renderer and :func:`check_page` share it.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

from webworld.spec.models import Action, Element, GuiStep, Page, WorldSpec
from webworld.spec.semantics import Machine, State

OVERLAY_KINDS = frozenset({"modal", "cookie_banner", "permission_prompt"})
CONTAINER_KINDS = OVERLAY_KINDS | {"hover_menu"}
OPTION_KINDS = frozenset({"select", "radio", "tabs", "hover_menu", "date_picker"})
FIELD_KINDS = frozenset({"text_input", "select", "checkbox", "radio", "slider", "date_picker"})
ACCOUNT_WORDS = ("sign in", "log in", "login", "sign up", "register", "create account",
                 "my account", "account")
_PARAM = re.compile(r"^\{([a-z][a-z0-9_]*)\}$")


def option_text(value: object) -> str:
    """How a parameter value appears as a widget option (and as a submitted form value)."""
    return str(value)


def has_options(el: Element) -> bool:
    """Option containers: select-like widgets, and a ``link`` with options (a result list)."""
    return el.kind in OPTION_KINDS or (el.kind == "link" and bool(el.options))


@dataclass(frozen=True)
class Use:
    """One GUI step of one action on one element."""

    action: Action
    index: int
    step: GuiStep

    @property
    def trigger(self) -> bool:
        return self.index == len(self.action.gui) - 1

    @property
    def param(self) -> str | None:
        """The parameter the step's value names when it is exactly ``{param}``."""
        match = _PARAM.match(self.step.value or "")
        if match and any(p.name == match.group(1) for p in self.action.params):
            return match.group(1)
        return None

    def domain(self) -> list[str]:
        name = self.param
        for p in self.action.params:
            if p.name == name:
                return [option_text(v) for v in p.domain]
        return []

    def matches(self, option: str) -> bool:
        """Does this step choose ``option`` (a literal value, or one of its parameter's)?"""
        if self.step.value is None:
            return False
        if self.param is not None:
            return option in self.domain()
        return self.step.value == option


@dataclass
class FormGroup:
    """A card of fields and the buttons that submit them."""

    title: str
    fields: list[str] = field(default_factory=list)
    buttons: list[str] = field(default_factory=list)


@dataclass
class PagePlan:
    page: Page
    elements: dict[str, Element]
    uses: dict[str, list[Use]]
    children: dict[str, list[str]]
    regions: dict[str, list[str]]
    form_groups: list[FormGroup]
    listing_block: dict[str, int]
    hero_block: int | None
    tab_var: dict[str, str]

    def owner(self, element_id: str) -> Use | None:
        """The step whose action owns the element's control (trigger uses first)."""
        uses = self.uses.get(element_id, [])
        for use in uses:
            if use.trigger:
                return use
        return uses[0] if uses else None

    def binding(self, element_id: str, option: str) -> Use | None:
        """The step that chooses ``option`` of an option container (trigger uses first)."""
        uses = [u for u in self.uses.get(element_id, [])
                if u.step.op in ("select", "click") and u.matches(option)]
        for use in uses:
            if use.trigger:
                return use
        return uses[0] if uses else None

    def value_var(self, element_id: str) -> str | None:
        """The variable whose value the widget shows: filled by ``set_param`` from the
        parameter that one of the element's steps binds."""
        for use in self.uses.get(element_id, []):
            name = use.param
            if name is None:
                continue
            for eff in use.action.effects:
                if eff.op == "set_param" and eff.param == name:
                    return eff.var
        return None

    def check_var(self, element_id: str) -> str | None:
        """The bool variable a checkbox's check (or uncheck) action sets."""
        for want_op, want in (("check", True), ("uncheck", False)):
            for use in self.uses.get(element_id, []):
                if use.step.op != want_op:
                    continue
                for eff in use.action.effects:
                    if eff.op == "set" and eff.value is want:
                        return eff.var
        return None


def element_uses(page: Page) -> dict[str, list[Use]]:
    uses: dict[str, list[Use]] = {e.id: [] for e in page.elements}
    for action in page.actions:
        for i, step in enumerate(action.gui):
            if step.element in uses:
                uses[step.element].append(Use(action, i, step))
    return uses


def visible_ids(page: Page, machine: Machine, state: State) -> list[str]:
    """Elements shown in ``state``, in page order: ``visible_when`` holds and the parent
    (if any) is shown. A missing parent or a parent cycle hides the element."""
    elements = {e.id: e for e in page.elements}
    memo: dict[str, bool] = {}

    def shown(eid: str, trail: frozenset[str]) -> bool:
        if eid in memo:
            return memo[eid]
        el = elements[eid]
        ok = all(machine.holds(c, state) for c in el.visible_when)
        if ok and el.parent is not None:
            ok = el.parent in elements and el.parent not in trail and shown(
                el.parent, trail | {eid})
        memo[eid] = ok
        return ok

    return [e.id for e in page.elements if shown(e.id, frozenset())]


def _is_account(el: Element) -> bool:
    label = el.label.lower()
    return any(label == w or label.startswith(w + " ") for w in ACCOUNT_WORDS)


def _region(home: bool, el: Element, uses: list[Use], has_listing: bool,
            in_form: set[str], tab_vars: set[str], search_buttons: set[str]) -> str:
    """Where a top-level element goes. Pure function of the spec."""
    kind = el.kind
    if kind in OVERLAY_KINDS:
        return "overlays"
    if el.area is not None:
        return el.area
    if kind == "hover_menu":
        return "nav"
    if any(u.action.is_back and u.trigger for u in uses) and kind in ("link", "button"):
        return "back"
    if tab_vars and any(c.var in tab_vars for c in el.visible_when):
        return "tabpanel"
    if kind == "search_box" or el.id in search_buttons:
        return "search"
    if kind == "tabs":
        return "tabs"
    if kind == "link" and el.options:
        return "listing"
    if kind == "radio" and "helpful" in el.label.lower():
        return "feedback"
    if el.id in in_form:
        return "form"
    if kind in FIELD_KINDS:
        return "toolbar" if has_listing and kind in ("select", "checkbox", "slider") else "form"
    if kind == "button" and home and _is_account(el):
        return "nav"
    if kind == "button":
        return "actions"
    if kind == "link":
        return "links"
    return "actions"


def _form_groups(page: Page, uses: dict[str, list[Use]]) -> tuple[list[FormGroup], dict[str, int]]:
    """One group per multi-step action (a form: type / pick, then submit). Returns the groups
    and which group each element those actions use belongs to (first action wins)."""
    groups: list[FormGroup] = []
    claimed: dict[str, int] = {}
    for action in page.actions:
        if len([s for s in action.gui if s.op != "hover"]) < 2:
            continue
        for step in action.gui:
            if step.element in uses:
                claimed.setdefault(step.element, len(groups))
        groups.append(FormGroup(title=action.label))
    return groups, claimed


def build_plan(spec: WorldSpec, page: Page) -> PagePlan:
    elements = {e.id: e for e in page.elements}
    uses = element_uses(page)
    children: dict[str, list[str]] = {}
    for el in page.elements:
        if el.parent is not None and el.parent in elements:
            children.setdefault(el.parent, []).append(el.id)
    top = [e for e in page.elements if e.parent is None or e.parent not in elements]
    has_listing = any(e.kind == "link" and e.options and e.area is None for e in top)

    groups, claimed_group = _form_groups(page, uses)
    in_form = set(claimed_group)

    tab_vars: dict[str, str] = {}
    tabs = [e for e in top if e.kind == "tabs"]
    if tabs:
        # only the first tab strip gets a panel holding the page's content
        for use in uses.get(tabs[0].id, []):
            name = use.param
            for eff in use.action.effects:
                if name and eff.op == "set_param" and eff.param == name:
                    tab_vars[tabs[0].id] = eff.var

    search_buttons = {
        a.trigger.element for a in page.actions
        if a.trigger.op == "click" and a.trigger.element in elements
        and elements[a.trigger.element].kind in ("button", "link")
        and any(elements.get(s.element) is not None and elements[s.element].kind == "search_box"
                for s in a.gui[:-1])
    }
    regions: dict[str, list[str]] = {}
    for el in top:
        region = _region(page.id == spec.home, el, uses[el.id], has_listing, in_form,
                         set(tab_vars.values()), search_buttons)
        regions.setdefault(region, []).append(el.id)

    # fields and buttons into form groups
    form_ids = regions.get("form", [])
    navigating = [
        eid for eid in regions.get("actions", [])
        if any(u.trigger and u.action.navigate and not u.action.is_back for u in uses[eid])
    ]
    if form_ids and not groups:
        groups.append(FormGroup(title=page.title))
    for eid in form_ids:
        el = elements[eid]
        gi = claimed_group.get(eid, 0)
        target = groups[gi]
        if el.kind in ("button", "link"):
            target.buttons.append(eid)
        else:
            target.fields.append(eid)
    groups = [g for g in groups if g.fields or g.buttons]
    if groups and not any(g.buttons for g in groups) and navigating:
        groups[0].buttons.extend(navigating)
        regions["actions"] = [e for e in regions["actions"] if e not in navigating]
        regions.setdefault("form", []).extend(navigating)

    listing_block: dict[str, int] = {}
    used_blocks: set[int] = set()
    for eid in regions.get("listing", []):
        options = set(elements[eid].options)
        for bi, block in enumerate(page.content):
            if bi in used_blocks or block.kind not in ("cards", "table"):
                continue
            titles = {item.get("title", "") for item in block.items}
            if titles & options:
                listing_block[eid] = bi
                used_blocks.add(bi)
                break

    hero_block = None
    if page.id == spec.home:
        for bi, block in enumerate(page.content):
            if block.kind == "text" and block.title and bi not in used_blocks:
                hero_block = bi
                break

    return PagePlan(page=page, elements=elements, uses=uses, children=children,
                    regions=regions, form_groups=groups, listing_block=listing_block,
                    hero_block=hero_block, tab_var=tab_vars)


@dataclass
class SitePlan:
    """Plans of every page plus site-wide facts (breadcrumb trails)."""

    spec: WorldSpec

    @cached_property
    def pages(self) -> dict[str, PagePlan]:
        return {p.id: build_plan(self.spec, p) for p in self.spec.pages}

    @cached_property
    def item_vars(self) -> dict[str, list[str]]:
        """Per page: variables holding the item chosen from a result list on the way in
        (``set_param`` from a parameter that a click on a listing option binds)."""
        out: dict[str, list[str]] = {}
        for page in self.spec.pages:
            listings = {e.id for e in page.elements if e.kind == "link" and e.options}
            for action in page.actions:
                if not action.navigate:
                    continue
                bound = {Use(action, i, s).param for i, s in enumerate(action.gui)
                         if s.element in listings}
                for eff in action.effects:
                    if eff.op == "set_param" and eff.param in bound:
                        names = out.setdefault(action.navigate, [])
                        if eff.var not in names:
                            names.append(eff.var)
        return out

    @cached_property
    def query_vars(self) -> dict[str, list[tuple[str, str]]]:
        """Per page: (variable, how) for what the page's results are about: a query typed
        into a search box ("search") or a category picked from a menu ("menu") on the way in."""
        out: dict[str, list[tuple[str, str]]] = {}
        for page in self.spec.pages:
            kinds = {e.id: e.kind for e in page.elements}
            for action in page.actions:
                if not action.navigate:
                    continue
                how = {}
                for i, step in enumerate(action.gui):
                    param = Use(action, i, step).param
                    if param and kinds.get(step.element) == "search_box":
                        how[param] = "search"
                    elif param and kinds.get(step.element) == "hover_menu":
                        how[param] = "menu"
                for eff in action.effects:
                    if eff.op == "set_param" and eff.param in how:
                        pair = (eff.var, how[eff.param])
                        if pair not in out.setdefault(action.navigate, []):
                            out[action.navigate].append(pair)
        return out

    @cached_property
    def catalog(self) -> dict[str, dict[str, str]]:
        """Every card of the spec's content by title (first one wins)."""
        items: dict[str, dict[str, str]] = {}
        for page in self.spec.pages:
            for block in page.content:
                if block.kind == "cards":
                    for item in block.items:
                        items.setdefault(item.get("title", ""), item)
        return items

    @cached_property
    def trails(self) -> dict[str, list[str]]:
        """Shortest forward path of page ids from home to each page (for breadcrumbs)."""
        home = self.spec.home
        prev: dict[str, str | None] = {home: None}
        queue = deque([home])
        by_id = {p.id: p for p in self.spec.pages}
        while queue:
            pid = queue.popleft()
            page = by_id.get(pid)
            if page is None:
                continue
            for action in page.actions:
                target = action.navigate
                if target and not action.is_back and target not in prev and target in by_id:
                    prev[target] = pid
                    queue.append(target)
        trails: dict[str, list[str]] = {}
        for pid in by_id:
            if pid not in prev:
                trails[pid] = [home, pid] if pid != home else [home]
                continue
            path: list[str] = []
            cur: str | None = pid
            while cur is not None:
                path.append(cur)
                cur = prev[cur]
            trails[pid] = path[::-1]
        return trails
