"""Loading specs: clear errors for malformed JSON and schema errors; stable bytes."""

from __future__ import annotations

import json

import pytest

from tests.conftest import make_small_world
from webworld.errors import SpecLoadError
from webworld.spec.io import load_spec, loads_spec, save_spec, spec_schema, spec_to_json


def test_malformed_json_names_line_and_column(tmp_path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "id": "x",\n  "pages": [\n}\n')
    with pytest.raises(SpecLoadError) as exc:
        load_spec(path)
    assert str(path) in str(exc.value)
    assert "line 4, column 1" in str(exc.value)


def test_schema_error_names_json_path_and_expectation() -> None:
    data = json.loads(spec_to_json(make_small_world()))
    data["pages"][1]["actions"][0]["gui"][0]["op"] = "tap"
    del data["pages"][2]["title"]
    with pytest.raises(SpecLoadError) as exc:
        loads_spec(json.dumps(data), "world.json")
    message = str(exc.value)
    assert message.startswith("world.json: 2 schema error(s)")
    assert "$.pages[1].actions[0].gui[0].op: Input should be 'click'" in message
    assert '(got "tap")' in message
    assert "$.pages[2].title: Field required" in message


def test_condition_must_name_one_operand() -> None:
    data = json.loads(spec_to_json(make_small_world()))
    data["pages"][1]["actions"][0]["guards"] = [{"op": "exists"}]
    with pytest.raises(SpecLoadError, match=r"\$\.pages\[1\]\.actions\[0\]\.guards\[0\]: "
                       "Value error, a condition names exactly one of 'var' or 'param'"):
        loads_spec(json.dumps(data))


def test_a_slot_listed_twice_is_rejected_at_its_path() -> None:
    """Found by the fuzzer: 2,000 copies of one slot passed every check and took the
    explorer minutes."""
    data = json.loads(spec_to_json(make_small_world()))
    data["tasks"][0]["slots"] = ["query", "cart", "query"]
    with pytest.raises(SpecLoadError, match=r"\$\.tasks\[0\]\.slots: Value error, slot\(s\) "
                       "listed more than once: query"):
        loads_spec(json.dumps(data))


@pytest.mark.parametrize("text, expected", [
    ("[]", r"expected a JSON object at \$, got list"),
    ('{"version": "9.9"}', "unsupported spec version '9.9'"),
])
def test_wrong_top_level_is_reported(text: str, expected: str) -> None:
    with pytest.raises(SpecLoadError, match=expected):
        loads_spec(text)


def test_missing_file_and_directory(tmp_path) -> None:
    with pytest.raises(SpecLoadError, match="no such file"):
        load_spec(tmp_path / "nope.json")
    with pytest.raises(SpecLoadError, match="is a directory"):
        load_spec(tmp_path)


def test_save_and_load_round_trip_byte_for_byte(tmp_path) -> None:
    spec = make_small_world()
    path = save_spec(spec, tmp_path / "w.json")
    again = load_spec(path)
    assert again == spec
    assert spec_to_json(again) == path.read_text()
    assert path.read_text().startswith('{\n  "version": "1.0"')


def test_schema_describes_the_spec() -> None:
    schema = spec_schema()
    assert schema["title"] == "WorldSpec"
    assert {"Page", "Action", "Condition", "Effect", "Task"} <= set(schema["$defs"])
    ops = schema["$defs"]["Condition"]["properties"]["op"]["enum"]
    assert set(ops) == {"eq", "neq", "gt", "gte", "lt", "lte", "exists", "length_gt", "in"}
