"""The live environment: real Chromium on the real sites, truth from the server.

Each episode is a fresh server session at the task's start page, opened in the tab the
environment already has (no new browser context per episode): a token-protected
``/__truth/session`` call, its cookie, one page load. Actions go through
:class:`~webworld.browser.tab.BrowserTab`; after a page load the true state is read from
the server (the reward's only source). The worlds are served in-process on 127.0.0.1,
or by a ``webworld serve`` already running (``server_url`` and its ``token``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from gymnasium.vector import AutoresetMode
from playwright.async_api import Error as PlaywrightError

from webworld import contract
from webworld.aio import retrieve_later
from webworld.browser.actions import ActionRefused, BrowserAction
from webworld.browser.capture import ScreenshotCache
from webworld.browser.launch import new_context
from webworld.browser.observe import Observation
from webworld.browser.tab import BrowserTab, NavigationError, TabConfig
from webworld.errors import UsageError, WebworldError
from webworld.rl.env import WebEnv, WebVectorEnv, load_world_set, make_config
from webworld.rl.episode import UNTOUCHED, EnvConfig, Episode, PageResult
from webworld.rl.runtime import Runtime
from webworld.rl.tasks import TaskInstance, World, WorldSet, state_from_truth
from webworld.serve.multi import WORLD_PREFIX
from webworld.spec.semantics import State

TRUTH_TIMEOUT_S = 10.0


class ServerGone(WebworldError):
    """The site server stopped answering under the environment."""


class SiteServer:
    """Where the worlds are served: in this process on loopback, or by a running server."""

    def __init__(self, worlds: WorldSet, url: str | None = None, token: str | None = None) -> None:
        self.server = None
        if url is None:
            from webworld.serve.multi import create_multi_app
            from webworld.serve.runner import LiveServer

            app = create_multi_app([w.site.root for w in worlds.worlds.values()])
            self.server = LiveServer(app).start()
            self.url, self.token = self.server.url, app.state.truth_token
        else:
            if not token:
                raise UsageError("a running server needs its ground-truth token (--token)")
            self.url, self.token = url.rstrip("/"), token
        self.headers = {contract.TOKEN_HEADER: f"Bearer {self.token}"}

    def base(self, world_id: str) -> str:
        return self.url + WORLD_PREFIX.format(world=world_id)

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


class LivePage:
    """Two tabs (each in its own browser context, created once) on the served worlds:
    one holds the episode, the other loads the next episode's start page in the
    background, so a reset usually only swaps them. What an :class:`Episode` acts on."""

    def __init__(self, tabs: list[BrowserTab], server: SiteServer, client: httpx.AsyncClient,
                 screenshot: bool) -> None:
        self.tabs, self.server, self.client, self.screenshot = tabs, server, client, screenshot
        self.active = 0
        self.world: World | None = None
        self.sid = ""
        self._ahead: tuple[tuple[str, str], asyncio.Task] | None = None

    @property
    def tab(self) -> BrowserTab:
        return self.tabs[self.active]

    async def prepare(self, world: World, instance: TaskInstance) -> None:
        self._drop_ahead()
        spare = self.tabs[1 - self.active]
        task = asyncio.ensure_future(self._load(spare, world, instance.start_page))
        retrieve_later(task)  # awaited by open(), or dropped
        self._ahead = ((world.id, instance.start_page), task)

    def _drop_ahead(self) -> None:
        if self._ahead is not None:
            self._ahead[1].cancel()
            self._ahead = None

    async def open(self, world: World, instance: TaskInstance) -> tuple[Observation, State]:
        self.world = world
        loaded = None
        if self._ahead is not None and self._ahead[0] == (world.id, instance.start_page):
            task, self._ahead = self._ahead[1], None
            try:
                loaded = await task
                self.active = 1 - self.active
            except (WebworldError, asyncio.CancelledError, PlaywrightError):
                loaded = None  # load it again below, where a failure is reported
        self._drop_ahead()
        if loaded is None:
            loaded = await self._load(self.tab, world, instance.start_page)
        self.sid, state = loaded
        return await self.tab.observe(screenshot=self.screenshot), \
            state_from_truth(world.machine, state)

    async def _load(self, tab: BrowserTab, world: World, page: str) -> tuple[str, dict[str, Any]]:
        """A new server session at ``page``, opened in ``tab``: (session id, true state)."""
        base = self.server.base(world.id)
        made = await self._truth_call("post", contract.TRUTH_SESSION_URL.format(base=base),
                                      {"page": page})
        await tab.page.context.add_cookies([{
            "name": made["name"], "value": made["cookie"], "domain": httpx.URL(base).host,
            "path": made["path"], "httpOnly": True, "sameSite": "Lax"}])
        try:
            await tab.goto(contract.PAGE_URL.format(base=base, page=page))
        except NavigationError as exc:
            raise await self._gone(exc) from None
        return made["session"], made["state"]

    async def act(self, action: BrowserAction, seen: Observation) -> PageResult:
        try:
            outcome = await self.tab.act(action, seen)
        except ActionRefused as refused:
            if refused.code in UNTOUCHED:
                raise
            return PageResult(await self.tab.observe(screenshot=self.screenshot), error=refused)
        except NavigationError as exc:
            gone = await self._gone(exc)
            if gone is not exc:
                raise gone from None
            return await self._not_loaded(exc)
        if not outcome.navigated:
            return PageResult(await self.tab.observe(screenshot=self.screenshot))
        state, seen = await asyncio.gather(self._state(), self.tab.observe(screenshot=self.screenshot))
        return PageResult(seen, state=state)

    async def _not_loaded(self, exc: NavigationError) -> PageResult:
        """An action whose next page did not come while the server is up (a load past its
        deadline on a loaded machine, a swap whose answer was lost): the step reports it and
        the episode goes on from the page the browser shows, at the server's true state.
        A long RL run is not ended by one slow page."""
        state, seen = await asyncio.gather(self._state(),
                                           self.tab.observe(screenshot=self.screenshot))
        return PageResult(seen, state=state, error=ActionRefused("navigation", str(exc)))

    async def _state(self) -> State:
        assert self.world is not None
        url = contract.TRUTH_STATE_URL.format(base=self.server.base(self.world.id))
        truth = await self._truth_call("get", url, {"session": self.sid})
        return state_from_truth(self.world.machine, truth)

    async def _truth_call(self, method: str, url: str, params: dict[str, str]) -> dict[str, Any]:
        try:
            response = await truth_request(self.client, method, url, params=params,
                                           headers=self.server.headers)
        except httpx.HTTPError as exc:
            raise ServerGone(f"the site server at {self.server.url} is not answering "
                             f"({type(exc).__name__}: {exc})") from None
        if response.status_code in (401, 403):
            raise UsageError(f"the site server at {self.server.url} refused the ground-truth "
                             "token; pass the token it printed at start")
        if response.status_code != 200:
            raise ServerGone(f"ground truth at {url} answered HTTP {response.status_code}: "
                             f"{response.text[:200]}")
        return response.json()

    async def _gone(self, exc: NavigationError) -> WebworldError:
        """A page that did not load: name the server when it is down."""
        try:
            await self.client.get(f"{self.server.url}/", timeout=2.0)
        except httpx.HTTPError:
            return ServerGone(f"the site server at {self.server.url} stopped answering ({exc})")
        return exc


async def truth_request(client: httpx.AsyncClient, method: str, url: str, *,
                        params: dict[str, str], headers: dict[str, str]) -> httpx.Response:
    """A ground-truth request, tried once more on a new connection when the server closed the
    one it went out on without an answer: a pooled connection the server closed as idle just as
    it was reused. webworld's servers keep one longer than the client does
    (:data:`webworld.serve.runner.KEEP_ALIVE_S`); a server run otherwise may not. Safe to
    repeat: a read, or a new session."""
    def send() -> Any:
        return client.request(method.upper(), url, params=params, headers=headers,
                              timeout=TRUTH_TIMEOUT_S)
    try:
        return await send()
    except httpx.RemoteProtocolError:
        return await send()


class _Browser:
    """A runtime, the server and an HTTP client for the truth: what live envs share."""

    def __init__(self, worlds: WorldSet, config: EnvConfig, server_url: str | None,
                 token: str | None) -> None:
        self.server = SiteServer(worlds, server_url, token)
        try:
            self.runtime = Runtime()
        except BaseException:
            self.server.close()
            raise
        self.client = self.runtime.run(_client())
        self.tab_config = TabConfig(action_timeout_ms=config.action_timeout_ms,
                                    navigation_timeout_ms=config.navigation_timeout_ms)
        self.shots = ScreenshotCache()  # the episodes' screenshots by page, where they take them

    def episode(self, config: EnvConfig) -> Episode:
        async def make() -> Episode:
            browser = self.runtime.browser
            assert browser is not None
            shots = self.shots if config.screenshot else None
            tabs = [await BrowserTab.open(await new_context(browser), self.tab_config,
                                          shots=shots) for _ in range(2)]
            return Episode(LivePage(tabs, self.server, self.client, config.screenshot), config)
        return self.runtime.run(make())

    def close(self) -> None:
        try:
            self.runtime.run(self.client.aclose(), timeout=10)
        except WebworldError:
            pass
        self.runtime.close()
        self.server.close()


async def _client() -> httpx.AsyncClient:
    return httpx.AsyncClient()


class LiveEnv(WebEnv):
    """A gymnasium env on the live sites (see :mod:`webworld.rl.env` for reset options).

    ``LiveEnv(sites="sites", trajectories="trajectories", split="train",
    observation="compact")``; pass a loaded :class:`WorldSet` as ``worlds`` to share one.
    """

    def __init__(self, worlds: WorldSet | None = None, *, sites: Any = "sites",
                 trajectories: Any = "trajectories", split: str | None = "train",
                 source: str = "verified", dataset: Any = None, world_ids: list[str] | None = None,
                 config: EnvConfig | dict[str, Any] | None = None, server_url: str | None = None,
                 token: str | None = None, render_mode: str | None = None, **settings: Any) -> None:
        worlds = load_world_set(worlds, sites, trajectories, source, dataset, world_ids)
        super().__init__(worlds, split, make_config(config, settings), render_mode)
        self._browser = _Browser(worlds, self.config, server_url, token)
        self.episode = self._browser.episode(self.config)

    def _drive(self, coro: Any) -> Any:
        return self._browser.runtime.run(coro)

    def _rgb_frame(self) -> Any:
        from webworld.rl.episode import screenshot_array

        return screenshot_array(self.screenshot())

    def screenshot(self) -> bytes | None:
        """The viewport of the current page, as PNG (``None`` before the first reset)."""
        if self.episode is None or self.episode.seen is None:
            return None
        if self.episode.seen.screenshot is not None:
            return self.episode.seen.screenshot
        page = self.episode.page
        assert isinstance(page, LivePage)
        return self._drive(page.tab.screenshot())

    def close(self) -> None:
        if getattr(self, "_browser", None) is not None:
            self._browser.close()
            self._browser = None  # type: ignore[assignment]
        super().close()


class LiveVectorEnv(WebVectorEnv):
    """N live episodes, each in its own browser context of one Chromium, stepped at once."""

    def __init__(self, num_envs: int = 4, worlds: WorldSet | None = None, *, sites: Any = "sites",
                 trajectories: Any = "trajectories", split: str | None = "train",
                 source: str = "verified", dataset: Any = None, world_ids: list[str] | None = None,
                 config: EnvConfig | dict[str, Any] | None = None, server_url: str | None = None,
                 token: str | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 **settings: Any) -> None:
        if num_envs < 1:
            raise UsageError(f"num_envs must be at least 1, got {num_envs}")
        worlds = load_world_set(worlds, sites, trajectories, source, dataset, world_ids)
        config = make_config(config, settings)
        self._browser = _Browser(worlds, config, server_url, token)
        try:
            episodes = [self._browser.episode(config) for _ in range(num_envs)]
            super().__init__(worlds, split, config, episodes, autoreset_mode)
        except BaseException:
            self._browser.close()
            raise

    def _gather(self, coros: list[Any]) -> list[Any]:
        import asyncio

        async def together() -> list[Any]:
            return list(await asyncio.gather(*coros))
        return self._browser.runtime.run(together())

    def close_extras(self, **kwargs: Any) -> None:
        self._browser.close()
