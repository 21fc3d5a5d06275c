"""Graph views of a spec: the static page graph and the (page, signature) state graph.

The state graph is built by BFS from the initial state; terminal (success) pages are
absorbing, because reaching one ends a task. Both are networkx graphs so users can run
their own analyses on them.
"""

from __future__ import annotations

import gc
from collections import deque
from dataclasses import dataclass, field

import networkx as nx

from webworld.spec.models import WorldSpec
from webworld.spec.semantics import Machine, Params, State

DEFAULT_STATE_BUDGET = 200_000


def page_graph(spec: WorldSpec) -> nx.DiGraph:
    """Pages as nodes, an edge for every navigating action (attribute ``actions``)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(p.id for p in spec.pages)
    for page in spec.pages:
        for action in page.actions:
            if action.navigate and action.navigate in graph:
                if graph.has_edge(page.id, action.navigate):
                    graph[page.id][action.navigate]["actions"].append(action.id)
                else:
                    graph.add_edge(page.id, action.navigate, actions=[action.id])
    return graph


Label = tuple[str, Params]
"""An edge label of the state graph: the action id and its parameter bindings."""


@dataclass
class StateGraph:
    """BFS result. Node ``i`` is ``states[i]``; ``depth[i]`` its distance from the start.

    ``graph`` edges carry ``labels``: every (action, params) that moves between the two
    states. ``truncated`` is set when the state budget or depth limit cut the search.
    """

    machine: Machine
    states: list[State]
    index: dict[State, int]
    depth: list[int]
    graph: nx.DiGraph
    truncated_by: str | None = None
    edges: int = 0
    labels: dict[tuple[int, int], list[Label]] = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        return self.truncated_by is not None

    def page_depths(self) -> dict[str, int]:
        """The fewest steps to each reached page (states are in BFS order, so the first
        state on a page is the nearest)."""
        depths: dict[str, int] = {}
        for state, depth in zip(self.states, self.depth):
            depths.setdefault(state.page, depth)
        return depths

    def matching(self, page: str, conditions: list) -> list[int]:
        """Ids of the states that satisfy a goal."""
        return [
            i for i, s in enumerate(self.states) if self.machine.satisfies(s, page, conditions)
        ]


def explore_states(
    spec: WorldSpec,
    *,
    start: str | None = None,
    budget: int = DEFAULT_STATE_BUDGET,
    max_depth: int | None = None,
    machine: Machine | None = None,
) -> StateGraph:
    """Breadth-first enumeration of reachable states (terminal states are not expanded)."""
    # The BFS allocates millions of small, long-lived objects and no cycles; the cyclic
    # collector would rescan them all on every full pass (60% of the time at 1e5 states).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _bfs(spec, start, budget, max_depth, machine or Machine(spec))
    finally:
        if enabled:
            gc.enable()


def _bfs(spec: WorldSpec, start: str | None, budget: int, max_depth: int | None,
         machine: Machine) -> StateGraph:
    terminal_pages = {p.id for p in spec.pages if p.terminal}
    first = machine.initial_state(start)
    states, index, depth = [first], {first: 0}, [0]
    graph = nx.DiGraph()
    graph.add_node(0)
    labels: dict[tuple[int, int], list[Label]] = {}
    queue: deque[int] = deque([0])
    truncated_by: str | None = None
    edges = 0
    while queue:
        src = queue.popleft()
        state = states[src]
        if state.page in terminal_pages:
            continue
        if max_depth is not None and depth[src] >= max_depth:
            truncated_by = truncated_by or f"depth limit {max_depth}"
            continue
        for tr in machine.transitions(state):
            dst = index.get(tr.target)
            if dst is None:
                if len(states) >= budget:
                    truncated_by = f"state budget {budget}"
                    continue
                dst = len(states)
                states.append(tr.target)
                index[tr.target] = dst
                depth.append(depth[src] + 1)
                queue.append(dst)
            key = (src, dst)
            if key in labels:
                labels[key].append((tr.action, tr.params))
            else:
                labels[key] = [(tr.action, tr.params)]
                graph.add_edge(src, dst)
            edges += 1
    return StateGraph(machine, states, index, depth, graph, truncated_by, edges, labels)
