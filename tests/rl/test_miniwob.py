"""MiniWoB++ through webworld's API: every task listed, a scripted policy that speaks the
action language solves simple tasks, MiniWoB's own reward comes back."""

from __future__ import annotations

import re

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import webworld.rl  # noqa: F401  (registers the ids)
from webworld.rl.miniwob import MiniWoBEnv, miniwob_tasks
from webworld.rl.policies import page_elements


def quoted(goal: str) -> list[str]:
    return re.findall(r'"([^"]*)"', goal)


def scripted(task: str, goal: str, axtree: str, done: list[str]) -> str:
    """One action for a few simple tasks, from the goal and the page text only."""
    els = page_elements(axtree)
    by_role = {role: [e for e in els if e.role == role] for role in {e.role for e in els}}
    fields, buttons = by_role.get("textbox", []), by_role.get("button", [])
    if task == "click-button":
        return f"click('{next(e.bid for e in buttons if e.name == quoted(goal)[0])}')"
    if task == "focus-text":
        return f"click('{fields[0].bid}')"
    if task == "click-dialog":
        return f"click('{next(e.bid for e in buttons if e.name.lower() == 'close')}')"
    if task == "click-tab":
        n = re.search(r"#(\d+)", goal).group(1)
        return f"click('{next(e.bid for e in els if e.role == 'tab' and e.name == f'Tab #{n}')}')"
    if task == "click-checkboxes":
        wanted = re.search(r"Select (.*) and click Submit", goal).group(1)
        names = [] if wanted == "nothing" else re.split(r", | and ", wanted)
        todo = [e for e in by_role.get("checkbox", []) if e.name in names and e.bid not in done]
        if todo:
            done.append(todo[0].bid)
            return f"check('{todo[0].bid}')"
        return f"click('{buttons[-1].bid}')"
    texts = quoted(goal)
    if task == "enter-password":
        texts = texts * 2
    for field, text in zip(fields, texts):  # enter-text, login-user, enter-password
        if field.bid not in done:
            done.append(field.bid)
            return f"fill('{field.bid}', '{text}')"
    return f"click('{buttons[-1].bid}')"


def test_every_task_of_the_wheel_is_listed_and_registered() -> None:
    tasks = miniwob_tasks()
    assert len(tasks) == 130
    assert {"click-button", "book-flight", "use-slider", "email-inbox"} <= set(tasks)
    for task in tasks:
        assert f"webworld/miniwob.{task}-v0" in gymnasium.registry


@pytest.mark.parametrize("task", ["click-button", "focus-text", "enter-text", "login-user",
                                  "enter-password", "click-checkboxes", "click-dialog", "click-tab"])
def test_a_scripted_policy_solves_simple_tasks(task: str) -> None:
    env = gymnasium.make(f"webworld/miniwob.{task}-v0")
    try:
        for seed in range(2):
            obs, info = env.reset(seed=seed)
            assert obs["goal"] and obs["url"].endswith(f"/miniwob/{task}.html")
            done, total = [], 0.0
            for _ in range(12):
                obs, reward, terminated, truncated, info = env.step(
                    scripted(task, obs["goal"], obs["axtree"], done))
                assert obs["last_action_error"] == "", obs["last_action_error"]
                total += reward
                if terminated or truncated:
                    break
            assert terminated and total > 0, (task, seed, info)
            assert info["raw_reward"] == 1
    finally:
        env.close()


def test_wrong_answers_and_bad_actions() -> None:
    env = MiniWoBEnv("click-button")
    try:
        obs, _ = env.reset(seed=5)
        obs, reward, terminated, _, info = env.step("clik('1')")
        assert info["error_code"] == "syntax" and not terminated and reward == 0
        obs, _, _, _, info = env.step("fill('1', 'x')")
        assert info["error_code"] in ("wrong_element", "")
        target = quoted(obs["goal"])[0]
        wrong = next(e for e in page_elements(obs["axtree"]) if e.role == "button" and e.name != target)
        obs, reward, terminated, _, info = env.step(f"click('{wrong.bid}')")
        assert terminated and reward < 0 and info["raw_reward"] == -1
    finally:
        env.close()


def test_check_env() -> None:
    env = MiniWoBEnv("click-button")
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()
