"""Guards, effects and transitions: one meaning shared by explorer, validator and server."""

from __future__ import annotations

import pytest

from tests.conftest import make_small_world
from webworld.spec.models import Condition, Effect, Variable
from webworld.spec.semantics import Machine, apply_effect, check, in_domain


@pytest.mark.parametrize("op, value, operand, expected", [
    ("eq", 1, 1, True), ("eq", 1, True, False), ("eq", "1", 1, False), ("neq", "a", "b", True),
    ("gt", 2, 3, True), ("gt", 2, None, False), ("gte", 2, 2, True), ("lt", 2, 2, False),
    ("lte", 2, 2, True), ("in", ["a", "b"], "b", True), ("in", ["a"], "c", False),
    ("exists", None, None, False), ("exists", None, "", False), ("exists", None, (), False),
    ("exists", None, "x", True), ("length_gt", 0, ("a",), True), ("length_gt", 1, ("a",), False),
])
def test_condition_operators(op: str, value, operand, expected: bool) -> None:
    assert check(Condition(var="v", op=op, value=value), operand) is expected


def test_effects_and_domains() -> None:
    counter = Variable(name="n", type="int", min=0, max=2)
    assert apply_effect(counter, Effect(op="inc", var="n"), 2, {}) == 3
    assert not in_domain(counter, 3)
    cart = Variable(name="cart", type="list", values=["a", "b"], max_length=1)
    assert apply_effect(cart, Effect(op="append", var="cart", param="p"), (), {"p": "a"}) == ("a",)
    assert apply_effect(cart, Effect(op="append", var="cart", value="a"), ("a",), {}) == ("a",)
    assert not in_domain(cart, ("a", "b"))
    assert apply_effect(cart, Effect(op="clear", var="cart"), ("a",), {}) == ()


def test_step_refuses_bad_input_and_failed_guards_keep_state() -> None:
    machine = Machine(make_small_world())
    start = machine.initial_state()
    assert not machine.step(start, "nope", {}).ok
    assert not machine.step(start, "search", {"q": "socks"}).ok
    assert not machine.step(start, "search", {}).ok
    at_results = machine.step(start, "search", {"q": "hats"})
    assert at_results.ok and at_results.state.page == "results"
    to_cart = machine.step(machine.initial_state(), "open_cart", {}).state
    refused = machine.step(to_cart, "checkout", {})
    assert not refused.ok and refused.state == to_cart


def test_transitions_drop_self_loops() -> None:
    machine = Machine(make_small_world())
    results = machine.step(machine.initial_state(), "search", {"q": "hats"}).state
    full = machine.step(results, "add_to_cart", {"item": "hats"}).state
    labels = [(t.action, t.params) for t in machine.transitions(full)]
    assert ("add_to_cart", (("item", "hats"),)) not in labels  # already in the cart
    assert ("add_to_cart", (("item", "shoes"),)) in labels
