"""Intent and thought writers: natural task instructions and short per-step thoughts.

Both are grounded: an intent paraphrase must mention every slot value the trajectory
uses, and a step's thought must not name values the task does not contain; replies that
break these rules go back to the model for repair (by the client's validation loop).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from webworld.agents.client import LLMClient
from webworld.fsio import atomic_write_jsonl

PARAPHRASES = 4


class IntentParaphrases(BaseModel):
    """Natural ways a user would ask for the task, each with every required value."""

    paraphrases: list[str] = Field(min_length=1, max_length=8)

    @field_validator("paraphrases")
    @classmethod
    def _grounded(cls, value: list[str], info: ValidationInfo) -> list[str]:
        required = (info.context or {}).get("values", [])
        for text in value:
            missing = [v for v in required if v.lower() not in text.lower()]
            if missing:
                raise ValueError(f"{text!r} does not mention {', '.join(map(repr, missing))}")
        return value


class StepThoughts(BaseModel):
    """One short thought per step, in order."""

    thoughts: list[str] = Field(min_length=1)

    @field_validator("thoughts")
    @classmethod
    def _one_per_step(cls, value: list[str], info: ValidationInfo) -> list[str]:
        count = (info.context or {}).get("count")
        if count is not None and len(value) != count:
            raise ValueError(f"expected {count} thoughts, one per step, got {len(value)}")
        return value


def _values(slots: dict[str, Any]) -> list[str]:
    return [str(v) for v in slots.values() if v not in (None, "", [], True, False)]


async def paraphrase_intents(client: LLMClient, candidates: list[dict[str, Any]]) -> int:
    """Rewrite each candidate's ``intent`` with an LLM paraphrase of its task instance.

    One request per distinct (task, slot values); the templated intent is kept as
    ``template_intent``. Returns how many candidates changed."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for cand in candidates:
        groups[json.dumps([cand["task_id"], cand["slots"]], sort_keys=True, default=str)].append(cand)

    async def one(group: list[dict[str, Any]]) -> int:
        first = group[0]
        reply = await client.structured("intents", _intent_prompt(first), IntentParaphrases,
                                        context={"values": _values(first["slots"])})
        for cand in group:
            cand.setdefault("template_intent", cand["intent"])
            cand["intent"] = _pick(reply.paraphrases, cand["id"])
        return len(group)

    return sum(await asyncio.gather(*(one(g) for g in groups.values())))


def _intent_prompt(candidate: dict[str, Any]) -> list[dict[str, str]]:
    values = _values(candidate["slots"])
    return [
        {"role": "system", "content": "You write instructions that a person would give a web "
         "assistant. Keep every given value exactly as written. No quotes around the whole "
         "instruction, no numbering."},
        {"role": "user", "content": f"Task: {candidate.get('template_intent', candidate['intent'])}"
         f"\nValues that must appear verbatim: {json.dumps(values)}\nWrite {PARAPHRASES} "
         "varied, natural paraphrases (imperative, question, first person, casual)."},
    ]


def _pick(options: list[str], key: str) -> str:
    return options[int(hashlib.sha1(key.encode()).hexdigest(), 16) % len(options)]


async def write_thoughts(client: LLMClient, trajectories: list[dict[str, Any]]
                         ) -> dict[str, list[str]]:
    """Trajectory id -> one short thought per step (stage ``thoughts``)."""

    async def one(traj: dict[str, Any]) -> tuple[str, list[str]]:
        steps = [{"action": s["action"], "target": s["element_label"], "value": s.get("value")}
                 for s in traj["steps"]]
        messages = [
            {"role": "system", "content": "You narrate a web agent's reasoning: for each step, "
             "one short sentence in the first person saying why the action is the next thing to "
             "do for the task. Mention only values that appear in the task or the step."},
            {"role": "user", "content": f"Task: {traj['intent']}\nSteps: {json.dumps(steps)}\n"
             f"Reply with exactly {len(steps)} thoughts, in order."},
        ]
        reply = await client.structured("thoughts", messages, StepThoughts,
                                        context={"count": len(steps)})
        return traj["id"], reply.thoughts

    return dict(await asyncio.gather(*(one(t) for t in trajectories)))


def save_thoughts(world_dir: Path, thoughts: dict[str, list[str]]) -> Path:
    """``thoughts.jsonl`` beside ``verified.jsonl``; the export prefers these thoughts."""
    records = [{"id": k, "thoughts": v} for k, v in sorted(thoughts.items())]
    return atomic_write_jsonl(world_dir / "thoughts.jsonl", records)
