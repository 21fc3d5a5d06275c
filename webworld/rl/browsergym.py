"""webworld tasks as BrowserGym tasks (optional: ``pip install --no-deps browsergym-core``).

Every task instance registers as ``browsergym/webworld.<world>.<task>.<slots hash>``, so
BrowserGym's own ``BrowserEnv`` (its observation, its element ids, its action set) and
AgentLab agents run on webworld's worlds; the reward comes from the site server's ground
truth, as in webworld's environments::

    from webworld.rl.browsergym import register_browsergym_tasks, use_debian_chromium
    use_debian_chromium()
    ids = register_browsergym_tasks("sites", "trajectories")
    env = gymnasium.make(ids[0], headless=True, slow_mo=0, pre_observation_delay=0)

The worlds are served in this process on 127.0.0.1 (started on first use).
browsergym-core pins an older Playwright than webworld; it runs with webworld's
(install it ``--no-deps``, as ``scripts/setup.sh`` does).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import playwright.sync_api
from browsergym.core.task import AbstractBrowserTask

from webworld import contract
from webworld.browser.launch import CHROMIUM_ARGS, VIEWPORT, chromium_path
from webworld.errors import WebworldError
from webworld.rl.tasks import WorldSet, load_worlds, state_from_truth

PREFIX = "webworld"
_SERVED: dict[tuple[str, str], tuple[WorldSet, Any]] = {}
_LOCK = threading.Lock()


def use_debian_chromium() -> None:
    """Make every Chromium that BrowserGym launches (the env's, and its chat window's,
    which takes no launch options) use webworld's Chromium and flags."""
    import browsergym.core

    chromium = browsergym.core._get_global_playwright().chromium
    if getattr(chromium.launch, "webworld", False):
        return
    original = chromium.launch
    ours = [a for a in CHROMIUM_ARGS if a not in ("--headless", "--hide-scrollbars")]

    def launch(**kwargs: Any) -> Any:
        kwargs.setdefault("executable_path", chromium_path())
        kwargs["args"] = list(kwargs.get("args") or []) + [a for a in ours
                                                           if a not in (kwargs.get("args") or [])]
        return original(**kwargs)

    launch.webworld = True  # type: ignore[attr-defined]
    chromium.launch = launch


def release_playwright() -> None:
    """Stop BrowserGym's process-wide Playwright. Its sync API keeps an event loop running
    in the main thread, which makes ``asyncio.run`` (webworld's verifier, for one) fail
    until it is stopped; BrowserGym starts a new one when it needs it again."""
    import browsergym.core

    if browsergym.core._PLAYWRIGHT is not None:
        browsergym.core._PLAYWRIGHT.stop()
        browsergym.core._set_global_playwright(None)


def served(sites: str, trajectories: str, source: str = "verified") -> tuple[WorldSet, Any]:
    """The worlds under ``sites``, served once per process on loopback."""
    key = (str(Path(sites).resolve()), str(Path(trajectories).resolve()))
    with _LOCK:
        if key not in _SERVED:
            from webworld.rl.live import SiteServer

            worlds = load_worlds(Path(sites), Path(trajectories), source=source)
            _SERVED[key] = (worlds, SiteServer(worlds))
        return _SERVED[key]


class WebworldTask(AbstractBrowserTask):
    """One webworld task instance, as BrowserGym sees a task."""

    @classmethod
    def get_task_id(cls) -> str:
        return PREFIX

    def __init__(self, seed: int, sites: str, trajectories: str, instance: str) -> None:
        super().__init__(seed)
        self.viewport = dict(VIEWPORT)
        self.slow_mo, self.timeout = 0, 10_000
        self.locale, self.timezone_id = "en-US", "UTC"
        self.worlds, self.server = served(sites, trajectories)
        self.instance = self.worlds.instance(instance)
        self.world = self.worlds.world(self.instance.world_id)
        self.sid = ""

    def setup(self, page: playwright.sync_api.Page) -> tuple[str, dict]:
        base = self.server.base(self.world.id)
        made = self._truth("post", contract.TRUTH_SESSION_URL.format(base=base),
                           {"page": self.instance.start_page})
        self.sid = made["session"]
        page.context.add_cookies([{"name": made["name"], "value": made["cookie"],
                                   "domain": httpx.URL(base).host, "path": made["path"]}])
        page.goto(contract.PAGE_URL.format(base=base, page=self.instance.start_page))
        intent = self.instance.intents[self.random.randint(len(self.instance.intents))]
        return intent, self.instance.info()

    def validate(self, page: playwright.sync_api.Page, chat_messages: list) -> tuple:
        url = contract.TRUTH_STATE_URL.format(base=self.server.base(self.world.id))
        state = state_from_truth(self.world.machine, self._truth("get", url, {"session": self.sid}))
        goal_page, conds = self.world.goal(self.instance)
        success = self.world.machine.satisfies(state, goal_page, conds)
        done = success or self.world.spec.page(state.page).terminal
        return (1.0 if success else 0.0), done, "", {"success": success, "page": state.page}

    def _truth(self, method: str, url: str, params: dict[str, str]) -> dict[str, Any]:
        response = httpx.request(method.upper(), url, params=params, headers=self.server.headers,
                                 timeout=10)
        if response.status_code != 200:
            raise WebworldError(f"ground truth at {url} answered HTTP {response.status_code}")
        return response.json()


def task_name(instance_id: str) -> str:
    return f"{PREFIX}." + instance_id.replace("/", ".")


def register_browsergym_tasks(sites: str | Path = "sites", trajectories: str | Path = "trajectories",
                              split: str | None = None) -> list[str]:
    """Register every task instance (of ``split``) with BrowserGym; returns the gym ids."""
    import gymnasium
    from browsergym.core.registration import register_task

    worlds, _ = served(str(sites), str(trajectories))
    ids = []
    for inst in worlds.instances(split):
        name = task_name(inst.id)
        if f"browsergym/{name}" not in gymnasium.registry:
            register_task(name, WebworldTask, task_kwargs={
                "sites": str(sites), "trajectories": str(trajectories), "instance": inst.id})
        ids.append(f"browsergym/{name}")
    return ids
