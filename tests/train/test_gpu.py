"""CUDA paths of the trainer (bf16 generation and learning); `scripts/test.sh -m gpu` on a GPU
machine (it installs the SmolLM2 weights too)."""

from __future__ import annotations

import pytest
import torch

from webworld.train.batch import EpisodeRecord, TurnRecord, behaviour_logps, reply_logps, turn_batch
from webworld.train.config import RLConfig
from webworld.train.engine import SamplingSettings, TransformersEngine
from webworld.train.learner import Learner
from webworld.train.models import load_policy

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

PROMPT = [{"role": "system", "content": "You are a web agent."},
          {"role": "user", "content": "Task: open the cart\nPage:\n[3] link 'Cart'"}]


@pytest.mark.parametrize("model_name", ["tiny", "smollm2"])
def test_bf16_generation_and_one_update_on_cuda(model_name: str) -> None:
    model, tokenizer = load_policy(model_name, device="cuda", dtype=torch.bfloat16)
    engine = TransformersEngine(model, tokenizer, SamplingSettings(max_new_tokens=16))
    gens = engine.generate([PROMPT] * 4, torch.Generator().manual_seed(0))
    assert all(g.completion_ids and len(g.logprobs) == len(g.completion_ids) for g in gens)
    episodes = [EpisodeRecord("t", 0, i, 0, [TurnRecord(g.prompt_ids, g.completion_ids,
                                                        g.logprobs)], reward=float(i % 2))
                for i, g in enumerate(gens)]
    with torch.no_grad():
        learner_logps = reply_logps(model, turn_batch(episodes, tokenizer.pad_token_id))
    # bf16 sampler and learner agree closely (the training-inference mismatch VESPO weighs)
    assert (learner_logps.cpu() - behaviour_logps(episodes)).abs().mean() < 0.1
    stats = Learner(model, tokenizer.pad_token_id, RLConfig(algo="vespo")).update(episodes, 1)
    assert stats["grad_norm"] > 0 and torch.isfinite(torch.tensor(stats["loss"]))
