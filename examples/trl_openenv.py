"""TRL's GRPOTrainer against a webworld env server, through OpenEnv: each rollout is a session on
`webworld env serve` (an OpenEnv server), the tools are webworld's actions sent by OpenEnv's
client, the reward is the server's (success from its truth). As examples/trl_grpo.py, but the
env lives in another process, or on another machine. The tiny policy trains on the CPU,
nothing is downloaded.

    webworld env serve DIR --port 8000 &               # prints: listening on http://127.0.0.1:8000
    .venv/bin/python examples/trl_openenv.py --url http://127.0.0.1:8000 --worlds DIR --steps 20
    .venv/bin/python examples/trl_openenv.py           # serves the button board itself, 4 steps

``--worlds`` is the `webworld build` output the server serves: the dataset's rows (a task
instance each, the group's G rollouts share it) are read from it. Without ``--url`` the script
starts `webworld env serve` on ``--worlds`` itself; without ``--worlds`` it builds the button
board of ``webworld.train.sanity`` into ``--work``. Without ``--model`` the start policy is
``tiny`` taught the tool-call format on random presses. A server off loopback needs its token
(``--token``, or ``WEBWORLD_ENV_TOKEN``).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@contextmanager
def served(worlds: Path) -> Iterator[str]:
    """`webworld env serve WORLDS` on a free loopback port, for as long as the block runs."""
    proc = subprocess.Popen([sys.executable, "-m", "webworld", "env", "serve", str(worlds),
                             "--port", "0", "--split", "all"], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        url = next((line.split()[-1] for line in proc.stdout  # type: ignore[union-attr]
                    if line.startswith("listening on ")), None)
        if url is None:
            raise SystemExit(f"webworld env serve ended with status {proc.wait()}")
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=60)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default=None, help="a running `webworld env serve` (default: "
                        "one started here on --worlds)")
    parser.add_argument("--token", default=os.environ.get("WEBWORLD_ENV_TOKEN"))
    parser.add_argument("--worlds", type=Path, default=None)
    parser.add_argument("--model", default=None, help="a model folder (default: tiny, warm-started)")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "trl_openenv_example")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--generations", type=int, default=4, help="rollouts per task (G)")
    args = parser.parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

    from trl_grpo import board_and_start  # the same board and start policy

    worlds, model_dir = board_and_start(args.worlds, args.model, args.work)
    if args.url is not None:
        return train(args, worlds, model_dir, args.url)
    with served(worlds) as url:
        return train(args, worlds, model_dir, url)


def train(args: argparse.Namespace, worlds: Path, model_dir: str | Path, url: str) -> dict:
    from trl import GRPOConfig, GRPOTrainer

    from webworld.interop.openenv import WebworldServerEnv
    from webworld.interop.trl import task_dataset, with_tool_template
    from webworld.train.models import load_policy

    sessions: list[WebworldServerEnv] = []

    def environment_factory() -> WebworldServerEnv:  # one server session per rollout slot
        sessions.append(WebworldServerEnv(url, token=args.token))
        return sessions[-1]

    model, tokenizer = load_policy(str(model_dir))
    config = GRPOConfig(
        output_dir=str(args.work / "grpo"), loss_type="vespo", max_steps=args.steps,
        num_generations=args.generations, per_device_train_batch_size=args.generations,
        max_completion_length=512, max_tool_calling_iterations=8, temperature=0.7,
        learning_rate=1e-4, use_cpu=True, bf16=False, report_to=[], logging_steps=1,
        save_strategy="no")
    trainer = GRPOTrainer(model=model, args=config, train_dataset=task_dataset(worlds, split=None),
                          processing_class=with_tool_template(tokenizer),
                          environment_factory=environment_factory)
    try:
        trainer.train()
    finally:
        for session in sessions:
            session._close()
    for row in trainer.state.log_history:
        if "reward" in row:
            print(f"step {row['step']}: reward {row['reward']:.2f}, tool calls per rollout "
                  f"{row['tools/call_frequency']:.2f}")
    return {"log": trainer.state.log_history, "trainer": trainer, "url": url}


if __name__ == "__main__":
    main()
