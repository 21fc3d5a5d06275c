"""The one place that turns user mistakes into a clear message and an exit status."""

from __future__ import annotations

import errno
import functools
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import typer
from rich.markup import escape

from webworld.cli.console import err
from webworld.errors import WebworldError, missing_extra

F = TypeVar("F", bound=Callable[..., object])
FULL_BYTES = 1 << 20  # a device with less free space than this is the one that filled up

# What the machine refused when writing output, and what to do about it. Every writer
# writes atomically or appends whole lines, so a rerun resumes from what was kept.
_KEEP = "what finished is kept: run the same command again"
DISK_PROBLEMS = {
    errno.ENOSPC: ("no space left on the device", f"free some space; {_KEEP}"),
    errno.EDQUOT: ("disk quota exceeded", f"free some space; {_KEEP}"),
    errno.EROFS: ("read-only file system", "write the output to another folder"),
    errno.EACCES: ("permission denied", "write the output to a folder you may write to"),
    errno.EPERM: ("operation not permitted", "write the output to a folder you may write to"),
}


def disk_problem(exc: OSError, outputs: list[str]) -> str | None:
    """``<folder>: <what>; <hint>`` for an OSError the machine raised on output, else None.
    A failed write() names no file: then the command's output options are named."""
    if exc.errno not in DISK_PROBLEMS:
        return None
    what, hint = DISK_PROBLEMS[exc.errno]
    where = _shown_path(exc.filename) if exc.filename else " / ".join(outputs) or "output"
    return f"{where}: {what}; {hint}"


def _shown_path(filename: object) -> str:
    """The user's path, not the hidden temp file an atomic write was making in it."""
    path = Path(str(filename))
    return str(path.parent) if path.name.startswith(".") and path.name.endswith(".tmp") else str(path)


def _outputs(kwargs: dict[str, object]) -> list[str]:
    """The command's folders that lie on a full device, else its output options (a failed
    write() names no file)."""
    paths = [v for value in kwargs.values()
             for v in (value if isinstance(value, list) else [value]) if isinstance(v, Path)]
    full = [str(p) for p in paths if _nearly_full(p)]
    # an atomic writer may have freed its staging space already: then name the outputs
    named = [str(v) for k, v in kwargs.items()
             if isinstance(v, Path) and (k.startswith("out") or k.endswith("_out"))]
    return list(dict.fromkeys(full or named))


def _nearly_full(path: Path) -> bool:
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    try:
        return existing is not None and shutil.disk_usage(existing).free < FULL_BYTES
    except OSError:
        return False


def _fail(exc: WebworldError) -> NoReturn:
    # escaped: messages quote the user's text and TOML tables ("[llm]", "webworld[train]"),
    # which rich would take for markup and drop
    err.print(f"[bold red]error:[/] {escape(str(exc))}", markup=True)
    raise typer.Exit(exc.exit_code) from None


def reports_errors(fn: F) -> F:
    """Print a :class:`WebworldError` as ``error: <where>: <what>`` and exit with its code;
    a full disk or a folder that cannot be written gets one such line too, and Ctrl-C a
    line saying what was kept (exit 130, the shell's code for SIGINT), and a module that only
    an optional extra installs the line naming that extra (exit 2)."""

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        try:
            return fn(*args, **kwargs)
        except WebworldError as exc:
            _fail(exc)
        except ModuleNotFoundError as exc:
            extra = missing_extra(exc)
            if extra is None:
                raise
            _fail(extra)
        except OSError as exc:
            message = disk_problem(exc, _outputs(kwargs))
            if message is None:
                raise
            err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            err.print(f"[bold red]stopped by Ctrl-C:[/] {_KEEP}", markup=True, highlight=False)
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]
