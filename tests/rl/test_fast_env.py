"""The fast environment: the live env's bytes, without a browser in the step loop."""

from __future__ import annotations

import json
import shutil

import pytest
from gymnasium.utils.env_checker import check_env

from tests.rl.conftest import Built
from webworld.errors import UsageError, WebworldError
from webworld.render.site import load_site
from webworld.rl.fast.capture import build_snapshot, load_snapshot
from webworld.rl.fast.env import FastEnv, FastVectorEnv
from webworld.rl.live import LiveEnv
from webworld.rl.parity import compare
from webworld.rl.policies import RandomPolicy
from webworld.rl.tasks import load_worlds


def parity(built: Built, random_episodes: int, observation: str = "full",
           reward: str = "success", named_rate: float = 0.0) -> int:
    """Assert the live and fast envs agree; the number of steps that acted by role and name."""
    worlds = built.worlds()
    settings = {"observation": observation, "max_steps": 40, "reward": reward}  # long walks
    live = LiveEnv(worlds, split=None, **settings)
    fast = FastEnv(worlds, split=None, build=False, **settings)
    try:
        report = compare(live, fast, worlds.instances(), random_episodes=random_episodes, seed=3,
                         named_rate=named_rate)
    finally:
        live.close()
    assert report.ok, "\n".join(map(str, report.mismatches[:3] + report.oracle_failures[:3]))
    trajectories = sum(len(i.oracle) for i in worlds.instances())
    assert report.episodes == trajectories + random_episodes
    assert report.steps > 10 * random_episodes
    return report.named_steps


@pytest.mark.parametrize("random_episodes", [10, pytest.param(80, marks=pytest.mark.slow)])
def test_same_bytes_as_the_live_env_on_every_widget(lab: Built, random_episodes: int) -> None:
    """Every verified trajectory, and random actions (broken ones included) from deep in
    the flows: tabs and calendar days that pick, a mirrored field, a typed date sent with
    Enter, hover and click menus, a slider, a checkbox, a blocking dialog."""
    parity(lab, random_episodes=random_episodes)


def test_actions_by_role_and_name_act_the_same_in_both_envs(lab: Built) -> None:
    """Half the actions name their element (``click(button "Pay")``) where the page has one
    such element: the verified paths still succeed, and both envs give the same bytes."""
    assert parity(lab, random_episodes=4, named_rate=0.5) > 10


def test_same_bytes_and_progress_rewards_as_the_live_env_on_a_shipped_world(flight: Built
                                                                           ) -> None:
    """The bytes, and the progress rewards from the server's true state (live) and from the
    fast model; on every verified path they add up to its start's distance plus the success."""
    parity(flight, random_episodes=8, observation="compact", reward="progress")


def test_progress_rewards_follow_the_distance_to_the_goal(flight: Built) -> None:
    """Phi = -(FSM actions to the goal): 0 at the goal, one higher after each FSM action of a
    shortest verified path; a move away from the goal is paid back as a negative reward, so
    detours earn nothing (Ng, Harada and Russell's shaping)."""
    env = FastEnv(flight.worlds(), split=None, build=False, reward="progress")
    inst = next(i for i in env.sampler.instances if i.oracle)
    obs, info = env.reset(seed=0, options={"task": inst})
    assert info["potential"] == -info["distance"] == -inst.shortest_length
    rewards = []
    for action in inst.oracle[0]:
        before = info["potential"]
        obs, reward, terminated, truncated, info = env.step(action)
        assert info["progress"] == info["potential"] - before
        assert info["progress"] in (0.0, 1.0)  # a shortest path never moves away
        rewards.append(reward)
    assert terminated and info["success"] and info["potential"] == 0.0
    assert rewards[-1] == 2.0  # the last FSM action and the success
    assert sum(rewards) == inst.shortest_length + 1
    # random actions from halfway along the path: some move away and pay for it
    policy, paid = RandomPolicy(seed=1), []
    obs, info = env.reset(seed=0, options={"task": inst})
    for action in inst.oracle[0][:len(inst.oracle[0]) // 2]:
        obs, _, _, _, info = env.step(action)
    for _ in range(40):
        before = info["potential"]
        obs, reward, terminated, truncated, info = env.step(policy.act(obs, info))
        assert reward == float(info["success"]) + info["potential"] - before
        paid.append(reward)
        if terminated or truncated:
            obs, info = env.reset(seed=0, options={"task": inst})
    assert min(paid) < 0


def test_check_env_and_the_vector_form(lab: Built) -> None:
    env = FastEnv(lab.worlds(), split=None, build=False)
    check_env(env, skip_render_check=True)
    envs = FastVectorEnv(4, lab.worlds(), split=None, build=False, autoreset_mode="SameStep")
    obs, infos = envs.reset(seed=2)
    paths = [envs.worlds.instance(i).oracle[0] for i in infos["instance"]]
    ended = [False] * 4
    for k in range(max(map(len, paths))):
        actions = [p[k] if k < len(p) else "press('1', 'Escape')" for p in paths]
        obs, rewards, terms, truncs, infos = envs.step(actions)
        for i, p in enumerate(paths):
            if k == len(p) - 1 and not ended[i]:
                assert rewards[i] == 1.0 and terms[i]
                # same-step autoreset: the last observation of the episode is in info
                assert infos["final_obs"][i]["last_action"] == p[-1]
                assert infos["step"][i] == 0
                ended[i] = True
    assert all(ended)


def test_envs_of_one_world_set_share_its_snapshots_and_keep_their_own_episodes(
        lab: Built) -> None:
    worlds = lab.worlds()
    first, second = (FastEnv(worlds, split=None, build=False) for _ in range(2))
    loaded = [list(env.episode.page.worlds.values()) for env in (first, second)]
    assert loaded[0] and all(a is b for a, b in zip(*loaded, strict=True))  # not one per slot
    other = FastEnv(lab.worlds(), split=None, build=False)  # loaded again: its own
    assert not set(map(id, other.episode.page.worlds.values())) & set(map(id, loaded[0]))
    obs, info = first.reset(seed=3)
    assert second.reset(seed=3)[0] == obs
    path = worlds.instance(info["instance"]).oracle[0]
    stepped = first.step(path[0])[0]
    assert stepped != obs
    assert second.step("press('1', 'Escape')")[0] != stepped  # its own page, not the first's


def test_screenshots_and_sites_it_cannot_reproduce_are_refused(lab: Built, tmp_path) -> None:
    with pytest.raises(UsageError, match="no screenshots"):
        FastEnv(lab.worlds(), split=None, screenshot=True)
    copy = tmp_path / "sites" / "widget_lab"
    shutil.copytree(lab.site_dir, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    (copy / "manifest.json").write_text(json.dumps({**manifest, "generator": "someone/1"}))
    with pytest.raises(WebworldError, match="built-in renderer"):
        build_snapshot(load_site(copy))


def test_a_changed_site_needs_a_new_snapshot(lab: Built, tmp_path) -> None:
    copy = tmp_path / "sites" / "widget_lab"
    shutil.copytree(lab.site_dir, copy)
    assert load_snapshot(load_site(copy)) is not None
    css = copy / "static" / "theme.css"
    css.write_text(css.read_text() + "\n.x { color: red; }\n")
    assert load_snapshot(load_site(copy)) is None
    worlds = load_worlds(tmp_path / "sites", lab.trajectories)
    with pytest.raises(UsageError, match="webworld env snapshot"):
        FastEnv(worlds, split=None, build=False)


def test_a_state_space_over_budget_is_refused(lab: Built) -> None:
    with pytest.raises(WebworldError, match="raise --state-budget"):
        build_snapshot(load_site(lab.site_dir), state_budget=5)
