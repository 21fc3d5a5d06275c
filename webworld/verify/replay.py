"""Replaying one candidate trajectory in a real browser, checking the server's truth.

Each GUI step becomes one or more browser actions, each preceded by an observation
(the accessibility text and screenshot a policy would see). After every GUI step the
server's true state must equal the expected one: unchanged after a non-trigger step
(typing into a field), the candidate's expected state after the trigger. Any problem
ends the replay with a classified :class:`Failure`; it is data, not an exception.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from webworld import contract
from webworld.aio import abandon
from webworld.browser.actions import ActionRefused, BrowserAction
from webworld.browser.observe import Observation
from webworld.browser.tab import BrowserTab, NavigationError, TabConfig
from webworld.data.records import FailureRecord, VerifiedStep, VerifiedTrajectory
from webworld.explore.candidates import expected_states
from webworld.spec.models import WorldSpec
from webworld.verify.gestures import Gesture, element_label, gestures


@dataclass
class Endpoint:
    """Where a world is served and how to read its ground truth."""

    url: str          # the world's base URL, e.g. http://127.0.0.1:8123/w/<world>
    token: str


@dataclass
class ReplayConfig(TabConfig):
    screenshots: bool = True
    reuse_screenshots: bool = True  # a page seen before in the run is not captured again


# How a refused action is classified (webworld.data.records.FailureClass).
REFUSAL_CLASS = {"covered": "element_covered", "unknown_id": "element_missing"}


class Failure(Exception):
    """A classified replay failure (see webworld.data.records.FailureClass)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Truth:
    """The ground-truth endpoint of one world, read with the run's token."""

    def __init__(self, endpoint: Endpoint, client: httpx.AsyncClient) -> None:
        self.endpoint, self.client = endpoint, client
        self.headers = {contract.TOKEN_HEADER: f"Bearer {endpoint.token}"}

    async def state(self, sid: str) -> dict[str, Any]:
        url = contract.TRUTH_STATE_URL.format(base=self.endpoint.url)
        response = await self.client.get(url, params={"session": sid}, headers=self.headers)
        if response.status_code >= 500:
            raise Failure("server_error", f"ground truth answered {response.status_code}")
        response.raise_for_status()
        return response.json()

    async def reset(self, sid: str, page: str) -> dict[str, Any]:
        url = contract.TRUTH_RESET_URL.format(base=self.endpoint.url)
        response = await self.client.post(url, params={"session": sid, "page": page},
                                          headers=self.headers)
        response.raise_for_status()
        return response.json()


@dataclass
class Recorded:
    step: VerifiedStep
    image: bytes | None


class Replay:
    """One candidate on one tab; call :meth:`run`."""

    def __init__(self, tab: BrowserTab, spec: WorldSpec, candidate: dict[str, Any], truth: Truth,
                 config: ReplayConfig) -> None:
        self.tab, self.page = tab, tab.page
        self.spec, self.candidate = spec, candidate
        self.truth, self.config = truth, config
        self.recorded: list[Recorded] = []
        self.sid = ""
        self.final: dict[str, Any] = {}  # the true state after the last step
        self._check: asyncio.Future | None = None  # the truth check of the last step
        # each GUI action's gestures, per step; their targets in order: the page's read after
        # a gesture looks up the next one's (BrowserTab.find_next), so resolving it costs no
        # call to the page
        self._gestures = [[gestures(spec, step["page"], gui) for gui in step["gui"]]
                          for step in candidate["steps"]]
        self._targets = [g.selector for step in self._gestures for gui in step for g in gui]

    async def run(self) -> list[Recorded]:
        self.tab.find_next = self._targets[0] if self._targets else None
        await self._open()
        expected = expected_states(self.candidate)
        try:
            for k, step in enumerate(self.candidate["steps"]):
                before = expected[k - 1] if k else self.candidate["start"]
                for j, gui in enumerate(step["gui"]):
                    await self._perform(k, step, gui, self._gestures[k][j])
                    trigger = j == len(step["gui"]) - 1
                    # the truth is read while the next page is observed; it is checked
                    # before the next action (a mismatch stays this step's failure)
                    self._check = asyncio.ensure_future(
                        self._expect(expected[k] if trigger else before, step, gui))
            await self._checked()
        finally:
            self.tab.find_next = None
            if self._check is not None:  # the run was cancelled: drop the check's answer
                abandon(self._check)
        return self.recorded

    async def _checked(self) -> None:
        """Wait for the last step's truth check (its Failure, if it failed)."""
        check, self._check = self._check, None
        if check is not None:
            await check

    async def _open(self) -> None:
        await self.page.context.clear_cookies()
        await self._goto(f"{self.truth.endpoint.url}/")
        cookies = await self.page.context.cookies(f"{self.truth.endpoint.url}/")
        value = next((c["value"] for c in cookies if c["name"] == contract.SESSION_COOKIE), "")
        self.sid = value.partition(".")[0]
        if not self.sid:
            raise Failure("server_error", "the site set no session cookie")
        start = self.candidate["start"]
        if await self.truth.state(self.sid) != start:
            await self.truth.reset(self.sid, start["page"])
            await self._goto(f"{self.truth.endpoint.url}/")

    async def _goto(self, url: str) -> None:
        try:
            outcome = await self.tab.goto(url)
        except NavigationError as exc:
            raise Failure("navigation_timeout", str(exc)) from None
        _check_status(outcome.status, url)

    async def _perform(self, k: int, step: dict[str, Any], gui: dict[str, Any],
                       planned: list[Gesture]) -> None:
        for gesture in planned:
            try:
                seen = await self.tab.observe(screenshot=self.config.screenshots)
                bid = await self._resolve(gesture, seen)
            except Exception:
                await self._checked()  # the last step's mismatch, if any, is the cause
                raise
            await self._checked()
            action = BrowserAction(gesture.action, bid, gesture.arg)
            self._record(k, step, gui, action, seen)
            done = len(self.recorded)  # gestures done, this one included
            self.tab.find_next = self._targets[done] if done < len(self._targets) else None
            try:
                outcome = await self.tab.act(action, seen)
            except ActionRefused as refused:
                raise Failure(REFUSAL_CLASS.get(refused.code, "action_error"), str(refused)) from None
            except NavigationError as exc:
                raise Failure("navigation_timeout", str(exc)) from None
            _check_status(outcome.status, seen.url)

    async def _resolve(self, gesture: Gesture, seen: Observation) -> str:
        """The observation id of the gesture's target, or a classified failure."""
        count, bid = await self.tab.find(gesture.selector)
        if count == 0:
            raise Failure("element_missing", f"no element matches {gesture.selector}")
        if count > 1:
            raise Failure("action_error", f"{count} elements match {gesture.selector}")
        if not bid:
            raise Failure("element_hidden", f"{gesture.selector} is in the page but not visible")
        return bid

    async def _expect(self, expected: dict[str, Any], step: dict[str, Any],
                      gui: dict[str, Any]) -> None:
        actual = self.final = await self.truth.state(self.sid)
        if actual != expected:
            raise Failure("state_mismatch", _diff(expected, actual, step, gui))
        for rec in self.recorded:
            if rec.step["fsm_index"] == step["index"] and not rec.step["page"]:
                rec.step["page"] = actual["page"]

    def _record(self, k: int, step: dict[str, Any], gui: dict[str, Any], action: BrowserAction,
                seen: Observation) -> None:
        node = seen.node(action.bid)
        index = len(self.recorded)
        self.recorded.append(Recorded(VerifiedStep(
            index=index, fsm_index=k, fsm_action=step["action"], fsm_label=step["label"],
            op=gui["op"], element=gui["element"],
            element_label=element_label(self.spec, step["page"], gui["element"]),
            value=gui.get("value") or gui.get("key"), action=str(action), bid=action.bid,
            bbox=node["bbox"] if node else None,
            observation={"url": seen.url, "axtree": seen.text,
                         "screenshot": f"images/{self.candidate['id']}/{index:03d}.png"
                         if self.config.screenshots else None},
            page="",
        ), seen.screenshot))


def _check_status(status: int | None, url: str) -> None:
    if status is not None and status >= 500:
        raise Failure("server_error", f"HTTP {status} after acting on {url}")
    if status is not None and status >= 400:
        raise Failure("action_error", f"HTTP {status} after acting on {url}")


def _diff(expected: dict[str, Any], actual: dict[str, Any], step: dict, gui: dict) -> str:
    where = f"after {gui['op']} on {gui['element']!r} (action {step['action']})"
    if expected["page"] != actual["page"]:
        return f"{where}: page is {actual['page']!r}, expected {expected['page']!r}"
    changed = {k: (expected["vars"].get(k), v) for k, v in actual["vars"].items()
               if expected["vars"].get(k) != v}
    shown = ", ".join(f"{k}={a!r} (expected {e!r})" for k, (e, a) in list(changed.items())[:4])
    return f"{where}: {shown}"


# --- one candidate, end to end ----------------------------------------------------------------


async def verify_candidate(tab: BrowserTab, spec: WorldSpec, candidate: dict[str, Any], truth: Truth,
                           config: ReplayConfig, world_dir: Path, theme: str
                           ) -> tuple[VerifiedTrajectory | None, FailureRecord | None]:
    """Replay one candidate; on success write its screenshots and return its record."""
    started = time.perf_counter()
    replay = Replay(tab, spec, candidate, truth, config)
    try:
        recorded = await replay.run()
    except Failure as failure:
        last = replay.recorded[-1].step if replay.recorded else None
        return None, FailureRecord(
            id=candidate["id"], world_id=candidate["world_id"], task_id=candidate["task_id"],
            failure=failure.kind, step=last["index"] if last else 0,
            fsm_action=last["fsm_action"] if last else "", message=str(failure),
            seconds=round(time.perf_counter() - started, 3))
    _write_images(world_dir, recorded)
    viewport = tab.page.viewport_size or {"width": 0, "height": 0}
    return VerifiedTrajectory(
        id=candidate["id"], world_id=candidate["world_id"], task_id=candidate["task_id"],
        intent=candidate["intent"], slots=candidate["slots"], length=candidate["length"],
        shortest_length=candidate["shortest_length"], theme=theme, transition=spec.transition,
        viewport=[viewport["width"], viewport["height"]],
        steps=[r.step for r in recorded], final_state=replay.final,
        seconds=round(time.perf_counter() - started, 3)), None


def _write_images(world_dir: Path, recorded: list[Recorded]) -> None:
    for rec in recorded:
        if rec.image is not None:
            path = world_dir / rec.step["observation"]["screenshot"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(rec.image)
