"""A longer verified path's detours: the FSM actions its instance's shortest path does
without, values and all."""

from __future__ import annotations

from webworld.data.detours import detour_steps


def path(tid: str, actions: list[tuple[str, list[str | None]]], shortest: int,
         slots: dict | None = None) -> dict:
    """A trajectory of ``actions`` (spec action, each browser step's value)."""
    steps = [{"fsm_index": i, "fsm_action": name, "value": value}
             for i, (name, values) in enumerate(actions) for value in values]
    return {"id": tid, "task_id": "book", "slots": slots or {"date": "2027-04-21"},
            "length": len(actions), "shortest_length": shortest, "steps": steps}


BROWSE = ("browse", [None, "Europe"])  # hover the menu, click the section: one FSM action


def test_the_detour_is_what_the_shortest_path_does_without() -> None:
    shortest = path("s", [BROWSE, ("date", [None, "2027-04-21"]), ("confirm", [None])], 3)
    helpful = path("h", [BROWSE, ("helpful", ["Yes"]), ("date", [None, "2027-04-21"]),
                         ("confirm", [None])], 3)
    # another day picked first: the same action, other values
    other_day = path("d", [BROWSE, ("date", [None, "2027-04-28"]), ("date", [None, "2027-04-21"]),
                           ("confirm", [None])], 3)
    found = detour_steps([helpful, shortest, other_day])
    assert found == {"h": frozenset({2}), "d": frozenset({2, 3})}  # steps, not FSM actions
    # an instance whose shortest path was not kept: nothing tells the detour, all is marked
    alone = path("a", [BROWSE, ("helpful", ["Yes"]), ("confirm", [None])], 2,
                 slots={"date": "2027-05-01"})
    assert detour_steps([shortest, alone]) == {"a": frozenset(range(4))}
