"""The rollout engine and the learner compute the same policy, and the optimiser takes RL-sized
steps: pi = mu before any update (shared prefix or not, left padding, several turns, a
temperature), eval mode while sampling, bf16 sampling rescored in fp32, fp32 master weights
under a bf16 policy, warm-up, and the drift a step reports."""

from __future__ import annotations

from pathlib import Path

import torch

from tests.rl.conftest import Built
from webworld.train.batch import (
    EpisodeRecord,
    TurnRecord,
    behaviour_logps,
    reply_logps,
    turn_batch,
)
from webworld.train.config import RLConfig
from webworld.train.engine import SamplingSettings, TransformersEngine, default_batch
from webworld.train.learner import Learner
from webworld.train.loop import RLRun, drift_warning
from webworld.train.models import load_policy
from webworld.train.rollout import make_vector_env, plan_batch, play_batch

PROMPT = [{"role": "system", "content": "You are a web agent. " * 8},
          {"role": "user", "content": "Task: open the cart\nPage:\n[3] link 'Cart'"}]


def _episodes(world: Built, temperature: float, seed: int = 0) -> tuple:
    """Multi-turn episodes of a tiny policy in the fast env: prompts of several lengths (left
    padding in the sampler), replies sampled at ``temperature``."""
    model, tokenizer = load_policy("tiny", seed=seed)
    engine = TransformersEngine(model, tokenizer, SamplingSettings(max_new_tokens=10,
                                                                   temperature=temperature))
    worlds = world.worlds()
    vec = make_vector_env(worlds, "fast", None, 4, "compact", 3)
    try:
        batch = play_batch(vec, engine, plan_batch(worlds.instances(None), 1, seed, 2, 2), 1, seed)
    finally:
        vec.close()
    return model, tokenizer, batch.episodes


def test_pi_equals_mu_before_any_update(lab: Built) -> None:
    model, tokenizer, episodes = _episodes(lab, temperature=0.7)
    assert max(len(e.turns) for e in episodes) >= 2  # several turns
    assert len({len(t.prompt_ids) for e in episodes for t in e.turns}) > 1  # left padding
    mu = behaviour_logps(episodes)
    with torch.no_grad():
        for share in (True, False):
            batch = turn_batch(episodes, tokenizer.pad_token_id, share_prefix=share)
            assert (batch.shared > 0) == share
            pi = reply_logps(model, batch, temperature=0.7)
            assert (pi - mu).abs().max() < 3e-5, share
        untempered = reply_logps(model, turn_batch(episodes, tokenizer.pad_token_id))
    assert (untempered - mu).abs().max() > 1e-2  # the temperature is part of the policy


def test_the_engine_samples_without_dropout_and_restores_the_mode() -> None:
    model, tokenizer = load_policy("tiny", seed=1)
    model.config.attention_dropout = 0.5
    for layer in model.model.layers:
        layer.self_attn.attention_dropout = 0.5
    model.train()
    engine = TransformersEngine(model, tokenizer, SamplingSettings(max_new_tokens=8))
    gens = engine.generate([PROMPT] * 3, torch.Generator().manual_seed(0))
    assert model.training
    episodes = [EpisodeRecord("t", 0, 0, 0, [TurnRecord(g.prompt_ids, g.completion_ids,
                                                        g.logprobs)]) for g in gens]
    model.eval()
    with torch.no_grad():
        pi = reply_logps(model, turn_batch(episodes, tokenizer.pad_token_id))
    assert (pi - behaviour_logps(episodes)).abs().max() < 3e-5


def test_bf16_sampling_is_rescored_in_fp32() -> None:
    """bf16 compute samples; the behaviour log-probs that enter W are the learner's fp32 ones,
    so on-policy W = 1 (the raw bf16 log-probs are off by far more)."""
    model, tokenizer = load_policy("tiny", seed=2)
    settings = SamplingSettings(max_new_tokens=12, precision="bf16")
    engine = TransformersEngine(model, tokenizer, settings)
    gens = engine.generate([PROMPT] * 4, torch.Generator().manual_seed(3))
    episodes = [EpisodeRecord("t", 0, 0, 0, [TurnRecord(g.prompt_ids, g.completion_ids,
                                                        g.logprobs)]) for g in gens]
    with torch.no_grad():
        pi = reply_logps(model, turn_batch(episodes, tokenizer.pad_token_id))
        raw = engine._sample([g.prompt_ids for g in gens], torch.Generator().manual_seed(3))
    mu = behaviour_logps(episodes)
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert (pi - mu).abs().max() < 3e-5
    raw_mu = torch.tensor([lp for g in raw for lp in g.logprobs])
    assert [g.completion_ids for g in raw] == [g.completion_ids for g in gens]
    assert (raw_mu - mu).abs().max() > 1e-3  # what W would have been built from without it


def _one_step(model, tokenizer, learning_rate: float, **kw) -> tuple[dict, dict]:
    engine = TransformersEngine(model, tokenizer, SamplingSettings(max_new_tokens=8))
    gens = engine.generate([PROMPT] * 4, torch.Generator().manual_seed(0))
    episodes = [EpisodeRecord("t", 0, i, 0, [TurnRecord(g.prompt_ids, g.completion_ids,
                                                        g.logprobs)], reward=float(i % 2))
                for i, g in enumerate(gens)]
    before = {k: v.clone() for k, v in model.state_dict().items()}
    config = RLConfig(algo="vespo", learning_rate=learning_rate, temperature=1.0, **kw)
    stats = Learner(model, tokenizer.pad_token_id, config).update(episodes, 1)
    return before, stats


def test_a_small_update_of_a_bf16_policy_is_not_rounded_away(lab: Built, tmp_path: Path) -> None:
    """A run that samples in bf16 keeps fp32 weights: one step at lr 1e-5 moves every weight.
    With the weights themselves in bf16, the same step is mostly rounded away."""
    config = RLConfig(worlds=lab.root, split="all", out=tmp_path / "run", steps=1,
                      tasks_per_step=2, group_size=2, envs=4, max_new_tokens=8, seed=5,
                      learning_rate=1e-5, warmup_steps=0, precision="bf16", device="cpu")
    run = RLRun(config)
    assert run.engine.settings.precision == "bf16"
    start = {k: v.clone() for k, v in run.model.state_dict().items()}
    vec = make_vector_env(run.worlds, "fast", None, 4, "compact", 3)
    try:
        batch = play_batch(vec, run.engine, plan_batch(run.instances, 1, 5, 2, 2), 1, 5)
    finally:
        vec.close()
    for n, ep in enumerate(batch.episodes):
        ep.reward = float(n % 2)
    run.learner.update(batch.episodes, 1)
    assert all(v.dtype == torch.float32 for v in run.model.state_dict().values())
    moved = [(run.model.state_dict()[k] != v).float().mean().item() for k, v in start.items()]
    assert min(moved) > 0.9

    bf16, tokenizer = load_policy("tiny", seed=5, dtype=torch.bfloat16)
    before, _ = _one_step(bf16, tokenizer, 1e-5, warmup_steps=0)
    lost = [(bf16.state_dict()[k] != v).float().mean().item() for k, v in before.items()]
    assert sum(lost) / len(lost) < 0.5  # the failure the fp32 master copy prevents


def test_warm_up_and_what_a_step_reports() -> None:
    model, tokenizer = load_policy("tiny", seed=6)
    _, stats = _one_step(model, tokenizer, 1e-3, warmup_steps=4)
    update = stats["updates"][0]
    assert update["lr"] == 1e-3 / 4
    for key in ("kl", "log_ratio_abs_p50", "log_ratio_abs_p99", "step_kl",
                "step_log_ratio_abs_p99", "entropy", "grad_norm", "phi_mean"):
        assert key in update and update[key] >= 0, key
    assert update["kl"] < 1e-6 and update["step_kl"] > 0  # on-policy before, moved after
    assert stats["zero_advantage_groups"] == 0.0
    assert drift_warning({"updates": stats["updates"]}, max_kl=1.0) == ""


def test_a_step_that_moves_the_policy_too_far_is_reported() -> None:
    model, tokenizer = load_policy("tiny", seed=7)
    _, stats = _one_step(model, tokenizer, 0.3, warmup_steps=0)
    warning = drift_warning({"updates": stats["updates"]}, max_kl=0.1)
    assert stats["step_kl"] > 0.1 and "lower the learning rate" in warning


def test_the_draw_follows_the_policy_and_repeats_for_a_seed() -> None:
    """Inverting the CDF at a CPU uniform samples each token with its probability (40,000
    draws of a known distribution, within 4 standard errors), never a token of probability
    zero, and the same tokens again for the same seed."""
    from webworld.train.engine import inverse_cdf_draw

    probs = torch.tensor([0.5, 0.0, 0.3, 0.15, 0.05, 0.0])
    logprobs = probs.log().expand(40_000, -1)  # log(0) = -inf: exp gives 0 again
    drawn = inverse_cdf_draw(logprobs, torch.Generator().manual_seed(0))
    share = torch.bincount(drawn, minlength=6).double() / len(drawn)
    error = (probs.double() * (1 - probs.double()) / len(drawn)).sqrt()
    assert ((share - probs.double()).abs() <= 4 * error + 1e-12).all(), share
    assert share[1] == 0 and share[5] == 0
    again = inverse_cdf_draw(logprobs, torch.Generator().manual_seed(0))
    assert torch.equal(drawn, again)
    assert not torch.equal(drawn, inverse_cdf_draw(logprobs, torch.Generator().manual_seed(1)))


def test_a_cpu_run_keeps_16_prompts_a_pass_and_a_gpu_run_answers_every_waiting_episode() -> None:
    # the seeded draws of a CPU run follow its batches: the board test's runs were made at 16
    assert default_batch("cpu", 32) == 16
    assert default_batch("cuda", 32) == 32
    assert default_batch("cuda:0", 64) == 64
