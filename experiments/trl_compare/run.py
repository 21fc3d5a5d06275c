"""webworld's trainer against TRL's GRPOTrainer on the same worlds, start policy and budget:
``webworld train rl --algo vespo`` and ``GRPOTrainer(loss_type="vespo")`` with
``webworld.interop.trl``'s environment factory; writes its REPORT.md and trl.png beside this script.

    .venv/bin/python experiments/trl_compare/run.py               # 3 seeds, ~1 h on 2 cores
    .venv/bin/python experiments/trl_compare/run.py --seeds 0 --steps 4   # a smoke run

The worlds: the button board (``webworld.train.sanity``: one page of K buttons, a task naming
one), where learning is certain. The start policies: ``tiny`` taught each trainer's reply
format on random presses (webworld's ``Thought / Action`` text, TRL's tool calls), the same
seed, steps and data, so both press a button at chance. The budget: the same rollout batches of
4 tasks x G=8 episodes, one optimiser step each (N = 1), learning rate 3e-4 after 10 steps of
linear warm-up, sampling temperature 0.7, the fast env. Per step: success, and the wall time
split into generation, env and learning; tokens/s of generation. Each run is resumable where
its trainer is (webworld: checkpoints; TRL: runs are short and redone whole).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

from webworld.study import rl_run, write_keeping_reading
from webworld.train.sanity import prepare_board

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

BUTTONS, TASKS, GROUP, LR, WARMUP, TEMPERATURE = 4, 4, 8, 3e-4, 10, 0.7


def trl_run(board: Path, start: Path, out: Path, steps: int, seed: int) -> list[dict]:
    """TRL's GRPOTrainer with VESPO's loss: one row per optimiser step, with its time split."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from webworld.interop.trl import (
        WebworldEnv,
        environment_factory,
        task_dataset,
        with_tool_template,
    )
    from webworld.train.models import load_policy

    rows_file = out / "steps.jsonl"
    if rows_file.is_file() and len(rows_file.read_text().splitlines()) == steps:
        return [json.loads(x) for x in rows_file.read_text().splitlines()]
    torch.manual_seed(seed)
    model, tokenizer = load_policy(str(start))
    config = GRPOConfig(
        output_dir=str(out / "trl"), loss_type="vespo", max_steps=steps, seed=seed,
        num_generations=GROUP, per_device_train_batch_size=TASKS * GROUP,
        max_completion_length=256, max_tool_calling_iterations=4, temperature=TEMPERATURE,
        learning_rate=LR, lr_scheduler_type="constant_with_warmup", warmup_steps=WARMUP,
        use_cpu=True, bf16=False, report_to=[], logging_steps=1, save_strategy="no",
        gradient_checkpointing=False)  # a CPU has the memory; webworld's learner does not either
    # the dataset repeats the board's one task: 4 groups a step, as webworld's batches
    dataset = task_dataset(board, split=None)
    dataset = dataset.select([0] * (TASKS * steps))
    trainer = GRPOTrainer(model=model, args=config, train_dataset=dataset,
                          processing_class=with_tool_template(tokenizer),
                          environment_factory=environment_factory(board, split=None))
    spent = {"generate": 0.0, "env": 0.0, "tokens": 0}
    generate = trainer._generate_and_score_completions
    reward_of = WebworldEnv.get_reward

    def timed_generate(inputs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        out_ = generate(inputs)
        spent["generate"] += time.perf_counter() - started
        spent["tokens"] += int(out_["completion_mask"].sum())
        return out_

    def get_reward(self: WebworldEnv) -> float:
        spent["env"] += self.played.env_seconds
        return reward_of(self)

    trainer._generate_and_score_completions = timed_generate
    WebworldEnv.get_reward = get_reward  # type: ignore[method-assign]
    rows: list[dict] = []
    try:
        marks = {"wall": time.perf_counter(), **spent}
        from transformers import TrainerCallback

        class Split(TrainerCallback):
            def on_log(self, args, state, control, logs=None, **kw):  # type: ignore[no-untyped-def]
                if not logs or "reward" not in logs:
                    return
                now = time.perf_counter()
                gen = spent["generate"] - marks["generate"]
                env = spent["env"] - marks["env"]
                rows.append({"step": state.global_step, "success": logs["rewards/WebworldEnv/mean"],
                             "wall": now - marks["wall"], "generate": gen - env, "env": env,
                             "learn": now - marks["wall"] - gen,
                             "tokens": spent["tokens"] - marks["tokens"]})
                marks.update({"wall": now, **spent})

        trainer.add_callback(Split())
        trainer.train()
    finally:
        WebworldEnv.get_reward = reward_of  # type: ignore[method-assign]
    out.mkdir(parents=True, exist_ok=True)
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def webworld_rows(metrics: list[dict]) -> list[dict]:
    return [{"step": m["step"], "success": m["success_rate"],
             "wall": m["time_rollout"] + m["time_learn"],
             "generate": m["time_rollout"] - m["time_env"], "env": m["time_env"],
             "learn": m["time_learn"], "tokens": m["policy_tokens"]} for m in metrics]


def summary(runs: list[list[dict]]) -> dict[str, float]:
    rows = [r for run in runs for r in run]
    final = [statistics.fmean(r["success"] for r in run[-3:]) for run in runs]
    generate = sum(r["generate"] for r in rows)
    return {"final": statistics.fmean(final), "auc": statistics.fmean(r["success"] for r in rows),
            **{k: statistics.fmean(r[k] for r in rows) for k in ("wall", "generate", "env", "learn")},
            "tokens_per_s": sum(r["tokens"] for r in rows) / generate if generate else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "trl_compare")
    parser.add_argument("--out", type=Path, default=HERE / "REPORT.md")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    from webworld.train.sanity import format_warm_start

    runs: dict[str, list[list[dict]]] = {"webworld": [], "TRL": []}
    walls = {"webworld": 0.0, "TRL": 0.0}
    commands = []
    for seed in args.seeds:
        board = prepare_board(args.work, seed, BUTTONS, "tiny", 120)
        start_tools = board / "start-tiny-tools"
        if not (start_tools / "config.json").is_file():
            format_warm_start(board, start_tools, tools=True, seed=seed)
        flags = ["--algo", "vespo", "--model", os.path.relpath(board / "start-tiny", ROOT), "--steps",
                 str(args.steps), "--tasks", str(TASKS), "-G", str(GROUP), "--envs", "32",
                 "--lr", str(LR), "--warmup", str(WARMUP), "--temperature", str(TEMPERATURE),
                 "--max-new-tokens", "32", "--seed", str(seed), "--checkpoint-every", "8"]
        ours = rl_run(args.work / f"webworld-s{seed}", board, flags, ROOT)
        runs["webworld"].append(webworld_rows(ours["rows"]))
        walls["webworld"] += ours["wall"]
        commands.append(ours["command"])
        started = time.perf_counter()
        runs["TRL"].append(trl_run(board, start_tools, args.work / f"trl-s{seed}", args.steps, seed))
        walls["TRL"] += time.perf_counter() - started
    write_doc(args, runs, walls, commands)


def write_doc(args: argparse.Namespace, runs: dict[str, list[list[dict]]],
              walls: dict[str, float], commands: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, by_seed in runs.items():
        length = min(len(r) for r in by_seed)
        mean = [statistics.fmean(r[i]["success"] for r in by_seed) for i in range(length)]
        ax.plot(range(1, length + 1), mean, marker="o", label=f"{name} (VESPO)")
    ax.set(xlabel="optimiser step (one rollout batch of 32 episodes)", ylabel="success",
           title=f"button board, K={BUTTONS}, mean over {len(args.seeds)} seed(s)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out.with_name("trl.png"), dpi=110)
    rows = ["| trainer | final success (last 3 steps) | mean success (all steps) | wall s / step | "
            "generation s | env s | learning s | generated tokens/s |", "|---|---|---|---|---|---|---|---|"]
    for name, by_seed in runs.items():
        s = summary(by_seed)
        rows.append(f"| {name} | {s['final']:.2f} | {s['auc']:.2f} | {s['wall']:.2f} | "
                    f"{s['generate']:.2f} | {s['env']:.3f} | {s['learn']:.2f} | "
                    f"{s['tokens_per_s']:.0f} |")
    lines = [
        "# webworld's trainer and TRL's GRPOTrainer on the same worlds", "",
        f"Made by `experiments/trl_compare/run.py` on {platform.machine()} CPU ({os.cpu_count()} "
        f"cores), one torch thread, seeds {args.seeds}, {args.steps} steps each. The button board "
        f"with {BUTTONS} buttons; `tiny` taught each trainer's reply format on random presses "
        "(the same seed, data and steps); VESPO's loss in both; rollout batches of "
        f"{TASKS} tasks x G={GROUP}, one optimiser step each, learning rate {LR} after "
        f"{WARMUP} warm-up steps, temperature {TEMPERATURE}, the fast env. TRL: "
        "`GRPOTrainer(loss_type=\"vespo\")` with `webworld.interop.trl.environment_factory` "
        "(`examples/trl_grpo.py` is the short form). Wall time of all runs: webworld "
        f"{walls['webworld']:.0f} s, TRL {walls['TRL']:.0f} s.", "",
        *rows, "", "![success per step](trl.png)", "",
        "webworld's commands:", "", *[f"    {c}" for c in commands], ""]
    write_keeping_reading(args.out, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
