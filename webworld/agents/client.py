"""One client for every LLM stage, over any OpenAI-compatible endpoint (the `openai` SDK).

* Structured output: ``json_schema`` where the server supports it, else ``json_object``
  with the schema attached (llama.cpp's grammar-constrained JSON), else plain text with
  the schema in the prompt; the first mode the server accepts is remembered.
* Every reply is parsed and validated against a pydantic model; invalid JSON or schema
  errors go back to the model for repair, a bounded number of times.
* Retries with exponential backoff on 429, 5xx and timeouts; a concurrency limit.
* A ledger of tokens and dollars per stage, and a budget that stops the run cleanly.
* An on-disk cache keyed by the request: a re-run costs nothing and reproduces results.

What a model writes is data: it is parsed as JSON and validated, never executed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from webworld.agents.config import LLMConfig
from webworld.agents.errors import BudgetExceeded, LLMError
from webworld.agents.ledger import Ledger
from webworld.errors import validation_problems
from webworld.fsio import atomic_write_json

T = TypeVar("T", bound=BaseModel)
MODES = ("json_schema", "json_object", "text")


class LLMClient:
    def __init__(self, config: LLMConfig, ledger: Ledger | None = None) -> None:
        self.config = config
        self.ledger = ledger or Ledger()
        self.mode: str | None = None if config.structured == "auto" else config.structured
        self._semaphore = asyncio.Semaphore(config.concurrency)
        self._sdk = openai.AsyncOpenAI(base_url=config.base_url,
                                       api_key=config.api_key or "not-needed",
                                       timeout=config.timeout_s, max_retries=0)

    # --- public ---------------------------------------------------------------------------

    async def structured(self, stage: str, messages: list[dict[str, str]], schema: type[T],
                         *, context: dict[str, Any] | None = None) -> T:
        """A reply parsed and validated as ``schema`` (``context`` goes to its validators),
        repairing invalid replies."""
        history = list(messages)
        problem = ""
        for attempt in range(self.config.max_repairs + 1):
            text, cut = await self._complete_structured(stage, history, schema)
            try:
                return schema.model_validate(_extract_json(text), context=context)
            except (ValueError, ValidationError) as exc:
                problem = _describe_problem(exc)
                if cut:
                    problem = ("your reply was cut off at the token limit; write a shorter, "
                               "complete reply. " + problem)
            if attempt < self.config.max_repairs:
                self.ledger.add(stage, repairs=1)
                history += [{"role": "assistant", "content": text[:8000]},
                            {"role": "user", "content": REPAIR_PROMPT.format(problem=problem)}]
        raise LLMError(f"{stage}: no valid {schema.__name__} after "
                       f"{self.config.max_repairs + 1} replies (last problem: {problem})")

    async def preflight(self) -> None:
        """Fail fast, in one line, on a dead endpoint, a wrong key or an unknown model."""
        try:
            listed = [m.id async for m in self._sdk.models.list()]
        except openai.NotFoundError:
            return  # a server without /models: the first real request will tell
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise LLMError(f"{self._where()} rejected the API key ({exc.status_code}): check "
                               "WEBWORLD_LLM_API_KEY / OPENAI_API_KEY") from None
            return
        except (openai.APIConnectionError, openai.APITimeoutError):
            raise LLMError(f"cannot reach the LLM endpoint {self._where()}: is it running, "
                           "and is the URL right?") from None
        if listed and self.config.model not in listed:
            shown = ", ".join(listed[:8]) + (" ..." if len(listed) > 8 else "")
            raise LLMError(f"model {self.config.model!r} does not exist on {self._where()} "
                           f"(it serves: {shown})")

    async def text(self, stage: str, messages: list[dict[str, str]]) -> str:
        return (await self._call(stage, messages, None))[0]

    async def close(self) -> None:
        await self._sdk.close()

    # --- structured-output negotiation ----------------------------------------------------

    async def _complete_structured(self, stage: str, messages: list[dict[str, str]],
                                   schema: type[BaseModel]) -> tuple[str, bool]:
        modes = [self.mode] if self.mode else list(MODES)
        for mode in modes:
            try:
                reply = await self._call(stage, _with_schema(messages, schema, mode),
                                         _response_format(schema, mode))
            except openai.BadRequestError as exc:
                if mode != modes[-1] and _rejects_format(exc):
                    continue  # the server does not support this mode: try the next one
                raise LLMError(f"{stage}: the endpoint refused the request: "
                               f"{_short(exc)}") from None
            self.mode = mode
            return reply
        raise LLMError(f"{stage}: no structured-output mode works with this endpoint")

    # --- one request: cache, budget, retries ----------------------------------------------

    async def _call(self, stage: str, messages: list[dict[str, str]],
                    response_format: dict[str, Any] | None) -> tuple[str, bool]:
        """(reply text, whether the model was cut off at the token limit)."""
        request = {"model": self.config.model, "messages": messages,
                   "temperature": self.config.temperature, "max_tokens": self.config.max_tokens,
                   **({"response_format": response_format} if response_format else {})}
        key = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
        cached = self._cache_get(key)
        if cached is not None:
            self.ledger.add(stage, cache_hits=1)
            return cached, False
        self._check_budget()
        async with self._semaphore:
            reply = await self._with_retries(stage, request)
        choice = reply.choices[0] if reply.choices else None
        text = (choice.message.content or "") if choice else ""
        self._account(stage, reply)
        cut = choice is not None and choice.finish_reason == "length"
        if choice is not None and not cut:
            self._cache_put(key, text)  # a truncated reply is not worth reproducing
        return text, cut

    async def _with_retries(self, stage: str, request: dict[str, Any]) -> Any:
        delay = self.config.backoff_s
        for attempt in range(self.config.max_retries + 1):
            try:
                return await self._sdk.chat.completions.create(**request)
            except (openai.RateLimitError, openai.InternalServerError,
                    openai.APITimeoutError) as exc:
                if attempt == self.config.max_retries:
                    raise LLMError(f"{stage}: {self._where()} kept failing "
                                   f"({_short(exc)}) after {attempt + 1} tries") from None
                self.ledger.add(stage, retries=1)
                await asyncio.sleep(delay)
                delay *= 2
            except openai.APIConnectionError:
                raise LLMError(f"cannot reach the LLM endpoint {self._where()}: is it "
                               "running, and is the URL right?") from None
            except openai.AuthenticationError:
                raise LLMError(f"{self._where()} rejected the API key (401): check "
                               "WEBWORLD_LLM_API_KEY / OPENAI_API_KEY") from None
            except openai.PermissionDeniedError:
                raise LLMError(f"{self._where()} refused access (403) to model "
                               f"{self.config.model!r}") from None
            except openai.NotFoundError:
                raise LLMError(f"model {self.config.model!r} does not exist on "
                               f"{self._where()} (404)") from None
        raise AssertionError("unreachable")

    def _where(self) -> str:
        return self.config.base_url or "the OpenAI API"

    # --- accounting -----------------------------------------------------------------------

    def _check_budget(self) -> None:
        cfg = self.config
        if cfg.budget_usd is not None and self.ledger.usd >= cfg.budget_usd:
            raise BudgetExceeded(f"LLM budget of ${cfg.budget_usd:.4f} is spent "
                                 f"(${self.ledger.usd:.4f})")
        if cfg.budget_tokens is not None and self.ledger.tokens >= cfg.budget_tokens:
            raise BudgetExceeded(f"LLM budget of {cfg.budget_tokens} tokens is spent "
                                 f"({self.ledger.tokens})")

    def _account(self, stage: str, reply: Any) -> None:
        usage = getattr(reply, "usage", None)
        tokens_in = getattr(usage, "prompt_tokens", 0) or 0
        tokens_out = getattr(usage, "completion_tokens", 0) or 0
        price = self.config.price(self.config.model)
        if price is None:
            self.ledger.unpriced.add(self.config.model)
        usd = (tokens_in * price.input + tokens_out * price.output) / 1e6 if price else 0.0
        self.ledger.add(stage, calls=1, input_tokens=tokens_in, output_tokens=tokens_out,
                        usd=usd)

    # --- cache ----------------------------------------------------------------------------

    def _cache_get(self, key: str) -> str | None:
        path = self.config.cache_dir / key[:2] / f"{key}.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))["text"]
        except (FileNotFoundError, ValueError, KeyError):
            return None

    def _cache_put(self, key: str, text: str) -> None:
        atomic_write_json(self.config.cache_dir / key[:2] / f"{key}.json",
                          {"model": self.config.model, "text": text})


# --- helpers ------------------------------------------------------------------------------

REPAIR_PROMPT = ("Your reply could not be used: {problem}\nReply again with the complete "
                 "corrected JSON only, no explanations and no code fences.")


def _response_format(schema: type[BaseModel], mode: str) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema.model_json_schema()}
    return None


def _with_schema(messages: list[dict[str, str]], schema: type[BaseModel], mode: str
                 ) -> list[dict[str, str]]:
    """In plain-text mode the schema travels in the system prompt."""
    if mode != "text":
        return messages
    note = ("Reply with one JSON object that matches this JSON Schema, and nothing else:\n"
            + json.dumps(schema.model_json_schema()))
    return [{"role": "system", "content": note}, *messages]


def _rejects_format(exc: openai.BadRequestError) -> bool:
    text = str(exc).lower()
    return "response_format" in text or "json_schema" in text or "schema" in text


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _extract_json(text: str) -> Any:
    """The JSON value in a reply, tolerating code fences and prose around one object."""
    text = text.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end and (start, end) != (0, len(text) - 1):
            return json.loads(text[start:end + 1])
        raise ValueError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg}") from None


def _describe_problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return f"the JSON does not match the schema: {validation_problems(exc, limit=8)}"
    return str(exc)


def _short(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
