"""The site server under load: memory after 100,000 sessions, and 50 sessions stepping
valid actions for a minute.

    .venv/bin/python bench/bench_serve.py             # 100,000 sessions, 60 s of load
    .venv/bin/python bench/bench_serve.py --quick     # 10,000 sessions, 10 s

One easy world (online bookstore, seed 0) is generated, rendered and explored into a temp
dir and served by `webworld serve` in its own process (so its RSS is the server's alone and
the load generator does not share its interpreter).

1. **Sessions**: cookie-less GETs of the home page, each of which opens a session, from
   8 concurrent clients. The server's RSS (``/proc/<pid>/status``) after the first 1,000
   (the baseline) and after all of them; the store holds at most ``MAX_SESSIONS`` (10,000,
   least recently used dropped), so memory stops growing once the cap is reached.
2. **Load**: N concurrent sessions (asyncio, one httpx client each) play candidate
   trajectories step by step: a form post per FSM action (the redirect followed, as a
   browser does), then a reset through the ground-truth endpoint and the next trajectory.
   Steps/s, requests/s, p50 / p99 latency of a step, and errors by status; the baseline is
   the same with 1 session, in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchkit import load_note, make_console, progress_bar  # noqa: E402

from webworld import contract  # noqa: E402
from webworld.serve.sessions import MAX_SESSIONS  # noqa: E402

TOKEN = "bench-token"


def build_world(root: Path) -> tuple[Path, list[dict]]:
    from webworld.explore.candidates import ExploreConfig, explore_world
    from webworld.propose.procedural import generate
    from webworld.render.site import render_site

    spec = generate("online bookstore", "easy", 0).spec
    site = render_site(spec, root / "sites" / spec.id)
    candidates = explore_world(spec, ExploreConfig(max_instances=2, max_shortest=1)).candidates
    return site, candidates


def start_server(site: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([str(Path(sys.executable).parent / "webworld"), "serve", str(site),
                             "--port", str(port), "--token", TOKEN],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/w/{site.name}"
    for _ in range(200):
        try:
            if httpx.get(f"{base}/", timeout=2, follow_redirects=True).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _one_session(base: str) -> str:
    with httpx.Client(timeout=30, follow_redirects=True) as client:
        client.get(f"{base}/").raise_for_status()
        return client.cookies[contract.SESSION_COOKIE].partition(".")[0]


def open_sessions(base: str, count: int, console) -> None:
    def some(n: int) -> None:
        with httpx.Client(timeout=30, follow_redirects=True) as client:
            for _ in range(n):
                client.get(f"{base}/").raise_for_status()
                client.cookies.clear()  # the next GET opens a new session
    with progress_bar(console) as bar, ThreadPoolExecutor(8) as pool:
        task = bar.add_task(f"opening {count:,} sessions", total=count)
        chunk = 250
        for _ in pool.map(lambda n: (some(n), bar.advance(task, n)), [chunk] * (count // chunk)):
            pass


async def one_session(base: str, candidates: list[dict], until: float, latencies: list[float],
                      statuses: Counter, offset: int) -> int:
    """Play trajectories until ``until``; returns the requests made."""
    requests = 0
    async with httpx.AsyncClient(follow_redirects=True, timeout=30) as client:
        await client.get(f"{base}/")
        sid = client.cookies[contract.SESSION_COOKIE].partition(".")[0]
        k = offset
        while time.perf_counter() < until:
            candidate = candidates[k % len(candidates)]
            k += 1
            for step in candidate["steps"]:
                started = time.perf_counter()
                response = await client.post(contract.ACTION_URL.format(base=base, action=step["action"]),
                                             data={p: str(v) for p, v in step["params"].items()})
                latencies.append(time.perf_counter() - started)
                requests += 1 + len(response.history)
                statuses[response.status_code] += 1
            reset = await client.post(contract.TRUTH_RESET_URL.format(base=base), params={"session": sid},
                                      headers={contract.TOKEN_HEADER: f"Bearer {TOKEN}"})
            statuses[reset.status_code] += 1
            requests += 1
    return requests


def load(base: str, candidates: list[dict], sessions: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    statuses: Counter = Counter()

    async def run() -> int:
        until = time.perf_counter() + seconds
        done = await asyncio.gather(*(one_session(base, candidates, until, latencies, statuses, i)
                                      for i in range(sessions)))
        return sum(done)

    started = time.perf_counter()
    requests = asyncio.run(run())
    wall = time.perf_counter() - started
    cuts = statistics.quantiles(latencies, n=100)
    errors = {code: n for code, n in statuses.items() if code >= 400}
    return {"steps/s": len(latencies) / wall, "requests/s": requests / wall,
            "p50 ms": 1000 * cuts[49], "p99 ms": 1000 * cuts[98], "steps": len(latencies),
            "errors": sum(errors.values()), "by status": dict(sorted(statuses.items()))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.seconds = 10_000, 10.0
    console = make_console()
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        site, candidates = build_world(Path(tmp))
        proc, base = start_server(site)
        try:
            start = rss_mb(proc.pid)
            first_sid = _one_session(base)
            open_sessions(base, 1_000, console)
            first = rss_mb(proc.pid)
            open_sessions(base, args.sessions - 1_000, console)
            after = rss_mb(proc.pid)
            evicted = httpx.get(contract.TRUTH_STATE_URL.format(base=base),
                                params={"session": first_sid}, timeout=30,
                                headers={contract.TOKEN_HEADER: f"Bearer {TOKEN}"}).status_code == 404
            single = load(base, candidates, 1, args.seconds / 2)
            many = load(base, candidates, args.clients, args.seconds)
        finally:
            proc.terminate()
            proc.wait(10)
    memory = Table("sessions opened", "server RSS (MB)", "vs after 1,000",
                   title=f"server memory (store capped at {MAX_SESSIONS:,} sessions)")
    memory.add_row("0", f"{start:.1f}", "-")
    memory.add_row("1,000 (baseline)", f"{first:.1f}", "1.00x")
    memory.add_row(f"{args.sessions:,}", f"{after:.1f}", f"{after / first:.2f}x")
    console.print(memory)
    held = "gone (least recently used, over the cap)" if evicted else "still held"
    console.print(f"the first session opened is {held}")
    table = Table("sessions", "seconds", "steps", "steps/s", "requests/s", "p50 ms", "p99 ms",
                  "errors", "statuses", title=f"load: valid actions for {args.seconds:.0f}s")
    for n, row, secs in ((1, single, args.seconds / 2), (args.clients, many, args.seconds)):
        table.add_row(str(n), f"{secs:.0f}", str(row["steps"]), f"{row['steps/s']:.0f}",
                      f"{row['requests/s']:.0f}", f"{row['p50 ms']:.1f}", f"{row['p99 ms']:.1f}",
                      str(row["errors"]), json.dumps(row["by status"]))
    console.print(table)
    console.print(f"{args.clients} sessions: {many['steps/s'] / single['steps/s']:.2f}x the steps/s "
                  f"of 1 session; {load_note()}")


if __name__ == "__main__":
    main()
