"""TRL's GRPOTrainer with VESPO's loss on webworld's worlds: the worlds are its
``environment_factory`` (each rollout plays a task instance with webworld's actions as tools,
the reward is the env's), the tiny policy trains on the CPU, nothing is downloaded.

    .venv/bin/python examples/trl_grpo.py                      # the button board, 4 steps
    .venv/bin/python examples/trl_grpo.py --worlds DIR --model runs/sft/model --steps 20

``--worlds`` is a `webworld build` output (``sites/`` and ``trajectories/``, with fast-env
snapshots: `webworld env snapshot`); without it the script builds the button board of
``webworld.train.sanity`` (one page of 4 buttons, a task naming one) into ``--work``. Without
``--model`` the start policy is ``tiny`` taught the tool-call format on random presses.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def board_and_start(worlds: Path | None, model: str | None, work: Path
                    ) -> tuple[Path, str | Path]:
    """The worlds and the start policy: without ``worlds`` the button board, built once into
    ``work``; without ``model`` ``tiny``, taught the tool-call format on random presses."""
    from webworld.train.sanity import board_spec, build_board, format_warm_start

    if worlds is None:
        worlds = work / "board"
        if not (worlds / ".built").is_file():
            build_board(worlds, board_spec(seed=0, buttons=4))
            (worlds / ".built").touch()
    model_dir: str | Path | None = model
    if model_dir is None:
        model_dir = work / "start-tools"
        if not (model_dir / "config.json").is_file():
            format_warm_start(worlds, model_dir, tools=True)
    return worlds, model_dir


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worlds", type=Path, default=None)
    parser.add_argument("--model", default=None, help="a model folder (default: tiny, warm-started)")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "trl_example")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--generations", type=int, default=4, help="rollouts per task (G)")
    parser.add_argument("--env", default="fast", help="fast, or live (Chromium)")
    args = parser.parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

    from trl import GRPOConfig, GRPOTrainer

    from webworld.interop.trl import environment_factory, task_dataset, with_tool_template
    from webworld.train.models import load_policy
    worlds, model_dir = board_and_start(args.worlds, args.model, args.work)
    model, tokenizer = load_policy(str(model_dir))
    config = GRPOConfig(
        output_dir=str(args.work / "grpo"), loss_type="vespo", max_steps=args.steps,
        num_generations=args.generations, per_device_train_batch_size=args.generations,
        max_completion_length=512, max_tool_calling_iterations=8, temperature=0.7,
        learning_rate=1e-4, use_cpu=True, bf16=False, report_to=[], logging_steps=1,
        save_strategy="no")
    trainer = GRPOTrainer(model=model, args=config, train_dataset=task_dataset(worlds, split=None),
                          processing_class=with_tool_template(tokenizer),
                          environment_factory=environment_factory(worlds, split=None, env=args.env))
    trainer.train()
    for row in trainer.state.log_history:
        if "reward" in row:
            print(f"step {row['step']}: reward {row['reward']:.2f}, tool calls per rollout "
                  f"{row['tools/call_frequency']:.2f}")
    return {"log": trainer.state.log_history, "trainer": trainer}


if __name__ == "__main__":
    main()
