"""A prompt prefix that every row of a batch shares, run through the model once.

Every turn's prompt starts with the same system prompt (the action language: about half of a
compact turn's tokens), so a batch of rows repeats it R times. Both the engine's prefill and
the learner's re-scoring run it once instead and repeat its KV cache for the rows; the
maths is unchanged (the rows' tokens attend to the same keys and values, and gradients flow
back through the repeated cache into the one prefix pass).
"""

from __future__ import annotations

from typing import Any

import torch

MIN_SHARED = 16     # below this the extra forward pass costs more than it saves


def shared_prefix(rows: list[list[int]], limit: int) -> int:
    """Tokens all rows start with, at most ``limit``; 0 when that is under :data:`MIN_SHARED`
    or there is a single row (nothing to share)."""
    if len(rows) < 2:
        return 0
    first, length = rows[0], min(limit, *(len(r) for r in rows))
    for row in rows[1:]:
        same = 0
        while same < length and row[same] == first[same]:
            same += 1
        length = same
    return length if length >= MIN_SHARED else 0


def prefix_cache(model: Any, prefix: torch.Tensor, rows: int) -> Any:
    """The KV cache of ``prefix`` (1, P), repeated for ``rows`` rows (differentiable)."""
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    model.get_decoder()(input_ids=prefix, cache=cache, use_cache=True)
    cache.batch_repeat_interleave(rows)
    return cache
