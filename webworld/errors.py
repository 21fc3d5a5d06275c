"""Errors a user can cause. The CLI prints them as one clear message, never a traceback."""

from __future__ import annotations

import importlib.util
from typing import Any, Protocol

# The modules only an optional extra installs (pyproject.toml), and what each extra is for: a
# command that reaches one that is missing says which extra to add, in one line.
EXTRA_MODULES = {
    "torch": "train", "transformers": "train", "trl": "train", "tensorboard": "train",
    "matplotlib": "train", "gguf": "smollm2", "ray": "ray", "llama_cpp": "e2e",
    "openenv": "openenv", "verifiers": "verifiers",
}
EXTRA_USES = {
    "train": "training (and hf: policies)",
    "smollm2": "the SmolLM2 policy",
    "ray": "scale-out over Ray (--ray)",
    "e2e": "llama.cpp's server",
    "openenv": "the OpenEnv server and client",
    "verifiers": "the verifiers environment",
}


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


class MissingExtraError(UsageError):
    """A command needs a module that only one of the package's optional extras installs."""

    def __init__(self, extra: str, module: str) -> None:
        super().__init__(f"{EXTRA_USES[extra]} needs the `{extra}` extra ({module} is not "
                         f"installed): pip install 'webworld[{extra}]'")
        self.extra = extra
        self.module = module


def missing_extra(exc: ImportError) -> MissingExtraError | None:
    """The extra to name when ``exc`` is a failed import of a module that only an extra
    installs and that is really absent; None for any other import error (a broken install
    of torch is not a missing extra)."""
    module = (exc.name or "").partition(".")[0]
    extra = EXTRA_MODULES.get(module)
    if extra is None or importlib.util.find_spec(module) is not None:
        return None
    return MissingExtraError(extra, module)


def validation_problems(exc: HasErrors, limit: int | None = None) -> str:
    """A pydantic error in one line: each problem's path (``(top)`` for a check of the whole
    model) and message (a validator's own, without pydantic's "Value error, "); past
    ``limit`` problems, how many more there are."""
    problems = [f"{'.'.join(map(str, e['loc'])) or '(top)'}: "
                f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors()]
    more = len(problems) - limit if limit is not None and len(problems) > limit else 0
    return "; ".join(problems[:limit]) + (f"; and {more} more" if more else "")
