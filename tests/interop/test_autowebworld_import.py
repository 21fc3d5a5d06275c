"""`webworld import autowebworld`: the translation of every construct of the format, parity
with an independent reading of its semantics, and located findings for bad input."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from webworld.cli.main import app
from webworld.interop.autowebworld.reference import shortest_to_terminals
from webworld.interop.autowebworld.source import parse_source
from webworld.interop.autowebworld.translate import Translator, import_fsm
from webworld.spec.graph import explore_states
from webworld.spec.io import load_spec
from webworld.spec.semantics import Machine
from webworld.spec.validate import validate

FIXTURES = Path(__file__).parent / "fixtures"
MARKET = FIXTURES / "market_fsm.json"
TOOLS = FIXTURES / "tools_fsm.json"


def raw(path: Path = MARKET) -> dict[str, Any]:
    return json.loads(path.read_text())


def translate(data: dict[str, Any]):
    source = parse_source(data, "fsm.json")
    return Translator(source, None).run() if source.ok else None, source


def page(spec, pid):
    return spec.page(pid)


def action(spec, aid):
    return next(a for p in spec.pages for a in p.actions if a.id == aid)


# --- every fixture: valid, and the same reachable terminals at the same depth ------------


@pytest.mark.parametrize("path", [MARKET, TOOLS], ids=lambda p: p.stem)
def test_import_is_valid_and_reaches_what_the_format_reaches(path: Path) -> None:
    result = import_fsm(path)
    assert result.ok, [f for f in result.findings if f.severity == "error"]
    report = validate(result.spec)
    assert report.valid, report.errors
    ours = {page: depth for page, depth in explore_states(result.spec).page_depths().items()
            if result.spec.page(page).terminal}
    reference = shortest_to_terminals(raw(path))
    assert ours == {k.lower(): v for k, v in reference.items()}
    assert len(ours) == len(raw(path)["meta"]["terminal_pages"])


def test_market_constructs_become_widgets() -> None:
    spec = import_fsm(MARKET).spec
    home = page(spec, "home")
    kinds = {e.id: e.kind for e in home.elements}
    # the cookie banner holds its button and does not block (no interceptor field name)
    banner = next(e for e in home.elements if e.kind == "cookie_banner")
    assert not banner.blocking and home.elements[1:] and \
        next(e for e in home.elements if e.id == "cookie_accept").parent == banner.id
    assert kinds["nav_shop"] == "hover_menu" and kinds["nav_more_toggle"] == "hover_menu"
    assert [s.op for s in action(spec, "home_go_to_catalog_hover").gui] == ["hover", "click"]
    assert [s.op for s in action(spec, "home_go_to_alerts_menu").gui] == ["click", "click"]
    catalog = page(spec, "catalog")
    prompt = next(e for e in catalog.elements if e.kind == "permission_prompt")
    assert prompt.blocking  # location_permission_granted: an interceptor, answered first
    els = {e.id: e for e in catalog.elements}
    assert els["sort_dropdown"].kind == "select" and \
        els["sort_dropdown"].options == ["Relevance", "Price asc"]
    assert els["price_slider"].kind == "slider"
    assert els["filter_brand_checkbox"].kind == "checkbox"
    items = els["product_list_product_card_filtered"].options
    assert els["product_list_product_card_filtered"].kind == "link" and len(items) == 3
    search = action(spec, "catalog_search_products")
    assert [(s.op, s.value or s.key) for s in search.gui] == [("type", "{item_id}"),
                                                             ("key_press", "Enter")]
    assert search.params[0].domain == items
    date = action(spec, "cart_pick_delivery_date")
    assert date.gui[0].op == "select" and date.gui[0].value == "2025-10-22"
    assert date.effects[0].value == "2025-10-22"
    qty = action(spec, "product_set_quantity")
    assert [s.op for s in qty.gui] == ["type", "key_press"] and qty.gui[0].value == "1"


def test_navigation_forgets_what_the_target_page_does_not_declare() -> None:
    spec = import_fsm(MARKET).spec
    m = Machine(spec)
    s = m.initial_state()
    for aid, params in [("home_accept_cookies", {}), ("home_go_to_catalog_direct", {}),
                        ("catalog_allow_location", {}), ("catalog_filter_brand_checkbox", {})]:
        res = m.step(s, aid, params)
        assert res.ok, (aid, res.message)
        s = res.state
    assert m.value(s, "catalog_filters_applied") is True
    item = action(spec, "catalog_open_filtered_product").params[0].domain[1]
    s = m.step(s, "catalog_open_filtered_product", {"item_id": item}).state
    # PRODUCT_DETAIL declares selected_product_id: carried over; the rest is forgotten,
    # HOME's consent included (so its banner shows again, as in AutoWebWorld)
    assert m.value(s, "selected_product_id") == item
    assert m.value(s, "catalog_filters_applied") is None
    assert m.value(s, "location_permission_granted") is None
    assert m.value(s, "cookie_consent_given") is None


def test_append_of_a_variable_is_split_over_its_values() -> None:
    spec = import_fsm(MARKET).spec
    product = page(spec, "product_detail")
    adds = [a for a in product.actions if a.id.startswith("product_add_to_cart")]
    items = page(spec, "catalog").elements
    names = next(e.options for e in items if e.id == "product_list_product_card_filtered")
    assert len(adds) == len(names) + 1  # one per product, one for "none selected"
    guarded = sorted(str(a.guards[-1].value) for a in adds)
    assert guarded == sorted([*names, "None"])
    assert all(a.trigger == adds[0].trigger for a in adds)


def test_findings_name_what_changed() -> None:
    codes = {f.code for f in import_fsm(MARKET).findings}
    assert codes >= {"items-synthesized", "expr-approximated", "enter-added", "keys-merged",
                     "scroll-as-click", "bounded-counter", "undeclared-variable",
                     "unused-variable"}
    assert all(f.severity == "warning" for f in import_fsm(MARKET).findings)
    tools = {f.code for f in import_fsm(TOOLS).findings}
    assert tools >= {"navigation-flag", "from-mismatch", "type-conflict",
                     "clear-approximated", "text-synthesized", "time-folded", "keys-merged",
                     "items-synthesized"}


def test_tools_constructs_become_widgets() -> None:
    spec = import_fsm(TOOLS).spec
    schedule = page(spec, "schedule")
    els = {e.id: e for e in schedule.elements}
    # a dropdown whose options are the items: the option chosen is the parameter
    pick = action(spec, "schedule_pick_recipient")
    assert pick.gui[0].op == "select" and pick.gui[0].value == "{user_id}"
    assert els["recipient_dropdown"].options == ["ana", "bo"] == pick.params[0].domain
    # the date and time picker: the date is the choice; the click that opens a field goes
    time = action(spec, "schedule_pick_time").gui
    assert [(s.op, s.value) for s in time] == [("select", "2025-11-03")]
    assert els["date_picker"].kind == "date_picker" and "open_calendar" not in els
    assert [s.op for s in action(spec, "schedule_add_mention").gui] == ["type", "key_press"]
    assert "mention_button" not in els
    # a search typing a fixed text finds an item: the query is that item
    assert action(spec, "schedule_find_user").gui[0].value == "{user_id}"
    # the typed channel name is the value the effect stores
    assert action(spec, "new_channel_type_name").gui[0].value == "design-team"
    workspace = page(spec, "workspace")
    assert next(e for e in workspace.elements if e.kind == "permission_prompt").blocking


def test_import_is_deterministic() -> None:
    assert import_fsm(MARKET).spec == import_fsm(MARKET).spec


# --- bad input ------------------------------------------------------------------------


def _mutate(fn) -> dict[str, Any]:
    data = copy.deepcopy(raw())
    fn(data)
    return data


BAD = [
    ("dangling-to", lambda d: d["pages"][1]["actions"][4].update(to="PRODUCT_DETAILS"),
     "dangling-page", "$.pages[1].actions[4].to"),
    ("dangling-initial", lambda d: d["meta"].update(initial_page_id="START"),
     "dangling-page", "$.meta.initial_page_id"),
    ("dangling-terminal", lambda d: d["meta"]["terminal_pages"].append("NOWHERE"),
     "dangling-page", "$.meta.terminal_pages[2]"),
    ("unknown-effect-op", lambda d: d["pages"][0]["actions"][0]["effects"][0].update(op="toggle"),
     "unknown-effect-op", "$.pages[0].actions[0].effects[0].op"),
    ("unknown-cond", lambda d: d["pages"][0]["actions"][1]["preconditions"][0].update(
        cond="matches"), "unknown-cond", "$.pages[0].actions[1].preconditions[0].cond"),
    ("unknown-gui-op", lambda d: d["pages"][0]["actions"][0]["gui_procedure"][0].update(
        op="double_click"), "unknown-gui-op", "$.pages[0].actions[0].gui_procedure[0].op"),
    ("value-ref-to-nothing", lambda d: d["pages"][1]["actions"][4]["effects"][0].update(
        value_ref="{product}"), "dangling-value-ref",
     "$.pages[1].actions[4].effects[0].value_ref"),
    ("duplicate-page", lambda d: d["pages"][2].update(id="CATALOG"), "duplicate-id",
     "$.pages[2].id"),
    ("bad-path", lambda d: d["pages"][0]["actions"][0]["effects"][0].update(path="cookie"),
     "bad-path", "$.pages[0].actions[0].effects[0].path"),
    ("bad-shape", lambda d: d["pages"][0]["actions"][0].update(is_navigation="no"),
     "bad-shape", "$.pages[0].actions[0].is_navigation"),
    ("no-gui-steps", lambda d: d["pages"][0]["actions"][0].update(gui_procedure=[]),
     "bad-shape", "$.pages[0].actions[0].gui_procedure"),
]


@pytest.mark.parametrize("name,mutation,code,path", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_a_located_finding(name, mutation, code, path) -> None:
    result, source = translate(_mutate(mutation))
    findings = result.findings if result is not None else source.findings
    errors = [(f.code, f.path) for f in findings if f.severity == "error"]
    assert (code, path) in errors
    assert result is None or result.spec is None


def test_cli_import_writes_a_spec_that_validates(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "market.json"
    res = runner.invoke(app, ["import", "autowebworld", str(MARKET), "--out", str(out),
                              "--findings", str(tmp_path / "findings.json")])
    assert res.exit_code == 0, res.output
    assert "wrote" in res.output and "items-synthesized" in res.output
    assert load_spec(out).id == "aww_gadgetry"
    findings = json.loads((tmp_path / "findings.json").read_text())
    assert findings[0]["findings"] and findings[0]["source"] == str(MARKET)
    assert runner.invoke(app, ["validate", str(out)]).exit_code == 0


def test_cli_unusable_file_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    broken = tmp_path / "fsm.json"
    broken.write_text(MARKET.read_text()[:5000])  # truncated
    dangling = tmp_path / "dangling" / "fsm.json"
    dangling.parent.mkdir()
    dangling.write_text(json.dumps(_mutate(BAD[0][1])))
    res = CliRunner().invoke(app, ["import", "autowebworld", str(tmp_path),
                                   "--out", str(tmp_path / "specs")])
    assert res.exit_code == 2
    assert "malformed JSON at line" in res.output and "[bad-json]" in res.output
    assert "$.pages[1].actions[4].to" in res.output and "PRODUCT_DETAIL" in res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "specs").exists()


def test_build_takes_imported_specs(tmp_path: Path) -> None:
    runner = CliRunner()
    spec = tmp_path / "specs" / "market.json"
    assert runner.invoke(app, ["import", "autowebworld", str(MARKET), "--out", str(spec)]
                         ).exit_code == 0
    res = runner.invoke(app, ["build", "--spec", str(spec.parent), "--no-verify",
                              "--specs-out", str(tmp_path / "built"),
                              "--sites-out", str(tmp_path / "sites"),
                              "--out", str(tmp_path / "traj")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "sites" / "aww_gadgetry" / "manifest.json").is_file()
    assert (tmp_path / "traj" / "aww_gadgetry" / "candidates.jsonl").read_text().strip()
    assert "online bookstore" not in res.output  # --spec alone builds no default themes
    missing = runner.invoke(app, ["build", "--spec", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "no such spec file" in missing.output


def test_eval_suite_names_what_is_wrong_with_the_folder(tmp_path: Path) -> None:
    runner = CliRunner()
    empty = runner.invoke(app, ["eval", "--policy", "oracle", "--suite",
                                f"autowebworld:{tmp_path}", "--out", str(tmp_path / "r.jsonl")])
    assert empty.exit_code == 2 and "no fsm.json files found" in empty.output
    (tmp_path / "x" / "web").mkdir(parents=True)
    (tmp_path / "x" / "web" / "fsm.json").write_text('{"meta": {')
    broken = runner.invoke(app, ["eval", "--policy", "oracle", "--suite",
                                 f"autowebworld:{tmp_path}", "--out", str(tmp_path / "r.jsonl")])
    assert broken.exit_code == 2 and "unusable fsm.json" in broken.output
    assert "Traceback" not in broken.output
