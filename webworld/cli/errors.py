"""The one place that turns user mistakes into a clear message and an exit status."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import typer

from webworld.cli.console import err
from webworld.errors import WebworldError

F = TypeVar("F", bound=Callable[..., object])


def reports_errors(fn: F) -> F:
    """Print a :class:`WebworldError` as ``error: <where>: <what>`` and exit with its code."""

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        try:
            return fn(*args, **kwargs)
        except WebworldError as exc:
            err.print(f"[bold red]error:[/] {exc}", markup=True)
            raise typer.Exit(exc.exit_code) from None

    return wrapper  # type: ignore[return-value]
