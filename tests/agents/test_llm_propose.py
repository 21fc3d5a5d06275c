"""The LLM proposer, critic and improver against the scripted OpenAI-compatible server.

Scripted replies are built from real specs of the procedural generator (easy profile),
broken on purpose where a test needs a problem to fix.
"""

from __future__ import annotations

import copy
import functools
import json
from functools import cache
from typing import Any

import pytest

from tests.agents.scripted_llm import Reply, run_to_end
from webworld.agents.critic import critique
from webworld.agents.improver import (
    LLMImproveResult,
    SpecFix,
    apply_fix,
    improve_with_llm,
    propose_world_llm,
)
from webworld.agents.patch import PatchError, apply_patch, parse_json_path
from webworld.agents.proposer import GENERATOR, ProposalFailure, propose_specs
from webworld.errors import SpecLoadError
from webworld.propose.procedural import generate
from webworld.spec.io import parse_spec, spec_to_json
from webworld.spec.models import WorldSpec
from webworld.spec.validate import validate

THEME = "online bookstore"


@cache
def _easy(seed: int) -> str:
    return spec_to_json(generate(THEME, "easy", seed).spec)


def easy(seed: int = 0) -> dict[str, Any]:
    """A fresh copy of a real, valid easy spec as JSON data."""
    return json.loads(_easy(seed))


def without_content(data: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    for page in out["pages"]:
        page.pop("content", None)
    out.pop("provenance", None)
    return out


def with_unreachable_goals(data: dict[str, Any], tasks: list[int]) -> dict[str, Any]:
    """Goals that also need ``gift_wrap`` (a variable no action sets): statically possible,
    dynamically unreachable; the deterministic improver leaves them alone."""
    out = copy.deepcopy(data)
    out["variables"].append({"name": "gift_wrap", "type": "bool", "initial": False})
    for t in tasks:
        out["tasks"][t]["goal"]["conditions"] = [{"var": "gift_wrap", "op": "eq", "value": True}]
    return out


def drop_gift_wrap(task: int) -> dict[str, Any]:
    """The scripted fix: a JSON Patch that drops the impossible condition of one task."""
    return {"note": "the goal no longer needs gift wrap", "patch": [
        {"op": "test", "path": f"/tasks/{task}/goal/conditions/0/var", "value": "gift_wrap"},
        {"op": "remove", "path": f"/tasks/{task}/goal/conditions"},
    ]}


@pytest.fixture
def scripted(llm):
    """The shared scripted endpoint, with one retry only, so a scripted failure fails fast."""
    script, make = llm
    return script, functools.partial(make, max_retries=1)


def user_text(request: dict[str, Any]) -> str:
    return request["messages"][-1]["content"]


# --- the proposer ---------------------------------------------------------------------------


def test_schema_invalid_proposal_is_repaired_and_gets_provenance(scripted) -> None:
    script, make = scripted
    bad = without_content(easy(0))
    bad["pages"][1]["elements"][0]["kind"] = "widget"
    script.push(bad, without_content(easy(0)))
    client = make()
    [spec] = run_to_end(client, propose_specs(client, THEME, "easy", n=1, seed=7))
    assert isinstance(spec, WorldSpec)
    assert validate(spec).valid
    repair = user_text(script.requests[1])
    assert "pages.1.elements.0.kind" in repair and "could not be used" in repair
    assert client.ledger.stages["propose"].repairs == 1
    prov = spec.provenance
    assert (prov.generator, prov.theme, prov.profile, prov.seed) == (GENERATOR, THEME, "easy", 7)
    assert "model: scripted-model" in prov.notes
    first = user_text(script.requests[0])
    assert "10-15 pages" in first and "exactly 3 terminal" in first and "4-6 actions" in first
    assert '"home":"home"' in first  # the example spec travels compactly


def test_truncated_proposal_is_retried_then_a_failure_not_an_exception(scripted) -> None:
    script, make = scripted
    text = json.dumps(without_content(easy(1)))
    script.push(Reply(text[:4000], finish_reason="length"), Reply(text))
    client = make()
    [spec] = run_to_end(client, propose_specs(client, THEME, "easy", n=1))
    assert isinstance(spec, WorldSpec) and "line 1 column" in user_text(script.requests[1])

    script.default = Reply(text[:4000], finish_reason="length")
    client = make(max_repairs=1)
    [failure] = run_to_end(client, propose_specs(client, THEME, "easy", n=1))
    assert isinstance(failure, ProposalFailure)
    assert failure.kind == "invalid" and "line 1 column" in failure.reason
    assert len(script.requests) == 4


def test_n_concurrent_proposals_are_n_distinct_requests(scripted) -> None:
    script, make = scripted
    script.default = Reply(json.dumps(without_content(easy(0))))
    script.together = 3  # no reply before all three are in: one at a time would never end
    client = make(concurrency=4, timeout_s=60)
    specs = run_to_end(client, propose_specs(client, THEME, "easy", n=3, seed=0))
    assert all(isinstance(s, WorldSpec) for s in specs)  # (the time it saves: bench/bench_waits.py)
    prompts = [user_text(r) for r in script.requests]
    assert len(prompts) == 3 and len(set(prompts)) == 3
    assert sorted(p.split("Variant (candidate ")[1][:1] for p in prompts) == ["1", "2", "3"]
    assert [s.provenance.notes[1] for s in specs] == [f"candidate {i} of 3" for i in (1, 2, 3)]
    assert len(list(client.config.cache_dir.rglob("*.json"))) == 3  # three cache entries


# --- the improver --------------------------------------------------------------------------


def test_dangling_reference_is_fixed_deterministically_without_the_model(scripted) -> None:
    script, make = scripted
    data = easy(0)
    data["pages"][0]["actions"][2]["navigate"] = "resuts"
    spec = parse_spec(data)
    assert any(f.code == "dangling-reference" for f in validate(spec).errors)
    client = make()
    result = run_to_end(client, improve_with_llm(client, spec, profile="easy"))
    assert result.valid and result.stop == "valid" and result.rounds == []
    assert any(r.code == "dangling-reference" for r in result.repairs)
    assert result.spec.pages[0].actions[2].navigate == "results"
    assert script.requests == []


def test_unreachable_goal_is_fixed_by_a_json_patch(scripted) -> None:
    script, make = scripted
    spec = parse_spec(with_unreachable_goals(easy(0), [1]))
    [error] = validate(spec).errors
    assert (error.code, error.path) == ("unreachable-goal", "$.tasks[1].goal")
    script.push(drop_gift_wrap(1))
    client = make()
    result = run_to_end(client, improve_with_llm(client, spec))
    assert result.valid and result.stop == "valid"
    [log] = result.rounds
    assert (log.answer, log.outcome, log.errors) == ("patch", "better", 0)
    asked = user_text(script.requests[0])
    assert "[unreachable-goal] $.tasks[1].goal (/tasks/1/goal)" in asked
    assert '"content"' not in asked  # content blocks are not sent ...
    assert result.spec.pages[0].content == spec.pages[0].content  # ... and not lost
    assert result.spec.tasks[1].goal.conditions == []
    assert result.spec.provenance.generator == "webworld.propose.procedural"
    assert "llm improver: 1 round(s), stopped: valid" in result.spec.provenance.notes


def test_unreachable_goal_is_fixed_by_a_whole_spec(scripted) -> None:
    script, make = scripted
    spec = parse_spec(with_unreachable_goals(easy(0), [0]))
    fixed = without_content(easy(0))
    fixed["id"] = "renamed_by_the_model"
    script.push({"note": "rewrote the spec", "spec": fixed})
    client = make()
    result = run_to_end(client, improve_with_llm(client, spec, profile="easy"))
    assert result.valid and result.stop == "valid"
    assert [(r.answer, r.outcome) for r in result.rounds] == [("spec", "better")]
    assert result.spec.id == spec.id  # ids and provenance stay the original's
    assert all(p.content == q.content for p, q in zip(result.spec.pages, spec.pages))
    assert "THE SIZE IT MUST FIT" in user_text(script.requests[0])


def test_budget_runs_out_mid_loop_and_the_best_candidate_is_returned(scripted) -> None:
    script, make = scripted
    spec = parse_spec(with_unreachable_goals(easy(0), [0, 1]))
    assert len(validate(spec).errors) == 2
    worse = without_content(with_unreachable_goals(easy(0), [0, 1, 2]))
    script.push(drop_gift_wrap(0), {"spec": worse}, drop_gift_wrap(1))
    client = make(budget_tokens=300)  # two calls of 150 tokens each
    result = run_to_end(client, improve_with_llm(client, spec, max_rounds=5))
    assert result.stop == "budget" and "budget of 300 tokens is spent" in result.reason
    assert "best so far: 1 error(s) left (unreachable-goal)" in result.reason
    assert [r.outcome for r in result.rounds] == ["better", "worse"]
    assert len(result.errors) == 1 and not result.valid
    assert result.spec.tasks[0].goal.conditions == []  # the better candidate, not the worse
    assert result.spec.tasks[1].goal.conditions[0].var == "gift_wrap"
    assert len(script.requests) == 2
    assert "YOUR PREVIOUS ANSWER" in user_text(script.requests[1])


def test_a_patch_that_cannot_apply_is_fed_back_and_rounds_end(scripted) -> None:
    script, make = scripted
    spec = parse_spec(with_unreachable_goals(easy(0), [2]))
    script.push({"patch": [{"op": "replace", "path": "/tasks/9/goal", "value": {}}]},
                json.dumps([{"op": "remove", "path": "/tasks/2/goal/conditions/5"}]))  # bare
    client = make()
    result = run_to_end(client, improve_with_llm(client, spec, max_rounds=2))
    assert result.stop == "rounds" and not result.valid
    assert [r.outcome for r in result.rounds] == ["rejected", "rejected"]
    assert "index 9 is out of range" in result.rounds[0].detail
    assert "could not be applied" in user_text(script.requests[1])


# --- the critic ----------------------------------------------------------------------------


def test_critic_findings_with_bad_paths_are_dropped(scripted) -> None:
    script, make = scripted
    spec = parse_spec(easy(0))
    script.push({"findings": [
        {"code": "Unnatural intent", "path": "$.tasks[0].intents[1]",
         "message": "Nobody phrases a review request like this."},
        {"code": "theme-fit", "severity": "error", "path": "$",
         "message": "A bookstore should sell books."},
        {"code": "odd-label", "path": "/pages/0/title", "message": "Title reads oddly."},
        {"code": "theme-fit", "path": "$.pages[99].title", "message": "no such page"},
        {"code": "theme-fit", "path": "$.tasks[0].nope", "message": "no such field"},
        {"code": "theme-fit", "path": "pages[0]", "message": "not a JSON path"},
        {"code": "theme-fit", "path": "$.pages[0]junk", "message": "trailing junk"},
    ]})
    client = make()
    findings = run_to_end(client, critique(client, spec))
    assert [(f.code, f.severity, f.path) for f in findings] == [
        ("llm-unnatural-intent", "warning", "$.tasks[0].intents[1]"),
        ("llm-theme-fit", "error", "$"),
        ("llm-odd-label", "warning", "$.pages[0].title"),
    ]
    outline = user_text(script.requests[0])
    assert "$.tasks[0].intents[1]" in outline and f"$.pages[4] page {spec.pages[4].id}" \
        in outline


def test_critic_warnings_join_the_improver_findings(scripted) -> None:
    script, make = scripted
    script.push({"findings": [{"code": "theme-fit", "path": "$.pages[1]",
                               "message": "Results should show book covers."}]})
    client = make()
    result = run_to_end(client, improve_with_llm(client, parse_spec(easy(0)), critic=True))
    assert result.valid and result.stop == "valid"
    assert [f.code for f in result.warnings] == ["llm-theme-fit"]


# --- the whole first stage -----------------------------------------------------------------


def test_propose_world_llm_picks_the_valid_candidate(scripted) -> None:
    script, make = scripted
    script.push(json.dumps(without_content(easy(0))), Reply("no JSON here"))
    client = make(max_repairs=0)
    result = run_to_end(client, propose_world_llm(client, THEME, "easy", n=2))
    assert result.ok and result.chosen is not None
    assert isinstance(result.outcomes[result.chosen], LLMImproveResult)
    [failure] = [o for o in result.outcomes if isinstance(o, ProposalFailure)]
    assert "no valid WorldSpec" in failure.reason
    assert result.spec.provenance.generator == GENERATOR
    assert "chose candidate" in result.reason and "profile distance 0" in result.reason
    assert len(script.requests) == 2  # valid and within the profile: no improve call


def test_propose_world_llm_explains_when_no_candidate_is_valid(scripted) -> None:
    script, make = scripted
    broken = without_content(with_unreachable_goals(easy(0), [1]))
    useless = {"patch": [{"op": "test", "path": "/name", "value": "something else"}]}
    script.push(broken, broken, useless, useless)
    client = make()
    result = run_to_end(client, propose_world_llm(client, THEME, "easy", n=2, max_rounds=1))
    assert not result.ok and result.spec is None and result.chosen is None
    assert "none of the 2 LLM candidate(s)" in result.reason
    assert result.reason.count("unreachable-goal") >= 2
    assert "test failed" in result.reason
    assert result.summary() == result.reason


# --- the JSON Patch --------------------------------------------------------------------------


def test_json_patch_operations_and_errors() -> None:
    doc = {"a": [1, 2, {"b": True}], "c~/d": 0}
    out = apply_patch(doc, [
        {"op": "add", "path": "/a/-", "value": 4},
        {"op": "add", "path": "/a/0", "value": 0},
        {"op": "replace", "path": "/c~0~1d", "value": 9},
        {"op": "move", "from": "/a/3", "path": "/obj"},
        {"op": "copy", "from": "/obj", "path": "/obj2"},
        {"op": "test", "path": "/obj2/b", "value": True},
        {"op": "remove", "path": "/a/1"},
    ])
    assert out == {"a": [0, 2, 4], "c~/d": 9, "obj": {"b": True}, "obj2": {"b": True}}
    assert doc == {"a": [1, 2, {"b": True}], "c~/d": 0}  # the input is untouched
    bad = [
        ([{"op": "test", "path": "/c~0~1d", "value": False}], "test failed"),  # 0 is not false
        ([{"op": "replace", "path": "/x", "value": 1}], "use add"),
        ([{"op": "remove", "path": "/a/3"}], "out of range"),
        ([{"op": "move", "from": "/a", "path": "/a/0"}], "its own children"),
        ([{"op": "add", "path": "a", "value": 1}], "must start with '/'"),
        ([{"op": "eval", "path": "/a"}], "unknown op"),
        ([{"op": "add", "path": "/a/01", "value": 1}], "not an array index"),
    ]
    for ops, message in bad:
        with pytest.raises(PatchError, match=message):
            apply_patch(doc, ops)
    assert parse_json_path("$.tasks[0].bindings.a-b") == ["tasks", 0, "bindings", "a-b"]
    assert parse_json_path("$.pages[x]") is None


def test_spec_fix_accepts_bare_patches_and_specs_but_not_both() -> None:
    assert SpecFix.model_validate([{"op": "remove", "path": "/x"}]).patch is not None
    assert SpecFix.model_validate({"op": "remove", "path": "/x"}).patch is not None
    assert SpecFix.model_validate(without_content(easy(0))).spec is not None
    with pytest.raises(ValueError, match="exactly one"):
        SpecFix.model_validate({"patch": [{"op": "remove", "path": "/x"}], "spec": {}})
    spec = parse_spec(easy(0))
    with pytest.raises(SpecLoadError, match="schema error"):
        apply_fix(spec, SpecFix.model_validate(
            {"patch": [{"op": "add", "path": "/pages/0/terminal", "value": "maybe"}]}))
