"""What both benchmarks print with: console, progress bar, rates, machine load."""

from __future__ import annotations

import os

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)


def make_console() -> Console:
    """The terminal's console, or a wide one when the output goes to a file."""
    console = Console()
    return console if console.is_terminal else Console(width=160)


def progress_bar(console: Console) -> Progress:
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                    MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True)


def rate(count: float, seconds: float) -> str:
    if seconds <= 0:
        return "-"
    value = count / seconds
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def load_note() -> str:
    """Other work on a shared machine bends timings: say how loaded it was."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min)"
