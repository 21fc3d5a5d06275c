"""`webworld generate` and `webworld improve`."""

from __future__ import annotations

from pathlib import Path

import typer

from webworld.cli.console import out
from webworld.cli.errors import reports_errors
from webworld.cli.options import SPECS_DIR, GeneratorVersion, ProfileChoice, StateBudget
from webworld.pipeline import propose_world
from webworld.propose.improve import improve
from webworld.spec.io import load_spec, save_spec
from webworld.spec.models import WorldSpec


def describe(spec: WorldSpec) -> str:
    actions = sum(len(p.actions) for p in spec.pages)
    return (f"{len(spec.pages)} pages, {actions} actions, {len(spec.variables)} variables, "
            f"{len(spec.terminals)} success pages, {len(spec.tasks)} tasks")


@reports_errors
def generate_cmd(
    theme: str = typer.Option(..., "--theme", "-t", help='What the site is, e.g. "online bookstore".'),
    profile: ProfileChoice = typer.Option(ProfileChoice.medium, "--profile", "-p"),
    seed: int = typer.Option(0, "--seed", "-s", help="Same theme, profile and seed: same bytes."),
    out_dir: Path = typer.Option(SPECS_DIR, "--out", "-o", help="Directory for the spec file."),
    state_budget: int = StateBudget,
    generator_version: int = GeneratorVersion,
) -> None:
    """Propose a world spec offline (procedural proposer + validator + improver)."""
    result = propose_world(theme, profile.value, seed, state_budget,
                           generator_version=generator_version)
    spec = result.spec
    path = save_spec(spec, out_dir / f"{spec.id}.json")
    for note in spec.provenance.notes:
        out.print(f"[dim]{note}[/]")
    out.print(f"wrote {path}: {describe(spec)}")


@reports_errors
def improve_cmd(
    spec_path: Path = typer.Argument(..., help="A world spec JSON file (any source)."),
    output: Path = typer.Option(None, "--out", "-o", help="Where to write (default: in place)."),
    max_iterations: int = typer.Option(8, "--max-iterations", min=1),
    state_budget: int = StateBudget,
) -> None:
    """Repair what the validator finds; exit 1 if the spec is still invalid."""
    spec = load_spec(spec_path)
    result = improve(spec, max_iterations=max_iterations, state_budget=state_budget)
    target = output or spec_path
    save_spec(result.spec, target)
    out.print(result.summary())
    out.print(f"wrote {target}")
    raise typer.Exit(0 if result.valid else 1)
