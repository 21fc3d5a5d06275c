"""webworld tasks registered with BrowserGym: its own env, its own element ids, our reward."""

from __future__ import annotations

import asyncio
import json

import gymnasium
from browsergym.core.action.highlevel import HighLevelActionSet

from tests.rl.conftest import Built
from webworld.browser.launch import chromium_path
from webworld.rl.browsergym import (
    register_browsergym_tasks,
    release_playwright,
    task_name,
    use_debian_chromium,
)
from webworld.verify.gestures import gestures

SLIDER_JS = """s => { const e = document.querySelector(s); const r = e.getBoundingClientRect();
  return [r.left, r.top + r.height / 2, r.width, Number(e.min), Number(e.max), Number(e.value)]; }"""


def browsergym_action(page, gesture) -> str:
    """A webworld gesture as a BrowserGym action on BrowserGym's own id (``bid``) of the
    element. BrowserGym's actions have no check(): a box is ticked by a click; a slider
    drag is a mouse drag between the two thumb positions."""
    if gesture.action == "drag":
        left, y, width, lo, hi, now = page.evaluate(SLIDER_JS, gesture.selector)
        thumb = 18

        def x_of(v: float) -> float:
            return left + thumb / 2 + (v - lo) / (hi - lo) * (width - thumb)

        return f"mouse_drag_and_drop({x_of(now)}, {y}, {x_of(float(gesture.arg))}, {y})"
    bid, checked = page.evaluate("s => { const e = document.querySelector(s); "
                                 "return [e.getAttribute('bid'), e.checked]; }", gesture.selector)
    assert bid, f"BrowserGym gave no id to {gesture.selector}"
    if gesture.action in ("check", "uncheck"):
        return f"click({json.dumps(bid)})" if checked != (gesture.action == "check") else "noop(0)"
    args = [bid] + ([gesture.arg] if gesture.arg is not None else [])
    return f"{gesture.action}({', '.join(json.dumps(a) for a in args)})"


def test_a_verified_trajectory_replays_in_browsergym_with_reward_one(lab: Built) -> None:
    use_debian_chromium()
    ids = register_browsergym_tasks(lab.sites, lab.trajectories)
    worlds = lab.worlds()
    assert len(ids) == len(worlds.instances()) and all(i.startswith("browsergym/webworld.")
                                                      for i in ids)
    candidates = {json.loads(line)["id"]: json.loads(line) for line in
                  (lab.trajectories / "widget_lab" / "candidates.jsonl").open()}
    verified = [json.loads(line) for line in
                (lab.trajectories / "widget_lab" / "verified.jsonl").open()]
    traj = next(t for t in verified if t["task_id"] == "book")
    inst = next(i for i in worlds.instances() if i.task_id == "book" and i.slots == traj["slots"])
    env = gymnasium.make(f"browsergym/{task_name(inst.id)}", headless=True, slow_mo=0,
                         pre_observation_delay=0,
                         pw_chromium_kwargs={"executable_path": chromium_path()},
                         action_mapping=HighLevelActionSet(["bid", "coord"]).to_python_code)
    try:
        obs, info = env.reset(seed=0)
        assert obs["goal"] in inst.intents
        page = env.unwrapped.page
        rewards = []
        for step in candidates[traj["id"]]["steps"]:
            for gui in step["gui"]:
                for gesture in gestures(lab.spec, step["page"], gui):
                    action = browsergym_action(page, gesture)
                    obs, reward, terminated, truncated, info = env.step(action)
                    assert not obs["last_action_error"], obs["last_action_error"]
                    rewards.append(reward)
        assert rewards[-1] == 1.0 and not any(rewards[:-1]) and terminated
        assert info["task_info"]["success"]
    finally:
        env.close()
        release_playwright()
    asyncio.run(asyncio.sleep(0))  # the process can run asyncio code again
