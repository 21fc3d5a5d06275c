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


def machine_busy_s() -> float:
    """CPU seconds the whole machine has spent busy (all cores, from /proc/stat): around a
    run, what it cost in every process it touched (Chromium's renderers are not reaped
    children of this process, so RUSAGE_CHILDREN misses them), plus whatever else ran."""
    fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")
