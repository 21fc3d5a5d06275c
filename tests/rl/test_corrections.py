"""DAgger corrections (webworld/train/corrections.py): a policy's evaluated episode, replayed in
the fast env, yields the verified action at each page of the verified path it reached after
erring, with its own history; a clean episode yields nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.rl.conftest import Built
from webworld.cli.main import app
from webworld.rl.fast.env import FastEnv
from webworld.rl.tasks import verified_paths
from webworld.train.corrections import corrections, page_key

BAD = "click('999')"  # no such element: the page and the true state stay as they were


def setup(flight: Built) -> tuple[FastEnv, dict[str, list[dict[str, Any]]], dict[str, Any]]:
    worlds = flight.worlds()
    env = FastEnv(worlds, split=None, max_steps=10_000, observation="compact")
    paths = verified_paths(flight.trajectories, worlds.worlds)
    inst = worlds.instances()[0]
    row = {"task": inst.id, "seed": 0, "intent": inst.intents[0], "world": inst.world_id,
           "key": f"flight/{inst.id}#0"}
    return env, paths, row


def test_an_erring_episode_is_relabelled_with_the_verified_action_from_where_it_erred(
        flight: Built) -> None:
    env, paths, row = setup(flight)
    path = [s["action"] for s in paths[row["task"]]]
    assert len(path) >= 3
    row["actions"] = [path[0], BAD, *path[1:]]
    records = list(corrections(env, [row], paths))
    # the bad turn, its retry on the same page, every later turn: all labelled from the path
    assert [r["step"] for r in records] == list(range(1, len(path) + 1))
    labels = [r["messages"][-1]["content"].split("Action: ")[1] for r in records]
    assert labels == [path[1], *path[1:]]
    assert records[0]["correction_of"] == BAD
    retry = records[1]["messages"][1]["content"]
    assert BAD in retry and "Previous actions:" in retry  # the policy's own history
    assert all(r["messages"][-1]["content"].startswith("Thought: ") for r in records)
    # each label, played from the page its turn saw, puts the true state back on the path
    on_path = set()
    env.reset(seed=row["seed"], options={"task": row["task"], "intent": row["intent"]})
    for action in path:
        obs, *_ = env.step(action)
        on_path.add(page_key(env, obs))
    for record, label in zip(records, labels):
        env.reset(seed=row["seed"], options={"task": row["task"], "intent": row["intent"]})
        for action in row["actions"][:record["step"]]:
            env.step(action)
        obs, *_ = env.step(label)
        assert page_key(env, obs) in on_path


def test_a_clean_episode_yields_no_correction(flight: Built) -> None:
    env, paths, row = setup(flight)
    row["actions"] = [s["action"] for s in paths[row["task"]]]
    assert list(corrections(env, [row], paths)) == []


def test_the_cli_writes_an_export_of_corrections_and_the_exports_own_chats(
        flight: Built, tmp_path: Path) -> None:
    env, paths, row = setup(flight)
    path = [s["action"] for s in paths[row["task"]]]
    row["actions"] = [f"{a}  [button 'x']" for a in [path[0], BAD, *path[1:]]]  # as eval lists them
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps(row) + "\n")
    data = tmp_path / "export"
    (data / "sft").mkdir(parents=True)
    (data / "manifest.json").write_text(json.dumps({"observation": "compact"}))
    own = [{"messages": [{"role": "user", "content": f"chat {i}"},
                         {"role": "assistant", "content": "Action: click('1')"}]}
           for i in range(50)]
    (data / "sft" / "train.jsonl").write_text("".join(json.dumps(c) + "\n" for c in own))
    out = tmp_path / "corrected"
    runner = CliRunner()
    result = runner.invoke(app, ["train", "corrections", "--results", str(results), "--worlds",
                                 str(flight.root), "--data", str(data), "--out", str(out)])
    assert result.exit_code == 0, result.output
    chats = [json.loads(line) for line in (out / "sft" / "train.jsonl").read_text().splitlines()]
    fixed = [c for c in chats if c.get("correction_of")]
    assert len(fixed) == len(path) and len(chats) == 2 * len(path)
    assert json.loads((out / "corrections.json").read_text())["corrections"] == len(path)
    missing = runner.invoke(app, ["train", "corrections", "--results", str(tmp_path / "no.jsonl"),
                                  "--worlds", str(flight.root), "--data", str(data),
                                  "--out", str(out)])
    assert missing.exit_code != 0 and "no such results file" in missing.output
