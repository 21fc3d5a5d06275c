"""A scripted OpenAI-compatible endpoint on loopback, and clients for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.scripted_llm import Script, create_scripted_app
from webworld.agents.client import LLMClient
from webworld.agents.config import LLMConfig
from webworld.serve.runner import LiveServer


@pytest.fixture
def llm(tmp_path: Path):
    """(script, make_client): each client gets its own cache unless a test passes one."""
    script = Script()
    with LiveServer(create_scripted_app(script)) as server:
        made = []

        def make(**overrides) -> LLMClient:
            made.append(1)
            settings = {"base_url": f"{server.url}/v1", "api_key": "k", "model": "scripted-model",
                        "backoff_s": 0.01, "cache_dir": tmp_path / f"cache{len(made)}",
                        **overrides}
            return LLMClient(LLMConfig(**settings))

        make.url = f"{server.url}/v1"  # type: ignore[attr-defined]
        yield script, make
