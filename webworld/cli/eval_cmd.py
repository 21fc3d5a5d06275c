"""`webworld eval`: score a policy on held-out worlds, MiniWoB++ or a folder of worlds;
`webworld eval compare` two results files; `webworld eval heldout` makes the held-out worlds."""

from __future__ import annotations

import random
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from webworld.cli.config_options import Given, config_options
from webworld.cli.console import err, out
from webworld.cli.errors import reports_errors
from webworld.cli.llm_options import LLMBaseURL, LLMBudget, LLMConfigFile, LLMKey
from webworld.cli.options import RayInsecure
from webworld.data.switches import TURNS, StudySwitches, require_applicable
from webworld.errors import UsageError, validation_problems
from webworld.eval.runner import EvalSettings
from webworld.settings import switch_names

eval_app = typer.Typer(help="Score a policy: held-out worlds, MiniWoB++, any world folder.",
                       invoke_without_command=True)

HELDOUT_DIR = EvalSettings.model_fields["heldout_dir"].default


def say_grounded(policy: object) -> int | None:
    """Print how many actions grounding by name moved, and loop breaking replaced; the
    first count (None: not grounded)."""
    from webworld.eval.grounding import GroundedPolicy
    from webworld.eval.loops import LoopBreakingPolicy

    if isinstance(policy, LoopBreakingPolicy):
        out.print(f"loop breaking replaced {policy.broken} of {policy.looped} repeated actions")
        policy = policy.inner
    if not isinstance(policy, GroundedPolicy):
        return None
    out.print(f"grounding by name moved {policy.moved} of {policy.replies} actions")
    return policy.moved


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=err)


@eval_app.callback()
@reports_errors
@config_options(EvalSettings)
def eval_cmd(given: Given[EvalSettings], ray_insecure: bool = RayInsecure) -> None:
    """Play the suite's episodes with the policy; print the summary (and write the report)."""
    if given.context.invoked_subcommand is not None:
        return
    from webworld.eval.results import read_results
    from webworld.eval.runner import run_eval

    settings = given.settings()
    with _progress() as progress:
        outcome = run_eval(settings, progress, note=err.print)
    records = read_results(settings.out)
    print_summary(records)
    say_grounded(outcome.policy)
    stats = outcome.stats
    out.print(f"{stats.episodes} episodes played in {stats.seconds:.1f} s "
              f"({stats.per_second:.2f} episodes/s); {stats.skipped} already in {settings.out}")
    if stats.stopped:
        err.print(f"[yellow]stopped early:[/] {stats.stopped}; run again to resume")
    if settings.report is not None:
        from webworld.eval.report import write_report

        out.print(f"report: {write_report(records, settings.out, settings.report)}")


def print_summary(records: list[dict]) -> None:
    from webworld.eval.results import failures, group_of, rates

    for title, key in (("suite", lambda r: r["suite"]), ("archetype / task", group_of)):
        table = Table(title, "episodes", "success [95% CI]", "mean steps", title=f"by {title}")
        for rate in rates(records, key):
            table.add_row(rate.group, str(rate.episodes), rate.shown(), f"{rate.steps:.1f}")
        out.print(table)
    reasons = failures(records)
    if reasons:
        out.print("failures: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))


def _read_runs(*paths: Path) -> list[list[dict]]:
    """The episodes of each results file; an empty or missing one is a usage error."""
    from webworld.eval.results import read_results

    runs = []
    for path in paths:
        if not path.is_file():
            raise UsageError("no such results file", str(path))
        records = read_results(path)
        if not records:
            raise UsageError("no episodes in this results file", str(path))
        runs.append(records)
    return runs


@eval_app.command("compare")
@reports_errors
def compare_cmd(
    a: Path = typer.Argument(..., help="Results of the first run (the baseline)."),
    b: Path = typer.Argument(..., help="Results of the second run."),
) -> None:
    """B minus A: success-rate differences with 95% intervals, on the episodes both ran, and
    the paired view of them: episodes each run alone solved, with a sign test."""
    from webworld.eval.results import compare

    runs = _read_runs(a, b)
    name_a, name_b = runs[0][0]["policy"], runs[1][0]["policy"]
    table = Table("group", "episodes", f"A: {name_a}", f"B: {name_b}", "B - A [95% CI]",
                  "B won / lost", "sign test p",
                  title=f"webworld eval compare: {b.name} - {a.name}")
    for c in compare(*runs):
        d, lo, hi = c.difference
        flag = " *" if lo > 0 or hi < 0 else ""
        table.add_row(c.group, str(c.a.episodes), c.a.shown(), c.b.shown(),
                      f"{100 * d:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]{flag}",
                      f"{c.won} / {c.lost}", f"{c.sign_test:.3g}")
    out.print(table)
    out.print("* the interval excludes 0. Won / lost: episodes (the same key) only B / only A "
              "solved; the sign test asks whether that split is chance.")


@eval_app.command("diverge")
@reports_errors
def diverge_cmd(
    results: Path = typer.Argument(..., help="A policy's results."),
    oracle: Path = typer.Argument(..., help="The oracle's results on the same suite and seed."),
    top: int = typer.Option(10, "--top", min=0, help="List this many (oracle, policy) pairs."),
) -> None:
    """Where failed episodes first left the oracle's path, and the commonest pairs.

    What they did instead: a sibling of the element, another value, another element..."""
    from webworld.eval.diverge import KINDS, divergences, summary

    found = divergences(*_read_runs(results, oracle))
    kinds, pairs = summary(found)
    table = Table("first left the oracle's path on", "failed episodes",
                  title=f"webworld eval diverge: {results.name} against {oracle.name}")
    for kind in KINDS:
        table.add_row(kind, str(kinds[kind]))
    table.add_row("all", str(len(found)), end_section=True)
    out.print(table)
    if top and pairs:
        common = Table("the oracle did", "the policy did", "episodes", title="commonest pairs")
        for (want, got), n in pairs.most_common(top):
            common.add_row(want, got, str(n))
        out.print(common)


@eval_app.command("heldout")
@reports_errors
def heldout_cmd(
    out_dir: Path = typer.Option(HELDOUT_DIR, "--out", "-o", help="Where to write them."),
    only: list[str] = typer.Option(None, "--world", help="Only these held-out worlds."),
    workers: int = typer.Option(2, "--workers", "-w", help="Verification workers."),
    dense: bool = typer.Option(False, "--dense", help="The dense suite (heldout-dense): the "
                               "same worlds at generator version 3, in OUT-dense."),
) -> None:
    """Make the held-out worlds of webworld/data/heldout.json: specs, sites, tasks (verified)."""
    from webworld.data.heldout import load_manifest
    from webworld.eval.heldout import SUITES, materialise, suite_dir

    manifest = load_manifest()
    suite = "heldout-dense" if dense else "heldout"
    made = materialise(suite_dir(out_dir, suite), only or None, workers=workers,
                       version=SUITES[suite])
    table = Table("world", "kind", "theme", "profile", "seed", "look",
                  title=f"held-out worlds ({suite}), manifest v{manifest.version}")
    for w in manifest.worlds:
        if not only or w.id in only:
            table.add_row(w.id, w.kind, w.theme, w.profile, str(w.seed), w.look)
    out.print(table)
    out.print(f"specs: {made.specs}/  sites: {made.sites}/  tasks: {made.trajectories}/")


@eval_app.command("turns")
@reports_errors
def turns_cmd(
    data: Path = typer.Argument(..., help="An SFT export's chats (e.g. DATA/sft/validation.jsonl)."),
    policy: str = typer.Option(..., "--policy", "-p", help="hf:PATH (hf:smollm2) or openai:MODEL."),
    sample: int = typer.Option(None, "--sample", "-n", min=1, help="Score this many turns, drawn "
                                                                    "with --seed (default: all)."),
    seed: int = typer.Option(0, "--seed"),
    study: list[str] = typer.Option([], "--study", help="Study switches, repeatable: "
                                    f"{', '.join(TURNS)} (webworld.data.switches: each turn "
                                    "asked changed that way, seeded; ground_names: the replies "
                                    "grounded by name)."),
    results: Path = typer.Option(None, "--out", "-o", help="Also write the scores as JSON here."),
    device: str = typer.Option(None, "--device", help="hf: policies: cpu or cuda."),
    base_url: str = LLMBaseURL, api_key: str = LLMKey, config_file: Path = LLMConfigFile,
    budget: float = LLMBudget,
) -> None:
    """Per-turn accuracy: how often the policy answers a recorded turn with its action."""
    from webworld.data.augment import move_choice, relabel_ids, rename_choice
    from webworld.eval.policies import make_eval_policy
    from webworld.eval.runner import wrapped
    from webworld.eval.results import Rate
    from webworld.eval.turns import read_turns, score_turns
    from webworld.fsio import atomic_write_json

    switches = turn_switches(study)
    if not data.is_file():
        raise UsageError("no such file", str(data))
    if not policy.startswith(("hf:", "openai:")):
        raise UsageError(f"eval turns scores a model: hf:PATH or openai:MODEL, not {policy!r}")
    chats = read_turns(data, sample, seed)
    rng = random.Random(seed)
    if switches.move_choices:
        chats = [move_choice(chat, rng) for chat in chats]
    if switches.rename_choices:
        chats = [rename_choice(chat, rng) for chat in chats]
    if switches.relabel_ids or switches.shuffle_ids:
        chats = [relabel_ids(chat, rng, ordered=not switches.shuffle_ids) for chat in chats]
    chosen = wrapped(make_eval_policy(policy, None, device=device, base_url=base_url,
                                      api_key=api_key, config_file=config_file,
                                      budget_usd=budget), switches)
    try:
        with _progress() as progress:
            bar = progress.add_task("turns", total=len(chats))
            scores = score_turns(chosen, chats, progress=lambda n: progress.advance(bar, n))
    finally:
        chosen.close()
    if scores.errors and len(scores.errors) == scores.turns:
        raise UsageError(f"the policy answered no turn: {scores.errors[0]}")
    if scores.errors:
        err.print(f"[yellow]{len(scores.errors)} turns got no answer[/] "
                  f"(scored as wrong), e.g.: {scores.errors[0]}")
    table = Table("turns", "count", "answered as recorded [95% CI]", title=f"{policy} on {data}")
    for kind, (right, total) in [("all", [scores.correct, scores.turns]),
                                 *scores.by_kind.items()]:
        table.add_row(kind, str(total), Rate(kind, total, right).shown() if total else "-")
    out.print(table)
    out.print(f"well-formed actions: {scores.well_formed}/{scores.turns}")
    wrong = scores.turns - scores.correct
    out.print(f"missed turns whose thought names the right element (the id acted on is "
              f"another's): {scores.right_thought_wrong_id}/{wrong}, "
              f"{scores.right_thought_next_line} of them the next or previous page line's")
    moved = say_grounded(chosen)
    if results is not None:
        atomic_write_json(results, {"data": str(data), "policy": policy, "seed": seed,
                                    **{name: getattr(switches, name) for name in TURNS},
                                    **({"grounding_moved": moved} if switches.ground_names
                                       else {}),
                                    **scores.as_dict()})


def turn_switches(names: list[str]) -> StudySwitches:
    """The study switches named for ``eval turns``; one it does not take is a usage error."""
    try:
        switches = StudySwitches.model_validate(switch_names(StudySwitches, names, "--study"))
        require_applicable(switches, TURNS, "webworld eval turns")
    except ValidationError as exc:
        raise UsageError(validation_problems(exc), "--study") from None
    except ValueError as exc:
        raise UsageError(str(exc), "--study") from None
    return switches
