"""Augmentations of SFT turns: each keeps what the turn says and moves what a model could
remember instead of read (ids, typed values, the place of a named choice)."""

from __future__ import annotations

import datetime as dt
import random
import re

from webworld.data.augment import (
    day_label,
    move_choice,
    relabel_ids,
    rename_choice,
    vary_date,
    vary_value,
)
from webworld.data.prompting import history_entry, parse_reply, step_messages


def test_relabelled_ids_keep_page_history_and_reply_pointing_at_the_same_elements() -> None:
    first_page = "[1] button 'Accept all cookies'\n[2] link 'Studios'"
    page = ("RootWebArea 'Shop'\n[1] link 'Home'\n  [3] menuitem 'Studios'\n"
            "  [4] menuitem 'Hot desks'\n[12] textbox 'Email', value=''")
    chat = step_messages("Book a studio.", page, "https://shop.test/", [
        history_entry("click('1')", first_page), history_entry("hover('2')", first_page)],
        "Open the studios.", "fill('12', 'a@b.c')")
    draws = [relabel_ids(chat, random.Random(seed)) for seed in range(20)]
    assert len({d[1]["content"] for d in draws}) > 10  # the numbers change with the draw
    for new in draws:
        assert new[0] == chat[0]  # the system prompt's examples are kept
        user, reply = new[1]["content"], new[2]["content"]
        ids = [int(line.split("]")[0].strip(" [")) for line in user.splitlines() if "] " in line
               and line.strip().startswith("[")]
        assert ids == sorted(ids) and len(set(ids)) == 4 and max(ids) <= 36  # increasing, 1..3N
        # every reference still names the same element: the reply's id is the email box's
        box = next(line for line in user.splitlines() if "textbox 'Email'" in line)
        assert reply.endswith(f"fill('{box.strip()[1:].split(']')[0]}', 'a@b.c')")
        # the history's ids are renumbered with the page's ('1' is the same number on both)
        home = next(line for line in user.splitlines() if "link 'Home'" in line)
        assert f"click('{home.strip()[1:].split(']')[0]}')  [button 'Accept all cookies']" in user
        assert "Book a studio." in user and "menuitem 'Hot desks'" in user
    # unordered: the same elements, ids in no page order in some draws
    unordered = [relabel_ids(chat, random.Random(seed), ordered=False) for seed in range(20)]
    orders = [[int(line.strip()[1:].split("]")[0]) for line in d[1]["content"].splitlines()
               if line.strip().startswith("[") and "] " in line] for d in unordered]
    assert any(ids != sorted(ids) for ids in orders)
    for new, ids in zip(unordered, orders, strict=True):
        box = next(line for line in new[1]["content"].splitlines() if "textbox 'Email'" in line)
        assert new[2]["content"].endswith(f"fill('{box.strip()[1:].split(']')[0]}', 'a@b.c')")
        assert len(set(ids)) == 4


def test_a_varied_value_is_new_of_its_field_and_replaced_wherever_the_turn_shows_it() -> None:
    page = ("RootWebArea 'Shop'\n[3] textbox 'Email', value=''\n[4] textbox 'Full name', "
            "value='Ada Lovelace'\n[5] searchbox 'Search', value=''")
    history = [history_entry("fill('4', 'Ada Lovelace')", page)]
    task = "Sign up as Ada Lovelace with ada.lovelace@example.com and search for spa."
    chat = step_messages(task, page, "https://shop.test/", history,
                         "The task gives the email.", "fill('3', 'ada.lovelace@example.com')")
    emails = set()
    for seed in range(10):
        new = vary_value(chat, random.Random(seed))
        user, reply = new[1]["content"], new[2]["content"]
        typed = parse_reply(reply).split("'")[3]
        assert "ada.lovelace@example.com" not in user + reply
        assert typed.endswith("@example.com") and f"with {typed} and" in user  # the task says it
        assert "Ada Lovelace" in user and "[4] textbox 'Full name'" in user  # the rest is kept
        emails.add(typed)
    assert len(emails) >= 8
    # a whole word only: the search for 'spa' leaves 'spacious' alone
    search = step_messages("Search for spa.", "[5] searchbox 'Search', value=''\nStaticText "
                           "'A spacious room'", "https://shop.test/", [], "Type it.",
                           "fill('5', 'spa')")
    new = vary_value(search, random.Random(0))
    assert "'A spacious room'" in new[1]["content"] and "for spa." not in new[1]["content"]
    # nothing typed, or typed but not given by the task: the turn as it was
    click = step_messages(task, page, "https://shop.test/", [], "Go.", "click('5')")
    assert vary_value(click, random.Random(0)) == click
    free = step_messages(task, page, "https://shop.test/", [], "Go.", "fill('5', 'tea')")
    assert vary_value(free, random.Random(0)) == free


MENU = ("RootWebArea 'Permits'\n[1] button 'Browse categories', expanded\n"
        "  [2] menuitem 'Pets'\n  [3] menuitem 'Recreation'\n  [4] menuitem 'Housing'\n"
        "[5] link 'Pets and animals'")


def _picked(chat: list[dict[str, str]]) -> tuple[str, str]:
    """The id the reply acts on and the name its page line shows."""
    user, reply = chat[1]["content"], chat[2]["content"]
    bid = parse_reply(reply).split("'")[1]
    line = next(x for x in user.split("Page:")[1].splitlines() if x.strip().startswith(f"[{bid}] "))
    return bid, line.split("'")[1]


def test_a_named_choice_moves_to_a_sibling_s_place_and_stays_the_answer() -> None:
    history = [history_entry("hover('1')", MENU)]
    chat = step_messages("Apply for a licence: browse the Recreation section.", MENU,
                         "https://permits.test/", history, "Open the Recreation section.",
                         "click('3')")
    places = set()
    for seed in range(20):
        new = move_choice(chat, random.Random(seed))
        user = new[1]["content"]
        bid, name = _picked(new)
        assert name == "Recreation" and bid in {"2", "4"}  # the named one, at another place
        assert user.split("Page:")[0] == chat[1]["content"].split("Page:")[0]  # task, history
        assert new[2]["content"].startswith("Thought: Open the Recreation section.")
        page = user.split("Page:")[1]
        assert sorted(page.count(f"menuitem '{n}'") for n in ("Pets", "Recreation", "Housing")) \
            == [1, 1, 1] and f"[{bid}] menuitem 'Recreation'" in page
        assert "[5] link 'Pets and animals'" in page and new[0] == chat[0]
        places.add(bid)
    assert places == {"2", "4"}  # drawn among the siblings of the same role


def test_a_radio_moves_within_its_group_and_other_turns_are_kept() -> None:
    form = ("StaticText 'Priority'\n[6] radio 'Normal', unchecked\n[7] radio 'Urgent', "
            "unchecked\n[8] textbox 'Email', value=''\nStaticText 'Was this page helpful?'\n"
            "[12] radio 'Yes', unchecked\n[13] radio 'No', unchecked")
    urgent = step_messages("Contact us: choose Urgent for priority.", form, "https://s.test/",
                           [], "Urgent it is.", "click('7')")
    for seed in range(10):  # two groups of a form are two questions
        new = move_choice(urgent, random.Random(seed))
        assert _picked(new) == ("6", "Urgent") and "[7] radio 'Normal'" in new[1]["content"]
        assert "[12] radio 'Yes'" in new[1]["content"]
    # the task does not name the target, the reply types, or no sibling: as it was
    for task, action in (("Apply for a licence.", "click('3')"),
                         ("Type Recreation.", "fill('3', 'Recreation')")):
        plain = step_messages(task, MENU, "https://permits.test/", [], "Go.", action)
        assert move_choice(plain, random.Random(0)) == plain
    alone = step_messages("Open Recreation.", "[3] menuitem 'Recreation'", "https://p.test/",
                          [], "Go.", "click('3')")
    assert move_choice(alone, random.Random(0)) == alone


def test_a_named_choice_gets_a_new_name_in_task_page_history_and_thought() -> None:
    history = [history_entry("hover('1')", MENU), history_entry("click('3')", MENU)]
    chat = step_messages("Apply for a licence: browse the Recreation section.", MENU,
                         "https://permits.test/recreation", history,
                         "Open the Recreation section.", "click('3')")
    names = set()
    for seed in range(10):
        new = rename_choice(chat, random.Random(seed))
        user, reply = new[1]["content"], new[2]["content"]
        bid, name = _picked(new)
        assert bid == "3" and name not in ("Recreation", "Pets", "Housing")
        assert name[0].isupper() and len(name.split()) == 1  # the shape of the old name
        assert "Recreation" not in user and "Recreation" not in reply
        assert user.startswith(f"Task: Apply for a licence: browse the {name} section.")
        assert f"click('3')  [menuitem '{name}']" in user  # the history names it alike
        assert "https://permits.test/recreation" in user  # not a whole word of its case
        assert reply == f"Thought: Open the {name} section.\nAction: click('3')"
        assert "[2] menuitem 'Pets'" in user and new[0] == chat[0]
        names.add(name)
    assert len(names) > 5  # drawn anew with each seed
    # unnamed by the task, a typed value, a name on the page only: as it was
    for task, action in (("Apply for a licence.", "click('3')"),
                         ("Type Recreation.", "fill('3', 'Recreation')")):
        plain = step_messages(task, MENU, "https://permits.test/", [], "Go.", action)
        assert rename_choice(plain, random.Random(0)) == plain


def _april(available: tuple[int, ...]) -> str:
    """A page with April 2027's calendar open, ``available`` days as buttons (ids 10, 11 ...)."""
    rows = ["[2] textbox 'Date', value=''", "[3] button 'Open calendar for date', expanded=true",
            "dialog 'Choose date'", "  StaticText 'April 2027'",
            *(f"  StaticText '{d}'" for d in ("Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"))]
    ids = iter(range(10, 20))
    rows += [f"  [{next(ids)}] button '{day_label(dt.date(2027, 4, day))}'" if day in available
             else f"  StaticText '{day}'" for day in range(1, 31)]
    return "\n".join([*rows, "[9] button 'Continue'"])


def test_a_varied_date_moves_the_task_s_day_and_its_button_and_stays_the_answer() -> None:
    task = "Book the Boston to Chicago flight: pick the date 2027-04-21."
    thought = "For the task's “2027-04-21” in Date, I click “Wednesday, 21 April 2027”."
    chat = step_messages(task, _april((21, 28)), "https://fly.test/",
                         [history_entry("click('3')", _april((21, 28)))], thought, "click('10')")
    days = set()
    for seed in range(12):
        new = vary_date(chat, random.Random(seed))
        user, reply = new[1]["content"], new[2]["content"]
        day = dt.date.fromisoformat(re.search(r"\d{4}-\d{2}-\d{2}", user).group(0))
        days.add(day.day)
        assert day.month == 4 and day.day not in (21, 28)  # another day, not the other button's
        bid, name = _picked(new)
        assert bid == "10" and name == day_label(day)  # the reply clicks the task's day
        assert f"“{day.isoformat()}”" in reply and f"“{day_label(day)}”" in reply
        # the grid still counts every day of April once, in order, the button at its day
        grid = [line.strip() for line in user.split("Page:")[1].splitlines()
                if line.startswith("  ") and ("day, " in line or line.strip("' ").split("'")[-1].isdigit())]
        numbers = [int(x.split("'")[1]) if x.startswith("StaticText") else
                   int(x.split(", ")[1].split()[0]) for x in grid]
        assert numbers == list(range(1, 31))
        assert "[11] button 'Wednesday, 28 April 2027'" in user
        assert new[0] == chat[0]
    assert len(days) >= 6
    # after the pick: history, field value and task move together, the calendar closed
    done = "[2] textbox 'Date', value='2027-04-21'\n[9] button 'Continue'"
    later = step_messages(task, done, "https://fly.test/",
                          [history_entry("click('10')", _april((21, 28)))], "Go on.", "click('9')")
    new = vary_date(later, random.Random(0))
    iso = re.search(r"\d{4}-\d{2}-\d{2}", new[1]["content"]).group(0)
    assert iso != "2027-04-21" and f"value='{iso}'" in new[1]["content"]
    assert day_label(dt.date.fromisoformat(iso)) in new[1]["content"]
    # a task without a date: the turn as it was
    plain = step_messages("Book a studio.", MENU, "https://shop.test/", [], "Go.", "click('2')")
    assert vary_date(plain, random.Random(0)) == plain


def test_replies_that_act_by_name_are_augmented_alike() -> None:
    """A reply that names its element (click(menuitem "Recreation")) keeps naming the element
    the turn's augmentation moved, renamed or gave a new value to."""
    chat = step_messages("Apply for a licence: browse the Recreation section.", MENU,
                         "https://permits.test/", [], "Open the Recreation section.",
                         'click(menuitem "Recreation")')
    moved = move_choice(chat, random.Random(0))
    page = moved[1]["content"].split("Page:")[1]
    assert "[3] menuitem 'Recreation'" not in page and "menuitem 'Recreation'" in page
    assert moved[2] == chat[2]  # the same name, now at another place
    renamed = rename_choice(chat, random.Random(0))
    name = parse_reply(renamed[2]["content"]).split('"')[1]
    assert name != "Recreation" and f"[3] menuitem '{name}'" in renamed[1]["content"]
    form = "[3] textbox 'Email', value=''"
    fill = step_messages("Sign up with ada@example.com.", form, "https://s.test/", [], "Type it.",
                         "fill(textbox \"Email\", 'ada@example.com')")
    typed = parse_reply(vary_value(fill, random.Random(0))[2]["content"])
    assert typed.startswith('fill(textbox "Email", ') and typed.endswith("@example.com')")
    assert "ada@example.com" not in typed
