"""A small mutable builder for specs: unique ids, pages, widgets, actions, Back links.

UI patterns call it; it hands out unique ids and remembers which variables each page
owns, so that Back actions can discard the choices made on the page (as leaving a form
does on a real site) and the state space stays small.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from webworld.spec.models import (
    Action,
    Condition,
    ContentBlock,
    Effect,
    Element,
    GuiStep,
    Page,
    Parameter,
    Scalar,
    Task,
    Variable,
    WorldSpec,
)


def slug(text: str, limit: int = 40) -> str:
    """``"Order confirmed!"`` -> ``"order_confirmed"``; ids always start with a letter."""
    out = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:limit].strip("_")
    return out if out and out[0].isalpha() else f"x_{out}" if out else "x"


@dataclass
class PageState:
    """Book-keeping for one page: variables to clear on Back / on any exit."""

    page: Page
    owned: list[str] = field(default_factory=list)
    local: list[str] = field(default_factory=list)


class SpecBuilder:
    def __init__(self, world_id: str, name: str, theme: str) -> None:
        self.world_id, self.name, self.theme = world_id, name, theme
        self.variables: dict[str, Variable] = {}
        self.pages: dict[str, PageState] = {}
        self.tasks: list[Task] = []
        self._action_ids: set[str] = set()
        self.home = ""

    # ids ------------------------------------------------------------------------------
    @staticmethod
    def _unique(base: str, taken: set[str] | dict) -> str:
        base = slug(base)
        if base not in taken:
            return base
        n = 2
        while f"{base}_{n}" in taken:
            n += 1
        return f"{base}_{n}"

    # variables --------------------------------------------------------------------------
    def variable(self, name: str, type_: str, **kw: object) -> str:
        vid = self._unique(name, self.variables)
        self.variables[vid] = Variable(name=vid, type=type_, **kw)  # type: ignore[arg-type]
        return vid

    # pages --------------------------------------------------------------------------------
    def page(self, base: str, title: str, role: str, *, terminal: bool = False) -> str:
        pid = self._unique(base, self.pages)
        self.pages[pid] = PageState(Page(id=pid, title=title, role=role, terminal=terminal))
        if not self.home:
            self.home = pid
        return pid

    def get(self, page_id: str) -> Page:
        return self.pages[page_id].page

    def content(self, page_id: str, block: ContentBlock) -> None:
        self.get(page_id).content.append(block)

    def own(self, page_id: str, var: str) -> None:
        """``var`` is a choice made on (or on the way into) this page: Back clears it."""
        self.pages[page_id].owned.append(var)

    def local(self, page_id: str, var: str) -> None:
        """``var`` only matters on this page (a filter, a tab): every exit clears it."""
        self.pages[page_id].local.append(var)

    def element(self, page_id: str, kind: str, label: str, base: str | None = None,
                **kw: object) -> str:
        page = self.get(page_id)
        eid = self._unique(base or label, {e.id for e in page.elements})
        page.elements.append(Element(id=eid, kind=kind, label=label, **kw))  # type: ignore[arg-type]
        return eid

    def action(
        self,
        page_id: str,
        base: str,
        label: str,
        gui: list[GuiStep],
        *,
        params: list[Parameter] | None = None,
        guards: list[Condition] | None = None,
        effects: list[Effect] | None = None,
        navigate: str | None = None,
        is_back: bool = False,
        error: str | None = None,
    ) -> Action:
        aid = self._unique(f"{page_id}__{slug(base, 30)}", self._action_ids)
        self._action_ids.add(aid)
        action = Action(
            id=aid,
            label=label,
            gui=gui,
            params=params or [],
            guards=guards or [],
            effects=effects or [],
            navigate=navigate,
            is_back=is_back,
        )
        if error:
            action.error_message = error
        self.get(page_id).actions.append(action)
        return action

    def click(self, page_id: str, kind: str, label: str, **kw: object) -> tuple[str, list[GuiStep]]:
        """An element plus the one-click gesture on it."""
        eid = self.element(page_id, kind, label)
        return eid, [GuiStep(op="click", element=eid)]

    def back(self, page_id: str, to: str, label: str = "Back") -> Action:
        _, gui = self.click(page_id, "link", label)
        return self.action(page_id, "back", label, gui, navigate=to, is_back=True)

    def action_count(self, page_id: str) -> int:
        return len(self.get(page_id).actions)

    # finishing ----------------------------------------------------------------------------
    def _add_clears(self) -> None:
        """Back clears the page's owned choices; every exit clears its local widgets."""
        for state in self.pages.values():
            for action in state.page.actions:
                if not action.navigate:
                    continue
                names = state.local + (state.owned if action.is_back else [])
                action.effects.extend(Effect(op="clear", var=v) for v in dict.fromkeys(names))

    def build(self, *, description: str = "") -> WorldSpec:
        self._add_clears()
        return WorldSpec(
            id=self.world_id,
            name=self.name,
            theme=self.theme,
            description=description,
            home=self.home,
            variables=list(self.variables.values()),
            pages=[s.page for s in self.pages.values()],
            tasks=self.tasks,
        )


def param(name: str, domain: list[Scalar], label: str = "") -> Parameter:
    return Parameter(name=name, domain=domain, label=label)


def cond(var: str, op: str, value: object = None, message: str = "", *, on_param: bool = False
         ) -> Condition:
    key = "param" if on_param else "var"
    return Condition(**{key: var}, op=op, value=value, message=message)  # type: ignore[arg-type]


def effect(op: str, var: str, value: Scalar | None = None, param_name: str | None = None) -> Effect:
    return Effect(op=op, var=var, value=value, param=param_name)  # type: ignore[arg-type]
