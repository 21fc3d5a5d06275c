"""The live environment: real Chromium, real servers on loopback, truth behind the token."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import webworld.rl  # noqa: F401  (registers the ids)
from tests.rl.conftest import Built
from webworld.browser.observe import compact_text
from webworld.data.export import export_dataset
from webworld.data.prompting import parse_reply
from webworld.rl import register_worlds
from webworld.rl.live import LiveEnv, LiveVectorEnv, ServerGone
from webworld.rl.policies import page_elements
from webworld.rl.turn import Turn


@pytest.fixture
def env(lab: Built):
    made = LiveEnv(lab.worlds(), split=None)
    yield made
    made.close()


def instance(env, task: str):
    return next(i for i in env.sampler.instances if i.task_id == task)


def test_verified_trajectories_earn_one_at_the_last_step_and_zero_before(env, lab: Built) -> None:
    played = 0
    for inst in env.sampler.instances:
        for path in inst.oracle:
            obs, info = env.reset(seed=0, options={"task": inst})
            assert info["instance"] == inst.id and info["slots"] == inst.slots
            assert info["shortest_steps"] == inst.shortest_steps and obs["goal"] in inst.intents
            assert obs["url"].startswith("https://widget-lab.webworld.test/page/")
            distances = [info["distance"]]
            for k, action in enumerate(path):
                obs, reward, terminated, truncated, info = env.step(action)
                assert obs["last_action"] == action and obs["last_action_error"] == ""
                last = k == len(path) - 1
                assert (reward, terminated, truncated) == ((1.0, True, False) if last
                                                           else (0.0, False, False))
                distances.append(info["distance"])
            assert distances[0] == inst.shortest_length and distances[-1] == 0
            assert info["success"] and info["history"] == list(path)
            with pytest.raises(Exception, match="call reset"):
                env.step(path[0])
            played += 1
    assert played == sum(len(i.oracle) for i in env.sampler.instances) >= 8


def test_every_failure_mode_is_a_step_with_an_error_and_the_state_unchanged(env) -> None:
    obs, _ = env.reset(seed=0, options={"task": instance(env, "book")})
    state = env.episode.state
    bids = {e.name: e.bid for e in page_elements(obs["axtree"])}
    cases = {
        "syntax": "clik('1')",
        "unknown_id": "click('999')",
        "wrong_element": f"fill('{bids['Book now']}', 'x')",
        "bad_value": f"press('{bids['Full name']}', 'Tab')",
    }
    for code, action in cases.items():
        after, reward, terminated, truncated, info = env.step(action)
        assert info["error_code"] == code and after["last_action_error"], (code, after)
        assert after["axtree"] == obs["axtree"] and env.episode.state == state
        assert (reward, terminated, truncated) == (0.0, False, False)
    # an element behind a blocking dialog
    env.step(f"click('{bids['Help']}')")
    covered, _, _, _, info = env.step(f"click('{bids['Book now']}')")
    assert info["error_code"] == "covered"
    assert "is covered by dialog 'How booking works'" in covered["last_action_error"]
    assert env.episode.state.page == "home"


def test_a_wrong_success_page_ends_the_episode_with_nothing(env) -> None:
    env.reset(seed=0, options={"task": instance(env, "book")})
    browse = instance(env, "browse").oracle[0]
    for action in browse:
        obs, reward, terminated, truncated, info = env.step(action)
    assert (reward, terminated, truncated) == (0.0, True, False) and not info["success"]


def test_truncated_at_twice_the_shortest_path(env) -> None:
    obs, info = env.reset(seed=1, options={"task": instance(env, "arrive")})
    assert info["max_steps"] == 2 * info["shortest_steps"]
    for k in range(info["max_steps"]):
        obs, reward, terminated, truncated, info = env.step("press('1', 'Escape')")
        assert truncated == (k == info["max_steps"] - 1) and not terminated


def test_check_env_and_registered_ids(lab: Built) -> None:
    env = LiveEnv(lab.worlds(), split=None)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()
    ids = register_worlds(lab.sites, lab.trajectories)
    assert ids == ["webworld/widget_lab-v0", "webworld/widget_lab-fast-v0"]
    made = gymnasium.make("webworld/Live-v0", sites=str(lab.sites),
                          trajectories=str(lab.trajectories), split=None, observation="compact")
    try:
        obs, info = made.reset(seed=3)
        assert info["world"] == "widget_lab" and "banner" not in obs["axtree"]
    finally:
        made.close()


def test_screenshots_and_the_compact_mode(lab: Built) -> None:
    full = LiveEnv(lab.worlds(), split=None, screenshot=True, render_mode="rgb_array")
    compact = LiveEnv(lab.worlds(), split=None, observation="compact")
    try:
        a, _ = full.reset(seed=7)
        b, _ = compact.reset(seed=7)
        assert a["screenshot"].shape == (800, 1280, 3) and a["screenshot"].dtype == np.uint8
        assert a["screenshot"].std() > 10  # a page, not a blank frame
        assert full.observation_space.contains(a)
        assert b["axtree"] == compact_text(a["axtree"])
        assert len(b["axtree"]) < 0.6 * len(a["axtree"])
        assert full.render().shape == (800, 1280, 3)
    finally:
        full.close()
        compact.close()


@pytest.mark.parametrize("actions", ["named", "ids"])
def test_the_env_shows_what_the_dataset_shows(lab: Built, tmp_path, actions: str) -> None:
    """SFT prompts of the export (compact mode) == the env's prompt at every step, acting as
    the export's replies do (by role and name, or by id)."""
    export_dataset(lab.trajectories, tmp_path / "ds", formats={"sft"}, splits=(1.0, 0.0, 0.0),
                   observation="compact", actions=actions, progress=False)
    chats = [json.loads(line) for line in (tmp_path / "ds" / "sft" / "train.jsonl").open()]
    verified = [json.loads(line) for line in
                (lab.trajectories / "widget_lab" / "verified.jsonl").open()]
    env = LiveEnv(lab.worlds(), split=None, observation="compact")
    try:
        for traj in verified[:4]:
            inst = next(i for i in env.sampler.instances
                        if i.task_id == traj["task_id"] and i.slots == traj["slots"])
            turn = Turn(*env.reset(seed=0, options={"task": inst, "intent": traj["intent"]}))
            steps = [c for c in chats if c["trajectory_id"] == traj["id"]]
            for chat, step in zip(steps, traj["steps"]):
                assert turn.messages() == chat["messages"][:2]  # the labelled history too
                reply = parse_reply(chat["messages"][2]["content"])
                assert reply == (step["action"] if actions == "ids" else chat["action_named"])
                obs, _, _, _, info = env.step(reply)
                assert not obs["last_action_error"], obs["last_action_error"]
                turn = turn.after(obs, info)
            assert len(turn.history) == len(traj["steps"])
    finally:
        env.close()


def test_the_env_shows_the_dataset_s_pixels(lab: Built, tmp_path) -> None:
    """The env's screenshot == the exported screenshot, pixel for pixel, at every step
    (one capture function, webworld.browser.capture, and a lossless export)."""
    from PIL import Image

    export_dataset(lab.trajectories, tmp_path / "ds", formats={"jsonl"}, splits=(1.0, 0.0, 0.0),
                   progress=False)
    exported = [json.loads(line) for line in (tmp_path / "ds" / "jsonl" / "train.jsonl").open()]
    env = LiveEnv(lab.worlds(), split=None, screenshot=True)
    compared = 0
    try:
        for traj in exported[:3]:
            inst = next(i for i in env.sampler.instances
                        if i.task_id == traj["task_id"] and i.slots == traj["slots"])
            obs, _ = env.reset(seed=0, options={"task": inst, "intent": traj["intent"]})
            for step in traj["steps"]:
                with Image.open(tmp_path / "ds" / step["observation"]["screenshot"]) as image:
                    shown = np.asarray(image.convert("RGB"))
                assert np.array_equal(obs["screenshot"], shown), step["action"]
                compared += 1
                obs, *_ = env.step(step["action"])
    finally:
        env.close()
    assert compared >= 3


def test_vector_env_steps_pages_at_once_and_resets_them(lab: Built) -> None:
    worlds = lab.worlds()
    envs = LiveVectorEnv(3, worlds, split=None)
    try:
        obs, infos = envs.reset(seed=11)
        assert len(obs["axtree"]) == 3 and set(infos["world"]) == {"widget_lab"}
        assert envs.observation_space.contains(obs)
        book = next(i for i in worlds.instances() if i.task_id == "book")
        obs, infos = envs.reset(seed=11, options={"task": book})
        path = book.oracle[0]
        for k, action in enumerate(path):
            obs, rewards, terms, truncs, infos = envs.step([action] * 3)
            assert list(rewards) == [float(k == len(path) - 1)] * 3
            assert list(terms) == [k == len(path) - 1] * 3 and not truncs.any()
        # next-step autoreset: the ended episodes start again, with reward 0
        obs, rewards, terms, truncs, infos = envs.step(["press('1', 'Escape')"] * 3)
        assert list(infos["step"]) == [0, 0, 0] and not rewards.any() and not terms.any()
        assert all(o.endswith("/page/home") for o in obs["url"])
    finally:
        envs.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_listening(port: int, server: subprocess.Popen, within_s: float = 60) -> None:
    """Poll the port until the server accepts (it prints no line once it does)."""
    deadline = time.monotonic() + within_s  # a hang guard
    while True:
        assert server.poll() is None, server.communicate()[0]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)


def test_a_server_killed_under_the_env_is_a_clear_error(lab: Built) -> None:
    """(How soon it says so, against a step: bench/bench_waits.py.)"""
    token, port = "kill-me", free_port()
    server = subprocess.Popen([sys.executable, "-m", "webworld.cli.main", "serve",
                               str(lab.site_dir), "--port", str(port), "--token", token],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    env = None
    try:
        wait_until_listening(port, server)
        env = LiveEnv(lab.worlds(), split=None, server_url=f"http://127.0.0.1:{port}",
                      token=token, navigation_timeout_ms=5000)
        env.reset(seed=0, options={"task": instance(env, "browse")})
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        with pytest.raises(ServerGone, match=f"127.0.0.1:{port}"):
            for action in instance(env, "browse").oracle[0]:
                env.step(action)
        with pytest.raises(ServerGone, match="not answering"):
            env.reset(seed=1)
    finally:
        server.kill()
        server.communicate()
        if env is not None:
            env.close()


def test_a_truth_request_the_server_dropped_unanswered_goes_again_on_a_new_connection() -> None:
    """The race of a loaded machine: the server closes a pooled connection as idle just as the
    client sends on it. Here its first connection is closed unanswered; the second answers."""
    import asyncio

    import httpx

    from webworld.rl.live import truth_request

    async def scenario() -> tuple[int, str, int]:
        connections = 0

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            await reader.readuntil(b"\r\n\r\n")
            if connections > 1:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/__truth/state"
        async with server, httpx.AsyncClient() as client:
            response = await truth_request(client, "get", url, params={"session": "s"},
                                           headers={})
            return response.status_code, response.text, connections

    assert asyncio.run(scenario()) == (200, "{}", 2)


def test_the_servers_keep_an_idle_connection_longer_than_the_client_pool_does() -> None:
    """So the client drops an idle connection first and never reuses one being closed."""
    import httpx
    from fastapi import FastAPI

    from webworld.serve.runner import LiveServer

    pool = httpx.Limits().keepalive_expiry  # the default the env's client keeps
    server = LiveServer(FastAPI())
    try:
        assert server.server.config.timeout_keep_alive > pool
    finally:
        server.sock.close()
