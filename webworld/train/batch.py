"""Episodes as tensors: the turns a learner re-scores, and each episode's policy tokens as one
sequence for the losses.

An episode of T turns is T rows (prompt + reply); only reply tokens are scored, so an
observation or prompt token never enters a loss. :func:`episode_sequences` lays each
episode's reply tokens end to end, (B, L), which is what sequence-level weights (GSPO,
VESPO) are computed over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from webworld.train.prefix import prefix_cache, shared_prefix


@dataclass
class TurnRecord:
    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]              # behaviour log-probs (the sampler's)
    reward: float = 0.0                # the env's reward for this turn's action


@dataclass
class EpisodeRecord:
    """One played episode: what the learner needs and what the metrics report."""

    task: str
    group: int                         # episodes of one group share a task instance
    seed: int
    version: int                       # the policy version that played it
    turns: list[TurnRecord] = field(default_factory=list)
    reward: float = 0.0                # the return: the sum of the turns' rewards
    success: bool = False
    errors: int = 0                    # steps the env refused (unparsable, unknown id, ...)

    @property
    def policy_tokens(self) -> int:
        return sum(len(t.completion_ids) for t in self.turns)

    @property
    def prompt_tokens(self) -> int:
        return sum(len(t.prompt_ids) for t in self.turns)


@dataclass
class TurnBatch:
    """Rows of prompt + reply, right-padded, and where each reply token sits."""

    input_ids: torch.Tensor            # (R, S)
    attention_mask: torch.Tensor       # (R, S)
    rows: torch.Tensor                 # (N,) row of each reply token, episode by episode
    positions: torch.Tensor            # (N,) column of each reply token
    targets: torch.Tensor              # (N,) the reply token ids
    lengths: list[int]                 # reply tokens per episode (sums to N)
    shared: int = 0                    # leading tokens every row has (computed once), or 0


def turn_batch(episodes: list[EpisodeRecord], pad_id: int, share_prefix: bool = True
               ) -> TurnBatch:
    """Every turn of the episodes, one row each; ``lengths`` per episode."""
    turns = [t for ep in episodes for t in ep.turns]
    return reply_batch([(t.prompt_ids, t.completion_ids) for t in turns],
                       [ep.policy_tokens for ep in episodes], pad_id, share_prefix)


def reply_batch(rows: list[tuple[list[int], list[int]]], lengths: list[int], pad_id: int,
                share_prefix: bool = True) -> TurnBatch:
    """(prompt ids, reply ids) rows as a :class:`TurnBatch`; ``lengths`` groups the reply
    tokens (per episode for RL, per row for SFT)."""
    # the token before the first reply token predicts it, so that one is never shared
    shared = shared_prefix([p for p, _ in rows],
                           min(len(p) for p, _ in rows) - 1) if share_prefix else 0
    width = max(len(p) + len(c) for p, c in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    row_of, positions = [], []
    for r, (prompt, reply) in enumerate(rows):
        seq = prompt + reply
        ids[r, :len(seq)] = torch.tensor(seq)
        attention[r, :len(seq)] = 1
        row_of += [r] * len(reply)
        positions += range(len(prompt), len(seq))
    rows_t = torch.tensor(row_of, dtype=torch.long)
    pos_t = torch.tensor(positions, dtype=torch.long)
    return TurnBatch(ids, attention, rows_t, pos_t, ids[rows_t, pos_t], lengths, shared)


def reply_logps(model: Any, batch: TurnBatch, temperature: float = 1.0) -> torch.Tensor:
    """(N,) log pi(token) of every reply token, in :class:`TurnBatch` order."""
    return reply_log_softmax(model, batch, temperature).gather(
        1, batch.targets.to(next(model.parameters()).device)[:, None]).squeeze(1)


def reply_log_softmax(model: Any, batch: TurnBatch, temperature: float = 1.0) -> torch.Tensor:
    """(N, V) log pi(. | context) at every reply token's position, in fp32."""
    return torch.log_softmax(reply_logits(model, batch) / (temperature or 1.0), -1)


def reply_logits(model: Any, batch: TurnBatch) -> torch.Tensor:
    """(N, V) the logits that predict every reply token, in fp32.

    The LM head runs only on the positions that predict reply tokens (a vocabulary-wide
    row for every prompt token would be most of the memory); a prefix all rows share runs
    once (:mod:`webworld.train.prefix`)."""
    device = next(model.parameters()).device
    ids, attention = batch.input_ids.to(device), batch.attention_mask.to(device)
    shared, decoder = batch.shared, model.get_decoder()
    if shared:
        cache = prefix_cache(model, ids[:1, :shared], len(ids))
        columns = torch.arange(shared, ids.shape[1], device=device)[None].expand(len(ids), -1)
        hidden = decoder(input_ids=ids[:, shared:], attention_mask=attention, position_ids=columns,
                         cache=cache, use_cache=True).last_hidden_state  # (R, S-shared, H)
    else:
        hidden = decoder(input_ids=ids, attention_mask=attention).last_hidden_state
    # (N, H): the hidden state before each reply token predicts it
    before = hidden[batch.rows.to(device), batch.positions.to(device) - 1 - shared]
    return model.get_output_embeddings()(before).float()


def episode_sequences(flat: torch.Tensor, lengths: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """(N,) values laid out episode by episode -> ((B, L) padded with 0, (B, L) mask)."""
    width = max(max(lengths), 1)
    index = torch.arange(width, device=flat.device)[None, :]
    mask = index < torch.tensor(lengths, device=flat.device)[:, None]       # (B, L)
    out = flat.new_zeros((len(lengths), width))
    return out.masked_scatter(mask, flat), mask.to(flat.dtype)


def behaviour_logps(episodes: list[EpisodeRecord]) -> torch.Tensor:
    """(N,) the sampler's log-probs, in :class:`TurnBatch` order."""
    return torch.tensor([lp for ep in episodes for t in ep.turns for lp in t.logprobs],
                        dtype=torch.float32)
