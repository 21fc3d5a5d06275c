"""Generation for rollouts: the text a policy answers and the behaviour log-probs of every
token it sampled, batched over many episodes.

:class:`Engine` is the interface the rollout and the trainer use; :class:`TransformersEngine`
is the in-process implementation: left-padded batches, a KV cache, and sampling with a seeded
``torch.Generator`` so a run is reproducible and resumable. It samples with the model in eval
mode (no dropout: the learner scores the same function), in fp32 or with bf16 compute over
fp32 weights; after a bf16 sampling pass the behaviour log-probs are computed again in fp32 by
the learner's own scoring (:func:`~webworld.train.batch.reply_logps`), so that on-policy the
learner's pi equals mu and VESPO's W = prod pi/mu stays at 1 however long the episode. Another
engine (vLLM, SGLang) would implement the same three members: ``generate`` returns
:class:`Generation` records with the sampler's own log-probs, ``load_weights`` takes the
learner's weights at a version, ``version`` says which weights it samples with.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from webworld.train.batch import EpisodeRecord, TurnRecord, reply_logps, turn_batch
from webworld.train.models import autocast
from webworld.train.prefix import prefix_cache, shared_prefix
from webworld.train.static_decode import StaticDecoder


@dataclass
class Generation:
    """One sampled reply: token ids (the stop token included when it came) and their
    log-probs under the policy that sampled them (the behaviour policy mu)."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    text: str


class Engine(Protocol):
    version: int

    def generate(self, prompts: list[list[dict[str, str]]], generator: torch.Generator
                 ) -> list[Generation]: ...

    def load_weights(self, state: dict[str, torch.Tensor], version: int) -> None: ...


CPU_BATCH = 16  # prompts per forward pass on a CPU, where each row costs its compute


def default_batch(device: str, waiting: int) -> int:
    """Prompts per generation pass: every waiting one on a GPU, where decoding a small model is
    launch-bound (an H200 eval finished 44 episodes in 64-row batches in the time 16-row
    batches finished 19, experiments/smollm2_gpu/REPORT.md), :data:`CPU_BATCH` on a CPU. The seeded
    draws of a run follow the batches, so the CPU default is kept as the runs were made."""
    return waiting if device.startswith("cuda") else CPU_BATCH


@dataclass
class SamplingSettings:
    max_new_tokens: int = 96
    temperature: float = 1.0          # 0: greedy (log-probs are then of the T=1 policy)
    batch_size: int = CPU_BATCH       # prompts per forward pass
    share_prefix: bool = True         # run the prompts' common prefix once per batch
    precision: str = "fp32"           # fp32, or bf16 compute (then log-probs are rescored in fp32)
    # the reply's KV cache: static (allocated once; on a GPU each token's step is one CUDA
    # graph replay, webworld.train.static_decode), dynamic (grown by concatenation), or auto:
    # static on a GPU, dynamic on a CPU (the CPU runs so far were made with it)
    cache: str = "auto"

    def __post_init__(self) -> None:
        if self.cache not in ("auto", "static", "dynamic"):
            raise ValueError(f"cache must be auto, static or dynamic, not {self.cache!r}")


class TransformersEngine:
    """Samples with a transformers causal LM in this process."""

    def __init__(self, model: Any, tokenizer: Any, settings: SamplingSettings) -> None:
        self.model, self.tokenizer, self.settings = model, tokenizer, settings
        self.version = 0
        self.stop_ids = stop_token_ids(tokenizer)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else \
            self.stop_ids[0]

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def load_weights(self, state: dict[str, torch.Tensor], version: int) -> None:
        self.model.load_state_dict(state)
        self.version = version

    def encode(self, prompts: list[list[dict[str, str]]]) -> list[list[int]]:
        return [self.tokenizer.apply_chat_template(m, tokenize=True, add_generation_prompt=True,
                                                   return_dict=False) for m in prompts]

    def generate(self, prompts: list[list[dict[str, str]]], generator: torch.Generator
                 ) -> list[Generation]:
        encoded = self.encode(prompts)
        # longest first, so each forward pass pads little; answers go back in prompt order
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        out: list[Generation | None] = [None] * len(encoded)
        size = self.settings.batch_size
        with evaluating(self.model):
            for start in range(0, len(order), size):
                chunk = order[start:start + size]
                sampled = self._sample([encoded[i] for i in chunk], generator)
                if self.settings.precision != "fp32":
                    self._rescore(sampled)
                for i, gen in zip(chunk, sampled):
                    out[i] = gen
        return out  # type: ignore[return-value]

    @torch.no_grad()
    def _rescore(self, generations: list[Generation]) -> None:
        """Replace the sampler's reduced-precision log-probs by the learner's fp32 ones."""
        episodes = [EpisodeRecord("", 0, 0, self.version, [TurnRecord(g.prompt_ids,
                                                                      g.completion_ids, [])])
                    for g in generations]
        logps = reply_logps(self.model, turn_batch(episodes, self.pad_id),
                            self.settings.temperature).cpu().tolist()
        for gen in generations:
            gen.logprobs, logps = logps[:len(gen.logprobs)], logps[len(gen.logprobs):]

    @torch.no_grad()
    def _sample(self, prompts: list[list[int]], generator: torch.Generator) -> list[Generation]:
        with autocast(str(self.device), self.settings.precision):
            return self._sample_tokens(prompts, generator)

    def _sample_tokens(self, prompts: list[list[int]], generator: torch.Generator
                       ) -> list[Generation]:
        from transformers import DynamicCache

        device, rows = self.device, len(prompts)
        # every row keeps at least one token of its own: its last position gives the logits
        shared = shared_prefix(prompts, min(len(p) for p in prompts) - 1) \
            if self.settings.share_prefix else 0
        width = max(len(p) for p in prompts) - shared
        ids = torch.full((rows, width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((rows, shared + width), dtype=torch.long)
        attention[:, :shared] = 1
        for r, p in enumerate(prompts):  # left padding: every prompt ends at the same column
            own = p[shared:]
            ids[r, width - len(own):] = torch.tensor(own)
            attention[r, shared + width - len(own):] = 1
        ids, attention = ids.to(device), attention.to(device)
        positions = (attention.cumsum(-1) - 1).clamp(min=0)[:, shared:]
        cache = prefix_cache(self.model, ids.new_tensor([prompts[0][:shared]]), rows) \
            if shared else DynamicCache(config=self.model.config)
        logits = self.model(input_ids=ids, attention_mask=attention, position_ids=positions,
                            cache=cache, use_cache=True, logits_to_keep=1).logits[:, -1, :]
        decoder = StaticDecoder(self.model, cache, attention, positions[:, -1:],
                                self.settings.max_new_tokens, graph=device.type == "cuda") \
            if self._static_cache(device) else None
        stops = torch.tensor(self.stop_ids, device=device)
        done = torch.zeros(rows, dtype=torch.bool, device=device)
        tokens, logps = [], []
        for _ in range(self.settings.max_new_tokens):
            token, logp = self._pick(logits.float(), generator)
            token = torch.where(done, torch.full_like(token, self.pad_id), token)
            tokens.append(token)
            logps.append(torch.where(done, torch.zeros_like(logp), logp))
            live = ~done  # the token just sampled belongs to the reply of a row still going
            done = done | torch.isin(token, stops)
            if bool(done.all()):
                break
            if decoder is not None:
                logits = decoder.next_logits(token, live)
                continue
            attention = torch.cat([attention, live.long()[:, None]], dim=1)
            positions = positions[:, -1:] + 1
            logits = self.model(input_ids=token[:, None], attention_mask=attention,
                                position_ids=positions, cache=cache,
                                use_cache=True).logits[:, -1, :]
        return self._collect(prompts, torch.stack(tokens, 1).cpu(), torch.stack(logps, 1).cpu())

    def _static_cache(self, device: torch.device) -> bool:
        cache = self.settings.cache
        return cache == "static" or (cache == "auto" and device.type == "cuda")

    def _pick(self, logits: torch.Tensor, generator: torch.Generator
              ) -> tuple[torch.Tensor, torch.Tensor]:
        temperature = self.settings.temperature
        logprobs = torch.log_softmax(logits / (temperature or 1.0), dim=-1)
        if temperature == 0:
            token = logprobs.argmax(-1)
        else:
            token = inverse_cdf_draw(logprobs, generator)
        return token, logprobs.gather(1, token[:, None]).squeeze(1)

    def _collect(self, prompts: list[list[int]], tokens: torch.Tensor, logps: torch.Tensor
                 ) -> list[Generation]:
        out = []
        for r, prompt in enumerate(prompts):
            ids, lps = [], []
            for token, logp in zip(tokens[r].tolist(), logps[r].tolist()):
                ids.append(token)
                lps.append(logp)
                if token in self.stop_ids:
                    break
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            out.append(Generation(list(prompt), ids, lps, text))
        return out


def inverse_cdf_draw(logprobs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One token per row of ``logprobs`` (rows, vocab), drawn by inverting the row's CDF at a
    uniform from the CPU ``generator``: the same draws on any device for a given seed, with
    one number per row crossing to the device. (``torch.multinomial`` on the CPU generator
    needed the whole distribution on the CPU: 16 x 49,152 probabilities per token, 16-18 ms of
    CPU against 1.5-3.7 ms for this, measured on 2 cores.) The fp32 running sum is off by
    about 1e-5 of the mass: the draw's distribution is the policy's to that, and the log-prob
    kept for a token is read from ``logprobs`` itself."""
    cdf = logprobs.float().exp().cumsum(-1)
    uniform = torch.rand(len(cdf), 1, generator=generator)
    # right=True: the first index whose CDF passes the draw, so a zero-probability token
    # (a flat step of the CDF) is never chosen
    token = torch.searchsorted(cdf, uniform.to(cdf.device) * cdf[:, -1:], right=True)
    return token.squeeze(1).clamp(max=cdf.shape[1] - 1)


def stop_token_ids(tokenizer: Any) -> list[int]:
    """The tokens that end an assistant turn: eos, and ChatML's ``<|im_end|>`` if known."""
    ids = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    end = tokenizer.convert_tokens_to_ids("<|im_end|>") if "<|im_end|>" in tokenizer.get_vocab() \
        else None
    if end is not None and end not in ids:
        ids.append(end)
    if not ids:
        raise ValueError("the tokenizer has no end-of-turn token (eos or <|im_end|>)")
    return ids


@contextlib.contextmanager
def evaluating(model: Any) -> Iterator[None]:
    """The model in eval mode (no dropout) for the block, then back in the mode it was in."""
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)
