"""The client of a webworld env server, and TRL's environment through it.

:class:`WebworldClient` is an OpenEnv ``EnvClient`` (one WebSocket session, async; ``.sync()``
for synchronous code) with webworld's typed messages and the server's token::

    from webworld.interop.openenv import WebworldAction, WebworldClient

    with WebworldClient("http://127.0.0.1:8000", token=None).sync() as env:
        result = env.reset(seed=0)                    # or task="<world>/<task>", observation="full"
        result = env.step(WebworldAction(action="click('12')"))   # or "click('12')"
        result.observation.last_action_error, result.reward, result.done, env.state()

A server that closes the connection (stopped, killed, or a message past its size limit) is
:class:`EnvServerGone` at once, a message it refuses :class:`EnvServerError` with OpenEnv's
code; the session goes on after the latter.

:class:`WebworldServerEnv` is what ``GRPOTrainer(environment_factory=...)`` takes, as TRL's
BrowserGym example takes OpenEnv's BrowserGym client: the tools of
:class:`webworld.interop.trl.WebworldEnv` (the same methods, :class:`ActionTools`), each a
step on the server; ``get_reward`` sums the server's rewards.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from webworld import contract
from webworld.errors import UsageError, WebworldError
from webworld.interop.openenv._openenv import load, needs_openenv
from webworld.interop.trl import ActionTools, Played, page_text

__all__ = ["EnvServerError", "EnvServerGone", "WebworldClient", "WebworldServerEnv",
           "environment_factory"]

_env_client = load("openenv.core.env_client")


class EnvServerError(WebworldError, RuntimeError):
    """The server refused a message; ``code`` is OpenEnv's (``VALIDATION_ERROR``,
    ``INVALID_JSON``, ``EXECUTION_ERROR``, ``CAPACITY_REACHED``, ...)."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class EnvServerGone(WebworldError, ConnectionError):
    """The server cannot be reached, or closed this session's connection."""


if _env_client is not None:
    from websockets.asyncio.client import connect as ws_connect
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

    from webworld.interop.openenv.models import WebworldAction, WebworldObservation, WebworldState
    from webworld.interop.openenv.server import is_loopback

    _client_types = load("openenv.core.client_types")
    assert _client_types is not None
    StepResult = _client_types.StepResult

    class WebworldClient(_env_client.EnvClient):  # type: ignore[name-defined, misc]
        """One session on a webworld env server (OpenEnv's ``EnvClient``)."""

        def __init__(self, base_url: str, *, token: str | None = None, **kwargs: Any) -> None:
            super().__init__(base_url, **kwargs)
            self._headers = {contract.TOKEN_HEADER: f"Bearer {token}"} if token else {}

        async def reset(self, *, seed: int | None = None, task: str | None = None,
                        intent: str | None = None, split: str | None = None,
                        observation: str | None = None, reward: str | None = None,
                        max_steps: int | None = None, screenshot: bool | None = None,
                        episode_id: str | None = None) -> Any:
            """A new episode: ``task`` names one (else one is drawn, by ``seed`` if given); the
            rest are :class:`~webworld.interop.openenv.models.ResetOptions`."""
            given = {"seed": seed, "task": task, "intent": intent, "split": split,
                     "observation": observation, "reward": reward, "max_steps": max_steps,
                     "screenshot": screenshot, "episode_id": episode_id}
            return await super().reset(**{k: v for k, v in given.items() if v is not None})

        async def connect(self) -> WebworldClient:
            """OpenEnv's connect, with the token's header (and, as OpenEnv's, no proxy for a
            server on this machine)."""
            if self._ws is None:
                host = urlsplit(self._ws_url).hostname or ""
                try:
                    self._ws = await ws_connect(
                        self._ws_url, open_timeout=self._connect_timeout,
                        max_size=self._max_message_size, additional_headers=self._headers,
                        proxy=None if is_loopback(host) else True)
                except InvalidStatus as exc:
                    raise _handshake_refused(self._ws_url, exc.response.status_code,
                                             bool(self._headers)) from None
                except (OSError, TimeoutError, InvalidHandshake) as exc:
                    raise EnvServerGone(f"cannot reach the env server at {self._ws_url}: "
                                        f"{exc}") from None
            return self

        async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
            try:
                await self._send(message)
                response = await self._receive()
            except (ConnectionClosed, OSError) as exc:
                await self._drop()
                raise EnvServerGone(f"the env server at {self._ws_url} closed the session "
                                    f"({exc}): it stopped, or refused the message") from None
            except asyncio.TimeoutError:
                await self._drop()
                raise EnvServerGone(f"the env server at {self._ws_url} did not answer within "
                                    f"{self._message_timeout:g} s") from None
            if response.get("type") == "error":
                raise _refusal(response.get("data") or {})
            return response

        async def _drop(self) -> None:
            ws, self._ws = self._ws, None
            if ws is not None:
                try:
                    await ws.close()
                except Exception:  # closing a connection that is gone: nothing to report
                    pass

        def _step_payload(self, action: WebworldAction | str) -> dict[str, Any]:
            if isinstance(action, str):
                action = WebworldAction(action=action)
            return action.model_dump(exclude_none=True)

        def _parse_result(self, payload: dict[str, Any]) -> Any:
            obs = WebworldObservation(**payload.get("observation", {}),
                                      reward=payload.get("reward"),
                                      done=payload.get("done", False))
            return StepResult(observation=obs, reward=obs.reward, done=obs.done)

        def _parse_state(self, payload: dict[str, Any]) -> WebworldState:
            return WebworldState.model_validate(payload)


def _handshake_refused(url: str, status: int, token: bool) -> EnvServerError:
    if status in (401, 403):
        why = "refused the token" if token else "needs a token (token=...)"
        return EnvServerError(f"the env server at {url} {why} (HTTP {status})", "UNAUTHORIZED")
    return EnvServerError(f"the env server at {url} answered HTTP {status}", f"HTTP_{status}")


def _refusal(data: dict[str, Any]) -> EnvServerError:
    code = str(data.get("code") or "UNKNOWN")
    problems = "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg', '')}"
                         for e in (data.get("errors") or [])[:3])
    message = str(data.get("message") or "error") + (f" ({problems})" if problems else "")
    return EnvServerError(f"the env server refused the message ({code}): {message}", code)


class WebworldServerEnv(ActionTools):
    """One episode at a time on a webworld env server; TRL calls its public methods as tools
    (those of :class:`webworld.interop.trl.WebworldEnv`)."""

    def __init__(self, url: str, *, token: str | None = None, **options: Any) -> None:
        if _env_client is None:
            raise needs_openenv()
        self.url = url
        self._client = WebworldClient(url, token=token).sync()
        self._options = options  # observation, reward, max_steps, split: per reset
        self._done = True
        self.played = Played()

    def reset(self, instance: str | None = None, intent: str | None = None, **_: Any) -> str:
        """Start the dataset row's task instance; the page, appended to the task's message."""
        started = time.perf_counter()
        result = self._client.reset(task=instance, intent=intent, **self._options)
        self.played = Played(instance=instance or self._client.state().instance,
                             env_seconds=time.perf_counter() - started)
        self._done = False
        return "\n\n" + page_text(result.observation.model_dump())

    def get_reward(self) -> float:
        """The episode's reward, summed over its steps, as the server gave it."""
        return self.played.reward

    def _step(self, action: str) -> tuple[dict[str, Any], float, bool, bool]:
        started = time.perf_counter()
        result = self._client.step(action)
        self.played.env_seconds += time.perf_counter() - started
        obs = result.observation
        return obs.model_dump(), float(result.reward or 0.0), result.done, obs.success

    def _close(self) -> None:
        self._client.close()

    def __enter__(self) -> WebworldServerEnv:
        return self

    def __exit__(self, *_: Any) -> None:
        self._close()


def environment_factory(url: str | Sequence[str], *, token: str | None = None,
                        **options: Any) -> Callable[[], WebworldServerEnv]:
    """What ``GRPOTrainer(environment_factory=...)`` takes: each call a new session on the
    server at ``url`` (``options``: observation, reward, max_steps, split, per reset). Past
    one process or machine, ``url`` is a list of servers of the same worlds: the calls take
    them in turn, so the sessions spread evenly."""
    urls = [url] if isinstance(url, str) else list(url)
    if not urls:
        raise UsageError("environment_factory needs the URL of at least one env server")
    turns = itertools.cycle(urls)
    return lambda: WebworldServerEnv(next(turns), token=token, **options)


def __getattr__(name: str) -> Any:
    if _env_client is None and name in __all__:
        raise needs_openenv()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
