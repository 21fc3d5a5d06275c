"""Intent and thought writers against the scripted endpoint: grounded or repaired."""

from __future__ import annotations

import json

from tests.agents.scripted_llm import run_to_end
from webworld.agents.writers import paraphrase_intents, save_thoughts, write_thoughts


def cands() -> list[dict]:
    slots = {"selected_item": "Dune", "purchase_format": "Paperback"}
    return [{"id": f"purchase-{i}", "task_id": "purchase", "slots": slots,
             "intent": "Buy Dune: choose Paperback for format."} for i in range(3)]


def test_paraphrases_must_keep_every_value(llm) -> None:
    script, make = llm
    script.push({"paraphrases": ["Get me Dune please"]},  # drops "Paperback": repaired
                {"paraphrases": ["Order Dune as a Paperback.", "Can you buy Dune in Paperback?"]})
    client = make()
    records = cands()
    assert run_to_end(client, paraphrase_intents(client, records)) == 3
    assert len(script.requests) == 2  # one instance, one repair
    assert "does not mention 'Paperback'" in script.requests[1]["messages"][-1]["content"]
    for rec in records:
        assert rec["template_intent"] == "Buy Dune: choose Paperback for format."
        assert "Dune" in rec["intent"] and "Paperback" in rec["intent"]
    assert client.ledger.stages["intents"].calls == 2


def test_thoughts_one_per_step(llm, tmp_path) -> None:
    script, make = llm
    traj = {"id": "t1", "intent": "Buy Dune", "steps": [
        {"action": "click('3')", "element_label": "Accept", "value": None},
        {"action": "fill('5', 'Dune')", "element_label": "Search", "value": "Dune"}]}
    script.push({"thoughts": ["Only one"]},
                {"thoughts": ["I accept the cookies first.", "I search for Dune."]})
    client = make()
    thoughts = run_to_end(client, write_thoughts(client, [traj]))
    assert thoughts == {"t1": ["I accept the cookies first.", "I search for Dune."]}
    assert "expected 2 thoughts" in script.requests[1]["messages"][-1]["content"]
    path = save_thoughts(tmp_path, thoughts)
    assert json.loads(path.read_text()) == {"id": "t1", "thoughts": thoughts["t1"]}
