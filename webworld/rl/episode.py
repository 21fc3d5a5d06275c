"""What every webworld environment does around an action, with or without a browser.

An episode is one task instance on one page. :class:`Episode` owns everything the live
and the fast environment must agree on byte for byte: the observation dict, reading an
action (:func:`~webworld.browser.actions.read_reply`), when the page is read again, the
reward from the true state, ``terminated`` and ``truncated``, and ``info``. The two
environments supply only a :class:`Page` (a real tab, or the fast model).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from webworld.browser.actions import ActionRefused, ActionSyntaxError, BrowserAction, read_reply
from webworld.browser.observe import Observation, observation_text
from webworld.errors import WebworldError
from webworld.rl.tasks import TaskInstance, World
from webworld.spec.semantics import State

T = TypeVar("T")
ObservationMode = Literal["full", "compact"]
RewardMode = Literal["success", "progress"]
# Refusals decided from the observation alone: the page was not touched, so it is not read again.
UNTOUCHED = frozenset({"syntax", "unknown_id", "wrong_element", "disabled", "bad_value"})


class EnvConfig(BaseModel):
    """Settings of a webworld environment (live or fast)."""

    model_config = ConfigDict(extra="forbid")

    observation: ObservationMode = "full"
    screenshot: bool = Field(False, description="add the viewport as an RGB array (live env)")
    max_steps: int | None = Field(None, ge=1, description="default: twice the shortest path")
    reward: RewardMode = Field("success", description="success: 1 when the goal holds, else 0; "
                               "progress: that plus Phi(s') - Phi(s), Phi = -(FSM actions to "
                               "the goal) from the true state (info has both either way)")
    action_timeout_ms: float = Field(3000, gt=0)
    navigation_timeout_ms: float = Field(10000, gt=0)


class EpisodeOver(WebworldError):
    """``step`` after the episode ended: call ``reset`` first."""


@dataclass
class PageResult:
    """What a page did with one action."""

    seen: Observation                 # the page after the action
    state: State | None = None        # the true state, when it may have changed
    error: ActionRefused | None = None


class Page(Protocol):
    """A page an episode acts on: a browser tab (live) or the fast model."""

    async def open(self, world: World, instance: TaskInstance) -> tuple[Observation, State]: ...

    async def act(self, action: BrowserAction, seen: Observation) -> PageResult: ...

    async def prepare(self, world: World, instance: TaskInstance) -> None:
        """A hint: the next episode will likely open ``instance`` (a page may load it now)."""


@dataclass
class Episode:
    """One episode at a time on one :class:`Page`."""

    page: Page
    config: EnvConfig
    world: World | None = None
    instance: TaskInstance | None = None
    intent: str = ""
    seen: Observation | None = None
    state: State | None = None
    steps: int = 0
    max_steps: int = 0
    done: bool = True
    history: list[str] = field(default_factory=list)
    potential: float = 0.0  # Phi of the true state: -(FSM actions to the goal)

    async def reset(self, world: World, instance: TaskInstance, intent: str
                    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.world, self.instance, self.intent = world, instance, intent
        self.seen, self.state = await self.page.open(world, instance)
        self.steps, self.done, self.history = 0, False, []
        self.max_steps = self.config.max_steps or max(1, 2 * instance.shortest_steps)
        self.potential = world.potential(instance, self.state)
        return self._observation("", ""), self._info(success=False, error_code="", progress=0.0)

    async def prepare(self, world: World, instance: TaskInstance) -> None:
        await self.page.prepare(world, instance)

    async def step(self, text: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.done or self.seen is None:
            raise EpisodeOver("the episode is over; call reset() first")
        self.steps += 1
        seen = self.seen
        shown, error, turn = await attempt(text, lambda action: self.page.act(action, seen))
        turn = turn or PageResult(self.seen, error=error)  # refused before the page was touched
        error = error or turn.error
        self.seen = turn.seen
        if turn.state is not None:
            self.state = turn.state
        self.history.append(shown)
        success, terminated = self._judge()
        truncated = not terminated and self.steps >= self.max_steps
        self.done = terminated or truncated
        progress = self._progress()
        reward = float(success) + (progress if self.config.reward == "progress" else 0.0)
        obs = self._observation(shown, str(error) if error else "")
        return obs, reward, terminated, truncated, self._info(
            success=success, error_code=error.code if error else "", progress=progress)

    def _progress(self) -> float:
        """Phi(s') - Phi(s) of the step just taken (0 when the true state did not move)."""
        assert self.world is not None and self.instance is not None and self.state is not None
        before, self.potential = self.potential, self.world.potential(self.instance, self.state)
        return self.potential - before

    def _judge(self) -> tuple[bool, bool]:
        """(the goal holds, the episode ends): any success page ends it."""
        assert self.world is not None and self.instance is not None and self.state is not None
        page, conds = self.world.goal(self.instance)
        success = self.world.machine.satisfies(self.state, page, conds)
        terminal = self.world.spec.page(self.state.page).terminal
        return success, success or terminal

    def _observation(self, last_action: str, error: str) -> dict[str, Any]:
        assert self.seen is not None
        return observation_dict(self.intent, self.seen, last_action, error, self.config)

    def _info(self, *, success: bool, error_code: str, progress: float) -> dict[str, Any]:
        assert self.world is not None and self.instance is not None and self.state is not None
        return {**self.instance.info(), "split": self.world.split, "step": self.steps,
                "max_steps": self.max_steps, "success": success, "error_code": error_code,
                "distance": self.world.distance(self.instance, self.state),
                "potential": self.potential, "progress": progress,
                "history": list(self.history)}


async def attempt(text: str, act: Callable[[BrowserAction], Awaitable[T]]
                  ) -> tuple[str, ActionRefused | None, T | None]:
    """Read ``text`` as an action and ``act`` on it: (the action as shown, the refusal
    if it was refused before acting, what ``act`` returned)."""
    shown = shown_action(text)
    try:
        action = read_reply(text)
        shown = str(action)
        return shown, None, await act(action)
    except ActionSyntaxError as exc:
        return shown, ActionRefused("syntax", str(exc)), None
    except ActionRefused as refused:
        return shown, refused, None


def observation_dict(goal: str, seen: Observation, last_action: str, error: str,
                     config: EnvConfig) -> dict[str, Any]:
    """What every webworld environment returns as its observation."""
    obs: dict[str, Any] = {
        "goal": goal,
        "url": seen.url,
        "axtree": observation_text(seen.text, config.observation),
        "last_action": last_action,
        "last_action_error": error,
    }
    if config.screenshot:
        obs["screenshot"] = screenshot_array(seen.screenshot)
    return obs


def shown_action(text: str) -> str:
    """How an action that did not parse appears as ``last_action`` (one line, bounded)."""
    return " ".join(str(text).split())[:200]


def screenshot_array(png: bytes | None):  # -> np.ndarray (H, W, 3) uint8
    import io

    import numpy as np
    from PIL import Image

    if png is None:
        raise WebworldError("no screenshot was taken for this observation")
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)
