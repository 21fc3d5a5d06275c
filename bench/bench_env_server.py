"""The OpenEnv server (`webworld env serve`) under 1 to 1,024 concurrent WebSocket sessions,
beside the in-process fast env playing the same episodes in the same run.

    .venv/bin/python bench/bench_env_server.py             # full: about 5 minutes on 2 cores
    .venv/bin/python bench/bench_env_server.py --quick     # smoke run
    .venv/bin/python bench/bench_env_server.py --worlds DIR   # a built board (sites/, trajectories/)

The world is the 4-button board (webworld.train.sanity): an episode is a reset and one click,
so what is timed is the server's cost per message, not the world's. The server runs in its
own process on 127.0.0.1 (its RSS is its own); the clients are OpenEnv's async ``EnvClient``
(:class:`webworld.interop.openenv.WebworldClient`), one WebSocket each, in this process.

1. **Fast env through the server**, per level N (1, 64, 256, 1,024): N clients connect and
   reset (each session takes its episode); while all N are open the server is asked
   (``GET /webworld/sessions``) how many it holds (must be N) and its RSS is read
   (``/proc/<pid>/status``); then all N play the oracle (the verified trajectory's actions)
   for a bounded number of episodes each. Steps/s over that phase (resets included in the
   time), p50 / p99 of a step's round trip seen by the client, RSS per session ((RSS with N
   open - idle RSS) / N; idle: after one warm-up episode, before the first level), the
   server's threads (OpenEnv gives each WebSocket session an executor of its own).
2. **In process**: :class:`webworld.rl.fast.env.FastEnv` on the same worlds playing the same
   episodes one after the other; the ratio server / in process per level.
3. **Live env through the server** (``--env live``: one Chromium, sessions over its pooled
   browser contexts): steps/s at 1, 4 and 16 sessions, a few episodes each.

Client and server share the machine's cores; the load average is printed before and after.
Everything is bounded: episodes per level and a time limit per level (``LEVEL_LIMIT_S``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchkit import load_note, make_console  # noqa: E402

START_LIMIT_S = 300   # a server that never says it listens is killed
LEVEL_LIMIT_S = 180   # one level's connect + play + close
HANDSHAKES = 32       # WebSocket handshakes in flight at once (the rest wait their turn)

# (sessions, episodes each): about 1,000-2,000 episodes a level in the full run
FULL_FAST = ((1, 1000), (64, 16), (256, 4), (1024, 2))
QUICK_FAST = ((1, 100), (64, 2), (256, 1))
FULL_LIVE = ((1, 6), (4, 3), (16, 2))
QUICK_LIVE = ((1, 2), (4, 1))


@dataclass
class Oracle:
    """The episode every client plays: a task instance and its verified actions."""

    task: str
    actions: tuple[str, ...]


@dataclass
class Level:
    """What one level measured."""

    sessions: int
    episodes: int = 0
    steps: int = 0
    seconds: float = 0.0
    held: dict[str, int] = field(default_factory=dict)
    rss_kb: int = 0
    threads: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    successes: int = 0


# --- the world and the server -------------------------------------------------------------


def build_world(root: Path) -> Path:
    from webworld.train.sanity import board_spec, build_board

    return build_board(root, board_spec(seed=0, buttons=4))


def oracle_of(worlds: Path) -> Oracle:
    from webworld.interop.trl import world_folder

    inst = world_folder(worlds.resolve()).instances()[0]
    return Oracle(inst.id, inst.oracle[0])


@dataclass
class Server:
    proc: subprocess.Popen
    url: str

    def status(self, key: str) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        raise KeyError(key)

    def sessions(self) -> dict[str, int]:
        return httpx.get(f"{self.url}/webworld/sessions", timeout=30).json()


@contextmanager
def env_server(worlds: Path, log: Path, *args: str) -> Iterator[Server]:
    """`webworld env serve WORLDS --port 0 ARGS` on loopback, once it printed its URL."""
    command = [sys.executable, "-m", "webworld", "env", "serve", str(worlds), "--port", "0", *args]
    with open(log, "w") as err:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True,
                                start_new_session=True)
    guard = threading.Timer(START_LIMIT_S, proc.kill)
    guard.start()
    try:
        url = ""
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith("listening on "):
                url = line.split()[-1]
                break
        guard.cancel()
        if not url:
            raise SystemExit(f"the server ended before it listened:\n{log.read_text()[-3000:]}")
        yield Server(proc, url)
    finally:
        guard.cancel()
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]


# --- clients ------------------------------------------------------------------------------


async def play(client, oracle: Oracle, latencies: list[float]) -> bool:
    """One oracle episode after its reset; whether the server called it a success."""
    result = None
    for action in oracle.actions:
        started = time.perf_counter()
        result = await client.step(action)
        latencies.append(time.perf_counter() - started)
    return bool(result is not None and result.done and result.observation.success)


async def open_session(url: str, oracle: Oracle, gate: asyncio.Semaphore):
    """A client connected and reset (so its session holds an episode)."""
    from webworld.interop.openenv import WebworldClient

    client = WebworldClient(url, message_timeout_s=LEVEL_LIMIT_S)
    async with gate:
        await client.connect()
    await client.reset(task=oracle.task)
    return client


async def run_level(server: Server, oracle: Oracle, sessions: int, episodes: int) -> Level:
    """N sessions held at once (counted by the server), then all N playing."""
    level = Level(sessions)
    gate = asyncio.Semaphore(HANDSHAKES)
    opened = await asyncio.gather(*(open_session(server.url, oracle, gate)
                                    for _ in range(sessions)), return_exceptions=True)
    clients = [c for c in opened if not isinstance(c, BaseException)]
    level.errors += [f"open: {type(e).__name__}: {e}" for e in opened
                     if isinstance(e, BaseException)]
    level.held = await asyncio.to_thread(server.sessions)
    level.rss_kb, level.threads = server.status("VmRSS"), server.status("Threads")

    async def episodes_of(client) -> tuple[int, int, int]:
        steps = wins = 0
        for _ in range(episodes):  # each timed from its reset (the first reset was not)
            await client.reset(task=oracle.task)
            wins += await play(client, oracle, level.latencies)
            steps += len(oracle.actions)
        return episodes, steps, wins

    started = time.perf_counter()
    played = await asyncio.gather(*(episodes_of(c) for c in clients), return_exceptions=True)
    level.seconds = time.perf_counter() - started
    for p in played:
        if isinstance(p, BaseException):
            level.errors.append(f"play: {type(p).__name__}: {p}")
        else:
            level.episodes += p[0]
            level.steps += p[1]
            level.successes += p[2]
    await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    return level


async def all_closed(server: Server, limit_s: float = 60) -> None:
    """Until the server has freed every session of the last level (it does so after the
    client closed: not at once), so the next level's count is its own."""
    deadline = time.monotonic() + limit_s
    while (await asyncio.to_thread(server.sessions))["active"]:
        if time.monotonic() > deadline:
            raise SystemExit(f"sessions still open after {limit_s:g} s: {server.sessions()}")
        await asyncio.sleep(0.05)


async def run_levels(server: Server, oracle: Oracle, plan: tuple[tuple[int, int], ...],
                     console) -> tuple[int, list[Level]]:
    """The levels in turn; the server's idle RSS after one warm-up episode."""
    warm = await run_level(server, oracle, 1, 1)
    if warm.errors or not warm.successes:
        raise SystemExit(f"the warm-up episode failed: {warm.errors}")
    await all_closed(server)
    idle = server.status("VmRSS")
    levels = []
    for sessions, episodes in plan:
        console.log(f"{sessions} session(s) x {episodes} episode(s) ...")
        try:
            level = await asyncio.wait_for(run_level(server, oracle, sessions, episodes),
                                           LEVEL_LIMIT_S)
        except asyncio.TimeoutError:
            level = Level(sessions, errors=[f"over the {LEVEL_LIMIT_S} s limit of a level"])
        levels.append(level)
        await all_closed(server)
    return idle, levels


# --- in process ---------------------------------------------------------------------------


def in_process(worlds: Path, oracle: Oracle, episodes: int) -> tuple[float, int]:
    """The fast env in this process, the same episodes one after the other: steps/s, wins."""
    from webworld.interop.trl import world_folder
    from webworld.rl.fast.env import FastEnv

    env = FastEnv(world_folder(worlds.resolve()), split=None, build=False,
                  observation="compact")
    env.reset(seed=0, options={"task": oracle.task})  # warm-up, as the server had
    wins = steps = 0
    started = time.perf_counter()
    for _ in range(episodes):
        env.reset(options={"task": oracle.task})
        for action in oracle.actions:
            _, _, terminated, _, info = env.step(action)
            steps += 1
        wins += bool(terminated and info["success"])
    seconds = time.perf_counter() - started
    env.close()
    return steps / seconds, wins


# --- output -------------------------------------------------------------------------------


def ms(values: list[float], q: int) -> str:
    if len(values) < 2:
        return f"{1000 * values[0]:.2f}" if values else "-"
    return f"{1000 * statistics.quantiles(values, n=100)[q - 1]:.2f}"


def rate(level: Level) -> float:
    return level.steps / level.seconds if level.seconds else 0.0


def fast_table(levels: list[Level], idle_kb: int, local: float) -> Table:
    table = Table("sessions", "held at once (server)", "episodes", "won", "steps/s",
                  "p50 ms", "p99 ms", "RSS MB (idle)", "RSS KB / session", "threads",
                  "in process steps/s", "server / in process", "errors",
                  title="fast env through `webworld env serve` (WebSocket, OpenEnv's client)")
    for lv in levels:
        per = (lv.rss_kb - idle_kb) / lv.sessions if lv.rss_kb else float("nan")
        held = f"{lv.held.get('active', 0):,} / {lv.held.get('episodes_held', 0):,} episodes"
        table.add_row(f"{lv.sessions:,}", held, f"{lv.episodes:,}", f"{lv.successes:,}",
                      f"{rate(lv):,.0f}", ms(lv.latencies, 50), ms(lv.latencies, 99),
                      f"{lv.rss_kb / 1024:.0f} ({idle_kb / 1024:.0f})", f"{per:,.0f}",
                      str(lv.threads), f"{local:,.0f}", f"{rate(lv) / local:.3f}x",
                      str(len(lv.errors)))
    return table


def live_table(levels: list[Level]) -> Table:
    table = Table("sessions", "held at once (server)", "episodes", "won", "steps/s",
                  "p50 ms", "p99 ms", "errors",
                  title="live env (Chromium) through `webworld env serve --env live`")
    for lv in levels:
        table.add_row(f"{lv.sessions}", f"{lv.held.get('active', 0)}", f"{lv.episodes}",
                      f"{lv.successes}", f"{rate(lv):.2f}", ms(lv.latencies, 50),
                      ms(lv.latencies, 99), str(len(lv.errors)))
    return table


def report_errors(console, name: str, levels: list[Level]) -> None:
    for lv in levels:
        for error in lv.errors[:3]:
            console.print(f"[red]{name}, {lv.sessions} sessions[/red]: {error}")
        if len(lv.errors) > 3:
            console.print(f"  ... and {len(lv.errors) - 3} more")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", type=Path, default=None,
                        help="a built board (sites/ with snapshots, trajectories/); "
                             "default: build one in a temp dir")
    parser.add_argument("--quick", action="store_true", help="smoke run: smaller levels")
    parser.add_argument("--no-live", action="store_true", help="skip the live env")
    args = parser.parse_args()
    console = make_console()
    fast_plan, live_plan = (QUICK_FAST, QUICK_LIVE) if args.quick else (FULL_FAST, FULL_LIVE)
    console.print(f"before: {load_note()}")
    with tempfile.TemporaryDirectory(prefix="bench-env-server-") as tmp_name:
        tmp = Path(tmp_name)
        worlds = args.worlds
        if worlds is None:
            console.log("building the 4-button board (render, explore, verify, snapshot) ...")
            worlds = build_world(tmp / "board")
        oracle = oracle_of(worlds)
        most = max(n for n, _ in fast_plan)
        with env_server(worlds, tmp / "fast.log", "--max-sessions", str(max(most, 1024))) as srv:
            idle, fast = asyncio.run(run_levels(srv, oracle, fast_plan, console))
        local_episodes = max(2000, max(n * e for n, e in fast_plan))
        local, local_wins = in_process(worlds, oracle, local_episodes)
        live: list[Level] = []
        if not args.no_live:
            top = max(n for n, _ in live_plan)
            with env_server(worlds, tmp / "live.log", "--env", "live",
                            "--max-sessions", str(top)) as srv:
                _, live = asyncio.run(run_levels(srv, oracle, live_plan, console))
    console.print(fast_table(fast, idle, local))
    console.print(f"in process: FastEnv, {local_episodes:,} episodes one after the other, "
                  f"{local_wins:,} won; steps/s count a reset and the oracle's steps per episode "
                  f"({len(oracle.actions)} here), client and server on the same cores")
    if live:
        console.print(live_table(live))
    report_errors(console, "fast", fast)
    report_errors(console, "live", live)
    for lv in fast + live:
        if lv.held.get("active") != lv.sessions:
            console.print(f"[red]{lv.sessions} sessions: the server held "
                          f"{lv.held.get('active')} at once[/red]")
    console.print(f"after: {load_note()}")


if __name__ == "__main__":
    main()
