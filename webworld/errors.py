"""Errors a user can cause. The CLI prints them as one clear message, never a traceback."""

from __future__ import annotations


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
