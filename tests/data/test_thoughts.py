"""Per-step thoughts: grounded in the step, varied, deterministic."""

from __future__ import annotations

from webworld.data.thoughts import make_thought, thought_for_step

BASE = dict(op="select", element_label="Format", value="Paperback", fsm_label="Choose format",
            intent="Buy Dune as a paperback", is_last=False)


def test_deterministic() -> None:
    assert make_thought(**BASE) == make_thought(**BASE)


def test_task_claim_only_when_the_intent_has_the_value() -> None:
    asked = make_thought(**BASE)
    assert "“Paperback”" in asked and "Format" in asked and "task" in asked
    not_asked = make_thought(**{**BASE, "intent": "Buy Dune"})
    assert "“Paperback”" in not_asked and "task" not in not_asked
    reason = make_thought(**{**BASE, "intent": "Buy Dune", "fsm_label": "Pick the edition"})
    assert "pick the edition" in reason  # the FSM action's label gives the reason
    # whole words only: "2" is not in "Buy 12 books"
    assert "task" not in make_thought(op="drag", element_label="Quantity", value="2",
                                      fsm_label="Set quantity", intent="Buy 12 books",
                                      is_last=False)


def test_varied_phrasing() -> None:
    thoughts = {make_thought(**{**BASE, "intent": f"Buy Dune as a paperback, order {i}"})
                for i in range(40)}
    assert len(thoughts) >= 3
    for text in thoughts:
        assert "Paperback" in text and "Format" in text


def test_every_op_mentions_its_target_and_value() -> None:
    cases = [("click", "Add to cart", None), ("click", "Open book", "Dune"),
             ("type", "Search books", "dune"), ("key_press", "Search books", "Enter"),
             ("hover", "Browse categories", None), ("drag", "Guests", "3"),
             ("check", "Accept terms", None), ("uncheck", "Newsletter", None),
             ("select", "Cabin", "Economy"), ("mystery", "Thing", None)]
    for op, label, value in cases:
        text = make_thought(op=op, element_label=label, value=value, fsm_label="Do it",
                            intent="Some task", is_last=False)
        assert label in text, (op, text)
        if value:
            assert value in text, (op, text)
        assert "{" not in text and "}" not in text
        assert len(text) < 160


def test_last_step_says_so() -> None:
    last = make_thought(**{**BASE, "is_last": True})
    assert any(s in last for s in ("complete the task", "last step", "finishes the task"))
    assert not any(s in make_thought(**BASE) for s in ("last step", "finishes the task"))


def test_key_press_key_comes_from_the_action() -> None:
    step = {"op": "key_press", "element_label": "Search books", "value": None,
            "fsm_label": "Search books", "action": "press('7', 'Tab')"}
    assert "Tab" in thought_for_step(step, "Find tea", False)  # type: ignore[arg-type]


def test_empty_labels_fall_back() -> None:
    text = make_thought(op="click", element_label="", value=None, fsm_label="",
                        intent="x", is_last=False)
    assert "the control" in text and "continue" in text


def test_a_label_that_only_repeats_the_target_is_not_given_as_the_reason() -> None:
    for intent in (f"Order {i}" for i in range(12)):
        text = make_thought(op="check", element_label="Gift wrap", value=None,
                            fsm_label="Check gift wrap", intent=intent, is_last=False)
        assert "Gift wrap" in text and "check gift wrap" not in text
