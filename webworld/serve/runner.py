"""Run an app with uvicorn in a background thread on a loopback port (tests, verify)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn
from fastapi import FastAPI

from webworld.errors import WebworldError

LOOPBACK = "127.0.0.1"
# how long the server keeps an idle connection: longer than httpx's pool keeps one (5 s), so a
# client always drops it first and never sends on a connection the server is closing (uvicorn's
# own 5 s raced httpx's on a loaded machine: "Server disconnected without sending a response")
KEEP_ALIVE_S = 30


class LiveServer:
    """``with LiveServer(app) as server: server.url`` — stopped on exit."""

    def __init__(self, app: FastAPI, *, host: str = LOOPBACK, port: int = 0) -> None:
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP,
        # and without it a response's body waits for the ACK of its headers (about 40 ms)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.host, self.port = self.sock.getsockname()[:2]
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                timeout_keep_alive=KEEP_ALIVE_S)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True, name=f"webworld-server-{self.port}")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 15.0) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise WebworldError(f"the server on {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
