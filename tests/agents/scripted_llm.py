"""A scripted OpenAI-compatible server (FastAPI on loopback) for the LLM-agent tests.

Each request to ``/v1/chat/completions`` takes the next :class:`Reply` of the script (or
``default`` when the script is empty) and is recorded, so tests can check what was sent.
A reply can be malformed JSON, truncated output, a schema-invalid object, an HTTP error
(429, 500, 401, 404) or slow; ``reject_formats`` makes the server refuse response
formats it "does not support", as llama.cpp refuses ``json_schema``; ``together`` holds
every reply until that many requests are in at once (concurrency shown without a clock).
A reply can also call tools (:func:`tool_reply`), as a model behind a tool-calling API does.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


@dataclass
class Reply:
    content: str = "{}"
    status: int = 200
    delay: float = 0.0
    finish_reason: str = "stop"
    prompt_tokens: int = 100
    completion_tokens: int = 50
    tool_calls: list[dict[str, Any]] | None = None  # {"name": ..., "arguments": {...}} each


def tool_reply(*calls: tuple[str, dict[str, Any]], content: str = "") -> Reply:
    """A reply that calls these tools, ``(name, arguments)`` each, in order."""
    return Reply(content, finish_reason="tool_calls",
                 tool_calls=[{"name": name, "arguments": args} for name, args in calls])


@dataclass
class Script:
    replies: deque[Reply] = field(default_factory=deque)
    default: Reply | None = None
    reject_formats: set[str] = field(default_factory=set)
    requests: list[dict[str, Any]] = field(default_factory=list)
    models: list[str] = field(default_factory=lambda: ["scripted-model"])
    responder: Callable[[dict[str, Any]], Reply | str | dict] | None = None
    api_key: str | None = None  # when set, any other bearer key gets a 401
    together: int = 0  # > 0: no reply before this many requests arrived (a 500 after 30 s)

    def push(self, *replies: Reply | str | dict) -> None:
        for r in replies:
            if isinstance(r, dict):
                r = Reply(json.dumps(r))
            self.replies.append(r if isinstance(r, Reply) else Reply(r))


def create_scripted_app(script: Script) -> FastAPI:
    app = FastAPI()
    arrived: list[asyncio.Event] = []  # the gate of `together`, made in the server's loop

    def authorised(request: Request) -> bool:
        return script.api_key is None or (
            request.headers.get("authorization") == f"Bearer {script.api_key}")

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> JSONResponse:
        if not authorised(request):
            return _error(401, "Incorrect API key provided.")
        body = await request.json()
        script.requests.append(body)
        if body.get("model") not in script.models:
            return _error(404, f"The model `{body.get('model')}` does not exist.")
        fmt = (body.get("response_format") or {}).get("type")
        if fmt in script.reject_formats:
            return _error(400, f"response_format type {fmt!r} is not supported")
        if script.replies:
            reply = script.replies.popleft()
        elif script.responder is not None:
            made = script.responder(body)
            reply = made if isinstance(made, Reply) else Reply(
                made if isinstance(made, str) else json.dumps(made))
        else:
            reply = script.default
        if reply is None:
            return _error(500, "the script is empty")
        if script.together and not await _all_in(arrived, len(script.requests), script.together):
            return _error(500, f"{len(script.requests)} of {script.together} requests came at once")
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            return _error(reply.status, f"scripted error {reply.status}")
        return JSONResponse({
            "id": f"chatcmpl-{len(script.requests)}", "object": "chat.completion",
            "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                         "message": _message(reply, len(script.requests))}],
            "usage": {"prompt_tokens": reply.prompt_tokens,
                      "completion_tokens": reply.completion_tokens,
                      "total_tokens": reply.prompt_tokens + reply.completion_tokens},
        })

    @app.get("/v1/models")
    async def models(request: Request) -> Any:
        if not authorised(request):
            return _error(401, "Incorrect API key provided.")
        return {"object": "list", "data": [{"id": m, "object": "model"} for m in script.models]}

    return app


def _message(reply: Reply, request: int) -> dict[str, Any]:
    """The assistant message of ``reply``: its text, and its tool calls in OpenAI's shape."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{request}_{k}", "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
            for k, c in enumerate(reply.tool_calls)]
    return message


async def _all_in(gate: list[asyncio.Event], requests: int, together: int) -> bool:
    """Wait until ``together`` requests have arrived (30 s at most: a hang guard)."""
    if not gate:
        gate.append(asyncio.Event())
    if requests >= together:
        gate[0].set()
    try:
        async with asyncio.timeout(30):
            await gate[0].wait()
    except TimeoutError:
        return False
    return True


def _error(status: int, message: str) -> JSONResponse:
    kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
            429: "rate_limit_error"}.get(status, "server_error")
    return JSONResponse({"error": {"message": message, "type": kind, "code": None}},
                        status_code=status)


def run_to_end(client: Any, work: Any) -> Any:
    """Await ``work`` (a coroutine using ``client``) in a fresh event loop, then close the
    client: each test's client lives in exactly one loop."""

    async def go() -> Any:
        try:
            return await work
        finally:
            await client.close()

    return asyncio.run(go())
