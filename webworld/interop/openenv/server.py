"""webworld's worlds as an OpenEnv environment server (``webworld env serve``).

openenv-core's own server (:class:`openenv.core.env_server.HTTPEnvServer`) serves
:class:`WebworldEnvironment`: HTTP ``/reset`` ``/step`` ``/state`` ``/schema`` ``/metadata``
``/health`` (each request a fresh environment, as OpenEnv defines them) and WebSocket
sessions on ``/ws``, one environment per connection, up to ``max_sessions`` at once. Every
session plays one :class:`~webworld.rl.episode.Episode` at a time on the process's shared
worlds (:func:`webworld.interop.trl.shared_worlds`): the fast env's snapshots, or for the live
env one Chromium and one site server, whose episodes (two browser contexts each) are pooled:
a session that ends gives its episode back for the next one.

A reset draws a task instance of the split with the session's generator (seeded by ``seed``,
drawn as :class:`webworld.rl.env.WebEnv` draws it) or plays the one named by ``task``; the
observation mode, the reward (success from the server's truth, or progress shaping), the step
limit and, for the live env, screenshots are chosen there too (:class:`ResetOptions`). A step
reads the action with the envs' parser; what the env refuses is its error in the
observation, a step after the end is the ``ended`` error, and a malformed request is a 4xx
(HTTP) or a ``VALIDATION_ERROR`` / ``INVALID_JSON`` message (WebSocket), after which the
session goes on.

The server binds 127.0.0.1 unless told otherwise and needs a token off loopback: clients send
``Authorization: Bearer <token>`` (the header of webworld's ground-truth routes); a request past
:data:`MAX_BODY_BYTES` is refused with 413 and a WebSocket message past
:data:`MAX_MESSAGE_BYTES` closes its connection (1009), which frees the session.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import ipaddress
import socket
import threading
import uuid
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gymnasium.utils import seeding
from pydantic import ValidationError

from webworld import __version__, contract
from webworld.errors import UsageError, WebworldError, validation_problems
from webworld.interop.openenv._openenv import load, needs_openenv
from webworld.interop.openenv.models import ENDED_CODE, ResetOptions
from webworld.interop.trl import ENDED, SharedWorlds, shared_worlds
from webworld.rl.env import TaskSampler, make_config
from webworld.rl.episode import Episode, ObservationMode, RewardMode, shown_action

if TYPE_CHECKING:
    from fastapi import FastAPI

MAX_BODY_BYTES = 1 << 20      # an HTTP request's body
MAX_MESSAGE_BYTES = 1 << 20   # a WebSocket message from a client
MAX_SESSIONS = {"fast": 1024, "live": 16}  # the default of --max-sessions
OPEN_PATHS = frozenset({"/health"})  # answered without the token (a container's health check)
SPLITS = ("train", "validation", "test", "all")

_interfaces = load("openenv.core.env_server.interfaces")


@dataclass
class Served:
    """What every session of a server shares: the worlds and their env, the default split,
    and the episodes sessions take at their first reset and give back when they end."""

    shared: SharedWorlds
    split: str | None
    held: int = 0  # episodes sessions hold now
    _free: list[Episode] = field(default_factory=list)
    _samplers: dict[str | None, TaskSampler] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def sampler(self, split: str | None) -> TaskSampler:
        if split not in self._samplers:
            self._samplers[split] = TaskSampler(self.shared.worlds, split)
        return self._samplers[split]

    async def take(self) -> Episode:
        with self._lock:
            self.held += 1
            if self._free:
                return self._free.pop()
        try:
            if self.shared.env == "fast":
                return self.shared.episode()
            return await asyncio.to_thread(self.shared.episode)  # two browser contexts
        except BaseException:
            with self._lock:
                self.held -= 1
            raise

    def give_back(self, episode: Episode) -> None:
        with self._lock:
            self.held -= 1
            self._free.append(episode)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {"episodes_held": self.held, "episodes_pooled": len(self._free)}


if _interfaces is not None:
    from webworld.interop.openenv.models import (
        WebworldAction,
        WebworldObservation,
        WebworldState,
    )

    class WebworldEnvironment(_interfaces.Environment):  # type: ignore[name-defined, misc]
        """One session: an episode at a time on the served worlds (OpenEnv's ``Environment``)."""

        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self, served: Served) -> None:
            super().__init__()
            self._served = served
            self._episode: Episode | None = None  # taken at the first reset
            self._rng = seeding.np_random()[0]
            self._state = WebworldState()
            self._last = WebworldObservation(done=True)
            self._screenshots = False

        # OpenEnv's server awaits these on its loop: the fast env's steps run inline (they
        # never wait), the live env's on the browser's loop.

        async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                              **options: Any) -> WebworldObservation:
            request = reset_options(seed=seed, episode_id=episode_id, **options)
            if request.screenshot and self._served.shared.env != "live":
                raise UsageError("the fast env has no screenshots; serve with --env live")
            if seed is not None:
                self._rng = seeding.np_random(seed)[0]
            split = self._served.split if request.split is None else \
                None if request.split == "all" else request.split
            world, instance, intent = self._served.sampler(split).pick(
                self._rng, {"task": request.task, "intent": request.intent})
            if self._episode is None:
                self._episode = await self._served.take()
            self._episode.config = self._served.shared.config.model_copy(update={
                k: v for k, v in (("observation", request.observation),
                                  ("reward", request.reward),
                                  ("max_steps", request.max_steps)) if v is not None})
            obs, info = await self._served.shared.drive_async(
                self._episode.reset(world, instance, intent))
            self._screenshots = request.screenshot
            self._state = WebworldState(
                episode_id=request.episode_id or uuid.uuid4().hex, step_count=0,
                world=world.id, task=instance.task_id, instance=instance.id, intent=intent,
                split=world.split, max_steps=info["max_steps"], done=False)
            return await self._observe(obs, info, reward=None, done=False)

        async def step_async(self, action: WebworldAction, timeout_s: float | None = None,
                             **_: Any) -> WebworldObservation:
            episode = self._episode
            if episode is None or episode.done:
                return self._last.model_copy(update={
                    "last_action": shown_action(action.text()), "last_action_error": ENDED,
                    "error_code": ENDED_CODE, "reward": 0.0, "done": True, "screenshot": None})
            obs, reward, terminated, truncated, info = await self._served.shared.drive_async(
                episode.step(action.text()))
            self._state.step_count = info["step"]
            self._state.done = episode.done
            return await self._observe(obs, info, reward=float(reward),
                                       done=terminated or truncated, truncated=truncated)

        # ... and OpenEnv's interface has these too: the same, from synchronous code

        def reset(self, seed: int | None = None, episode_id: str | None = None,
                  **options: Any) -> WebworldObservation:
            return asyncio.run(self.reset_async(seed, episode_id, **options))

        def step(self, action: WebworldAction, timeout_s: float | None = None,
                 **kwargs: Any) -> WebworldObservation:
            return asyncio.run(self.step_async(action))

        @property
        def state(self) -> WebworldState:
            return self._state

        def get_metadata(self) -> Any:
            types = load("openenv.core.env_server.types")
            assert types is not None
            return types.EnvironmentMetadata(
                name="webworld", version=__version__,
                description="Generated websites with exact server truth: each task instance an "
                            "episode, webworld's action language the actions.")

        def close(self) -> None:
            episode, self._episode = self._episode, None
            if episode is not None:
                self._served.give_back(episode)

        async def _observe(self, obs: dict[str, Any], info: dict[str, Any], *,
                           reward: float | None, done: bool,
                           truncated: bool = False) -> WebworldObservation:
            shot = None
            if self._screenshots:
                assert self._episode is not None
                png = await self._served.shared.drive_async(self._episode.page.tab.screenshot())
                shot = base64.b64encode(png).decode("ascii")
            self._last = WebworldObservation(
                goal=obs["goal"], url=obs["url"], axtree=obs["axtree"],
                last_action=obs["last_action"], last_action_error=obs["last_action_error"],
                error_code=info["error_code"], success=info["success"], truncated=truncated,
                step=info["step"], max_steps=info["max_steps"], screenshot=shot,
                reward=reward, done=done)
            return self._last


def reset_options(**given: Any) -> ResetOptions:
    """The options of a reset, or the one-line error naming what was wrong."""
    try:
        return ResetOptions.model_validate({k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        raise UsageError(f"bad reset options: {validation_problems(exc, limit=3)}") from None


def create_app(worlds: Path | str, *, env: str = "fast", split: str = "train",
               observation: ObservationMode = "compact", reward: RewardMode = "success",
               max_sessions: int | None = None, token: str | None = None) -> FastAPI:
    """The server's app: OpenEnv's routes over the worlds of a `webworld build` output, a
    token check when ``token`` is given, and ``GET /webworld/sessions`` (sessions open,
    episodes held and pooled)."""
    http = load("openenv.core.env_server.http_server")
    if http is None:
        raise needs_openenv()
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    config = make_config(None, {"observation": observation, "reward": reward})
    served = Served(shared_worlds(worlds, split=None if split == "all" else split, env=env,
                                  observation=config.observation, reward=config.reward),
                    None if split == "all" else split)
    server = http.HTTPEnvServer(partial(WebworldEnvironment, served), WebworldAction,
                                WebworldObservation,
                                max_concurrent_envs=max_sessions or MAX_SESSIONS[env])
    app = FastAPI(title="webworld env server", version=__version__,
                  description="webworld's worlds through OpenEnv's HTTP and WebSocket API.")
    server.register_routes(app)

    @app.get("/webworld/sessions", tags=["Environment Info"])
    def sessions() -> dict[str, int]:
        """Sessions open now and the most allowed; episodes held by sessions and pooled."""
        return {"active": server.active_sessions, "max": server.max_concurrent_envs,
                **served.counts()}

    async def refused(request: Request, exc: Exception) -> JSONResponse:
        # the client's mistake is a 400; a part of the env that failed under it (a site
        # server gone) a 503: neither is the 500 of a bug
        return JSONResponse({"detail": str(exc)},
                            status_code=400 if isinstance(exc, UsageError) else 503)

    app.add_exception_handler(WebworldError, refused)
    app.add_middleware(Gate, token=token, max_body=MAX_BODY_BYTES)
    app.state.served, app.state.env_server = served, server
    return app


class Gate:
    """In front of every route (ASGI): the token, when the server has one, and the size of an
    HTTP request's body, read before any route sees it."""

    def __init__(self, app: Any, *, token: str | None, max_body: int) -> None:
        self.app, self.max_body = app, max_body
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        if self.expected is not None and scope["path"] not in OPEN_PATHS:
            given = dict(scope["headers"]).get(contract.TOKEN_HEADER.lower().encode(), b"")
            if not hmac.compare_digest(given, self.expected):
                return await _refuse(scope, receive, send)
        if kind == "http":
            body = await _read_capped(receive, self.max_body)
            if body is None:
                return await _answer(scope, receive, send, 413,
                                     f"request body over {self.max_body} bytes")
            receive = _replay(body, receive)
        else:
            send = _closing_quietly(send)
        await self.app(scope, receive, send)


async def _read_capped(receive: Any, limit: int) -> bytes | None:
    """The whole body, or None past ``limit`` bytes (or when the client went away)."""
    body = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if not message.get("more_body"):
            return body


def _replay(body: bytes, receive: Any) -> Any:
    sent = False

    async def again() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return await receive()  # what comes after the body: a disconnect
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}
    return again


def _closing_quietly(send: Any) -> Any:
    """``send``, but closing a WebSocket the client has closed already is no error: OpenEnv
    closes each session's socket when it ends, often after the client did, and uvicorn would
    log each of those as an exception with its traceback."""
    async def sending(message: dict[str, Any]) -> None:
        try:
            await send(message)
        except OSError:
            if message["type"] != "websocket.close":
                raise
    return sending


async def _refuse(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "websocket":  # closed before the handshake: the client gets HTTP 403
        await send({"type": "websocket.close", "code": 1008, "reason": "token required"})
        return
    await _answer(scope, receive, send, 401,
                  f"this server needs '{contract.TOKEN_HEADER}: Bearer <token>'")


async def _answer(scope: dict[str, Any], receive: Any, send: Any, status: int,
                  detail: str) -> None:
    from starlette.responses import JSONResponse

    await JSONResponse({"detail": detail}, status_code=status)(scope, receive, send)


# --- listening ------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token: whoever reaches the port could
    drive the env (as a Ray cluster off loopback needs its token)."""
    if not is_loopback(host) and not token:
        raise UsageError(f"refusing to serve on {host} without a token: pass --token (or set "
                         "WEBWORLD_ENV_TOKEN); clients send 'Authorization: Bearer <token>'")


def listen(host: str, port: int, *, token: str | None) -> socket.socket:
    """A socket bound and listening on ``host``:``port`` (0: any free port), for :func:`run`."""
    check_exposure(host, token)
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)[0]
        sock = socket.socket(family, kind, proto)  # IPPROTO_TCP: asyncio sets TCP_NODELAY
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def run(app: FastAPI, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C (which is raised here as KeyboardInterrupt)."""
    import uvicorn

    from webworld.serve.runner import KEEP_ALIVE_S

    config = uvicorn.Config(app, log_level="warning", access_log=False,
                            ws_max_size=MAX_MESSAGE_BYTES, timeout_keep_alive=KEEP_ALIVE_S)
    uvicorn.Server(config).run(sockets=[sock])
