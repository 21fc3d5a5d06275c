"""MiniWoB++ in webworld's API: the 130 task pages of the ``miniwob`` wheel, served on
127.0.0.1, read and acted on exactly like a webworld world.

The observation is webworld's (the accessibility text with element ids of the page,
without MiniWoB's display for people: the instruction, the timer and the scores; the
utterance is the goal), actions are webworld's action language carried out
by :class:`~webworld.browser.tab.BrowserTab`, and the reward is MiniWoB's own: its
``WOB_REWARD_GLOBAL`` (scaled by the time left, as MiniWoB defines it) when
``WOB_DONE_GLOBAL`` is set; ``info`` has the raw reward and MiniWoB's reason. An episode
restarts the task in the open page with ``Math.seedrandom(seed)``, so a seed fixes it.
"""

from __future__ import annotations

from typing import Any

import gymnasium

from webworld.browser.launch import new_context
from webworld.browser.tab import BrowserTab, NavigationError, TabConfig
from webworld.errors import WebworldError
from webworld.rl.env import element_box, make_config
from webworld.rl.episode import (
    UNTOUCHED,
    EnvConfig,
    EpisodeOver,
    attempt,
    observation_dict,
    screenshot_array,
)
from webworld.rl.miniwob_tasks import check_task, miniwob_root, miniwob_tasks  # noqa: F401
from webworld.rl.runtime import Runtime
from webworld.rl.spaces import action_space, observation_space

HUMAN_DISPLAY = "#query, #reward-display, #sync-task-cover, #click-canvas"
START_JS = """([seed, maxMs]) => {
  core.endEpisode(0);
  Math.seedrandom(seed);
  core.EPISODE_MAX_TIME = maxMs;
  core.startEpisodeReal();
}"""
STATUS_JS = """() => ({done: !!WOB_DONE_GLOBAL, reward: Number(WOB_REWARD_GLOBAL),
  raw: Number(WOB_RAW_REWARD_GLOBAL),
  reason: WOB_REWARD_REASON == null ? null : String(WOB_REWARD_REASON)})"""
UTTERANCE_JS = """() => { const u = core.getUtterance(); return typeof u === "string" ? u : u.utterance; }"""


class MiniWoBServer:
    """The wheel's ``html`` folder served read-only on loopback."""

    def __init__(self) -> None:
        from fastapi import FastAPI
        from fastapi.staticfiles import StaticFiles

        from webworld.serve.runner import LiveServer

        app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
        app.mount("/", StaticFiles(directory=miniwob_root()), name="miniwob")
        self.server = LiveServer(app).start()
        self.url = self.server.url

    def task_url(self, task: str) -> str:
        return f"{self.url}/miniwob/{task}.html"

    def close(self) -> None:
        self.server.stop()


class MiniWoBEnv(gymnasium.Env):
    """One MiniWoB++ task (``task="click-button"``); same spaces as the webworld envs."""

    metadata = {"render_modes": ["ansi", "rgb_array"]}

    def __init__(self, task: str = "click-button", *, episode_max_ms: int = 60_000,
                 config: EnvConfig | dict[str, Any] | None = None, render_mode: str | None = None,
                 **settings: Any) -> None:
        self.task = check_task(task)
        self.config = make_config(config, settings)
        self.episode_max_ms, self.render_mode = episode_max_ms, render_mode
        self.observation_space = observation_space(screenshot=self.config.screenshot)
        self.action_space = action_space()
        self.max_steps = self.config.max_steps or 50
        self.server = MiniWoBServer()
        try:
            self.runtime = Runtime()
            tab_config = TabConfig(action_timeout_ms=self.config.action_timeout_ms,
                                   navigation_timeout_ms=self.config.navigation_timeout_ms)
            self.tab = self.runtime.run(self._open_tab(tab_config))
        except BaseException:
            self.server.close()
            raise
        self.goal, self.steps, self.done, self.seen = "", 0, True, None
        self._last_obs: dict[str, Any] | None = None

    async def _open_tab(self, config: TabConfig) -> BrowserTab:
        assert self.runtime.browser is not None
        tab = await BrowserTab.open(await new_context(self.runtime.browser), config,
                                    skip=HUMAN_DISPLAY)
        await tab.goto(self.server.task_url(self.task))
        return tab

    # --- gymnasium ------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        episode_seed = int(self.np_random.integers(2**31))
        task = (options or {}).get("task")
        if task is not None and check_task(str(task)) != self.task:
            self.task = str(task)  # another task of the suite: its page, in the same tab
            self.runtime.run(self.tab.goto(self.server.task_url(self.task)))
        obs, info = self.runtime.run(self._reset(episode_seed))
        self._last_obs = obs
        return obs, info

    async def _reset(self, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        page = self.tab.page
        await self.tab.page.mouse.move(0, 0)
        self.tab.hovered = False
        await page.evaluate(START_JS, [seed, self.episode_max_ms])
        await page.wait_for_function("() => WOB_TASK_READY", timeout=10_000)
        self.goal = str(await page.evaluate(UTTERANCE_JS))
        self.seen = await self.tab.observe(screenshot=self.config.screenshot)
        self.steps, self.done = 0, False
        return (observation_dict(self.goal, self.seen, "", "", self.config),
                {"task": self.task, "seed": seed, "step": 0, "error_code": ""})

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        result = self.runtime.run(self._step(action))
        self._last_obs = result[0]
        return result

    async def _step(self, text: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.done or self.seen is None:
            raise EpisodeOver("the episode is over; call reset() first")
        self.steps += 1
        seen = self.seen
        try:
            shown, error, _ = await attempt(text, lambda action: self.tab.act(action, seen))
        except NavigationError as exc:
            raise WebworldError(f"MiniWoB page {self.task}: {exc}") from None
        status = await self.tab.page.evaluate(STATUS_JS)
        if error is None or error.code not in UNTOUCHED:
            self.seen = await self.tab.observe(screenshot=self.config.screenshot)
        terminated = status["done"]
        truncated = not terminated and self.steps >= self.max_steps
        self.done = terminated or truncated
        reward = status["reward"] if terminated else 0.0
        info = {"task": self.task, "step": self.steps, "raw_reward": status["raw"],
                "reason": status["reason"], "error_code": error.code if error else ""}
        return (observation_dict(self.goal, self.seen, shown, str(error) if error else "",
                                 self.config), float(reward), terminated, truncated, info)

    def render(self) -> Any:
        if self._last_obs is None:
            return None
        if self.render_mode == "ansi":
            return f"Task: {self._last_obs['goal']}\n{self._last_obs['axtree']}"
        if self.render_mode == "rgb_array":
            return screenshot_array(self.screenshot())
        return None

    def screenshot(self) -> bytes:
        """The viewport of the task's page, as PNG."""
        return self.runtime.run(self.tab.screenshot())

    def element_box(self, bid: str) -> tuple[float, float, float, float] | None:
        """(x, y, width, height) of element ``bid`` on the page last observed."""
        return element_box(self.seen, bid)

    def close(self) -> None:
        if getattr(self, "runtime", None) is not None:
            self.runtime.close()
            self.runtime = None  # type: ignore[assignment]
            self.server.close()
        super().close()
