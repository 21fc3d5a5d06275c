"""Which Ray clusters webworld joins, and with what: a cluster it starts gets a token; joining
takes the cluster's; an address outside loopback without a token is refused unless the user
says --ray-insecure. (The cluster itself refusing a client without the token is
tests/scale/test_ray_cluster.py, in a loopback-only namespace.)"""

from __future__ import annotations

import os

import pytest

from webworld.errors import UsageError
from webworld.scale import cluster


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path):
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS",
                 cluster.INSECURE_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cluster, "DEFAULT_TOKEN", tmp_path / "no-token-here")
    return monkeypatch


def test_a_cluster_webworld_starts_has_a_token_of_its_own(env) -> None:
    cluster.authenticate("local")
    first = os.environ["RAY_AUTH_TOKEN"]
    assert os.environ["RAY_AUTH_MODE"] == "token" and len(first) == 64
    env.setenv("RAY_AUTH_TOKEN", "given")
    cluster.authenticate("local")
    assert os.environ["RAY_AUTH_TOKEN"] == "given"  # the user's own is kept


def test_joining_takes_the_cluster_s_token(env, tmp_path) -> None:
    env.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "token"))
    cluster.authenticate("10.0.0.7:6379")
    assert os.environ["RAY_AUTH_MODE"] == "token"


def test_a_remote_cluster_without_a_token_is_refused_unless_insecure(env) -> None:
    with pytest.raises(UsageError, match="RAY_AUTH_TOKEN.*--ray-insecure"):
        cluster.authenticate("10.0.0.7:6379")
    env.setenv("RAY_ADDRESS", "192.168.1.4:6379")
    with pytest.raises(UsageError, match="without its token"):
        cluster.authenticate("auto")
    cluster.authenticate("127.0.0.1:6379")  # loopback: this machine's own cluster
    env.setenv(cluster.INSECURE_ENV, "1")
    cluster.authenticate("10.0.0.7:6379")
    assert os.environ["RAY_AUTH_MODE"] == "disabled"


def test_the_flag_is_on_every_command_that_joins_a_cluster() -> None:
    from typer.testing import CliRunner

    from webworld.cli.main import app

    runner = CliRunner()
    for command in (["verify"], ["build"], ["eval"], ["train", "rl"]):
        shown = runner.invoke(app, [*command, "--help"], terminal_width=200).output
        assert "--ray-insecure" in shown, command
