"""The SFT export goes into TRL's SFTTrainer: one optimiser step on a tiny random model."""

from __future__ import annotations

from pathlib import Path

import transformers
import trl

from tests.data.factory import WORLDS, make_traj_root
from webworld.data.export import export_dataset, load_sft_dataset


def _tiny_model_and_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["system", "user", "assistant", ":", "Thought", "Action", "click", "fill", "(", ")",
             "'", ",", "Task", "URL", "Page"]
    vocab = {"[UNK]": 0, "[PAD]": 1, "<s>": 2, "</s>": 3, **{w: i + 4 for i, w in enumerate(words)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", bos_token="<s>", eos_token="</s>")
    tokenizer.chat_template = ("{% for m in messages %}{{ m['role'] }} : {{ m['content'] }}\n"
                               "{% endfor %}{% if add_generation_prompt %}assistant : {% endif %}")
    config = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2,
                                      num_key_value_heads=2, max_position_embeddings=512)
    return transformers.LlamaForCausalLM(config), tokenizer


def test_sft_trainer_takes_the_export(tmp_path: Path) -> None:
    make_traj_root(tmp_path / "traj")
    export_dataset(tmp_path / "traj", tmp_path / "out", formats={"sft"}, screenshots_dir=None,
                   progress=False)
    model, tokenizer = _tiny_model_and_tokenizer()
    args = trl.SFTConfig(output_dir=str(tmp_path / "run"), max_steps=1, per_device_train_batch_size=2,
                         report_to=[], save_strategy="no", use_cpu=True, max_length=256,
                         dataset_num_proc=None, disable_tqdm=True)
    from datasets import load_dataset

    as_is = load_dataset("json", data_files=str(tmp_path / "out" / "sft" / "train.jsonl"),
                         split="train", cache_dir=str(tmp_path / "c"))
    assert all(trl.data_utils.is_conversational(r) for r in as_is)
    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=as_is, processing_class=tokenizer)
    result = trainer.train()
    assert result.global_step == 1 and result.training_loss > 0
    with_images = load_sft_dataset(tmp_path / "out", "train", with_images=True,
                                   cache_dir=str(tmp_path / "c"))
    first = with_images[0]
    assert first["images"][0].size == WORLDS[first["world_id"]][1]
