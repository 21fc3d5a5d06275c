"""Breaking loops: a reply whose action the episode already took on a page that read the
same is replaced by the action the model samples most often, those taken there left out;
every other reply is played as the model wrote it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.tiny_lm import tiny_causal_lm
from webworld.browser.actions import parse_reply
from webworld.cli.main import app
from webworld.data.prompting import assistant_message
from webworld.errors import UsageError
from webworld.eval.grounding import GroundedPolicy
from webworld.eval.loops import LoopBreakingPolicy, other_action
from webworld.eval.policies import HFPolicy, Policy, Reply, ScriptedPolicy
from webworld.rl.turn import Turn

PAGE = "RootWebArea 'Sign in'\n[3] textbox 'Password', value=''\n[4] button 'Sign in'"
FILLED = "RootWebArea 'Sign in'\n[3] textbox 'Password', value='•••'\n[4] button 'Sign in'"


def reply(action: str, thought: str = "I go on.") -> str:
    return assistant_message(thought, action)


def test_the_most_sampled_other_action_wins() -> None:
    drawn = [reply("click('4')"), reply("fill('3', 'x')"), "no action", reply("click('9')"),
             reply("fill('3', 'x')", "I type it.")]
    assert other_action(drawn, {"click('4')"}) == drawn[1]  # twice, the first drawn of the two
    assert other_action(drawn, {"click('4')", "fill('3', 'x')"}) == drawn[3]
    assert other_action([reply("click('9')"), reply("click('8')")], {"click('4')"}) == \
        reply("click('9')")  # a tie: the first drawn
    assert other_action([reply("click('4')"), "no action"], {"click('4')"}) is None


class Looping(Policy):
    """Clicks Sign in every turn, as a policy stuck on a refused form does; its model would
    sometimes fill the password first."""

    name = "looping"

    def __init__(self) -> None:
        self.seeds: list[int] = []

    def act(self, turns: dict[int, Turn]) -> dict[int, Reply]:
        return {i: Reply(reply("click('4')", "I click “Sign in”."), 7, 5) for i in turns}

    def sample(self, turns: dict[int, Turn], k: int, seed: int) -> dict[int, list[str]]:
        self.seeds.append(seed)
        drawn = [reply("click('4')"), reply("fill('3', 'pw')", "I type into “Password”.")]
        return {i: (drawn * k)[:k] for i in turns}


def turn(page: str, history: list[str]) -> Turn:
    return Turn({"goal": "Sign in with password pw.", "axtree": page, "url": "https://s/"}, {},
                history)


def test_a_repeat_on_an_unchanged_page_is_replaced_and_a_repeat_elsewhere_is_not() -> None:
    inner = Looping()
    policy = LoopBreakingPolicy(inner, samples=4)
    policy.start(0, turn(PAGE, []), seed=5)
    policy.start(1, turn(PAGE, []), seed=5)
    first = policy.act({0: turn(PAGE, []), 1: turn(PAGE, [])})
    assert {parse_reply(r.text) for r in first.values()} == {"click('4')"}  # nothing to repeat
    # slot 0's page did not change after its click; slot 1's did (its password was typed)
    again = policy.act({0: turn(PAGE, ["click('4')"]), 1: turn(FILLED, ["click('4')"])})
    assert parse_reply(again[0].text) == "fill('3', 'pw')"
    assert again[0].completion_tokens == 5  # what the greedy reply spent is kept
    assert parse_reply(again[1].text) == "click('4')"
    assert (policy.broken, policy.looped) == (1, 1) and "loops broken" in policy.name
    # both actions taken on that page already (a round of two): none left to play instead
    third = policy.act({0: turn(PAGE, ["click('4')", "fill('3', 'pw')"])})
    assert parse_reply(third[0].text) == "click('4')"
    assert (policy.broken, policy.looped) == (1, 2)
    # a new episode starts with nothing to repeat
    policy.start(1, turn(FILLED, []), seed=6)
    assert parse_reply(policy.act({1: turn(FILLED, [])})[1].text) == "click('4')"


def test_the_draws_are_seeded_by_episode_and_step() -> None:
    seeds = []
    for _ in range(2):
        inner = Looping()
        policy = LoopBreakingPolicy(inner, samples=2)
        policy.start(0, turn(PAGE, []), seed=5)
        for step in range(1, 4):
            policy.taken[0] = {PAGE: {"click('4')"}}  # looping at every step
            policy.act({0: turn(PAGE, ["click('4')"] * step)})
        seeds.append(inner.seeds)
    assert seeds[0] == seeds[1] and len(set(seeds[0])) == len(seeds[0]) == 3


def test_grounded_draws_are_grounded() -> None:
    drawn = GroundedPolicy(Looping()).sample({0: turn(PAGE, [])}, 2, seed=0)[0]
    # the thought names Password, the id pointed at it already; the click names Sign in
    assert [parse_reply(t) for t in drawn] == ["click('4')", "fill('3', 'pw')"]
    wrong_id = GroundedPolicy(Looping())
    wrong_id.inner.sample = lambda turns, k, seed: {  # type: ignore[method-assign]
        0: [reply("fill('4', 'pw')", "I type into “Password”.")]}
    assert parse_reply(wrong_id.sample({0: turn(PAGE, [])}, 1, 0)[0][0]) == "fill('3', 'pw')"


def test_a_transformers_model_draws_seeded_replies(tmp_path: Path) -> None:
    model, tokenizer = tiny_causal_lm(max_positions=4096)
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    policy = HFPolicy(str(tmp_path / "tiny"), device="cpu", max_new_tokens=6)
    turns = {3: turn(PAGE, ["click('4')"])}
    drawn = policy.sample(turns, 4, seed=1)
    assert list(drawn) == [3] and len(drawn[3]) == 4
    assert policy.sample(turns, 4, seed=1) == drawn
    assert policy.sample(turns, 4, seed=2) != drawn
    assert len(set(drawn[3])) > 1  # drawn at temperature 1, not greedy


def test_breaking_a_scripted_policy_s_loops_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--study break_loops draws other replies from a model"):
        LoopBreakingPolicy(ScriptedPolicy("random", None))
    result = CliRunner().invoke(app, ["eval", "--policy", "random", "--suite", "miniwob:click-button",
                                      "--study", "break_loops", "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2 and "--study break_loops draws other replies" in result.output
    assert "Traceback" not in result.output
