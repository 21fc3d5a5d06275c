"""check_page finds what a broken page gets wrong, and says exactly what and where."""

from __future__ import annotations

from pathlib import Path

import pytest

from webworld.render import check_page, load_site, make_environment, render_page, render_site
from webworld.spec.io import load_spec
from webworld.spec.semantics import Machine, State

SPECS = Path(__file__).parents[2] / "fsm_specs"


@pytest.fixture(scope="module")
def hotel(tmp_path_factory: pytest.TempPathFactory):
    spec = load_spec(SPECS / "hotel_booking_hard_s0.json")
    root = render_site(spec, tmp_path_factory.mktemp("h") / "site", theme="meadow")
    return spec, Machine(spec), root


def _render(root: Path, machine: Machine, state: State, base: str = "") -> str:
    site = load_site(root)
    return render_page(site, make_environment(site), machine, state, base=base)


def _at(machine: Machine, page: str, **changes: object) -> State:
    values = list(machine.initial_state().values)
    for name, value in changes.items():
        values[machine.index[name]] = value
    return State(page, tuple(values))


def test_broken_templates_are_reported_precisely(hotel, tmp_path: Path) -> None:
    spec, machine, root = hotel
    state = _at(machine, "results")
    assert check_page(_render(root, machine, state), spec, machine, state) == []

    broken = tmp_path / "broken"
    broken.mkdir()
    render_site(spec, broken / "site", theme="meadow")
    widgets = broken / "site" / "templates" / "widgets.html"
    text = widgets.read_text()
    # the select macro loses its data-ww-id: the sort dropdown disappears for the agent
    text = text.replace(
        '{% if el.submit_form %} data-ww-submit="{{ el.submit_form }}"{% endif %} '
        'data-ww-id="{{ el.id }}">', '{% if el.submit_form %} data-ww-submit="{{ el.submit_form }}"'
        '{% endif %}>')
    widgets.write_text(text)
    layout = broken / "site" / "templates" / "layout.html"
    layout.write_text(layout.read_text().replace('<form id="{{ f.id }}"', '<form id="{{ f.action }}"'))
    problems = check_page(_render(broken / "site", machine, state), spec, machine, state)
    assert ("element 'results_sort' (select 'Sort by') is visible in this state but missing: "
            'no node has data-ww-id="results_sort"') in problems
    assert ('action \'results_back\' (\'Home\') has no <form id="ww-act-results_back" '
            'method="post" action="/act/results_back">') in problems
    assert any(p.startswith("<form id='results_back'> at line ") and
               p.endswith("is not the form of any action of page 'results'") for p in problems)


def test_html_mistakes_name_the_element_action_and_line(hotel) -> None:
    spec, machine, root = hotel
    state = _at(machine, "signup_create_your_account")
    html = _render(root, machine, state)
    assert check_page(html, spec, machine, state) == []

    renamed = html.replace('name="email"', 'name="mail"')
    [problem] = check_page(renamed, spec, machine, state)
    assert problem.startswith("action 'signup_create_your_account_continue' step 2 "
                              "type('email', '{email}'): <input id=\"ww-el-email\" type=\"text\" "
                              "name=\"mail\"> at line ")
    assert problem.endswith('must have name="email" (the parameter it fills), found name="mail"')

    unowned = html.replace('form="ww-act-signup_create_your_account_continue" class="btn',
                           'class="btn')
    trigger, dead = check_page(unowned, spec, machine, state)
    assert trigger.startswith("action 'signup_create_your_account_continue' trigger "
                              "click('continue'): <button id=\"ww-el-continue\" type=\"submit\">")
    assert trigger.endswith('must belong to form "ww-act-signup_create_your_account_continue" '
                            '(form="ww-act-signup_create_your_account_continue"), but it belongs '
                            "to no form")
    assert "submits no form, which is not an action of page" in dead

    doubled = html.replace('data-ww-id="share"', 'data-ww-id="share"', 1) + \
        '<button type="button" data-ww-id="share">Share</button>'
    problems = check_page(doubled, spec, machine, state)
    assert any("element 'share' (button 'Share') must be on exactly one node, but 2 carry "
               'data-ww-id="share"' in p for p in problems)


def test_two_fields_filling_one_parameter_are_reported(hotel) -> None:
    spec, machine, root = hotel
    state = _at(machine, "signup_create_your_account")
    html = _render(root, machine, state).replace(
        "</main>", '<input type="hidden" name="email" '
                   'form="ww-act-signup_create_your_account_continue" value=""></main>')
    [problem] = check_page(html, spec, machine, state)
    assert problem.startswith('form "ww-act-signup_create_your_account_continue" has 2 fields '
                              'named "email" (lines ')
    assert problem.endswith("the server would get more than one value")


def test_csp_and_dead_links_are_reported(hotel) -> None:
    spec, machine, root = hotel
    state = _at(machine, "signup_create_your_account")
    html = _render(root, machine, state).replace(
        "</main>", '<a href="/about">About</a><p style="color:red" onclick="x()">hi</p>'
                   "<script>alert(1)</script></main>")
    problems = check_page(html, spec, machine, state)
    assert any(p.startswith('link <a> at line ') and 'to "/about" is not an action of page '
               "'signup_create_your_account' (dead link)" in p for p in problems)
    assert any(p.startswith("inline style attribute on <p> at line ") for p in problems)
    assert any(p.startswith("inline event handler onclick on <p> at line ") for p in problems)
    assert any(p.startswith("inline <script> at line ") for p in problems)


def test_modal_children_appear_only_when_the_modal_is_open(hotel) -> None:
    spec, machine, root = hotel
    closed = _at(machine, "signup_create_your_account")
    opened = machine.step(closed, "signup_create_your_account_open_share", {}).state
    closed_html, open_html = _render(root, machine, closed), _render(root, machine, opened)
    assert 'data-ww-id="share_dialog"' not in closed_html
    assert 'data-ww-id="share_close"' not in closed_html
    assert 'data-ww-id="share_dialog"' in open_html and 'data-ww-id="share_close"' in open_html
    assert check_page(open_html, spec, machine, opened) == []
    # the open page judged as the closed state: the hidden modal must not be there
    problems = check_page(open_html, spec, machine, closed)
    assert any(p.startswith("element 'share_dialog' (modal 'Share this page') must not be "
                            "rendered in this state (its visible_when "
                            "signup_create_your_account_share eq True does not hold)")
               for p in problems)
    assert any(p.startswith("element 'share_close' (button 'Close') must not be rendered in this "
                            "state (its parent 'share_dialog' is not visible)") for p in problems)
    # and the closed page judged as the open state misses the dialog and its button
    problems = check_page(closed_html, spec, machine, opened)
    assert ("element 'share_dialog' (modal 'Share this page') is visible in this state but "
            'missing: no node has data-ww-id="share_dialog"') in problems


def test_tab_dependent_button_follows_the_tab(hotel) -> None:
    spec, machine, root = hotel
    state = _at(machine, "support_help_center")
    assert 'data-ww-id="contact_support"' not in _render(root, machine, state)
    contact = machine.step(state, "support_help_center_open_support_contact", {"tab": "Contact"})
    html = _render(root, machine, contact.state)
    assert 'data-ww-id="contact_support"' in html
    assert check_page(html, spec, machine, contact.state) == []


def test_options_and_date_picker_parts_are_checked(hotel) -> None:
    spec, machine, root = hotel
    state = _at(machine, "booking_your_booking")
    html = _render(root, machine, state, base="/w/h")
    assert check_page(html, spec, machine, state, base="/w/h") == []
    day = spec.page("booking_your_booking").elements[1].options[0]
    no_day = html.replace(f'data-ww-value="{day}"', 'data-ww-value="someday"')
    problems = check_page(no_day, spec, machine, state, base="/w/h")
    assert any(p.startswith(f"element 'booking_date' (date_picker 'Date'): option '{day}' is "
                            f'missing: no [data-ww-value="{day}"] inside the container at line ')
               for p in problems)
    no_toggle = html.replace('data-ww-part="toggle"', "")
    assert any("has no toggle button ([data-ww-part=\"toggle\"])" in p
               for p in check_page(no_toggle, spec, machine, state, base="/w/h"))
    wrong_base = check_page(html, spec, machine, state, base="/w/other")
    assert any('has action="/w/h/act/booking_your_booking_back", expected '
               '"/w/other/act/booking_your_booking_back"' in p for p in wrong_base)


def test_unknown_page_is_a_problem_not_a_crash(hotel) -> None:
    spec, machine, _ = hotel
    state = State("nowhere", machine.initial_state().values)
    assert check_page("<html></html>", spec, machine, state) == [
        "state is on page 'nowhere', which the spec does not have"]
