"""The fast environment: the live environment's API and observations, no browser.

A :class:`FastPage` is what an :class:`~webworld.rl.episode.Episode` acts on: the
world's :class:`~webworld.spec.semantics.Machine` stands in for the server (through the
server's own :func:`~webworld.serve.handling.handle_action`), and a
:class:`~webworld.rl.fast.model.PageModel` over the captured layouts stands in for
Chromium. Snapshots are captured once per rendered site (``webworld env snapshot``,
or on first use) and reused until the site changes.

Not reproduced, by design: screenshots (there is no renderer), and sites that the
built-in renderer did not make (their scripts and styles are unknown); both are refused
with a clear message.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from gymnasium.vector import AutoresetMode

from webworld.browser.actions import ActionRefused, BrowserAction
from webworld.browser.observe import Observation, public_url
from webworld.contract import WORLD_PREFIX
from webworld.errors import UsageError
from webworld.rl.env import WebEnv, WebVectorEnv, load_world_set, make_config, run_inline
from webworld.rl.episode import UNTOUCHED, EnvConfig, Episode, PageResult
from webworld.rl.fast.capture import build_snapshot, load_snapshot
from webworld.rl.fast.model import FastEnvGap, Layout, PageModel, Request
from webworld.rl.tasks import TaskInstance, World, WorldSet
from webworld.serve.handling import handle_action
from webworld.spec.semantics import State

Progress = Callable[[str, int, int], None]


class FastWorld:
    """A world's snapshot, indexed: state -> layout, built lazily."""

    def __init__(self, world: World, snapshot: dict[str, Any]) -> None:
        self.world = world
        self.base = WORLD_PREFIX.format(world=world.id)
        self.placeholder = snapshot["placeholder"]
        self.index = {State(page, tuple(tuple(v) if isinstance(v, list) else v for v in values)): i
                      for i, (page, values) in enumerate(snapshot["states"])}
        self.table = snapshot["table"]
        self.raw = snapshot["layouts"]
        self.layouts: dict[int, Layout] = {}

    def page(self, state: State, flash: str | None) -> PageModel:
        i = self.index.get(state)
        if i is None:
            raise FastEnvGap(f"{self.world.id}: the snapshot has no state on page {state.page!r} "
                             "like this one; build it again with a larger --state-budget")
        which = self.table[i][1 if flash else 0]
        if which not in self.layouts:
            self.layouts[which] = Layout.from_capture(self.raw[which])
        url = public_url(f"http://127.0.0.1{self.base}/page/{state.page}")
        return PageModel(self.layouts[which], url, flash, self.placeholder)

    def serve(self, state: State, request: Request) -> tuple[State, str | None]:
        """What the site server would answer (the state, and the next page's message)."""
        machine = self.world.machine
        path = request.path.split("?", 1)[0]
        if not path.startswith(self.base + "/"):
            raise FastEnvGap(f"a page load to {request.path} leaves the world")
        rest = path[len(self.base):]
        if rest.startswith("/act/") and rest[5:] in machine.actions:
            handled = handle_action(machine, state, rest[5:], request.method, request.form)
            if handled.status != 303:
                raise FastEnvGap(f"{request.method} {request.path} gives an error page "
                                 f"({handled.status}) the snapshot does not hold")
            return handled.state, handled.flash
        if rest in ("/", "") or rest.startswith("/page/"):
            return state, None  # the server shows the session's own page
        if rest == "/reset":
            return machine.initial_state(), None
        raise FastEnvGap(f"a page load to {request.path}: not a page of the world")


class FastPage:
    """The fast stand-in for a browser tab on the served worlds."""

    def __init__(self, worlds: dict[str, FastWorld]) -> None:
        self.worlds = worlds
        self.fast: FastWorld | None = None
        self.model: PageModel | None = None
        self.state: State | None = None

    async def open(self, world: World, instance: TaskInstance) -> tuple[Observation, State]:
        self.fast = self.worlds.get(world.id)
        if self.fast is None:
            raise UsageError(f"the fast environment has no snapshot of world {world.id!r}")
        self.state = world.machine.initial_state(instance.start_page)
        self.model = self.fast.page(self.state, None)
        return self.model.observe(), self.state

    async def prepare(self, world: World, instance: TaskInstance) -> None:
        """Nothing to load ahead: opening a page costs microseconds."""

    async def act(self, action: BrowserAction, seen: Observation) -> PageResult:
        assert self.model is not None and self.fast is not None and self.state is not None
        try:
            request = self.model.act(action, seen)
        except ActionRefused as refused:
            if refused.code in UNTOUCHED:
                raise
            return PageResult(self.model.observe(), error=refused)
        if request is None:
            return PageResult(self.model.observe())
        self.state, flash = self.fast.serve(self.state, request)
        self.model = self.fast.page(self.state, flash)
        return PageResult(self.model.observe(), state=self.state)


# the loaded snapshot of each World object while an env holds it: an eval's slots (one FastEnv
# each) share one copy, as a FastVectorEnv's episodes do (a world's copy is a few hundred MB)
_LOADED: weakref.WeakValueDictionary[int, FastWorld] = weakref.WeakValueDictionary()


def snapshots(worlds: WorldSet, *, build: bool = True, state_budget: int | None = None,
              progress: Progress | None = None) -> dict[str, FastWorld]:
    """Every world's snapshot, captured now where missing or stale (when ``build``)."""
    out = {}
    for world in worlds.worlds.values():
        if not world.instances:
            continue
        loaded = _LOADED.get(id(world))  # alive, it holds its world: the id is that world's
        if loaded is not None:
            out[world.id] = loaded
            continue
        snap = load_snapshot(world.site)
        if snap is None:
            if not build:
                raise UsageError(f"no up-to-date snapshot of {world.id}: run "
                                 f"`webworld env snapshot {world.site.root}`")
            tick = (lambda done, total, w=world.id: progress(w, done, total)) if progress else None
            kwargs = {"state_budget": state_budget} if state_budget else {}
            snap = build_snapshot(world.site, progress=tick, **kwargs)
        out[world.id] = _LOADED[id(world)] = FastWorld(world, snap)
    return out


def _check_config(config: EnvConfig) -> EnvConfig:
    if config.screenshot:
        raise UsageError("the fast environment has no screenshots; use the live environment "
                         "(webworld.rl.LiveEnv) for them")
    return config


class FastEnv(WebEnv):
    """The live env's API and observations at training speed (see the module doc)."""

    def __init__(self, worlds: WorldSet | None = None, *, sites: Any = "sites",
                 trajectories: Any = "trajectories", split: str | None = "train",
                 source: str = "verified", dataset: Any = None, world_ids: list[str] | None = None,
                 config: EnvConfig | dict[str, Any] | None = None, build: bool = True,
                 render_mode: str | None = None, **settings: Any) -> None:
        worlds = load_world_set(worlds, sites, trajectories, source, dataset, world_ids)
        super().__init__(worlds, split, _check_config(make_config(config, settings)), render_mode)
        self.episode = Episode(FastPage(snapshots(worlds, build=build)), self.config)

    def _drive(self, coro: Any) -> Any:
        return run_inline(coro)


class FastVectorEnv(WebVectorEnv):
    """N fast episodes (stepped in turn: each step is a few hundred microseconds)."""

    def __init__(self, num_envs: int = 4, worlds: WorldSet | None = None, *, sites: Any = "sites",
                 trajectories: Any = "trajectories", split: str | None = "train",
                 source: str = "verified", dataset: Any = None, world_ids: list[str] | None = None,
                 config: EnvConfig | dict[str, Any] | None = None, build: bool = True,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 **settings: Any) -> None:
        if num_envs < 1:
            raise UsageError(f"num_envs must be at least 1, got {num_envs}")
        worlds = load_world_set(worlds, sites, trajectories, source, dataset, world_ids)
        config = _check_config(make_config(config, settings))
        fast = snapshots(worlds, build=build)
        episodes = [Episode(FastPage(fast), config) for _ in range(num_envs)]
        super().__init__(worlds, split, config, episodes, autoreset_mode)

    def _gather(self, coros: list[Any]) -> list[Any]:
        return [run_inline(c) for c in coros]
