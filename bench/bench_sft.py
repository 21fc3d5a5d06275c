"""Benchmark of an SFT step: webworld's (the shared system prompt run once per batch, the LM
head on reply positions only, batches of alike lengths) against the usual way (every row in full,
logits on every position, as TRL's SFTTrainer does), the whole model against its top layers, and
fp32 compute against bf16 (autocast over fp32 weights, as ``webworld train sft --precision bf16``;
a CPU with AMX or AVX512-BF16 multiplies bf16 several times as fast).

    .venv/bin/python bench/bench_sft.py --data runs/learning/data            # SmolLM2
    .venv/bin/python bench/bench_sft.py --data DIR --model tiny --layers 0 2
    .venv/bin/python bench/bench_sft.py --data runs/learning/data --layers 8 --precision fp32 bf16

Every way runs the same batches (drawn from the export's training chats) in turn, round after
round, and keeps its best round, so the ways share the machine's load alike. Tokens/s counts
every token of the batch's chats (prompt and reply) per second of forward + backward + optimiser
step.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from benchkit import load_note, make_console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webworld.train.batch import reply_batch  # noqa: E402
from webworld.train.models import autocast, load_policy, train_top_layers  # noqa: E402
from webworld.train.sft import Chat, encode_chats, epoch_batches, read_split  # noqa: E402


def plain_loss(model, chats: list[Chat], pad_id: int) -> torch.Tensor:  # type: ignore[no-untyped-def]
    """The usual SFT loss: right-padded rows in full, logits everywhere, labels on the reply."""
    batch = reply_batch([(c.prompt_ids, c.reply_ids) for c in chats],
                        [len(c.reply_ids) for c in chats], pad_id, share_prefix=False)
    labels = torch.full_like(batch.input_ids, -100)
    labels[batch.rows, batch.positions] = batch.targets
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1).float(),
                                             labels[:, 1:].flatten())


def our_loss(model, chats: list[Chat], pad_id: int) -> torch.Tensor:  # type: ignore[no-untyped-def]
    from webworld.train.batch import reply_logits

    batch = reply_batch([(c.prompt_ids, c.reply_ids) for c in chats],
                        [len(c.reply_ids) for c in chats], pad_id)
    return torch.nn.functional.cross_entropy(reply_logits(model, batch), batch.targets)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--batches", type=int, default=2, help="batches per way and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--layers", type=int, nargs="*", default=[0, 8, 4],
                        help="trainable top layers to compare (0: the whole model)")
    parser.add_argument("--precision", nargs="+", default=["fp32"], choices=["fp32", "bf16"],
                        help="compute of webworld's ways (the usual way: the first)")
    parser.add_argument("--skip-usual", action="store_true",
                        help="leave the usual way out (slow); webworld's first way is the baseline")
    args = parser.parse_args()
    console = make_console()
    model, tokenizer = load_policy(args.model, dtype=torch.float32)
    pad = tokenizer.pad_token_id
    chats = encode_chats(tokenizer, read_split(args.data, "train"), 4096)
    plan = epoch_batches([len(c) for c in chats], args.batch_size, 0, 0)[:args.batches]
    batches = [[chats[i] for i in b] for b in plan]
    tokens = sum(len(c) for b in batches for c in b)
    first = args.precision[0]
    usual = [] if args.skip_usual else [(f"usual (full rows, all logits), {first}", plain_loss,
                                         0, first)]
    ways = usual + \
        [(f"webworld, {'whole model' if k == 0 else f'top {k} layers'}, {precision}", our_loss,
          k, precision) for precision in args.precision for k in args.layers]
    best = {name: float("inf") for name, *_ in ways}
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    for _ in range(args.rounds):
        for name, loss_fn, layers, precision in ways:
            model.load_state_dict(initial)
            for p in model.parameters():
                p.requires_grad_(True)
            optimizer = torch.optim.AdamW(train_top_layers(model, layers), lr=1e-5)
            started = time.perf_counter()
            for chats_ in batches:
                optimizer.zero_grad(set_to_none=True)
                with autocast("cpu", precision):
                    loss = loss_fn(model, chats_, pad)
                loss.backward()
                optimizer.step()
            best[name] = min(best[name], time.perf_counter() - started)
    table = Table(title=f"SFT step, {args.model}, batch {args.batch_size}, {args.batches} batches "
                        f"({tokens:,} tokens), best of {args.rounds} rounds ({load_note()})")
    for col in ("way", "tokens/s", f"vs {'the usual way' if usual else ways[0][0]}"):
        table.add_column(col, justify="left" if col == "way" else "right")
    base = tokens / best[ways[0][0]]
    for name, *_ in ways:
        rate = tokens / best[name]
        table.add_row(name, f"{rate:,.0f}", f"{rate / base:.2f}x")
    console.print(table)


if __name__ == "__main__":
    main()
