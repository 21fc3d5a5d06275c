"""The server over real HTTP on loopback: sessions, guards, ground truth, bad requests."""

from __future__ import annotations

import html
import re
import socket

import httpx
import pytest

from webworld import contract
from webworld.serve.multi import WORLD_PREFIX, create_multi_app
from webworld.serve.runner import LiveServer

TOKEN = "test-token"


@pytest.fixture(scope="module")
def served(bookstore):
    with LiveServer(create_multi_app([bookstore.site_dir], truth_token=TOKEN)) as server:
        yield server.url + WORLD_PREFIX.format(world=bookstore.spec.id), bookstore


def open_session(base: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(follow_redirects=True, timeout=10)
    response = client.get(f"{base}/")
    assert response.status_code == 200
    sid = client.cookies[contract.SESSION_COOKIE].partition(".")[0]
    return client, sid


def truth(base: str, sid: str, token: str | None = TOKEN) -> httpx.Response:
    headers = {contract.TOKEN_HEADER: f"Bearer {token}"} if token else {}
    return httpx.get(contract.TRUTH_STATE_URL.format(base=base), params={"session": sid},
                     headers=headers, timeout=10)


def test_home_page_is_served_with_security_headers_and_no_state(served) -> None:
    base, world = served
    client, sid = open_session(base)
    page = client.get(f"{base}/")
    assert page.url.path.endswith(f"/page/{world.spec.home}")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "connect-src 'self'" in csp
    assert "cookie_consent" not in page.text  # variable names never reach the DOM
    assert 'data-ww-id="' in page.text


def test_truth_needs_the_token(served) -> None:
    base, _ = served
    _, sid = open_session(base)
    assert truth(base, sid, token=None).status_code == 401
    assert truth(base, sid, token="wrong").status_code == 403
    assert truth(base, "nobody").status_code == 404
    ok = truth(base, sid)
    assert ok.status_code == 200 and ok.json()["page"] == "home"


def _first_step(world):
    cand = world.explored.candidates[0]
    return cand["steps"][0]


def guarded_refusal(world):
    """(page, action, form, message): an action a person can reach whose guard fails."""
    from webworld.spec.semantics import Machine

    machine = Machine(world.spec)
    for page in world.spec.pages:
        state = machine.initial_state(page.id)
        for action in page.actions:
            params = tuple(sorted((p.name, p.domain[0]) for p in action.params))
            result = machine.fire(state, action, params)
            if machine.reachable(state, action) and not result.ok and action.guards:
                return page.id, action, {k: str(v) for k, v in params}, result.message
    raise AssertionError("no guarded action in this world")


def test_guard_violation_re_renders_with_message_and_keeps_state(served) -> None:
    base, world = served
    client, sid = open_session(base)
    page, action, form, message = guarded_refusal(world)
    headers = {contract.TOKEN_HEADER: f"Bearer {TOKEN}"}
    httpx.post(contract.TRUTH_RESET_URL.format(base=base), params={"session": sid, "page": page},
               headers=headers, timeout=10).raise_for_status()
    before = truth(base, sid).json()
    refused = client.post(contract.ACTION_URL.format(base=base, action=action.id), data=form)
    assert refused.status_code == 200 and refused.url.path.endswith(f"/page/{page}")
    alert = re.search(r'role="alert"[^>]*>(.*?)</', refused.text, re.S)
    assert alert and html.unescape(message) in html.unescape(refused.text)
    assert truth(base, sid).json() == before


def test_a_swap_action_is_answered_with_the_page_a_redirect_leads_to(served) -> None:
    """site.js's swap marks its request: one answer, the very page (its refusal message
    once) a plain submit reaches through the redirect, and where that page lives."""
    base, world = served
    page, action, form, _ = guarded_refusal(world)
    headers = {contract.TOKEN_HEADER: f"Bearer {TOKEN}"}
    answers = []
    for swap in (False, True):
        client, sid = open_session(base)
        httpx.post(contract.TRUTH_RESET_URL.format(base=base), params={"session": sid,
                   "page": page}, headers=headers, timeout=10).raise_for_status()
        url = contract.ACTION_URL.format(base=base, action=action.id)
        answer = client.post(url, data=form, headers={contract.SWAP_HEADER: "1"} if swap else {})
        answers.append(answer)
        again = client.get(f"{base}/")  # the message was shown once: it is gone
        assert 'role="alert"' not in again.text
    plain, swapped = answers
    assert [r.status_code for r in plain.history] == [303] and not swapped.history
    assert swapped.text == plain.text and 'role="alert"' in swapped.text
    assert swapped.headers[contract.SWAP_URL_HEADER] == plain.url.path


def test_overlay_blocks_the_page_until_answered(served) -> None:
    base, world = served
    client, sid = open_session(base)
    before = truth(base, sid).json()
    home = world.spec.page(world.spec.home)
    behind = next(a for a in home.actions if a.guards and a.guards[0].var == "cookie_consent")
    form = {p.name: str(p.domain[0]) for p in behind.params}
    refused = client.post(contract.ACTION_URL.format(base=base, action=behind.id), data=form)
    assert "not available right now" in refused.text
    assert truth(base, sid).json() == before

    accept = next(a for a in home.actions if a.id.endswith("cookies_accepted"))
    client.post(contract.ACTION_URL.format(base=base, action=accept.id))
    assert truth(base, sid).json()["vars"]["cookie_consent"] == "accepted"
    moved = client.post(contract.ACTION_URL.format(base=base, action=behind.id), data=form)
    assert moved.status_code == 200
    assert truth(base, sid).json()["page"] == behind.navigate


@pytest.mark.parametrize("path, method, data, status", [
    ("/page/no_such_page", "GET", None, 404),
    ("/act/no_such_action", "POST", None, 404),
])
def test_unknown_pages_and_actions_are_404(served, path, method, data, status) -> None:
    base, _ = served
    client, _ = open_session(base)
    response = client.request(method, base + path, data=data)
    assert response.status_code == status
    assert "Traceback" not in response.text


def test_stale_malformed_and_forged_requests(served) -> None:
    base, world = served
    client, sid = open_session(base)
    other = next(a for p in world.spec.pages if p.id != world.spec.home for a in p.actions)
    stale = client.post(contract.ACTION_URL.format(base=base, action=other.id))
    assert stale.status_code == 409
    home = world.spec.page(world.spec.home)
    accept = next(a for a in home.actions if a.id.endswith("cookies_accepted"))
    client.post(contract.ACTION_URL.format(base=base, action=accept.id))
    needs_params = next(a for a in home.actions if a.params)
    missing = client.post(contract.ACTION_URL.format(base=base, action=needs_params.id), data={})
    assert missing.status_code == 200 and "Please fill in" in missing.text
    garbage = client.post(contract.ACTION_URL.format(base=base, action=needs_params.id),
                          content=b"--x\r\nnot multipart", headers={
                              "content-type": "multipart/form-data; boundary=zz"})
    assert garbage.status_code == 400
    outside = {p.name: "definitely not an option" for p in needs_params.params}
    shown = client.post(contract.ACTION_URL.format(base=base, action=needs_params.id), data=outside)
    assert shown.status_code == 200 and "is not a valid" in shown.text
    assert truth(base, sid).json()["page"] == "home"

    forged = httpx.Client(cookies={contract.SESSION_COOKIE: f"{sid}.0000"}, timeout=10)
    assert forged.get(f"{base}/page/home").status_code == 403
    assert forged.post(contract.ACTION_URL.format(base=base, action=accept.id)).status_code == 403
    no_session = httpx.post(contract.ACTION_URL.format(base=base, action=accept.id), timeout=10)
    assert no_session.status_code == 403


def test_truth_reset_and_static_files(served) -> None:
    base, world = served
    client, sid = open_session(base)
    accept = next(a for a in world.spec.page(world.spec.home).actions
                  if a.id.endswith("cookies_accepted"))
    client.post(contract.ACTION_URL.format(base=base, action=accept.id))
    headers = {contract.TOKEN_HEADER: f"Bearer {TOKEN}"}
    reset = httpx.post(contract.TRUTH_RESET_URL.format(base=base), params={"session": sid},
                       headers=headers, timeout=10)
    assert reset.status_code == 200 and reset.json()["vars"]["cookie_consent"] is None
    css = client.get(contract.STATIC_URL.format(base=base, path="theme.css"))
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    assert "immutable" not in css.headers.get("cache-control", "")
    versioned = client.get(contract.STATIC_URL.format(base=base, path="theme.css") + "?v=abc")
    assert "immutable" in versioned.headers["cache-control"]
    page = client.get(contract.PAGE_URL.format(base=base, page=world.spec.home))
    assert page.headers["cache-control"] == "no-store"


def test_truth_session_opens_a_session_at_a_page(served) -> None:
    base, world = served
    headers = {contract.TOKEN_HEADER: f"Bearer {TOKEN}"}
    url = contract.TRUTH_SESSION_URL.format(base=base)
    assert httpx.post(url, params={"page": world.spec.home}, timeout=10).status_code == 401
    assert httpx.post(url, params={"page": "nowhere"}, headers=headers,
                      timeout=10).status_code == 404
    other = next(p.id for p in world.spec.pages if p.id != world.spec.home and not p.terminal)
    made = httpx.post(url, params={"page": other}, headers=headers, timeout=10).json()
    assert made["state"]["page"] == other and made["name"] == contract.SESSION_COOKIE
    client = httpx.Client(cookies={contract.SESSION_COOKIE: made["cookie"]}, timeout=10)
    shown = client.get(contract.PAGE_URL.format(base=base, page=other))
    assert shown.status_code == 200 and "<html" in shown.text
    truth = httpx.get(contract.TRUTH_STATE_URL.format(base=base), params={"session": made["session"]},
                      headers=headers, timeout=10)
    assert truth.json()["page"] == other


def test_the_in_process_server_sends_small_responses_at_once() -> None:
    """Its connections have TCP_NODELAY: without it a response's body waited about 40 ms for
    the ACK of its headers (every page, every truth read)."""
    from fastapi import FastAPI

    app = FastAPI()
    app.get("/ping")(lambda: {"ok": True})
    with LiveServer(app) as server, httpx.Client() as client:
        assert client.get(f"{server.url}/ping").json() == {"ok": True}
        sockets = [c.transport.get_extra_info("socket")
                   for c in server.server.server_state.connections]
        assert sockets and all(
            s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in sockets)
