"""Sites that update in place (``transition: swap``): site.js sends an action's form with fetch
and puts the next page in place; the server still owns the state. The live env, the verifier and
the fast env wait on the one settle signal (site.js's ``ww:settled``), never on a sleep; a server
that answers late is never seen half-swapped; a swap that fails leaves a readable page and an
error the env reports; back, reload and a blocked script work as on any site."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import closing

import numpy as np
import pytest

from tests.rl.conftest import Built
from tests.rl.test_fast_env import parity
from webworld.rl.live import LiveEnv
from webworld.rl.tasks import TaskInstance

STILL_HERE = "() => window.__wwSameDocument === 1"
# The page library's settle, noting when the tab asks it while a swap is under way (site.js
# marks the document busy before it sends the request).
NOTE_SETTLE_ASKED_JS = """() => {
  const settle = window.__ww.settle;
  window.__ww.settle = (opts) => {
    if (document.documentElement.hasAttribute("data-ww-busy")) window.__wwAskedWhileBusy = true;
    return settle(opts);
  };
}"""


def _instance(env: LiveEnv) -> TaskInstance:
    return next(i for i in env.sampler.instances if i.oracle and len(i.oracle[0]) >= 3)


def _page(env: LiveEnv):  # -> playwright Page of the episode's tab
    return env.episode.page.tab.page


def _on_page(env: LiveEnv, make: Callable[..., object]) -> object:
    """Run ``make(page)`` (a coroutine) on the env's browser loop."""
    return env._drive(make(_page(env)))


def test_a_swap_site_reaches_the_goal_without_a_page_load(lab_swap: Built) -> None:
    with closing(LiveEnv(lab_swap.worlds(), split=None, observation="compact")) as env:
        for inst in [i for i in env.sampler.instances if i.oracle][:4]:
            env.reset(seed=0, options={"task": inst})
            _on_page(env, lambda page: page.evaluate("() => { window.__wwSameDocument = 1; }"))
            rewards = [env.step(action)[1] for action in inst.oracle[0]]
            assert rewards[-1] == 1.0 and not any(rewards[:-1]), (inst.id, rewards)
            assert _on_page(env, lambda page: page.evaluate(STILL_HERE)), "a page loaded"


def test_back_and_reload_ask_the_server_again(flight_swap: Built) -> None:
    with closing(LiveEnv(flight_swap.worlds(), split=None, observation="compact")) as env:
        inst = _instance(env)
        env.reset(seed=0, options={"task": inst})
        urls = [env.step(action)[0]["url"] for action in inst.oracle[0][:-1]]
        assert len(set(urls)) > 1  # the path went through pages

        async def back_and_reload(page) -> tuple[str, str, str]:
            now = page.url
            await page.evaluate("() => { window.__settled = new Promise((r) => "
                                "document.addEventListener('ww:settled', r, {once: true})); }")
            await page.go_back()
            await page.evaluate("() => window.__settled")  # the swap the back button started
            after_back = page.url
            await page.reload()
            return now, after_back, page.url

        now, after_back, after_reload = _on_page(env, back_and_reload)
        # the server owns the state: back shows the page the state is on, as on any site
        assert after_back == now == after_reload
        assert env._drive(env.episode.page.tab.observe()).url == urls[-1]


def test_with_the_script_blocked_a_form_still_submits(flight_swap: Built) -> None:
    import httpx
    from playwright.async_api import async_playwright

    from webworld import contract
    from webworld.browser.launch import launch_browser
    from webworld.contract import WORLD_PREFIX
    from webworld.serve.multi import create_multi_app
    from webworld.serve.runner import LiveServer

    app = create_multi_app([flight_swap.site_dir])

    async def main() -> tuple[dict, dict]:
        with LiveServer(app) as server:
            base = server.url + WORLD_PREFIX.format(world=flight_swap.spec.id)
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                context = await browser.new_context(java_script_enabled=False)
                page = await context.new_page()
                await page.goto(base + "/")
                cookie = next(c for c in await context.cookies()
                              if c["name"] == contract.SESSION_COOKIE)

                def truth() -> dict:
                    return httpx.get(contract.TRUTH_STATE_URL.format(base=base),
                                     params={"session": cookie["value"].partition(".")[0]},
                                     headers={contract.TOKEN_HEADER:
                                              f"Bearer {app.state.truth_token}"}).json()

                before = truth()
                async with page.expect_navigation():  # a visible button, pressed from the keyboard
                    await page.locator("button[type=submit]:visible").first.press("Enter")
                after = truth()
                await browser.close()
                return before, after

    before, after = asyncio.run(main())
    assert before != after  # a plain form submission moved the site on


def test_a_late_server_is_never_seen_half_swapped(lab_swap: Built) -> None:
    with closing(LiveEnv(lab_swap.worlds(), split=None, observation="compact")) as env:
        inst = _instance(env)
        expected = []
        env.reset(seed=0, options={"task": inst})
        for action in inst.oracle[0]:
            expected.append(env.step(action)[0])

        async def slow(page) -> None:
            # the server answers only once the tab is already waiting: after it asked the
            # page to settle with the swap's request under way
            await page.evaluate(NOTE_SETTLE_ASKED_JS)

            async def later(route) -> None:
                await page.wait_for_function("() => window.__wwAskedWhileBusy === true",
                                             timeout=60_000)  # a hang guard
                await page.evaluate("() => { window.__wwAskedWhileBusy = false; }")
                await route.continue_()
                held.append(route.request.url)
            await page.route("**/act/**", later)

        held: list[str] = []
        env.reset(seed=0, options={"task": inst})
        _on_page(env, slow)
        for action, want in zip(inst.oracle[0], expected):
            got = env.step(action)[0]
            assert got == want, action
        assert held  # the path sent forms, each answered late


def test_a_failed_swap_leaves_a_readable_page_and_an_error(lab_swap: Built) -> None:
    with closing(LiveEnv(lab_swap.worlds(), split=None, observation="compact")) as env:
        inst = _instance(env)
        env.reset(seed=0, options={"task": inst})
        _on_page(env, lambda page: page.route("**/act/**", lambda route: route.abort()))
        # the first action that sends a form fails: the step says so, the episode goes on
        for action in inst.oracle[0]:
            before = env.episode.seen.url
            obs, reward, terminated, truncated, info = env.step(action)
            if info["error_code"]:
                break
        else:
            pytest.fail("no action sent a form")
        assert info["error_code"] == "navigation"
        assert "did not answer" in obs["last_action_error"]
        assert not terminated and not info["success"] and info["progress"] == 0.0
        # the page the action was taken on is still there, with an alert saying what happened
        assert "could not be loaded" in obs["axtree"]
        assert obs["url"] == before


def test_a_server_error_during_a_swap_shows_its_page(lab_swap: Built) -> None:
    with closing(LiveEnv(lab_swap.worlds(), split=None, observation="compact")) as env:
        inst = _instance(env)
        env.reset(seed=0, options={"task": inst})

        async def broken(page) -> None:
            await page.route("**/act/**", lambda route: route.fulfill(
                status=500, content_type="text/html",
                body="<!DOCTYPE html><title>Server error</title><body><main><h1>Something "
                     "went wrong</h1></main></body>"))

        _on_page(env, broken)
        for action in inst.oracle[0]:
            obs = env.step(action)[0]
            if "Something went wrong" in obs["axtree"]:
                break
        else:
            pytest.fail("no action reached the server")


def test_navigate_and_swap_show_the_same_pixels(flight: Built, flight_swap: Built) -> None:
    shots = []
    for built in (flight, flight_swap):
        env = LiveEnv(built.worlds(), split=None, observation="compact", screenshot=True)
        with closing(env):
            inst = _instance(env)
            env.reset(seed=0, options={"task": inst})
            frames = [env.step(action)[0]["screenshot"] for action in inst.oracle[0][:3]]
            shots.append(frames)
    for navigate, swap in zip(*shots):
        assert np.array_equal(navigate, swap)


def test_the_fast_env_equals_the_live_env_on_a_swap_site(lab_swap: Built) -> None:
    parity(lab_swap, random_episodes=8)


def test_the_verifier_verifies_a_swap_site(lab_swap: Built) -> None:
    """Every candidate of the swap lab verified when the fixture was built (its build asserts
    no failures); the records say how the site moved."""
    import json

    records = [json.loads(line) for line in
               (lab_swap.trajectories / lab_swap.spec.id / "verified.jsonl").open()]
    assert records and all(r["transition"] == "swap" for r in records)


