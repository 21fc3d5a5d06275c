"""LLM-path errors, importable without loading the `openai` SDK."""

from __future__ import annotations

from webworld.errors import WebworldError


class LLMError(WebworldError):
    """The endpoint cannot be used (down, wrong key, unknown model, bad replies)."""


class BudgetExceeded(WebworldError):
    """The run's token or dollar budget is spent; stages stop cleanly."""
