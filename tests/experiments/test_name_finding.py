"""experiments/name_finding.py's format probe: a chat rewritten so the id follows the name,
on the page and in the thought, says the same thing: same action, same page otherwise."""

from __future__ import annotations

from experiments.name_finding import ID_LAST, ids_after_names
from webworld.browser.actions import parse_reply
from webworld.data.prompting import assistant_message, prompt_messages

PAGE = ("RootWebArea 'Shop'\n[1] button 'Browse', expanded=false\nheading 'Welcome'\n"
        "  [2] menuitem 'North America'\n  [3] menuitem 'Europe'")


def test_the_id_follows_the_name_on_the_page_and_in_the_thought() -> None:
    chat = [*prompt_messages("Browse the Europe section.", PAGE, "https://shop.webworld.test/",
                             ["hover('1')  [button 'Browse', expanded=false]"]),
            {"role": "assistant", "content": assistant_message("I click “Europe”.", "click('3')")}]
    system, user, reply = (m["content"] for m in ids_after_names(chat))
    assert ID_LAST in system.replace("\n", " ")
    page = user.split("Page:\n", 1)[1]
    assert page.splitlines() == ["RootWebArea 'Shop'", "button 'Browse', expanded=false [1]",
                                 "heading 'Welcome'", "  menuitem 'North America' [2]",
                                 "  menuitem 'Europe' [3]"]
    assert "1. hover('1')  [button 'Browse', expanded=false]" in user  # history kept as it was
    assert reply.splitlines()[0] == "Thought: I click “Europe”: menuitem 'Europe' [3]."
    assert parse_reply(reply) == "click('3')"
