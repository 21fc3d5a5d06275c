"""`webworld env` from the terminal: list, play (by hand or by a policy), snapshot, parity,
check, and clear errors for bad input."""

from __future__ import annotations

from typer.testing import CliRunner

from tests.rl.conftest import Built
from webworld.cli.main import app

runner = CliRunner()


def run(built: Built | None, *args: str, input: str | None = None):
    where = ["--sites", str(built.sites), "--trajectories", str(built.trajectories)] if built else []
    return runner.invoke(app, ["env", *args, *where], input=input, catch_exceptions=False)


def test_list_worlds_and_miniwob(lab: Built) -> None:
    result = run(lab, "list")
    assert result.exit_code == 0, result.output
    for task in ("book", "browse", "sort", "arrive"):
        assert task in result.output
    assert "navigate" in result.output  # how the site moves between pages
    assert "instances by split" in result.output
    miniwob = run(None, "list", "--miniwob")
    assert "miniwob:click-button" in miniwob.output and "130 MiniWoB++ tasks" in miniwob.output


def test_play_with_the_oracle_the_random_policy_and_by_hand(lab: Built) -> None:
    oracle = run(lab, "play", "widget_lab", "--task", "widget_lab/book", "--policy", "oracle")
    assert oracle.exit_code == 0, oracle.output
    assert "episode over: return 1" in oracle.output and "success" in oracle.output
    # the task id as `env list` shows it
    listed = run(lab, "play", "widget_lab", "--fast", "--task", "book", "--policy", "oracle")
    assert listed.exit_code == 0 and "episode over: return 1" in listed.output, listed.output
    fast = run(lab, "play", "widget_lab", "--fast", "--policy", "random", "--episodes", "2",
               "--observation", "compact")
    assert fast.exit_code == 0 and fast.output.count("episode over") == 2
    by_hand = run(lab, "play", "widget_lab", "--fast", input="clik('1')\nq\n")
    assert by_hand.exit_code == 0 and "unknown action 'clik'" in by_hand.output
    miniwob = run(None, "play", "miniwob:click-button", "--policy", "random", "--max-steps", "3")
    assert miniwob.exit_code == 0 and "episode over" in miniwob.output


def test_snapshot_parity_and_check(lab: Built) -> None:
    snapshot = runner.invoke(app, ["env", "snapshot", "--sites", str(lab.sites)])
    assert snapshot.exit_code == 0 and "widget_lab: snapshot up to date" in snapshot.output
    parity = run(lab, "parity", "widget_lab", "--random", "3")
    assert parity.exit_code == 0, parity.output
    assert "0 mismatches, 0 oracle failures" in parity.output
    check = run(lab, "check", "widget_lab", "--fast")
    assert check.exit_code == 0 and "check_env passed" in check.output


def test_bad_input_is_one_clear_line(lab: Built) -> None:
    for args, message in [
        (("play", "nowhere"), "no site for world(s) nowhere"),
        (("play", "miniwob:click-buttn"), "no MiniWoB++ task 'click-buttn'"),
        (("play", "widget_lab", "--fast", "--policy", "smart"), "unknown policy 'smart'"),
        (("play", "widget_lab", "--fast", "--observation", "tiny"), "observation: Input should be"),
        (("play", "widget_lab", "--fast", "--task", "nope"),
         "no task instance 'nope'; tasks here: arrive, book, browse"),
    ]:
        result = run(lab, *args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output
