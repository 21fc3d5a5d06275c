"""The site server under hostile HTTP: traversal and very long URLs, huge, binary and
malformed bodies, forged and tampered cookies, stale forms, actions not allowed now, 50
concurrent posts on one session, the truth endpoints without or with a wrong token. No 500,
no traceback, no ground truth without the token, and afterwards a normal trajectory still
plays to exactly its expected states on the same server."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from webworld import contract
from webworld.explore.candidates import expected_states
from webworld.serve.multi import WORLD_PREFIX, create_multi_app
from webworld.serve.runner import LiveServer

TOKEN = "hostile-test-token"
AUTH = {contract.TOKEN_HEADER: f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def site(bookstore):
    with LiveServer(create_multi_app([bookstore.site_dir], truth_token=TOKEN)) as server:
        yield server.url + WORLD_PREFIX.format(world=bookstore.spec.id), bookstore


def session(base: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(follow_redirects=True, timeout=30)
    assert client.get(f"{base}/").status_code == 200
    return client, client.cookies[contract.SESSION_COOKIE].partition(".")[0]


def truth(base: str, sid: str, headers: dict | None = None) -> httpx.Response:
    return httpx.get(contract.TRUTH_STATE_URL.format(base=base), params={"session": sid},
                     headers=AUTH if headers is None else headers, timeout=30)


def harmless(response: httpx.Response) -> httpx.Response:
    """No server error, no traceback, no ground truth and no token in what came back."""
    assert response.status_code < 500, (response.request.url, response.status_code)
    assert "Traceback" not in response.text and TOKEN not in response.text
    assert '"vars"' not in response.text, "ground truth leaked"
    return response


def act(client: httpx.Client, base: str, action: str, **kw) -> httpx.Response:
    return client.post(contract.ACTION_URL.format(base=base, action=action), **kw)


def play(client: httpx.Client, base: str, sid: str, candidate: dict) -> None:
    """Post each step's action with its parameters; the server's true state must be the
    expected one after every step."""
    for step, expected in zip(candidate["steps"], expected_states(candidate)):
        form = {k: str(v) for k, v in step["params"].items()}
        harmless(act(client, base, step["action"], data=form))
        assert truth(base, sid).json() == expected, step["action"]


def test_paths_urls_and_bodies(site) -> None:
    base, world = site
    client, sid = session(base)
    home = world.spec.page(world.spec.home)
    some = next(a for a in home.actions if a.params) or home.actions[0]
    for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/static/../spec.json",
                 "/static/%2e%2e/manifest.json", "/page/" + "a" * 20_000, "/act/x" * 2_000,
                 "/__truth/state/../../x"):
        response = harmless(client.get(base + path))
        assert response.status_code in (400, 404, 405, 414), (path, response.status_code)
        assert "root:" not in response.text and '"pages"' not in response.text
    long_query = harmless(client.get(f"{base}/page/{world.spec.home}?" + "q=" * 10_000))
    assert long_query.status_code in (200, 414)  # the query means nothing to the site
    bodies = [
        {"content": b"\x00\xff" * 50_000, "headers": {"content-type": "application/octet-stream"}},
        {"content": b"a=" + b"x" * (5 << 20),
         "headers": {"content-type": "application/x-www-form-urlencoded"}},
        {"content": b"%%%=%zz&&==", "headers": {"content-type": "application/x-www-form-urlencoded"}},
        {"content": b"{\"a\": 1}", "headers": {"content-type": "application/json"}},
        {"content": b"--b\r\nContent-Disposition: form-data\r\n\r\n",
         "headers": {"content-type": "multipart/form-data; boundary=b"}},
        {"data": {p.name: "\u202e\x00" * 500 for p in some.params}},
    ]
    for body in bodies:
        harmless(act(client, base, some.id, **body))
    assert truth(base, sid).json()["page"] == world.spec.home


def test_cookies_tokens_and_stale_forms(site) -> None:
    base, world = site
    client, sid = session(base)
    cookie = client.cookies[contract.SESSION_COOKIE]
    sid_part, _, signature = cookie.partition(".")
    for forged in (f"{sid_part}.{'0' * len(signature)}", f"{sid_part[:-1]}A.{signature}",
                   f"{sid_part}", ".", "x" * 5_000, f"{sid_part}.{signature}.extra", "\u00e9.\u00e9"):
        raw = f"{contract.SESSION_COOKIE}={forged}".encode()  # sent as bytes, as a browser could
        response = harmless(httpx.get(f"{base}/page/{world.spec.home}", headers={"cookie": raw},
                                      timeout=30))
        assert response.status_code in (200, 400, 403), (forged[:20], response.status_code)
    for headers in ({}, {contract.TOKEN_HEADER: "Bearer wrong"}, {contract.TOKEN_HEADER: TOKEN},
                    {contract.TOKEN_HEADER: "Bearer " + "x" * 10_000}):
        assert harmless(truth(base, sid, headers)).status_code in (401, 403)
        reset = httpx.post(contract.TRUTH_RESET_URL.format(base=base), params={"session": sid},
                           headers=headers, timeout=30)
        assert harmless(reset).status_code in (401, 403)
    assert truth(base, "no-such-session").status_code == 404
    not_here = next(a for p in world.spec.pages if p.id != world.spec.home for a in p.actions)
    assert harmless(act(client, base, not_here.id)).status_code == 409  # a stale form
    assert truth(base, sid).json()["page"] == world.spec.home


def test_fifty_concurrent_posts_on_one_session_keep_a_possible_state(site) -> None:
    """The same trajectory's first action posted 50 times at once: one state results, the
    one a single post gives (the server applies them one at a time)."""
    base, world = site
    candidate = json.loads((world.world_dir / "candidates.jsonl").read_text().splitlines()[0])
    client, sid = session(base)
    first = candidate["steps"][0]
    form = {k: str(v) for k, v in first["params"].items()}

    def post_in_the_session(_: int) -> httpx.Response:
        # a client per thread, each with the session's cookie: httpx's connection pool
        # (httpcore 1.0.9) can close a connection it already gave to another thread's request
        # when more than 20 are open (encode/httpcore#1110), a client-side [Errno 9] Bad file
        # descriptor that says nothing about the server
        with httpx.Client(follow_redirects=True, timeout=30, cookies=client.cookies) as own:
            return act(own, base, first["action"], data=form)

    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(post_in_the_session, range(50)))
    for response in answers:
        harmless(response)
    after = truth(base, sid).json()
    single, single_sid = session(base)
    harmless(act(single, base, first["action"], data=form))
    if first["expected"]["page"] != candidate["start"]["page"]:
        assert after == truth(base, single_sid).json() == expected_states(candidate)[0]
    assert after["page"] in {p.id for p in world.spec.pages}


def test_a_normal_trajectory_still_plays_after_all_that(site) -> None:
    base, world = site
    for line in (world.world_dir / "candidates.jsonl").read_text().splitlines()[:3]:
        candidate = json.loads(line)
        client, sid = session(base)
        play(client, base, sid, candidate)
        reset = httpx.post(contract.TRUTH_RESET_URL.format(base=base), params={"session": sid},
                           headers=AUTH, timeout=30)
        assert reset.status_code == 200 and reset.json() == candidate["start"]
        play(client, base, sid, candidate)  # the same session, once more from the start


def test_the_session_store_is_capped_least_recently_used_first(bookstore) -> None:
    from webworld.serve.sessions import SessionStore
    from webworld.spec.semantics import Machine

    store = SessionStore(Machine(bookstore.spec).initial_state(), capacity=10)
    made = [store.create().sid for _ in range(10)]
    assert store.get(made[0]) is not None  # used again: now the most recent
    later = [store.create().sid for _ in range(5)]
    alive = {sid for sid in made + later if sid in store}
    assert alive == {made[0], *made[6:], *later}  # the 5 least recently used went
    more = [store.create().sid for _ in range(25)]
    assert {sid for sid in made + later + more if sid in store} == set(more[-10:])
    assert len(store) == 10
