"""Per-step thoughts: grounded in the step, varied, deterministic."""

from __future__ import annotations

from webworld.data.prompting import assistant_message, prompt_messages, task_of
from webworld.data.thoughts import make_thought, misreads_task, task_claims, thought_for_step
from webworld.eval.grounding import ground_reply

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


DATE_PAGE = """RootWebArea 'Your booking'
[2] tab 'Overview', selected
[5] textbox 'Date', value=''
[6] button 'Open calendar for date', expanded={open}
[7] button 'Confirm booking'
"""
DAY_LINE = "dialog 'Choose date'\n  [8] button 'Saturday, 27 March 2027'\n"


def date_step(action: str, bid: str, page: str) -> dict:
    return {"op": "select", "element_label": "Date", "value": "2027-03-27",
            "fsm_label": "Choose date", "action": action, "bid": bid,
            "observation": {"axtree": page}}


def test_each_gesture_of_a_date_picker_names_the_control_it_clicks() -> None:
    """One FSM step, two clicks: each thought quotes the element its action clicks (not the
    field both set), so the name a policy learns goes with the id, and grounding by name
    leaves the taught action where it is."""
    intent = "Book Dr. Liu: pick the date 2027-03-27."
    opening = date_step("click('6')", "6", DATE_PAGE.format(open="false"))
    day_page = DATE_PAGE.format(open="true") + DAY_LINE
    picking = date_step("click('8')", "8", day_page)
    for step, name, page in ((opening, "Open calendar for date", opening["observation"]["axtree"]),
                             (picking, "Saturday, 27 March 2027", day_page)):
        thought = thought_for_step(step, intent, False)  # type: ignore[arg-type]
        assert f"“{name}”" in thought and "Date" in thought and "2027-03-27" in thought, thought
        assert "task" in thought  # the intent gives the date
        reply = assistant_message(thought, step["action"])
        message = prompt_messages(intent, page, "https://clinic.webworld.test/", [])[1]["content"]
        assert ground_reply(reply, message) is None, thought
    # the field's own gestures keep the step's thought: typing the date names the field
    typed = date_step("fill('5', '2027-03-27')", "5", DATE_PAGE.format(open="false"))
    assert thought_for_step(typed, intent, False) == make_thought(  # type: ignore[arg-type]
        op="select", element_label="Date", value="2027-03-27", fsm_label="Choose date",
        intent=intent, is_last=False)


def test_a_click_on_the_value_itself_keeps_the_usual_thought() -> None:
    """A menu item or radio named as the value ("Festivals" under "Browse categories") is
    not a widget's inner control: same words as before gestures had names."""
    step = {"op": "click", "element_label": "Browse categories", "value": "Festivals",
            "fsm_label": "Browse a category", "action": "click('3')", "bid": "3",
            "observation": {"axtree": "[3] menuitem 'Festivals'"}}
    assert thought_for_step(step, "See festivals", False) == make_thought(  # type: ignore[arg-type]
        op="click", element_label="Browse categories", value="Festivals",
        fsm_label="Browse a category", intent="See festivals", is_last=False)


def test_a_thought_s_claims_about_the_task_are_read_back() -> None:
    """Every template that says the task asks for a value gives that value back, so a reply
    that claims a value its task lacks is known to have misread it; no other template claims."""
    steps = [("click", "Europe", None), ("type", "Deep!90x", None), ("select", "Paperback", None),
             ("drag", "3", None), ("select", "2027-03-27", "Saturday, 27 March 2027")]
    claimed = 0
    for op, value, target in steps:
        for n in range(12):  # the templates are picked by a hash of the inputs: vary them
            step = dict(op=op, element_label="Field", value=value, fsm_label=f"Do thing {n}",
                        is_last=n % 2 == 0, target=target)
            asked = make_thought(**step, intent=f"Please use {value}")
            assert task_claims(asked) == [value], asked
            assert not misreads_task(asked, f"Please use {value}")
            assert misreads_task(asked, "Please use something else"), asked
            claimed += 1
            assert task_claims(make_thought(**step, intent="Please do it")) == []
    assert claimed == 60


def test_the_task_is_read_back_from_the_message() -> None:
    message = prompt_messages("Book Dr. Liu.", "[1] button 'Go'", "https://c.test/", [])[1]
    assert task_of(message["content"]) == "Book Dr. Liu."
    assert task_of("[1] button 'Go'") == ""
