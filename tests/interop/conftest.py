"""What the interop tests share: ``tiny`` warm-started on tool calls, and `webworld env serve`
run as a real process on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from tests.rl.conftest import shared

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_S = 300  # a server that never says it listens, or never stops: fail, do not wait


@pytest.fixture(scope="session")
def tools_start(button_board: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tiny`` taught the tool-call format on the button board (random presses)."""
    import torch

    from webworld.train.sanity import format_warm_start

    def make(root: Path) -> None:
        torch.set_num_threads(1)
        format_warm_start(button_board, root, tools=True, seed=0)
    return shared(tmp_path_factory, "board-tools", make)


@dataclass
class EnvServer:
    """A running `webworld env serve`: its process, URL and token."""

    proc: subprocess.Popen
    url: str
    token: str | None
    log: IO[str]

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def sessions(self) -> dict[str, int]:
        """The server's count of sessions and episodes (GET /webworld/sessions)."""
        return httpx.get(f"{self.url}/webworld/sessions", headers=self.headers).json()

    def rss_kb(self) -> int:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines()
                        if line.startswith("VmRSS:")))

    def stop(self) -> int:
        """Ctrl-C to the server; its exit status."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=HANG_GUARD_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise
        return self.proc.returncode

    def stderr(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text()


def serve_command(worlds: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "webworld", "env", "serve", str(worlds), *args]


@contextmanager
def env_server(worlds: Path, log_dir: Path, *args: str, token: str | None = None
               ) -> Iterator[EnvServer]:
    """`webworld env serve WORLDS --port 0 ARGS`, once it has printed the URL it listens on;
    stopped with Ctrl-C after (exit 130), unless the test ended it. The token goes through
    the environment, as a container passes it."""
    env = {k: v for k, v in os.environ.items() if k != "WEBWORLD_ENV_TOKEN"}
    if token:
        env["WEBWORLD_ENV_TOKEN"] = token
    log = open(log_dir / "server.log", "w+")  # a file, not a pipe: a chatty server never blocks
    # SIGINT as a terminal leaves it: a test process may ignore it, and a child would inherit
    proc = subprocess.Popen(serve_command(worlds, "--port", "0", *args), cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=log, text=True,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    guard = threading.Timer(HANG_GUARD_S, proc.kill)  # a server that never gets ready
    guard.start()
    try:
        url = ""
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith("listening on "):
                url = line.split()[-1]
                break
        guard.cancel()
        assert url, f"the server ended before it listened:\n{Path(log.name).read_text()[-3000:]}"
        yield (server := EnvServer(proc, url, token, log))
        server.stop()
    finally:
        guard.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        log.close()


def wait_until(condition: Callable[[], Any], what: str, within_s: float = 60) -> None:
    """Until ``condition()`` holds (the server frees a session after the client went)."""
    deadline = time.monotonic() + within_s  # a hang guard: a loaded machine is slow, not stuck
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)
