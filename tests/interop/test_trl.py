"""webworld from TRL: the worlds as GRPOTrainer's environment_factory, on the fast env. A run of
two optimiser steps goes through, the rewards TRL logs are webworld's own episode rewards for the
same actions, and a tool call the env cannot carry out is an error it reports, not a crash."""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

import pytest
import torch

from webworld.browser.actions import parse_action
from webworld.browser.observe import parse_line
from webworld.data.prompting import page_line
from webworld.interop.trl import (
    ENDED,
    WebworldEnv,
    close_shared,
    environment_factory,
    task_dataset,
    world_folder,
)
from webworld.rl.fast.env import FastEnv
from webworld.rl.tasks import load_worlds

ROOT = Path(__file__).resolve().parents[2]


# GRPOTrainer in this process runs with -m slow: in the default run it trains through the
# OpenEnv client (tests/interop/test_trl_openenv.py), the same example's code path with the env
# behind a server; the tool-format warm start (tools_start) takes minutes on a loaded machine
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_trl_run_goes_through_and_logs_webworld_s_rewards(button_board: Path, tools_start: Path,
                                                           tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import trl_grpo

    scored: list[tuple[str, list[str], float]] = []  # every rollout TRL scored, in order
    reward_of = WebworldEnv.get_reward

    def get_reward(self: WebworldEnv) -> float:
        value = reward_of(self)
        scored.append((self.played.instance, list(self.played.actions), value))
        return value

    monkeypatch.setattr(WebworldEnv, "get_reward", get_reward)
    torch.manual_seed(0)
    run = trl_grpo.main(["--worlds", str(button_board), "--model", str(tools_start),
                         "--work", str(tmp_path), "--steps", "2", "--generations", "4"])
    steps = [r for r in run["log"] if "reward" in r]
    assert [r["step"] for r in steps] == [1, 2] and run["trainer"].state.global_step == 2
    assert sum(r["tools/call_frequency"] for r in steps) > 0  # the policy did act
    # TRL's logged reward is the mean of the env's episode rewards, step by step ...
    assert len(scored) == 8
    for k, row in enumerate(steps):
        mine = [reward for _, _, reward in scored[4 * k:4 * k + 4]]
        assert row["rewards/WebworldEnv/mean"] == pytest.approx(statistics.fmean(mine))
    # ... and each of those is what webworld's own env gives for the same actions
    env = FastEnv(load_worlds(button_board / "sites", button_board / "trajectories"), split=None,
                  build=False, observation="compact")
    for instance, actions, reward in scored:
        env.reset(seed=0, options={"task": instance})
        replayed = sum(env.step(action)[1] for action in actions)
        assert replayed == reward, (instance, actions)


def test_a_call_the_env_cannot_carry_out_is_its_error_not_a_crash(button_board: Path) -> None:
    env = environment_factory(button_board, split=None, max_steps=50)()
    instance = task_dataset(button_board, split=None)[0]
    page = env.reset(instance["instance"], instance["intent"])
    assert "button" in page and "URL:" in page
    for call in (lambda: env.click("999"), lambda: env.click(12345),
                 lambda: env.fill("1", None),  # a button is no text field
                 lambda: env.press("1", "Tab"), lambda: env.drag("1", "a lot"),
                 lambda: env.select_option("1", {"not": "text"}), lambda: env.check("1")):
        text = call()
        assert text.startswith("Last action failed:"), text
    assert env.get_reward() == 0.0
    finished = env.click(page.split("[", 1)[1].split("]", 1)[0])  # any button ends the board
    assert finished.endswith(ENDED)
    assert env.click("1") == ENDED  # after the end nothing is carried out


def test_a_tool_names_its_element_by_role_and_name_as_well_as_by_id(button_board: Path) -> None:
    """The oracle's presses by role and name (either quote) play as its presses by id; a name
    the page lacks is the env's refusal, which lists the page's names of that role."""
    make = environment_factory(button_board, split=None, max_steps=50)
    by_name, by_id = make(), make()
    worlds = world_folder(button_board.resolve())
    for row in task_dataset(button_board, split=None):
        page = by_name.reset(row["instance"], row["intent"])
        assert by_id.reset(row["instance"], row["intent"]) == page
        refused = by_name.click('button "No such button"')
        assert refused.startswith('Last action failed: no element button "No such button" on '
                                  'this page; this page has button "'), refused
        for k, action in enumerate(worlds.instance(row["instance"]).oracle[0]):
            bid = parse_action(action).bid
            _, _, role, name, _ = parse_line(page_line(page, bid))
            named = f"{role} '{name}'" if k % 2 else f'{role} "{name}"'
            page = by_name.click(named)
            assert page == by_id.click(f"[{bid}]"), named
        assert page.endswith(ENDED) and by_name.get_reward() == by_id.get_reward() == 1.0
        assert by_name.played.actions[-1] == f'click({role} "{name}")'


def test_the_live_env_plays_in_chromium_with_server_truth(button_board: Path) -> None:
    try:
        make = environment_factory(button_board, split=None, env="live")
        env, other = make(), make()
        assert env._shared is other._shared  # one browser and server per process
        worlds = world_folder(button_board.resolve())
        rows = task_dataset(button_board, split=None)
        fast = environment_factory(button_board, split=None)()
        for row in rows:  # the page as the fast env shows it, then the oracle's presses
            page = env.reset(row["instance"], row["intent"])
            assert page == fast.reset(row["instance"], row["intent"]) and "button" in page
            for action in worlds.instance(row["instance"]).oracle[0]:
                parsed = parse_action(action)
                text = getattr(env, parsed.name)(*parsed.args)
            assert text.endswith(ENDED) and env.get_reward() == 1.0, text
        row = rows[0]
        page = other.reset(row["instance"], row["intent"])
        right = parse_action(worlds.instance(row["instance"]).oracle[0][-1]).bid
        wrong = next(bid for bid in re.findall(r"\[(\d+)\]", page) if bid != right)
        assert other.click(wrong).endswith(ENDED) and other.get_reward() == 0.0  # server truth
    finally:
        close_shared()
