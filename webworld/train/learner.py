"""The learner: group advantages, N minibatches per rollout batch, micro-batches of whole
episodes (sequence-level weights need all of an episode's tokens in one graph), one
optimiser step per minibatch, and the statistics of every step.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import torch

from webworld.train.batch import (
    EpisodeRecord,
    behaviour_logps,
    episode_sequences,
    reply_logps,
    turn_batch,
)
from webworld.train.config import RLConfig
from webworld.train.losses import LossOutput, get_loss, group_advantages


class Learner:
    def __init__(self, model: Any, pad_id: int, config: RLConfig) -> None:
        self.model, self.pad_id, self.config = model, pad_id, config
        self.loss_fn = get_loss(config.algo)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate,
                                           weight_decay=config.weight_decay)
        self.version = 0            # rollout batches learnt from
        self.optimizer_steps = 0

    def update(self, episodes: list[EpisodeRecord], index: int) -> dict[str, float]:
        """Learn from one rollout batch; returns the step's statistics."""
        episodes = [e for e in episodes if e.turns]
        rewards = torch.tensor([e.reward for e in episodes], dtype=torch.float32)
        groups = torch.tensor([e.group for e in episodes], dtype=torch.long)
        advantages = group_advantages(rewards, groups)
        order = np.random.default_rng([self.config.seed, index, 2]).permutation(len(episodes))
        stats: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.model.train()
        for chunk in np.array_split(order, self.config.minibatches):
            if len(chunk):
                self._minibatch([episodes[i] for i in chunk], advantages[chunk], stats)
        self.version += 1
        out = {k: _combine(k, v) for k, v in stats.items()}
        out["learned_episodes"] = float(sum(a != 0 for a in advantages.tolist()))
        return out

    def _minibatch(self, episodes: list[EpisodeRecord], advantages: torch.Tensor,
                   stats: dict[str, list[tuple[float, float]]]) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        sequences = len(episodes)
        tokens = sum(e.policy_tokens for e in episodes)
        # an episode whose advantage is 0 adds 0 to every loss: it is counted, not computed
        useful = [i for i in range(sequences) if advantages[i] != 0]
        total = 0.0
        for micro in self._micro_batches([episodes[i] for i in useful], useful):
            out = self._micro(episodes, advantages, micro)
            share = len(micro) / sequences if out.reduction == "sequence" else \
                sum(episodes[i].policy_tokens for i in micro) / tokens
            (out.loss * share).backward()
            for key, value in out.stats.items():
                stats[key].append((value, len(micro)))
            total += float(out.loss.detach()) * share
        stats["loss"].append((total, 1.0))
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
        stats["grad_norm"].append((float(norm), 1.0))
        self.optimizer.step()
        self.optimizer_steps += 1

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

    def _micro(self, episodes: list[EpisodeRecord], advantages: torch.Tensor, micro: list[int]
               ) -> LossOutput:
        chosen = [episodes[i] for i in micro]
        batch = turn_batch(chosen, self.pad_id)
        logps = reply_logps(self.model, batch, self.config.temperature)
        device = logps.device
        seq_logps, mask = episode_sequences(logps, batch.lengths)
        old, _ = episode_sequences(behaviour_logps(chosen).to(device), batch.lengths)
        return self.loss_fn(seq_logps, old, advantages[micro].to(device), mask,
                            config=self.config.loss)

    def state_dict(self) -> dict[str, Any]:
        return {"optimizer": self.optimizer.state_dict(), "version": self.version,
                "optimizer_steps": self.optimizer_steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.version, self.optimizer_steps = state["version"], state["optimizer_steps"]


def _combine(key: str, values: list[tuple[float, float]]) -> float:
    """Maxima for maxima, else means weighted by sequences (the loss: by minibatch)."""
    if key.endswith("_max"):
        return max(v for v, _ in values)
    weight = sum(w for _, w in values)
    return sum(v * w for v, w in values) / weight if weight else 0.0
