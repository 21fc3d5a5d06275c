"""Policy-gradient losses: TRL 1.16's GRPOTrainer._compute_loss is the oracle, plus on-policy maths."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

from webworld.errors import UsageError
from webworld.train.losses import LOSSES, LossConfig, get_loss, group_advantages

B, L = 6, 9
CFG = LossConfig(vespo_reduction="token")  # TRL's VESPO averages over the batch's tokens
SEEDS = [0, 1, 2, 3]
# our name -> (TRL loss_type, importance_sampling_level, clip epsilons); gspo-token is checked against
# sequence-level GSPO: with one advantage per sequence the GSPO paper shows value and gradient coincide.
TRL_SETUP = {
    "grpo": ("grpo", "token", CFG.epsilon_low, CFG.epsilon_high),
    "gspo": ("grpo", "sequence", CFG.gspo_epsilon_low, CFG.gspo_epsilon_high),
    "gspo-token": ("grpo", "sequence", CFG.gspo_epsilon_low, CFG.gspo_epsilon_high),
    "sapo": ("sapo", "token", CFG.epsilon_low, CFG.epsilon_high),
    "vespo": ("vespo", "token", CFG.epsilon_low, CFG.epsilon_high),
}


def make_batch(seed: int) -> tuple[torch.Tensor, ...]:
    """float64 logps (B, L), nearby old_logps, a ragged mask (>= 1 token per row), advantages of both signs"""
    g = torch.Generator().manual_seed(seed)
    logps = -(0.05 + 2.95 * torch.rand(B, L, generator=g, dtype=torch.float64))
    old = logps + 0.3 * torch.randn(B, L, generator=g, dtype=torch.float64)
    mask = torch.rand(B, L, generator=g) > 0.3
    mask[:, 0] = True
    mask[:, -1] = False
    adv = torch.randn(B, generator=g, dtype=torch.float64)
    adv[0], adv[1], adv[2] = 0.0, adv[1].abs(), -adv[2].abs()
    return logps, old, adv, mask.double()


def run_ours(name: str, logps, old, adv, mask):
    leaf = logps.clone().requires_grad_(True)
    out = get_loss(name)(leaf, old, adv, mask, config=CFG)
    out.loss.backward()
    return out, leaf.grad


def run_trl(name: str, logps, old, adv, mask):
    """Loss, grad and logged metrics of TRL's own _compute_loss, on a stub exposing only what it touches."""
    from trl.trainer.grpo_trainer import GRPOTrainer

    loss_type, level, eps_low, eps_high = TRL_SETUP[name]
    leaf = logps.clone().requires_grad_(True)
    fake_self = SimpleNamespace(
        _get_per_token_logps_and_entropies=lambda *a, **k: (leaf, torch.zeros_like(leaf), None),
        top_entropy_quantile=1.0,
        off_policy_mask_threshold=None,
        importance_sampling_level=level,
        beta=0.0,
        loss_type=loss_type,
        epsilon_low=eps_low,
        epsilon_high=eps_high,
        use_vllm=False,
        args=SimpleNamespace(
            delta=None,
            sapo_temperature_pos=CFG.sapo_tau_pos,
            sapo_temperature_neg=CFG.sapo_tau_neg,
            vespo_k_pos=CFG.vespo_k_pos,
            vespo_lambda_pos=CFG.vespo_lambda_pos,
            vespo_k_neg=CFG.vespo_k_neg,
            vespo_lambda_neg=CFG.vespo_lambda_neg,
            steps_per_generation=1,
        ),
        model=SimpleNamespace(training=True),
        current_gradient_accumulation_steps=1,
        accelerator=SimpleNamespace(
            num_processes=1,
            gather=lambda x: x,
            gather_for_metrics=lambda x: x,
            reduce=lambda x, reduction="sum": x,
            sync_gradients=False,
        ),
        _entropy_bonus_enabled=False,
        aux_loss_enabled=False,
        get_gamma_weights=GRPOTrainer.get_gamma_weights,
        _metrics=defaultdict(lambda: defaultdict(list)),
    )
    inputs = {
        "prompt_ids": torch.zeros(B, 1, dtype=torch.long),
        "prompt_mask": torch.ones(B, 1, dtype=torch.long),
        "completion_ids": torch.zeros(B, L, dtype=torch.long),
        "completion_mask": mask,
        "advantages": adv,
        "old_per_token_logps": old,
        "num_items_in_batch": mask.sum(),
    }
    loss = GRPOTrainer._compute_loss(fake_self, None, inputs)
    loss.backward()
    return loss, leaf.grad, {k: v[-1] for k, v in fake_self._metrics["train"].items()}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_matches_trl(name: str, seed: int) -> None:
    batch = make_batch(seed)
    out, grad = run_ours(name, *batch)
    ref_loss, ref_grad, metrics = run_trl(name, *batch)
    torch.testing.assert_close(out.loss.detach(), ref_loss.detach(), rtol=0, atol=1e-6)
    torch.testing.assert_close(grad, ref_grad, rtol=0, atol=1e-6)
    assert grad.abs().sum() > 0
    assert out.reduction == ("token" if name == "vespo" else "sequence")
    assert 0 < out.stats["ess"] <= 1
    if name in ("grpo", "gspo"):  # same clipped-region rule as TRL, and both branches exercised
        assert out.stats["clip_fraction"] == pytest.approx(metrics["clip_ratio/region_mean"], abs=1e-6)
        assert 0 < out.stats["clip_fraction"] < 1
    if name == "vespo":
        assert out.stats["phi_mean"] == pytest.approx(metrics["vespo/phi_seq_mean"], abs=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_on_policy_reduces_to_policy_gradient(name: str, seed: int) -> None:
    logps, _, adv, mask = make_batch(seed)
    out, grad = run_ours(name, logps, logps, adv, mask)
    n_seq = mask.sum(-1, keepdim=True)
    if name == "vespo":  # phi(1) = 1: REINFORCE averaged over all tokens of the batch
        want_grad = -adv[:, None] * mask / mask.sum()
        want_loss = -(adv[:, None] * logps * mask).sum() / mask.sum()
    else:  # every ratio (and SAPO's gate slope f'(1)) is 1: -mean_i A_i / |y_i| sum_t logp_t
        want_grad = -adv[:, None] / n_seq / B * mask
        tau = torch.where(adv > 0, CFG.sapo_tau_pos, CFG.sapo_tau_neg)
        want_loss = -(adv * 2 / tau).mean() if name == "sapo" else -adv.mean()  # SAPO: f(1) = 2 / tau
    torch.testing.assert_close(grad, want_grad, rtol=0, atol=1e-12)
    torch.testing.assert_close(out.loss.detach(), want_loss, rtol=0, atol=1e-12)
    assert out.stats["ess"] == pytest.approx(1.0)
    assert out.stats["log_ratio_mean"] == out.stats["log_ratio_abs_max"] == 0.0
    expected = {"clip_fraction": 0.0, "phi_mean": 1.0, "soft_gate_mean": 1.0}
    for key in expected.keys() & out.stats.keys():
        assert out.stats[key] == pytest.approx(expected[key])
    assert expected.keys() & out.stats.keys()


@pytest.mark.parametrize("seed", SEEDS)
def test_vespo_by_episode_weighs_every_episode_equally(seed: int) -> None:
    """VESPO's default mean (``vespo_reduction = "sequence"``): on-policy, the gradient of
    GRPO's per-episode mean, so a long failing episode pushes its tokens no harder in all than
    a short successful one."""
    logps, old, adv, mask = make_batch(seed)
    leaf = logps.clone().requires_grad_(True)
    out = get_loss("vespo")(leaf, logps, adv, mask, config=LossConfig())
    out.loss.backward()
    torch.testing.assert_close(leaf.grad, -adv[:, None] / mask.sum(-1, keepdim=True) / B * mask,
                               rtol=0, atol=1e-12)
    assert out.reduction == "sequence"
    token, _ = run_ours("vespo", logps, old, adv, mask)  # the paper's mean differs when lengths do
    by_episode = get_loss("vespo")(logps, old, adv, mask, config=LossConfig())
    assert not torch.isclose(token.loss, by_episode.loss)


@pytest.mark.parametrize("garbage", [1e3, float("inf")])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_masked_tokens_get_no_gradient(name: str, garbage: float) -> None:
    logps, old, adv, mask = make_batch(7)
    old = logps + 1e-3 * (old - logps)  # mostly inside GSPO's narrow clip range, so gradients flow
    mask[3] = 0.0  # an episode with no policy tokens at all
    off = mask == 0
    clean, _ = run_ours(name, logps, old, adv, mask)
    out, grad = run_ours(name, logps.masked_fill(off, garbage), old.masked_fill(off, -garbage), adv, mask)
    assert torch.isfinite(out.loss)
    assert torch.equal(grad[off], torch.zeros_like(grad[off]))
    assert grad[~off].abs().sum() > 0
    torch.testing.assert_close(out.loss, clean.loss, rtol=0, atol=1e-12)  # padding values are invisible
    assert all(torch.isfinite(torch.tensor(v)) for v in out.stats.values())


def test_group_advantages_by_hand() -> None:
    rewards = torch.tensor([1.0, 0.0, 2.0, 5.0, 3.0, 3.0])
    groups = torch.tensor([7, 7, 7, 2, 9, 9])  # group 7: mean 1, unbiased std 1; 2: alone; 9: all equal
    eps = 1e-4
    want = torch.tensor([0.0, -1 / (1 + eps), 1 / (1 + eps), 0.0, 0.0, 0.0])
    torch.testing.assert_close(group_advantages(rewards, groups, eps), want)


def test_group_advantages_match_loop_reference() -> None:
    g = torch.Generator().manual_seed(0)
    rewards = torch.randn(40, generator=g, dtype=torch.float64)
    groups = torch.randint(0, 8, (40,), generator=g)
    groups[0] = 99  # a group of one
    want = torch.zeros_like(rewards)
    for i in range(len(rewards)):
        same = rewards[groups == groups[i]]
        if len(same) > 1:
            want[i] = (rewards[i] - same.mean()) / (same.std() + 1e-4)
    got = group_advantages(rewards, groups)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    assert got[0] == 0 and got.abs().sum() > 0


def test_get_loss() -> None:
    assert get_loss("gspo-token") is LOSSES["gspo-token"]
    with pytest.raises(UsageError, match="unknown loss 'ppo'; choose from") as err:
        get_loss("ppo")
    assert all(name in str(err.value) for name in ("grpo", "gspo", "gspo-token", "sapo", "vespo"))


# ---- per-turn credit (progress rewards) ---------------------------------------------------------


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_one_advantage_per_token_equal_to_the_episode_s_is_the_same_loss(name: str, seed: int) -> None:
    logps, old, adv, mask = make_batch(seed)
    per_episode, grad_episode = run_ours(name, logps, old, adv, mask)
    per_token, grad_token = run_ours(name, logps, old, adv[:, None].expand(B, L), mask)
    torch.testing.assert_close(per_token.loss, per_episode.loss)
    torch.testing.assert_close(grad_token, grad_episode)


@pytest.mark.parametrize("name", ["grpo", "gspo-token", "sapo", "vespo"])
def test_per_token_advantages_push_each_turn_its_own_way(name: str) -> None:
    """On-policy, a token's gradient follows its own advantage: the first turn's tokens up,
    the second's down, within one episode (GSPO, one ratio per sequence, takes their mean)."""
    logps, _, _, _ = make_batch(0)
    mask = torch.ones(B, L, dtype=torch.float64)
    adv = torch.ones(B, L, dtype=torch.float64)
    adv[:, L // 2:] = -1.0
    _, grad = run_ours(name, logps, logps.detach().clone(), adv, mask)
    assert (grad[:, :L // 2] < 0).all() and (grad[:, L // 2:] > 0).all()  # descent raises A > 0


def test_returns_to_go_and_pooled_turn_advantages_by_hand() -> None:
    from webworld.train.losses import group_turn_advantages, returns_to_go

    assert returns_to_go(torch.tensor([1.0, 0.0, -1.0, 2.0])).tolist() == [2.0, 1.0, 1.0, 2.0]
    returns = [torch.tensor([3.0, 2.0]), torch.tensor([1.0]), torch.tensor([5.0, 5.0])]
    groups = torch.tensor([0, 0, 1])
    adv = group_turn_advantages(returns, groups)
    pooled = torch.tensor([3.0, 2.0, 1.0])  # group 0's turns
    expected = (pooled - pooled.mean()) / (pooled.std() + 1e-4)
    torch.testing.assert_close(torch.cat(adv[:2]), expected)
    assert adv[2].tolist() == [0.0, 0.0]  # equal returns: nothing to learn
