"""Errors a user can cause. The CLI prints them as one clear message, never a traceback."""

from __future__ import annotations

from typing import Any, Protocol


class HasErrors(Protocol):
    """pydantic's ValidationError, or FastAPI's RequestValidationError: a list of problems."""

    def errors(self) -> Any: ...


class WebworldError(Exception):
    """A user-facing failure: ``where`` names the file / JSON path / line it is about."""

    exit_code = 2

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class SpecLoadError(WebworldError):
    """A spec file that cannot be read, is not JSON, or does not match the schema."""


class UsageError(WebworldError):
    """Bad options or arguments (unknown profile, missing file, ...)."""


def validation_problems(exc: HasErrors, limit: int | None = None) -> str:
    """A pydantic error in one line: each problem's path (``(top)`` for a check of the whole
    model) and message (a validator's own, without pydantic's "Value error, "); past
    ``limit`` problems, how many more there are."""
    problems = [f"{'.'.join(map(str, e['loc'])) or '(top)'}: "
                f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors()]
    more = len(problems) - limit if limit is not None and len(problems) > limit else 0
    return "; ".join(problems[:limit]) + (f"; and {more} more" if more else "")
