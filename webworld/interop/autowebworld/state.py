"""AutoWebWorld's typed, page-scoped signatures as webworld's global variables.

In AutoWebWorld a state is (page, signature) and the signature holds the page's own
``signature_schema`` variables. Navigating to a page starts from that page's defaults and
carries over the values of variables it shares with the page left (what its explorer,
``bfs_action.transition``, does); everything else is forgotten. webworld's variables are
global, so the importer makes forgetting explicit: every navigating action resets the
variables live on its page (the page's schema plus what its actions write) that the target
page does not declare. Variables not live on a page therefore always hold their defaults
there, which makes the two state spaces the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from webworld.spec.models import Effect, Scalar, Variable

Kind = Literal["bool", "str", "int", "list", "object"]
_INTERCEPTOR_WORDS = ("accepted", "permission", "granted")


@dataclass
class VarInfo:
    """One variable: its AutoWebWorld type, default and the values the file gives it."""

    name: str
    type_text: str
    kind: Kind
    nullable: bool
    default: Any
    values: list[Any] = field(default_factory=list)   # literals, in first-seen order
    items: list[Scalar] = field(default_factory=list)  # list vars: what can be appended
    counter_step: int = 0
    loc: tuple[Any, ...] = ()                           # where the file declares it

    def add(self, value: Any) -> None:
        if self.kind == "list":
            return
        if isinstance(value, list):
            for v in value:
                self.add(v)
            return
        if value is None or any(_same(value, v) for v in self.values):
            return
        self.values.append(value)

    def add_item(self, item: Scalar) -> None:
        if not any(_same(item, v) for v in self.items):
            self.items.append(item)

    @property
    def interceptor(self) -> bool:
        """AutoWebWorld's rule (bfs_action): a nullable field named like accepted /
        permission / granted (never captcha) must be answered before anything else."""
        low = self.name.lower()
        return self.nullable and "captcha" not in low and \
            any(w in low for w in _INTERCEPTOR_WORDS)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def parse_type(name: str, type_text: str) -> VarInfo:
    """``"string|null"`` -> a str variable, default None (as ``default_signature_for_page``)."""
    t = type_text.replace(" ", "").lower()
    nullable = "null" in t
    if t.startswith("array"):
        kind: Kind = "list"
    elif t.startswith("boolean"):
        kind = "bool"
    elif t.startswith(("integer", "number")):
        kind = "int"
    elif t.startswith("string"):
        kind = "str"
    else:
        kind = "object"
    if kind == "list":
        default: Any = ()
    elif nullable:
        default = None
    else:
        default = {"bool": False, "int": 1 if t.startswith("integer>=1") else 0,
                   "str": ""}.get(kind)
    return VarInfo(name, type_text, kind, nullable, default)


COUNTER_SPAN = 3
"""How many increments a counter can take (AutoWebWorld's counters are unbounded)."""


def to_variable(info: VarInfo) -> Variable:
    """The webworld variable with the finite domain the file's values give."""
    if info.kind == "bool" and not info.nullable:
        return Variable(name=info.name, type="bool", initial=False)
    if info.kind == "list":
        items = info.items or ["(none)"]
        return Variable(name=info.name, type="list", values=list(items),
                        max_length=len(info.items))
    if info.kind == "int":
        ints = [v for v in info.values if isinstance(v, int) and not isinstance(v, bool)]
        base = info.default if isinstance(info.default, int) else 0
        lo = min([0, base, *ints])
        hi = max([base, *ints]) + COUNTER_SPAN * info.counter_step
        if info.nullable:
            values = sorted(set(range(lo, hi + 1)))
            return Variable(name=info.name, type="enum", values=values)
        return Variable(name=info.name, type="int", min=lo, max=hi, initial=base)
    values = list(info.values)
    if info.kind == "bool" and not values:
        values = [True]
    if not info.nullable and info.default is not None and \
            not any(_same(info.default, v) for v in values):
        values.insert(0, info.default)
    if not values:
        values = [""]
    initial = None if info.nullable else info.default
    return Variable(name=info.name, type="enum", values=values, initial=initial)


def reset_effect(info: VarInfo, var: Variable) -> Effect:
    """The effect that puts ``var`` back to its AutoWebWorld default."""
    if info.default is None or info.kind == "list" or \
            (var.type == "bool" and info.default is False) or \
            (var.type == "int" and info.default == 0 and (var.min or 0) <= 0):
        return Effect(op="clear", var=info.name)
    return Effect(op="set", var=info.name, value=info.default)
