"""The shared prompt prefix: run once, the same samples, log-probs and gradients as R times."""

from __future__ import annotations

import torch

from webworld.data.prompting import SYSTEM_PROMPT
from webworld.train.batch import EpisodeRecord, TurnRecord, reply_logps, turn_batch
from webworld.train.engine import SamplingSettings, TransformersEngine
from webworld.train.models import load_policy
from webworld.train.prefix import MIN_SHARED, shared_prefix


def test_shared_prefix_length() -> None:
    head = list(range(100, 100 + MIN_SHARED + 4))
    rows = [head + [1, 2], head + [1, 3, 4], head + [9]]
    assert shared_prefix(rows, limit=1000) == MIN_SHARED + 4
    assert shared_prefix(rows, limit=MIN_SHARED + 1) == MIN_SHARED + 1
    assert shared_prefix([head + [1], head[:5] + [7] * 30], limit=1000) == 0   # too short
    assert shared_prefix([head], limit=1000) == 0                               # one row
    assert shared_prefix([head + [1], head + [1]], limit=1000) == MIN_SHARED + 5


def _prompts() -> list[list[dict[str, str]]]:
    system = {"role": "system", "content": SYSTEM_PROMPT}
    return [[system, {"role": "user", "content": f"Task: open the page {'x ' * n}"}]
            for n in (1, 7, 3, 12)]


def test_engine_samples_the_same_with_and_without_a_shared_prefix() -> None:
    model, tokenizer = load_policy("tiny", seed=3)
    runs = {}
    for share in (True, False):
        engine = TransformersEngine(model, tokenizer, SamplingSettings(
            max_new_tokens=10, temperature=1.0, share_prefix=share))
        runs[share] = engine.generate(_prompts(), torch.Generator().manual_seed(5))
    for a, b in zip(runs[True], runs[False], strict=True):
        assert a.prompt_ids == b.prompt_ids and a.completion_ids == b.completion_ids
        assert torch.allclose(torch.tensor(a.logprobs), torch.tensor(b.logprobs), atol=1e-5)


def test_learner_scores_and_gradients_equal_with_a_shared_prefix() -> None:
    model, tokenizer = load_policy("tiny", seed=4)
    engine = TransformersEngine(model, tokenizer, SamplingSettings(max_new_tokens=8))
    generations = engine.generate(_prompts(), torch.Generator().manual_seed(1))
    episodes = [EpisodeRecord("t", 0, 0, 0, [TurnRecord(g.prompt_ids, g.completion_ids,
                                                        g.logprobs)]) for g in generations]
    sampled = torch.tensor([lp for g in generations for lp in g.logprobs])
    results = {}
    for share in (True, False):
        batch = turn_batch(episodes, tokenizer.pad_token_id, share_prefix=share)
        assert (batch.shared > 100) == share
        model.zero_grad()
        logps = reply_logps(model, batch)
        (logps * torch.linspace(-1, 1, len(logps))).sum().backward()
        results[share] = logps.detach(), [p.grad.clone() for p in model.parameters()]
    assert torch.allclose(results[True][0], results[False][0], atol=1e-5)
    assert torch.allclose(results[True][0], sampled, atol=1e-5)   # the sampler agrees
    for shared_grad, plain_grad in zip(results[True][1], results[False][1], strict=True):
        assert torch.allclose(shared_grad, plain_grad, atol=1e-5, rtol=1e-4)
