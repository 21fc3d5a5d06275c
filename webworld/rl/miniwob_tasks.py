"""The MiniWoB++ tasks of the ``miniwob`` wheel, by name: what registering the gymnasium ids
and planning an eval need, without a browser (:mod:`webworld.rl.miniwob` plays them)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from webworld.errors import UsageError


@cache
def miniwob_root() -> Path:
    import miniwob

    return Path(miniwob.__file__).parent / "html"


@cache
def miniwob_tasks() -> tuple[str, ...]:
    """Every task of the ``miniwob`` wheel (``click-button``, ``enter-text`` ...)."""
    return tuple(sorted(p.stem for p in (miniwob_root() / "miniwob").glob("*.html")))


def check_task(task: str) -> str:
    if task not in miniwob_tasks():
        near = [t for t in miniwob_tasks() if task.split("-")[0] in t][:8]
        raise UsageError(f"no MiniWoB++ task {task!r}" + (f"; did you mean {', '.join(near)}?"
                                                          if near else f" ({len(miniwob_tasks())} tasks: "
                                                          "`webworld env list --miniwob`)"))
    return task
