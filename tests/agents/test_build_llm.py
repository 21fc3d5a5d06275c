"""`webworld build --llm ...` end to end against the scripted endpoint: verified data and
dollars per verified trajectory, by stage."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from tests.agents.scripted_llm import Reply
from webworld.cli.main import app
from webworld.propose.procedural import generate
from webworld.render.site import render_site
from webworld.spec.io import spec_to_json


def responder(body: dict) -> Reply:
    """Grounded replies computed from the prompt, as a cooperative model would write."""
    prompt = body["messages"][-1]["content"]
    if prompt.startswith("Design a website world spec."):
        candidate = int(re.search(r"candidate (\d+) of", prompt).group(1))
        spec = generate("recipe site", "easy", candidate).spec
        return Reply(spec_to_json(spec), prompt_tokens=6000, completion_tokens=9000)
    if prompt.startswith("Task:") and "paraphrases" in prompt:
        task = prompt.split("\n")[0][len("Task: "):]
        return Reply(json.dumps({"paraphrases": [f"Please do this: {task}", task]}),
                     prompt_tokens=400, completion_tokens=60)
    steps = json.loads(re.search(r"Steps: (\[.*\])\n", prompt).group(1))
    return Reply(json.dumps({"thoughts": [f"Step {i + 1} moves the task on."
                                          for i in range(len(steps))]}),
                 prompt_tokens=900, completion_tokens=120)


def test_build_with_llm_intents_and_thoughts(llm, tmp_path, monkeypatch) -> None:
    script, make = llm
    script.responder = responder
    monkeypatch.chdir(tmp_path)
    (tmp_path / "webworld.toml").write_text(
        '[llm]\nmodel = "scripted-model"\ncache_dir = "cache"\nbackoff_s = 0.01\n'
        '[llm.prices."scripted-model"]\ninput = 0.15\noutput = 0.6\n')
    result = CliRunner().invoke(app, [
        "build", "--theme", "recipe site", "--profile", "easy", "--max-instances", "1",
        "--max-shortest", "1", "--max-longer", "0", "--workers", "2",
        "--llm", "intents,thoughts", "--llm-base-url", make.url, "--llm-api-key", "k"],
        catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "LLM cost (scripted-model)" in result.output
    per_verified = re.search(r"total\s.*?([\d.]+)\s*│\s*([\d.]+)\s*│", result.output)
    assert per_verified and float(per_verified.group(2)) > 0
    world = next((tmp_path / "trajectories").iterdir())
    cands = [json.loads(x) for x in (world / "candidates.jsonl").read_text().splitlines()]
    assert all(c["intent"].startswith("Please do this:") or c["intent"] == c["template_intent"]
               for c in cands)
    verified = [json.loads(x) for x in (world / "verified.jsonl").read_text().splitlines()]
    thoughts = [json.loads(x) for x in (world / "thoughts.jsonl").read_text().splitlines()]
    assert {t["id"] for t in thoughts} == {v["id"] for v in verified}
    sft = (tmp_path / "datasets" / "webworld" / "sft")
    chats = [json.loads(x) for f in sft.glob("*.jsonl") for x in f.read_text().splitlines()]
    assert chats and all("moves the task on" in c["messages"][-1]["content"] for c in chats)


def test_build_with_llm_proposer_reports_cost_by_stage(llm, tmp_path, monkeypatch) -> None:
    script, make = llm
    script.responder = responder
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, [
        "build", "--theme", "recipe site", "--profile", "easy", "--max-instances", "1",
        "--max-shortest", "1", "--max-longer", "0", "--workers", "2", "--llm", "propose,improve",
        "--llm-base-url", make.url, "--llm-api-key", "k", "--llm-model", "scripted-model"],
        catch_exceptions=False)
    assert result.exit_code == 0, result.output
    spec = json.loads(next((tmp_path / "fsm_specs").glob("*.json")).read_text())
    assert spec["provenance"]["generator"] == "webworld.agents.proposer"
    assert re.search(r"│ propose\s+│\s+3\s+│", result.output)  # three candidates asked
    assert "verified" in result.output and "100.0%" in result.output
    assert "no price known for scripted-model" in result.output


@pytest.mark.parametrize("args, expected", [
    (["--llm-model", "no-such-model"], "model 'no-such-model' does not exist on"),
    (["--llm-api-key", "wrong"], "rejected the API key (401)"),
])
def test_bad_settings_are_one_clear_line(llm, tmp_path, monkeypatch, args, expected) -> None:
    script, make = llm
    script.api_key = "right"
    monkeypatch.chdir(tmp_path)
    base = ["build", "--theme", "hotel", "--llm", "propose", "--llm-base-url", make.url,
            "--llm-api-key", "right", "--llm-model", "scripted-model"]
    result = CliRunner().invoke(app, base + args, catch_exceptions=False)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and expected in lines[0] and lines[0].startswith("error:")


def test_dead_endpoint_is_one_clear_line(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["build", "--theme", "hotel", "--llm", "intents",
                                      "--llm-base-url", "http://127.0.0.1:9/v1"],
                                catch_exceptions=False)
    assert result.exit_code == 2
    assert result.output.strip() == ("error: cannot reach the LLM endpoint "
                                     "http://127.0.0.1:9/v1: is it running, and is the URL right?")


def test_build_with_llm_site_coder(llm, tmp_path, monkeypatch) -> None:
    """`--llm render`: pages written by the "model" are checked, served and verified."""
    script, make = llm
    reference = render_site(generate("recipe site", "easy", 0).spec, tmp_path / "reference")

    def coder(body: dict) -> Reply:
        prompt = body["messages"][-1]["content"]
        page = re.search(r"\(id (\w+), role", prompt)
        if page is None:  # the style guide: never valid, so the built-in look stays
            return Reply("{}")
        template = (reference / "templates" / "pages" / f"{page.group(1)}.html").read_text()
        return Reply(json.dumps({"template": template}), prompt_tokens=5000,
                     completion_tokens=800)

    script.responder = coder
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, [
        "build", "--theme", "recipe site", "--profile", "easy", "--max-instances", "1",
        "--max-shortest", "1", "--max-longer", "0", "--workers", "2", "--llm", "render",
        "--llm-base-url", make.url, "--llm-api-key", "k", "--llm-model", "scripted-model"],
        catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert re.search(r"(\d+) page\(s\) written by the LLM, 0 fell back", result.output)
    manifest = json.loads(next((tmp_path / "sites").glob("*/manifest.json")).read_text())
    assert manifest["generator"].startswith("webworld.agents.site_coder")
    assert "100.0%" in result.output and "│ render" in result.output
