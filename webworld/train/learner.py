"""The learner: group advantages, N minibatches per rollout batch, micro-batches of whole
episodes (sequence-level weights need all of an episode's tokens in one graph), one
optimiser step per minibatch, and what each step did to the policy.

The weights, their gradients and AdamW's moments are fp32 whatever the rollout engine samples
in, so an update of lr 1e-6 is not rounded away; the log-probs that enter every ratio are fp32
too. The learning rate warms up linearly over the first ``warmup_steps`` optimiser steps: Adam's
first step moves every weight by about lr, whatever the gradient's size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from webworld.train.batch import (
    EpisodeRecord,
    behaviour_logps,
    episode_sequences,
    reply_log_softmax,
    turn_batch,
)
from webworld.train.config import RLConfig
from webworld.train.defaults import rl_learning_rate
from webworld.train.engine import evaluating
from webworld.train.losses import (
    LOG_RATIO_CLAMP,
    LossOutput,
    get_loss,
    group_advantages,
    group_turn_advantages,
    returns_to_go,
)
from webworld.train.models import train_top_layers


@dataclass
class _Drift:
    """Token log-ratios log pi/mu of one minibatch, gathered over its micro-batches."""

    log_ratios: list[torch.Tensor] = field(default_factory=list)

    def add(self, rho: torch.Tensor) -> None:
        self.log_ratios.append(rho.detach().float().cpu())

    def stats(self, prefix: str) -> dict[str, float]:
        rho = torch.cat(self.log_ratios) if self.log_ratios else torch.zeros(1)
        rho = rho.clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
        size = rho.abs()
        # k3 estimator of KL(mu || pi) from tokens sampled by mu: E[r - 1 - log r] >= 0
        kl = (rho.exp() - 1 - rho).mean()
        return {f"{prefix}kl": float(kl),
                f"{prefix}log_ratio_abs_p50": float(size.quantile(0.5)),
                f"{prefix}log_ratio_abs_p99": float(size.quantile(0.99))}


class Learner:
    def __init__(self, model: Any, pad_id: int, config: RLConfig) -> None:
        self.model, self.pad_id, self.config = model, pad_id, config
        self.loss_fn = get_loss(config.algo)
        self.optimizer = torch.optim.AdamW(train_top_layers(model, config.train_layers or 0),
                                           lr=config.learning_rate or rl_learning_rate(model),
                                           weight_decay=config.weight_decay,
                                           eps=config.adam_epsilon)
        warmup = config.warmup_steps
        self.schedule = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: min(1.0, (step + 1) / warmup) if warmup else 1.0)
        self.version = 0            # rollout batches learnt from
        self.optimizer_steps = 0

    def update(self, episodes: list[EpisodeRecord], index: int) -> dict[str, Any]:
        """Learn from one rollout batch; returns the step's statistics, with one record per
        optimiser step under ``updates``."""
        episodes = [e for e in episodes if e.turns]
        groups = torch.tensor([e.group for e in episodes], dtype=torch.long)
        advantages = self._token_advantages(episodes, groups)
        order = np.random.default_rng([self.config.seed, index, 2]).permutation(len(episodes))
        updates = []
        with evaluating(self.model):  # no dropout: the learner scores what the engine sampled
            for chunk in np.array_split(order, self.config.minibatches):
                if len(chunk):
                    updates.append(self._minibatch([episodes[i] for i in chunk],
                                                   [advantages[i] for i in chunk]))
        self.version += 1
        out = combine(updates)
        out["updates"] = updates
        moved = torch.tensor([bool(a.any()) for a in advantages], dtype=torch.bool)
        out["learned_episodes"] = float(moved.sum())
        out["zero_advantage_groups"] = zero_advantage_share(moved.float(), groups)
        return out

    def _token_advantages(self, episodes: list[EpisodeRecord], groups: torch.Tensor
                          ) -> list[torch.Tensor]:
        """Each episode's advantage at each of its reply tokens, (tokens,): with success
        rewards the episode's group advantage on every token; with progress rewards each
        turn's own, from its return to go (:func:`group_turn_advantages`)."""
        if self.config.reward == "progress":
            returns = [returns_to_go(torch.tensor([t.reward for t in e.turns]))
                       for e in episodes]
            per_turn = group_turn_advantages(returns, groups)
        else:
            rewards = torch.tensor([e.reward for e in episodes], dtype=torch.float32)
            advantages = group_advantages(rewards, groups)
            per_turn = [advantages[i].expand(len(e.turns)) for i, e in enumerate(episodes)]
        return [turn_adv.repeat_interleave(torch.tensor([len(t.completion_ids) for t in e.turns]))
                for e, turn_adv in zip(episodes, per_turn)]

    def _minibatch(self, episodes: list[EpisodeRecord], advantages: list[torch.Tensor]
                   ) -> dict[str, float]:
        self.optimizer.zero_grad(set_to_none=True)
        sequences = len(episodes)
        tokens = sum(e.policy_tokens for e in episodes)
        # an episode whose advantage is 0 adds 0 to every loss: it is counted, not computed
        useful = [i for i in range(sequences) if advantages[i].any()]
        micros = self._micro_batches([episodes[i] for i in useful], useful)
        record: dict[str, float] = {"lr": self.schedule.get_last_lr()[0]}
        if not micros:
            return record | {"loss": 0.0, "grad_norm": 0.0}
        total, entropy, before, loss_stats, dists = 0.0, [], _Drift(), [], []
        for micro in micros:
            out, rho, dist = self._micro(episodes, advantages, micro)
            share = len(micro) / sequences if out.reduction == "sequence" else \
                sum(episodes[i].policy_tokens for i in micro) / tokens
            (out.loss * share).backward()
            total += float(out.loss.detach()) * share
            before.add(rho)
            entropy.append(-(dist.exp() * dist).sum(-1))
            loss_stats.append((out.stats, len(micro)))
            if self.config.measure_drift:
                dists.append(dist)
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
        self.optimizer.step()
        self.schedule.step()
        self.optimizer_steps += 1
        record |= {"loss": total, "grad_norm": float(norm),
                   "entropy": float(torch.cat(entropy).mean()), **before.stats("")}
        record |= _weighted(loss_stats)
        if self.config.measure_drift:
            record |= self._step_drift(episodes, micros, dists)
        return record

    def _micro_batches(self, episodes: list[EpisodeRecord], index: list[int]) -> list[list[int]]:
        """Whole episodes, up to ``micro_batch_tokens`` tokens (padded rows) each."""
        budget, out, current, used = self.config.micro_batch_tokens, [], [], 0
        for ep, i in zip(episodes, index):
            cost = len(ep.turns) * max(len(t.prompt_ids) + len(t.completion_ids) for t in ep.turns)
            if current and used + cost > budget:
                out.append(current)
                current, used = [], 0
            current.append(i)
            used += cost
        return out + [current] if current else out

    def _micro(self, episodes: list[EpisodeRecord], advantages: list[torch.Tensor],
               micro: list[int]) -> tuple[LossOutput, torch.Tensor, torch.Tensor]:
        """The loss of a micro-batch, its token log-ratios log pi/mu, and pi's whole
        distribution at each reply token (detached, (N, V))."""
        chosen = [episodes[i] for i in micro]
        batch = turn_batch(chosen, self.pad_id)
        dist = reply_log_softmax(self.model, batch, self.config.temperature)  # (N, V)
        logps = dist.gather(1, batch.targets.to(dist.device)[:, None]).squeeze(1)
        old_flat = behaviour_logps(chosen).to(dist.device)
        seq_logps, mask = episode_sequences(logps, batch.lengths)
        old, _ = episode_sequences(old_flat, batch.lengths)
        adv, _ = episode_sequences(torch.cat([advantages[i] for i in micro]).to(dist.device),
                                   batch.lengths)  # (B, L)
        out = self.loss_fn(seq_logps, old, adv, mask, config=self.config.loss)
        return out, logps.detach() - old_flat, dist.detach()

    @torch.no_grad()
    def _step_drift(self, episodes: list[EpisodeRecord], micros: list[list[int]],
                    before: list[torch.Tensor]) -> dict[str, float]:
        """How far the step just taken moved the policy, on the reply tokens it learnt from:
        the exact KL(pi_before || pi_after) over the whole vocabulary (mass moved to tokens
        no rollout sampled counts too), and |log pi_after / mu| of the sampled tokens."""
        drift, kl = _Drift(), []
        for micro, old_dist in zip(micros, before):
            chosen = [episodes[i] for i in micro]
            batch = turn_batch(chosen, self.pad_id)
            dist = reply_log_softmax(self.model, batch, self.config.temperature)
            kl.append((old_dist.exp() * (old_dist - dist)).sum(-1))
            logps = dist.gather(1, batch.targets.to(dist.device)[:, None]).squeeze(1)
            drift.add(logps.cpu() - behaviour_logps(chosen))
        stats = drift.stats("step_")
        stats["step_kl"] = float(torch.cat(kl).mean())
        return stats

    def state_dict(self) -> dict[str, Any]:
        return {"optimizer": self.optimizer.state_dict(), "schedule": self.schedule.state_dict(),
                "version": self.version, "optimizer_steps": self.optimizer_steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        if "schedule" in state:
            self.schedule.load_state_dict(state["schedule"])
        self.version, self.optimizer_steps = state["version"], state["optimizer_steps"]


def zero_advantage_share(advantages: torch.Tensor, groups: torch.Tensor) -> float:
    """The fraction of groups whose every advantage is 0 (equal rewards: nothing to learn)."""
    ids = groups.unique()
    if not len(ids):
        return 0.0
    flat = sum(bool((advantages[groups == g] == 0).all()) for g in ids.tolist())
    return flat / len(ids)


def _weighted(stats: list[tuple[dict[str, float], int]]) -> dict[str, float]:
    """Loss statistics of the micro-batches: maxima for maxima, else means by sequences."""
    keys = {k for s, _ in stats for k in s}
    total = sum(w for _, w in stats)
    return {k: max(s[k] for s, _ in stats if k in s) if k.endswith("_max") else
            sum(s.get(k, 0.0) * w for s, w in stats) / total for k in keys}


def combine(updates: list[dict[str, float]]) -> dict[str, float]:
    """One rollout batch's statistics from its optimiser steps: maxima for maxima and p99s,
    the last learning rate, else means."""
    keys = {k for u in updates for k in u}
    out = {}
    for key in keys:
        values = [u[key] for u in updates if key in u]
        if key == "lr":
            out[key] = values[-1]
        elif key.endswith(("_max", "_p99")):
            out[key] = max(values)
        else:
            out[key] = sum(values) / len(values)
    return out
