"""TRL through OpenEnv: examples/trl_openenv.py trains ``tiny`` with GRPOTrainer for two optimiser
steps against a real `webworld env serve` on loopback, every rollout a session of OpenEnv's
client; each reward TRL logs is the server's for the same actions (replayed on the server, and in
the in-process env). The tools through the server say what the in-process tools say."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from tests.interop.conftest import ROOT, EnvServer, env_server, wait_until
from webworld.interop.openenv import WebworldClient, WebworldServerEnv
from webworld.interop.trl import ENDED, environment_factory, task_dataset
from webworld.rl.fast.env import FastEnv
from webworld.rl.tasks import load_worlds


@pytest.fixture(scope="module")
def server(button_board: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EnvServer]:
    with env_server(button_board, tmp_path_factory.mktemp("serve"), "--split", "all") as running:
        yield running


@pytest.mark.timeout(1800)  # the shared tool-format warm start: see tests/interop/test_trl.py
def test_trl_trains_through_the_openenv_client_on_the_server_s_rewards(
        server: EnvServer, button_board: Path, tools_start: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import trl_openenv

    scored: list[tuple[str, list[str], float]] = []  # every rollout TRL scored, in order
    reward_of = WebworldServerEnv.get_reward

    def get_reward(self: WebworldServerEnv) -> float:
        value = reward_of(self)
        scored.append((self.played.instance, list(self.played.actions), value))
        return value

    monkeypatch.setattr(WebworldServerEnv, "get_reward", get_reward)
    torch.manual_seed(0)
    run = trl_openenv.main(["--url", server.url, "--worlds", str(button_board),
                            "--model", str(tools_start), "--work", str(tmp_path),
                            "--steps", "2", "--generations", "4"])
    steps = [r for r in run["log"] if "reward" in r]
    assert [r["step"] for r in steps] == [1, 2] and run["trainer"].state.global_step == 2
    assert sum(r["tools/call_frequency"] for r in steps) > 0  # the policy did act
    # TRL's logged reward is the mean of the server's episode rewards, step by step ...
    assert len(scored) == 8
    for k, row in enumerate(steps):
        mine = [reward for _, _, reward in scored[4 * k:4 * k + 4]]
        assert row["rewards/WebworldServerEnv/mean"] == pytest.approx(statistics.fmean(mine))
    # ... each what the server gives for the same actions again, and the in-process env too
    local = FastEnv(load_worlds(button_board / "sites", button_board / "trajectories"),
                    split=None, build=False, observation="compact")
    with WebworldClient(server.url).sync() as env:
        for instance, actions, reward in scored:
            env.reset(task=instance)
            local.reset(seed=0, options={"task": instance})
            assert sum(env.step(action).reward for action in actions) == reward, actions
            assert sum(local.step(action)[1] for action in actions) == reward, actions
    wait_until(lambda: server.sessions()["active"] == 0, "the trainer's sessions were closed")


def test_the_tools_through_the_server_say_what_the_local_tools_say(server: EnvServer,
                                                                   button_board: Path) -> None:
    row = task_dataset(button_board, split=None)[0]
    local = environment_factory(button_board, split=None, max_steps=50)()
    with WebworldServerEnv(server.url, max_steps=50) as remote:
        page = remote.reset(row["instance"], row["intent"])
        assert page == local.reset(row["instance"], row["intent"]) and "button" in page
        for name, args in (("click", ("999",)), ("click", (12345,)), ("fill", ("1", None)),
                           ("press", ("1", "Tab")), ("drag", ("1", "a lot")),
                           ("select_option", ("1", {"not": "text"})), ("check", ("1",))):
            text = getattr(remote, name)(*args)
            assert text == getattr(local, name)(*args) and text.startswith("Last action failed:")
        assert remote.get_reward() == local.get_reward() == 0.0
        finished = remote.click("1")  # any button ends the board
        assert finished == local.click("1") and finished.endswith(ENDED)
        assert remote.click("1") == ENDED  # after the end nothing is sent
        assert remote.played.actions == local.played.actions
