"""Play a suite's planned episodes with a policy and append one result line per episode.

``workers`` environments run side by side (each its own browser page; world suites share
one site server); every step, the policy answers all waiting episodes in one batch (one
``generate`` for a local model), then the environments step concurrently in threads (a
live env waits on its browser, not on Python). Episodes already in the results file are
skipped, so a killed run picks up where it stopped.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from webworld.agents.errors import BudgetExceeded
from webworld.browser.actions import parse_call, parse_reply
from webworld.errors import UsageError, WebworldError
from webworld.eval.policies import Policy, Reply
from webworld.eval.results import ResultsFile, failure_reason, read_results
from webworld.eval.suites import Planned, Suite
from webworld.fsio import atomic_write_bytes, atomic_write_json
from webworld.rl.turn import Turn


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episodes: int = Field(2, ge=1, description="episodes per task (instance)")
    seed: int = 0
    workers: int = Field(2, ge=1)
    max_steps: int | None = Field(None, ge=1, description="default: the env's")
    observation: str = "full"
    fast: bool = False
    traces: int = Field(3, ge=0, description="episodes recorded with screenshots")
    ray: str | None = Field(None, description="a Ray cluster for the environments (world "
                                              "suites): one env worker per --workers slot")
    ray_workers: int | None = Field(None, ge=1, description="Ray env workers (default: "
                                                            "--workers)")


@dataclass
class Running:
    """One episode in progress in one worker slot."""

    plan: Planned
    turn: Turn
    started: float
    trace: list[dict[str, Any]] | None
    errors: list[dict[str, Any]] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    tokens: list[int] = field(default_factory=lambda: [0, 0])
    reward: float = 0.0


@dataclass
class RunStats:
    episodes: int = 0      # played by this run
    skipped: int = 0       # already in the results file
    seconds: float = 0.0
    stopped: str = ""      # why the run stopped early (a spent budget)

    @property
    def per_second(self) -> float:
        return self.episodes / self.seconds if self.seconds else 0.0


def traces_dir(out: Path) -> Path:
    return out.with_name(out.name + ".traces")


class EvalRun:
    def __init__(self, suite: Suite, policy: Policy, out: Path, config: EvalConfig,
                 progress: Any = None) -> None:
        self.suite, self.policy, self.out, self.config = suite, policy, out, config
        self.progress = progress
        self.plans = suite.plan(config.episodes, config.seed)
        # traces spread over the plan (so over tasks), not the first few episodes of one
        every = max(1, len(self.plans) // config.traces) if config.traces else 1
        self.traced = {p.key for p in self.plans[::every][:config.traces]}

    def run(self) -> RunStats:
        results = ResultsFile(self.out)  # locked first: a second run on the file stops here
        try:
            return self._run(results)
        finally:
            results.close()

    def _run(self, results: ResultsFile) -> RunStats:
        done = self._done_keys()
        todo = [p for p in self.plans if p.key not in done]
        stats = RunStats(skipped=len(self.plans) - len(todo))
        if not todo:
            return stats
        started = time.perf_counter()
        workers = min(self.config.workers, len(todo))
        server, envs = None, []
        task = self.progress.add_task("episodes", total=len(todo)) if self.progress else None
        try:
            if self.config.ray:
                server = ray_env(self.suite, self.config, workers)  # closed like a server
                envs = [SlotEnv(server, i) for i in range(workers)]
            else:
                server = self._server()
                envs = [self.suite.make_env(max_steps=self.config.max_steps,
                                            fast=self.config.fast,
                                            observation=self.config.observation, server=server)
                        for _ in range(workers)]
            with ThreadPoolExecutor(workers) as pool:
                for record in self._play(todo, envs, pool):
                    results.append(record)
                    stats.episodes += 1
                    if task is not None:
                        self.progress.advance(task)
        except BudgetExceeded as exc:
            stats.stopped = str(exc)
        finally:
            for env in envs:
                env.close()
            if server is not None:
                server.close()
            stats.seconds = time.perf_counter() - started
        return stats

    def _done_keys(self) -> set[str]:
        done = read_results(self.out)
        other = {(r["suite"], r["policy"]) for r in done} - {(self.suite.name, self.policy.name)}
        if other:
            suite, policy = sorted(other)[0]
            raise UsageError(f"the results file holds episodes of suite {suite!r} with policy "
                             f"{policy!r}; give this run its own --out", str(self.out))
        return {r["key"] for r in done}

    def _server(self) -> Any:
        if self.suite.worlds is None or self.config.fast:
            return None
        from webworld.rl.live import SiteServer

        return SiteServer(self.suite.worlds)

    # --- the loop ----------------------------------------------------------------------------

    def _play(self, todo: list[Planned], envs: list[Any], pool: ThreadPoolExecutor):
        queue = list(reversed(todo))
        slots: dict[int, Running] = {}
        while queue or slots:
            free = [i for i in range(len(envs)) if i not in slots]
            starting = {i: queue.pop() for i in free if queue}
            started = pool.map(self._start, [envs[i] for i in starting], starting.values())
            for i, run in zip(starting, started):
                if isinstance(run, dict):
                    yield run  # the env could not even start this episode
                else:
                    slots[i] = run
                    self.policy.start(i, run.turn, run.plan.seed)
            if not slots:
                continue
            replies = self.policy.act({i: r.turn for i, r in slots.items()})
            active = list(slots)
            stepped = pool.map(self._step, [envs[i] for i in active], [slots[i] for i in active],
                               [replies[i] for i in active])
            for i, record in zip(active, stepped):
                if record is not None:
                    del slots[i]
                    yield record

    def _start(self, env: Any, plan: Planned) -> Running | dict[str, Any]:
        started = time.perf_counter()
        options = {"task": plan.task}
        try:
            obs, info = env.reset(seed=plan.seed, options=options)
        except WebworldError as exc:
            return self._record(Running(plan, Turn({"goal": ""}, {}), started, None),
                                env_error=str(exc))
        trace = [] if plan.key in self.traced else None
        return Running(plan, Turn(obs, info, []), started, trace)

    def _step(self, env: Any, run: Running, reply: Reply) -> dict[str, Any] | None:
        """One step of one episode; the episode's record when it ended."""
        before = run.turn
        shot, box = self._before_action(env, reply) if run.trace is not None else (None, None)
        run.tokens[0] += reply.prompt_tokens
        run.tokens[1] += reply.completion_tokens
        try:
            obs, reward, terminated, truncated, info = env.step(reply.text)
        except WebworldError as exc:
            return self._record(run, env_error=str(exc))
        code = "policy" if reply.error else info.get("error_code", "")
        message = reply.error or obs.get("last_action_error", "")
        run.codes.append(code)
        if code:
            run.errors.append({"step": len(run.codes), "code": code, "message": message})
        if run.trace is not None:
            run.trace.append({"url": before.obs["url"], "reply": reply.text,
                              "action": obs["last_action"], "error": message, "box": box,
                              "image": shot})
        run.turn = before.after(obs, info)
        run.reward = float(reward)
        if not (terminated or truncated):
            return None
        return self._record(run, terminated=terminated, truncated=truncated,
                            success=bool(info.get("success", reward > 0)))

    @staticmethod
    def _before_action(env: Any, reply: Reply) -> tuple[bytes | None, Any]:
        """What a trace shows of a step: the page (the fast env has no screenshots) and
        the box of the element the reply acts on."""
        shot = env.screenshot() if hasattr(env, "screenshot") else None
        call = parse_call(parse_reply(reply.text) or "")
        return shot, env.element_box(call.bid) if call is not None and call.bid else None

    def _record(self, run: Running, *, terminated: bool = False, truncated: bool = False,
                success: bool = False, env_error: str = "") -> dict[str, Any]:
        plan, turn = run.plan, run.turn
        record = {
            "key": plan.key, "suite": plan.suite, "policy": self.policy.name,
            "task": plan.task, "world": plan.world, "archetype": plan.archetype,
            "kind": plan.kind, "episode": plan.episode, "seed": plan.seed,
            "intent": turn.obs["goal"], "success": success, "reward": run.reward,
            "steps": len(run.codes), "actions": list(turn.history), "errors": run.errors,
            "failure": failure_reason(success=success, terminated=terminated,
                                      truncated=truncated, error_codes=run.codes,
                                      env_error=env_error, miniwob=self.suite.worlds is None),
            "env_error": env_error,
            "tokens": {"prompt": run.tokens[0], "completion": run.tokens[1]},
            "time_s": round(time.perf_counter() - run.started, 3),
        }
        if run.trace is not None:
            self._write_trace(record, run.trace)
        return record

    def _write_trace(self, record: dict[str, Any], trace: list[dict[str, Any]]) -> None:
        folder = traces_dir(self.out) / _safe(record["key"])
        steps = []
        for n, step in enumerate(trace, 1):
            image = step.pop("image")
            if image is not None:
                atomic_write_bytes(folder / f"step-{n:02d}.png", image)
                step["image"] = f"step-{n:02d}.png"
            steps.append(step)
        atomic_write_json(folder / "trace.json", {**record, "trace": steps})


def ray_env(suite: Suite, config: EvalConfig, workers: int) -> Any:
    """The suite's environments on a Ray cluster: a vector env with one slot per worker."""
    if suite.worlds is None:
        raise UsageError("--ray runs world suites; MiniWoB++ runs in this process")
    from webworld.scale.rollout import RayVectorEnv

    return RayVectorEnv(workers, suite.worlds, address=config.ray,
                        env="fast" if config.fast else "live", split=None,
                        observation=config.observation, max_steps=config.max_steps,
                        workers=config.ray_workers or workers)


class SlotEnv:
    """One slot of a vector env with the single env's methods the runner calls."""

    def __init__(self, vec: Any, slot: int) -> None:
        self.vec, self.slot = vec, slot

    def reset(self, *, seed: int, options: dict[str, Any]) -> tuple[dict, dict]:
        return self.vec.reset_slots({self.slot: options["task"]}, {self.slot: seed})[self.slot]

    def step(self, action: str) -> tuple[dict, float, bool, bool, dict]:
        return self.vec.step_slots({self.slot: action})[self.slot]

    def element_box(self, bid: str) -> tuple[float, float, float, float] | None:
        return self.vec.element_box(self.slot, bid)

    def close(self) -> None:
        """The vector env is closed once, by the runner."""


def _safe(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key)


def load_traces(out: Path) -> list[dict[str, Any]]:
    """The recorded traces of a results file, with their screenshots' paths made absolute."""
    folder = traces_dir(out)
    found = []
    for path in sorted(folder.glob("*/trace.json")) if folder.is_dir() else []:
        trace = json.loads(path.read_text(encoding="utf-8"))
        for step in trace["trace"]:
            if step.get("image"):
                step["image"] = str(path.parent / step["image"])
        found.append(trace)
    return found
