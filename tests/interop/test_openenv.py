"""webworld as an OpenEnv environment: `webworld env serve` as a real process on loopback, driven
through OpenEnv's own client code (``EnvClient``, here :class:`WebworldClient`) and its HTTP
routes. The schema names the action language; an oracle episode ends with reward 1 from server
truth; an action the env refuses is the env's own error, byte for byte what the in-process env
says; the state never carries the server's state; the token is required when set, and off
loopback the server refuses to start without one."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.interop.conftest import ROOT, EnvServer, env_server, serve_command
from webworld.browser.actions import parse_action
from webworld.errors import UsageError
from webworld.interop.openenv import (
    EnvServerError,
    WebworldAction,
    WebworldClient,
    WebworldObservation,
    WebworldState,
)
from webworld.interop.openenv.models import ACTION_ARGS
from webworld.interop.trl import ENDED, world_folder
from webworld.rl.fast.env import FastEnv
from webworld.rl.tasks import WorldSet

TOKEN = "conformance-token"


@pytest.fixture(scope="module")
def server(button_board: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EnvServer]:
    with env_server(button_board, tmp_path_factory.mktemp("serve"), token=TOKEN) as running:
        yield running
        assert running.stop() == 130, running.stderr()[-3000:]  # Ctrl-C ends it with 130
        assert "Traceback" not in running.stderr(), running.stderr()[-3000:]


@pytest.fixture(scope="module")
def worlds(button_board: Path) -> WorldSet:
    return world_folder(button_board.resolve())


@pytest.fixture(scope="module")
def local(worlds: WorldSet) -> FastEnv:
    """The in-process fast env on the same worlds: what the server must agree with."""
    return FastEnv(worlds, split=None, build=False, observation="compact")


def client(server: EnvServer) -> WebworldClient:
    return WebworldClient(server.url, token=server.token)


def test_the_schema_is_webworld_s_typed_messages(server: EnvServer) -> None:
    schema = httpx.get(f"{server.url}/schema", headers=server.headers).json()
    assert schema["action"]["actions"] == {name: list(args) for name, args in ACTION_ARGS.items()}
    assert schema["action"] == WebworldAction.model_json_schema()
    assert schema["observation"] == WebworldObservation.model_json_schema()
    assert {"goal", "url", "axtree", "last_action_error", "error_code", "reward", "done"} <= \
        set(schema["observation"]["properties"])
    metadata = httpx.get(f"{server.url}/metadata", headers=server.headers).json()
    assert metadata["name"] == "webworld"


def test_an_oracle_episode_ends_with_reward_1_from_server_truth(server: EnvServer,
                                                                worlds: WorldSet,
                                                                local: FastEnv) -> None:
    with client(server).sync() as env:
        for inst in worlds.instances():
            first = env.reset(task=inst.id)
            local_obs, _ = local.reset(seed=0, options={"task": inst.id})
            assert first.observation.goal in inst.intents and not first.done
            assert first.observation.axtree == local_obs["axtree"]  # the env's very page text
            assert first.observation.url == local_obs["url"]
            for n, action in enumerate(inst.oracle[0], 1):
                parsed = parse_action(action)  # the typed form: name and arguments
                result = env.step(WebworldAction(name=parsed.name, args=list(parsed.args)))
                assert result.observation.last_action_error == ""
            assert (result.reward, result.done, result.observation.success) == (1.0, True, True)
            state = env.state()
            assert isinstance(state, WebworldState)
            assert (state.world, state.task, state.instance, state.step_count, state.done) == \
                (inst.world_id, inst.task_id, inst.id, n, True)
            assert state.episode_id and state.intent == first.observation.goal
            # the state says which episode, never the server's state (page, variables, slots)
            assert set(state.model_dump()) == {"episode_id", "step_count", "world", "task",
                                               "instance", "intent", "split", "max_steps", "done"}
            after = env.step("click('1')")  # the episode is over: nothing is carried out
            assert (after.observation.error_code, after.observation.last_action_error,
                    after.reward, after.done) == ("ended", ENDED, 0.0, True)


def test_a_reset_chooses_the_page_text_and_the_reward(server: EnvServer, worlds: WorldSet) -> None:
    inst = worlds.instances()[0]
    full = FastEnv(worlds, split=None, build=False, observation="full", reward="progress")
    local_obs, _ = full.reset(seed=0, options={"task": inst.id})
    local_return = sum(full.step(action)[1] for action in inst.oracle[0])
    with client(server).sync() as env:
        first = env.reset(task=inst.id, observation="full", reward="progress", episode_id="e-7")
        assert first.observation.axtree == local_obs["axtree"]
        returned = sum(env.step(action).reward for action in inst.oracle[0])
        assert returned == local_return > 1.0  # success plus the shaping, as the env gives it
        assert env.state().episode_id == "e-7"
        with pytest.raises(EnvServerError, match="no task instance 'nope'") as refused:
            env.reset(task="nope")
        assert refused.value.code == "EXECUTION_ERROR"
        assert env.reset(seed=3).observation.goal in inst.intents  # the session goes on


def test_a_wrong_action_gets_the_env_s_own_error(server: EnvServer, worlds: WorldSet) -> None:
    inst = worlds.instances()[0]
    local = FastEnv(worlds, split=None, build=False, observation="compact", max_steps=50)
    wrong = [WebworldAction(action="click('99')"),                 # no such element
             WebworldAction(name="press", args=["1", "Tab"]),      # a key it does not take
             WebworldAction(name="fill", args=["1", "tea"]),       # a button is no text field
             WebworldAction(name="scroll", args=["1"]),            # not an action of the language
             WebworldAction(name="click", args=[]),                # its argument missing
             WebworldAction(action="Thought: hmm.\nAction: click(two)")]
    with client(server).sync() as env:
        env.reset(task=inst.id, max_steps=50)
        local.reset(seed=0, options={"task": inst.id})
        for action in wrong:
            result = env.step(action)
            obs, reward, terminated, truncated, info = local.step(action.text())
            assert result.observation.last_action_error == obs["last_action_error"] != ""
            assert result.observation.error_code == info["error_code"] != ""
            assert result.observation.last_action == obs["last_action"]
            assert (result.reward, result.done) == (reward, False) == (0.0, terminated)
        right = parse_action(inst.oracle[0][-1]).bid
        other = next(b for b in ("1", "2", "3", "4") if b != right)
        result = env.step(f"click('{other}')")  # a wrong button ends the board: no reward
        assert (result.reward, result.done, result.observation.success) == (0.0, True, False)
        assert env.state().step_count == len(wrong) + 1


def test_the_token_is_required_when_the_server_has_one(server: EnvServer) -> None:
    with pytest.raises(EnvServerError, match="needs a token") as refused:
        with WebworldClient(server.url).sync():
            pass
    assert refused.value.code == "UNAUTHORIZED"
    with pytest.raises(EnvServerError, match="refused the token"):
        with WebworldClient(server.url, token="not-it").sync():
            pass
    assert httpx.post(f"{server.url}/reset", json={}).status_code == 401
    assert httpx.get(f"{server.url}/health").status_code == 200  # a container's health check


def test_a_factory_over_several_servers_spreads_its_sessions(server: EnvServer, button_board: Path,
                                                              tmp_path: Path) -> None:
    """Past one process: the factory takes a list of servers in turn, each session on its own."""
    from webworld.interop.openenv import environment_factory

    with env_server(button_board, tmp_path, token=TOKEN) as second:
        make = environment_factory([server.url, second.url], token=TOKEN)
        envs = [make() for _ in range(4)]
        try:
            assert [env.url for env in envs] == [server.url, second.url] * 2
            for env in envs:
                assert "URL: " in env.reset()
            assert second.sessions()["active"] == 2
        finally:
            for env in envs:
                env._close()
    with pytest.raises(UsageError, match="at least one env server"):
        environment_factory([])


def test_off_loopback_it_will_not_start_without_a_token(button_board: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "WEBWORLD_ENV_TOKEN"}
    done = subprocess.run(serve_command(button_board, "--host", "0.0.0.0", "--port", "0"),
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "listening" not in done.stdout
    assert done.stderr.strip().splitlines() == [
        "error: refusing to serve on 0.0.0.0 without a token: pass --token (or set "
        "WEBWORLD_ENV_TOKEN); clients send 'Authorization: Bearer <token>'"]
