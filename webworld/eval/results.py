"""Eval results: one JSON line per episode, appended as episodes finish; what they add up to.

A killed run resumes: :func:`read_results` drops a last line cut off mid-write, and the
runner skips episodes whose ``key`` is already in the file. Success rates come with a
Wilson 95% interval (sound at 0% and 100% and for few episodes); ``compare`` gives the
difference of two runs with Newcombe's interval built from those.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webworld.errors import UsageError

Z95 = 1.959963984540054
# why a failed episode failed (first match wins; see failure_reason)
ERROR_LABELS = {"syntax": "unparsable reply", "unknown_id": "unknown id", "policy": "policy error",
                "navigation": "page did not load"}


def failure_reason(*, success: bool, terminated: bool, truncated: bool,
                   error_codes: list[str], env_error: str = "", miniwob: bool = False) -> str:
    """One label per failed episode: the env broke, the episode ended on the wrong page
    (MiniWoB: a wrong answer), or it ran out of steps: then the error that took at least
    half of its steps, if one did, else ``step limit``."""
    if success:
        return ""
    if env_error:
        return "env error"
    if terminated:
        return "wrong answer" if miniwob else "wrong page"
    common = Counter(c for c in error_codes if c).most_common(1)
    if common and common[0][1] * 2 >= max(len(error_codes), 1):
        return ERROR_LABELS.get(common[0][0], "invalid action")
    return "step limit"


def read_results(path: Path) -> list[dict[str, Any]]:
    """The episodes of a results file; a last line cut off mid-write is cut from the file."""
    if not path.is_file():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):  # a run killed while writing: keep the complete lines only
        with path.open("r+b") as handle:
            handle.truncate(end)
    out = []
    for lineno, line in enumerate(data[:end].decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as exc:
            raise UsageError(f"line {lineno} is not JSON ({exc})", str(path)) from None
    return out


class ResultsFile:
    """Appends whole lines, flushed and synced, so a kill loses at most the episode running.
    One writer at a time: two runs resuming the same file would both play what it lacks."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = path.open("a", encoding="utf-8")
        try:  # released by the kernel when the file closes, a killed run's too
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._handle.close()
            raise UsageError("another run is writing this results file (its episodes would be "
                             "played twice): wait for it to end, or give this run its own --out",
                             str(path)) from None

    def append(self, record: dict[str, Any]) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


# --- statistics --------------------------------------------------------------------------------

def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval of a success rate."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + Z95 ** 2 / n
    centre = (p + Z95 ** 2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / denom
    lower = 0.0 if successes == 0 else max(0.0, centre - half)
    upper = 1.0 if successes == n else min(1.0, centre + half)
    return lower, upper


def newcombe(a: tuple[int, int], b: tuple[int, int]) -> tuple[float, float, float]:
    """Difference of two success rates (b - a) and its 95% interval (Newcombe's hybrid
    score interval, from the two Wilson intervals)."""
    (sa, na), (sb, nb) = a, b
    pa, pb = (sa / na if na else 0.0), (sb / nb if nb else 0.0)
    la, ua = wilson(sa, na)
    lb, ub = wilson(sb, nb)
    d = pb - pa
    lower = d - math.sqrt((pb - lb) ** 2 + (ua - pa) ** 2)
    upper = d + math.sqrt((ub - pb) ** 2 + (pa - la) ** 2)
    return d, lower, upper



T95 = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78}  # Student's t, 95% two-sided, by sample size


def mean_interval(values: list[float], *, rates: bool = True) -> tuple[float, float, float]:
    """Mean and a 95% t-interval over seeds (the mean alone when there are fewer than 2),
    kept within [0, 1] for ``rates`` (a difference of rates may be below 0)."""
    import statistics

    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    half = T95.get(len(values), 2.26) * statistics.stdev(values) / len(values) ** 0.5
    if not rates:
        return mean, mean - half, mean + half
    return mean, max(0.0, mean - half), min(1.0, mean + half)

@dataclass
class Rate:
    """Success over a group of episodes."""

    group: str
    episodes: int
    successes: int
    steps: float = 0.0   # mean steps per episode
    seconds: float = 0.0  # total episode time

    @property
    def rate(self) -> float:
        return self.successes / self.episodes if self.episodes else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.successes, self.episodes)

    def shown(self) -> str:
        lo, hi = self.interval
        return f"{100 * self.rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def rates(records: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], str]) -> list[Rate]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[key(r)].append(r)
    return [Rate(g, len(rs), sum(bool(r["success"]) for r in rs),
                 sum(r["steps"] for r in rs) / len(rs), sum(r["time_s"] for r in rs))
            for g, rs in sorted(groups.items())]


def group_of(record: dict[str, Any]) -> str:
    """Per archetype for worlds (the held-out kind too), per task for MiniWoB++."""
    if record["suite"].startswith("miniwob"):
        return record["task"]
    kind = f" ({record['kind']})" if record.get("kind") else ""
    return f"{record.get('archetype') or record['world']}{kind}"


def failures(records: Iterable[dict[str, Any]]) -> Counter:
    return Counter(r["failure"] for r in records if not r["success"])


def error_counts(records: Iterable[dict[str, Any]]) -> Counter:
    return Counter(e["code"] for r in records for e in r["errors"])


@dataclass
class Comparison:
    group: str
    a: Rate
    b: Rate
    won: int = 0   # episodes B solved and A did not (the same key: the same task and seed)
    lost: int = 0  # episodes A solved and B did not

    @property
    def difference(self) -> tuple[float, float, float]:
        return newcombe((self.a.successes, self.a.episodes), (self.b.successes, self.b.episodes))

    @property
    def sign_test(self) -> float:
        """The paired view of the same episodes: the two-sided exact sign test of won
        against lost. Where two runs play the same episodes (greedy, same seeds) it finds a
        difference the two intervals, each wide on its own, can still overlap on."""
        return sign_test(self.won, self.lost)


def sign_test(won: int, lost: int) -> float:
    """Two-sided exact binomial test of ``won`` against ``lost`` at even odds."""
    n = won + lost
    tail = sum(math.comb(n, i) for i in range(min(won, lost) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def compare(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[Comparison]:
    """Per suite and per task, on the episodes both runs have (by key), then overall."""
    keys = {r["key"] for r in a} & {r["key"] for r in b}
    if not keys:
        raise UsageError("the two results files share no episode (different suites, "
                         "seeds or episode counts?)")
    a = [r for r in a if r["key"] in keys]
    b = [r for r in b if r["key"] in keys]
    solved_a = {r["key"]: bool(r["success"]) for r in a}
    out = []
    for key in (lambda r: "all", lambda r: r["suite"], group_of):
        ra = {x.group: x for x in rates(a, key)}
        rb = {x.group: x for x in rates(b, key)}
        split: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # group: [won, lost]
        for r in b:
            if bool(r["success"]) != solved_a[r["key"]]:
                split[key(r)][0 if r["success"] else 1] += 1
        out += [Comparison(g, ra[g], rb[g], *split[g]) for g in ra if g in rb]
    seen: set[str] = set()
    return [c for c in out if not (c.group in seen or seen.add(c.group))]  # type: ignore[func-returns-value]
