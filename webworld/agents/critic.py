"""The optional LLM critic: what deterministic code cannot judge.

The validator checks structure and reachability; the critic (stage ``critic``) judges
meaning: does the site make sense for its theme, are the task intents natural requests
that match their goals, are labels sensible. It sees an outline of the spec in which
every line starts with its JSON path, and answers :class:`Finding` s with codes prefixed
``llm-``. Severity is "warning" unless the model marks a finding an error. Findings whose
path does not point into the spec are dropped.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from webworld.agents.client import LLMClient
from webworld.agents.patch import parse_json_path, resolves
from webworld.spec.io import json_path
from webworld.spec.models import Condition, WorldSpec
from webworld.spec.validate import Finding

STAGE = "critic"
PREFIX = "llm-"
MAX_FINDINGS = 20
SUGGESTED_CODES = ("theme-fit", "unnatural-intent", "intent-goal-mismatch", "implausible-flow",
                   "odd-label")


class CriticFinding(BaseModel):
    code: str = Field(description="short kebab-case code, e.g. theme-fit, unnatural-intent")
    severity: Literal["error", "warning"] = "warning"
    path: str = Field(description="a JSON path from the outline, e.g. $.tasks[0].intents[1]")
    message: str


class CriticReply(BaseModel):
    findings: list[CriticFinding] = Field(default_factory=list)


SYSTEM = ("You review synthetic website specs used to train web agents. You reply with "
          "JSON only.")

INSTRUCTIONS = f"""\
Code has already checked the structure (references, reachability, domains, widgets).
Judge only what code cannot:
1. Does the site make sense for its theme? Pages, labels and flows a real site of this
   kind would have; nothing out of place.
2. Are the task intents natural requests a real user would make, and do they ask for
   what the task's goal and slots actually check?
3. Labels, titles or option values that are nonsensical or misleading.

Reply {{"findings": [...]}} with at most 12 findings, or {{"findings": []}} when all is well.
Each finding: {{"code": one of {", ".join(SUGGESTED_CODES)} (or another short kebab-case
code), "severity": "warning", or "error" only when the problem makes the world unusable
for its theme or an intent asks for something its goal does not check, "path": the JSON
path printed at the start of the outline line it is about ("$" for the whole site),
"message": one sentence with a concrete suggestion}}."""


def _cond(c: Condition) -> str:
    operand = c.var if c.var is not None else f"param {c.param}"
    return f"{operand} {c.op}" + ("" if c.value is None else f" {c.value!r}")


def outline(spec: WorldSpec) -> str:
    """The spec as lines ``<json path> <summary>``: what the critic judges and points at."""
    lines = [f"$ site {spec.name!r}, theme {spec.theme!r}: {spec.description}".rstrip(": ")]
    for v, var in enumerate(spec.variables):
        domain = var.values if var.type in ("enum", "list") else (
            f"{var.min}..{var.max}" if var.type == "int" else "true/false")
        lines.append(f"$.variables[{v}] {var.name} ({var.type}): {domain}")
    for i, page in enumerate(spec.pages):
        kind = "TERMINAL success page" if page.terminal else page.role
        lines.append(f"$.pages[{i}] page {page.id} {page.title!r} ({kind})")
        for k, el in enumerate(page.elements):
            opts = f" options {el.options}" if el.options else ""
            lines.append(f"$.pages[{i}].elements[{k}]   {el.kind} {el.id} {el.label!r}{opts}")
        for j, a in enumerate(page.actions):
            where = f" -> {a.navigate}" if a.navigate else ""
            guards = f" if {'; '.join(_cond(g) for g in a.guards)}" if a.guards else ""
            params = "".join(f" {p.name} in {p.domain}" for p in a.params)
            lines.append(f"$.pages[{i}].actions[{j}]   action {a.id} {a.label!r}{where}"
                         f"{params}{guards}")
    for t, task in enumerate(spec.tasks):
        conds = "; ".join(_cond(c) for c in task.goal.conditions)
        lines.append(f"$.tasks[{t}] task {task.id}: goal page {task.goal.page}"
                     f"{f' where {conds}' if conds else ''}, slots {task.slots}"
                     f"{f', bindings {task.bindings}' if task.bindings else ''}")
        for m, intent in enumerate(task.intents):
            lines.append(f"$.tasks[{t}].intents[{m}]   {intent!r}")
    return "\n".join(lines)


def critic_messages(spec: WorldSpec) -> list[dict[str, str]]:
    user = f"{INSTRUCTIONS}\n\nTHE SPEC (outline; each line starts with its JSON path)\n" \
           f"{outline(spec)}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def normalise_code(code: str) -> str:
    """``"Theme fit"`` / ``"llm-theme_fit"`` -> ``"llm-theme-fit"``."""
    slug = re.sub(r"[^a-z0-9]+", "-", code.lower()).strip("-")
    slug = slug[len(PREFIX):] if slug.startswith(PREFIX) else slug
    return PREFIX + (slug or "other")


def to_findings(spec: WorldSpec, reply: CriticReply) -> list[Finding]:
    """The model's findings that point into ``spec``, as validator findings."""
    data = spec.model_dump(mode="json")
    out: list[Finding] = []
    for item in reply.findings:
        parts = parse_json_path(item.path)
        if parts is None or not resolves(data, parts) or not item.message.strip():
            continue
        found = Finding(normalise_code(item.code), item.severity, json_path(tuple(parts)),
                        item.message.strip())
        if found not in out:
            out.append(found)
    return out[:MAX_FINDINGS]


async def critique(client: LLMClient, spec: WorldSpec) -> list[Finding]:
    """The critic's findings about ``spec`` (``llm-`` codes); raises the client's errors
    (LLMError, BudgetExceeded) for the caller to handle."""
    reply = await client.structured(STAGE, critic_messages(spec), CriticReply)
    return to_findings(spec, reply)
