"""How long the code waits where the tests no longer time it, each against a baseline of the
same run:

1. **LLM concurrency**: ``propose_specs`` of 3 specs from a scripted endpoint whose every reply
   takes ``delay`` seconds, with ``concurrency=4`` against ``concurrency=1`` (ratio ~3 when the
   requests overlap; tests/agents/test_llm_propose.py checks they do, without a clock).
2. **Retry backoff**: one ask answered 429, 500, then a good reply (``backoff_s`` 0.05: the
   client waits 0.05 then 0.1 s), against one ask answered at once.
3. **A killed server**: a live env on a ``webworld serve`` process; after SIGKILL, the time
   until a step raises ``ServerGone`` and until a reset does, against a healthy step.

    .venv/bin/python bench/bench_waits.py            # 1 s replies, 10 healthy steps
    .venv/bin/python bench/bench_waits.py --quick    # 0.3 s replies, 5 healthy steps
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import load_note, make_console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_env import prepare  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from tests.agents.scripted_llm import Reply, Script, create_scripted_app  # noqa: E402
from webworld.agents.client import LLMClient  # noqa: E402
from webworld.agents.config import LLMConfig  # noqa: E402
from webworld.agents.proposer import propose_specs  # noqa: E402
from webworld.propose.procedural import generate  # noqa: E402
from webworld.rl.live import LiveEnv, ServerGone  # noqa: E402
from webworld.serve.runner import LiveServer  # noqa: E402
from webworld.spec.io import spec_to_json  # noqa: E402

WORLD = "flight_booking_easy_s0"
THEME = "online bookstore"


class Answer(BaseModel):
    city: str
    count: int


def _client(url: str, cache: Path, **overrides: object) -> LLMClient:
    return LLMClient(LLMConfig(base_url=f"{url}/v1", api_key="k", model="scripted-model",
                               cache_dir=cache, **overrides))


async def _timed(client: LLMClient, work) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    try:
        await work
    finally:
        await client.close()
    return time.perf_counter() - started


def llm_rows(delay: float, tmp: Path) -> list[tuple[str, float, float]]:
    """(what, seconds, baseline seconds) for concurrency and backoff."""
    spec = json.loads(spec_to_json(generate(THEME, "easy", 0).spec))
    for page in spec["pages"]:
        page.pop("content", None)
    spec.pop("provenance", None)
    script = Script(default=Reply(json.dumps(spec), delay=delay))
    ask = [{"role": "user", "content": "A city and a count."}]
    good = json.dumps({"city": "Lisbon", "count": 3})
    with LiveServer(create_scripted_app(script)) as server:
        seconds = {}
        for n in (1, 4):
            client = _client(server.url, tmp / f"c{n}", concurrency=n)
            seconds[n] = asyncio.run(_timed(client, propose_specs(client, THEME, "easy", n=3)))
        script.default = Reply(good)
        plain = _client(server.url, tmp / "plain")
        clean = asyncio.run(_timed(plain, plain.structured("propose", ask, Answer)))
        script.push(Reply(status=429), Reply(status=500), Reply(good))
        retried = _client(server.url, tmp / "retried", backoff_s=0.05)
        backoff = asyncio.run(_timed(retried, retried.structured("propose", ask, Answer)))
    return [(f"3 proposals, {delay:g} s replies: concurrency 4 (vs 1)", seconds[4], seconds[1]),
            ("an ask after 429, 500 (backoff 0.05 + 0.1 s; vs answered at once)", backoff, clean)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int, server: subprocess.Popen, within_s: float = 60) -> None:
    deadline = time.monotonic() + within_s
    while server.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the server did not start")


def _raises_gone(call) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    try:
        call()
    except ServerGone:
        return time.perf_counter() - started
    raise SystemExit("no ServerGone: the env went on without its server")


def dead_server_rows(root: Path, steps: int,
                     console) -> list[tuple[str, float, float]]:  # type: ignore[no-untyped-def]
    worlds = prepare(root, [WORLD], console)
    token, port = "bench", _free_port()
    server = subprocess.Popen([sys.executable, "-m", "webworld.cli.main", "serve",
                               str(root / "sites" / WORLD), "--port", str(port), "--token", token],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = None
    try:
        _listening(port, server)
        env = LiveEnv(worlds, split=None, server_url=f"http://127.0.0.1:{port}", token=token,
                      navigation_timeout_ms=5000)
        task = next(i for i in env.sampler.instances if i.oracle)
        path, taken, started = task.oracle[0], 0, time.perf_counter()
        while taken < steps:
            env.reset(seed=taken, options={"task": task})
            for action in path[:steps - taken]:
                env.step(action)
                taken += 1
        step_s = (time.perf_counter() - started) / taken
        env.reset(seed=0, options={"task": task})
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        to_step = _raises_gone(lambda: [env.step(a) for a in path])
        to_reset = _raises_gone(lambda: env.reset(seed=1))
    finally:
        server.kill()
        if env is not None:
            env.close()
    return [(f"killed server: a step says so (vs a healthy step, mean of {taken})", to_step, step_s),
            ("killed server: then a reset says so (vs a healthy step)", to_reset, step_s)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="0.3 s replies, 5 healthy steps")
    args = parser.parse_args()
    console = make_console()
    with tempfile.TemporaryDirectory(prefix="bench_waits.") as tmp:
        rows = llm_rows(0.3 if args.quick else 1.0, Path(tmp))
        rows += dead_server_rows(Path(tmp), 5 if args.quick else 10, console)
    table = Table("what", "seconds", "baseline s", "ratio", title="waits, against a baseline")
    for what, seconds, baseline in rows:
        table.add_row(what, f"{seconds:.3f}", f"{baseline:.3f}",
                      f"{seconds / baseline:.2f}x" if baseline > 0 else "-")
    console.print(table)
    console.print(f"[dim]{load_note()}[/]")


if __name__ == "__main__":
    main()
