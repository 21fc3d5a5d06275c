"""The RL trainer's mechanics with a tiny random-init policy: rollouts in the fast env and in
real Chromium, one step of every algorithm, masks, the engine's log-probs, async lag, resume
after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from tests.rl.conftest import Built
from webworld.errors import UsageError
from webworld.train.batch import (
    EpisodeRecord,
    TurnRecord,
    behaviour_logps,
    episode_sequences,
    reply_logps,
    turn_batch,
)
from webworld.train.config import RLConfig
from webworld.train.engine import SamplingSettings, TransformersEngine
from webworld.train.learner import Learner
from webworld.train.loop import RLRun
from webworld.train.models import load_policy
from webworld.train.rollout import lead_in, make_vector_env, plan_batch, play_batch

ALGOS = ("vespo", "gspo", "gspo-token", "grpo", "sapo")


def _config(world: Built, out: Path, **kw) -> RLConfig:
    settings = {"worlds": world.root, "split": "all", "out": out, "steps": 1, "tasks_per_step": 2,
                "group_size": 2, "envs": 4, "max_new_tokens": 12, "learning_rate": 1e-3,
                "checkpoint_every": 1, "temperature": 1.0, **kw}
    return RLConfig(**settings)


def _play(world: Built, env: str, seed: int = 0):
    model, tokenizer = load_policy("tiny", seed=seed)
    engine = TransformersEngine(model, tokenizer, SamplingSettings(max_new_tokens=12))
    worlds = world.worlds()
    vec = make_vector_env(worlds, env, None, 4, "compact", 3)
    try:
        planned = plan_batch(worlds.instances(None), 1, seed, 2, 2)
        return model, tokenizer, play_batch(vec, engine, planned, 1, seed)
    finally:
        vec.close()


# the live env's rollouts run with -m slow: the live env's own tests (tests/rl/test_live_env.py)
# and the TRL live test play it in the default run, and the learner is the same
@pytest.mark.parametrize("env", ["fast", pytest.param("live", marks=pytest.mark.slow)])
def test_one_step_of_every_algorithm(lab: Built, env: str) -> None:
    """Rollouts from the env, then one update per algorithm. A random tiny model never
    succeeds, so rewards are set 0/1 alternately to give every group an advantage."""
    model, tokenizer, batch = _play(lab, env)
    assert len(batch.episodes) == 4 and all(e.turns for e in batch.episodes)
    assert all(len(e.turns) <= 3 for e in batch.episodes)
    assert batch.env_seconds > 0 and batch.version == 0
    for n, ep in enumerate(batch.episodes):
        ep.reward = float(n % 2)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    for algo in ALGOS:
        model.load_state_dict(start)
        learner = Learner(model, tokenizer.pad_token_id, _config(lab, Path("unused"), algo=algo))
        stats = learner.update(batch.episodes, 1)
        assert torch.isfinite(torch.tensor(stats["loss"])), algo
        assert stats["learned_episodes"] == 4 and stats["grad_norm"] > 0, algo
        assert abs(stats["log_ratio_mean"]) < 1e-4, algo  # on-policy: learner == sampler
        moved = sum((model.state_dict()[k] - v).abs().sum() for k, v in start.items())
        assert moved > 0, algo


def test_the_learner_scores_reply_tokens_only_with_the_samplers_log_probs(lab: Built) -> None:
    model, tokenizer, batch = _play(lab, "fast", seed=3)
    episodes = batch.episodes
    tb = turn_batch(episodes, tokenizer.pad_token_id)
    # the scored positions are exactly the replies: never a prompt (observation) token
    turns = [t for e in episodes for t in e.turns]
    for r, t in enumerate(turns):
        scored = tb.positions[tb.rows == r].tolist()
        assert scored == list(range(len(t.prompt_ids), len(t.prompt_ids) + len(t.completion_ids)))
    with torch.no_grad():
        learner = reply_logps(model, tb)
        reference = []  # a plain full forward pass, row by row
        for t in turns:
            ids = torch.tensor([t.prompt_ids + t.completion_ids])
            logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), -1)
            start = len(t.prompt_ids)
            reference += [logp[start + k - 1, tok].item() for k, tok in enumerate(t.completion_ids)]
    assert torch.allclose(learner, torch.tensor(reference), atol=1e-5)
    assert torch.allclose(learner, behaviour_logps(episodes), atol=1e-4)
    seqs, mask = episode_sequences(learner, tb.lengths)
    assert mask.sum(1).tolist() == [e.policy_tokens for e in episodes]
    assert seqs[mask == 0].abs().sum() == 0


def test_from_goal_starts_k_steps_before_the_goal(flight: Built) -> None:
    """The lead-in replays the verified path up to K steps before the goal: the path's last K
    actions then succeed, and a policy gets 2K turns."""
    worlds = flight.worlds()
    planned = plan_batch(worlds.instances(None), 1, 0, 2, 1)
    vec = make_vector_env(worlds, "fast", None, 2, "compact", None)
    try:
        starting = dict(enumerate(planned))
        reset = vec.reset_slots({i: p.task for i, p in starting.items()},
                                {i: p.seed for i, p in starting.items()})
        turns = lead_in(vec, starting, reset, 1)
        paths = {i: p.task.oracle[0] for i, p in starting.items()}
        # the replayed actions are the history, each with the element it acted on
        assert all([h.split("  [")[0] for h in turns[i].history] == list(paths[i][:-1])
                   for i in paths)
        assert all(h.endswith("]") for i in paths for h in turns[i].history)
        assert all(turns[i].history[-1] in turns[i].messages()[1]["content"] for i in paths)
        last = vec.step_slots({i: path[-1] for i, path in paths.items()})
        assert all(info["success"] and terminated for _o, _r, terminated, _t, info in last.values())

        model, tokenizer = load_policy("tiny", seed=0)
        engine = TransformersEngine(model, tokenizer, SamplingSettings(max_new_tokens=8))
        batch = play_batch(vec, engine, planned, 1, 0, from_goal=2)
        assert len(batch.episodes) == 2 and all(1 <= len(e.turns) <= 4 for e in batch.episodes)
    finally:
        vec.close()
    short = make_vector_env(worlds, "fast", None, 2, "compact", 1)  # a 1-step limit
    try:
        reset = short.reset_slots({0: planned[0].task}, {0: 0})
        with pytest.raises(UsageError, match="raise --max-episode-steps"):
            lead_in(short, {0: planned[0]}, reset, 1)
    finally:
        short.close()


def test_a_group_of_equal_rewards_is_not_computed() -> None:
    model, tokenizer = load_policy("tiny")
    turn = TurnRecord([5, 6, 7], [8, 9], [-1.0, -2.0])
    eps = [EpisodeRecord("t", 0, s, 0, [turn], reward=1.0) for s in range(2)]
    learner = Learner(model, tokenizer.pad_token_id, RLConfig(algo="grpo"))
    stats = learner.update(eps, 1)
    assert stats["learned_episodes"] == 0 and stats["grad_norm"] == 0


def test_progress_rewards_give_each_turn_its_own_advantage() -> None:
    """Success rewards: one advantage per episode on all its tokens. Progress rewards: a turn's
    advantage follows its return to go, pooled over the group's turns."""
    model, tokenizer = load_policy("tiny")
    def episode(seed: int, rewards: list[float]) -> EpisodeRecord:
        turns = [TurnRecord([5, 6, 7], [8, 9], [-1.0, -2.0], r) for r in rewards]
        return EpisodeRecord("t", 0, seed, 0, turns, reward=sum(rewards),
                             success=rewards[-1] >= 1)
    # episode 0 moved nearer, then away, then succeeded; episode 1 moved nearer then stalled
    eps = [episode(0, [1.0, -1.0, 2.0]), episode(1, [1.0, 0.0, 0.0])]
    groups = torch.tensor([0, 0])
    progress = Learner(model, tokenizer.pad_token_id, RLConfig(reward="progress"))
    adv = progress._token_advantages(eps, groups)
    assert [len(a) for a in adv] == [6, 6]  # two reply tokens per turn
    turn_adv = [a[::2].tolist() for a in adv]  # returns to go [2, 1, 2] and [1, 0, 0]
    assert turn_adv[0][0] == turn_adv[0][2] > turn_adv[0][1] > turn_adv[1][2]
    success = Learner(model, tokenizer.pad_token_id, RLConfig(reward="success"))
    flat = success._token_advantages(eps, groups)
    assert len(set(flat[0].tolist())) == 1 and flat[0][0] > 0 > flat[1][0]
    stats = progress.update(eps, 1)
    assert stats["learned_episodes"] == 2 and stats["grad_norm"] > 0


def test_the_curriculum_widens_on_success_and_resumes_where_it_was(lab: Built,
                                                                   tmp_path: Path) -> None:
    config = _config(lab, tmp_path / "run", curriculum=True, from_goal=1, reward="progress")
    run = RLRun(config)
    assert run.from_goal == 1 and run.longest_path >= 2
    run._widen(config.curriculum_threshold / 2)
    assert run.from_goal == 1
    run._widen(config.curriculum_threshold)
    assert run.from_goal == 2
    for _ in range(run.longest_path + 2):
        run._widen(1.0)
    assert run.from_goal == run.longest_path  # whole tasks, and no further
    run.from_goal = 2
    result = run.run()  # a random policy: no batch reaches the threshold
    assert result.rows[0]["from_goal"] == 2
    assert RLRun(config.model_copy(update={"steps": 2})).from_goal == 2
    with pytest.raises(ValueError, match="start it at 1"):
        RLConfig(curriculum=True)


def test_async_rollouts_lag_by_the_schedule(lab: Built, tmp_path: Path) -> None:
    config = _config(lab, tmp_path / "run", steps=3, async_lag=1, algo="vespo")
    result = RLRun(config).run()
    lags = [r["lag_max"] for r in result.rows]
    assert lags == [0, 1, 1]  # batch b is played by version max(0, b - 2)
    assert (tmp_path / "run" / "curves.png").stat().st_size > 1000
    assert (tmp_path / "run" / "model" / "config.json").is_file()
    assert any((tmp_path / "run" / "tb").iterdir())


def _cli(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "from webworld.cli.main import app; app()",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _numbers(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith("time_") and k != "wall"} for r in rows]


@pytest.mark.slow  # tests/recipe kills a run inside RL and resumes it in the default run
def test_a_run_killed_with_sigkill_resumes_to_the_same_numbers(button_board: Path,
                                                               tmp_path: Path) -> None:
    """On the button board the start policy presses buttons, so batch 2 learns: the resumed
    batch 3 matches only if the checkpoint brought back the weights and the optimiser."""
    common = ["train", "rl", "--model", str(button_board / "start"), "--worlds", str(button_board),
              "--split", "all", "--steps", "3", "--tasks", "2", "-G", "4", "--envs", "8",
              "--max-new-tokens", "32", "--checkpoint-every", "1", "--algo", "gspo", "-N", "2"]
    whole = _cli([*common, "--out", str(tmp_path / "whole")])
    said = whole.communicate(timeout=300)[0]
    assert whole.returncode == 0, said
    assert _numbers(tmp_path / "whole" / "metrics.jsonl")[1]["optimizer_steps"] > 0
    # the default warm-up (10 optimiser steps) outlasts these 6: the user is told
    assert "warm-up (10 optimiser steps) is over half of this run's 6" in " ".join(said.split())
    killed = _cli([*common, "--out", str(tmp_path / "killed")])
    metrics = tmp_path / "killed" / "metrics.jsonl"
    learnt = tmp_path / "killed" / "checkpoints" / "step-000002"  # the optimiser has state
    deadline = time.monotonic() + 300
    while not learnt.is_dir():
        assert killed.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    again = _cli([*common, "--out", str(tmp_path / "killed")])
    assert again.wait(300) == 2  # a folder with checkpoints needs --resume
    assert "--resume" in again.stdout.read()
    resumed = _cli([*common, "--out", str(tmp_path / "killed"), "--resume"])
    assert resumed.wait(300) == 0, resumed.stdout.read()
    assert _numbers(metrics) == _numbers(tmp_path / "whole" / "metrics.jsonl")
    assert len(_numbers(metrics)) == 3


def test_the_drift_measurement_leaves_the_updates_as_they_are(button_board: Path,
                                                              tmp_path: Path) -> None:
    """--no-measure-drift saves a forward pass per optimiser step and changes no number a run
    learns by: the same rollouts, losses, gradients and weights, bit for bit."""
    def run(measure: bool) -> tuple[list[dict], dict[str, torch.Tensor]]:
        out = tmp_path / str(measure)
        config = RLConfig(model=str(button_board / "start"), worlds=button_board, split="all",
                          out=out, steps=3, tasks_per_step=2, group_size=4, envs=8,
                          max_new_tokens=32, learning_rate=3e-4, checkpoint_every=100, seed=0,
                          measure_drift=measure)
        rows = RLRun(config).run().rows
        model, _ = load_policy(str(out / "model"))
        return rows, model.state_dict()

    def learnt(row: dict) -> dict:
        kept = {k: v for k, v in row.items() if not k.startswith(("time_", "step_", "wall"))}
        kept["updates"] = [{k: v for k, v in u.items() if not k.startswith("step_")}
                           for u in row["updates"]]
        return kept

    (measured, weights), (unmeasured, same_weights) = run(True), run(False)
    assert any("step_kl" in u for r in measured for u in r["updates"])  # a step that moved
    assert not any("step_kl" in u for r in unmeasured for u in r["updates"])
    assert [learnt(r) for r in measured] == [learnt(r) for r in unmeasured]
    assert all(torch.equal(weights[k], same_weights[k]) for k in weights)


def test_the_episodes_of_a_group_read_the_same_phrasing(flight: Built) -> None:
    """A group is one prompt sampled G times: its advantage baseline compares replies, not
    phrasings. The instances have 4 phrasings each; groups differ, members do not."""
    worlds = flight.worlds()
    planned = plan_batch(worlds.instances(None), 1, 0, 4, 3)
    assert len({p.seed for p in planned}) == 4
    vec = make_vector_env(worlds, "fast", None, len(planned), "compact", None)
    try:
        reset = vec.reset_slots({i: p.task for i, p in enumerate(planned)},
                                {i: p.seed for i, p in enumerate(planned)})
    finally:
        vec.close()
    goals: dict[int, set[str]] = {}
    for i, p in enumerate(planned):
        goals.setdefault(p.group, set()).add(reset[i][0]["goal"])
    assert all(len(g) == 1 for g in goals.values())
    assert len({next(iter(g)) for g in goals.values()}) > 1
