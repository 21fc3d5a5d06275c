"""CUDA paths of the trainer (bf16 sampling over fp32 weights, learning); `scripts/test.sh -m gpu`
on a GPU machine (it installs the SmolLM2 weights too). In a folder of their own: the device's
kit (scripts/gpu_kit.sh) has no browser, and the trainer tests' fixtures build worlds in one."""

from __future__ import annotations

import pytest
import torch

from tests.train.test_static_decode import assert_same_replies, decoded
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
def test_bf16_sampling_and_one_small_update_on_cuda(model_name: str) -> None:
    model, tokenizer = load_policy(model_name, device="cuda")
    engine = TransformersEngine(model, tokenizer, SamplingSettings(max_new_tokens=16,
                                                                   precision="bf16"))
    gens = engine.generate([PROMPT] * 4, torch.Generator().manual_seed(0))
    assert all(g.completion_ids and len(g.logprobs) == len(g.completion_ids) for g in gens)
    episodes = [EpisodeRecord("t", 0, i, 0, [TurnRecord(g.prompt_ids, g.completion_ids,
                                                        g.logprobs)], reward=float(i % 2))
                for i, g in enumerate(gens)]
    with torch.no_grad():
        learner_logps = reply_logps(model, turn_batch(episodes, tokenizer.pad_token_id))
    # bf16 sampled, rescored in fp32: on-policy W = 1
    assert (learner_logps.cpu() - behaviour_logps(episodes)).abs().max() < 1e-4
    before = {k: v.clone() for k, v in model.state_dict().items()}
    config = RLConfig(algo="vespo", learning_rate=1e-6, warmup_steps=0, temperature=1.0)
    stats = Learner(model, tokenizer.pad_token_id, config).update(episodes, 1)
    assert stats["grad_norm"] > 0 and torch.isfinite(torch.tensor(stats["loss"]))
    moved = [(model.state_dict()[k] != v).float().mean().item() for k, v in before.items()]
    assert sum(moved) / len(moved) > 0.9  # fp32 master weights keep a 1e-6 step


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_cuda_graph_decoding_answers_as_the_dynamic_cache(precision: str) -> None:
    """Each token a CUDA graph replay over the static cache: the same replies and log-probs
    (bf16 ones rescored in fp32) as the dynamic cache, rows stopping unevenly."""
    dynamic, graphed = (decoded(cache, device="cuda", precision=precision)
                        for cache in ("dynamic", "static"))
    assert len({len(g.completion_ids) for g in dynamic}) > 1
    assert_same_replies(dynamic, graphed, atol=1e-4)
