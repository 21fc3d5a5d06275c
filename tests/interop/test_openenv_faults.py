"""Faults at webworld's OpenEnv server, a real `webworld env serve` on loopback: clients that
leave mid-episode free their sessions (sessions back to zero, RSS flat), malformed, wrong-typed
and oversized messages are refused (a 4xx, or OpenEnv's error message on the WebSocket) and the
session goes on, never a 500, and a server killed mid-episode is one clear error in the client,
not a hang."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosedError

from tests.interop.conftest import EnvServer, env_server, wait_until
from webworld.interop.openenv import (
    EnvServerError,
    EnvServerGone,
    WebworldAction,
    WebworldClient,
    WebworldServerEnv,
)
from webworld.interop.openenv.server import MAX_BODY_BYTES, MAX_MESSAGE_BYTES


@pytest.fixture(scope="module")
def server(button_board: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EnvServer]:
    with env_server(button_board, tmp_path_factory.mktemp("serve")) as running:
        yield running
        assert "Traceback" not in running.stderr(), running.stderr()[-3000:]


async def come_and_go(url: str, cycles: int) -> None:
    """Sessions that each reset and step once, then leave: every other one by closing, the
    rest by vanishing (the connection dropped, no close)."""
    for k in range(cycles):
        env = WebworldClient(url)
        await env.connect()
        await env.reset(seed=k)
        await env.step("click('9')")
        if k % 2:
            await env.close()
        else:
            env._ws.transport.abort()
            env._ws = None


def leave_mid_episode(server: EnvServer, warm_up: int, cycles: int, rss_growth_kb: int) -> None:
    asyncio.run(come_and_go(server.url, warm_up))
    wait_until(lambda: server.sessions()["active"] == 0, "the warm-up's sessions were freed")
    before = server.rss_kb()
    asyncio.run(come_and_go(server.url, cycles))
    wait_until(lambda: server.sessions()["active"] == 0, "every session was freed")
    assert server.rss_kb() - before < rss_growth_kb, (before, server.rss_kb())
    counts = server.sessions()  # the pool holds as many episodes as were open at once, at most
    assert counts["episodes_held"] == 0 and counts["episodes_pooled"] <= 16, counts


def test_clients_that_leave_mid_episode_free_their_sessions(server: EnvServer) -> None:
    leave_mid_episode(server, warm_up=50, cycles=200, rss_growth_kb=8 * 1024)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 10,000 WebSocket sessions: over 600 s on a loaded 2-core machine
def test_ten_thousand_sessions_come_and_go_with_rss_flat(server: EnvServer) -> None:
    leave_mid_episode(server, warm_up=1000, cycles=10_000, rss_growth_kb=8 * 1024)


def test_bad_websocket_messages_are_refused_and_the_session_goes_on(server: EnvServer) -> None:
    async def talk() -> list[dict]:
        answers = []
        async with connect(f"{server.url.replace('http', 'ws')}/ws",
                           max_size=None) as ws:  # OpenEnv's protocol, by hand
            async def ask(text: str) -> dict:
                await ws.send(text)
                answers.append(json.loads(await ws.recv()))
                return answers[-1]
            assert (await ask(json.dumps({"type": "reset", "data": {}})))["type"] == "observation"
            for bad in ("{not json", json.dumps({"type": "fly"}),
                        json.dumps({"type": "step", "data": {"name": "click", "args": [None]}}),
                        json.dumps({"type": "step", "data": {"action": "click('1')",
                                                             "args": ["1"]}}),
                        json.dumps({"type": "step", "data": {"action": "x" * 70_000}}),
                        json.dumps({"type": "reset", "data": {"split": "holidays"}})):
                assert (await ask(bad))["type"] == "error"
            ok = await ask(json.dumps({"type": "step", "data": {"action": "click('77')"}}))
            assert ok["type"] == "observation" and ok["data"]["done"] is False
            await ws.send(json.dumps({"type": "step", "data": {"action": "x" * MAX_MESSAGE_BYTES}}))
            with pytest.raises(ConnectionClosedError) as closed:
                await ws.recv()
            assert closed.value.rcvd.code == 1009  # past the size limit: the connection closes
        return answers

    answers = asyncio.run(talk())
    codes = [a["data"].get("code") for a in answers if a["type"] == "error"]
    assert codes == ["INVALID_JSON", "UNKNOWN_TYPE", "VALIDATION_ERROR", "VALIDATION_ERROR",
                     "VALIDATION_ERROR", "EXECUTION_ERROR"], answers
    assert "bad reset options: split" in answers[-2]["data"]["message"]
    assert answers[-1]["data"]["observation"]["error_code"] == "unknown_id"
    wait_until(lambda: server.sessions()["active"] == 0, "the closed session was freed")
    with WebworldClient(server.url).sync() as env:  # and the server serves on
        assert env.reset(seed=0).observation.goal


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic, on sending the wrong-typed action
def test_through_the_client_a_bad_action_is_an_error_and_the_session_goes_on(
        server: EnvServer) -> None:
    with WebworldClient(server.url).sync() as env:
        env.reset(seed=0, max_steps=10)
        unknown = env.step(WebworldAction(name="scroll", args=["1", 2]))
        assert unknown.observation.error_code == "syntax" and not unknown.done
        assert "unknown action 'scroll'" in unknown.observation.last_action_error
        with pytest.raises(EnvServerError, match="VALIDATION_ERROR.*args.0") as refused:
            env.step(WebworldAction.model_construct(name="click", args=[{"element": "1"}]))
        assert refused.value.code == "VALIDATION_ERROR"
        typed = env.step(WebworldAction(name="click", args=[2]))  # a bare number is an id
        assert typed.observation.last_action == "click('2')" and typed.done
        assert env.state().step_count == 2


def test_bad_http_requests_are_4xx_never_500(server: EnvServer) -> None:
    with httpx.Client(base_url=server.url) as http:
        answers = {
            "malformed JSON": http.post("/step", content=b"{not json",
                                        headers={"content-type": "application/json"}),
            "wrong-typed args": http.post("/step", json={"action": {"name": "click",
                                                                    "args": [None]}}),
            "no action": http.post("/step", json={"action": {}}),
            "unknown task": http.post("/reset", json={"task": "nope"}),
            "unknown option": http.post("/reset", json={"observation": "pixels"}),
            "oversized": http.post("/step", content=b"x" * (MAX_BODY_BYTES + 1),
                                   headers={"content-type": "application/json"}),
        }
        statuses = {why: r.status_code for why, r in answers.items()}
        assert statuses == {"malformed JSON": 422, "wrong-typed args": 422, "no action": 422,
                            "unknown task": 400, "unknown option": 400, "oversized": 413}
        assert "no task instance 'nope'" in answers["unknown task"].json()["detail"]
        reset = http.post("/reset", json={"seed": 1})  # each HTTP call its own fresh env
        assert reset.status_code == 200 and reset.json()["observation"]["goal"]
        step = http.post("/step", json={"action": {"action": "click('1')"}})
        assert step.json()["observation"]["error_code"] == "ended"  # no episode on plain HTTP


def test_a_server_killed_mid_episode_is_one_clear_error(button_board: Path,
                                                        tmp_path: Path) -> None:
    with env_server(button_board, tmp_path, "--max-sessions", "1") as doomed:
        env = WebworldClient(doomed.url).sync()
        env.connect()
        env.reset(seed=0, max_steps=10)
        # one session at most: the next is refused, as its error or (when the close that
        # follows the error comes first) as the closed session
        with pytest.raises((EnvServerError, EnvServerGone)) as full:
            with WebworldClient(doomed.url).sync() as other:
                other.reset(seed=0)
        assert getattr(full.value, "code", "CAPACITY_REACHED") == "CAPACITY_REACHED"
        assert doomed.sessions()["active"] == 1
        tools = WebworldServerEnv(doomed.url)
        assert env.step("click('9')").observation.error_code == "unknown_id"
        os.killpg(doomed.proc.pid, signal.SIGKILL)
        doomed.proc.wait()
        with pytest.raises(EnvServerGone, match=f"env server at ws://.*{doomed.url[7:]}"):
            env.step("click('1')")
        with pytest.raises(EnvServerGone, match="cannot reach the env server"):
            env.reset(seed=0)  # a new connection: nobody listens
        with pytest.raises(EnvServerGone):
            tools.reset()
        env.close()
        tools._close()
