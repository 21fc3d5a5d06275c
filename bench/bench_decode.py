"""Benchmark of reply decoding: the rollout engine with its static KV cache (one CUDA graph
replay per token on a GPU, webworld/train/static_decode.py) against the dynamic cache it grew
by concatenation before, measured in the same run on the same prompts.

    .venv/bin/python bench/bench_decode.py                  # CPU: 8 rows
    .venv/bin/python bench/bench_decode.py --device cuda    # GPU: 64 rows, as a whole-task RL batch

The policy has SmolLM2-135M's shape (30 layers, 576 wide, 49,152 tokens) with random weights:
decoding costs the same whatever the weights, and the device needs no weights carried. Prompts
are an RL turn's: a 341-token system prompt every row shares, then 180-300 tokens of the row's
own (left padding). Every reply runs ``--new-tokens`` tokens (the stop tokens are masked), so
both caches decode the same number. Greedy replies are compared token for token.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import torch
from benchkit import load_note, make_console, rate
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webworld.train.engine import SamplingSettings, TransformersEngine  # noqa: E402
from webworld.train.models import tiny_tokenizer  # noqa: E402

# SmolLM2-135M-Instruct's architecture (its config.json)
SMOLLM2_SHAPE = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                     num_attention_heads=9, num_key_value_heads=3, vocab_size=49152,
                     max_position_embeddings=8192, rope_theta=100000.0, rms_norm_eps=1e-5,
                     tie_word_embeddings=True)
SYSTEM_TOKENS = 341  # the compact prompt's system part (experiments/smollm2/learning_tokens.md)


def smollm2_shaped(device: str) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(**SMOLLM2_SHAPE, attn_implementation="sdpa")
    return LlamaForCausalLM(config).to(device).eval()


def turn_prompts(rows: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    system = [rng.randrange(100, 49000) for _ in range(SYSTEM_TOKENS)]
    return [system + [rng.randrange(100, 49000) for _ in range(rng.randint(180, 300))]
            for _ in range(rows)]


def decode(engine: TransformersEngine, prompts: list[list[int]], repeats: int) -> tuple[float, list]:
    """Seconds per pass (the mean of ``repeats`` after a warm-up) and the last pass's replies."""
    engine._sample(prompts, torch.Generator().manual_seed(0))  # warm-up: kernels, allocator
    sync()
    started = time.perf_counter()
    for _ in range(repeats):
        replies = engine._sample(prompts, torch.Generator().manual_seed(0))
    sync()
    return (time.perf_counter() - started) / repeats, replies


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rows", type=int, default=None, help="default: 64 on cuda, 8 on cpu")
    parser.add_argument("--new-tokens", type=int, default=None, help="default: 64 cuda, 16 cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--precision", default=None, help="default: bf16 on cuda, fp32 on cpu")
    args = parser.parse_args()
    cuda = args.device.startswith("cuda")
    rows, new_tokens = args.rows or (64 if cuda else 8), args.new_tokens or (64 if cuda else 16)
    precision = args.precision or ("bf16" if cuda else "fp32")
    console = make_console()
    model, tokenizer = smollm2_shaped(args.device), tiny_tokenizer()
    prompts = turn_prompts(rows, seed=0)
    engines = {cache: TransformersEngine(model, tokenizer, SamplingSettings(
        max_new_tokens=new_tokens, temperature=0.0, batch_size=rows, precision=precision,
        cache=cache)) for cache in ("dynamic", "static")}
    stops = torch.tensor(engines["static"].stop_ids, device=args.device)  # made before capture
    model.lm_head.register_forward_hook(
        lambda module, inputs, logits: logits.index_fill_(-1, stops, float("-inf")))
    timed = {}
    with torch.no_grad():
        for cache, engine in engines.items():
            timed[cache] = decode(engine, prompts, args.repeats)
    (dynamic_s, dynamic), (static_s, static) = timed["dynamic"], timed["static"]
    tokens = sum(len(g.completion_ids) for g in static)
    same = sum(a.completion_ids == b.completion_ids for a, b in zip(dynamic, static, strict=True))
    table = Table(title=f"Decoding {rows} rows x {new_tokens} tokens, SmolLM2-135M's shape, "
                        f"{args.device}, {precision} (prefill included)")
    for column in ("KV cache", "s per pass", "reply tokens/s", "ms per token step", "vs dynamic"):
        table.add_column(column)
    for cache, seconds in (("dynamic (baseline)", dynamic_s),
                           ("static" + (" + CUDA graph" if cuda else ""), static_s)):
        table.add_row(cache, f"{seconds:.3f}", rate(tokens, seconds),
                      f"{1000 * seconds / new_tokens:.1f}", f"{dynamic_s / seconds:.2f}x")
    console.print(table)
    console.print(f"greedy replies alike, token for token: {same}/{rows}")
    console.print(load_note())


if __name__ == "__main__":
    main()
