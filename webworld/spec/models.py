"""Pydantic models of a world: a website as a finite-state machine.

A state is (page, signature): the page the user is on plus the values of every
state variable. Actions fire from a page when their guards hold; their effects
update variables and they may navigate. Every domain is finite, so the state
space is finite and BFS can enumerate it.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SPEC_VERSION = "1.0"

Scalar = bool | int | str
"""A variable or parameter value. ``None`` means "unset" where a type allows it."""

VarType = Literal["bool", "int", "enum", "list"]
ElementKind = Literal[
    "link",
    "button",
    "text_input",
    "search_box",
    "select",
    "checkbox",
    "radio",
    "slider",
    "date_picker",
    "tabs",
    "modal",
    "hover_menu",
    "cookie_banner",
    "permission_prompt",
]
GuiOp = Literal["click", "type", "select", "key_press", "hover", "drag", "check", "uncheck"]
ConditionOp = Literal["eq", "neq", "gt", "gte", "lt", "lte", "exists", "length_gt", "in"]
EffectOp = Literal["set", "set_param", "inc", "clear", "append"]
BlockKind = Literal["heading", "text", "cards", "table", "list", "form_note"]
Area = Literal["header", "sidebar", "footer"]
FURNITURE_ROLES = frozenset({"preview", "section"})
"""Roles of the pages site furniture and display entries open (generator version 3): no task
goes through them."""
Identifier = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[a-z][a-z0-9_]*$")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class Variable(_Model):
    """A typed state variable with a finite domain; together they form the page signature.

    bool: {False, True}. int: ``min``..``max``. enum: ``values`` plus None (unset).
    list: ordered, duplicate-free tuples of ``values`` of length <= ``max_length``.
    """

    name: Identifier
    type: VarType
    values: list[Scalar] = Field(default_factory=list, description="enum values / list items")
    min: int | None = None
    max: int | None = None
    max_length: int | None = Field(default=None, ge=0, description="list capacity")
    initial: Scalar | list[Scalar] | None = None
    description: str = ""


class Condition(_Model):
    """A guard or goal predicate over a variable, or over an action parameter."""

    var: Identifier | None = None
    param: Identifier | None = None
    op: ConditionOp
    value: Scalar | list[Scalar] | None = None
    message: str = Field(default="", description="inline error shown when the guard fails")

    @model_validator(mode="after")
    def _one_operand(self) -> Condition:
        if (self.var is None) == (self.param is None):
            raise ValueError("a condition names exactly one of 'var' or 'param'")
        return self


class Effect(_Model):
    """set: var := value; set_param: var := param; inc: var += value (default 1);
    clear: var := its empty value; append: add value (or param) to a list var."""

    op: EffectOp
    var: Identifier
    value: Scalar | None = None
    param: Identifier | None = None


class Parameter(_Model):
    """An action argument with a finite domain, e.g. the text typed into a search box."""

    name: Identifier
    domain: list[Scalar]
    label: str = ""


class GuiStep(_Model):
    """One user gesture. ``value`` may name a parameter as ``{param}``."""

    op: GuiOp
    element: Identifier
    value: str | None = None
    key: str | None = Field(default=None, description="key for key_press, e.g. Enter")
    target: Identifier | None = Field(default=None, description="drop target for drag")


class Action(_Model):
    """An FSM transition: GUI gestures on a page, guarded, with effects and navigation.

    The last GUI step is the trigger (the click or key press that submits).
    """

    id: Identifier
    label: str
    gui: list[GuiStep] = Field(min_length=1)
    params: list[Parameter] = Field(default_factory=list)
    guards: list[Condition] = Field(default_factory=list)
    effects: list[Effect] = Field(default_factory=list)
    navigate: Identifier | None = Field(default=None, description="target page; None stays")
    is_back: bool = Field(default=False, description="a Back / Home control of the page")
    error_message: str = "That action is not available right now."

    @property
    def trigger(self) -> GuiStep:
        return self.gui[-1]


class Element(_Model):
    """A widget on a page. ``options`` lists every choice of a select, radio, tabs or menu."""

    id: Identifier
    kind: ElementKind
    label: str
    options: list[str] = Field(default_factory=list)
    min: int | None = None
    max: int | None = None
    step: int | None = None
    parent: Identifier | None = Field(default=None, description="enclosing modal / menu / banner")
    visible_when: list[Condition] = Field(default_factory=list)
    blocking: bool = Field(default=False, description="an overlay that blocks the page")
    placeholder: str = ""
    area: Area | None = Field(default=None, description="site furniture: the navigation bar, "
                              "sidebar or footer it sits in; None places it by its kind")


class ContentBlock(_Model):
    """Seeded page content for the renderer (headings, cards, tables)."""

    kind: BlockKind
    title: str = ""
    text: str = ""
    items: list[dict[str, str]] = Field(default_factory=list)


class Page(_Model):
    id: Identifier
    title: str
    role: str = Field(default="page", description="archetype role, e.g. results, detail, form")
    terminal: bool = Field(default=False, description="a success page that ends a task")
    elements: list[Element] = Field(default_factory=list)
    actions: list[Action] = Field(default_factory=list)
    content: list[ContentBlock] = Field(default_factory=list)


class Goal(_Model):
    page: Identifier
    conditions: list[Condition] = Field(default_factory=list)


class Task(_Model):
    """What a user wants: reach ``goal`` from ``start``.

    ``slots`` are the variables whose final values make one concrete instance of the task
    (the explorer enumerates them); ``bindings`` fix some of them. Intent templates mention
    slots as ``{name}``.
    """

    id: Identifier
    goal: Goal
    start: Identifier | None = Field(default=None, description="start page; default home")
    slots: list[Identifier] = Field(default_factory=list)
    bindings: dict[Identifier, Scalar] = Field(default_factory=dict)
    intents: list[str] = Field(min_length=1)

    @field_validator("slots")
    @classmethod
    def _slots_once(cls, slots: list[str]) -> list[str]:
        # a repeated slot means nothing, and the explorer's work grows with the list
        repeated = sorted(name for name, count in Counter(slots).items() if count > 1)
        if repeated:
            raise ValueError(f"slot(s) listed more than once: {', '.join(repeated)}")
        return slots


class Provenance(_Model):
    generator: str = "webworld.propose.procedural"
    theme: str = ""
    archetype: str = ""
    profile: str = ""
    seed: int | None = None
    notes: list[str] = Field(default_factory=list)
    generator_version: int = Field(1, ge=1, description="Version of the offline proposer "
                                   "that made the world (webworld.propose.procedural)")


class WorldSpec(_Model):
    """A whole website as an FSM. ``version`` is the spec format version."""

    version: Literal["1.0"] = SPEC_VERSION
    id: Identifier
    name: str
    theme: str
    description: str = ""
    home: Identifier
    variables: list[Variable] = Field(default_factory=list)
    pages: list[Page] = Field(min_length=1)
    tasks: list[Task] = Field(default_factory=list)
    provenance: Provenance = Field(default_factory=Provenance)
    transition: Literal["navigate", "swap"] = Field(
        "navigate", description="How the site moves between states: navigate (every action a "
        "form submission and a new document) or swap (the site's script sends the form with "
        "fetch and replaces the page in place; the same server, URLs and state)")

    def page(self, page_id: str) -> Page:
        for page in self.pages:
            if page.id == page_id:
                return page
        raise KeyError(page_id)

    def variable(self, name: str) -> Variable:
        for var in self.variables:
            if var.name == name:
                return var
        raise KeyError(name)

    @property
    def terminals(self) -> list[Page]:
        return [p for p in self.pages if p.terminal]
