"""Policy-gradient losses for multi-turn RL: small pure functions of tensors, looked up by name.

Shapes: B = episodes in the (mini)batch, L = policy tokens of an episode padded to the longest. An
episode's sequence is all its assistant tokens over all turns; observation tokens are never in it.
Every loss takes ``logps`` (B, L) with grad, ``old_logps`` (B, L) from the behaviour policy that
produced the rollout (used as pi_old), ``advantages`` (B,) (one per episode) or (B, L) (one per
token: per-turn credit from progress rewards) and ``mask`` (B, L), 1 on policy tokens.

Masked positions never reach a ``sum`` or an ``exp``: they are replaced by 0 with ``torch.where``,
so padding garbage (even inf) gives a finite loss and exactly zero gradient there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import torch
from torch import Tensor

from webworld.errors import UsageError
from webworld.train.loss_config import LossConfig  # noqa: F401  (kept apart: no torch)

LOG_RATIO_CLAMP = 20.0  # |summed log-ratio| above this is clamped before exp (exp(20) ~ 5e8)


@dataclass
class LossOutput:
    """A scalar loss, how it averages (the learner scales micro-batches by it), and detached stats."""

    loss: Tensor
    reduction: Literal["sequence", "token"]  # mean over sequences, or mean over all tokens of the batch
    stats: dict[str, float] = field(default_factory=dict)


LossFn = Callable[..., LossOutput]


# ---- helpers ---------------------------------------------------------------------------------------


def _where(mask: Tensor, x: Tensor) -> Tensor:
    """x on policy tokens, 0 elsewhere; unlike x * mask, inf/nan padding cannot leak through."""
    return torch.where(mask, x, torch.zeros((), dtype=x.dtype, device=x.device))


def _seq_mean(x: Tensor, mask: Tensor) -> Tensor:
    """(B, L) -> (B,): mean over each sequence's policy tokens (0 for an empty sequence)."""
    return _where(mask, x).sum(-1) / mask.sum(-1).clamp(min=1).to(x.dtype)


def _token_mean(x: Tensor, mask: Tensor) -> Tensor:
    """(B, L) -> (): mean over all policy tokens of the batch."""
    return _where(mask, x).sum() / mask.sum().clamp(min=1).to(x.dtype)


def _clamp_log(x: Tensor) -> Tensor:
    return x.clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)


def _seq_log_ratio(log_ratio: Tensor, mask: Tensor) -> Tensor:
    """(B, L) -> (B,): log W_i = sum_t rho_{i,t}, each term and the sum clamped to [-20, 20]."""
    return _clamp_log(_where(mask, _clamp_log(log_ratio)).sum(-1))


@torch.no_grad()
def _common_stats(log_ratio: Tensor, mask: Tensor) -> dict[str, float]:
    """Drift of pi_theta from mu: token log-ratio mean / max |.|, and the sequence-level normalised ESS."""
    rho = _where(mask, log_ratio)
    w = torch.exp(_seq_log_ratio(log_ratio, mask))  # (B,)
    ess = w.sum() ** 2 / (w.numel() * (w**2).sum()) if w.numel() else w.new_ones(())
    return {
        "log_ratio_mean": float(_token_mean(log_ratio, mask)),
        "log_ratio_abs_max": float(rho.abs().max()) if rho.numel() else 0.0,
        "ess": float(ess),
    }


def _clipped_surrogate(ratio: Tensor, adv: Tensor, eps_low: float, eps_high: float) -> tuple[Tensor, Tensor]:
    """PPO term -min(r A, clip(r) A), and 1.0 where its clipped (zero-gradient) branch is active."""
    loss = -torch.minimum(ratio * adv, ratio.clamp(1 - eps_low, 1 + eps_high) * adv)
    clipped = ((ratio < 1 - eps_low) & (adv < 0)) | ((ratio > 1 + eps_high) & (adv > 0))
    return loss, clipped.detach().to(ratio.dtype)


def _prepare(logps: Tensor, old_logps: Tensor, advantages: Tensor, mask: Tensor) -> tuple[Tensor, ...]:
    """Boolean mask (B, L), token log-ratio (B, L) masked to 0, advantages as a column (B, 1)
    (one per episode) or as given (B, L) (one per token)."""
    mask = mask.bool()
    log_ratio = _where(mask, logps - old_logps)
    adv = advantages.to(logps.dtype)
    return mask, log_ratio, adv.unsqueeze(-1) if adv.dim() == 1 else _where(mask, adv)


# ---- losses ----------------------------------------------------------------------------------------


def grpo(
    logps: Tensor, old_logps: Tensor, advantages: Tensor, mask: Tensor, *, config: LossConfig
) -> LossOutput:
    """GRPO: PPO-clipped token ratios, token mean per sequence then mean over sequences."""
    mask, log_ratio, adv = _prepare(logps, old_logps, advantages, mask)
    return _token_clip_loss(torch.exp(log_ratio), adv, mask, log_ratio,
                            config.epsilon_low, config.epsilon_high)


def gspo(
    logps: Tensor, old_logps: Tensor, advantages: Tensor, mask: Tensor, *, config: LossConfig
) -> LossOutput:
    """GSPO: one length-normalised ratio per sequence, clipped as a whole (the unit the reward
    scores); per-token advantages enter as their mean over the sequence (GSPO-token keeps them)."""
    mask, log_ratio, adv = _prepare(logps, old_logps, advantages, mask)
    s = torch.exp(_clamp_log(_seq_mean(log_ratio, mask)))  # (B,)
    eps_low, eps_high = config.gspo_epsilon_low, config.gspo_epsilon_high
    seq_adv = _seq_mean(adv.expand_as(log_ratio), mask)  # (B,)
    per_seq, clipped = _clipped_surrogate(s, seq_adv, eps_low, eps_high)
    stats = _common_stats(log_ratio, mask) | {"clip_fraction": float(clipped.mean())}
    return LossOutput(per_seq.mean(), "sequence", stats)


def gspo_token(
    logps: Tensor, old_logps: Tensor, advantages: Tensor, mask: Tensor, *, config: LossConfig
) -> LossOutput:
    """GSPO-token: every token carries the sequence ratio's value but its own gradient path, so
    per-token advantages apply; with one advantage per sequence it equals GSPO."""
    mask, log_ratio, adv = _prepare(logps, old_logps, advantages, mask)
    log_s = _clamp_log(_seq_mean(log_ratio, mask)).detach().unsqueeze(-1)  # (B, 1)
    s_tok = torch.exp(log_s + _where(mask, logps - logps.detach()))  # (B, L), value s_i
    return _token_clip_loss(s_tok, adv, mask, log_ratio,
                            config.gspo_epsilon_low, config.gspo_epsilon_high)


def _token_clip_loss(ratio: Tensor, adv: Tensor, mask: Tensor, log_ratio: Tensor,
                     eps_low: float, eps_high: float) -> LossOutput:
    """Clipped surrogate per token (B, L), token mean per sequence, then mean over sequences."""
    per_token, clipped = _clipped_surrogate(ratio, adv, eps_low, eps_high)
    stats = _common_stats(log_ratio, mask) | {"clip_fraction": float(_token_mean(clipped, mask))}
    return LossOutput(_seq_mean(per_token, mask).mean(), "sequence", stats)


def sapo(
    logps: Tensor, old_logps: Tensor, advantages: Tensor, mask: Tensor, *, config: LossConfig
) -> LossOutput:
    """SAPO: a smooth sigmoid gate instead of a hard clip, so off-policy tokens are damped, not cut."""
    mask, log_ratio, adv = _prepare(logps, old_logps, advantages, mask)
    ratio = torch.exp(log_ratio)
    tau = torch.where(adv > 0, config.sapo_tau_pos, config.sapo_tau_neg).to(logps.dtype)  # (B, 1)
    gate = torch.sigmoid(tau * (ratio - 1))
    loss = _seq_mean(-gate * 4 / tau * adv, mask).mean()
    # f'(r) = 4 sigma (1 - sigma): the share of the plain policy gradient the gate lets through (1 on-policy)
    slope = (4 * gate * (1 - gate)).detach()
    stats = _common_stats(log_ratio, mask) | {"soft_gate_mean": float(_token_mean(slope, mask))}
    return LossOutput(loss, "sequence", stats)


def vespo(
    logps: Tensor, old_logps: Tensor, advantages: Tensor, mask: Tensor, *, config: LossConfig
) -> LossOutput:
    """VESPO: REINFORCE scaled by a detached gamma weight phi(W) of the sequence ratio, which is 1 at W = 1
    and vanishes for W -> 0 or large W, damping stale sequences without a hard clip."""
    mask, log_ratio, adv = _prepare(logps, old_logps, advantages, mask)
    with torch.no_grad():
        log_w = _seq_log_ratio(log_ratio, mask).unsqueeze(-1)  # (B, 1)
        nonneg = adv >= 0  # (B, 1), or (B, L) with per-token advantages
        k = torch.where(nonneg, config.vespo_k_pos, config.vespo_k_neg).to(logps.dtype)
        lam = torch.where(nonneg, config.vespo_lambda_pos, config.vespo_lambda_neg).to(logps.dtype)
        phi = torch.exp(lam + k * log_w - lam * torch.exp(log_w))
        phi = phi.nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)  # like adv: (B, 1) or (B, L)
    per_token = -phi * adv * logps
    if config.vespo_reduction == "sequence":
        loss = _seq_mean(per_token, mask).mean()
    else:
        loss = _token_mean(per_token, mask)
    phi_mean = _seq_mean(phi.expand_as(logps), mask).mean()  # over episodes
    stats = _common_stats(log_ratio, mask) | {"phi_mean": float(phi_mean)}
    return LossOutput(loss, config.vespo_reduction, stats)


LOSSES: dict[str, LossFn] = {
    "grpo": grpo,
    "gspo": gspo,
    "gspo-token": gspo_token,
    "sapo": sapo,
    "vespo": vespo,
}


def get_loss(name: str) -> LossFn:
    """The loss function registered as ``name``."""
    try:
        return LOSSES[name]
    except KeyError:
        raise UsageError(f"unknown loss {name!r}; choose from {', '.join(sorted(LOSSES))}") from None


def group_advantages(rewards: Tensor, groups: Tensor, eps: float = 1e-4) -> Tensor:
    """Group-relative advantages (B,): (R_i - mean) / (std + eps) over i's group, unbiased std as in TRL.

    The group is the baseline, so no critic is needed; a group of one has no baseline and gets 0.
    """
    rewards = rewards.to(torch.promote_types(rewards.dtype, torch.float32))
    _, idx = torch.unique(groups, return_inverse=True)  # (B,) dense group index
    n_groups = int(idx.max()) + 1 if idx.numel() else 0
    count = torch.zeros(n_groups, dtype=rewards.dtype, device=rewards.device).index_add_(
        0, idx, torch.ones_like(rewards)
    )
    mean = torch.zeros_like(count).index_add_(0, idx, rewards) / count
    centred = rewards - mean[idx]
    var = torch.zeros_like(count).index_add_(0, idx, centred**2) / (count - 1).clamp(min=1)
    adv = centred / (var.sqrt()[idx] + eps)
    return torch.where(count[idx] > 1, adv, torch.zeros_like(adv))


def returns_to_go(rewards: Tensor) -> Tensor:
    """(T,) per-turn rewards -> (T,) undiscounted returns G_t = sum_{k >= t} r_k. With
    potential-based progress rewards G_t = Phi(s_T) - Phi(s_t) + success: the progress made
    from turn t to the end (Phi(s_t) acts as a per-state baseline)."""
    return rewards.flip(0).cumsum(0).flip(0)


def group_turn_advantages(returns: list[Tensor], groups: Tensor, eps: float = 1e-4) -> list[Tensor]:
    """Per-turn advantages: each turn's return normalised over every turn of its group's episodes
    (the group's pooled mean and std), so a turn after which the episode progressed more than
    its group's turns did is pushed up. ``returns[i]`` is episode i's (T_i,) returns."""
    if not returns:
        return []
    counts = [len(r) for r in returns]
    turn_groups = groups.repeat_interleave(torch.tensor(counts, device=groups.device))
    flat = group_advantages(torch.cat(returns), turn_groups, eps)
    return list(flat.split(counts))
