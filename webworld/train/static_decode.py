"""Reply decoding with a static KV cache, replayed as one CUDA graph per token on a GPU.

Sampling a 135M policy on a GPU is bound by kernel launches, not arithmetic: a whole-task RL
batch took about 3 s a turn for at most 64 short replies on an H200
(experiments/smollm2_gpu/whole_tasks.md). Each token's forward pass launches hundreds of small
kernels from Python, and the dynamic cache grows by concatenation. Here the cache holds the
prompt and every reply token from the start (transformers' ``StaticCache``), the attention
mask is a fixed 4D buffer written in place, and one token's forward pass is recorded once per
batch as a CUDA graph and replayed for each token. On a CPU the same static step runs as it
is (no graph): the tests compare it with the dynamic cache token for token.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch


class StaticDecoder:
    """The decoding steps after a prefill: ``next_logits`` feeds one token per row and returns
    the logits of the next. Built from the prefill's dynamic ``cache`` of the batch's
    ``attention`` (rows, L) and the rows' last ``positions`` (rows, 1), with room for
    ``new_tokens`` more."""

    def __init__(self, model: Any, cache: Any, attention: torch.Tensor, positions: torch.Tensor,
                 new_tokens: int, *, graph: bool) -> None:
        from transformers import StaticCache

        self.model, self.length = model, attention.shape[1]
        self.cache = StaticCache(config=model.config, max_cache_len=self.length + new_tokens)
        for static, dynamic in zip(self.cache.layers, cache.layers, strict=True):
            static.lazy_initialization(dynamic.keys, dynamic.values)
            static.keys[:, :, :self.length].copy_(dynamic.keys)
            static.values[:, :, :self.length].copy_(dynamic.values)
        self._rewind()
        # True where a row attends: its prompt now, each reply token as it comes (a row that
        # has stopped attends to none of its padding)
        rows = attention.shape[0]
        self.mask = torch.zeros((rows, 1, 1, self.length + new_tokens), dtype=torch.bool,
                                device=attention.device)
        self.mask[:, 0, 0, :self.length] = attention.bool()
        self.token = torch.zeros(rows, 1, dtype=torch.long, device=attention.device)
        self.position = positions.clone()
        self.steps = 0
        self.graph: torch.cuda.CUDAGraph | None = None
        if graph:
            self._capture()

    def next_logits(self, token: torch.Tensor, live: torch.Tensor) -> torch.Tensor:
        """Logits (rows, vocab) after ``token`` (rows,), which the rows in ``live`` keep as
        part of their reply (the others' are padding after their stop)."""
        self.mask[:, 0, 0, self.length + self.steps] = live
        self.token.copy_(token[:, None])
        self.position.add_(1)
        self.steps += 1
        if self.graph is None:
            return self._forward()
        self.graph.replay()
        return self.logits.clone()  # the graph writes its output buffer again next step

    def _forward(self) -> torch.Tensor:
        return self.model(input_ids=self.token, attention_mask=self.mask,
                          position_ids=self.position, cache=self.cache,
                          use_cache=True).logits[:, -1, :]

    def _rewind(self) -> None:
        """Each layer writes its next keys and values at column ``length`` again."""
        for layer in self.cache.layers:
            layer.cumulative_length.fill_(self.length)

    def _capture(self) -> None:
        """Record one step. A warm-up step first, on a side stream as CUDA graphs need: it
        writes column ``length`` of the cache, which the first real step writes again."""
        with _uncached_autocast():
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                self._forward()
            torch.cuda.current_stream().wait_stream(stream)
            self._rewind()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.logits = self._forward()


def _uncached_autocast() -> contextlib.AbstractContextManager[Any]:
    """Under bf16 autocast, the casts of the weights recorded in the graph itself: autocast's
    cache of cast weights is freed when its block ends, which a graph would outlive."""
    if not torch.is_autocast_enabled("cuda"):
        return contextlib.nullcontext()
    return torch.autocast("cuda", dtype=torch.get_autocast_dtype("cuda"), cache_enabled=False)
