"""Path enumeration over a BFS state graph: shortest first, then bounded longer ones.

Pure functions over :class:`webworld.spec.graph.StateGraph`; nothing here touches a
browser or a server.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from webworld.spec.graph import Label, StateGraph


def distances_to(graph: StateGraph, targets: set[int]) -> dict[int, int]:
    """Steps from each state to the nearest target (multi-source BFS on reversed edges)."""
    dist = {t: 0 for t in targets}
    queue = deque(sorted(targets))
    pred = graph.graph.pred
    while queue:
        node = queue.popleft()
        for prev in pred[node]:
            if prev not in dist:
                dist[prev] = dist[node] + 1
                queue.append(prev)
    return dist


def state_paths(graph: StateGraph, targets: set[int], length: int, dist: dict[int, int]
                ) -> Iterator[list[int]]:
    """Simple state paths from the start (node 0) to a target with exactly ``length`` steps.

    Targets are not passed through; ``dist`` prunes branches that cannot arrive in time.
    Order is deterministic (successors in BFS discovery order).
    """
    if dist.get(0, length + 1) > length:
        return
    succ = graph.graph.succ
    path, on_path = [0], {0}
    stack = [iter(succ[0])]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            on_path.discard(path.pop())
            continue
        steps = len(path)
        if node in on_path or steps + dist.get(node, length + 1) > length:
            continue
        if node in targets:
            if steps == length:
                yield path + [node]
            continue
        path.append(node)
        on_path.add(node)
        stack.append(iter(succ[node]))


def labelled(graph: StateGraph, states: list[int]) -> Iterator[list[Label]]:
    """Every action sequence that realises a state path (parallel actions multiply)."""
    options = [graph.labels[(a, b)] for a, b in zip(states, states[1:])]
    for combo in itertools.product(*options):
        yield list(combo)


@dataclass
class PathSet:
    """Paths for one task instance, with what the caps cut."""

    shortest_length: int
    paths: list[tuple[list[int], list[Label]]]
    shortest_count: int
    cut_shortest: bool
    cut_longer: bool


def enumerate_paths(graph: StateGraph, targets: set[int], *, extra_steps: int,
                    max_shortest: int, max_longer: int) -> PathSet | None:
    """All shortest paths to ``targets`` (up to ``max_shortest``), then up to
    ``max_longer`` paths with at most ``extra_steps`` more steps."""
    if not targets:
        return None
    dist = distances_to(graph, targets)
    if 0 not in dist:
        return None
    best = dist[0]
    shortest, cut_shortest = _collect(graph, targets, best, dist, max_shortest)
    longer: list[tuple[list[int], list[Label]]] = []
    cut_longer = False
    for length in range(best + 1, best + extra_steps + 1):
        room = max_longer - len(longer)
        found, cut = _collect(graph, targets, length, dist, room)
        longer.extend(found)
        cut_longer = cut_longer or cut
        if cut:
            break
    return PathSet(best, shortest + longer, len(shortest), cut_shortest, cut_longer)


def _collect(graph: StateGraph, targets: set[int], length: int, dist: dict[int, int], cap: int
             ) -> tuple[list[tuple[list[int], list[Label]]], bool]:
    """Up to ``cap`` (states, labels) pairs of the given length; True when more existed."""
    out: list[tuple[list[int], list[Label]]] = []
    for states in state_paths(graph, targets, length, dist):
        for labels in labelled(graph, states):
            if len(out) >= cap:
                return out, True
            out.append((states, labels))
    return out, False
