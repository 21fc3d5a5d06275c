"""The states a page template is rendered in while it is checked: a bounded BFS of the FSM
chosen to show every element of a page both shown and hidden where the sample allows."""

from __future__ import annotations

from collections import deque

from webworld.render.plan import visible_ids
from webworld.spec.models import WorldSpec
from webworld.spec.semantics import Machine, State


def sample_states(spec: WorldSpec, machine: Machine, *, max_states: int = 2000,
                  per_page: int = 6) -> dict[str, list[State]]:
    """Representative states of every page: a bounded BFS from the initial state that
    expands states showing a new set of elements first, then per page a greedy cover of
    (element, shown / hidden). Pages the BFS does not reach get their initial-value state."""
    pages = {p.id: p for p in spec.pages}
    terminal = {p.id for p in spec.pages if p.terminal}
    start = machine.initial_state()
    seen = {start}
    order = [start]
    signatures: set[tuple[str, frozenset[str]]] = set()

    def signature(state: State) -> tuple[str, frozenset[str]]:
        return state.page, frozenset(visible_ids(pages[state.page], machine, state))

    signatures.add(signature(start))
    novel, rest = deque([start]), deque()
    while (novel or rest) and len(seen) < max_states:
        state = (novel or rest).popleft()
        if state.page in terminal:
            continue
        for tr in machine.transitions(state):
            if tr.target in seen or tr.target.page not in pages:
                continue
            seen.add(tr.target)
            order.append(tr.target)
            sig = signature(tr.target)
            (rest if sig in signatures else novel).append(tr.target)
            signatures.add(sig)
            if len(seen) >= max_states:
                break

    by_page: dict[str, list[State]] = {p.id: [] for p in spec.pages}
    for state in order:
        by_page[state.page].append(state)
    chosen: dict[str, list[State]] = {}
    for page in spec.pages:
        states = by_page[page.id] or [machine.initial_state(page.id)]
        all_ids = [e.id for e in page.elements]
        covered: set[tuple[str, bool]] = set()
        picks: list[State] = []
        for state in states:
            shown = set(visible_ids(page, machine, state))
            pairs = {(eid, eid in shown) for eid in all_ids}
            if not picks or pairs - covered:
                picks.append(state)
                covered |= pairs
            if len(picks) >= per_page:
                break
        chosen[page.id] = picks
    return chosen


