"""`webworld spec schema` and `webworld validate`."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from webworld.cli.console import out
from webworld.cli.errors import reports_errors
from webworld.cli.options import StateBudget
from webworld.fsio import atomic_write_json, dumps_json
from webworld.spec.io import load_spec, spec_schema
from webworld.spec.validate import CHECK_CODES, Report, validate

spec_app = typer.Typer(help="The world-spec format.", no_args_is_help=True)


@spec_app.command("schema")
@reports_errors
def schema(
    output: Path = typer.Option(None, "--out", "-o", help="Write the schema here (default: stdout)."),
) -> None:
    """Print the JSON Schema of a world spec."""
    if output is None:
        typer.echo(dumps_json(spec_schema()), nl=False)
    else:
        atomic_write_json(output, spec_schema())
        out.print(f"wrote {output}")


@spec_app.command("checks")
def checks() -> None:
    """List the validator's checks and their stable codes."""
    table = Table("code", "what it finds")
    for code, description in CHECK_CODES.items():
        table.add_row(code, description)
    out.print(table)


@reports_errors
def validate_cmd(
    spec_path: Path = typer.Argument(..., help="A world spec JSON file."),
    as_json: bool = typer.Option(False, "--json", help="Print findings as JSON."),
    state_budget: int = StateBudget,
) -> None:
    """Check a spec. Exit 0 when valid, 1 when not, 2 for unusable input."""
    spec = load_spec(spec_path)
    report = validate(spec, state_budget=state_budget)
    if as_json:
        typer.echo(json.dumps({"spec": str(spec_path), **report.to_dict()}, indent=2))
    else:
        print_report(str(spec_path), report)
    raise typer.Exit(0 if report.valid else 1)


def print_report(name: str, report: Report) -> None:
    if report.findings:
        table = Table("severity", "code", "where", "message", show_lines=False)
        for f in report.findings:
            colour = "red" if f.severity == "error" else "yellow"
            table.add_row(f"[{colour}]{f.severity}[/]", f.code, f.path, f.message)
        out.print(table)
    states = f", {report.states} reachable states" if report.states is not None else ""
    verdict = "[green]valid[/]" if report.valid else "[red]invalid[/]"
    out.print(f"{name}: {verdict} ({len(report.errors)} errors, "
              f"{len(report.warnings)} warnings{states})")
