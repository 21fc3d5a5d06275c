"""The LLM client against a real HTTP server on loopback that misbehaves on purpose."""

from __future__ import annotations

import asyncio
import json
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tests.agents.scripted_llm import Reply
from webworld.agents import client as client_module
from webworld.agents.client import BudgetExceeded, LLMClient, LLMError
from webworld.agents.config import LLMConfig, Price, load_llm_config, parse_stages
from webworld.errors import UsageError


class Answer(BaseModel):
    city: str
    count: int


GOOD = {"city": "Lisbon", "count": 3}
ASK = [{"role": "user", "content": "Give me a city and a count."}]


def ask(client: LLMClient, stage: str = "propose") -> Answer:
    async def go() -> Answer:
        try:
            return await client.structured(stage, ASK, Answer)
        finally:
            await client.close()
    return asyncio.run(go())


def test_json_schema_mode_and_validation(llm) -> None:
    script, make = llm
    script.push(GOOD)
    client = make()
    assert ask(client) == Answer(**GOOD)
    assert script.requests[0]["response_format"]["type"] == "json_schema"
    assert client.mode == "json_schema"


def test_falls_back_to_json_object_with_schema_then_text(llm) -> None:
    script, make = llm
    script.reject_formats = {"json_schema"}
    script.push(GOOD)
    client = make()
    assert ask(client) == Answer(**GOOD)
    sent = script.requests[-1]["response_format"]
    assert sent["type"] == "json_object" and sent["schema"]["title"] == "Answer"

    script.reject_formats = {"json_schema", "json_object"}
    script.push("Sure! ```json\n" + json.dumps(GOOD) + "\n```")
    client = make()
    assert ask(client) == Answer(**GOOD)
    assert "response_format" not in script.requests[-1]
    assert "JSON Schema" in script.requests[-1]["messages"][0]["content"]


@pytest.mark.parametrize("bad, problem", [
    ('{"city": "Lisbon", "count": ', "invalid JSON"),            # truncated
    ("{city: Lisbon}", "invalid JSON"),                          # malformed
    (json.dumps({"city": "Lisbon", "count": "many"}), "count"),  # schema-invalid
])
def test_bad_replies_are_sent_back_for_repair(llm, bad: str, problem: str) -> None:
    script, make = llm
    script.push(Reply(bad, finish_reason="length" if bad.endswith(": ") else "stop"), GOOD)
    client = make()
    assert ask(client) == Answer(**GOOD)
    repair = script.requests[1]["messages"][-1]["content"]
    assert problem in repair and "could not be used" in repair
    assert client.ledger.stages["propose"].repairs == 1


def test_repairs_are_bounded(llm) -> None:
    script, make = llm
    script.default = Reply("not json at all")
    client = make(max_repairs=2)
    with pytest.raises(LLMError, match="no valid Answer after 3 replies"):
        ask(client)
    assert len(script.requests) == 3


def _record_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses the client takes between tries, as it asks asyncio for them (it still
    takes them): its own module's asyncio, so no other code's sleeps are counted."""
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float, *args: Any, **kwargs: Any) -> Any:
        waits.append(delay)
        return await real_sleep(delay, *args, **kwargs)

    monkeypatch.setattr(client_module, "asyncio", types.SimpleNamespace(**{**vars(asyncio),
                                                                            "sleep": sleep}))
    return waits


def test_429_and_500_are_retried_with_backoff(llm, monkeypatch) -> None:
    script, make = llm
    script.push(Reply(status=429), Reply(status=500), GOOD)
    client = make(backoff_s=0.05)
    waits = _record_waits(monkeypatch)
    assert ask(client) == Answer(**GOOD)
    assert waits == [0.05, 0.1]  # doubling (what it costs: bench/bench_waits.py)
    assert client.ledger.stages["propose"].retries == 2

    script.default = Reply(status=500)
    with pytest.raises(LLMError, match="kept failing .* after 3 tries"):
        ask(make(max_retries=2))


def test_slow_reply_times_out_and_is_retried(llm) -> None:
    script, make = llm
    script.push(Reply(json.dumps(GOOD), delay=2.0), GOOD)
    client = make(timeout_s=0.5)
    assert ask(client) == Answer(**GOOD)
    assert client.ledger.stages["propose"].retries == 1


def test_budget_stops_the_run_cleanly(llm) -> None:
    script, make = llm
    script.default = Reply(json.dumps(GOOD), prompt_tokens=1_000_000, completion_tokens=0)
    client = make(prices={"scripted-model": Price(input=1.0, output=2.0)}, budget_usd=1.5)

    async def twice_then_more() -> None:
        try:
            first = await client.structured("propose", ASK, Answer)
            assert first.city == "Lisbon"
            await client.structured("propose", [*ASK, {"role": "user", "content": "again"}], Answer)
            await client.structured("propose", [*ASK, {"role": "user", "content": "3rd"}], Answer)
        finally:
            await client.close()

    with pytest.raises(BudgetExceeded, match=r"budget of \$1.5000 is spent"):
        asyncio.run(twice_then_more())
    assert client.ledger.usd == pytest.approx(2.0)  # the second call crossed the line
    assert len(script.requests) == 2


def test_cache_makes_a_rerun_free_and_identical(llm, tmp_path: Path) -> None:
    script, make = llm
    script.push(GOOD)
    shared = {"prices": {"scripted-model": Price(input=1.0, output=1.0)},
              "cache_dir": tmp_path / "shared"}
    first = make(**shared)
    assert ask(first) == Answer(**GOOD)
    again = make(**shared)
    assert ask(again) == Answer(**GOOD)
    assert len(script.requests) == 1
    assert again.ledger.usd == 0 and again.ledger.stages["propose"].cache_hits == 1


def test_cost_is_accounted_per_stage(llm) -> None:
    script, make = llm
    script.default = Reply(json.dumps(GOOD), prompt_tokens=2000, completion_tokens=1000)
    client = make(prices={"scripted-model": Price(input=0.5, output=2.0)})

    async def run() -> None:
        try:
            await client.structured("propose", ASK, Answer)
            await client.structured("intents", [*ASK, {"role": "user", "content": "b"}], Answer)
        finally:
            await client.close()

    asyncio.run(run())
    for stage in ("propose", "intents"):
        usage = client.ledger.stages[stage]
        assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 2000, 1000)
        assert usage.usd == pytest.approx(2000 * 0.5 / 1e6 + 1000 * 2.0 / 1e6)


def test_unknown_model_wrong_key_and_dead_endpoint_are_one_clear_line(llm, tmp_path) -> None:
    script, make = llm
    with pytest.raises(LLMError, match="model 'nope' does not exist on http://127.0.0.1"):
        ask(make(model="nope"))
    script.push(Reply(status=401))
    with pytest.raises(LLMError, match=r"rejected the API key \(401\)"):
        ask(make())
    dead = LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1", api_key="k", model="m",
                               cache_dir=tmp_path / "c", timeout_s=2))
    with pytest.raises(LLMError, match="cannot reach the LLM endpoint http://127.0.0.1:9/v1"):
        ask(dead)


def test_config_file_env_and_flags(tmp_path: Path, monkeypatch) -> None:
    file = tmp_path / "webworld.toml"
    file.write_text('[llm]\nmodel = "from-file"\nbudget_usd = 0.5\n'
                    '[llm.prices."from-file"]\ninput = 1.0\noutput = 3.0\n')
    monkeypatch.setenv("WEBWORLD_LLM_BASE_URL", "http://127.0.0.1:1/v1")
    config = load_llm_config(file, model="from-flag")
    assert (config.model, config.base_url, config.budget_usd) == (
        "from-flag", "http://127.0.0.1:1/v1", 0.5)
    assert config.price("from-file") == Price(input=1.0, output=3.0)
    file.write_text("[llm\n")
    with pytest.raises(UsageError, match="malformed TOML"):
        load_llm_config(file)
    assert parse_stages("propose, render") == {"propose", "render"}
    with pytest.raises(UsageError, match="unknown LLM stage"):
        parse_stages("propose,paint")


ENV_NAMES = ("WEBWORLD_LLM_BASE_URL", "WEBWORLD_LLM_API_KEY", "WEBWORLD_LLM_MODEL",
             "OPENAI_BASE_URL", "OPENAI_API_KEY")


@pytest.mark.parametrize(("set_env", "want_url", "want_key"), [
    ({"OPENAI_API_KEY": "sk-openai"}, None, "sk-openai"),
    ({"OPENAI_BASE_URL": "http://127.0.0.1:2/v1"}, "http://127.0.0.1:2/v1", None),
    ({"WEBWORLD_LLM_API_KEY": "ww-key"}, None, "ww-key"),
    ({"WEBWORLD_LLM_BASE_URL": "http://127.0.0.1:3/v1"}, "http://127.0.0.1:3/v1", None),
    # both names set: webworld's own wins
    ({"OPENAI_API_KEY": "sk-openai", "WEBWORLD_LLM_API_KEY": "ww-key",
      "OPENAI_BASE_URL": "http://127.0.0.1:2/v1", "WEBWORLD_LLM_BASE_URL": "http://127.0.0.1:3/v1"},
     "http://127.0.0.1:3/v1", "ww-key"),
])
def test_each_environment_variable_alone_and_with_precedence(
        tmp_path: Path, monkeypatch, set_env: dict[str, str], want_url, want_key) -> None:
    monkeypatch.chdir(tmp_path)  # no webworld.toml here
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    for name, value in set_env.items():
        monkeypatch.setenv(name, value)
    config = load_llm_config()
    assert (config.base_url, config.api_key) == (want_url, want_key)


def test_openai_environment_reaches_the_endpoint(llm, tmp_path: Path, monkeypatch) -> None:
    """Only OPENAI_BASE_URL and OPENAI_API_KEY set: the server sees that key, not a default."""
    script, make = llm
    script.api_key = "sk-from-openai-env"
    monkeypatch.chdir(tmp_path)
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", make.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-openai-env")
    config = load_llm_config(model="scripted-model", cache_dir=tmp_path / "c")
    script.push(GOOD)
    assert ask(LLMClient(config)) == Answer(**GOOD)
