"""Task flows: chains of UI patterns from an entry page to a success page.

Each flow kind has a pool of stages in order; some are required. The proposer picks the
subset whose length gives the shortest path the profile asks for: every stage adds exactly
one step to the only route to the flow's success page, so lengths are exact by design.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Literal

from webworld.propose.builder import SpecBuilder, slug
from webworld.propose.patterns import (
    Cursor,
    Field,
    checkbox,
    choice,
    confirm_modal,
    field_variable,
    forward,
    slider,
    tabs,
)
from webworld.spec.archetypes import Archetype, Flow

StageKind = Literal["nav", "form", "select", "radio", "date", "slider", "check", "tabs", "modal",
                    "terminal"]
PAGE_STAGES = frozenset({"nav", "form", "terminal"})


@dataclass(frozen=True)
class Stage:
    kind: StageKind
    required: bool = False
    needs: int | None = None
    label: str = ""
    title: str = ""
    role: str = "page"
    fields: tuple[str, ...] = ()
    facet: Literal["option", "choice", ""] = ""


def _pool(flow: Flow, arch: Archetype) -> list[Stage]:
    """The ordered stage pool of one flow kind (labels drawn from the archetype)."""
    s, t = flow.start, flow.terminal
    pools: dict[str, list[Stage]] = {
        "purchase": [
            Stage("nav", True, label=s, title="Shopping cart", role="cart"),
            Stage("select", label=arch.option.label, facet="option"),
            Stage("slider", label=arch.quantity),
            Stage("nav", label="Proceed to checkout", title="Checkout", role="checkout"),
            Stage("form", needs=3, label="Continue to payment", title="Payment", role="payment",
                  fields=("full_name", "address", "city")),
            Stage("radio", label=arch.choice.label, facet="choice"),
            Stage("modal", label="Place order"),
            Stage("terminal", True, label="Confirm order", title=t),
        ],
        "booking": [
            Stage("nav", True, label=s, title="Your booking", role="booking"),
            Stage("date", True, label="Date"),
            Stage("slider", label=arch.quantity),
            Stage("select", label=arch.option.label, facet="option"),
            Stage("form", label="Continue", title="Review and pay", role="review",
                  fields=("full_name", "email")),
            Stage("check", label="I accept the booking terms"),
            Stage("modal", label="Book now"),
            Stage("terminal", True, label="Confirm booking", title=t),
        ],
        "apply": [
            Stage("nav", True, label=s, title="Application", role="form"),
            Stage("select", label=arch.option.label, facet="option"),
            Stage("form", label="Continue", title="Review application", role="review",
                  fields=("full_name", "email", "phone")),
            Stage("check", label="I confirm the details are correct"),
            Stage("radio", label=arch.choice.label, facet="choice"),
            Stage("terminal", True, label="Submit", title=t),
        ],
        "review": [
            Stage("nav", True, label=s, title="Write a review", role="form"),
            Stage("slider", label="Rating"),
            Stage("select", label="Would you recommend it"),
            Stage("check", label="I confirm this is my honest opinion"),
            Stage("terminal", True, label="Publish review", title=t, fields=("message",)),
        ],
        "save": [
            Stage("nav", True, label=s, title="Choose a list", role="form"),
            Stage("select", label="List"),
            Stage("check", label="Notify me about changes"),
            Stage("terminal", True, label="Save", title=t),
        ],
        "inquiry": [
            Stage("nav", True, label=s, title="Send a message", role="form"),
            Stage("select", label="Topic"),
            Stage("terminal", True, label="Send message", title=t,
                  fields=("full_name", "email", "message")),
        ],
        "signup": [
            Stage("nav", True, label=s, title="Create your account", role="signup"),
            Stage("form", label="Continue", title="Set a password", role="signup",
                  fields=("full_name", "email")),
            Stage("select", label="Interests"),
            Stage("radio", label="Plan"),
            Stage("check", label="I agree to the terms of service"),
            Stage("terminal", True, label="Create account", title=t,
                  fields=("username", "password")),
        ],
        "settings": [
            Stage("nav", True, label=s, title="Sign in", role="login"),
            Stage("form", True, label="Sign in", title="My account", role="account",
                  fields=("username", "password")),
            Stage("nav", label="Settings", title="Settings", role="settings"),
            Stage("tabs", label="Notifications"),
            Stage("check", True, label=arch.toggles[0]),
            Stage("terminal", True, label="Save changes", title=t),
        ],
        "support": [
            Stage("nav", True, label=s, title="Help center", role="help"),
            Stage("tabs", label="Contact"),
            Stage("nav", label="Contact support", title="Contact support", role="form"),
            Stage("select", label="Topic"),
            Stage("radio", label="Priority"),
            Stage("terminal", True, label="Submit request", title=t,
                  fields=("full_name", "email", "message")),
        ],
        "newsletter": [
            Stage("nav", True, label=s, title="Newsletter", role="form"),
            Stage("select", label="Frequency"),
            Stage("radio", label="Format"),
            Stage("check", label="I agree to receive emails"),
            Stage("terminal", True, label="Subscribe", title=t, fields=("email",)),
        ],
    }
    return pools[flow.kind]


def step_range(flow: Flow, arch: Archetype) -> tuple[int, int]:
    pool = _pool(flow, arch)
    return sum(s.required for s in pool), len(pool)


def choose_stages(flow: Flow, arch: Archetype, steps: int, page_budget: float,
                  rng: random.Random) -> list[Stage] | None:
    """The stage subset with exactly ``steps`` stages and pages closest to the budget."""
    pool = _pool(flow, arch)
    optional = [i for i, st in enumerate(pool) if not st.required]
    candidates: list[tuple[float, list[int]]] = []
    for r in range(len(optional) + 1):
        for extra in itertools.combinations(optional, r):
            chosen = sorted([i for i, st in enumerate(pool) if st.required] + list(extra))
            if len(chosen) != steps:
                continue
            if any(pool[i].needs is not None and pool[i].needs not in chosen for i in chosen):
                continue
            pages = sum(pool[i].kind in PAGE_STAGES for i in chosen)
            candidates.append((abs(pages - page_budget), chosen))
    if not candidates:
        return None
    best = min(c for c, _ in candidates)
    picks = [chosen for c, chosen in candidates if c == best]
    return [pool[i] for i in rng.choice(picks)]


# --- building a flow --------------------------------------------------------------------


@dataclass
class FlowContext:
    """What a flow needs from the world being built."""

    b: SpecBuilder
    arch: Archetype
    rng: random.Random
    persona: dict[str, Field]
    dates: list[str]
    home: str
    version: int = 1  # the generator version (webworld.propose.procedural.GENERATOR_VERSIONS)


VALUE_CHOICES = {
    "Would you recommend it": ["Yes", "No"],
    "List": ["Favourites", "Shortlist", "Later"],
    "Topic": ["Order question", "Account help", "Feedback"],
    "Interests": ["Deals", "New arrivals", "Events"],
    "Plan": ["Free", "Plus"],
    "Priority": ["Normal", "Urgent"],
    "Frequency": ["Daily", "Weekly", "Monthly"],
    "Format": ["HTML", "Plain text"],
}


def _values(ctx: FlowContext, stage: Stage) -> list[str]:
    if stage.facet == "option":
        return list(ctx.arch.option.values[:3])
    if stage.facet == "choice":
        return list(ctx.arch.choice.values[:2])
    if stage.label == "Interests" and ctx.version > 1:  # "Deals" is no government's interest
        return list(ctx.arch.categories[:3])
    return VALUE_CHOICES[stage.label]


def build_flow(ctx: FlowContext, flow: Flow, stages: list[Stage], cur: Cursor, prefix: str
               ) -> str:
    """Add the flow's pages and actions starting at ``cur.page``; returns the terminal id."""
    b = ctx.b
    terminal = ""
    for stage in stages:
        name = slug(f"{prefix}_{stage.label}", 40)
        if stage.kind in PAGE_STAGES:
            role = "success" if stage.kind == "terminal" else stage.role
            target = b.page(f"{prefix}_{stage.title}", stage.title, role,
                            terminal=stage.kind == "terminal")
            came_from = cur.page
            fields = [(ctx.persona[k], field_variable(b, _prefixed(ctx.persona[k], prefix)))
                      for k in stage.fields]
            forward(b, cur, stage.label, target, fields=fields)
            cur.slots.extend(var for _, var in fields)
            if fields:
                shown = ", ".join(f"{f.label.lower()} {{{v}}}" for f, v in fields)
                cur.clauses.append(f"enter {shown}")
            if stage.kind == "terminal":
                terminal = target
                b.back(target, ctx.home, "Back to home")
            else:
                b.back(target, came_from)
        elif stage.kind in ("select", "radio"):
            widget = "radio" if stage.kind == "radio" else "select"
            var = choice(b, cur, name, stage.label, _values(ctx, stage), widget)
            cur.clauses.append(f"choose {{{var}}} for {stage.label.lower()}")
        elif stage.kind == "date":
            var = choice(b, cur, name, stage.label, ctx.dates, "date_picker")
            cur.clauses.append(f"pick the date {{{var}}}")
        elif stage.kind == "slider":
            top = 5 if stage.label == "Rating" else 3
            var = slider(b, cur, name, stage.label, top)
            cur.clauses.append(f"set {stage.label.lower()} to {{{var}}}")
        elif stage.kind == "check":
            checkbox(b, cur, name, stage.label)
            cur.clauses.append(_check_clause(stage.label, flow))
        elif stage.kind == "tabs":
            tabs(b, cur, name, ["Overview", stage.label, "FAQ"], stage.label)
        elif stage.kind == "modal":
            confirm_modal(b, cur, stage.label, "Are you sure? This cannot be undone.")
    return terminal


def _prefixed(fld: Field, prefix: str) -> Field:
    return Field(f"{prefix}_{fld.key}", fld.label, fld.valid, fld.invalid, fld.message)


def _check_clause(label: str, flow: Flow) -> str:
    if flow.kind == "settings":
        return f"turn on “{label}”"
    return f"tick “{label}”"


# --- intents ------------------------------------------------------------------------------


def compose_intents(goal: str, clauses: list[str]) -> list[str]:
    """Four phrasings of the same task; placeholders are variable names in braces."""
    g = goal[0].upper() + goal[1:]
    if not clauses:
        return [f"{g}.", f"Your task is to {goal}.", f"Please {goal}.", f"Could you {goal}?"]
    joined = _join(clauses)
    return [
        f"{g}: {', '.join(clauses)}.",
        f"Your task is to {goal}. {joined[0].upper()}{joined[1:]}.",
        f"Please {goal} — {joined}.",
        f"Could you {goal}? Make sure to {joined}.",
    ]


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
