"""The LLM improver, and the LLM path of the pipeline's first stage.

:func:`improve_with_llm` loops: the deterministic :func:`~webworld.propose.improve.improve`
first (cheap repairs), then validate (plus the critic's findings and the profile's ranges
when asked); while problems remain, the model (stage ``improve``) answers either an
RFC 6902 JSON Patch or a whole spec, which is applied, parsed with
:func:`~webworld.spec.io.parse_spec` and assessed again. The best candidate seen (fewest
errors, then fewest warnings) is kept; the loop stops when the spec is valid (and fits
the profile, if one is given), when the rounds run out, or when the budget is spent, and
always returns the best candidate with the reason.

:func:`propose_world_llm` proposes N candidates, improves each, and picks the best valid
one; when none is valid it says why, per candidate, instead of raising.
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from webworld.agents.client import BudgetExceeded, LLMClient, LLMError
from webworld.agents.critic import critique
from webworld.agents.patch import PatchError, apply_patch, path_to_pointer
from webworld.agents.proposer import ProposalFailure, propose_specs
from webworld.agents.spec_prompt import (
    SPEC_FORMAT,
    compact,
    profile_ranges,
    spec_data,
    strip_for_prompt,
)
from webworld.errors import SpecLoadError, WebworldError
from webworld.propose.improve import UNREPAIRABLE, Repair, improve
from webworld.propose.procedural import (
    get_profile,
    profile_problems,
    shortest_paths_to_terminals,
)
from webworld.propose.profiles import Profile
from webworld.spec.graph import DEFAULT_STATE_BUDGET
from webworld.spec.io import parse_spec
from webworld.spec.models import FURNITURE_ROLES, WorldSpec
from webworld.spec.validate import Finding, HasFindings, Report

STAGE = "improve"
PROFILE_CODE = "profile-range"
MAX_SHOWN_FINDINGS = 40

StopReason = Literal["valid", "rounds", "budget", "llm-error"]


# --- what the model answers ----------------------------------------------------------------


class PatchOp(BaseModel):
    """One RFC 6902 operation; ``path`` / ``from`` are JSON Pointers."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    op: Literal["add", "remove", "replace", "move", "copy", "test"]
    path: str
    from_: str | None = Field(default=None, alias="from")
    value: Any = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": self.path}
        if self.from_ is not None:
            out["from"] = self.from_
        if "value" in self.model_fields_set:
            out["value"] = self.value
        return out


class SpecFix(BaseModel):
    """Either ``patch`` (RFC 6902 operations on the spec JSON) or ``spec`` (a whole spec)."""

    model_config = ConfigDict(extra="forbid")

    patch: list[PatchOp] | None = None
    spec: dict[str, Any] | None = None
    note: str = Field("", description="one line: what the fix changes")

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        """Accept a bare patch (a list), a single operation, or a bare spec object."""
        if isinstance(data, list):
            return {"patch": data}
        if isinstance(data, dict) and not {"patch", "spec"} & data.keys():
            if "op" in data and "path" in data:
                return {"patch": [data]}
            if "pages" in data:
                return {"spec": data}
        return data

    @model_validator(mode="after")
    def _exactly_one(self) -> SpecFix:
        if (self.patch is None) == (self.spec is None):
            raise ValueError('give exactly one of "patch" (a list of operations) or "spec"')
        if self.patch is not None and not self.patch:
            raise ValueError('"patch" is empty: give at least one operation')
        return self


# --- candidates and results -------------------------------------------------------------------


@dataclass
class Candidate(HasFindings):
    """One spec with its deterministic report and the extra (critic, profile) findings."""

    spec: WorldSpec
    report: Report
    extra: list[Finding] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return self.report.findings + self.extra

    @property
    def score(self) -> tuple[int, int]:
        return len(self.errors), len(self.warnings)

    @property
    def profile_misses(self) -> list[Finding]:
        return [f for f in self.extra if f.code == PROFILE_CODE]

    @property
    def done(self) -> bool:
        return not self.errors and not self.profile_misses


@dataclass
class RoundLog:
    """What one LLM round did: the kind of answer, and the errors / warnings after it."""

    round: int
    answer: Literal["patch", "spec"]
    outcome: Literal["better", "same", "worse", "rejected"]
    detail: str
    errors: int | None = None
    warnings: int | None = None


@dataclass
class LLMImproveResult(HasFindings):
    """The best candidate seen, its findings, and why the loop stopped."""

    spec: WorldSpec
    report: Report
    findings: list[Finding]
    rounds: list[RoundLog]
    repairs: list[Repair]
    stop: StopReason
    reason: str
    notes: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """No errors: the validator's, or the critic's when it marked one an error."""
        return not self.errors

    def summary(self) -> str:
        lines = [f"{len(self.rounds)} LLM round(s), {len(self.repairs)} deterministic "
                 f"repair(s); stopped: {self.stop} ({self.reason})"]
        lines += [f"  round {r.round}: {r.answer}, {r.outcome}: {r.detail}" for r in self.rounds]
        lines += [f"  note: {n}" for n in self.notes]
        state = "valid" if self.valid else "NOT valid"
        lines.append(f"The spec is {state}: {len(self.errors)} error(s), "
                     f"{len(self.warnings)} warning(s).")
        lines += [f"  {f.severity} [{f.code}] {f.path}: {f.message}" for f in self.findings]
        return "\n".join(lines)


# --- profile findings --------------------------------------------------------------------------

_PAGE_IN = re.compile(r"^(?:page (\S+) has|shortest path to (\S+) is)")


def profile_findings(spec: WorldSpec, prof: Profile) -> list[Finding]:
    """How the spec misses the profile's ranges, as warnings with a path."""
    index = {p.id: i for i, p in enumerate(spec.pages)}
    out = []
    for problem in profile_problems(spec, prof):
        match = _PAGE_IN.match(problem)
        page = (match.group(1) or match.group(2)) if match else None
        path = f"$.pages[{index[page]}]" if page in index else "$.pages"
        out.append(Finding(PROFILE_CODE, "warning", path, f"{problem} ({prof.name} profile)"))
    return out


def _distance(value: int | None, bounds: tuple[int, int], missing: int) -> int:
    if value is None:
        return missing
    lo, hi = bounds
    return max(0, lo - value, value - hi)


def profile_distance(spec: WorldSpec, prof: Profile) -> int:
    """How far the spec is outside the profile's ranges (0 when it fits)."""
    from webworld.propose.chrome import counted_actions, counted_pages

    furniture = {p.id for p in spec.pages if p.role in FURNITURE_ROLES}
    d = _distance(counted_pages(spec), prof.pages, 0)  # site furniture is not counted
    d += sum(_distance(counted_actions(p, furniture), prof.actions_per_page, 0)
             for p in spec.pages if not p.terminal and p.id not in furniture)
    d += abs(len(spec.terminals) - prof.terminals)
    paths = shortest_paths_to_terminals(spec).values()
    d += sum(_distance(n, prof.path_length, prof.path_length[1]) for n in paths)
    return d


# --- the prompt ------------------------------------------------------------------------------

SYSTEM = ("You repair website world specs (JSON finite-state machines) so that a "
          "deterministic validator accepts them. You reply with JSON only.")

ANSWER = """\
Reply with ONE JSON object, either
  {"note": "...", "patch": [RFC 6902 operations]}   (preferred when a few changes suffice)
or
  {"note": "...", "spec": {the whole corrected spec}}.
Patch operations: add, remove, replace, move, copy, test. "path" and "from" are JSON
Pointers into the spec JSON shown above, e.g. /pages/3/actions/0/navigate or
/tasks/1/goal/conditions/0; "-" appends to an array (/pages/2/actions/-). Fields at their
default value are omitted above: use "add" (not "replace") to set them. Operations apply
in order, so later indices see earlier insertions and removals.
Fix the causes (for example add an action that sets the variable a goal needs, or a link
to a page). Keep ids stable, and keep what each task means unless it cannot be reached
otherwise. Warnings may stay."""


def _describe(f: Finding) -> str:
    pointer = path_to_pointer(f.path)
    where = f"{f.path} ({pointer})" if pointer is not None and pointer else f.path
    line = f"- {f.severity} [{f.code}] {where}: {f.message}"
    if f.code in UNREPAIRABLE and f.severity == "error":
        line += f"\n    (not repaired automatically: {UNREPAIRABLE[f.code]})"
    return line


def improve_messages(cand: Candidate, prof: Profile | None, feedback: str
                     ) -> list[dict[str, str]]:
    todo = cand.errors + cand.profile_misses
    shown = todo[:MAX_SHOWN_FINDINGS]
    more = f"\n... and {len(todo) - len(shown)} more" if len(todo) > len(shown) else ""
    parts = [
        f"THE FORMAT\n{SPEC_FORMAT}",
        "THE SPEC (content blocks and provenance omitted)\n"
        f"{compact(strip_for_prompt(spec_data(cand.spec)))}",
        "PROBLEMS TO FIX (severity [code] JSON path (JSON Pointer): message)\n"
        + "\n".join(_describe(f) for f in shown) + more,
    ]
    if prof is not None:
        parts.append(f"THE SIZE IT MUST FIT\n{profile_ranges(prof)}")
    if feedback:
        parts.append(f"YOUR PREVIOUS ANSWER\n{feedback}")
    parts.append(ANSWER)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


# --- applying an answer -------------------------------------------------------------------------


def apply_fix(spec: WorldSpec, fix: SpecFix) -> WorldSpec:
    """The spec an answer describes; its id, theme and provenance stay the original's, and
    a whole-spec answer keeps the original content blocks of pages it kept."""
    base = spec_data(spec)
    if fix.patch is not None:
        data = apply_patch(base, [op.as_json() for op in fix.patch])
        if not isinstance(data, dict):
            raise PatchError("the patch replaced the spec with a non-object")
    else:
        data = dict(fix.spec or {})
        content = {p["id"]: p["content"] for p in base["pages"] if p.get("content")}
        pages = data.get("pages")
        if isinstance(pages, list):
            data["pages"] = [
                {**p, "content": content[p["id"]]}
                if isinstance(p, dict) and "content" not in p and p.get("id") in content else p
                for p in pages]
    for key in ("id", "theme", "provenance"):
        if key in base:
            data[key] = base[key]
        else:
            data.pop(key, None)
    return parse_spec(data, "the improved spec")


# --- the loop ------------------------------------------------------------------------------------


@dataclass
class _Run:
    client: LLMClient
    critic: bool
    prof: Profile | None
    state_budget: int
    repairs: list[Repair] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    async def assess(self, spec: WorldSpec) -> tuple[Candidate, str | None]:
        """Deterministic repairs, validation, profile and critic; the second item is the
        budget message if the budget ran out during the critic."""
        # CPU-bound and pure: off the event loop, so other candidates' requests proceed
        det = await asyncio.to_thread(improve, spec, state_budget=self.state_budget)
        self.repairs += det.repairs
        cand = Candidate(det.spec, det.report)
        bfs_ok = det.report.states is not None and not any(
            f.code == "state-budget" for f in det.report.findings)
        if self.prof is not None and bfs_ok:
            cand.extra += await asyncio.to_thread(profile_findings, det.spec, self.prof)
        if self.critic:
            try:
                cand.extra += await critique(self.client, det.spec)
            except BudgetExceeded as exc:
                self.notes.append("the critic did not run on the last candidate (budget)")
                return cand, str(exc)
            except LLMError as exc:
                self.notes.append(f"the critic failed: {exc}")
        return cand, None

    def result(self, best: Candidate, rounds: list[RoundLog], stop: StopReason, reason: str
               ) -> LLMImproveResult:
        spec = best.spec.model_copy(deep=True)
        spec.provenance.notes.append(f"llm improver: {len(rounds)} round(s), stopped: {stop}")
        return LLMImproveResult(spec, best.report, best.findings, rounds, self.repairs, stop,
                                reason, self.notes)


def _outcome(new: Candidate, old: Candidate) -> Literal["better", "same", "worse"]:
    return "better" if new.score < old.score else "same" if new.score == old.score else "worse"


def _remaining(cand: Candidate) -> str:
    if cand.errors:
        codes = sorted({f.code for f in cand.errors})
        return f"{len(cand.errors)} error(s) left ({', '.join(codes)})"
    if cand.profile_misses:
        return f"valid, but {len(cand.profile_misses)} profile range problem(s) left"
    return "no errors left"


async def improve_with_llm(
    client: LLMClient,
    spec: WorldSpec,
    *,
    max_rounds: int = 4,
    critic: bool = False,
    profile: str | Profile | None = None,
    state_budget: int = DEFAULT_STATE_BUDGET,
) -> LLMImproveResult:
    """Improve ``spec`` with cheap deterministic repairs and up to ``max_rounds`` LLM fixes;
    returns the best candidate seen and why the loop stopped (never raises the client's
    errors)."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    run = _Run(client, critic, prof, state_budget)
    rounds: list[RoundLog] = []
    best, spent = await run.assess(spec)
    if spent:
        return run.result(best, rounds, "budget", spent)
    feedback = ""
    for n in range(1, max_rounds + 1):
        if best.done:
            break
        try:
            fix = await client.structured(STAGE, improve_messages(best, prof, feedback), SpecFix)
        except BudgetExceeded as exc:
            return run.result(best, rounds, "budget", f"{exc}; best so far: {_remaining(best)}")
        except LLMError as exc:
            return run.result(best, rounds, "llm-error",
                              f"{exc}; best so far: {_remaining(best)}")
        answer: Literal["patch", "spec"] = "patch" if fix.patch is not None else "spec"
        try:
            new_spec = apply_fix(best.spec, fix)
        except (PatchError, SpecLoadError) as exc:
            feedback = f"It could not be applied, so it was discarded: {exc}"
            rounds.append(RoundLog(n, answer, "rejected", str(exc)))
            continue
        new, spent = await run.assess(new_spec)
        outcome = _outcome(new, best)
        detail = f"{fix.note.strip()}; " if fix.note.strip() else ""
        rounds.append(RoundLog(n, answer, outcome, detail + _remaining(new),
                               len(new.errors), len(new.warnings)))
        if outcome == "worse":
            feedback = (f"It was applied but made things worse ({_remaining(new)}; before: "
                        f"{_remaining(best)}), so it was discarded. Its errors:\n"
                        + "\n".join(_describe(f) for f in new.errors[:10]))
        else:
            feedback = ("It was applied; the problems listed above are what is left."
                        if outcome == "better" else
                        "It was applied but fixed nothing; try a different change.")
            best = new
        if spent:
            return run.result(best, rounds, "budget", f"{spent}; best so far: {_remaining(best)}")
    if best.done:
        return run.result(best, rounds, "valid", "no errors" + (
            f" and within the {prof.name} profile" if prof else ""))
    return run.result(best, rounds, "rounds",
                      f"{max_rounds} LLM round(s) used; best so far: {_remaining(best)}")


# --- the whole first stage --------------------------------------------------------------------


@dataclass
class LLMWorldResult:
    """The chosen spec (None if no candidate became valid), and every candidate's story."""

    spec: WorldSpec | None
    chosen: int | None
    outcomes: list[LLMImproveResult | ProposalFailure]
    reason: str

    @property
    def ok(self) -> bool:
        return self.spec is not None

    @property
    def chosen_result(self) -> LLMImproveResult | None:
        if self.chosen is None:
            return None
        out = self.outcomes[self.chosen]
        return out if isinstance(out, LLMImproveResult) else None

    def summary(self) -> str:
        """The reason, then one story per candidate (``*`` marks the chosen one)."""
        if self.spec is None:
            return self.reason  # it already tells every candidate's story
        lines = [self.reason]
        for i, out in enumerate(self.outcomes):
            mark = "*" if i == self.chosen else " "
            lines.append(f"{mark} candidate {i + 1}: {_story(out)}")
        return "\n".join(lines)


def _story(out: LLMImproveResult | ProposalFailure) -> str:
    if isinstance(out, ProposalFailure):
        return f"proposal failed ({out.kind}): {out.reason}"
    state = "valid" if out.valid else "NOT valid"
    head = (f"{out.spec.id}: {state}, {len(out.errors)} error(s), {len(out.warnings)} "
            f"warning(s) after {len(out.rounds)} LLM round(s); stopped: {out.stop} "
            f"({out.reason})")
    last = out.rounds[-1] if out.rounds else None
    if last is not None and last.outcome in ("rejected", "worse"):
        head += f"\n    the last LLM answer was {last.outcome}: {last.detail}"
    errors = [f"    {f.severity} [{f.code}] {f.path}: {f.message}" for f in out.errors[:5]]
    more = [f"    ... and {len(out.errors) - 5} more"] if len(out.errors) > 5 else []
    return "\n".join([head, *errors, *more])


async def _improve_candidate(client: LLMClient, index: int, proposal: WorldSpec | ProposalFailure,
                             **kw: Any) -> LLMImproveResult | ProposalFailure:
    if isinstance(proposal, ProposalFailure):
        return proposal
    try:
        return await improve_with_llm(client, proposal, **kw)
    except (WebworldError, RecursionError, ValueError, KeyError, TypeError) as exc:
        # a model-written spec that trips a deterministic stage is this candidate's failure
        return ProposalFailure(index, "", f"improving failed: {type(exc).__name__}: {exc}",
                               "invalid")


def _rank(out: LLMImproveResult, prof: Profile) -> tuple[int, float]:
    try:
        distance: float = profile_distance(out.spec, prof)
    except Exception:  # noqa: BLE001 - ranking must never crash the stage
        distance = math.inf
    return len(out.warnings), distance


async def propose_world_llm(
    client: LLMClient,
    theme: str,
    profile: str | Profile,
    *,
    n: int = 3,
    seed: int = 0,
    critic: bool = False,
    max_rounds: int = 4,
    state_budget: int = DEFAULT_STATE_BUDGET,
) -> LLMWorldResult:
    """Propose ``n`` specs, improve each (concurrently), and pick the best valid one:
    fewest warnings, then closest to the profile's ranges, then the earliest candidate."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    proposals = await propose_specs(client, theme, prof, n=n, seed=seed)
    outcomes = list(await asyncio.gather(*(
        _improve_candidate(client, i, p, max_rounds=max_rounds, critic=critic, profile=prof,
                           state_budget=state_budget)
        for i, p in enumerate(proposals))))
    valid = [(i, o) for i, o in enumerate(outcomes)
             if isinstance(o, LLMImproveResult) and o.valid]
    if not valid:
        failed = sum(isinstance(o, ProposalFailure) for o in outcomes)
        reason = (f"none of the {n} LLM candidate(s) for {theme!r} became valid "
                  f"({failed} failed to propose, {n - failed} still had errors)")
        return LLMWorldResult(None, None, outcomes, reason + ":\n" + "\n".join(
            f"  candidate {i + 1}: {_story(o)}" for i, o in enumerate(outcomes)))
    ranked = sorted(valid, key=lambda item: (*_rank(item[1], prof), item[0]))
    index, best = ranked[0]
    warnings, distance = _rank(best, prof)
    reason = (f"chose candidate {index + 1} of {n} ({len(valid)} valid): {warnings} "
              f"warning(s), profile distance {distance}")
    return LLMWorldResult(best.spec, index, outcomes, reason)
