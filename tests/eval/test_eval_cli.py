"""`webworld eval` on the widget lab and MiniWoB++: resuming a killed run, an OpenAI-compatible
policy against a misbehaving endpoint, a local transformers model, compare, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from tests.agents.scripted_llm import Reply, Script, create_scripted_app
from tests.rl.conftest import Built
from tests.tiny_lm import tiny_causal_lm
from webworld.cli.main import app
from webworld.eval.results import read_results
from webworld.eval.suites import Suite
from webworld.serve.runner import LiveServer

runner = CliRunner()


def evaluate(*args: str):
    return runner.invoke(app, ["eval", *args])


def test_a_killed_eval_resumes_without_duplicates(lab: Built, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    args = [sys.executable, "-c", "from webworld.cli.main import app; app()", "eval",
            "--policy", "random", "--suite", str(lab.root), "-n", "3", "--out", str(out)]
    planned = len(Suite("x", lab.worlds()).plan(3, 0))
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and len(read_results(out)) < 3 and child.poll() is None:
        time.sleep(0.2)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    first = len(read_results(out))
    assert 3 <= first < planned, "the run should be killed part of the way"
    with out.open("a") as handle:
        handle.write('{"key": "half a li')  # as if killed mid-write
    resumed = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    keys = [r["key"] for r in read_results(out)]
    assert len(keys) == len(set(keys)) == planned
    assert f"{first} already in" in resumed.stdout


def test_openai_policy_against_a_misbehaving_endpoint(lab: Built, tmp_path: Path) -> None:
    """Garbage, 429s and timeouts are counted as step errors; the run finishes."""
    script = Script()
    turns = iter(range(10_000))

    def respond(body: dict) -> Reply:
        n = next(turns)
        if n % 4 == 0:
            return Reply("I think the answer is 42")               # no action
        if n % 4 == 1:
            return Reply(status=429)                              # rate limited, every retry
        if n % 4 == 2:
            return Reply("Thought: wait\nAction: click('1')", delay=2.0)  # times out
        return Reply("Thought: try\nAction: click('1')", prompt_tokens=700, completion_tokens=9)

    script.responder = respond
    config = tmp_path / "webworld.toml"
    config.write_text(f'[llm]\ntimeout_s = 0.5\nmax_retries = 1\nbackoff_s = 0.01\n'
                      f'cache_dir = "{tmp_path / "cache"}"\n')
    with LiveServer(create_scripted_app(script)) as server:
        result = evaluate("--policy", "openai:scripted-model", "--suite", str(lab.root), "--fast",
                          "-n", "1", "--max-steps", "4", "--out", str(tmp_path / "o.jsonl"),
                          "--llm-base-url", f"{server.url}/v1", "--llm-api-key", "k",
                          "--llm-config", str(config))
    assert result.exit_code == 0, result.output
    records = read_results(tmp_path / "o.jsonl")
    codes = [e["code"] for r in records for e in r["errors"]]
    assert "syntax" in codes and "policy" in codes
    assert any("kept failing" in e["message"] for r in records for e in r["errors"])
    assert sum(r["tokens"]["prompt"] for r in records) >= 700
    assert all(r["policy"] == "openai:scripted-model" for r in records)


def test_a_local_transformers_model_plays_in_batches(lab: Built, tmp_path: Path) -> None:
    model, tokenizer = tiny_causal_lm(max_positions=4096)
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    result = evaluate("--policy", f"hf:{tmp_path / 'tiny'}", "--suite", str(lab.root), "--fast",
                      "-n", "1", "--max-steps", "2", "--workers", "3", "--device", "cpu",
                      "--out", str(tmp_path / "h.jsonl"))
    assert result.exit_code == 0, result.output
    records = read_results(tmp_path / "h.jsonl")
    assert records and all(r["steps"] == 2 and not r["success"] for r in records)
    assert all(r["tokens"]["prompt"] > 100 and r["tokens"]["completion"] > 0 for r in records)
    assert all(e["code"] == "syntax" for r in records for e in r["errors"])  # random weights


def test_miniwob_suite_and_compare(lab: Built, tmp_path: Path) -> None:
    mini = evaluate("--policy", "random", "--suite", "miniwob:click-button,click-link", "-n", "2",
                    "--max-steps", "3", "--out", str(tmp_path / "m.jsonl"),
                    "--report", str(tmp_path / "m.html"), "--traces", "1")
    assert mini.exit_code == 0, mini.output
    records = read_results(tmp_path / "m.jsonl")
    assert sorted({r["task"] for r in records}) == ["click-button", "click-link"]
    assert len(records) == 4 and "by task" in (tmp_path / "m.html").read_text()

    for policy in ("oracle", "random"):
        run = evaluate("--policy", policy, "--suite", str(lab.root), "--fast", "-n", "2",
                       "--out", str(tmp_path / f"{policy}.jsonl"))
        assert run.exit_code == 0, run.output
    compared = evaluate("compare", str(tmp_path / "random.jsonl"), str(tmp_path / "oracle.jsonl"))
    assert compared.exit_code == 0, compared.output
    first = next(line for line in compared.output.splitlines() if "│ all" in line)
    assert "100.0%" in first and "+" in first and "*" in first


def test_bad_input_is_one_clear_line(lab: Built, tmp_path: Path) -> None:
    (tmp_path / "other.jsonl").write_text(json.dumps(
        {"key": "k", "suite": "elsewhere", "policy": "random"}) + "\n")
    for args, message in [
        (["--policy", "smart", "--suite", str(lab.root)], "unknown policy 'smart'"),
        (["--suite", str(lab.root)], "--policy is required"),
        (["--policy", "random", "--suite", str(tmp_path / "none")], "a suite is heldout, heldout-dense, miniwob"),
        (["--policy", "random", "--suite", "miniwob:click-buttn"], "no MiniWoB++ task"),
        (["--policy", "oracle", "--suite", "miniwob:click-button"], "no MiniWoB++ solutions"),
        (["--policy", "hf:/no/such/model", "--suite", str(lab.root)], "no model folder"),
        (["--policy", "random", "--suite", str(lab.root), "-n", "0"], "--episodes"),
        (["--policy", "random", "--suite", str(lab.root), "--fast", "--out",
          str(tmp_path / "other.jsonl")], "give this run its own --out"),
    ]:
        result = evaluate(*args)
        assert result.exit_code != 0, args
        assert message in result.output, (args, result.output)
        assert "Traceback" not in result.output
