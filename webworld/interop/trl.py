"""webworld's worlds as an environment of TRL's ``GRPOTrainer`` (its ``environment_factory``).

    from trl import GRPOConfig, GRPOTrainer
    from webworld.interop.trl import environment_factory, task_dataset, with_tool_template

    trainer = GRPOTrainer(
        model, args=GRPOConfig(loss_type="vespo", max_steps=..., ...),
        train_dataset=task_dataset("worlds"),              # one row per task instance
        processing_class=with_tool_template(tokenizer),    # ChatML with tool calls
        environment_factory=environment_factory("worlds"))  # fast env; env="live": Chromium

``worlds`` is what ``webworld build`` writes (``sites/`` and ``trajectories/``). Each environment
instance plays one task instance per ``reset`` (the dataset row names it; the group's G rollouts
share it). Its public methods are TRL's tools: webworld's action language (click, fill, press,
select_option, hover, check, uncheck, drag) with typed arguments and docstrings, each returning
the next page as text (compact or full) or why the action failed, as the env says it; an
argument the env cannot read is such an error too, never an exception. ``get_reward`` is the
episode's reward from the env: success, from the server's true state on live sites (plus the
shaping of ``reward="progress"``). Instances are reused across resets; the worlds, their
fast-env snapshots and, for the live env, one Chromium and one site server are shared by every
instance of a process.
"""

from __future__ import annotations

import asyncio
import atexit
import re
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webworld.browser.actions import format_action, format_named
from webworld.data.prompting import TOOL_SYSTEM_PROMPT
from webworld.errors import UsageError
from webworld.rl.episode import EnvConfig, Episode, ObservationMode, RewardMode
from webworld.rl.tasks import WorldSet, load_worlds

if TYPE_CHECKING:
    from datasets import Dataset

ENDED = "The episode has ended: the site takes no more actions."


@dataclass
class SharedWorlds:
    """What every environment instance of a process shares: the worlds, and the fast env's
    snapshots or the live env's browser and server."""

    worlds: WorldSet
    config: EnvConfig
    env: str
    _fast: dict[str, Any] | None = None
    _browser: Any = None

    def __post_init__(self) -> None:
        if self.env == "fast":
            from webworld.rl.fast.env import snapshots

            self._fast = snapshots(self.worlds, build=False)
        elif self.env == "live":
            from webworld.rl.live import _Browser

            self._browser = _Browser(self.worlds, self.config, None, None)
        else:
            raise UsageError(f"unknown env {self.env!r}; choose fast or live")

    def episode(self) -> Episode:
        if self._fast is not None:
            from webworld.rl.fast.env import FastPage

            return Episode(FastPage(self._fast), self.config)
        return self._browser.episode(self.config)

    def drive(self, coro: Coroutine[Any, Any, Any]) -> Any:
        if self._fast is not None:
            from webworld.rl.env import run_inline

            return run_inline(coro)
        return self._browser.runtime.run(coro)

    async def drive_async(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """:meth:`drive` for a caller on its own event loop (a server's): the live env's
        coroutine runs on the browser's loop while the caller's awaits it, blocking nothing."""
        if self._fast is not None:
            return self.drive(coro)
        from webworld.rl.runtime import DEADLINE_S

        running = asyncio.run_coroutine_threadsafe(coro, self._browser.runtime.loop)
        return await asyncio.wait_for(asyncio.wrap_future(running), DEADLINE_S)

    def close(self) -> None:
        if self._browser is not None:
            self._browser.close()
            self._browser = None


_SHARED: dict[tuple, SharedWorlds] = {}


@atexit.register
def close_shared() -> None:
    """Close the process's shared browsers and site servers (also run at exit)."""
    while _SHARED:
        _SHARED.popitem()[1].close()


@cache
def world_folder(worlds: Path) -> WorldSet:
    """The worlds of a `webworld build` output, loaded once per process."""
    if not (worlds / "sites").is_dir():
        raise UsageError("no sites/ folder here (a `webworld build` output has one)", str(worlds))
    return load_worlds(worlds / "sites", worlds / "trajectories")


def shared_worlds(worlds: Path | str, *, split: str | None = "train", env: str = "fast",
                  observation: ObservationMode = "compact", reward: RewardMode = "success",
                  max_steps: int | None = None) -> SharedWorlds:
    """The process's one :class:`SharedWorlds` for these settings (made on first use)."""
    root = Path(worlds).resolve()
    key = (root, split, env, observation, reward, max_steps)
    if key not in _SHARED:
        loaded = world_folder(root)
        if not loaded.instances(split):
            raise UsageError(f"no task instances in split {split!r}", str(root))
        config = EnvConfig(observation=observation, reward=reward, max_steps=max_steps)
        _SHARED[key] = SharedWorlds(loaded, config, env)
    return _SHARED[key]


@dataclass
class Played:
    """What an instance's episode did: the actions as the env read them, its reward, and the
    seconds spent in the env (the comparison with webworld's trainer reads them)."""

    instance: str = ""
    actions: list[str] = field(default_factory=list)
    reward: float = 0.0
    success: bool = False
    env_seconds: float = 0.0


class ActionTools:
    """webworld's action language as TRL's tools: one public method per action kind, with typed
    arguments and a docstring, each the text of the page after the action or why it failed.
    What an action reaches is the subclass's :meth:`_step` (the episode in this process, or a
    webworld env server through its OpenEnv client)."""

    played: Played
    _done: bool

    def click(self, element: str) -> str:
        """Click an element of the page.

        Args:
            element: The element: its role and name as the page shows them, e.g.
                button "Search" for [12] button 'Search', or its id, "12" (needed when
                several elements have that role and name).

        Returns:
            The page after the click, or why the click failed.
        """
        return self._act("click", element)

    def fill(self, element: str, text: str) -> str:
        """Replace the text of a text field.

        Args:
            element: The text field, e.g. textbox "Email" or "7".
            text: The text to put in the field.

        Returns:
            The page afterwards, or why the action failed.
        """
        return self._act("fill", element, text)

    def press(self, element: str, key: str) -> str:
        """Press a key on an element: Enter submits a field's form or presses a button or link;
        Escape closes open menus and calendars.

        Args:
            element: The element, by role and name or id.
            key: "Enter" or "Escape".

        Returns:
            The page afterwards, or why the action failed.
        """
        return self._act("press", element, key)

    def select_option(self, element: str, option: str) -> str:
        """Choose an option of a list by its text.

        Args:
            element: The list, by role and name or id.
            option: The option's text, as the page shows it.

        Returns:
            The page afterwards, or why the action failed.
        """
        return self._act("select_option", element, option)

    def hover(self, element: str) -> str:
        """Move the pointer over an element (opens hover menus).

        Args:
            element: The element, by role and name or id.

        Returns:
            The page afterwards, or why the action failed.
        """
        return self._act("hover", element)

    def check(self, element: str) -> str:
        """Tick a checkbox.

        Args:
            element: The checkbox, by role and name or id.

        Returns:
            The page afterwards, or why the action failed.
        """
        return self._act("check", element)

    def uncheck(self, element: str) -> str:
        """Clear a checkbox.

        Args:
            element: The checkbox, by role and name or id.

        Returns:
            The page afterwards, or why the action failed.
        """
        return self._act("uncheck", element)

    def drag(self, element: str, value: str) -> str:
        """Move a slider to a value.

        Args:
            element: The slider, by role and name or id.
            value: The value to move it to, e.g. "120".

        Returns:
            The page afterwards, or why the action failed.
        """
        return self._act("drag", element, value)

    def _act(self, name: str, element: Any, *args: Any) -> str:
        if self._done:
            return ENDED
        # the env reads the action string: a value it cannot use is its refusal, not a crash
        obs, reward, done, success = self._step(tool_action(name, str(element),
                                                            *(str(a) for a in args)))
        self.played.actions.append(obs["last_action"])
        self.played.reward += float(reward)
        self.played.success = success
        self._done = done
        text = page_text(obs)
        return f"{text}\n{ENDED}" if done else text

    def _step(self, action: str) -> tuple[dict[str, Any], float, bool, bool]:
        """(the observation dict, the reward, whether the episode ended, success) of ``action``."""
        raise NotImplementedError


# an element a tool call names by role and name, quoted either way: button "Search", or as
# the page line shows it, button 'Search'
_TOOL_TARGET = re.compile(r"""\s*([a-z]+)\s+(["'])(.*)\2\s*""", re.S)


def tool_action(name: str, element: str, *args: str) -> str:
    """The action text of a tool call on ``element``: by role and name where it gives them
    (``fill(textbox "Email", 'a@b.c')``), else by id (a bracketed ``[7]`` read as ``7``)."""
    named = _TOOL_TARGET.fullmatch(element)
    if named is not None:
        label = re.sub(r"\\(.)", r"\1", named.group(3), flags=re.S)  # as the page escapes it
        return format_named(name, named.group(1), label, *args)
    return format_action(name, element.strip().removeprefix("[").removesuffix("]"), *args)


class WebworldEnv(ActionTools):
    """One episode at a time on the shared worlds; TRL calls its public methods as tools."""

    def __init__(self, shared: SharedWorlds) -> None:
        self._shared = shared
        self._episode = shared.episode()
        self._done = True
        self.played = Played()

    def reset(self, instance: str | None = None, intent: str | None = None, **_: Any) -> str:
        """Start the dataset row's task instance; the page, appended to the task's message."""
        worlds = self._shared.worlds
        inst = worlds.instance(instance) if instance else worlds.instances()[0]
        self.played = Played(instance=inst.id)
        obs, _info = self._timed(self._episode.reset(worlds.world(inst.world_id), inst,
                                                     intent or inst.intents[0]))
        self._done = False
        return "\n\n" + page_text(obs)

    def get_reward(self) -> float:
        """The episode's reward, summed over its steps, as the env gave it."""
        return self.played.reward

    # --- inside ------------------------------------------------------------------------------

    def _step(self, action: str) -> tuple[dict[str, Any], float, bool, bool]:
        obs, reward, terminated, truncated, info = self._timed(self._episode.step(action))
        return obs, float(reward), terminated or truncated, bool(info.get("success"))

    def _timed(self, coro: Coroutine[Any, Any, Any]) -> Any:
        started = time.perf_counter()
        try:
            return self._shared.drive(coro)
        finally:
            self.played.env_seconds += time.perf_counter() - started


def page_text(obs: dict[str, Any]) -> str:
    """What a tool returns: the failure of the last action if any, the URL and the page."""
    failed = f"Last action failed: {' '.join(obs['last_action_error'].split())}\n" \
        if obs.get("last_action_error") else ""
    return f"{failed}URL: {obs['url']}\nPage:\n{obs['axtree'].rstrip()}"


def environment_factory(worlds: Path | str, *, split: str | None = "train", env: str = "fast",
                        observation: ObservationMode = "compact",
                        reward: RewardMode = "success", max_steps: int | None = None
                        ) -> Callable[[], WebworldEnv]:
    """What ``GRPOTrainer(environment_factory=...)`` takes: each call a new instance on the
    process's shared worlds."""
    shared = shared_worlds(worlds, split=split, env=env, observation=observation, reward=reward,
                           max_steps=max_steps)
    return lambda: WebworldEnv(shared)


def task_dataset(worlds: Path | str, *, split: str | None = "train", seed: int = 0) -> Dataset:
    """One row per task instance of the split: the prompt (the tool-use system prompt and the
    task), and the ``instance`` and ``intent`` :meth:`WebworldEnv.reset` plays."""
    import random

    from datasets import Dataset

    rng = random.Random(seed)
    rows = []
    for inst in world_folder(Path(worlds).resolve()).instances(split):
        intent = rng.choice(inst.intents)
        rows.append({"prompt": [{"role": "system", "content": TOOL_SYSTEM_PROMPT},
                                {"role": "user", "content": f"Task: {intent}"}],
                     "instance": inst.id, "intent": intent})
    return Dataset.from_list(rows)


def with_tool_template(tokenizer: Any) -> Any:
    """``tokenizer`` with a ChatML chat template that renders tools and tool calls (the
    ``<tool_call>`` JSON form, which TRL ships and can parse back), for SmolLM2 and ``tiny``,
    whose own templates have no tools. Nothing is downloaded: the template is TRL's file."""
    from trl.chat_template_utils import add_response_schema, qwen2_5_chat_template

    tokenizer.chat_template = qwen2_5_chat_template
    return add_response_schema(tokenizer)


def tools_of(env: WebworldEnv) -> list[Callable[..., str]]:
    """The environment's tools, as TRL finds them: its public methods but ``reset`` and
    ``get_reward``."""
    import inspect

    return [getattr(env, name) for name, _ in inspect.getmembers(type(env), inspect.isfunction)
            if not name.startswith("_") and name not in ("reset", "get_reward")]
