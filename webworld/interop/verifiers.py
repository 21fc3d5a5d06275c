"""webworld's worlds as a verifiers environment (verifiers 0.4, ``import verifiers.v1 as vf``).

    import verifiers.v1 as vf
    from webworld.interop.verifiers import load_environment

    env = load_environment("worlds", split="train")    # a vf.Env: env="live" plays in Chromium
    async with env.serving():                          # verifiers' own rollout API
        episode = await env.run_episode(next(iter(env.taskset)), vf.ModelContext(
            model="my-model", client=vf.EvalClientConfig(base_url="http://127.0.0.1:8000/v1")))
    episode.traces[0].reward                           # the episode's reward, from the env

``worlds`` is what ``webworld build`` writes (``sites/`` and ``trajectories/``). ``vf-eval`` and
prime-rl do not call a function: they take a taskset id and the taskset's settings, here
``webworld-verifiers`` with ``worlds``, ``split``, ``env``, ``observation``, ``reward``,
``max_steps`` and ``seed`` (``vf-eval webworld-verifiers --env.taskset.worlds worlds``);
:func:`environment_config` builds that config in Python, for verifiers' eval runner::

    from verifiers.v1.cli.eval.runner import run_eval
    from verifiers.v1.configs.cli.eval import EvalConfig

    asyncio.run(run_eval(EvalConfig(env=environment_config("worlds"), model="my-model",
                                    client=vf.EvalClientConfig(base_url=...), push=False)))

In verifiers 0.4 an environment is a taskset (the rows and their scoring) played by a harness
(the program the model runs in), composed by an ``Env``; there is no ToolEnv or Rubric any more.
verifiers finds the pieces of a taskset id in the module of that name (``webworld-verifiers``:
``webworld_verifiers``, shipped with the package, which re-exports this one) through its
``__all__``, so a fresh ``vf-eval`` process or prime-rl's env workers find it.

* :class:`WebworldTaskset`: one task per task instance of the split, the rows of
  :func:`webworld.interop.trl.task_dataset` (the same instance, intent and messages as TRL's).
* :class:`WebworldHarness`, the taskset's own harness: the model's tool loop, in this process.
  Each model call goes through the rollout's interception endpoint, so the trace records it
  (with tokens and logprobs when training); each tool call acts on the rollout's own webworld
  ``Episode`` over the process's shared worlds (:func:`~webworld.interop.trl.shared_worlds`:
  the fast env's snapshots, or the live env's one Chromium and site server). The tools are
  :class:`~webworld.interop.trl.WebworldEnv`'s methods, their docstrings and typed arguments;
  each returns the page after the action or why it failed, and the first user message is the
  task and the starting page. A rollout ends with the episode, when the model answers without
  a tool call, or when verifiers stops it (a turn or token limit). Not verifiers' MCP toolsets:
  they run in other processes, and its harnesses that speak MCP install their program with
  uv from the network; in process, the worlds stay shared and nothing is downloaded.
* The reward: :class:`WebworldTask`'s ``@vf.reward`` is the episode's reward as the env gave it,
  summed over the steps (success from the server's true state; plus the shaping of
  ``reward="progress"``), with the metrics ``success`` and ``steps``.
* :class:`WebworldEnvironment`: verifiers' single-agent env, its seat's runtime local by
  default (verifiers' default is a Prime sandbox, which this in-process harness never uses).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Callable, Collection, Iterator
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_type_hints

from pydantic import Field, ValidationError

from webworld.errors import UsageError, validation_problems
from webworld.interop.trl import (
    ENDED,
    Played,
    SharedWorlds,
    WebworldEnv,
    shared_worlds,
    task_dataset,
    tools_of,
)
from webworld.rl.episode import ObservationMode, RewardMode

import verifiers.v1 as vf  # the `verifiers` extra (the CLI names it when it is missing)

__all__ = ["TASKSET_ID", "WebworldData", "WebworldEnvironment", "WebworldEnvironmentConfig",
           "WebworldHarness", "WebworldHarnessConfig", "WebworldState", "WebworldTask",
           "WebworldTaskset", "WebworldTasksetConfig", "call_tool", "environment_config",
           "load_environment", "tool_schemas"]

TASKSET_ID = "webworld-verifiers"
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


class WebworldTasksetConfig(vf.TasksetConfig):
    """Which worlds and task instances, and the env they are played in (``--env.taskset.*``)."""

    id: str = TASKSET_ID
    worlds: Path
    split: str | None = "train"
    env: Literal["fast", "live"] = "fast"
    observation: ObservationMode = "compact"
    reward: RewardMode = "success"
    max_steps: int | None = Field(None, ge=1)
    seed: int = 0  # the draw of each instance's intent, as task_dataset draws it


class WebworldData(vf.TaskData):
    """One row: the task instance and intent, and the env settings the harness plays it with
    (on the row, so a trace says how its episode was played)."""

    instance: str
    intent: str
    worlds: str
    split: str | None
    env: str
    observation: ObservationMode
    reward: RewardMode
    max_steps: int | None


class WebworldState(vf.State):
    """The rollout's episode, as the harness leaves it for scoring."""

    actions: list[str] = Field(default_factory=list)  # as the env read them
    reward: float = 0.0
    success: bool = False


class WebworldTask(vf.Task[WebworldData, WebworldState, vf.TaskConfig]):
    @property
    def key(self) -> str:
        """The instance id: stable whichever tasks a run selects (the default hash holds
        the row's position)."""
        return self.data.instance

    @vf.reward
    async def webworld(self, trace: vf.Trace) -> float:
        """The episode's reward as the env gave it, summed over its steps."""
        return trace.state.reward

    @vf.metric
    async def success(self, trace: vf.Trace) -> float:
        return float(trace.state.success)

    @vf.metric
    async def steps(self, trace: vf.Trace) -> float:
        return float(len(trace.state.actions))


class WebworldTaskset(vf.Taskset[WebworldTask, WebworldTasksetConfig]):
    def load(self) -> Iterator[WebworldTask]:
        c = self.config
        root = Path(c.worlds).resolve()
        rows = task_dataset(root, split=c.split, seed=c.seed)
        if not len(rows):
            raise UsageError(f"no task instances in split {c.split!r}", str(root))
        for row in rows:
            system, user = (m["content"] for m in row["prompt"])
            yield WebworldTask(WebworldData(
                id=row["instance"], name=row["instance"], prompt=user, system_prompt=system,
                instance=row["instance"], intent=row["intent"], worlds=str(root), split=c.split,
                env=c.env, observation=c.observation, reward=c.reward, max_steps=c.max_steps),
                c.task)


class WebworldHarnessConfig(vf.HarnessConfig):
    id: str = TASKSET_ID


class WebworldHarness(vf.Harness[WebworldHarnessConfig]):
    """The tool loop on the rollout's episode (see the module's docstring)."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False  # the tools act on a website model, never on this machine
    NEEDS_CONTAINER = False

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime,
                     endpoint: str, secret: str, mcp_urls: dict[str, str],
                     data: WebworldData) -> vf.ProgramResult:
        from openai import AsyncOpenAI

        system, task = self.resolve_text_prompt(data)
        play = _Play(shared_worlds(data.worlds, split=data.split, env=data.env,
                                   observation=data.observation, reward=data.reward,
                                   max_steps=data.max_steps), self.config.disabled_tools or ())
        try:
            page = await play.run(play.env.reset, data.instance, data.intent)
            messages = [{"role": "system", "content": system}] if system else []
            messages.append({"role": "user", "content": f"{task}{page}"})
            async with AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
                try:
                    await _converse(client, ctx.model, messages, play, trace)
                finally:
                    _score(trace, play.env.played)
        finally:
            play.release()
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


def _score(trace: vf.Trace, played: Played) -> None:
    """The episode, as the task's reward and metrics read it (and the trace's record shows)."""
    trace.state.actions, trace.state.reward = list(played.actions), played.reward
    trace.state.success = played.success
    trace.info["webworld"] = {"instance": played.instance, "actions": list(played.actions)}


class WebworldEnvironmentConfig(vf.SingleAgentEnvConfig):
    """verifiers' single-agent config, the seat's runtime local by default: the harness runs
    in this process, so a sandbox (verifiers' default, Prime's) would only cost a boot."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class WebworldEnvironment(vf.Env[WebworldEnvironmentConfig]):
    """verifiers' single-agent env (one ``agent`` seat playing each task) on that config."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)


async def _converse(client: Any, model: str, messages: list[dict[str, Any]], play: _Play,
                    trace: vf.Trace) -> None:
    """Model call, tool calls, until the episode ends or the model stops calling tools."""
    from openai import APIStatusError

    tools = tool_schemas(play.env, disabled=play.disabled)
    while not play.ended:
        try:
            completion = await client.chat.completions.create(model=model, messages=messages,
                                                              tools=tools)
        except APIStatusError:
            if trace.stop_condition is not None:
                return  # verifiers ended the rollout (a limit or a @stop): not a failure
            raise
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            text = await play.run(call_tool, play.env, call.function.name,
                                  call.function.arguments, play.disabled)
            play.ended = play.ended or text.endswith(ENDED)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


class _Play:
    """A rollout's hold on a :class:`WebworldEnv` of the shared worlds: an idle one when there
    is one (a live env's tabs are reused, as TRL reuses its instances), back when done."""

    _idle: dict[int, tuple[SharedWorlds, list[WebworldEnv]]] = {}

    def __init__(self, shared: SharedWorlds, disabled: Collection[str]) -> None:
        self.shared = shared
        self.disabled = disabled  # the tools the harness's config leaves out
        owner, idle = self._idle.get(id(shared), (None, []))
        self.env = idle.pop() if owner is shared and idle else WebworldEnv(shared)
        self.ended = False

    async def run(self, fn: Callable[..., str], *args: Any) -> str:
        """``fn`` on the episode: inline for the fast env (it never waits), in a thread for
        the live env (its browser answers on its own loop), so other rollouts go on."""
        if self.shared.env == "fast":
            return fn(*args)
        return await asyncio.to_thread(fn, *args)

    def release(self) -> None:
        owner, idle = self._idle.get(id(self.shared), (None, []))
        if owner is not self.shared:
            self._idle[id(self.shared)] = (self.shared, idle := [])
        idle.append(self.env)


def call_tool(env: WebworldEnv, name: str, arguments: str | None,
              disabled: Collection[str] = ()) -> str:
    """One tool call of the model on ``env``: the tool's text, or why the call could not be
    made (no such tool, arguments that are not a JSON object or do not fit the tool's), which
    the model reads next, never an exception. A value the env cannot use is the env's refusal."""
    tools = _tools(env, disabled)
    if name not in tools:
        return f"Tool call failed: no tool {name!r}; the tools are {', '.join(tools)}"
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"Tool call failed: the arguments are not JSON ({exc.msg})"
    if not isinstance(args, dict):
        return "Tool call failed: the arguments must be a JSON object"
    try:
        inspect.signature(tools[name]).bind(**args)
    except TypeError as exc:
        return f"Tool call failed: {name}: {exc}"
    return tools[name](**args)


def tool_schemas(env: WebworldEnv, disabled: Collection[str] = ()) -> list[dict[str, Any]]:
    """``env``'s tools as OpenAI function tools: TRL's tools (:func:`tools_of`), described by
    their docstrings (summary, and each argument's line under ``Args:``) and typed by their
    annotations."""
    return [_function_tool(tool.__func__) for tool in _tools(env, disabled).values()]


def _tools(env: WebworldEnv, disabled: Collection[str]) -> dict[str, Callable[..., str]]:
    return {tool.__name__: tool for tool in tools_of(env) if tool.__name__ not in disabled}


@cache
def _function_tool(fn: Callable[..., str]) -> dict[str, Any]:
    doc = inspect.getdoc(fn) or ""
    summary = " ".join(doc.split("\n\nArgs:", 1)[0].split())
    args = doc.split("Args:", 1)[1].split("\n\n", 1)[0] if "Args:" in doc else ""
    described = {name: " ".join(text.split())
                 for name, text in re.findall(r"^ +(\w+): (.*(?:\n {5,}.*)*)", args, re.M)}
    hints = get_type_hints(fn)
    params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    properties = {p.name: {"type": JSON_TYPES.get(hints.get(p.name), "string"),
                           **({"description": described[p.name]} if p.name in described else {})}
                  for p in params}
    required = [p.name for p in params if p.default is inspect.Parameter.empty]
    return {"type": "function", "function": {
        "name": fn.__name__, "description": summary,
        "parameters": {"type": "object", "properties": properties, "required": required}}}


def environment_config(worlds: Path | str, *, split: str | None = "train", env: str = "fast",
                       observation: str = "compact", reward: str = "success",
                       max_steps: int | None = None, seed: int = 0,
                       **settings: Any) -> vf.EnvConfig:
    """The verifiers env config of these worlds, what ``vf-eval`` and prime-rl take:
    ``settings`` are verifiers' own env knobs (``agent={"max_turns": 20}``, ``timeout=...``)."""
    taskset = {"id": TASKSET_ID, "worlds": str(worlds), "split": split, "env": env,
               "observation": observation, "reward": reward, "max_steps": max_steps,
               "seed": seed}
    try:
        return vf.resolve_env_config({**settings, "taskset": taskset})
    except ValidationError as exc:
        raise UsageError(f"bad verifiers environment settings: {validation_problems(exc)}") \
            from None


def load_environment(worlds: Path | str, *, split: str | None = "train", env: str = "fast",
                     observation: str = "compact", reward: str = "success",
                     max_steps: int | None = None, seed: int = 0, **settings: Any) -> vf.Env:
    """The verifiers environment of these worlds (see :func:`environment_config`), loaded by
    verifiers' own loader. Bad worlds or settings fail here, in one line."""
    config = environment_config(worlds, split=split, env=env, observation=observation,
                                reward=reward, max_steps=max_steps, seed=seed, **settings)
    shared_worlds(config.taskset.worlds, split=split, env=env, observation=observation,
                  reward=reward, max_steps=max_steps)  # the worlds and split, checked now
    return vf.load_environment(config)
