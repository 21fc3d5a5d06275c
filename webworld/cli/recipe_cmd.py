"""`webworld recipe`: run a recipe's stages in a run folder (resumably) and report on them."""

from __future__ import annotations

from pathlib import Path

import typer

from webworld.cli.console import out
from webworld.cli.errors import reports_errors

recipe_app = typer.Typer(help="Recipes: a study's stages in one TOML file, run and reported.",
                         no_args_is_help=True)

Overrides = typer.Option([], "--set", help="Change a key of the recipe, key.path=value (a TOML "
                         "value): sft.max_steps=4, rl.0.steps=2, rl.*.seeds=[0]; repeatable.")


def say(line: str) -> None:
    out.print(line, markup=False, highlight=False)


@recipe_app.command("run")
@reports_errors
def run_cmd(
    recipe: Path = typer.Argument(..., help="The recipe (TOML), e.g. recipes/tour.toml."),
    run_dir: Path = typer.Option(..., "--out", "-o", help="The run folder; a run there "
                                 "resumes (finished stages are skipped)."),
    overrides: list[str] = Overrides,
) -> None:
    """Run every stage of a recipe not finished yet; then write the report."""
    from webworld.recipe.load import load_recipe
    from webworld.recipe.report import write_report
    from webworld.recipe.runner import run_recipe

    outcomes = run_recipe(load_recipe(recipe, overrides), run_dir, say=say)
    ran = [o for o in outcomes if not o.skipped]
    say(f"{len(ran)} stages run, {len(outcomes) - len(ran)} already done; "
        f"report: {write_report(run_dir)}")


@recipe_app.command("check")
@reports_errors
def check_cmd(
    recipe: Path = typer.Argument(..., help="The recipe (TOML)."),
    overrides: list[str] = Overrides,
) -> None:
    """Validate a recipe and list its stages with their equivalent commands."""
    from webworld.recipe.load import load_recipe
    from webworld.recipe.runner import RunFolder, plan_stages

    loaded = load_recipe(recipe, overrides)
    for stage in plan_stages(loaded, RunFolder(Path("RUN")), say):
        say(f"{stage.name}: {stage.command}")


@recipe_app.command("report")
@reports_errors
def report_cmd(
    run_dir: Path = typer.Argument(..., help="A recipe's run folder, or a record of one "
                                   "(its results files without the weights)."),
    recipe: Path = typer.Option(None, "--recipe", help="The recipe the folder ran (default: "
                                "its recipe.json), for which evals pair with which."),
) -> None:
    """Write REPORT.md in the run folder: success with intervals, RL gains, curves, stages."""
    from webworld.recipe.load import load_recipe
    from webworld.recipe.report import write_report

    say(f"report: {write_report(run_dir, load_recipe(recipe) if recipe else None)}")
