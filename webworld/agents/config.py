"""Where the LLM is and what it may spend: flags > environment > config file > defaults."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from webworld.errors import UsageError, validation_problems

CONFIG_FILE = Path("webworld.toml")
StructuredMode = Literal["auto", "json_schema", "json_object", "text"]
Stage = Literal["propose", "critic", "improve", "render", "intents", "thoughts"]
STAGES: tuple[str, ...] = Stage.__args__  # type: ignore[attr-defined]


class Price(BaseModel):
    """US dollars per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


# Public list prices of a few common models; local servers cost nothing. Override or
# extend in webworld.toml ([llm.prices."model-name"] input = ..., output = ...).
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(input=0.15, output=0.60),
    "gpt-4o": Price(input=2.50, output=10.00),
    "gpt-4.1-mini": Price(input=0.40, output=1.60),
    "gpt-4.1-nano": Price(input=0.10, output=0.40),
    "gpt-4.1": Price(input=2.00, output=8.00),
}


class LLMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    api_key: str | None = None
    model: str = "gpt-4o-mini"
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(4, ge=0)
    backoff_s: float = Field(1.0, ge=0, description="first retry delay; doubles each time")
    concurrency: int = Field(4, ge=1)
    budget_usd: float | None = Field(None, ge=0)
    budget_tokens: int | None = Field(None, ge=0)
    max_repairs: int = Field(3, ge=0, description="tries to fix invalid JSON / schema errors")
    structured: StructuredMode = "auto"
    temperature: float = Field(0.2, ge=0, le=2)
    max_tokens: int = Field(4096, ge=1)
    cache_dir: Path = Path(".webworld-cache/llm")
    prices: dict[str, Price] = Field(default_factory=dict)

    def price(self, model: str) -> Price | None:
        table = {**DEFAULT_PRICES, **self.prices}
        return table.get(model) or next(
            (p for name, p in table.items() if model.startswith(name + "-")), None)


# Per setting, the environment variables that may hold it, the first set one winning:
# webworld's own names before the OpenAI SDK's.
ENV: dict[str, tuple[str, ...]] = {
    "base_url": ("WEBWORLD_LLM_BASE_URL", "OPENAI_BASE_URL"),
    "api_key": ("WEBWORLD_LLM_API_KEY", "OPENAI_API_KEY"),
    "model": ("WEBWORLD_LLM_MODEL",),
}


def load_llm_config(path: Path | None = None, **flags: object) -> LLMConfig:
    """Merge the ``[llm]`` table of the config file, the environment and explicit flags."""
    data: dict[str, object] = {}
    file = path or (CONFIG_FILE if CONFIG_FILE.is_file() else None)
    if file is not None:
        data.update(_read_file(file))
    for key, names in ENV.items():
        found = next((os.environ[n] for n in names if os.environ.get(n)), None)
        if found is not None:
            data[key] = found
    data.update({k: v for k, v in flags.items() if v is not None})
    try:
        return LLMConfig.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"bad LLM settings: {validation_problems(exc)}",
                         str(file or "flags")) from None


def _read_file(path: Path) -> dict[str, object]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError("no such config file", str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"malformed TOML: {exc}", str(path)) from None
    llm = data.get("llm", {})
    if not isinstance(llm, dict):
        raise UsageError("[llm] must be a table", str(path))
    return llm


def parse_stages(text: str) -> set[str]:
    """``"propose,render"`` -> ``{"propose", "render"}``; unknown names are a usage error."""
    stages = {s.strip() for s in text.split(",") if s.strip()}
    unknown = stages - set(STAGES) - {"all"}
    if unknown:
        raise UsageError(f"unknown LLM stage(s) {', '.join(sorted(unknown))}; choose from "
                         f"{', '.join(STAGES)} or all", "--llm")
    return set(STAGES) if "all" in stages else stages
