"""`webworld import autowebworld`: other tools' world files as webworld specs."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import typer
from rich.table import Table

from webworld.cli.console import err, out
from webworld.cli.errors import reports_errors
from webworld.cli.options import SPECS_DIR
from webworld.errors import UsageError
from webworld.fsio import atomic_write_json
from webworld.interop.autowebworld.findings import CODE_DESCRIPTIONS
from webworld.interop.autowebworld.suite import fsm_files
from webworld.interop.autowebworld.translate import ImportResult, import_fsm
from webworld.spec.io import save_spec

import_app = typer.Typer(help="Import worlds written for other tools.", no_args_is_help=True)


@import_app.command("autowebworld")
@reports_errors
def autowebworld_cmd(
    sources: list[Path] = typer.Argument(..., help="AutoWebWorld fsm.json files, or folders "
                                                   "to search for them."),
    output: Path = typer.Option(None, "--out", "-o",
                                help="Spec file (one source) or folder (default: fsm_specs/)."),
    world_id: str = typer.Option(None, "--id", help="World id (one source only)."),
    findings_out: Path = typer.Option(None, "--findings",
                                      help="Write every finding of every file as JSON here."),
    show_all: bool = typer.Option(False, "--all", help="List every warning, not counts."),
) -> None:
    """Translate AutoWebWorld FSM files into world specs.

    Whatever does not carry over exactly is a coded finding located by JSON path; exit 2 if
    any file is unusable."""
    files = fsm_files(sources)
    if world_id and len(files) > 1:
        raise UsageError("--id names one world; give one source file")
    if world_id and not re.fullmatch(r"[a-z][a-z0-9_]{0,79}", world_id):
        raise UsageError(f"--id {world_id!r}: use lower-case letters, digits and _, "
                         "starting with a letter")
    results = [import_fsm(f, world_id) for f in files]
    single_file = len(files) == 1 and output is not None and output.suffix == ".json"
    for result in results:
        _report(result, show_all)
        if result.spec is not None:
            target = output if single_file else (output or SPECS_DIR) / f"{result.spec.id}.json"
            save_spec(result.spec, target)
            actions = sum(len(p.actions) for p in result.spec.pages)
            out.print(f"wrote {target}: {len(result.spec.pages)} pages, {actions} actions, "
                      f"{len(result.spec.variables)} variables, {len(result.spec.tasks)} tasks")
    if findings_out is not None:
        atomic_write_json(findings_out, [{"source": r.source.path,
                                          "findings": [f.to_dict() for f in r.findings]}
                                         for r in results])
    failed = [r for r in results if not r.ok]
    if failed:
        err.print(f"[bold red]error:[/] {len(failed)} of {len(results)} file(s) unusable")
        raise typer.Exit(2)


def _report(result: ImportResult, show_all: bool) -> None:
    where = result.source.path
    for f in result.findings:
        if f.severity == "error":
            err.print(f"[red]error:[/] {where}: {f.path}: {f.message} [dim]\\[{f.code}][/]")
        elif show_all:
            err.print(f"[yellow]warning:[/] {where}: {f.path}: {f.message} "
                      f"[dim]\\[{f.code}][/]")
    warnings = [f for f in result.findings if f.severity == "warning"]
    if warnings and not show_all:
        table = Table("warning", "count", "first at", "what it means", title=where)
        counts = Counter(f.code for f in warnings)
        for code, n in sorted(counts.items()):
            first = next(f.path for f in warnings if f.code == code)
            table.add_row(code, str(n), first, CODE_DESCRIPTIONS[code])
        out.print(table)


def findings_summary(result: ImportResult) -> str:
    """``code: n, ...`` for tables and notes."""
    counts = Counter(f.code for f in result.findings)
    return ", ".join(f"{c}: {n}" for c, n in sorted(counts.items())) or "-"

