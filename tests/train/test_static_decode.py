"""The static KV cache decodes as the dynamic one: the same replies and log-probs for prompts of
several lengths (left padding), with and without a shared prefix, rows stopping at different
tokens, sampled and greedy. (On a GPU each step is a CUDA graph replay: tests/gpu.)"""

from __future__ import annotations

import pytest
import torch

from webworld.data.prompting import SYSTEM_PROMPT
from webworld.train.engine import SamplingSettings, TransformersEngine, stop_token_ids
from webworld.train.models import load_policy

STOP_BIAS = 6.0  # rows of 4 to 24 tokens (seed 7)


def _prompts() -> list[list[dict[str, str]]]:
    system = {"role": "system", "content": SYSTEM_PROMPT}
    return [[system, {"role": "user", "content": f"Task: open the page {'x ' * n}"}]
            for n in (1, 9, 4, 15, 2)]


def decoded(cache: str, *, share: bool = True, temperature: float = 1.0, seed: int = 7,
            device: str = "cpu", precision: str = "fp32") -> list:
    """The tiny policy's replies to :func:`_prompts` with the ``cache`` given."""
    model, tokenizer = load_policy("tiny", seed=seed, device=device)
    stop = stop_token_ids(tokenizer)[-1]

    def likelier_stop(module: torch.nn.Module, inputs: tuple, logits: torch.Tensor) -> torch.Tensor:
        logits[..., stop] += STOP_BIAS  # a random policy rarely stops: here rows stop unevenly
        return logits

    model.lm_head.register_forward_hook(likelier_stop)
    engine = TransformersEngine(model, tokenizer, SamplingSettings(
        max_new_tokens=24, temperature=temperature, share_prefix=share, cache=cache,
        precision=precision))
    return engine.generate(_prompts(), torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(("share", "temperature"), [(True, 1.0), (False, 1.0), (True, 0.0)])
def test_static_cache_decodes_as_the_dynamic_one(share: bool, temperature: float) -> None:
    dynamic, static = (decoded(c, share=share, temperature=temperature)
                       for c in ("dynamic", "static"))
    if temperature:  # rows stopped at different tokens: the mask of a stopped row
        assert len({len(g.completion_ids) for g in dynamic}) > 1
    assert_same_replies(dynamic, static, atol=1e-5)


def assert_same_replies(first: list, second: list, atol: float) -> None:
    for a, b in zip(first, second, strict=True):
        assert a.completion_ids == b.completion_ids and a.text == b.text
        torch.testing.assert_close(torch.tensor(b.logprobs), torch.tensor(a.logprobs),
                                   atol=atol, rtol=0)


def test_the_cache_setting_is_checked_and_auto_is_dynamic_on_a_cpu() -> None:
    model, tokenizer = load_policy("tiny", seed=1)
    auto = TransformersEngine(model, tokenizer, SamplingSettings())
    assert not auto._static_cache(torch.device("cpu")) and auto._static_cache(torch.device("cuda"))
    with pytest.raises(ValueError, match="auto, static or dynamic"):
        SamplingSettings(cache="paged")
