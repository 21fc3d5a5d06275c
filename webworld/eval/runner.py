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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from webworld.agents.errors import BudgetExceeded
from webworld.browser.actions import parse_call, parse_reply
from webworld.data.switches import EPISODES, StudySwitches, require_applicable
from webworld.errors import UsageError, WebworldError
from webworld.eval.policies import Policy, Reply
from webworld.eval.results import ResultsFile, failure_reason, read_results
from webworld.eval.suites import Planned, Suite
from webworld.fsio import atomic_write_bytes, atomic_write_json
from webworld.rl.turn import Turn
from webworld.settings import SECRET, aliases, switches


class EvalConfig(BaseModel):
    """How a suite's episodes are played (what :class:`EvalRun` reads)."""

    model_config = ConfigDict(extra="forbid")

    episodes: int = Field(2, ge=1, description="Episodes per task (instance).",
                          json_schema_extra=aliases("-n"))
    seed: int = Field(0, description="Seeds the episodes' task draws (and a random policy).")
    workers: int = Field(2, ge=1, description="Episodes played side by side.",
                         json_schema_extra=aliases("-w"))
    max_steps: int | None = Field(None, ge=1, description="Steps per episode; default: twice "
                                  "the shortest path (MiniWoB++: 50).")
    observation: Literal["full", "compact"] = Field("full", description="Page text mode.")
    fast: bool = Field(False, description="World suites in the fast env (no browser).")
    traces: int = Field(3, ge=0, description="Episodes recorded with screenshots.")
    ray: str | None = Field(None, description="A Ray cluster for the environments of world "
                            "suites (auto, host:port or local): one env worker per --workers "
                            "slot; default: in this process.")
    ray_workers: int | None = Field(None, ge=1, description="Ray env workers (default: "
                                                            "--workers).")


class EvalSettings(EvalConfig):
    """Settings of ``webworld eval``: the policy, the suite, where results go, and the play."""

    policy: str = Field(description="oracle, random, hf:PATH (hf:smollm2) or openai:MODEL.",
                        json_schema_extra=aliases("-p"))
    suite: str = Field("heldout", description="heldout (the suite of record), heldout-dense "
                       "(its worlds at generator version 3, pages as dense as real sites'), "
                       "miniwob, miniwob:TASK,..., "
                       "autowebworld:DIR (a folder of AutoWebWorld fsm.json files) or a folder "
                       "with sites/ and trajectories/.", json_schema_extra=aliases("-s"))
    out: Path = Field(Path("results.jsonl"), description="Results, one JSON line per episode "
                      "(appended; a rerun resumes).", json_schema_extra=aliases("-o"))
    report: Path | None = Field(None, description="Also write this HTML report.")
    heldout_dir: Path = Field(Path("heldout"), description="Where the held-out worlds are "
                              "(made if missing; heldout-dense: beside it, in <dir>-dense).")
    observation: Literal["full", "compact"] | None = Field(  # type: ignore[assignment]
        None, description="Page text mode; default: what an hf: policy was trained on, else "
                          "full.")
    device: str | None = Field(None, description="hf: policies: cpu or cuda (default: cuda "
                                                 "when there is one).")
    llm_base_url: str | None = Field(None, description="openai: policies: an OpenAI-compatible "
                                     "endpoint (env WEBWORLD_LLM_BASE_URL / OPENAI_BASE_URL).")
    llm_api_key: str | None = Field(None, description="openai: policies: the API key (env "
                                    "WEBWORLD_LLM_API_KEY / OPENAI_API_KEY).",
                                    json_schema_extra=SECRET)
    llm_config: Path | None = Field(None, description="A TOML file with an [llm] table "
                                    "(default: ./webworld.toml if present).")
    llm_budget_usd: float | None = Field(None, ge=0, description="openai: policies: stop when "
                                         "this much is spent.")
    study: StudySwitches = Field(default_factory=StudySwitches, description="Study switches "
                                 "that wrap the policy.", json_schema_extra=switches(*EPISODES))

    @field_validator("study")
    @classmethod
    def _switches_of_episodes(cls, study: StudySwitches) -> StudySwitches:
        require_applicable(study, EPISODES, "webworld eval")
        return study


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


# ---- the whole evaluation ----------------------------------------------------------------------


@dataclass
class EvalOutcome:
    stats: RunStats
    policy: Policy  # closed; a wrapper's counts (grounding, loop breaking) are read from it
    config: EvalConfig  # as played: the observation resolved


def eval_policy(settings: EvalSettings, worlds: Any) -> Policy:
    """The policy ``settings`` name, wrapped by its study switches (grounding by name, then
    loop breaking); a wrapper that cannot take it is a usage error, the policy closed first."""
    from webworld.eval.policies import make_eval_policy

    policy = make_eval_policy(settings.policy, worlds, device=settings.device,
                              base_url=settings.llm_base_url, api_key=settings.llm_api_key,
                              config_file=settings.llm_config, budget_usd=settings.llm_budget_usd)
    return wrapped(policy, settings.study)


def wrapped(policy: Policy, study: StudySwitches) -> Policy:
    """``policy`` grounded by name and/or with its loops broken, as ``study`` says."""
    from webworld.eval.grounding import GroundedPolicy
    from webworld.eval.loops import LoopBreakingPolicy

    try:
        policy = GroundedPolicy(policy) if study.ground_names else policy
        return LoopBreakingPolicy(policy) if study.break_loops else policy
    except UsageError:
        policy.close()
        raise


def played_observation(settings: EvalSettings) -> str:
    """The page text mode: the one asked for, else what an hf: policy was trained on."""
    if settings.observation is not None:
        return settings.observation
    if settings.policy.startswith("hf:"):
        from webworld.train.models import policy_observation

        return policy_observation(settings.policy[3:], "full")
    return "full"


def run_eval(settings: EvalSettings, progress: Any = None,
             note: Any = lambda message: None) -> EvalOutcome:
    """Play ``settings.suite``'s episodes with ``settings.policy`` into ``settings.out``
    (resuming what it holds); ``note`` hears what is made once first (held-out worlds, an
    AutoWebWorld import)."""
    from webworld.eval.heldout import SUITES, suite_dir
    from webworld.eval.suites import resolve_suite

    config = EvalConfig.model_validate(
        {**settings.model_dump(include=set(EvalConfig.model_fields)),
         "observation": played_observation(settings)})
    if settings.suite in SUITES:
        where = suite_dir(settings.heldout_dir, settings.suite)
        if not (where / "sites").is_dir():
            note(f"making the held-out worlds in {where}/ (once)")
    if settings.suite.startswith("autowebworld:"):
        note("importing, building and verifying the AutoWebWorld files (once per change)")
    suite = resolve_suite(settings.suite, heldout_dir=settings.heldout_dir,
                          workers=settings.workers)
    policy = eval_policy(settings, suite.worlds)
    try:
        stats = EvalRun(suite, policy, settings.out, config, progress).run()
    finally:
        policy.close()
    return EvalOutcome(stats, policy, config)
