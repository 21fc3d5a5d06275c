"""The LLM proposer: theme + profile -> N candidate world specs, concurrently.

Each candidate asks the model for a whole :class:`WorldSpec` (the pydantic model is the
response schema, so the client repairs schema-invalid or truncated replies). The prompt
carries a compact description of the format, one small example and the profile's
ranges; a per-candidate "variant" hint makes the N requests differ, so they neither
return the same site nor collapse into one cache entry. A candidate that still fails is
a :class:`ProposalFailure`, never an exception.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from webworld.agents.client import BudgetExceeded, LLMClient, LLMError
from webworld.agents.spec_prompt import SPEC_FORMAT, example_spec, profile_ranges
from webworld.propose.procedural import get_profile
from webworld.propose.profiles import Profile
from webworld.spec.models import Provenance, WorldSpec

GENERATOR = "webworld.agents.proposer"
STAGE = "propose"

VARIANTS: tuple[str, ...] = (
    "the most typical version of such a site, built around its core user journeys",
    "a form-heavy site: selects, radio buttons, date pickers, checkboxes and sliders, with "
    "guards that show helpful error messages",
    "a search-and-filter site: search box, sort and filter widgets, result and detail pages",
    "a site with an account or settings area and a cookie banner on the home page",
    "a site with a hover navigation menu, tabs and a modal dialog",
    "an unusual, niche take on the theme, with distinctive page names and labels",
    "multi-step flows (like a checkout or a booking wizard) whose later steps are guarded "
    "by choices made earlier",
    "a content-rich site (articles, listings or catalogues) whose tasks need several "
    "variables set before the success page",
)

SYSTEM = ("You design synthetic websites as finite-state machines for training and "
          "evaluating web agents. You reply with one complete JSON world spec and nothing "
          "else: no prose, no code fences.")

FailureKind = Literal["invalid", "budget", "llm"]


@dataclass(frozen=True)
class ProposalFailure:
    """A candidate that did not produce a usable spec, and why."""

    index: int
    variant: str
    reason: str
    kind: FailureKind = "invalid"

    def __str__(self) -> str:
        return f"candidate {self.index + 1} failed ({self.kind}): {self.reason}"


def variant_hint(seed: int, index: int) -> str:
    return VARIANTS[(seed + index) % len(VARIANTS)]


def proposal_messages(theme: str, prof: Profile, *, index: int, n: int, seed: int
                      ) -> list[dict[str, str]]:
    """The chat messages of candidate ``index`` of ``n``."""
    user = "\n\n".join([
        "Design a website world spec.",
        f"THE FORMAT\n{SPEC_FORMAT}",
        f"A COMPLETE EXAMPLE (a different theme; copy its structure, not its content)\n"
        f"{example_spec()}",
        f"THE SIZE\n{profile_ranges(prof)}",
        f"YOUR SITE\nTheme: {theme}\n"
        f"Variant (candidate {index + 1} of {n}, seed {seed}): {variant_hint(seed, index)}.\n"
        "Use realistic page titles, labels and option values for this theme. Give every "
        "task 2-4 intents phrased differently. Omit content blocks and provenance.",
        "Reply with the complete spec as one JSON object.",
    ])
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


async def propose_one(client: LLMClient, theme: str, prof: Profile, *, index: int = 0,
                      n: int = 1, seed: int = 0) -> WorldSpec | ProposalFailure:
    """One candidate: a schema-valid spec with provenance, or why there is none."""
    hint = variant_hint(seed, index)
    messages = proposal_messages(theme, prof, index=index, n=n, seed=seed)
    try:
        spec = await client.structured(STAGE, messages, WorldSpec)
    except BudgetExceeded as exc:
        return ProposalFailure(index, hint, str(exc), "budget")
    except LLMError as exc:
        kind: FailureKind = "invalid" if "no valid" in str(exc) else "llm"
        return ProposalFailure(index, hint, str(exc), kind)
    spec.theme = theme
    spec.provenance = Provenance(
        generator=GENERATOR, theme=theme, profile=prof.name, seed=seed,
        notes=[f"model: {client.config.model}", f"candidate {index + 1} of {n}",
               f"variant: {hint}"])
    return spec


async def propose_specs(client: LLMClient, theme: str, profile: str | Profile, *, n: int = 3,
                        seed: int = 0) -> list[WorldSpec | ProposalFailure]:
    """``n`` concurrent proposals (stage ``propose``), in candidate order."""
    if n < 1:
        raise ValueError("n must be at least 1")
    prof = get_profile(profile) if isinstance(profile, str) else profile
    return list(await asyncio.gather(*(
        propose_one(client, theme, prof, index=i, n=n, seed=seed) for i in range(n))))
