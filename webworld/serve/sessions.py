"""Per-browser-session FSM state, identified by a signed cookie.

The cookie value is ``<sid>.<signature>``; the signature (HMAC-SHA256 with a per-app
secret) lets the server tell a forged cookie from an expired one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

from webworld.spec.semantics import State

MAX_SESSIONS = 10_000


@dataclass
class Session:
    sid: str
    state: State
    flash: str | None = None


class SessionStore:
    """An LRU-bounded map of session id -> :class:`Session`, safe across threads."""

    def __init__(self, initial: State, *, secret: bytes | None = None,
                 capacity: int = MAX_SESSIONS) -> None:
        self.initial = initial
        self._secret = secret or secrets.token_bytes(32)
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def sign(self, sid: str) -> str:
        digest = hmac.new(self._secret, sid.encode(), hashlib.sha256).hexdigest()[:32]
        return f"{sid}.{digest}"

    def verify(self, cookie: str) -> str | None:
        """The session id of a genuine cookie, else None (forged or malformed)."""
        sid, _, _ = cookie.partition(".")
        # compare_digest refuses non-ASCII str (a TypeError, once a 500): such a cookie is forged
        if not sid or not cookie.isascii() or not hmac.compare_digest(self.sign(sid), cookie):
            return None
        return sid

    def create(self, state: State | None = None) -> Session:
        session = Session(secrets.token_urlsafe(16), state or self.initial)
        with self._lock:
            self._sessions[session.sid] = session
            while len(self._sessions) > self._capacity:
                self._sessions.popitem(last=False)
        return session

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, sid: object) -> bool:
        """Held now (without counting as a use)."""
        return sid in self._sessions

    def get(self, sid: str) -> Session | None:
        with self._lock:
            session = self._sessions.get(sid)
            if session is not None:
                self._sessions.move_to_end(sid)
            return session

    def reset(self, sid: str, state: State | None = None) -> Session | None:
        session = self.get(sid)
        if session is not None:
            session.state, session.flash = state or self.initial, None
        return session
