"""The `webworld` command: one sub-command per stage of the flow."""

from __future__ import annotations

import inspect

import typer

from webworld import __version__
from webworld.cli.build_cmd import build_cmd
from webworld.cli.dashboard_cmd import dashboard_cmd
from webworld.cli.env_cmd import env_app
from webworld.cli.eval_cmd import eval_app
from webworld.cli.explore_cmd import explore_cmd
from webworld.cli.export_cmd import export_cmd
from webworld.cli.generate_cmd import generate_cmd, improve_cmd
from webworld.cli.import_cmd import import_app
from webworld.cli.recipe_cmd import recipe_app
from webworld.cli.site_cmd import render_cmd, serve_cmd
from webworld.cli.spec_cmd import spec_app, validate_cmd
from webworld.cli.train_cmd import train_app
from webworld.cli.verify_cmd import verify_cmd
from webworld.spec.archetypes import ARCHETYPES

app = typer.Typer(
    name="webworld",
    help="Synthetic web worlds and verified trajectories for training GUI agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(spec_app, name="spec")
app.add_typer(env_app, name="env")
app.add_typer(eval_app, name="eval")
app.add_typer(train_app, name="train")
app.add_typer(import_app, name="import")
app.add_typer(recipe_app, name="recipe")
app.command("generate")(generate_cmd)
app.command("validate")(validate_cmd)
app.command("improve")(improve_cmd)
app.command("explore")(explore_cmd)
app.command("render")(render_cmd)
app.command("serve")(serve_cmd)
app.command("verify")(verify_cmd)
app.command("build")(build_cmd)
app.command("export")(export_cmd)
app.command("dashboard")(dashboard_cmd)


@app.command("archetypes")
def archetypes() -> None:
    """List the site archetypes themes map to."""
    for arch in ARCHETYPES.values():
        typer.echo(f"{arch.key:16} {arch.title:22} {', '.join(arch.keywords[:6])}")


@app.command("version")
def version() -> None:
    """Print webworld's version."""
    typer.echo(__version__)


def flow_help(group: typer.Typer) -> None:
    """Typer's rich help keeps a docstring's line breaks (in the command lists too), so lines
    wrapped for the source come out ragged: join them, keeping the paragraphs."""
    for info in group.registered_commands:
        doc = info.help or inspect.getdoc(info.callback) or ""
        info.help = "\n\n".join(" ".join(p.split()) for p in doc.split("\n\n"))
    for sub in group.registered_groups:
        flow_help(sub.typer_instance)


flow_help(app)


if __name__ == "__main__":
    app()
