"""Benchmarks of the RL trainer: rollout tokens/s, learner tokens/s and the environment's share
of a training step, with baselines measured in the same run.

Run from the project root::

    .venv/bin/python bench/bench_rl.py                  # tiny policy, fast and live env
    .venv/bin/python bench/bench_rl.py --model smollm2  # SmolLM2-135M (scripts/setup.sh dev,e2e)
    .venv/bin/python bench/bench_rl.py --device cuda    # on a GPU

Setup (timed, not benchmarked): the shipped world ``flight_booking_easy_s0`` is rendered,
explored, verified and captured for the fast env into a temp dir (``--keep DIR`` reuses it:
with ``--envs fast`` and a kept world, no browser is needed, as on a GPU machine).

What is measured (wall time, ``time.perf_counter``):

1. **Rollout**: ``play_batch`` of G=4 episodes on each of 4 task instances (compact
   observations), in the fast env and the live env (Chromium): policy tokens generated per
   second, and the env's share of the rollout's time. Baselines: the same prompts answered by
   transformers' own ``generate`` (sampling, ``output_scores`` for the log-probs), and by our
   engine without the shared system-prompt prefix (``share_prefix=False``).
2. **Learner**: one update (VESPO) on the rollout's episodes, rewards set 0/1 alternately so
   every episode is learnt from: tokens (prompt + reply) per second of forward+backward.
   Baselines: the same forward+backward with the LM head on every position (full logits, the
   usual way; our learner runs it on reply positions only), and ours without the shared
   prefix.
3. **A step's time split**: rollout (env / generation) and learning, for both envs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch
from benchkit import load_note, make_console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webworld.rl.tasks import WorldSet, load_worlds  # noqa: E402
from webworld.train.batch import reply_logps, turn_batch  # noqa: E402
from webworld.train.config import RLConfig  # noqa: E402
from webworld.train.engine import SamplingSettings, TransformersEngine  # noqa: E402
from webworld.train.learner import Learner  # noqa: E402
from webworld.train.models import load_policy  # noqa: E402
from webworld.train.rollout import make_vector_env, plan_batch, play_batch  # noqa: E402

WORLD = "flight_booking_easy_s0"


def prepared(root: Path, console) -> WorldSet:  # type: ignore[no-untyped-def]
    """The world, built (in Chromium) unless ``root`` already holds it with its snapshot."""
    if (root / "sites" / WORLD / "fast" / "snapshot.json.gz").is_file():
        return load_worlds(root / "sites", root / "trajectories", worlds=[WORLD])
    from bench_env import prepare

    return prepare(root, [WORLD], console)


def hf_generate_rate(model, tokenizer, prompts, max_new: int) -> float:  # type: ignore[no-untyped-def]
    """Baseline: transformers' generate (sampling, scores kept) on the same prompts."""
    tokenizer.padding_side = "left"
    texts = [tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
             for p in prompts]
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    batch = batch.to(next(model.parameters()).device)
    started = time.perf_counter()
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=max_new, do_sample=True, top_k=0,
                             output_scores=True, return_dict_in_generate=True,
                             pad_token_id=tokenizer.pad_token_id)
    seconds = time.perf_counter() - started
    new = out.sequences[:, batch["input_ids"].shape[1]:]
    return int((new != tokenizer.pad_token_id).sum()) / seconds


def learner_rates(model, episodes, pad_id: int) -> list[float]:  # type: ignore[no-untyped-def]
    """Tokens/s of forward+backward of the replies' log-probs: ours, ours without the shared
    prefix, full logits; the best of 3 rounds taken in turn (the first pays the warm-up)."""
    best = {"ours": 0.0, "unshared": 0.0, "full logits": 0.0}
    for _ in range(3):
        for way in best:
            batch = turn_batch(episodes, pad_id, share_prefix=way == "ours")
            tokens = int(batch.attention_mask.sum())
            model.zero_grad(set_to_none=True)
            started = time.perf_counter()
            if way != "full logits":
                logps = reply_logps(model, batch)
            else:
                on = next(model.parameters()).device
                logits = model(input_ids=batch.input_ids.to(on),
                               attention_mask=batch.attention_mask.to(on)).logits
                logp = torch.log_softmax(logits.float(), -1)
                logps = logp[batch.rows.to(on), batch.positions.to(on) - 1].gather(
                    1, batch.targets.to(on)[:, None])
            logps.sum().backward()
            best[way] = max(best[way], tokens / (time.perf_counter() - started))
    return list(best.values())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--envs", default="fast,live", help="fast, live or both")
    args = parser.parse_args()
    console = make_console()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-rl-"))
    try:
        worlds = prepared(root, console)
        model, tokenizer = load_policy(args.model, device=args.device)
        engine = TransformersEngine(model, tokenizer, SamplingSettings(args.max_new_tokens))
        config = RLConfig(algo="vespo", micro_batch_tokens=8192)
        learner = Learner(model, tokenizer.pad_token_id, config)
        planned = plan_batch(worlds.instances(None), 1, 0, 4, 4)
        rows = []
        for env in args.envs.split(","):
            vec = make_vector_env(worlds, env, None, 16, "compact", None)
            try:
                play_batch(vec, engine, planned[:4], 0, 0)  # warm-up: first pages, caches
                batch = play_batch(vec, engine, planned, 1, 0)
            finally:
                vec.close()
            for n, ep in enumerate(batch.episodes):
                ep.reward = float(n % 2)
            started = time.perf_counter()
            learner.update(batch.episodes, 1)
            learn = time.perf_counter() - started
            tokens = sum(e.policy_tokens for e in batch.episodes)
            all_tokens = tokens + sum(e.prompt_tokens for e in batch.episodes)
            rows.append((env, batch, learn, tokens, all_tokens))
        prompts = [[{"role": "system", "content": "x"}]]  # replaced below by real prompts
        from webworld.rl.turn import Turn

        vec = make_vector_env(worlds, "fast", None, 16, "compact", None)
        try:
            reset = vec.reset_slots({i: p.task for i, p in enumerate(planned)},
                                    {i: p.seed for i, p in enumerate(planned)})
            prompts = [Turn(obs, info).messages() for obs, info in reset.values()]
        finally:
            vec.close()
        gen_rates = []
        for share in (True, False):
            engine.settings.share_prefix = share
            started = time.perf_counter()
            gens = engine.generate(prompts, torch.Generator().manual_seed(0))
            gen_rates.append(sum(len(g.completion_ids) for g in gens)
                             / (time.perf_counter() - started))
        ours_gen, unshared_gen = gen_rates
        base_gen = hf_generate_rate(model, tokenizer, prompts, args.max_new_tokens)
        ours_learn, unshared_learn, base_learn = learner_rates(
            model, rows[0][1].episodes[:2], tokenizer.pad_token_id)  # full logits of 8 OOM an H100
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    table = Table(title=f"RL trainer, {args.model} policy on {args.device} ({load_note()})")
    for col in ("measure", "webworld", "baseline", "ratio"):
        table.add_column(col, justify="right" if col != "measure" else "left")
    table.add_row("generation tokens/s (16 prompts) vs HF generate", f"{ours_gen:,.1f}",
                  f"{base_gen:,.1f}", f"{ours_gen / base_gen:.2f}x")
    table.add_row("  vs ours without the shared prefix", f"{ours_gen:,.1f}",
                  f"{unshared_gen:,.1f}", f"{ours_gen / unshared_gen:.2f}x")
    table.add_row("learner fwd+bwd tokens/s vs full logits", f"{ours_learn:,.0f}",
                  f"{base_learn:,.0f}", f"{ours_learn / base_learn:.2f}x")
    table.add_row("  vs ours without the shared prefix", f"{ours_learn:,.0f}",
                  f"{unshared_learn:,.0f}", f"{ours_learn / unshared_learn:.2f}x")
    console.print(table)
    split = Table(title="a training step (16 episodes, G=4): where the time goes")
    for col in ("env", "rollout s", "env share of rollout", "rollout tokens/s", "learn s",
                "learner tokens/s", "env share of step"):
        split.add_column(col, justify="right")
    for env, batch, learn, tokens, all_tokens in rows:
        step = batch.seconds + learn
        split.add_row(env, f"{batch.seconds:.1f}", f"{batch.env_seconds / batch.seconds:.0%}",
                      f"{tokens / batch.seconds:,.1f}", f"{learn:.1f}",
                      f"{all_tokens / learn:,.0f}", f"{batch.env_seconds / step:.0%}")
    console.print(split)


if __name__ == "__main__":
    main()
